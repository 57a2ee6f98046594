'use strict';
// Shape-compiled calculateObjectSize (issue #11). A plain object's key list,
// once it has recurred COMPILE_AFTER times, gets a sizer generated for it: the
// keys and their UTF-8 lengths are constants, and each key has its own inline
// copy of the element checks, so each property read and type probe has an
// inline cache of its own (the generic walk's sites see every shape and go
// megamorphic). An array met at a compiled position gets a compiled loop.
//
// The generated code makes the same reads, in the same order, as the generic
// elementSize (lib/calculate-size.js) makes for the same value: the value,
// then `toBSON`; for objects `_bsontype`, the BSON version symbol, then the
// Date / binary / RegExp probes. An embedded object is pushed for the frame
// driver, which sizes it after its siblings, last pushed first, as js-bson
// does. Every type without an inline case goes to the generic functions with
// the value already read. The size rules are the generic ones (numberSize,
// stringSize, …), called, not copied.
//
// Nodes are found by key list (a Map on the first key, a few lists each) and
// remembered per position of the parent's sizer, so nested documents of one
// shape find theirs with one list compare. The table is bounded (MAX_NODES),
// and while most look-ups bring a key list never seen before (keys made from
// ids or dates), calls go to the generic walk (`cold`).
const { Buffer } = require('node:buffer');
const codegen = require('./codegen');

const COMPILE_AFTER = 4;
const MAX_NODES = 1024; // key lists in a table
const MAX_COMPILED = 512; // nodes (key lists and array positions) compiled per table
const KEEP_RECENT = 16; // uses since the last sweep that keep a node
const MAX_PER_FIRST_KEY = 32; // documents of many collections all start with _id
const MAX_KEYS = 512;
// keys per generated function (V8 stops optimising very large functions)
const CHUNK_KEYS = 32;
// cold: of the last WINDOW look-ups, more than a quarter brought a new key
// list ({ $set: { [day]: v } } brings one new list in two look-ups); then
// calls use the generic walk, and after COLD_CALLS of them the table gets one
// more window of look-ups to show whether key lists recur again. (A look-up
// that adds a node costs ~0.5 µs: far too much to make on every call.)
const WINDOW = 64;
const COLD_CALLS = 65536;

// every table, for the tests' counters and resets
const tables = [];

function sameKeys(a, b) {
  if (a === null || a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * The shape table of one sizer (one js-bson copy), or null without code
 * generation. `h` holds that sizer's generic functions and constants
 * (PARAMS below).
 */
function createShapes(h) {
  if (!codegen.available) return null;
  const byFirstKey = new Map();
  let nodeCount = 0;
  let compiledCount = 0;
  let calls = 0; // calls since the table went cold
  let probes = 0; // look-ups in the current window
  let fresh = 0; // of which brought a key list not in the table
  let cold = false;
  let lastUnslotted = null; // the node of the last look-up without a parent slot

  // keys: the key list (null: an array node). body: the compiled sizer of the
  // elements; frame: the whole frame (js-bson's per-object checks, the key
  // compare, body, then the children). slots: the node each position's
  // embedded object or array had last.
  function newNode(keys) {
    if (nodeCount >= MAX_NODES) evictUncompiled();
    nodeCount++;
    return { keys, uses: 0, recent: 0, body: null, frame: null, slots: [] };
  }

  // A full table keeps its compiled nodes and forgets the others (key lists
  // seen fewer than COMPILE_AFTER times), so that lists which recur later can
  // still be learned. (Array nodes live only in their parents' slots.)
  function evictUncompiled() {
    prune(n => n.body !== null);
  }

  /** Keeps the listed nodes that `keep` accepts (nodeCount = their number); returns how many of them are compiled. */
  function prune(keep) {
    nodeCount = 0;
    let compiled = 0;
    for (const [first, list] of byFirstKey) {
      const kept = list.filter(keep);
      if (kept.length === 0) byFirstKey.delete(first);
      else byFirstKey.set(first, kept);
      nodeCount += kept.length;
      for (const n of kept) if (n.body !== null) compiled++;
    }
    return compiled;
  }

  /** Should this call use the frame driver? Yes, but while cold no, except for a trial window every COLD_CALLS calls. */
  function framesNow() {
    if (cold && ++calls === COLD_CALLS) {
      calls = 0;
      cold = false;
      probes = fresh = 0;
    }
    return !cold;
  }

  function endWindow() {
    cold = fresh * 4 > WINDOW;
    probes = 0;
    fresh = 0;
  }

  function find(keys) {
    if (++probes === WINDOW) endWindow();
    const first = keys.length === 0 ? '' : keys[0];
    let list = byFirstKey.get(first);
    if (list !== undefined) {
      for (let i = 0; i < list.length; i++) if (sameKeys(list[i].keys, keys)) return list[i];
    }
    fresh++;
    if (list === undefined) {
      list = [];
      byFirstKey.set(first, list);
    } else if (list.length >= MAX_PER_FIRST_KEY) {
      return null;
    }
    const node = newNode(keys);
    list.push(node);
    return node;
  }

  function use(node) {
    node.recent++;
    if (node.body === null && ++node.uses % COMPILE_AFTER === 0 && (node.uses === COMPILE_AFTER || node.uses % 64 === 0)) {
      if (compiledCount >= MAX_COMPILED) sweep();
      if (compiledCount < MAX_COMPILED) compileNode(node);
    }
    return node;
  }

  // All compiled slots taken: forget the nodes used fewer than KEEP_RECENT
  // times since the last sweep (a node still held by a kept parent's slot
  // goes on working there). A node that found no room retries every 64 uses.
  function sweep() {
    compiledCount = prune(n => n.recent >= KEEP_RECENT);
    for (const list of byFirstKey.values()) for (const n of list) n.recent = 0;
  }

  function setSlot(parent, pos, node) {
    while (parent.slots.length < pos - 1) parent.slots.push(undefined);
    parent.slots[pos - 1] = node;
  }

  /** The node for an object with `keys`, through the slot of the parent's sizer at position `pos` (1-based; 0 = none). */
  function lookUp(keys, parent, pos) {
    if (parent === null || pos === 0) {
      // the last such node first: consecutive documents of one shape skip the Map
      if (lastUnslotted !== null && sameKeys(lastUnslotted.keys, keys)) {
        if (++probes === WINDOW) endWindow();
        return use(lastUnslotted);
      }
      const node = find(keys);
      if (node === null) return null;
      lastUnslotted = node;
      return use(node);
    }
    const hint = parent.slots[pos - 1];
    if (hint !== undefined && sameKeys(hint.keys, keys)) return hint.body !== null ? hint : use(hint);
    const node = find(keys);
    if (node === null) return null;
    setSlot(parent, pos, node);
    return use(node);
  }

  /** The node for an array at the parent's position `pos` (null when there is no parent sizer). */
  function arrayAt(parent, pos) {
    if (parent === null || pos === 0) return null;
    const hint = parent.slots[pos - 1];
    if (hint !== undefined && hint.keys === null) return hint.body !== null ? hint : use(hint);
    const node = newNode(null);
    setSlot(parent, pos, node);
    return use(node);
  }

  function compileNode(node) {
    const keys = node.keys;
    if (keys !== null && keys.length > MAX_KEYS) return;
    const src = keys === null ? arraySource() : objectSource(keys);
    const make = codegen.compile(PARAMS, src);
    if (make === null) return;
    [node.body, node.frame] = make(...PARAMS.map(p => (p === 'node' ? node : p === 'afterToBSON' ? afterToBSON : h[p])));
    compiledCount++;
  }

  // A value whose `toBSON` (already read) is a function: the generic path calls it.
  function afterToBSON(st, name, isArray, value, ignoreUndefined, stack) {
    st.toBSONChecked = true;
    st.memo = -1;
    return h.elementSize(st, name, value, false, isArray, ignoreUndefined, stack);
  }

  tables.push({
    nodes: () => nodeCount,
    compiled: () => compiledCount,
    reset() {
      byFirstKey.clear();
      lastUnslotted = null;
      nodeCount = compiledCount = calls = probes = fresh = 0;
      cold = false;
    }
  });
  return { lookUp, arrayAt, framesNow };
}

// What the generated code may call: the generic sizer's functions and
// constants (by these names in `h`), afterToBSON, and its own node.
const PARAMS = [
  'walk',
  'frame',
  'frameBody',
  'openFrame',
  'enter',
  'exit',
  'isMap',
  'MAX_FRAME_DEPTH',
  'OBJECT',
  'ARRAY',
  'MAP',
  'elementSize',
  'taggedSize',
  'untaggedSize',
  'regExpSize',
  'onCalcPath',
  'numberSize',
  'stringSize',
  'nullSize',
  'booleanSize',
  'objectIdSize',
  'eightByteSize',
  'embeddedSize',
  'isDate',
  'isRegExp',
  'isAnyArrayBuffer',
  'BSONError',
  'BSONVersionError',
  'VERSION_SYMBOL',
  'BSON_MAJOR_VERSION',
  'afterToBSON',
  'node'
];

/**
 * The inline size of the value `v` of one element, added to `total`: `name`
 * and `nb` are JS expressions for the element's name and its UTF-8 length,
 * `pos` the position recorded with an embedded object it pushes.
 */
function elementSource(name, nb, isArray, pos) {
  const generic = `elementSize(st, ${name}, v, false, ${isArray}, iu, stack)`;
  const viaToBSON = `afterToBSON(st, ${name}, ${isArray}, v, iu, stack)`;
  return `t = typeof v;
if (t === 'number') total += typeof v.toBSON !== 'function' ? numberSize(${nb}, v) : ${viaToBSON};
else if (t === 'string') total += typeof v.toBSON !== 'function' ? stringSize(${nb}, v) : ${viaToBSON};
else if (t === 'boolean') total += typeof v.toBSON !== 'function' ? booleanSize(${nb}) : ${viaToBSON};
else if (v === null) total += nullSize(${nb});
else if (t !== 'object') total += ${generic};
else if (typeof v.toBSON === 'function') total += ${viaToBSON};
else {
  tag = v._bsontype;
  if (typeof tag === 'string') {
    if (v[VERSION_SYMBOL] !== BSON_MAJOR_VERSION) throw new BSONVersionError();
    if (tag === 'ObjectId') total += objectIdSize(${nb});
    else {
      st.memo = -1;
      s = taggedSize(st, ${name}, ${isArray}, v, tag, iu, stack);
      total += s >= 0 ? s : untaggedSize(st, ${name}, ${isArray}, v, iu, stack);
    }
  } else if (v instanceof Date || isDate(v)) total += eightByteSize(${nb});
  else if (ArrayBuffer.isView(v) || v instanceof ArrayBuffer || isAnyArrayBuffer(v)) total += ${nb} + 1 + (1 + 4 + 1) + v.byteLength;
  else if (v instanceof RegExp || isRegExp(v)) total += regExpSize(${nb}, v);
  else {
    if (onCalcPath(st, v)) throw new BSONError('Cannot convert circular structure to BSON');
    stack.push(v, iu | ${pos << 2});
    total += embeddedSize(${nb});
  }
}
`;
}

/** The frame's children, last pushed first, through the compiled frame their position had (else the generic frame). */
const DRAIN = `while (stack.length > base) {
  const f = stack.pop();
  const child = stack.pop();
  const slot = f < 4 ? undefined : node.slots[(f >>> 2) - 1];
  total += slot !== undefined && slot.frame !== null ? slot.frame(st, child, f) : frame(st, child, f, node);
}
exit(st, obj);
st.depth--;
return total;
`;

/**
 * An object node: `body` (the keys in chunks of CHUNK_KEYS, one function
 * each) and `shapeFrame`, the generic frame's checks in its order
 * (Array.isArray, Map, toBSON, Object.keys), then the key compare; any
 * difference hands the entered object to the generic frameBody.
 */
function objectSource(keys) {
  let src = '';
  const chunks = [];
  for (let from = 0; from < keys.length || from === 0; from += CHUNK_KEYS) {
    const name = 'chunk' + chunks.length;
    chunks.push(name);
    src += `const ${name} = function shapeBody(st, o, iu, stack, keys) {\nlet total = 0, v, t, tag, s;\n`;
    for (let i = from; i < Math.min(keys.length, from + CHUNK_KEYS); i++) {
      const q = JSON.stringify(keys[i]);
      src += `v = o[keys[${i}]];\n` + elementSource(q, Buffer.byteLength(keys[i], 'utf8'), false, i + 1);
    }
    src += 'return total;\n};\n';
  }
  src += `const body = ${chunks.length === 1 ? 'chunk0' : `(st, o, iu, stack, keys) => ${chunks.map(c => `${c}(st, o, iu, stack, keys)`).join(' + ')}`};\n`;
  let same = `keys.length === ${keys.length}`;
  for (let i = 0; i < keys.length; i++) same += ` && keys[${i}] === ${JSON.stringify(keys[i])}`;
  return `${src}const shapeFrame = function shapeFrame(st, obj, flags) {
if (st.depth >= MAX_FRAME_DEPTH) return walk(st, obj, flags, false);
st.depth++;
enter(st, obj);
if (Array.isArray(obj)) return frameBody(st, obj, ARRAY, obj, null, flags, null);
if (obj instanceof Map || isMap(obj)) return frameBody(st, obj, MAP, obj, null, flags, null);
if (typeof obj.toBSON === 'function') {
  const target = obj.toBSON();
  return frameBody(st, obj, OBJECT, target, Object.keys(target), flags, null);
}
const keys = Object.keys(obj);
if (!(${same})) return frameBody(st, obj, OBJECT, obj, keys, flags, null);
const stack = st.stack;
const base = stack.length;
let total = 5 + body(st, obj, flags & 1, stack, keys);
${DRAIN}};
return [body, shapeFrame];`;
}

/** An array node: the element loop (names are indices) and its frame. */
function arraySource() {
  const nb = 'nb';
  return `const body = function arrayBody(st, o, iu, stack) {
let total = 0, v, t, tag, s, nb;
for (let i = 0; i < o.length; i++) {
v = o[i];
nb = i < 10 ? 1 : i < 100 ? 2 : i < 1000 ? 3 : i < 10000 ? 4 : String(i).length;
${elementSource('i', nb, true, 1)}}
return total;
};
const arrayFrame = function arrayFrame(st, obj, flags) {
if (st.depth >= MAX_FRAME_DEPTH) return walk(st, obj, flags, false);
if (!Array.isArray(obj)) return frame(st, obj, flags, null);
st.depth++;
enter(st, obj);
const stack = st.stack;
const base = stack.length;
let total = 5 + body(st, obj, flags & 1, stack);
${DRAIN}};
return [body, arrayFrame];`;
}

// For the tests: counters over all tables, and a reset to an empty table.
const sum = f => tables.reduce((n, t) => n + f(t), 0);
const testing = {
  nodes: () => sum(t => t.nodes()),
  compiled: () => sum(t => t.compiled()),
  tables: () => tables.length,
  reset: () => tables.forEach(t => t.reset()),
  MAX_NODES,
  MAX_COMPILED,
  COLD_CALLS
};

module.exports = { createShapes, testing };
