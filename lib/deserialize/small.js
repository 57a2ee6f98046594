'use strict';
// A JS reader for the smallest documents: { ok: 1 }, { n: 1, ok: 1 },
// { [userId]: n }, { $set: { [day]: v } }. For these a native call's fixed
// cost (~100 ns) is more than js-bson's whole decode, so they are read here,
// with js-bson's reads and results (deserializer.ts) for a few types: double,
// short ASCII string, embedded document, binary (not subtype 2), boolean,
// null, int32. It takes documents of at most MAX_BYTES, and documents over
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
// recognises documents that obviously need none.
const { Buffer } = require('node:buffer');
const { getInt32LE: int32 } = require('./options');
const { dictionaryObject } = require('./shapes');

const MAX_BYTES = 128;
const BIG_BYTES = 64 * 1024;
const MAX_ELEMENTS = 8;
const MAX_DEPTH = 3;
const MAX_STRING = 128; // bytes of one string (each is checked to be ASCII)

// (set by readSmall for the document it reads)
let makeBinary = null;
let promoteBuffers = false;

const latin1Slice = Buffer.prototype.latin1Slice;
const f64 = new Float64Array(1);
const f64Bytes = new Uint8Array(f64.buffer);

// The last key and the last string value read at each element ordinal: a
// document of the same shape finds its keys (and repeated values) by a byte
// compare instead of making the strings again (latin1Slice: ~40 ns).
const keyMemo = new Array(MAX_ELEMENTS).fill('');
const valueMemo = new Array(MAX_ELEMENTS).fill('');

let elements = 0;

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

/** The document whose elements start at `at` and whose terminating 0 is at `end`, or undefined. */
function readDocument(buf, at, end, depth) {
  let o = null; // (made at the first key: in dictionary mode when that key is fresh in a cold window)
  for (;;) {
    if (at >= end) return at === end && buf[at] === 0 ? (o ?? {}) : undefined;
    const type = buf[at++];
    if (type === 0) return at - 1 === end ? (o ?? {}) : undefined;
    const slot = elements++;
    if (slot >= MAX_ELEMENTS) return undefined;
    const keyStart = at;
    let c;
    while (at < end && (c = buf[at]) !== 0) {
      if (c >= 0x80) return undefined;
      at++;
    }
    if (at >= end) return undefined;
    const key = stringAt(keyMemo, buf, keyStart, at, slot);
    // (the first key decides the object's mode: it cannot change cheaply later)
    if (!memoHit) {
      const fresh = isFresh(buf, keyStart, at);
      const cold = countMiss(fresh);
      if (o === null) o = fresh && cold ? dictionaryObject() : {};
    } else if (o === null) o = {};
    at++;
    // js-bson turns { $ref, $id, ... } into a DBRef, and defines __proto__ specially
    if (key.charCodeAt(0) === 36 && (key === '$ref' || key === '$id' || key === '$db')) return undefined;
    if (key === '__proto__') return undefined;
    let value;
    switch (type) {
      case 0x01: // double
        if (at + 8 > end) return undefined;
        for (let i = 0; i < 8; i++) f64Bytes[i] = buf[at + i];
        value = f64[0];
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
      case 0x03: {
        // embedded document
        if (depth >= MAX_DEPTH || at + 4 > end) return undefined;
        const size = int32(buf, at);
        if (size < 5 || size > end - at) return undefined;
        value = readDocument(buf, at + 4, at + size - 1, depth + 1);
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
      case 0x08: // boolean
        if (at >= end || buf[at] > 1) return undefined;
        value = buf[at++] === 1;
        break;
      case 0x0a:
        value = null;
        break;
      case 0x10: // int32
        if (at + 4 > end) return undefined;
        value = int32(buf, at);
        at += 4;
        break;
      default:
        return undefined;
    }
    o[key] = value;
  }
}

/**
 * The document in `buf` (a Buffer holding exactly one document), read with
 * promoteValues and without raw fields, or undefined when this reader does
 * not take it. `binary(buf, start, end, subType, promote)` makes a binary value.
 */
function readSmall(buf, binary, promote) {
  const n = buf.length;
  if ((n > MAX_BYTES && n <= BIG_BYTES) || n < 5 || int32(buf, 0) !== n || buf[n - 1] !== 0) return undefined;
  elements = 0;
  makeBinary = binary;
  promoteBuffers = promote;
  return readDocument(buf, 4, n - 1, 0);
}

module.exports = { readSmall, MAX_BYTES, BIG_BYTES, MAX_ELEMENTS, MAX_STRING };
