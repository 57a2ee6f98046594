'use strict';
// The bytes of the smallest tapes, laid out in JS: { ok: 1 }, { n: 1, ok: 1 },
// { [userId]: n }, { $set: { [day]: v } }. For these the native call costs
// more (~50 ns with its napi overhead) than laying the bytes out here, so a
// tape of at most MAX_OPS ops with no string or byte args, whose ops are all
// of the few below, is written by this file instead of the Rust writer
// (core/src/encode/values.rs): int32, int64, double, timestamp, date,
// ObjectId, short ASCII string, boolean, null, embedded document / array,
// and their keys (cached ASCII keys, keys on the bytes tape, array indices).
//
// The walk has made every read and every check by then: this file only
// lays out what the tape says, byte for byte as the Rust writer does, and
// returns -1 (before anything is returned to the caller) at the first op it
// does not take; runNative then writes the same tape natively.
const OP = require('./ops');
const { keyName, KEY_CACHE_MAX } = require('./keys');

const { END, DOUBLE, DOC, ARRAY, FALSE, TRUE, NULL, INT32, SKIP, STRING_BYTES, INT64, TIMESTAMP, DATE, OID, OID_INTS } = OP;
const TWO_32 = 2 ** 32;

const MAX_OPS = 16; // (measured: the JS layout is ahead of the native call up to about 16 ops)
// The most bytes one op can take: an element's type byte, a key of at most
// 64 bytes (or a 10-digit index) and its NUL, and a value of at most
// SHORT_STRING_BYTES + 5 bytes (a document's 4-byte size and its END fit too).
const MAX_OP_BYTES = 1 + 65 + OP.SHORT_STRING_BYTES + 5;
const KEY_BYTES = 1 << 30; // (types.js: a key on the bytes tape, its length in bits 8-15)
const REF_MASK = 0x3fffff; // (the key id + 1 of a cached key, bits 8-29)

// for the tests: how many documents this file wrote
const counts = { written: 0 };

// open documents: where each starts, whether it is an array, its next index
const starts = new Int32Array(MAX_OPS + 1);
const arrays = new Uint8Array(MAX_OPS + 1);
const indices = new Int32Array(MAX_OPS + 1);

/**
 * Copies n bytes of the bytes tape in 4-byte words (the tape has 64 bytes
 * past its last element, the output MAX_OP_BYTES per op: the words past n
 * are overwritten by what follows, or lie past the document).
 */
function copy(view, at, from, bi, n) {
  for (let j = 0; j < n; j += 4) view.setInt32(at + j, from.getInt32(bi + j, true), true);
}

/**
 * copy() for a key on the bytes tape: false (what it wrote is scratch) at a
 * word that holds a NUL, which the Rust writer refuses. (One test a word:
 * a test a byte before the copy was ~5% of serializing { [userId]: n }.)
 */
function copyKey(view, at, from, bi, n) {
  for (let j = 0; j < n; j += 4) {
    const v = from.getInt32(bi + j, true);
    const left = n - j; // the key's bytes in this word; the bytes past them count as non-zero
    const w = left >= 4 ? v : v | (-1 << (left * 8));
    if (((w - 0x01010101) & ~w & 0x80808080) !== 0) return false;
    view.setInt32(at + j, v, true);
  }
  return true;
}

/** The decimal digits of array index `v` and the NUL after them, at `at`; returns the next position. */
function putIndex(out, at, v) {
  if (v < 10) {
    out[at] = 48 + v;
    out[at + 1] = 0;
    return at + 2;
  }
  const s = String(v);
  for (let j = 0; j < s.length; j++) out[at + j] = s.charCodeAt(j);
  out[at + s.length] = 0;
  return at + s.length + 1;
}

// Cached keys of at most 7 ASCII characters as the two little-endian int32
// words of their bytes and NUL (filled in on first use): written with two
// stores, as the Rust writer writes key words.
const PACKED_MAX = 7;
const packedWords = new Int32Array(2 * KEY_CACHE_MAX);
const packedLengths = new Int8Array(KEY_CACHE_MAX); // bytes with the NUL; 0 not yet packed, -1 not packable

function pack(id) {
  const key = keyName(id);
  const n = key.length;
  let lo = 0;
  let hi = 0;
  for (let j = 0; j < n; j++) {
    const c = key.charCodeAt(j);
    if (c > 127 || n > PACKED_MAX) return (packedLengths[id] = -1);
    if (j < 4) lo |= c << (8 * j);
    else hi |= c << (8 * (j - 4));
  }
  packedWords[2 * id] = lo;
  packedWords[2 * id + 1] = hi;
  return (packedLengths[id] = n + 1);
}

/** Cached key `ref` (id + 1) and its NUL at `at`; returns the next position, or -1 for a non-ASCII key. */
function putCachedKey(out, view, at, ref) {
  const id = ref - 1;
  let len = packedLengths[id];
  if (len === 0) len = pack(id);
  if (len > 0) {
    // (the 8 bytes fit: an element has room for a 64-byte key)
    view.setInt32(at, packedWords[2 * id], true);
    view.setInt32(at + 4, packedWords[2 * id + 1], true);
    return at + len;
  }
  const key = keyName(id);
  const n = key.length;
  for (let j = 0; j < n; j++) {
    const c = key.charCodeAt(j);
    if (c > 127) return -1;
    out[at + j] = c;
  }
  out[at + n] = 0;
  return at + n + 1;
}

/**
 * Writes the document on tape `t` (at most MAX_OPS ops, no string or byte
 * args) into `out` (and `view`, a DataView of the same bytes) at `start`
 * (with room for 4 + MAX_OP_BYTES per op); returns its length, or -1 if
 * this file does not take the tape. (Number slots are copied as int32
 * halves: their exact bits.)
 */
function writeSmall(t, out, view, start) {
  const opsLen = t.opi; // (at most MAX_OPS, and no args: runNative checks)
  const ops = t.ops;
  const i32 = t.i32;
  const bytes = t.u8;
  let ni = 0;
  let bi = 0;
  let depth = 0;
  starts[0] = start;
  arrays[0] = 0;
  let at = start + 4;
  for (let oi = 0; oi < opsLen; oi++) {
    const word = ops[oi];
    const op = word & 0xff;
    if (op === END) {
      out[at++] = 0;
      view.setInt32(starts[depth], at - starts[depth], true);
      if (depth === 0) {
        if (oi !== opsLen - 1) return -1;
        counts.written++;
        return at - start;
      }
      depth--;
      continue;
    }
    if (op === SKIP) {
      if (arrays[depth] === 0) return -1;
      indices[depth]++;
      continue;
    }
    let type;
    if (op === INT32 || op === DOUBLE || op === DOC || op === ARRAY || op === NULL || op === INT64 || op === TIMESTAMP || op === DATE || op === OID) type = op;
    else if (op === STRING_BYTES) type = 0x02;
    else if (op === OID_INTS) type = OID;
    else if (op === TRUE || op === FALSE) type = 0x08;
    else return -1;
    // the element header: type, key, NUL
    out[at++] = type;
    if (arrays[depth] === 1) {
      at = putIndex(out, at, indices[depth]++);
    } else if ((word & KEY_BYTES) !== 0) {
      const n = (word >>> 8) & 0xff;
      if (!copyKey(view, at, t.bytesView, bi, n)) return -1; // (a NUL: Rust's error)
      out[at + n] = 0;
      at += n + 1;
      bi += n;
    } else {
      const ref = (word >>> 8) & REF_MASK;
      if (ref === 0) return -1;
      at = putCachedKey(out, view, at, ref);
      if (at < 0) return -1;
    }
    // the value
    if (op === INT32) {
      view.setInt32(at, i32[ni * 2], true);
      at += 4;
      ni++;
    } else if (op === DOUBLE || op === INT64 || op === TIMESTAMP) {
      view.setInt32(at, i32[ni * 2], true);
      view.setInt32(at + 4, i32[ni * 2 + 1], true);
      at += 8;
      ni++;
    } else if (op === STRING_BYTES) {
      const n = i32[ni * 2];
      if (n < 0 || n > OP.SHORT_STRING_BYTES) return -1;
      ni++;
      view.setInt32(at, n + 1, true);
      at += 4;
      copy(view, at, t.bytesView, bi, n);
      out[at + n] = 0;
      at += n + 1;
      bi += n;
    } else if (op === DATE) {
      // the slot holds getTime(); Rust's `as i64` (NaN 0, truncation) for the values a double holds exactly
      let ms = t.f64[ni++];
      if (ms !== ms) ms = 0;
      else if (!(Math.abs(ms) <= Number.MAX_SAFE_INTEGER)) return -1;
      ms = Math.trunc(ms);
      const high = Math.floor(ms / TWO_32);
      view.setUint32(at, ms - high * TWO_32, true);
      view.setInt32(at + 4, high, true);
      at += 8;
    } else if (op === OID_INTS) {
      // four 24-bit ints in two slots, each written big-endian (values.rs oid_from_ints)
      for (let j = 0; j < 4; j++) {
        const v = i32[ni * 2 + j];
        out[at + 3 * j] = v >>> 16;
        out[at + 3 * j + 1] = v >>> 8;
        out[at + 3 * j + 2] = v;
      }
      at += 12;
      ni += 2;
    } else if (op === OID) {
      for (let j = 0; j < 12; j++) out[at + j] = bytes[bi + j];
      at += 12;
      bi += 12;
    } else if (op === TRUE || op === FALSE) {
      out[at++] = op === TRUE ? 1 : 0;
    } else if (op === DOC || op === ARRAY) {
      depth++;
      starts[depth] = at;
      arrays[depth] = op === ARRAY ? 1 : 0;
      indices[depth] = 0;
      at += 4;
    }
  }
  return -1; // (no END for the root: the walk always writes one)
}

module.exports = { writeSmall, counts, MAX_OPS, MAX_OP_BYTES };
