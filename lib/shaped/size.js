'use strict';
// Shape-compiled calculateObjectSize (issue #11). A plain object's key list,
// once it has recurred COMPILE_AFTER times (a root's WALK_FIRST_USES times
// while many root key lists are in use: table.js), gets a sizer generated for
// it: the keys and their UTF-8 lengths are constants, and each key has its own inline
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
// The nodes live in a shape table (table.js); while it is cold, calls go to
// the generic walk.
const { Buffer } = require('node:buffer');
const codegen = require('./codegen');
const { createTable, sameKeys, testing } = require('./table');
const { inlineIsMap } = require('../serialize/predicates');

// for the tests: objects sized through the other node of their position (otherKeys)
const counts = { altFrames: 0 };

// Key lists longer than this are not compiled (calculate-size.js sizes such an
// object's subtree with its walk): in a fresh process a compiled sizer of
// flat_bson's 145 keys ran at 0.7x js-bson for its first ~100 ms (1.5x with
// the generic frame from the start), and full_bson's 91 keys compiled ran at
// 0.70-1.06x the walk's speed.
const MAX_KEYS = 64;
// keys per generated function (V8 stops optimising very large functions)
const CHUNK_KEYS = 32;

/**
 * The shape table of one sizer (one js-bson copy), or null without code
 * generation. `h` holds that sizer's generic functions and constants
 * (PARAMS below). A node's `body` is its compiled sizer of the elements and
 * its `frame` the whole frame (js-bson's per-object checks, the key compare,
 * body, then the children).
 */
function createShapes(h) {
  if (!codegen.available) return null;

  function compileNode(node) {
    const keys = node.keys; // (at most MAX_KEYS: calculate-size.js's frameBody walks longer lists)
    const src = keys === null ? arraySource() : objectSource(keys);
    const make = codegen.compile(PARAMS, src);
    if (make === null) return false;
    // (an array node's elements are at position 1)
    node.fresh = new Uint8Array(keys === null ? 1 : keys.length);
    const own = { node, otherKeys, F: node.fresh, reflectGet: Reflect.get, afterToBSON, primitiveSize, otherTaggedSize, rootHit: table.rootHit, TO_STRING_TAG: Symbol.toStringTag };
    [node.body, node.frame, node.sized] = make(...PARAMS.map(p => (p in own ? own[p] : h[p])));
    return true;
  }

  // A value whose `toBSON` (already read) is a function: the generic path calls it.
  function afterToBSON(st, name, isArray, value, ignoreUndefined, stack) {
    st.toBSONChecked = true;
    st.memo = -1;
    return h.elementSize(st, name, value, false, isArray, ignoreUndefined, stack);
  }

  // A primitive not sized inline: a number, string or boolean whose toBSON
  // (read) is a function, or another type (toBSON not read yet).
  function primitiveSize(st, name, isArray, value, ignoreUndefined, stack) {
    const tried = typeof value === 'number' || typeof value === 'string' || typeof value === 'boolean';
    if (tried) return afterToBSON(st, name, isArray, value, ignoreUndefined, stack);
    return h.elementSize(st, name, value, false, isArray, ignoreUndefined, stack);
  }

  // A tagged value other than an ObjectId (its tag and version read).
  function otherTaggedSize(st, name, isArray, value, tag, ignoreUndefined, stack) {
    st.memo = -1;
    const s = h.taggedSize(st, name, isArray, value, tag, ignoreUndefined, stack);
    return s >= 0 ? s : h.untaggedSize(st, name, isArray, value, ignoreUndefined, stack);
  }

  // An object that a compiled frame entered and enumerated, whose keys are
  // not that frame's: sized by the other node its position had (table.js
  // setSlot keeps two, for trees whose children differ by level: deep_bson's
  // leaves came through their parents' frame, then the generic frame and a
  // root look-up, 32 of its 63 objects a call), else by the generic frame.
  function otherKeys(st, obj, keys, flags, parent) {
    const pos = flags >>> 2;
    if (parent !== undefined && pos > 0) {
      const alt = parent.alts[pos - 1];
      if (alt !== undefined && alt.sized !== null && sameKeys(alt.keys, keys)) {
        counts.altFrames++;
        return alt.sized(st, obj, flags, keys);
      }
    }
    return h.frameBody(st, obj, h.OBJECT, obj, keys, flags, parent === undefined ? null : parent);
  }

  const table = createTable(compileNode, n => n.body !== null);
  return table;
}

// What the generated code may call: the generic sizer's functions and
// constants (by these names in `h`), the helpers of createShapes, and its own node.
const PARAMS = [
  'walk',
  'frame',
  'frameBody',
  'enter',
  'exit',
  'TO_STRING_TAG',
  'rootHit',
  'MAX_FRAME_DEPTH',
  'OBJECT',
  'ARRAY',
  'MAP',
  'indexLength',
  'numberSize',
  'stringSize',
  'nullSize',
  'booleanSize',
  'objectIdSize',
  'eightByteSize',
  'isDate',
  'BSONVersionError',
  'VERSION_SYMBOL',
  'BSON_MAJOR_VERSION',
  'afterToBSON',
  'primitiveSize',
  'otherTaggedSize',
  'regExpSize',
  'isAnyArrayBuffer',
  'isRegExp',
  'onCalcPath',
  'embeddedSize',
  'BSONError',
  'node',
  'otherKeys',
  'F',
  'reflectGet'
];

// In an array the reads of an object element (toBSON, _bsontype, the version
// symbol) are made at one of several sites, chosen by the class of the object
// element before it (`cls`), so that in an array of one class each site's
// inline cache sees that class, whatever other arrays met at this position
// held: one site for all went megamorphic when { values } held 1,000
// ObjectIds in one call and 1,000 UUIDs, Dates or Longs in others
// (objectid_1000 after the bench's other documents: 59 µs, 8 µs alone).
// (Reads from an assignment: see elementSource.)
const CLS_OTHER = 0;
const CLS_OBJECT_ID = 1;
const CLS_DATE = 2;
const CLS_LONG = 3; // Long, Timestamp
const CLS_BINARY = 4; // Binary, UUID
const CLS_SITES = 4;

/**
 * The test `test(read)` of the object element `v`, where `read(key)` reads
 * v's property `key` (a JS expression: "'toBSON'", ...): in an array, at the
 * site of the class before (each site tests its own read, rather than one
 * test of the sites' merged value: objectid_1000 0.80x the time against
 * 0.88x, fresh processes); in a document at position `pos`, through
 * Reflect.get once the position brings ever-new key lists (see
 * shaped/serialize.js FRESH_READS).
 */
function objectTest(isArray, pos, test) {
  if (!isArray) return test(key => `(F[${pos - 1}] === 0 ? v[${key}] : reflectGet(v, ${key}))`);
  let e = test(key => `v[${key}]`);
  for (let c = CLS_SITES; c >= 1; c--) e = `cls === ${c} ? ${test(key => `(r = v)[${key}]`)} : ${e}`;
  return `(${e})`;
}

/**
 * The inline size of the value `v` of one element, added to `total`: `name`
 * and `nb` are JS expressions for the element's name and its UTF-8 length,
 * `pos` the position recorded with an embedded object it pushes. (Each
 * toBSON read of a primitive is from an assignment, so that it has an inline
 * cache of its own rather than the one of all `v.toBSON`: see
 * serialize/walk.js's arrayLane.) In an array it keeps `cls` (objectTest).
 * A number, string or boolean whose toBSON is a function falls through to
 * `typeof v !== 'object'`, where primitiveSize takes it as read; tagged
 * values other than ObjectIds go to otherTaggedSize. (Short source:
 * V8 parses and compiles it at a key list's first uses, in the
 * application's first calls: tweet's sizers took 6.5 ms at their 4th call.)
 */
function elementSource(name, nb, isArray, pos) {
  const cls = c => (isArray ? ` cls = ${c};` : '');
  const clsOfTag = isArray ? ` cls = tag === 'Binary' ? ${CLS_BINARY} : tag === 'Long' || tag === 'Timestamp' ? ${CLS_LONG} : ${CLS_OTHER};` : '';
  return `if (typeof v === 'number' && typeof (num = v).toBSON !== 'function') total += numberSize(${nb}, v);
else if (typeof v === 'string' && typeof (str = v).toBSON !== 'function') total += stringSize(${nb}, v);
else if (typeof v === 'boolean' && typeof (bool = v).toBSON !== 'function') total += booleanSize(${nb});
else if (v === null) total += nullSize(${nb});
else if (typeof v !== 'object') total += primitiveSize(st, ${name}, ${isArray}, v, iu, stack);
else if (${objectTest(isArray, pos, read => `typeof ${read("'toBSON'")} === 'function'`)}) {${cls(CLS_OTHER)} total += afterToBSON(st, ${name}, ${isArray}, v, iu, stack); }
else if (${objectTest(isArray, pos, read => `typeof (tag = ${read("'_bsontype'")}) === 'string'`)}) {
  if (${objectTest(isArray, pos, read => `${read('VERSION_SYMBOL')} !== BSON_MAJOR_VERSION`)}) throw new BSONVersionError();
  if (tag === 'ObjectId') {${cls(CLS_OBJECT_ID)} total += objectIdSize(${nb}); }
  else {${clsOfTag} total += otherTaggedSize(st, ${name}, ${isArray}, v, tag, iu, stack); }
} else if (v instanceof Date || isDate(v)) {${cls(CLS_DATE)} total += eightByteSize(${nb}); }
else {${cls(CLS_OTHER)}
  if (ArrayBuffer.isView(v) || v instanceof ArrayBuffer || isAnyArrayBuffer(v)) total += ${nb} + 1 + (1 + 4 + 1) + v.byteLength;
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
  // (not at a position of ever-new key lists: see shaped/serialize.js FRESH_READS)
  total += slot !== undefined && slot.frame !== null && F[(f >>> 2) - 1] === 0 ? slot.frame(st, child, f, node) : frame(st, child, f, node);
}
exit(st);
st.depth--;
return total;
`;

/**
 * The rest of an object node's frame once `obj`'s keys are known to be its
 * own: in shapeFrame, and as shapeSized for an object that the frame of the
 * other node at its position entered (otherKeys). (shapeFrame calling
 * shapeSized instead gave V8 two functions to optimise per frame: a new
 * process's first 1,000 calls, npm run bench:cold, two runs each, nested_4
 * 1.20-1.33x js-bson's speed against 1.37-1.65x, deep_50 1.08-1.14x against
 * 1.27-1.40x.)
 */
const SIZED = `if (st.depth === 1) rootHit(node);
const stack = st.stack;
const base = stack.length;
let total = 5 + body(st, obj, flags & 1, stack, keys);
${DRAIN}`;

/**
 * An object node: `body` (the keys in chunks of CHUNK_KEYS, one function
 * each), `shapeFrame`, the generic frame's checks in its order
 * (Array.isArray, Map, toBSON, Object.keys), then the key compare and
 * SIZED, and `shapeSized`. A Map, an array or a toBSON result goes to the
 * generic frameBody, an object of other keys to otherKeys (`parent`: the
 * node whose compiled frame pushed it).
 */
function objectSource(keys) {
  let src = '';
  const chunks = [];
  for (let from = 0; from < keys.length || from === 0; from += CHUNK_KEYS) {
    const name = 'chunk' + chunks.length;
    chunks.push(name);
    const to = Math.min(keys.length, from + CHUNK_KEYS);
    const names = [];
    for (let i = from; i < to; i++) names.push(`k${i} = ${JSON.stringify(keys[i])}`);
    src += `const ${name} = function shapeBody(st, o, iu, stack, keys) {\nlet total = 0, v, tag, num, str, bool;\n`;
    if (names.length > 0) src += `const ${names.join(', ')};\n`;
    for (let i = from; i < to; i++) {
      src += `v = o[keys[${i}]];\n` + elementSource(`k${i}`, Buffer.byteLength(keys[i], 'utf8'), false, i + 1);
    }
    src += 'return total;\n};\n';
  }
  src += `const body = ${chunks.length === 1 ? 'chunk0' : `(st, o, iu, stack, keys) => ${chunks.map(c => `${c}(st, o, iu, stack, keys)`).join(' + ')}`};\n`;
  const same = codegen.sameKeysSource(keys);
  return `${src}const shapeFrame = function shapeFrame(st, obj, flags, parent) {
if (st.depth >= MAX_FRAME_DEPTH) return walk(st, obj, flags, false);
st.depth++;
enter(st, obj);
if (Array.isArray(obj)) return frameBody(st, obj, ARRAY, obj, null, flags, null);
if (obj instanceof Map || ${inlineIsMap('obj')}) return frameBody(st, obj, MAP, obj, null, flags, null);
if (typeof obj.toBSON === 'function') {
  const target = obj.toBSON();
  return frameBody(st, obj, OBJECT, target, Object.keys(target), flags, null);
}
const keys = Object.keys(obj);
if (!(${same})) return otherKeys(st, obj, keys, flags, parent);
${SIZED}};
const sized = function shapeSized(st, obj, flags, keys) {
${SIZED}};
return [body, shapeFrame, sized];`;
}

/** An array node: the element loop (names are indices) and its frame. */
function arraySource() {
  const nb = 'nb';
  return `const body = function arrayBody(st, o, iu, stack) {
let total = 0, v, tag, nb, num, str, bool, r, cls = ${CLS_OTHER};
for (let i = 0; i < o.length; i++) {
v = o[i];
nb = indexLength(i);
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

module.exports = { createShapes, testing, counts, MAX_KEYS };
