'use strict';
// serialize / serializeWithBufferAndIndex / calculateObjectSize /
// setInternalBufferSize, bound to one js-bson copy's classes.
//
// The walk mirrors js-bson's `serializeInto` (parser/serializer.ts) check for
// check and in the same order, so every getter, toBSON() and error happens as
// in js-bson. Instead of bytes it writes the encode tape (ARCHITECTURE.md,
// "Encode tape") and collects the string / byte arguments; one native call
// (`addon.encode`) then lays out the BSON bytes.
const { Buffer } = require('node:buffer');
const { layoutOf } = require('./layout');
const { addon, SLOT, ensureScratch } = require('./native');

// ---- tape op codes (ARCHITECTURE.md) ----
const END = 0x00;
const DOUBLE = 0x01;
const STRING = 0x02;
const DOC = 0x03;
const ARRAY = 0x04;
const BINARY = 0x05;
const OID = 0x07;
const FALSE = 0x08;
const DATE = 0x09;
const NULL = 0x0a;
const REGEX = 0x0b;
const CODE = 0x0d;
const SYMBOL = 0x0e;
const CODE_W_SCOPE = 0x0f;
const INT32 = 0x10;
const TIMESTAMP = 0x11;
const INT64 = 0x12;
const DECIMAL128 = 0x13;
const TRUE = 0x18;
const SKIP = 0x20;
const STRING_BYTES = 0x22;
const OID_INTS = 0x23;
const BINARY_BYTES = 0x24;
// Binary data up to this size is copied into the bytes tape when the walk
// reaches it (as js-bson does); larger data is passed by reference and read
// by Rust after the walk (README: differences).
const COPY_BINARY_MAX = 8192;
const SHORT_STRING_BYTES = 48; // ASCII strings up to this length are written by the walk
const MAXKEY = 0x7f;
const MINKEY = 0xff;

const CHUNK = 8192; // max string/byte args per native call
const MAX_BSON_SIZE = 2147483647;
const MIN_TAPE = 64 * 1024;
const KEEP_OUT = 17 * 1024 * 1024; // output scratch kept after a document up to this size

// ---- key cache (shared by every js-bson copy: one native key table per environment) ----
const KEY_CACHE_MAX = 65536;
const KEY_MAX_LENGTH = 64; // longer keys are sent inline
const K_NUL = 1;
const K_DOLLAR = 2;
const K_DOT = 4;
const K_FLAGS = 7;
const K_REF = ~0xff;
// key → ((id + 1) << 8) | flags; flags are the js-bson key checks that would fail
const keyCache = new Map();
const keyBytes = new Int32Array(KEY_CACHE_MAX); // id → UTF-8 byte length
let nextKeyId = 0;
const ignoreKeys = new Set(['$db', '$ref', '$id', '$clusterTime']);

// Key memo of the walk, by (depth & 15, position & 63) (see walk).
const memoKeys = new Array(1024).fill('');
const memoEntries = new Int32Array(1024);
// Name-length memo of calculateObjectSize, by position.
const memoNames = new Array(1024).fill('');
const memoNameBytes = new Int32Array(1024);

function keyFlags(key) {
  if (key[0] === '$' && ignoreKeys.has(key)) return 0;
  let flags = 0;
  if (key.indexOf('\x00') !== -1) flags |= K_NUL;
  if (key[0] === '$') flags |= K_DOLLAR;
  if (key.includes('.')) flags |= K_DOT;
  return flags;
}

// Adaptive defining: documents with ever-new keys (dynamic keys) would fill
// the cache with keys that never hit, paying a native defineKey call each.
// A window ends after KEY_WINDOW new keys or 2 * KEY_WINDOW documents; when
// its new keys came at more than one per two documents, the next window is
// "cold": only one new key in KEY_COLD_SAMPLE is defined, the others are sent
// inline (and not cached), so keys that do recur still get defined.
const KEY_WINDOW = 4096;
const KEY_COLD_SAMPLE = 16;
let keyWindowDocs = 0; // documents serialized in the window (counted in runNative)
let keyWindowNew = 0;
let keysCold = false;
let keyColdSkip = 0;

/** Cache entry of a key not cached yet (defined in the native key table if there is room). */
function newKey(key) {
  const flags = keyFlags(key);
  if (nextKeyId >= KEY_CACHE_MAX || key.length > KEY_MAX_LENGTH) return flags; // inline key
  if (++keyWindowNew >= KEY_WINDOW || keyWindowDocs >= 2 * KEY_WINDOW) {
    keysCold = keyWindowNew * 2 > keyWindowDocs;
    keyWindowNew = 0;
    keyWindowDocs = 0;
  }
  if (keysCold && ++keyColdSkip < KEY_COLD_SAMPLE) return flags; // inline key
  keyColdSkip = 0;
  const id = nextKeyId++;
  keyBytes[id] = addon.defineKey(id, key);
  const entry = ((id + 1) << 8) | flags;
  keyCache.set(key, entry);
  return entry;
}

// ---- js-bson's type predicates (parser/utils.ts) ----
const typedArrayTag = Object.getOwnPropertyDescriptor(
  Object.getPrototypeOf(Uint8Array.prototype),
  Symbol.toStringTag
).get;
const objectToString = Object.prototype.toString;
function isUint8Array(value) {
  return typedArrayTag.call(value) === 'Uint8Array';
}
function isAnyArrayBuffer(value) {
  return (
    typeof value === 'object' &&
    value != null &&
    Symbol.toStringTag in value &&
    (value[Symbol.toStringTag] === 'ArrayBuffer' ||
      value[Symbol.toStringTag] === 'SharedArrayBuffer')
  );
}
function isRegExp(value) {
  return value instanceof RegExp || objectToString.call(value) === '[object RegExp]';
}
function isMap(value) {
  return (
    typeof value === 'object' &&
    value != null &&
    Symbol.toStringTag in value &&
    value[Symbol.toStringTag] === 'Map'
  );
}
function isDate(value) {
  return value instanceof Date || objectToString.call(value) === '[object Date]';
}

const nullByte = /\x00/; // eslint-disable-line no-control-regex
const REGEXP_FLAGS = ['', 'i', 's', 'is', 'm', 'im', 'sm', 'ism'];

// ---- scratch buffers ----
// Slots 2..5 are managed here: each walk context (one per re-entrancy level)
// owns its tape buffers and registers them before its native call; the output
// buffer is shared (it is only used inside a native call and copied out at once).
const registered = [];
for (const slot of [SLOT.encOps, SLOT.encNums, SLOT.encBytes, SLOT.encOut]) {
  registered[slot] = ensureScratch(slot, 0);
}
function register(slot, buffer) {
  if (registered[slot] !== buffer) {
    addon.setScratch(slot, buffer);
    registered[slot] = buffer;
  }
}

// Output: small documents are written straight into a pool ArrayBuffer and
// returned as Buffer views of it (no copy; a new pool when it is used up,
// like Node's Buffer pool). Larger ones go to the `big` scratch and are
// copied into an exact-size Buffer; `big` is shrunk again after a huge one.
const POOL_SIZE = 120 * 1024; // below glibc's 128 KiB mmap threshold: reused heap memory, no fresh pages
const POOL_DOC_MAX = POOL_SIZE / 4;
let pool = registered[SLOT.encOut];
let poolPos = 0;
let big = null;
let configuredOut = 0; // setInternalBufferSize / minInternalBufferSize
// where the last runNative wrote: buffer, offset
let lastBuf = pool;
let lastOff = 0;

// Buffer.allocUnsafeSlow: an ArrayBuffer of its own that is not zero-filled.
function rawArrayBuffer(size) {
  const b = Buffer.allocUnsafeSlow(size);
  return b.byteOffset === 0 && b.byteLength === b.buffer.byteLength ? b.buffer : new ArrayBuffer(size);
}

function newPool() {
  pool = rawArrayBuffer(POOL_SIZE);
  poolPos = 0;
}

function ensureBig(needed) {
  if (big === null || big.byteLength < needed) {
    let size = big === null ? POOL_SIZE : big.byteLength;
    while (size < needed) size *= 2;
    big = rawArrayBuffer(size);
  }
}

function shrinkBig() {
  if (big !== null && big.byteLength > KEEP_OUT && big.byteLength > configuredOut) {
    big = null;
    register(SLOT.encOut, pool);
  }
}

const MAX_PRESIZE = 64 * 1024 * 1024;
// js-bson's internal buffer starts at 17 MiB and only grows; its size decides
// when setInternalBufferSize / minInternalBufferSize allocate (and may throw).
let internalSize = 17 * 1024 * 1024;
/** js-bson's `if (buffer.length < size) buffer = ByteUtils.allocate(size)`, with its errors. */
function ensureInternalSize(size) {
  if (internalSize < size) {
    if (typeof size !== 'number' || !(size <= require('node:buffer').constants.MAX_LENGTH)) {
      Buffer.alloc(size); // throws js-bson's error before allocating anything
      return;
    }
    internalSize = size;
    // bson-rs needs no such buffer: it only pre-sizes its scratch (bounded)
    const want = Math.min(Math.floor(size), MAX_PRESIZE);
    if (want > configuredOut) configuredOut = want;
    ensureBig(want);
  }
}

class Frame {
  constructor() {
    this.src = null;
    this.target = null;
    this.keys = null;
    this.iter = null;
    this.kind = 0;
    this.idx = 0;
    this.rustArr = false;
    this.ck = false;
    this.iu = false;
  }
}
const PRE_NONE = 0;
const PRE_NOT_INSTANCEOF_DATE = 1; // `_bsontype == null` and `value instanceof Date` were false
const PRE_TAG = 2; // `_bsontype != null`, version checked, tag read
const KIND_OBJ = 0;
const KIND_ARR = 1;
const KIND_MAP = 2;

/** Per re-entrancy level: tape buffers, argument list, frame stack, path. */
class Ctx {
  constructor(level) {
    const ops = level === 0 ? registered[SLOT.encOps] : new ArrayBuffer(MIN_TAPE);
    const nums = level === 0 ? registered[SLOT.encNums] : new ArrayBuffer(MIN_TAPE);
    const bytes = level === 0 ? registered[SLOT.encBytes] : new ArrayBuffer(MIN_TAPE);
    this.setOps(ops);
    this.setNums(nums);
    this.setBytes(bytes);
    this.args = [0, 0, 0];
    this.opsLen = 0;
    this.argc = 3;
    this.bytesLen = 0;
    this.extLen = 0;
    this.maxDepth = 0;
    this.frames = [];
    this.srcs = []; // frame sources by depth (the circular-structure path)
    this.path = new Set();
  }
  // (the byte sizes are kept as plain numbers: cheaper to test after every call than byteLength)
  setOps(buffer) {
    this.opsBuf = buffer;
    this.ops = new Int32Array(buffer);
    this.opsSize = buffer.byteLength;
  }
  setNums(buffer) {
    this.numsBuf = buffer;
    this.numsSize = buffer.byteLength;
    this.f64 = new Float64Array(buffer);
    this.i32 = new Int32Array(buffer);
    this.i64 = new BigInt64Array(buffer);
  }
  setBytes(buffer) {
    this.bytesBuf = buffer;
    this.bytesSize = buffer.byteLength;
    this.u8 = new Uint8Array(buffer);
  }
  growOps() {
    const old = this.ops;
    this.setOps(new ArrayBuffer(old.byteLength * 2));
    this.ops.set(old);
  }
  growNums() {
    const old = this.f64;
    this.setNums(new ArrayBuffer(old.byteLength * 2));
    this.f64.set(old);
  }
  growBytes() {
    const old = this.u8;
    this.setBytes(new ArrayBuffer(old.byteLength * 2));
    this.u8.set(old);
  }
  /** Grows the bytes tape to hold at least `needed` bytes (keeping the first `used`). */
  growBytesTo(needed, used) {
    const old = this.u8;
    let size = old.byteLength * 2;
    while (size < needed) size *= 2;
    this.setBytes(new ArrayBuffer(size));
    if (used > 0) this.u8.set(old.subarray(0, used));
  }
  frame(d) {
    let f = this.frames[d];
    if (f === undefined) {
      f = new Frame();
      this.frames[d] = f;
    }
    return f;
  }
  /** Drops references to user objects after a call. */
  release(maxDepth, argc) {
    const frames = this.frames;
    const srcs = this.srcs;
    const n = maxDepth < frames.length ? maxDepth + 1 : frames.length;
    for (let i = 0; i < n; i++) {
      const f = frames[i];
      srcs[i] = undefined;
      f.src = null;
      f.target = null;
      f.keys = null;
      f.iter = null;
    }
    if (frames.length > 4096) {
      frames.length = 4096;
      srcs.length = 4096;
    }
    if (maxDepth >= SCAN_DEPTH) this.path.clear();
    // Drop references to the strings sent (the array keeps its length, so the
    // next document of the same shape needs no resize).
    const args = this.args;
    if (args.length > 65536) args.length = ARG0;
    else if (argc > ARG0) args.fill(undefined, ARG0, argc);
    // Tapes grown for a huge document go back to the default size.
    if (this.opsSize > 16 * MIN_TAPE) this.setOps(new ArrayBuffer(MIN_TAPE));
    if (this.numsSize > 16 * MIN_TAPE) this.setNums(new ArrayBuffer(MIN_TAPE));
    // (the bytes tape also holds binary data: kept up to js-bson's 17 MiB buffer size)
    if (this.bytesSize > KEEP_OUT) this.setBytes(new ArrayBuffer(MIN_TAPE));
  }
}

const contexts = [];
let level = 0; // re-entrancy depth (serialize called from a toBSON / getter)

const ARG0 = 3; // args[0..2] = first, opsLen, outOffset

/** Runs the native writer over ctx's tape; returns the document length (at lastBuf, lastOff). */
function runNative(ctx, opsLen, argc, BSONError, fresh) {
  keyWindowDocs++;
  register(SLOT.encOps, ctx.opsBuf);
  register(SLOT.encNums, ctx.numsBuf);
  register(SLOT.encBytes, ctx.bytesBuf);
  const args = ctx.args;
  if (args.length !== argc) args.length = argc;
  args[1] = opsLen;
  let target;
  let offset;
  // A rough size from the tape (string and binary args counted by their
  // length, a lower bound of their bytes) picks the buffer, so that a second
  // (sizing) pass is rare.
  const ext = ctx.extLen;
  let estimate = opsLen * 8 + ctx.bytesLen + ext;
  // (past MAX_PRESIZE, or not a number for odd Binary positions: sized by Rust's count instead)
  if (!(estimate <= MAX_PRESIZE)) estimate = opsLen * 8 + ctx.bytesLen;
  if (estimate > POOL_DOC_MAX) {
    if (fresh && ext + ctx.bytesLen >= estimate - (estimate >> 3) && estimate <= MAX_PRESIZE) {
      // Mostly long strings / binaries / tape bytes: the estimate is close to the size, so
      // the document is written into its own buffer and returned without a copy.
      target = rawArrayBuffer(estimate + 256);
    } else {
      ensureBig(estimate);
      target = big;
    }
    offset = 0;
  } else {
    if (POOL_SIZE - poolPos < 2 * estimate + 256) newPool();
    target = pool;
    offset = poolPos;
  }
  for (;;) {
    register(SLOT.encOut, target);
    args[2] = offset;
    let r;
    if (argc <= ARG0 + 2) {
      // direct calls for the common few-argument cases
      if (argc === ARG0) r = addon.encode(1, opsLen, offset);
      else if (argc === ARG0 + 1) r = addon.encode(1, opsLen, offset, args[ARG0]);
      else r = addon.encode(1, opsLen, offset, args[ARG0], args[ARG0 + 1]);
    } else if (argc <= CHUNK + ARG0) {
      args[0] = 1;
      r = addon.encode.apply(undefined, args);
    } else {
      let at = ARG0;
      let first = 1;
      do {
        const end = Math.min(argc, at + CHUNK);
        const chunk = [first, opsLen, offset];
        for (let i = at; i < end; i++) chunk.push(args[i]);
        r = addon.encode.apply(undefined, chunk);
        at = end;
        first = 0;
      } while (r === -1 && at < argc);
    }
    if (typeof r === 'string') throw new BSONError(r);
    if (r >= 0) {
      lastBuf = target;
      lastOff = offset;
      return r;
    }
    if (r === -1) throw new BSONError('bson-rs: encoder needed more arguments than the walk produced');
    const needed = -r - 2;
    if (needed > MAX_BSON_SIZE) {
      throw new BSONError(
        `Document exceeds the maximum BSON document size of ${MAX_BSON_SIZE} bytes`
      );
    }
    if (needed <= POOL_DOC_MAX) {
      newPool();
      target = pool;
    } else if (fresh && needed <= MAX_PRESIZE) {
      target = rawArrayBuffer(needed);
    } else {
      ensureBig(needed);
      target = big;
    }
    offset = 0;
  }
}

module.exports = function createSerializer(bson) {
  const { BSONError, BSONVersionError, Binary } = bson;
  const layout = layoutOf(bson);
  // The ObjectId fast path reads i0..i3 in place of calling serializeInto, which is
  // exact only where the copy stores its bytes that way; elsewhere a sentinel that
  // no value's serializeInto can equal sends every ObjectId through serializeInto.
  const oidSerializeInto = layout.objectIdIsFourInts ? bson.ObjectId.prototype.serializeInto : Object.freeze({});
  const VERSION_SYMBOL = Symbol.for('@@mdb.bson.version');
  const bsonType = bson.bsonType ?? Symbol.for('@@mdb.bson.type');
  const BSON_MAJOR_VERSION = layout.major ?? 7;
  const SUBTYPE_BYTE_ARRAY = Binary?.SUBTYPE_BYTE_ARRAY ?? 2;
  const SUBTYPE_VECTOR = Binary?.SUBTYPE_VECTOR ?? 9;
  const VECTOR_TYPE = Binary?.VECTOR_TYPE ?? { Int8: 0x03, Float32: 0x27, PackedBit: 0x10 };

  function validateBinaryVector(vector) {
    if (vector.sub_type !== SUBTYPE_VECTOR) return;
    const size = vector.position;
    const datatype = vector.buffer[0];
    const padding = vector.buffer[1];
    if ((datatype === VECTOR_TYPE.Float32 || datatype === VECTOR_TYPE.Int8) && padding !== 0) {
      throw new BSONError('Invalid Vector: padding must be zero for int8 and float32 vectors');
    }
    if (datatype === VECTOR_TYPE.Float32) {
      if (size !== 0 && size - 2 !== 0 && (size - 2) % 4 !== 0) {
        throw new BSONError('Invalid Vector: Float32 vector must contain a multiple of 4 bytes');
      }
    }
    if (datatype === VECTOR_TYPE.PackedBit && padding !== 0 && size === 2) {
      throw new BSONError(
        'Invalid Vector: padding must be zero for packed bit vectors that are empty'
      );
    }
    if (datatype === VECTOR_TYPE.PackedBit && padding > 7) {
      throw new BSONError(
        `Invalid Vector: padding must be a value between 0 and 7. found: ${padding}`
      );
    }
  }

  function keyError(entry, key, checkKeys) {
    if (entry & K_NUL) throw new BSONError('key ' + key + ' must not contain null bytes');
    if (checkKeys) {
      if (entry & K_DOLLAR) throw new BSONError('key ' + key + " must not start with '$'");
      if (entry & K_DOT) throw new BSONError('key ' + key + " must not contain '.'");
    }
  }

  function circular() {
    return new BSONError('Cannot convert circular structure to BSON');
  }

  /**
   * Sets up frame `f` for iterating `source` (js-bson's makeFrame): arrays by
   * index, Maps by entries(), anything else by Object.keys of its toBSON().
   */
  function makeFrame(f, source, ck, iu) {
    f.src = source;
    f.ck = ck;
    f.iu = iu;
    f.idx = 0;
    if (Array.isArray(source)) {
      f.kind = KIND_ARR;
      f.target = source;
      f.keys = null;
      f.iter = null;
      return;
    }
    if (source instanceof Map || isMap(source)) {
      f.kind = KIND_MAP;
      f.target = source;
      f.keys = null;
      f.iter = source.entries();
      return;
    }
    let target = source;
    if (typeof target?.toBSON === 'function') {
      target = target.toBSON();
      if (target != null && typeof target !== 'object') {
        throw new BSONError('toBSON function did not return an object');
      }
    }
    f.kind = KIND_OBJ;
    f.target = target;
    f.iter = null;
    f.keys = Object.keys(target);
  }

  /**
   * The walk: js-bson's serializeInto, writing the tape of `ctx`.
   * Returns the number of args used (including the 2 reserved slots) in ctx.argc and ops in ctx.opsLen.
   */
  function walk(ctx, object, checkKeys, serializeFunctions, ignoreUndefined) {
    const path = ctx.path;
    const srcs = ctx.srcs;
    let ops = ctx.ops;
    let opsLimit = ops.length - 2;
    let f64 = ctx.f64;
    let i32 = ctx.i32;
    let i64 = ctx.i64;
    let numsLimit = f64.length - 2;
    let u8 = ctx.u8;
    let bytesLimit = u8.length - 64;
    const args = ctx.args;
    let opi = 0;
    let ni = 0;
    let bi = 0;
    let ai = ARG0;
    let ext = 0; // a lower bound of the string and binary value bytes sent as args (sizes the output)
    let depth = 0;
    let maxDepth = 0;
    let toBSONChecked = false;
    let toBSONAbsent = false;
    let pre = PRE_NONE; // what an array lane already read of the value it hands over
    let preTag;

    let fr = ctx.frame(0);
    srcs[0] = object;
    makeFrame(fr, object, checkKeys, ignoreUndefined);
    fr.rustArr = false;
    // current frame, in locals
    let kind = fr.kind;
    let target = fr.target;
    let keys = fr.keys;
    let iter = fr.iter;
    let idx = 0;
    let isArr = kind === KIND_ARR;
    let rustArr = false;
    let ck = fr.ck;
    let iu = fr.iu;

    try {
      for (;;) {
        if (opi >= opsLimit) {
          ctx.growOps();
          ops = ctx.ops;
          opsLimit = ops.length - 2;
        }
        if (ni >= numsLimit) {
          ctx.growNums();
          f64 = ctx.f64;
          i32 = ctx.i32;
          i64 = ctx.i64;
          numsLimit = f64.length - 2;
        }
        if (bi >= bytesLimit) {
          ctx.growBytes();
          u8 = ctx.u8;
          bytesLimit = u8.length - 64;
        }

        let key;
        let value;
        if (kind === KIND_OBJ) {
          if (idx >= keys.length) {
            ops[opi++] = END;
            if (depth >= SCAN_DEPTH) path.delete(fr.src);
            if (depth === 0) break;
            fr = ctx.frames[--depth];
            kind = fr.kind;
            target = fr.target;
            keys = fr.keys;
            iter = fr.iter;
            idx = fr.idx;
            isArr = kind === KIND_ARR;
            rustArr = fr.rustArr;
            ck = fr.ck;
            iu = fr.iu;
            continue;
          }
          key = keys[idx++];
          value = target[key];
          if (typeof value === 'number' || typeof value === 'string') {
            // Fast lane for runs of number/string values under plain cached
            // keys: the same reads as the generic path, without its dispatch.
            // `keys` is our own array, so its length may be re-read freely.
            let handOver = false;
            for (;;) {
              if (typeof value.toBSON === 'function') {
                toBSONChecked = true;
                handOver = true;
                break;
              }
              const m = ((depth & 15) << 6) | (idx & 63);
              let entry;
              if (memoKeys[m] === key) entry = memoEntries[m];
              else {
                entry = keyCache.get(key);
                if (entry === undefined) entry = newKey(key);
                memoKeys[m] = key;
                memoEntries[m] = entry;
              }
              const kb = entry & K_REF;
              if ((entry & K_FLAGS) !== 0 || kb === 0) {
                // a key to check or to send inline: the generic path (toBSON is known to be absent)
                toBSONAbsent = true;
                handOver = true;
                break;
              }
              if (typeof value === 'number') {
                if ((value | 0) === value && (value !== 0 || 1 / value > 0)) {
                  ops[opi++] = INT32 | kb;
                  i32[ni * 2] = value;
                } else {
                  ops[opi++] = DOUBLE | kb;
                  f64[ni] = value;
                }
                ni++;
              } else {
                const n = value.length;
                let j = 0;
                if (n <= SHORT_STRING_BYTES) {
                  for (; j < n; j++) {
                    const c = value.charCodeAt(j);
                    if (c > 127) break;
                    u8[bi + j] = c;
                  }
                }
                if (n <= SHORT_STRING_BYTES && j === n) {
                  ops[opi++] = STRING_BYTES | kb;
                  i32[ni * 2] = n;
                  ni++;
                  bi += n;
                } else {
                  ops[opi++] = STRING | kb;
                  args[ai++] = value;
                  ext += n;
                }
              }
              if (opi >= opsLimit || ni >= numsLimit || bi >= bytesLimit || idx >= keys.length) break;
              key = keys[idx++];
              value = target[key];
              if (typeof value !== 'number' && typeof value !== 'string') {
                handOver = true;
                break;
              }
            }
            if (!handOver) continue;
          }
        } else if (kind === KIND_ARR) {
          if (idx >= target.length) {
            ops[opi++] = END;
            if (depth >= SCAN_DEPTH) path.delete(fr.src);
            if (depth === 0) break;
            fr = ctx.frames[--depth];
            kind = fr.kind;
            target = fr.target;
            keys = fr.keys;
            iter = fr.iter;
            idx = fr.idx;
            isArr = kind === KIND_ARR;
            rustArr = fr.rustArr;
            ck = fr.ck;
            iu = fr.iu;
            continue;
          }
          let i = idx++;
          value = target[i];
          if (rustArr && (typeof value === 'number' || typeof value === 'string' || (typeof value === 'object' && value !== null))) {
            // Fast lane for runs of numbers, strings, ObjectIds and Dates in an
            // array: the same reads as the generic path (length once per
            // element, each element once, then its toBSON, _bsontype, ... in
            // js-bson's order), without the per-element dispatch. Other objects
            // go to the generic path with what was read so far (`pre`).
            let lane = 0; // 0 room needed, 1 end of array, 2 hand `value` to the generic path
            for (;;) {
              if (typeof value.toBSON === 'function') {
                toBSONChecked = true;
                lane = 2;
                break;
              }
              if (typeof value === 'number') {
                if ((value | 0) === value && (value !== 0 || 1 / value > 0)) {
                  ops[opi++] = INT32;
                  i32[ni * 2] = value;
                } else {
                  ops[opi++] = DOUBLE;
                  f64[ni] = value;
                }
                ni++;
              } else if (typeof value === 'object') {
                if (value._bsontype == null) {
                  if (value instanceof Date) {
                    ops[opi++] = DATE;
                    f64[ni++] = value.getTime();
                  } else {
                    pre = PRE_NOT_INSTANCEOF_DATE;
                    lane = 2;
                    break;
                  }
                } else {
                  if (value[VERSION_SYMBOL] !== BSON_MAJOR_VERSION) {
                    throw new BSONVersionError();
                  }
                  const tag = value[bsonType];
                  if (tag !== 'ObjectId') {
                    if (tag === 'Long' || tag === 'Timestamp') {
                      // the generic path's reads, in order: the tag again, then the two halves
                      ops[opi++] = value[bsonType] === 'Long' ? INT64 : TIMESTAMP;
                      i32[ni * 2] = value.getLowBits();
                      i32[ni * 2 + 1] = value.getHighBits();
                      ni++;
                    } else {
                      pre = PRE_TAG;
                      preTag = tag;
                      lane = 2;
                      break;
                    }
                  } else {
                    const serializeInto = value.serializeInto; // read once, as js-bson's call does
                    if (serializeInto === oidSerializeInto) {
                      ops[opi++] = OID_INTS;
                      const k = ni * 2;
                      // js-bson's serializeInto reads each field three times (one per byte)
                      i32[k] = oidInt(value.i0, value.i0, value.i0);
                      i32[k + 1] = oidInt(value.i1, value.i1, value.i1);
                      i32[k + 2] = oidInt(value.i2, value.i2, value.i2);
                      i32[k + 3] = oidInt(value.i3, value.i3, value.i3);
                      ni += 2;
                    } else {
                      ops[opi++] = OID;
                      serializeInto.call(value, u8, bi);
                      bi += 12;
                    }
                  }
                }
              } else {
                const n = value.length;
                let j = 0;
                if (n <= SHORT_STRING_BYTES) {
                  for (; j < n; j++) {
                    const c = value.charCodeAt(j);
                    if (c > 127) break;
                    u8[bi + j] = c;
                  }
                }
                if (n <= SHORT_STRING_BYTES && j === n) {
                  ops[opi++] = STRING_BYTES;
                  i32[ni * 2] = n;
                  ni++;
                  bi += n;
                } else {
                  ops[opi++] = STRING;
                  args[ai++] = value;
                  ext += n;
                }
              }
              if (opi >= opsLimit || ni >= numsLimit || bi >= bytesLimit) break;
              if (idx >= target.length) {
                lane = 1;
                break;
              }
              i = idx++;
              value = target[i];
              if (typeof value !== 'number' && typeof value !== 'string' && (typeof value !== 'object' || value === null)) {
                lane = 2;
                break;
              }
            }
            if (lane === 0) continue;
            if (lane === 1) {
              ops[opi++] = END;
              if (depth >= SCAN_DEPTH) path.delete(fr.src);
              if (depth === 0) break;
              fr = ctx.frames[--depth];
              kind = fr.kind;
              target = fr.target;
              keys = fr.keys;
              iter = fr.iter;
              idx = fr.idx;
              isArr = kind === KIND_ARR;
              rustArr = fr.rustArr;
              ck = fr.ck;
              iu = fr.iu;
              continue;
            }
            // lane 2: room for this element was checked after the last write
          }
          key = rustArr ? i : String(i);
        } else {
          const next = iter.next();
          if (next.done) {
            ops[opi++] = END;
            if (depth >= SCAN_DEPTH) path.delete(fr.src);
            if (depth === 0) break;
            fr = ctx.frames[--depth];
            kind = fr.kind;
            target = fr.target;
            keys = fr.keys;
            iter = fr.iter;
            idx = fr.idx;
            isArr = kind === KIND_ARR;
            rustArr = fr.rustArr;
            ck = fr.ck;
            iu = fr.iu;
            continue;
          }
          key = next.value[0];
          value = next.value[1];
        }

        if (toBSONChecked) {
          // a fast lane already read toBSON (a function) for this value
          toBSONChecked = false;
          value = value.toBSON();
        } else if (toBSONAbsent || pre !== PRE_NONE) {
          // a fast lane already read toBSON (not a function) for this value
          toBSONAbsent = false;
        } else if (value != null && typeof value.toBSON === 'function') {
          value = value.toBSON();
        }

        // Key: kw > 0 cached key bits, 0 inline (key pushed as an arg),
        // -1 array index written by Rust, -2 a non-string Map key.
        let kw;
        if (isArr) {
          kw = rustArr ? -1 : 0;
        } else if (typeof key === 'string') {
          // memo by (depth, position): documents of one shape hit it with a
          // pointer compare of the interned key instead of a Map lookup
          const m = ((depth & 15) << 6) | (idx & 63);
          let entry;
          if (memoKeys[m] === key) entry = memoEntries[m];
          else {
            entry = keyCache.get(key);
            if (entry === undefined) entry = newKey(key);
            memoKeys[m] = key;
            memoEntries[m] = entry;
          }
          if ((entry & K_FLAGS) !== 0) keyError(entry, key, ck);
          kw = entry & K_REF;
        } else {
          // js-bson writes a key object such as a String of ≤ 25 ASCII units
          // (its latin fast path) and throws for any other non-string key.
          const latin = basicLatinKey(key);
          if (latin === null) kw = -2;
          else {
            key = latin;
            kw = 0;
          }
        }

        const type = typeof value;
        let op;
        if (value === undefined) {
          if (isArr || iu === false) op = NULL;
          else continue;
        } else if (value === null) {
          op = NULL;
        } else if (type === 'string') {
          // Short ASCII strings go to the bytes tape (as js-bson's tryWriteBasicLatin);
          // others are string args that Rust writes as UTF-8.
          const n = value.length;
          if (n <= SHORT_STRING_BYTES) {
            let j = 0;
            for (; j < n; j++) {
              const c = value.charCodeAt(j);
              if (c > 127) break;
              u8[bi + j] = c;
            }
            if (j === n) {
              if (kw > 0) ops[opi++] = STRING_BYTES | kw;
              else {
                ops[opi++] = STRING_BYTES;
                if (kw !== -1) args[ai++] = inlineKey(kw, key);
              }
              i32[ni * 2] = n;
              ni++;
              bi += n;
              continue;
            }
          }
          if (kw > 0) ops[opi++] = STRING | kw;
          else {
            ops[opi++] = STRING;
            if (kw !== -1) args[ai++] = inlineKey(kw, key);
          }
          args[ai++] = value;
          ext += n;
          continue;
        } else if (type === 'number') {
          if ((value | 0) === value && (value !== 0 || 1 / value > 0)) {
            op = INT32;
            i32[ni * 2] = value;
          } else {
            op = DOUBLE;
            f64[ni] = value;
          }
          ni++;
        } else if (type === 'bigint') {
          op = INT64;
          i64[ni++] = value;
        } else if (type === 'boolean') {
          op = value ? TRUE : FALSE;
        } else if (
          type === 'object' &&
          (pre === PRE_NOT_INSTANCEOF_DATE || (pre === PRE_NONE && value._bsontype == null))
        ) {
          // (the lane evaluated `_bsontype == null` and the first `instanceof Date`)
          const skipInstanceof = pre === PRE_NOT_INSTANCEOF_DATE;
          pre = PRE_NONE;
          if ((!skipInstanceof && value instanceof Date) || isDate(value)) {
            if (kw > 0) ops[opi++] = DATE | kw;
            else {
              ops[opi++] = DATE;
              if (kw !== -1) args[ai++] = inlineKey(kw, key);
            }
            f64[ni++] = value.getTime();
            continue;
          } else if (value instanceof Uint8Array || isUint8Array(value)) {
            if (kw > 0) ops[opi++] = BINARY | kw;
            else {
              ops[opi++] = BINARY;
              if (kw !== -1) args[ai++] = inlineKey(kw, key);
            }
            const size = value.length;
            i32[ni * 2] = size;
            i32[ni * 2 + 1] = 0;
            ni++;
            if (size <= COPY_BINARY_MAX && ArrayBuffer.isView(value) && size <= value.byteLength) {
              // copied now (js-bson copies at this point: a later getter's change is not seen)
              ops[opi - 1] = (ops[opi - 1] & ~0xff) | BINARY_BYTES;
              if (bi + size > bytesLimit) {
                ctx.growBytesTo(bi + size + 64, bi);
                u8 = ctx.u8;
                bytesLimit = u8.length - 64;
              }
              copyBytes(u8, bi, value, size);
              bi += size;
            } else {
              args[ai++] = ArrayBuffer.isView(value) ? value : toBytes(value, size);
              ext += size;
            }
            continue;
          } else if (value instanceof RegExp || isRegExp(value)) {
            if (kw > 0) ops[opi++] = REGEX | kw;
            else {
              ops[opi++] = REGEX;
              if (kw !== -1) args[ai++] = inlineKey(kw, key);
            }
            if (value.source && value.source.match(nullByte) != null) {
              throw new BSONError('value ' + value.source + ' must not contain null bytes');
            }
            args[ai++] = value.source;
            args[ai++] =
              REGEXP_FLAGS[(value.ignoreCase ? 1 : 0) | (value.global ? 2 : 0) | (value.multiline ? 4 : 0)];
            continue;
          } else {
            if (onPath(srcs, depth, path, value)) throw circular();
            const nestedIsArray = Array.isArray(value);
            const nop = nestedIsArray ? ARRAY : DOC;
            if (kw > 0) ops[opi++] = nop | kw;
            else {
              ops[opi++] = nop;
              if (kw !== -1) args[ai++] = inlineKey(kw, key);
            }
            if (depth + 1 >= SCAN_DEPTH) path.add(value);
            fr.idx = idx;
            fr = ctx.frame(++depth);
            if (depth > maxDepth) maxDepth = depth;
            srcs[depth] = value;
            makeFrame(fr, value, ck, iu);
            fr.rustArr = nestedIsArray;
            kind = fr.kind;
            target = fr.target;
            keys = fr.keys;
            iter = fr.iter;
            idx = 0;
            isArr = kind === KIND_ARR;
            rustArr = fr.rustArr;
            continue;
          }
        } else if (type === 'object') {
          let tag;
          if (pre === PRE_TAG) {
            // the lane checked the version and read the tag
            pre = PRE_NONE;
            tag = preTag;
            preTag = undefined;
          } else {
            if (value[VERSION_SYMBOL] !== BSON_MAJOR_VERSION) {
              throw new BSONVersionError();
            }
            tag = value[bsonType];
          }
          if (tag === 'ObjectId') {
            const serializeInto = value.serializeInto; // read once, as js-bson's call does
            if (serializeInto === oidSerializeInto) {
              // js-bson's own ObjectId#serializeInto writes i0..i3 as 3 bytes each: send the ints
              if (kw > 0) ops[opi++] = OID_INTS | kw;
              else {
                ops[opi++] = OID_INTS;
                if (kw !== -1) args[ai++] = inlineKey(kw, key);
              }
              const k = ni * 2;
              // js-bson's serializeInto reads each field three times (one per byte)
              i32[k] = oidInt(value.i0, value.i0, value.i0);
              i32[k + 1] = oidInt(value.i1, value.i1, value.i1);
              i32[k + 2] = oidInt(value.i2, value.i2, value.i2);
              i32[k + 3] = oidInt(value.i3, value.i3, value.i3);
              ni += 2;
              continue;
            }
            if (kw > 0) ops[opi++] = OID | kw;
            else {
              ops[opi++] = OID;
              if (kw !== -1) args[ai++] = inlineKey(kw, key);
            }
            serializeInto.call(value, u8, bi);
            bi += 12;
            continue;
          } else if (tag === 'Decimal128') {
            if (kw > 0) ops[opi++] = DECIMAL128 | kw;
            else {
              ops[opi++] = DECIMAL128;
              if (kw !== -1) args[ai++] = inlineKey(kw, key);
            }
            for (let i = 0; i < 16; i++) u8[bi + i] = value.bytes[i]; // as js-bson: bytes read per byte
            bi += 16;
            continue;
          } else if (tag === 'Long' || tag === 'Timestamp') {
            const lop = value[bsonType] === 'Long' ? INT64 : TIMESTAMP; // js-bson reads the tag again
            if (kw > 0) ops[opi++] = lop | kw;
            else {
              ops[opi++] = lop;
              if (kw !== -1) args[ai++] = inlineKey(kw, key);
            }
            i32[ni * 2] = value.getLowBits();
            i32[ni * 2 + 1] = value.getHighBits();
            ni++;
            continue;
          } else if (tag === 'Double') {
            if (kw > 0) ops[opi++] = DOUBLE | kw;
            else {
              ops[opi++] = DOUBLE;
              if (kw !== -1) args[ai++] = inlineKey(kw, key);
            }
            f64[ni++] = value.value;
            continue;
          } else if (tag === 'Code') {
            if (value.scope && typeof value.scope === 'object') {
              if (kw > 0) ops[opi++] = CODE_W_SCOPE | kw;
              else {
                ops[opi++] = CODE_W_SCOPE;
                if (kw !== -1) args[ai++] = inlineKey(kw, key);
              }
              args[ai++] = str(value.code);
              const scope = value.scope;
              if (onPath(srcs, depth, path, scope)) throw circular();
              if (depth + 1 >= SCAN_DEPTH) path.add(scope);
              fr.idx = idx;
              fr = ctx.frame(++depth);
              if (depth > maxDepth) maxDepth = depth;
              srcs[depth] = scope;
              makeFrame(fr, scope, ck, iu);
              fr.rustArr = false; // the scope is a document: array scopes get explicit keys
              kind = fr.kind;
              target = fr.target;
              keys = fr.keys;
              iter = fr.iter;
              idx = 0;
              isArr = kind === KIND_ARR;
              rustArr = false;
              continue;
            }
            if (kw > 0) ops[opi++] = CODE | kw;
            else {
              ops[opi++] = CODE;
              if (kw !== -1) args[ai++] = inlineKey(kw, key);
            }
            args[ai++] = str(value.code.toString());
            continue;
          } else if (tag === 'Binary') {
            const opOfBinary = opi;
            if (kw > 0) ops[opi++] = BINARY | kw;
            else {
              ops[opi++] = BINARY;
              if (kw !== -1) args[ai++] = inlineKey(kw, key);
            }
            // js-bson's reads, in order: buffer, position, sub_type four times
            const data = value.buffer;
            const size = value.position;
            value.sub_type; // eslint-disable-line no-unused-expressions
            const subByte = value.sub_type;
            const byteArray = value.sub_type === SUBTYPE_BYTE_ARRAY;
            if (value.sub_type === SUBTYPE_VECTOR) validateBinaryVector(value);
            value.position; // eslint-disable-line no-unused-expressions -- js-bson advances by it
            i32[ni * 2] = size;
            i32[ni * 2 + 1] = byteArray ? 2 : (subByte & 0xff) | 0x100;
            ni++;
            if (
              data instanceof Uint8Array &&
              ArrayBuffer.isView(data) &&
              typeof size === 'number' &&
              size >= 0 &&
              size <= COPY_BINARY_MAX &&
              (size | 0) === size &&
              size <= data.byteLength
            ) {
              // copied now, as js-bson does (a later getter's change is not seen)
              ops[opOfBinary] = (ops[opOfBinary] & ~0xff) | BINARY_BYTES;
              if (bi + size > bytesLimit) {
                ctx.growBytesTo(bi + size + 64, bi);
                u8 = ctx.u8;
                bytesLimit = u8.length - 64;
              }
              copyBytes(u8, bi, data, size);
              bi += size;
            } else {
              // large data: by reference; position past the data (zeros follow) or unusual data: a copy
              args[ai++] =
                data instanceof Uint8Array
                  ? size > COPY_BINARY_MAX && size <= data.byteLength ? data : new Uint8Array(data)
                  : toBytes(data, data?.length);
              if (typeof size === 'number' && size > 0) ext += Math.floor(size);
            }
            continue;
          } else if (tag === 'BSONSymbol') {
            if (kw > 0) ops[opi++] = SYMBOL | kw;
            else {
              ops[opi++] = SYMBOL;
              if (kw !== -1) args[ai++] = inlineKey(kw, key);
            }
            args[ai++] = str(value.value);
            continue;
          } else if (tag === 'DBRef') {
            const orderedValues = Object.assign(
              { $ref: value.collection, $id: value.oid },
              value.db != null ? { $db: value.db } : null,
              value.fields
            );
            if (kw > 0) ops[opi++] = DOC | kw;
            else {
              ops[opi++] = DOC;
              if (kw !== -1) args[ai++] = inlineKey(kw, key);
            }
            if (depth + 1 >= SCAN_DEPTH) path.add(orderedValues);
            fr.idx = idx;
            fr = ctx.frame(++depth);
            if (depth > maxDepth) maxDepth = depth;
            srcs[depth] = orderedValues;
            makeFrame(fr, orderedValues, false, true);
            fr.rustArr = false;
            kind = fr.kind;
            target = fr.target;
            keys = fr.keys;
            iter = fr.iter;
            idx = 0;
            isArr = kind === KIND_ARR;
            rustArr = false;
            ck = false;
            iu = true;
            continue;
          } else if (tag === 'BSONRegExp') {
            if (kw > 0) ops[opi++] = REGEX | kw;
            else {
              ops[opi++] = REGEX;
              if (kw !== -1) args[ai++] = inlineKey(kw, key);
            }
            if (value.pattern.match(nullByte) != null) {
              throw new BSONError('pattern ' + value.pattern + ' must not contain null bytes');
            }
            args[ai++] = str(value.pattern);
            args[ai++] = str(value.options.split('').sort().join(''));
            continue;
          } else if (tag === 'Int32') {
            const v = value.valueOf();
            if (kw > 0) ops[opi++] = INT32 | kw;
            else {
              ops[opi++] = INT32;
              if (kw !== -1) args[ai++] = inlineKey(kw, key);
            }
            i32[ni * 2] = v;
            ni++;
            continue;
          } else if (tag === 'MinKey' || tag === 'MaxKey') {
            op = value[bsonType] === 'MinKey' ? MINKEY : MAXKEY; // js-bson reads the tag again
          } else if (typeof value._bsontype !== 'undefined') {
            throw new BSONError(`Unrecognized or invalid _bsontype: ${String(value._bsontype)}`);
          } else {
            if (rustArr) ops[opi++] = SKIP;
            continue;
          }
        } else if (type === 'function' && serializeFunctions) {
          if (kw > 0) ops[opi++] = CODE | kw;
          else {
              ops[opi++] = CODE;
              if (kw !== -1) args[ai++] = inlineKey(kw, key);
            }
          args[ai++] = str(value.toString());
          continue;
        } else {
          // symbols, functions without serializeFunctions: skipped
          if (rustArr) ops[opi++] = SKIP;
          continue;
        }

        // simple element: op (+ key)
        if (kw > 0) ops[opi++] = op | kw;
        else {
          ops[opi++] = op;
          if (kw !== -1) args[ai++] = inlineKey(kw, key);
        }
      }
    } finally {
      ctx.maxDepth = maxDepth;
      ctx.argc = ai;
    }
    ctx.opsLen = opi;
    ctx.bytesLen = bi;
    ctx.extLen = ext;

  }

  /** The whole serialize: walk, native write; returns the length in outBytes. */
  function serializeToOut(object, checkKeys, serializeFunctions, ignoreUndefined, fresh) {
    const lvl = level;
    let ctx = contexts[lvl];
    if (ctx === undefined) {
      ctx = new Ctx(lvl);
      contexts[lvl] = ctx;
    }
    level = lvl + 1;
    ctx.maxDepth = 0;
    ctx.argc = ARG0;
    try {
      walk(ctx, object, checkKeys, serializeFunctions, ignoreUndefined);
      return runNative(ctx, ctx.opsLen, ctx.argc, BSONError, fresh);
    } finally {
      level = lvl;
      ctx.release(ctx.maxDepth, ctx.argc);
    }
  }

  function checkRoot(object) {
    if (Array.isArray(object)) {
      throw new BSONError('serialize does not support an array as the root input');
    }
    if (typeof object !== 'object') {
      throw new BSONError('serialize does not support non-object as the root input');
    } else if ('_bsontype' in object && typeof object._bsontype === 'string') {
      throw new BSONError(`BSON types cannot be serialized as a document`);
    } else if (isDate(object) || isRegExp(object) || isUint8Array(object) || isAnyArrayBuffer(object)) {
      throw new BSONError(`date, regexp, typedarray, and arraybuffer cannot be BSON documents`);
    }
  }

  function serialize(object, options = {}) {
    const checkKeys = typeof options.checkKeys === 'boolean' ? options.checkKeys : false;
    const serializeFunctions =
      typeof options.serializeFunctions === 'boolean' ? options.serializeFunctions : false;
    const ignoreUndefined =
      typeof options.ignoreUndefined === 'boolean' ? options.ignoreUndefined : true;
    if (typeof options.minInternalBufferSize === 'number') {
      ensureInternalSize(options.minInternalBufferSize);
    }

    if (object == null) return emptyDocument();
    checkRoot(object);
    const n = serializeToOut(object, checkKeys, serializeFunctions, ignoreUndefined, true);
    if (lastBuf === pool) {
      // a view of the pool; the next document starts at the next 8-byte boundary
      const result = Buffer.from(pool, lastOff, n);
      poolPos = (lastOff + n + 7) & ~7;
      return result;
    }
    if (lastBuf !== big) {
      // a buffer of its own (sized by the estimate): returned as a view if it is nearly full
      const cap = lastBuf.byteLength;
      if (n >= cap - (cap >> 3)) return Buffer.from(lastBuf, 0, n);
    }
    const result = Buffer.allocUnsafe(n);
    result.set(new Uint8Array(lastBuf, 0, n));
    shrinkBig();
    return result;
  }

  function serializeWithBufferAndIndex(object, finalBuffer, options = {}) {
    const checkKeys = typeof options.checkKeys === 'boolean' ? options.checkKeys : false;
    const serializeFunctions =
      typeof options.serializeFunctions === 'boolean' ? options.serializeFunctions : false;
    const ignoreUndefined =
      typeof options.ignoreUndefined === 'boolean' ? options.ignoreUndefined : true;
    const startIndex = typeof options.index === 'number' ? options.index : 0;

    let n;
    let bytes;
    if (object == null) {
      n = 5;
      bytes = EMPTY_DOCUMENT;
    } else {
      checkRoot(object);
      n = serializeToOut(object, checkKeys, serializeFunctions, ignoreUndefined);
      bytes = new Uint8Array(lastBuf, lastOff, n); // the pool position is not advanced
    }
    try {
      finalBuffer.set(bytes, startIndex);
    } finally {
      shrinkBig();
    }
    return startIndex + n - 1;
  }

  // ---- calculateObjectSize (parser/calculate_size.ts) ----

  function calculateObjectSize(object, options = {}) {
    options = options || {};
    const serializeFunctions =
      typeof options.serializeFunctions === 'boolean' ? options.serializeFunctions : false;
    const ignoreUndefined =
      typeof options.ignoreUndefined === 'boolean' ? options.ignoreUndefined : true;
    return internalCalculateObjectSize(object, serializeFunctions, ignoreUndefined);
  }

  // js-bson's object stack of { object, ignoreUndefined, exit } frames is kept
  // as pairs in one array: [object, flags] with flags 1 = ignoreUndefined,
  // 2 = exit. Its `path` Set (objects entered and not yet exited) is a stack:
  // `entered`, scanned linearly while short, mirrored in a Set when deep.
  function internalCalculateObjectSize(object, serializeFunctions, ignoreUndefined) {
    const stack = [object, (ignoreUndefined ?? false) ? 1 : 0];
    const st = { entered: [], path: null, memo: -1, toBSONChecked: false };
    let total = 0;

    while (stack.length > 0) {
      const flags = stack.pop();
      const obj = stack.pop();
      if (flags & 2) {
        st.entered.pop();
        if (st.path !== null) st.path.delete(obj);
        continue;
      }
      const frameIgnoreUndefined = (flags & 1) === 1;
      st.entered.push(obj);
      if (st.path !== null) st.path.add(obj);
      else if (st.entered.length > SCAN_DEPTH) st.path = new Set(st.entered);
      stack.push(obj, flags | 2);

      total += 5;

      const isObjArray = Array.isArray(obj);
      const isObjMap = !isObjArray && (obj instanceof Map || isMap(obj));
      let target = obj;
      if (!isObjArray && !isObjMap && typeof obj?.toBSON === 'function') {
        target = obj.toBSON();
      }

      if (isObjArray) {
        const array = target;
        for (let i = 0; i < array.length; i++) {
          const value = array[i];
          const t = typeof value;
          // numbers and strings inline (same reads and result as elementSize)
          if (t === 'number' || t === 'string') {
            if (typeof value.toBSON !== 'function') {
              total +=
                t === 'number'
                  ? nameLength(st, i, true) + ((value | 0) === value && (value !== 0 || 1 / value > 0) ? 6 : 10)
                  : 1 + nameLength(st, i, true) + 1 + 4 + Buffer.byteLength(value, 'utf8') + 1;
              continue;
            }
            st.toBSONChecked = true;
          }
          total += elementSize(st, i, value, serializeFunctions, true, frameIgnoreUndefined, stack);
        }
      } else if (isObjMap) {
        st.memo = -1;
        for (const [key, value] of target) {
          total += elementSize(st, key, value, serializeFunctions, false, frameIgnoreUndefined, stack);
        }
      } else {
        const keys = Object.keys(target);
        const base = (stack.length << 4) & 1023;
        for (let i = 0; i < keys.length; i++) {
          const key = keys[i];
          st.memo = (base + i) & 1023;
          const value = target[key];
          const t = typeof value;
          if (t === 'number' || t === 'string') {
            if (typeof value.toBSON !== 'function') {
              total +=
                t === 'number'
                  ? nameLength(st, key, false) + ((value | 0) === value && (value !== 0 || 1 / value > 0) ? 6 : 10)
                  : 1 + nameLength(st, key, false) + 1 + 4 + Buffer.byteLength(value, 'utf8') + 1;
              continue;
            }
            st.toBSONChecked = true;
          }
          total += elementSize(st, key, value, serializeFunctions, false, frameIgnoreUndefined, stack);
        }
      }
    }
    return total;
  }

  function onCalcPath(st, value) {
    if (st.path !== null) return st.path.has(value);
    const entered = st.entered;
    for (let i = 0; i < entered.length; i++) if (entered[i] === value) return true;
    return false;
  }

  /** ByteUtils.utf8ByteLength: Buffer.byteLength (a V8 fast call; beats a JS loop and a native batch). */
  function byteLength(s) {
    return Buffer.byteLength(s, 'utf8');
  }

  /** UTF-8 length of an element name: an array index (i.toString()) or a key. */
  function nameLength(st, name, isArray) {
    if (isArray) {
      return name < 10 ? 1 : name < 100 ? 2 : name < 1000 ? 3 : name < 10000 ? 4 : String(name).length;
    }
    const m = st.memo;
    if (m < 0 || typeof name !== 'string') return Buffer.byteLength(name, 'utf8');
    if (memoNames[m] === name) return memoNameBytes[m];
    const n = Buffer.byteLength(name, 'utf8');
    memoNames[m] = name;
    memoNameBytes[m] = n;
    return n;
  }

  function elementSize(st, name, value, serializeFunctions, isArray, ignoreUndefined, objectStack) {
    if (st.toBSONChecked) {
      // the caller already read toBSON (a function) for this value
      st.toBSONChecked = false;
      value = value.toBSON();
    } else if (typeof value?.toBSON === 'function') {
      value = value.toBSON();
    }

    switch (typeof value) {
      case 'string':
        return 1 + nameLength(st, name, isArray) + 1 + 4 + byteLength(value) + 1;
      case 'number':
        if (
          Math.floor(value) === value &&
          value >= -9007199254740992 &&
          value <= 9007199254740992
        ) {
          if (!Object.is(value, -0) && value >= -2147483648 && value <= 2147483647) {
            return nameLength(st, name, isArray) + 1 + (4 + 1);
          } else {
            return nameLength(st, name, isArray) + 1 + (8 + 1);
          }
        } else {
          return nameLength(st, name, isArray) + 1 + (8 + 1);
        }
      case 'undefined':
        if (isArray || !ignoreUndefined) return nameLength(st, name, isArray) + 1 + 1;
        return 0;
      case 'boolean':
        return nameLength(st, name, isArray) + 1 + (1 + 1);
      case 'object': {
        if (value === null) return nameLength(st, name, isArray) + 1 + 1;
        // Fast path (a documented difference): `_bsontype` is read once and the
        // value dispatched on it, instead of js-bson's chain that reads it up to
        // 14 times and probes Date / ArrayBuffer before the BSON tags. Sizes and
        // errors are the same for every real value.
        const tag = value._bsontype;
        if (typeof tag === 'string') {
          if (value[VERSION_SYMBOL] !== BSON_MAJOR_VERSION) throw new BSONVersionError();
          switch (tag) {
            case 'ObjectId':
              return nameLength(st, name, isArray) + 1 + (12 + 1);
            case 'Long':
            case 'Double':
            case 'Timestamp':
              return nameLength(st, name, isArray) + 1 + (8 + 1);
            case 'Decimal128':
              return nameLength(st, name, isArray) + 1 + (16 + 1);
            case 'Int32':
              return nameLength(st, name, isArray) + 1 + (4 + 1);
            case 'MinKey':
            case 'MaxKey':
              return nameLength(st, name, isArray) + 1 + 1;
            case 'Binary':
              if (value.sub_type === SUBTYPE_BYTE_ARRAY) {
                return nameLength(st, name, isArray) + 1 + (value.position + 1 + 4 + 1 + 4);
              }
              return nameLength(st, name, isArray) + 1 + (value.position + 1 + 4 + 1);
            case 'Code':
              if (value.scope != null && typeof value.scope === 'object') {
                if (onCalcPath(st, value.scope)) {
                  throw new BSONError('Cannot convert circular structure to BSON');
                }
                objectStack.push(value.scope, ignoreUndefined ? 1 : 0);
                return nameLength(st, name, isArray) + 1 + 1 + 4 + 4 + byteLength(value.code.toString()) + 1;
              }
              return nameLength(st, name, isArray) + 1 + 1 + 4 + byteLength(value.code.toString()) + 1;
            case 'BSONSymbol':
              return nameLength(st, name, isArray) + 1 + byteLength(value.value) + 4 + 1 + 1;
            case 'DBRef': {
              const orderedValues = Object.assign({ $ref: value.collection, $id: value.oid }, value.fields);
              if (value.db != null) {
                orderedValues['$db'] = value.db;
              }
              objectStack.push(orderedValues, 1);
              return nameLength(st, name, isArray) + 1 + 1;
            }
            case 'BSONRegExp':
              if (value instanceof RegExp || isRegExp(value)) break; // js-bson tests RegExp first
              return nameLength(st, name, isArray) + 1 + 1 + byteLength(value.pattern) + 1 + byteLength(value.options) + 1;
          }
        }
        if (value instanceof Date || isDate(value)) {
          return nameLength(st, name, isArray) + 1 + (8 + 1);
        } else if (ArrayBuffer.isView(value) || value instanceof ArrayBuffer || isAnyArrayBuffer(value)) {
          return nameLength(st, name, isArray) + 1 + (1 + 4 + 1) + value.byteLength;
        } else if (value instanceof RegExp || isRegExp(value)) {
          return (
            nameLength(st, name, isArray) +
            1 +
            1 +
            byteLength(value.source) +
            1 +
            (value.global ? 1 : 0) +
            (value.ignoreCase ? 1 : 0) +
            (value.multiline ? 1 : 0) +
            1
          );
        } else {
          if (onCalcPath(st, value)) {
            throw new BSONError('Cannot convert circular structure to BSON');
          }
          objectStack.push(value, ignoreUndefined ? 1 : 0);
          return nameLength(st, name, isArray) + 1 + 1;
        }
      }
      case 'function':
        if (serializeFunctions) {
          return nameLength(st, name, isArray) + 1 + 1 + 4 + byteLength(value.toString()) + 1;
        }
        return 0;
      case 'bigint':
        return nameLength(st, name, isArray) + 1 + (8 + 1);
      case 'symbol':
        return 0;
      default:
        throw new BSONError(`Unrecognized JS type: ${typeof value}`);
    }
  }

  function setInternalBufferSize(size) {
    ensureInternalSize(size);
  }

  return { serialize, serializeWithBufferAndIndex, calculateObjectSize, setInternalBufferSize };
};

function emptyDocument() {
  const result = Buffer.allocUnsafe(5);
  result[0] = 5;
  result[1] = 0;
  result[2] = 0;
  result[3] = 0;
  result[4] = 0;
  return result;
}

const EMPTY_DOCUMENT = new Uint8Array([5, 0, 0, 0, 0]);

/** js-bson's `buffer.set(value)` of an array-like that is not a real typed array. */
/** Copies the first `n` bytes of the Uint8Array `src` into `u8` at `at`. */
function copyBytes(u8, at, src, n) {
  if (n <= 32) {
    for (let j = 0; j < n; j++) u8[at + j] = src[j];
  } else {
    u8.set(src.length === n && src.byteLength === n ? src : new Uint8Array(src.buffer, src.byteOffset, n), at);
  }
}

function toBytes(value, size) {
  const n = typeof size === 'number' && size > 0 ? size : 0;
  const bytes = new Uint8Array(n);
  for (let i = 0; i < n; i++) bytes[i] = value[i];
  return bytes;
}

/** An ObjectId int from three reads, one per byte (as js-bson's serializeInto). */
function oidInt(a, b, c) {
  return (((a >>> 16) & 0xff) << 16) | (((b >>> 8) & 0xff) << 8) | (c & 0xff);
}

function notAString() {
  return new TypeError('argument must be a string');
}

/**
 * What js-bson's `tryWriteBasicLatin` makes of a non-string key: the key's
 * characters if it is string-like with at most 25 units all below 128, else
 * null (js-bson then throws `argument must be a string`).
 */
function basicLatinKey(key) {
  if (key === null || typeof key !== 'object' || typeof key.charCodeAt !== 'function') return null;
  const n = key.length;
  if (n === 0) return '';
  if (!(n <= 25)) return null;
  let out = '';
  for (let i = 0; i < n; i++) {
    const c = key.charCodeAt(i);
    if (!(c <= 127)) return null;
    out += String.fromCharCode(c);
  }
  return out;
}

/** An inline key (kw 0), or js-bson's TypeError for a non-string Map key (kw -2). */
function inlineKey(kw, key) {
  if (kw === -2) throw notAString();
  return key;
}

function str(value) {
  if (typeof value !== 'string') throw notAString();
  return value;
}

// The circular-structure path (js-bson's `path` Set) is exactly the sources
// of the open frames: the first SCAN_DEPTH are scanned, deeper ones are in a Set.
const SCAN_DEPTH = 64;
function onPath(srcs, depth, path, value) {
  const n = depth < SCAN_DEPTH ? depth : SCAN_DEPTH - 1;
  for (let d = 0; d <= n; d++) {
    if (srcs[d] === value) return true;
  }
  return depth >= SCAN_DEPTH && path.has(value);
}
