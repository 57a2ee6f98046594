'use strict';
// A JS reader for the smallest documents: { ok: 1 }, { n: 1, ok: 1 },
// { [userId]: n }, { $set: { [day]: v } }. For these a native call's fixed
// cost (~100 ns) is more than js-bson's whole decode, so they are read here,
// with js-bson's reads and results (deserializer.ts) for a few types: double,
// short ASCII string, embedded document, array, binary (not subtype 2),
// ObjectId, boolean, UTC datetime ({ _id, n, at: Date } 1.40x -> 1.96x
// js-bson's speed), null, int32. It takes documents of at most MAX_BYTES, and documents over
// BIG_BYTES (with at most MAX_ELEMENTS elements and no long string, these
// are big binaries: { b: <1 MiB Binary> } costs a native call more than the
// view js-bson makes; giving up after a few elements costs nothing next to
// reading such a document natively).
//
// It never reports an error: anything else (another type, a non-ASCII key or
// string, a size that does not add up, a possible DBRef, `__proto__`, more
// than MAX_ELEMENTS elements) returns undefined before the document is
// returned, and the Rust reader reads it from the start, with its checks and
// js-bson's errors. So this file holds no validation rules of its own: it only
// recognises documents that obviously need none. (After a document it gave
// up on, a first pass over the next ones' headers turns such documents away
// before any value is made: mayRead.)
const { Buffer } = require('node:buffer');
const { getInt32LE: int32, F_PROMOTE_VALUES, F_PROMOTE_BUFFERS, F_RAW, F_ALLOW_SMALLER } = require('./options');
const { dictionaryObject, compileFactory, COMPILE_AFTER } = require('./shapes');
const codegen = require('../shaped/codegen');

const MAX_BYTES = 128;
const BIG_BYTES = 64 * 1024;
// (up to here JS still beats the native read: nine int32s 1.95x js-bson's
// speed against 1.28x natively; 14 booleans level)
const MAX_ELEMENTS = 16;
const MAX_DEPTH = 3;
const MAX_STRING = 128; // bytes of one string (each is checked to be ASCII)

// (set by readSmall for the document it reads)
let makeBinary = null;
let makeObjectId = null;
let promoteBuffers = false;
let numberClasses = null; // promoteValues false: the copy's { Int32, Double }, made for int32s and doubles
let rawDocuments = false; // raw: embedded documents are views of the input (given up on here)
let rawNames = null; // fieldsAsRaw's names (options.js rawNamesOf): an array under one of them is given up on

const latin1Slice = Buffer.prototype.latin1Slice;
const f64 = new Float64Array(1);
const f64Bytes = new Uint8Array(f64.buffer);

/** The double at `at` (8 bytes, little-endian). */
function double(buf, at) {
  for (let i = 0; i < 8; i++) f64Bytes[i] = buf[at + i];
  return f64[0];
}

// The last key and the last string value read at each element ordinal: a
// document of the same shape finds its keys (and repeated values) by a byte
// compare instead of making the strings again (latin1Slice: ~40 ns).
const keyMemo = new Array(MAX_ELEMENTS).fill('');
const valueMemo = new Array(MAX_ELEMENTS).fill('');

let elements = 0;
let deepest = 0; // the deepest document level readSmall reached

// Ever-new keys ({ [userId]: n }, { $set: { [day]: v } }): a key that misses
// its memo is looked up among the keys seen lately; when more than half of a
// window's memo misses are keys not seen lately, the window after it is
// cold, and an object whose first key is such a key is built in dictionary
// mode (shapes.js dictionaryObject). Alternating shapes ({ ok: 1 }, then
// { n: 1, ok: 1 }) miss their memos but not the keys seen lately, so their
// objects stay ordinary fast objects; a key that hits its memo costs nothing here.
// The keys seen lately are a Set of 30-bit hashes of their bytes (a Set of
// the strings cost more; two keys of one hash only miscount one key).
const SEEN_MAX = 4096;
const KEY_WINDOW = 256;
const seen = new Set();
const keyWindow = { misses: 0, fresh: 0, cold: false };

/** Counts a memo miss (`fresh`: a key not seen lately) in the window; returns whether the window is cold. */
function countMiss(fresh) {
  if (fresh) keyWindow.fresh++;
  if (++keyWindow.misses >= KEY_WINDOW) {
    keyWindow.cold = keyWindow.fresh * 2 > keyWindow.misses;
    keyWindow.misses = 0;
    keyWindow.fresh = 0;
  }
  return keyWindow.cold;
}

/** Whether the key buf[start, end) (not from its memo) was not seen lately; remembers it. */
function isFresh(buf, start, end) {
  let h = 0x811c9dc5 | 0; // (FNV-1a)
  for (let i = start; i < end; i++) h = Math.imul(h ^ buf[i], 0x01000193);
  h &= 0x3fffffff; // (a small integer: no heap number in the Set)
  if (seen.has(h)) return false;
  if (seen.size >= SEEN_MAX) seen.clear();
  seen.add(h);
  return true;
}

let memoHit = false; // whether the last stringAt returned its memo

// A document's keys and values, by depth and position, until its object is
// made: by the factory compiled for its key list (an object literal: no
// keyed stores, each a megamorphic store IC, 33% of { n: 1, ok: 1 }'s time)
// once that list has recurred at its first element's ordinal COMPILE_AFTER
// times; else by assignment.
const keysAt = Array.from({ length: MAX_DEPTH + 1 }, () => new Array(MAX_ELEMENTS).fill(''));
const valuesAt = Array.from({ length: MAX_DEPTH + 1 }, () => new Array(MAX_ELEMENTS).fill(null));
// by a document's first element ordinal: the key list last made there, its run and its factory
const shapeAt = Array.from({ length: MAX_ELEMENTS }, () => ({ keys: [], runs: 0, make: null }));

/** The object of the `n` keys and values read at `depth`, its first element at ordinal `first` (`hits`: every key was its memo; `dict`: dictionary mode). */
function makeObject(depth, first, n, hits, dict) {
  const keys = keysAt[depth];
  const values = valuesAt[depth];
  if (n === 0) return {};
  let o = null;
  if (hits && !dict) {
    const shape = shapeAt[first];
    if (sameKeys(shape.keys, keys, n)) {
      if (shape.make !== null) o = shape.make(values, 0);
      else if (++shape.runs === COMPILE_AFTER) shape.make = compileFactory(shape.keys);
    } else {
      shape.keys = keys.slice(0, n);
      shape.runs = 1;
      shape.make = null;
    }
  }
  if (o === null) {
    o = dict ? dictionaryObject() : {};
    for (let k = 0; k < n; k++) o[keys[k]] = values[k];
  }
  for (let k = 0; k < n; k++) values[k] = null;
  return o;
}

/** The value of a document or array read at `depth` (makeObject / makeArray). */
function made(isArray, depth, first, n, hits, dict) {
  return isArray ? makeArray(depth, n) : makeObject(depth, first, n, hits, dict);
}

/** The array of the `n` values read at `depth`. */
function makeArray(depth, n) {
  if (n === 0) return []; // (a literal: slice's builtin call cost { values: [] } a sixth of its time)
  const values = valuesAt[depth];
  const array = values.slice(0, n);
  for (let k = 0; k < n; k++) values[k] = null;
  return array;
}

function int24(buf, at) {
  return (buf[at] << 16) | (buf[at + 1] << 8) | buf[at + 2];
}

function sameKeys(known, keys, n) {
  if (known.length !== n) return false;
  for (let k = 0; k < n; k++) if (known[k] !== keys[k]) return false;
  return true;
}

/** The ASCII string buf[start, end), from memo[slot] when that holds the same bytes (memoHit). */
function stringAt(memos, buf, start, end, slot) {
  const memo = memos[slot];
  const n = end - start;
  if (memo.length === n) {
    let i = 0;
    while (i < n && memo.charCodeAt(i) === buf[start + i]) i++;
    if (i === n) {
      memoHit = true;
      return memo;
    }
  }
  memoHit = false;
  const s = latin1Slice.call(buf, start, end);
  memos[slot] = s;
  return s;
}

// mayRead's table: by BSON type, 0 for a type readDocument does not take,
// else one more than the bytes of its value, or one of these (a value whose
// size is in it, a nested document or array)
const STRING_VALUE = -1;
const BINARY_VALUE = -2;
const NESTED_VALUE = -3;
const VALUE_SKIP = new Int8Array(256);
VALUE_SKIP[0x01] = 9;
VALUE_SKIP[0x02] = STRING_VALUE;
VALUE_SKIP[0x03] = NESTED_VALUE;
VALUE_SKIP[0x04] = NESTED_VALUE;
VALUE_SKIP[0x05] = BINARY_VALUE;
VALUE_SKIP[0x07] = 13;
VALUE_SKIP[0x08] = 2;
VALUE_SKIP[0x09] = 9;
VALUE_SKIP[0x0a] = 1;
VALUE_SKIP[0x10] = 5;
const CHECK_CALLS = 64;
let checkFirst = 0; // calls left that run mayRead first

/**
 * Whether readDocument may take the document buf[0, n): a pass over its
 * element headers only (types, keys, sizes, depth, and whether its strings
 * are ASCII), nothing made. A document readDocument gives up on late, after
 * making values (a Timestamp after an ObjectId, a 17th element), was read
 * twice, here and natively: { _id, n, at } with a type this reader did not
 * take read at 0.95-1.02x js-bson's speed (natively only 1.60x; with this
 * pass 1.41x).
 * readDocument still checks every byte: this pass only turns away documents
 * it would not take. It costs one it takes ~20% of its read (a 2-element
 * document 2.69x -> 2.16x), so it runs only in the CHECK_CALLS calls after
 * one that gave up or that it turned away, of at most MAX_BYTES (the big
 * documents it gives up on, long strings, it gives up on at once; armed by
 * them too, it cost the bench's smallest replies ~10% in its shared process).
 */
function mayRead(buf, start, n) {
  const end = start + n - 1;
  let at = start + 4;
  let count = 0;
  let depth = 0;
  while (at < end) {
    const type = buf[at++];
    if (type === 0) {
      // (the end of a nested document or array)
      if (--depth < 0) return false;
      continue;
    }
    const skip = VALUE_SKIP[type];
    if (skip === 0 || ++count > MAX_ELEMENTS) return false;
    let c;
    while (at < end && (c = buf[at]) !== 0) {
      if (c >= 0x80) return false;
      at++;
    }
    at++;
    if (skip > 0) {
      at += skip - 1;
    } else if (skip === NESTED_VALUE) {
      if (++depth > MAX_DEPTH) return false;
      at += 4;
    } else if (skip === STRING_VALUE) {
      const size = int32(buf, at);
      const stop = at + 3 + size; // (the string's 0)
      if (size <= 0 || size > MAX_STRING || stop >= end) return false;
      for (let i = at + 4; i < stop; i++) if (buf[i] >= 0x80) return false;
      at = stop + 1;
    } else {
      const size = int32(buf, at);
      if (size < 0 || buf[at + 4] === 2) return false;
      at += 5 + size;
    }
  }
  return at === end && depth === 0;
}

/** The document (or array) whose elements start at `at` and whose terminating 0 is at `end`, or undefined. */
function readDocument(buf, at, end, depth, isArray) {
  if (depth > deepest) deepest = depth;
  const keys = keysAt[depth];
  const values = valuesAt[depth];
  const first = elements;
  let n = 0; // elements read
  let hits = true; // every key was its memo
  let dict = false; // dictionary mode: the first key is fresh in a cold window
  for (;;) {
    if (at >= end) return at === end && buf[at] === 0 ? made(isArray, depth, first, n, hits, dict) : undefined;
    const type = buf[at++];
    if (type === 0) return at - 1 === end ? made(isArray, depth, first, n, hits, dict) : undefined;
    const slot = elements++;
    if (slot >= MAX_ELEMENTS) return undefined;
    const keyStart = at;
    let c;
    while (at < end && (c = buf[at]) !== 0) {
      if (c >= 0x80) return undefined;
      at++;
    }
    if (at >= end) return undefined;
    // (an array's keys are skipped: js-bson numbers its elements)
    let key = '';
    if (!isArray) {
      key = stringAt(keyMemo, buf, keyStart, at, slot);
      // (the first key decides the object's mode: it cannot change cheaply later)
      if (!memoHit) {
        const fresh = isFresh(buf, keyStart, at);
        if (fresh) freshKey = true;
        const cold = countMiss(fresh);
        if (n === 0) dict = fresh && cold;
        hits = false;
      }
      // js-bson turns { $ref, $id, ... } into a DBRef, and defines __proto__ specially
      if (key.charCodeAt(0) === 36 && (key === '$ref' || key === '$id' || key === '$db')) return undefined;
      if (key === '__proto__') return undefined;
    }
    at++;
    let value;
    switch (type) {
      case 0x01: // double
        if (at + 8 > end) return undefined;
        value = numberClasses === null ? double(buf, at) : new numberClasses.Double(double(buf, at));
        at += 8;
        break;
      case 0x02: {
        // string: the 0 that ends it, then the document's 0, must be in place
        if (at + 4 > end) return undefined;
        const size = int32(buf, at);
        const start = at + 4;
        if (size <= 0 || size > MAX_STRING || size > end - start || buf[start + size - 1] !== 0) return undefined;
        const stop = start + size - 1;
        for (let i = start; i < stop; i++) if (buf[i] >= 0x80) return undefined;
        value = stringAt(valueMemo, buf, start, stop, slot);
        at = stop + 1;
        break;
      }
      case 0x03:
      case 0x04: {
        // embedded document, array
        if (depth >= MAX_DEPTH || at + 4 > end || (rawDocuments && type === 0x03)) return undefined;
        // (in an array its key is its index, which this reader does not make)
        if (type === 0x04 && rawNames !== null && (isArray || isRawName(key))) return undefined;
        const size = int32(buf, at);
        if (size < 5 || size > end - at) return undefined;
        value = readDocument(buf, at + 4, at + size - 1, depth + 1, type === 0x04);
        if (value === undefined) return undefined;
        at += size;
        break;
      }
      case 0x05: {
        // binary: a view of the input, made as js-bson makes it (builder.js binary)
        if (at + 5 > end) return undefined;
        const size = int32(buf, at);
        const subType = buf[at + 4];
        const start = at + 5;
        if (size < 0 || size > end - start || subType === 2) return undefined;
        value = makeBinary(buf, start, start + size, subType, promoteBuffers);
        at = start + size;
        break;
      }
      case 0x07: // ObjectId: its four 24-bit ints, as the Rust reader gives them (builder.js objectId)
        if (at + 12 > end) return undefined;
        value = makeObjectId(int24(buf, at), int24(buf, at + 3), int24(buf, at + 6), int24(buf, at + 9));
        at += 12;
        break;
      case 0x08: // boolean
        if (at >= end || buf[at] > 1) return undefined;
        value = buf[at++] === 1;
        break;
      case 0x0a:
        value = null;
        break;
      case 0x09: // UTC datetime: js-bson's new Date(new Long(low, high).toNumber())
        if (at + 8 > end) return undefined;
        value = new Date(int32(buf, at + 4) * 4294967296 + (int32(buf, at) >>> 0));
        at += 8;
        break;
      case 0x10: // int32
        if (at + 4 > end) return undefined;
        value = numberClasses === null ? int32(buf, at) : new numberClasses.Int32(int32(buf, at));
        at += 4;
        break;
      default:
        return undefined;
    }
    keys[n] = key;
    values[n++] = value;
  }
}

/** Whether `key` is one of rawNames (each preceded by a NUL). */
function isRawName(key) {
  const needle = '\0' + key;
  for (let i = rawNames.indexOf(needle); i >= 0; i = rawNames.indexOf(needle, i + 1)) {
    const after = i + needle.length;
    if (after === rawNames.length || rawNames.charCodeAt(after) === 0) return true;
  }
  return false;
}

// Compiled layouts. A document of at most LAYOUT_MAX_BYTES whose elements
// are all doubles, int32s, booleans, nulls and empty documents or arrays
// ({ ok: 1 }, { n: 1, ok: 1 }, { values: [] })
// has a fixed layout: its length, type bytes, keys and terminators, with the
// values at fixed offsets. Once a layout has come COMPILE_AFTER times (it or
// one other layout each time, so two alternating layouts count too) with no
// key new lately (isFresh: documents of ever-new keys are not noted), a
// reader is generated for it (compileLayout) that compares those bytes and
// makes the object from the values at their offsets, with inline caches of
// its own: readDocument's, shared by every document the process reads, made
// { ok: 1 } cost 63-71 ns after the bench's other documents, 51 in a process
// of its own (with the readers 35-38 and 24 ns; { n: 1, ok: 1 } 80-89 ns ->
// 33-35). The last two readers made are tried first; each takes exactly the
// documents readDocument took with its layout (a boolean's byte is checked)
// and gives up on any other.
const LAYOUT_MAX_BYTES = 64;
const current = new Uint8Array(LAYOUT_MAX_BYTES); // the document read now, its values zeroed
// the last two layouts seen (a document, its values zeroed), how long, how many times
let layout = new Uint8Array(LAYOUT_MAX_BYTES);
let layoutLength = 0;
let layoutRuns = 0;
let previous = new Uint8Array(LAYOUT_MAX_BYTES);
let previousLength = 0;
let previousRuns = 0;
let freshKey = false; // the document read now has a key not seen lately (isFresh)
let reader0 = null;
let reader1 = null;
const layoutCounts = { compiled: 0, hits: 0 }; // (for the tests)

/** The bytes of a layout's value of BSON type `type` (whose value starts at `at`); -1 for a value that makes no layout. */
function valueWidth(type, buf, at) {
  if (type === 0x01) return 8;
  if (type === 0x10) return 4;
  if (type === 0x08) return 1;
  if (type === 0x0a) return 0;
  return (type === 0x03 || type === 0x04) && int32(buf, at) === 5 ? 0 : -1; // (an empty document's 5 bytes are part of the layout)
}

/**
 * Notes the layout of `buf` (n bytes, a root document readDocument read
 * with no nested document but empty ones): another use of one of the last two layouts,
 * compiled at its COMPILE_AFTER-th; or a new last layout. (Documents with
 * other types are not layouts.)
 */
function noteLayout(buf, n) {
  for (let i = 0; i < 4; i++) current[i] = buf[i];
  let at = 4;
  while (at < n - 1) {
    const type = buf[at];
    current[at] = type;
    at++;
    while (buf[at] !== 0) {
      current[at] = buf[at];
      at++;
    }
    const width = valueWidth(type, buf, at + 1);
    if (width < 0) return;
    for (let i = 0; i <= width; i++) current[at + i] = 0; // (the key's NUL, then the value)
    at += 1 + width;
    if (type === 0x03 || type === 0x04) {
      for (let i = 0; i < 5; i++) current[at + i] = buf[at + i];
      at += 5;
    }
  }
  current[n - 1] = 0;
  if (!sameLayout(layout, layoutLength, n)) {
    // the layout before it, or a new one (which takes the place of the older)
    const older = previous;
    previous = layout;
    layout = older;
    [layoutLength, previousLength] = [previousLength, layoutLength];
    [layoutRuns, previousRuns] = [previousRuns, layoutRuns];
    if (!sameLayout(layout, layoutLength, n)) {
      for (let i = 0; i < n; i++) layout[i] = current[i];
      layoutLength = n;
      layoutRuns = 0;
    }
  }
  if (++layoutRuns === COMPILE_AFTER) {
    const read = compileLayout(buf, n);
    if (read !== null) {
      reader1 = reader0;
      reader0 = read;
      layoutCounts.compiled++;
    }
  }
}

/** Whether `known` (`length` bytes) is the layout in `current` (n bytes). */
function sameLayout(known, length, n) {
  if (length !== n) return false;
  for (let i = 0; i < n; i++) if (known[i] !== current[i]) return false;
  return true;
}

/** The reader generated for the layout of the document in `buf` (noteLayout's), or null without code generation. */
function compileLayout(buf, n) {
  let test = `buf.length !== ${n}`;
  const same = i => (test += ` || buf[${i}] !== ${buf[i]}`);
  for (let i = 0; i < 4; i++) same(i);
  let object = '';
  let at = 4;
  while (at < n - 1) {
    const type = buf[at];
    same(at++);
    const keyStart = at;
    while (buf[at] !== 0) same(at++);
    const key = latin1Slice.call(buf, keyStart, at);
    same(at++);
    let value;
    if (type === 0x01) value = `double(buf, ${at})`;
    else if (type === 0x10) value = `buf[${at}] | buf[${at + 1}] << 8 | buf[${at + 2}] << 16 | buf[${at + 3}] << 24`;
    else if (type === 0x08) {
      test += ` || buf[${at}] > 1`;
      value = `buf[${at}] === 1`;
    } else if (type === 0x03 || type === 0x04) {
      for (let i = 0; i < 5; i++) same(at + i);
      value = type === 0x04 ? '[]' : '{}';
    } else value = 'null';
    // (never __proto__, $ref, $id or $db: readDocument gives up on those keys)
    object += `${JSON.stringify(key)}: ${value}, `;
    at += type === 0x03 || type === 0x04 ? 5 : valueWidth(type, buf, at);
  }
  same(n - 1);
  const make = codegen.compile(['double', 'counts'], `return function layoutReader(buf) {
if (${test}) return undefined;
counts.hits++;
return { ${object}};
};`);
  return make === null ? null : make(double, layoutCounts);
}

/**
 * The document at `at` in `buf` (a Buffer holding exactly that document, or
 * under allowObjectSmallerThanBufferSize at least it), or undefined when
 * this reader does not take it. `flags`: the decode flags (options.js) of
 * the options it honours: promoteValues (else int32s and doubles are made
 * with `numbers`, the copy's { Int32, Double }), promoteBuffers, raw (a
 * document with an embedded one is given up on); the UTF-8 validation
 * settings do not change what it takes (ASCII keys and strings only).
 * `names`: fieldsAsRaw's names, or null. `binary(buf, start, end, subType,
 * promote)` makes a binary value, `objectId(i0, i1, i2, i3)` an ObjectId
 * from its four 24-bit ints. The compiled layouts read a buffer of exactly
 * the document under promoteValues without raw only (the bytes of
 * { ok: 1 } make another object under either option: a Double, an empty
 * document's view). (The driver reads each reply at its offset in the
 * message, with a fieldsAsRaw and a per-key UTF-8 setting: read natively,
 * { n: 1, ok: 1 } so was 0.50x js-bson's speed; under promoteValues: false
 * or raw, { ok: 1 } 0.90-0.94x.)
 */
function readSmall(buf, at, flags, names, binary, objectId, numbers) {
  if (at + 5 > buf.length) return undefined;
  const n = int32(buf, at);
  if ((n > MAX_BYTES && n <= BIG_BYTES) || n < 5 || buf[at + n - 1] !== 0) return undefined;
  if ((flags & F_ALLOW_SMALLER) === 0 ? n !== buf.length : n > buf.length - at) return undefined;
  // (the compiled layouts: a buffer of exactly the document, under promoteValues without raw)
  const plain = at === 0 && n === buf.length && (flags & (F_PROMOTE_VALUES | F_RAW)) === F_PROMOTE_VALUES;
  if (n <= LAYOUT_MAX_BYTES && reader0 !== null && plain) {
    const o = reader0(buf);
    if (o !== undefined) return o;
    const p = reader1 === null ? undefined : reader1(buf);
    if (p !== undefined) return p;
  }
  return readElements(buf, at, n, flags, names, binary, objectId, numbers, plain);
}

/**
 * readSmall for a document no compiled layout took: the header pass if
 * armed, then readDocument. (A function of its own, so that V8 inlines
 * readSmall and a layout's reader into deserialize: with this in readSmall,
 * { ok: 1 } and { n: 1, ok: 1 } read at 6.7-7.5x js-bson's speed in the
 * bench's child, 9.2-9.9x so; the documents readDocument reads pay the
 * call, ~5%.)
 */
function readElements(buf, at, n, flags, names, binary, objectId, numbers, plain) {
  if (checkFirst > 0) {
    checkFirst--;
    if (!mayRead(buf, at, n)) {
      checkFirst = CHECK_CALLS;
      return undefined;
    }
  }
  elements = 0;
  makeBinary = binary;
  makeObjectId = objectId;
  const promoteValues = (flags & F_PROMOTE_VALUES) !== 0;
  promoteBuffers = promoteValues && (flags & F_PROMOTE_BUFFERS) !== 0;
  numberClasses = promoteValues ? null : numbers;
  rawDocuments = (flags & F_RAW) !== 0;
  rawNames = names;
  deepest = 0;
  freshKey = false;
  const document = readDocument(buf, at + 4, at + n - 1, 0, false);
  // (no references to a document's values are kept: makeObject drops those
  // it used, and a document not taken drops the values read before it stopped)
  if (document === undefined) {
    dropValues();
    if (n <= MAX_BYTES) checkFirst = CHECK_CALLS;
  } else if (deepest <= 1 && !freshKey && n <= LAYOUT_MAX_BYTES && plain) noteLayout(buf, n);
  return document;
}

/** Drops the values of a document not taken (at most `elements` per depth reached). */
function dropValues() {
  const n = elements < MAX_ELEMENTS ? elements : MAX_ELEMENTS;
  for (let d = 0; d <= deepest; d++) {
    const values = valuesAt[d];
    for (let k = 0; k < n; k++) values[k] = null;
  }
}

module.exports = { readSmall, layoutCounts, MAX_BYTES, BIG_BYTES, MAX_ELEMENTS, MAX_STRING, LAYOUT_MAX_BYTES };
