'use strict';
// Shape-compiled frames for serialize (issue #11), the serialize counterpart
// of size.js. A plain object's key list, once it has recurred COMPILE_AFTER
// times (table.js), gets a function generated for it that writes its elements
// onto the encode tape: the keys and their tape key words are constants, and
// each key has an inline copy of the element checks, so every read and type
// probe has an inline cache of its own (the walk's sites see every shape and
// go megamorphic). The property reads, and the toBSON and _bsontype reads of
// an object value, are keyed loads by K (the key list, then 'toBSON',
// '_bsontype'), as size.js reads by its key list: see walk.js READ_BY_KEY.
//
// `body(walker, t, o, depth, ck, iu, sf)` writes the elements of `o` (the
// caller has made js-bson's frame checks and compared the key list; it writes
// the document's end). Numbers, strings, booleans, null, undefined, Dates
// and every tagged value without a document inside (writeTagged) are written
// inline, with the walk's writers (types.js), called, not copied. A document or array goes to enterDocument
// (serialize/walk.js), which enters it through its own compiled frame or the
// walk; any other element goes to the walk with what was read of it (handOne).
// So the reads are the walk's, in the walk's order: the value, `toBSON`, then
// for objects `_bsontype`, the BSON version symbol and the tag, or
// `instanceof Date`.
//
// A key with a flag (NUL; '$' or '.' under checkKeys) is handed over after
// the value read: the walk then makes the toBSON read and throws its error.
const codegen = require('./codegen');
const { createTable, testing } = require('./table');
const { entryOf, keyWord, K_NUL, K_FLAGS } = require('../serialize/keys');
const { inlineIsMap, inlineIsAnyArrayBuffer } = require('../serialize/predicates');

// Key lists longer than this are not compiled (the walk takes them), and a
// body is cut into functions of CHUNK_KEYS keys: V8 optimises big functions
// later. In the short processes of bench:peers, a 59-key body (full_bson's
// top level without the types deepkit lacks) ran at 1.03x js-bson where the
// walk runs at 1.64x; with 32 keys at most and chunks of 16 it was 1.73x.
const MAX_KEYS = 32;
const CHUNK_KEYS = 16;

// FRESH_READS: an object at a position whose documents keep bringing key
// lists new to the table (table.js MAX_SLOT_MISSES; { m: { [minute]: v } })
// has a hidden class V8 has not seen before, so its toBSON and _bsontype
// reads at an inline cache miss V8's stub cache and take the runtime's
// lookup (~300 ns a read in a probe of 16,384 such objects). There the body
// reads them with Reflect.get, the same [[Get]] done by a builtin (~85 ns),
// and enters the document by enterDocument, whose toBSON read is made so too
// (walk.js objectTarget), rather than by the compiled enter of the key list
// the position had last, whose reads would miss as well; so is a root's
// while the table is cold (ever-new root key lists). Serialize time:
// newkeys_userid 0.65x, newkeys_set 0.59x, newkeys_buckets 0.71x. Elsewhere
// an inline cache is far quicker (~1 ns: Reflect.get everywhere made
// nested_4 1.13x and orders_1000 1.17x the time).

/**
 * The shape table of one walk (one js-bson copy), or null without code
 * generation. `h` holds what the generated code calls (PARAMS) and the
 * copy's `tagByChain` (layout.js).
 */
function createFrameShapes(h) {
  if (!codegen.available) return null;

  function compileNode(node) {
    const keys = node.keys;
    if (keys === null || keys.length > MAX_KEYS) return false;
    const entries = []; // (each key's entry, as compiled in: handOne gets the same)
    const make = codegen.compile(PARAMS, bodySource(keys, h.tagByChain, entries));
    if (make === null) return false;
    node.fresh = new Uint8Array(keys.length);
    const args = { node, K: [...keys, 'toBSON', '_bsontype'], E: entries, F: node.fresh, rootHit: table.rootHit, TO_STRING_TAG: Symbol.toStringTag, reflectGet: Reflect.get };
    [node.body, node.root, node.enter, node.element] = make(...PARAMS.map(p => (p in args ? args[p] : h[p])));
    return true;
  }

  const table = createTable(compileNode, n => n.body !== null);
  return table;
}

// What the generated code may call: the walk's writers and constants (by these names in `h`) and its own node.
const PARAMS = [
  'writeNull',
  'writeBoolean',
  'writeNumber',
  'writeString',
  'writeDate',
  'writeTagged',
  'tagOf',
  'BSONVersionError',
  'VERSION_SYMBOL',
  'BSON_MAJOR_VERSION',
  'bsonType',
  'HAND_PLAIN',
  'HAND_TOBSON',
  'HAND_PRE',
  'PRE_TAG',
  'enterDocument',
  'handOne',
  'roomNow',
  'ELEMENT_VALUE_BYTES',
  'openDocument',
  'enterOpened',
  'walkRoot',
  'walkOpened',
  'handBack',
  'toBSONTarget',
  'MAX_COMPILED_DEPTH',
  'KIND_ARR',
  'KIND_OBJ',
  'rootError',
  'ROOT_TAGGED',
  'ROOT_VALUE',
  'KIND_MAP',
  'isDate',
  'isRegExp',
  'isUint8Array',
  'writeEnd',
  'TO_STRING_TAG',
  'rootHit',
  'node',
  'K',
  'E',
  'F',
  'reflectGet'
];

/**
 * The elements from..to of a key list: per key, a room check, the value read, then the
 * element written or passed on. After a call that may write any number of
 * elements (enterDocument, hand), or a binary's data past an element's
 * room (ELEMENT_VALUE_BYTES), the room is asked again. (Each toBSON
 * read of a primitive is from an assignment, so that it has an inline cache
 * of its own: see serialize/walk.js's arrayLane.) A number, string or boolean
 * whose toBSON is a function falls through to `typeof v !== 'object'`, where
 * handPrimitive passes it on as read (no second read). The source is kept
 * short (keys as locals, one hand-over helper): V8 parses and compiles it at
 * a key list's first uses, in the application's first calls.
 */
function chunkSource(keys, from, to, tagByChain, entries) {
  const tagRead = tagByChain
    ? 'tag = tagOf(v);'
    : 'if (v[VERSION_SYMBOL] !== BSON_MAJOR_VERSION) throw new BSONVersionError();\n  tag = v[bsonType];';
  const names = [];
  for (let p = from; p < to; p++) names.push(`k${p} = ${JSON.stringify(keys[p])}`);
  let src = names.length === 0 ? '' : `const ${names.join(', ')};\n`;
  for (let p = from; p < to; p++) {
    const key = `k${p}`;
    const entry = entryOf(keys[p]); // (defined now: the key list recurs)
    entries[p] = entry;
    const w = keyWord(entry);
    const hand = (kind, pre, tag) => `room = hand(walker, depth, ${p}, v, ${kind}, ${pre}, ${tag}, ck, iu, sf, t);`;
    // (only NUL always throws; '$' and '.' only under checkKeys)
    const flagged = (entry & K_FLAGS) === 0 ? null : (entry & K_NUL) !== 0 ? 'true' : 'ck';
    // v's toBSON / _bsontype (K[n]): at a position of ever-new key lists, through Reflect.get (see FRESH_READS)
    const read = (n) => `(F[${p}] === 0 ? v[K[${n}]] : reflectGet(v, K[${n}]))`;
    src += `if (--room < 0) room = roomNow(t) - 1;
v = o[K[${p}]];
${flagged === null ? '' : `if (${flagged}) ${hand('HAND_PLAIN', 0, 'undefined')}\nelse `}if (typeof v === 'number' && typeof (num = v).toBSON !== 'function') writeNumber(t, ${w}, ${key}, v);
else if (typeof v === 'string' && typeof (str = v).toBSON !== 'function') writeString(t, ${w}, ${key}, v);
else if (typeof v === 'boolean' && typeof (bool = v).toBSON !== 'function') writeBoolean(t, ${w}, ${key}, v);
else if (v === null) writeNull(t, ${w}, ${key});
else if (v === undefined) {
  if (iu === false) writeNull(t, ${w}, ${key});
} else if (typeof v !== 'object') room = handPrimitive(walker, depth, ${p}, v, ck, iu, sf, t);
else if (typeof ${read(keys.length)} === 'function') ${hand('HAND_TOBSON', 0, 'undefined')}
else if (${read(keys.length + 1)} == null) {
  if (v instanceof Date) writeDate(t, ${w}, ${key}, v);
  else {
    enterAt(walker, t, ${w}, ${key}, v, depth, ${p + 1}, ck, iu, sf);
    room = roomNow(t);
  }
} else {
  ${tagRead}
  bi = t.bi;
  if (!writeTagged(t, ${w}, ${key}, v, tag)) ${hand('HAND_PRE', 'PRE_TAG', 'tag')}
  else if (t.bi - bi > ELEMENT_VALUE_BYTES) room = roomNow(t);
}
`;
  }
  return src;
}

/**
 * The body of a key list: one function per CHUNK_KEYS keys, called in
 * order (small functions are optimised sooner: see CHUNK_KEYS), and the
 * hand-over to the walk of an element it does not write (handOne, with the
 * key and its entry by position: `entries` gets the entries compiled in, E at
 * run time).
 */
function bodySource(keys, tagByChain, entries) {
  const chunks = [];
  let src = `// a document at 1-based position pos: through the compiled enter of the node its position had last, else (or at a position of ever-new key lists) enterDocument
const enterAt = function enterAt(walker, t, w, key, v, depth, pos, ck, iu, sf) {
const next = node.slots[pos - 1];
if (next !== undefined && next.enter !== null && F[pos - 1] === 0) next.enter(walker, t, w, key, v, depth, node, pos, ck, iu, sf);
else enterDocument(walker, t, w, key, v, depth, node, pos, ck, iu, sf);
};
const hand = function hand(walker, depth, p, v, kind, pre, tag, ck, iu, sf, t) {
handOne(walker, depth, K[p], v, E[p], kind, pre, tag, ck, iu, sf);
return roomNow(t);
};
// a primitive not written inline: a number, string or boolean with a toBSON function (read), or another type
const handPrimitive = function handPrimitive(walker, depth, p, v, ck, iu, sf, t) {
const tried = typeof v === 'number' || typeof v === 'string' || typeof v === 'boolean';
return hand(walker, depth, p, v, tried ? HAND_TOBSON : HAND_PLAIN, 0, undefined, ck, iu, sf, t);
};
`;
  for (let from = 0; from < keys.length || from === 0; from += CHUNK_KEYS) {
    const name = 'chunk' + chunks.length;
    chunks.push(name);
    src += `const ${name} = function shapeBody(walker, t, o, depth, ck, iu, sf) {
let room = roomNow(t), v, num, str, bool, tag, bi;
${chunkSource(keys, from, Math.min(keys.length, from + CHUNK_KEYS), tagByChain, entries)}};
`;
  }
  const calls = chunks.map(c => `${c}(walker, t, o, depth, ck, iu, sf);`).join('\n');
  src += chunks.length === 1 ? 'const body = chunk0;\n' : `const body = function shapeBody(walker, t, o, depth, ck, iu, sf) {\n${calls}\n};\n`;
  return `${src}${frameSource(keys)}return [body, root, enter, element];`;
}

/**
 * The key list's own copies of the frame checks, each with inline caches of
 * its own (at walk.js's shared sites, the toStringTag `in` and the toBSON
 * read went megamorphic in a process of many shapes: 15% of serializing
 * nested_4 after the bench's other documents, 35 ns of { ok: 1 }). Each is
 * tried for the document that comes where this key list came last, and
 * makes the same reads, in the same order, as walk.js's generic steps:
 * - element(walker, t, v, d, ck, iu, sf): openFrame's checks (frameKind,
 *   objectTarget, Object.keys), then the key compare and the body; any other
 *   frame is handed back as read (handBack, false). (The walk calls it for a
 *   document in an array, after the array's last document.)
 * - enter(...): enterDocument (openDocument, then element, else enterOpened),
 *   for a document at a compiled parent's position (enterAt).
 * - root(walker, o, ck, iu, sf): walkDocument's root (checkRoot's checks, then
 *   element, else walkOpened), for the root after a root of this key list;
 *   an array or non-object goes to walkRoot before any read.
 */
function frameSource(keys) {
  const same = codegen.sameKeysSource(keys);
  return `const element = function shapeElement(walker, t, v, d, ck, iu, sf) {
if (Array.isArray(v)) return handBack(walker, KIND_ARR, v, null);
if (v instanceof Map || ${inlineIsMap('v')}) return handBack(walker, KIND_MAP, v, null);
const target = typeof v[K[${keys.length}]] === 'function' ? toBSONTarget(v) : v;
const keys = Object.keys(target);
if (!(${same}) || d > MAX_COMPILED_DEPTH) return handBack(walker, KIND_OBJ, target, keys);
body(walker, t, target, d, ck, iu, sf);
writeEnd(t);
return true;
};
const enter = function shapeEnter(walker, t, w, key, v, depth, parent, pos, ck, iu, sf) {
const d = openDocument(walker, t, w, key, v, depth);
if (d >= 0 && !element(walker, t, v, d, ck, iu, sf)) enterOpened(walker, t, v, d, parent, pos, ck, iu, sf);
};
const root = function shapeRoot(walker, o, ck, iu, sf) {
if (Array.isArray(o) || typeof o !== 'object') return walkRoot(walker, o, ck, iu, sf);
if ('_bsontype' in o && typeof o._bsontype === 'string') throw rootError(ROOT_TAGGED);
if (isDate(o) || isRegExp(o) || isUint8Array(o) || ${inlineIsAnyArrayBuffer('o')}) throw rootError(ROOT_VALUE);
if (element(walker, walker.tape, o, 0, ck, iu, sf)) rootHit(node);
else walkOpened(walker, o, ck, iu, sf);
};
`;
}

module.exports = { createFrameShapes, testing, MAX_KEYS };
