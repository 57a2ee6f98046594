'use strict';
// The serializer's memory: the encode tape (ops / nums / bytes / args, one
// Tape per re-entrancy level) and the output buffers (pool, big scratch),
// and runNative, the one native call that turns a tape into BSON bytes
// (the smallest tapes are laid out in JS: serialize/small.js).
const { Buffer } = require('node:buffer');
const { addon, SLOT, ensureScratch } = require('../native');
const { countDocument } = require('./keys');
const { writeSmall, MAX_OPS: SMALL_OPS, MAX_OP_BYTES: SMALL_OP_BYTES } = require('./small');
const { CHUNK, ARG0, MIN_TAPE, KEEP_OUT, MAX_BSON_SIZE } = require('./ops');
const { bufferView, TYPED_ARRAY, typedArrayBuffer, typedArrayByteOffset, typedArrayLength } = require('../buffer-view');
const { noteLatin1 } = require('./types');

// Slots 2..5 are managed here: each Tape owns its buffers and registers them
// before its native call; the output buffer is shared (it is only used inside
// a native call and copied out at once).

// An element's value may put this many bytes on the bytes tape within its room (Tape.room).
const ELEMENT_VALUE_BYTES = 48;

const registered = [];
for (const slot of [SLOT.encOps, SLOT.encNums, SLOT.encBytes, SLOT.encOut]) {
  registered[slot] = ensureScratch(slot, 0);
}
// encodeTape's parameters and result (f64 [first, opsLen, outOffset, result]);
// [4]: encode's count of Latin-1 strings widened, ever (types.js noteLatin1).
const encCtl = new Float64Array(ensureScratch(SLOT.encCtl, 0));

function register(slot, buffer) {
  if (registered[slot] !== buffer) {
    addon.setScratch(slot, buffer);
    registered[slot] = buffer;
  }
}

/**
 * One encode tape and its write positions. The type writers (types.js) write
 * at `opi` / `ni` / `bi` / `ai`; the walk checks `hasRoom()` once per element
 * (an element writes at most 1 op, 2 number slots and 64 bytes, or grows the
 * bytes tape itself with `reserveBytes`, and then whoever counted its room
 * with room() counts it again).
 */
class Tape {
  constructor(level) {
    // Every field is declared here first, so that V8 keeps them all inside the object.
    this.ops = null;
    this.opi = 0; // next op word
    this.opsLimit = 0;
    this.f64 = null;
    this.i32 = null;
    this.i64 = null;
    this.ni = 0; // next 8-byte number slot
    this.numsLimit = 0;
    this.u8 = null;
    this.bytesView = null;
    this.bi = 0; // next byte
    this.bytesLimit = 0;
    this.args = null;
    this.ai = ARG0; // next string / byte arg
    this.ext = 0; // a lower bound of the string and binary bytes sent as args (sizes the output)
    this.strExt = 0; // the string args' part of ext
    this.bigBinExt = 0; // the part of binary args of at least OWN_BINARY_MIN bytes
    this.pieces = []; // the rope's pieces: short strings once past ROPE_AFTER tape bytes (types.js putRopePiece)
    this.np = 0; // pieces in this document
    this.ropeAt = -1; // the rope's arg index (reserved by its first piece), or -1
    this.opsBuf = null;
    this.opsSize = 0;
    this.numsBuf = null;
    this.numsSize = 0;
    this.bytesBuf = null;
    this.bytesSize = 0;
    this.setOps(level === 0 ? registered[SLOT.encOps] : new ArrayBuffer(MIN_TAPE));
    this.setNums(level === 0 ? registered[SLOT.encNums] : new ArrayBuffer(MIN_TAPE));
    this.setBytes(level === 0 ? registered[SLOT.encBytes] : new ArrayBuffer(MIN_TAPE));
    this.args = [0, 0, 0];
  }
  reset() {
    this.opi = 0;
    this.ni = 0;
    this.bi = 0;
    this.ai = ARG0;
    this.ext = 0;
    this.strExt = 0;
    this.bigBinExt = 0;
    this.np = 0;
    this.ropeAt = -1;
  }
  // (limits and sizes kept as plain numbers: cheaper to test after every element than byteLength)
  setOps(buffer) {
    this.opsBuf = buffer;
    this.ops = new Int32Array(buffer);
    this.opsLimit = this.ops.length - 2;
    this.opsSize = buffer.byteLength;
  }
  setNums(buffer) {
    this.numsBuf = buffer;
    this.numsSize = buffer.byteLength;
    this.f64 = new Float64Array(buffer);
    this.i32 = new Int32Array(buffer);
    this.i64 = new BigInt64Array(buffer);
    this.numsLimit = this.f64.length - 2;
  }
  setBytes(buffer) {
    this.bytesBuf = buffer;
    this.bytesSize = buffer.byteLength;
    this.u8 = new Uint8Array(buffer);
    this.bytesView = new DataView(buffer);
    this.bytesLimit = this.u8.length - 64;
  }
  hasRoom() {
    return this.opi < this.opsLimit && this.ni < this.numsLimit && this.bi < this.bytesLimit;
  }
  /**
   * How many more elements may be written before hasRoom() must be asked
   * again: hasRoom() stays true for the first room() - 1 of them; 0 when it
   * is false now. Each takes at most 1 op, 2 number slots and 128 bytes (an
   * inline key of up to 64, which reserveBytes makes room for, then up to
   * ELEMENT_VALUE_BYTES of the value, which must start below bytesLimit).
   */
  room() {
    return Math.max(0, Math.min(this.opsLimit - this.opi, (this.numsLimit - this.ni + 1) >> 1, (this.bytesLimit - this.bi + 127) >> 7));
  }
  /** Grows whichever buffer is near its end. */
  grow() {
    if (this.opi >= this.opsLimit) {
      const old = this.ops;
      this.setOps(new ArrayBuffer(old.byteLength * 2));
      this.ops.set(old);
    }
    if (this.ni >= this.numsLimit) {
      const old = this.f64;
      this.setNums(new ArrayBuffer(old.byteLength * 2));
      this.f64.set(old);
    }
    if (this.bi >= this.bytesLimit) this.growBytes(0);
  }
  /** Makes room for `n` more bytes (plus the 64 of an element) on the bytes tape. */
  reserveBytes(n) {
    if (this.bi + n > this.bytesLimit) this.growBytes(n);
  }
  /** Grows the bytes tape (at least doubles it) to hold `n` bytes past `bi`, plus 64. */
  growBytes(n) {
    const needed = this.bi + n + 64;
    const old = this.u8;
    let size = old.byteLength * 2;
    while (size < needed) size *= 2;
    this.setBytes(new ArrayBuffer(size));
    if (this.bi > 0) this.u8.set(old.subarray(0, this.bi));
  }
  /** Drops references to user values after a call; tapes grown for a huge document shrink. */
  release() {
    // (the args array keeps its length, so the next document of the same shape needs no resize)
    if (this.ai > ARG0) releaseArgs(this.args, this.ai);
    // (filled, not emptied: the next document of the shape needs no growth)
    if (this.np !== 0) this.pieces.fill(undefined, 0, this.np);
    if (this.opsSize > 16 * MIN_TAPE || this.numsSize > 16 * MIN_TAPE || this.bytesSize > KEEP_OUT) this.shrink();
  }
  shrink() {
    if (this.opsSize > 16 * MIN_TAPE) this.setOps(new ArrayBuffer(MIN_TAPE));
    if (this.numsSize > 16 * MIN_TAPE) this.setNums(new ArrayBuffer(MIN_TAPE));
    // (the bytes tape also holds binary data: kept up to js-bson's 17 MiB buffer size)
    if (this.bytesSize > KEEP_OUT) this.setBytes(new ArrayBuffer(MIN_TAPE));
  }
}

function releaseArgs(args, argc) {
  if (args.length > 65536) args.length = ARG0;
  else args.fill(undefined, ARG0, argc);
}

// ---- output ----
// Small documents are written straight into a pool ArrayBuffer and returned
// as Buffer views of it (no copy; a new pool when it is used up, like Node's
// Buffer pool). Larger ones go to the `big` scratch and are copied into an
// exact-size Buffer; `big` is shrunk again after a huge one.
const POOL_SIZE = 120 * 1024; // below glibc's 128 KiB mmap threshold: reused heap memory, no fresh pages
const POOL_DOC_MAX = POOL_SIZE / 4;
const MAX_PRESIZE = 64 * 1024 * 1024;
// Documents from this size up (mostly strings and binaries) are written into
// a buffer of their own; smaller ones into the scratch, then copied out. The
// scratch stays in the CPU's cache and one bulk copy fills the new buffer
// faster than the writer's element-by-element stores into fresh memory: 200
// binaries of 256 B to 1 KiB (53-205 KB) 0.76-0.91x -> 0.85-0.96x js-bson,
// 2 KiB (410 KB) level, 4 KiB (820 KB) 1.10x own against 0.91x copied.
// Text is written straight into the output (by V8's UTF-8 writer, or by Rust
// from code units or Latin-1 bytes), so its stores wait on fresh memory no
// longer than on the scratch: a document at least half strings takes its own
// buffer from POOL_DOC_MAX (one 32 KB ASCII string 1.02x -> 1.11x js-bson,
// 100 KB 1.03x -> 1.27x; Latin-1 text, then written by V8, 0.99x -> 3.59x at
// 32 KB, where V8's writer was faster into the tighter buffer for a reason
// not pinned down). So does a document at least half binary data passed by
// reference in pieces of OWN_BINARY_MIN (8 KiB) and more: the native writer
// copies them from their typed arrays straight into the output, one pass
// where the scratch took two (the bench's child: a GridFS chunk of 255 KiB
// 1.00x -> 1.33x js-bson, one binary of 32 KiB 1.00x -> 1.13-1.15x, 20 of
// 8 KiB 0.93-0.96x -> 1.05-1.06x).
const OWN_BUFFER_MIN = 256 * 1024;
let pool = registered[SLOT.encOut];
let poolBytes = new Uint8Array(pool);
let poolView = new DataView(pool);
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
  poolBytes = new Uint8Array(pool);
  poolView = new DataView(pool);
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

// UTF-8 bytes per character of the string args in the last document with
// long strings (1 to 3): the next estimate counts them so, and a document
// like the last is written without a second (sizing) pass. (Counted at one
// byte each, a long non-ASCII string was written twice and measured three
// times: a 1 MiB CJK string 3.7x js-bson's time.)
let strBytesPerChar = 1;

/** Learns strBytesPerChar from a document of n bytes whose other parts were estimated at rest. */
function learnStrings(n, rest, strExt) {
  const perChar = (n - rest) / strExt;
  strBytesPerChar = perChar > 3 ? 3 : perChar >= 1 ? perChar : 1; // (NaN: 1)
}

/**
 * One native run of the tape (opsLen op words, `argc` entries of `args`)
 * into ArrayBuffer `target` from `offset`: the document's length, -(its
 * length + 2) when it did not fit (the run then only counted), or an error
 * message.
 */
function encodeInto(target, offset, opsLen, argc, args) {
  register(SLOT.encOut, target);
  args[2] = offset;
  if (argc <= ARG0 + 2) {
    // direct calls for the common few-argument cases
    if (argc === ARG0) {
      // no args: the parameters and the result go through encCtl (no napi number conversions)
      encCtl[0] = 1;
      encCtl[1] = opsLen;
      encCtl[2] = offset;
      const error = addon.encodeTape();
      return error === undefined ? encCtl[3] : error;
    }
    if (argc === ARG0 + 1) return addon.encode(1, opsLen, offset, args[ARG0]);
    return addon.encode(1, opsLen, offset, args[ARG0], args[ARG0 + 1]);
  }
  if (argc <= CHUNK + ARG0) {
    args[0] = 1;
    return addon.encode.apply(undefined, args);
  }
  let r;
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
  return r;
}

/**
 * Runs the native writer over the tape; returns the document length (see
 * takeDocument / lastDocument). `into`, `index`: serializeWithBufferAndIndex's
 * finalBuffer and start (into: null for serialize), see writeInto.
 */
function runNative(tape, BSONError, fresh, into, index) {
  countDocument();
  const opsLen = tape.opi;
  const argc = tape.ai;
  if (tape.ropeAt >= 0) {
    // (join: one flat string; a rope of 1,000 `+=` took V8 ~9 ns a piece to flatten)
    const pieces = tape.pieces;
    pieces.length = tape.np;
    tape.args[tape.ropeAt] = pieces.join('');
  }
  if (opsLen <= SMALL_OPS && argc === ARG0) {
    // the smallest documents: laid out in JS (serialize/small.js), else natively below
    if (pool.byteLength - poolPos < 4 + opsLen * SMALL_OP_BYTES) newPool();
    const n = writeSmall(tape, poolBytes, poolView, poolPos);
    if (n >= 0) {
      lastBuf = pool;
      lastOff = poolPos;
      return n;
    }
  }
  register(SLOT.encOps, tape.opsBuf);
  register(SLOT.encNums, tape.numsBuf);
  register(SLOT.encBytes, tape.bytesBuf);
  const args = tape.args;
  if (args.length !== argc) args.length = argc;
  args[1] = opsLen;
  let target;
  let offset;
  // A rough size from the tape picks the buffer, so that a second (sizing)
  // pass is rare: binary args by their length, string args by theirs times
  // the UTF-8 bytes per character of the last large document with strings.
  const ext = tape.ext;
  const strExt = tape.strExt;
  const strBytes = Math.ceil(strExt * strBytesPerChar);
  const rest = opsLen * 8 + tape.bi + ext - strExt; // all but the strings
  let estimate = rest + strBytes;
  // (past MAX_PRESIZE, or not a number for odd Binary positions: sized by Rust's count instead)
  if (!(estimate <= MAX_PRESIZE)) estimate = opsLen * 8 + tape.bi;
  if (into !== null && tape.bigBinExt >= INTO_MIN && tape.bigBinExt >= estimate - (estimate >> 3)) {
    const n = writeInto(tape, into, index, opsLen, argc, BSONError);
    if (n >= 0) return n;
  }
  if (estimate > POOL_DOC_MAX) {
    if (
      fresh &&
      (estimate >= OWN_BUFFER_MIN || strBytes >= estimate >> 1 || tape.bigBinExt >= estimate >> 1) &&
      strBytes + (ext - strExt) + tape.bi >= estimate - (estimate >> 3) &&
      estimate <= MAX_PRESIZE
    ) {
      // Mostly strings, binaries and tape bytes: the estimate is close to the
      // size, so the document is written into its own buffer and returned
      // without a copy (which costs as much as the write: string_1mib
      // 0.79-0.93x, binary_1mib 0.72x the time of the scratch plus a copy).
      // (8 more bytes an op: the estimate's 8 cover an element's type,
      // a short key and a binary's header, and a second pass into a second
      // buffer costs more than the room: 200 binaries of 256 B, 0.5x)
      target = rawArrayBuffer(estimate + opsLen * 8 + 256);
    } else {
      ensureBig(estimate);
      target = big;
    }
    offset = 0;
  } else {
    if (pool.byteLength - poolPos < 2 * estimate + 256) newPool();
    target = pool;
    offset = poolPos;
  }
  const learn = strExt > POOL_DOC_MAX / 4;
  for (;;) {
    const r = encodeInto(target, offset, opsLen, argc, args);
    if (typeof r === 'string') throw new BSONError(r);
    if (r >= 0) {
      noteLatin1(encCtl[4]);
      if (learn) learnStrings(r, rest, strExt);
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
      // (8 bytes of room past the end: the native side re-measures a string
      // that ends within 4 bytes of the buffer's end)
      target = rawArrayBuffer(needed + 8);
    } else {
      ensureBig(needed);
      target = big;
    }
    offset = 0;
  }
}

// serializeWithBufferAndIndex of a document that is mostly binaries of
// OWN_BINARY_MIN (8 KiB) and more, INTO_MIN bytes or more of them, is
// counted by a first native run and then written straight into the caller's
// buffer when it fits: one copy of the data where the scratch and
// finalBuffer.set made two, as js-bson's internal buffer and set do. (The
// count costs a Node-API call a binary and two more calls register the
// caller's buffer and the pool again, ~0.5 us: 200 binaries of 1 KiB and one
// of 16 KiB were no faster so.) A document that does not
// fit, or a finalBuffer that is not a plain Uint8Array or Buffer whose `set`
// is the built-in one, goes the usual way, and finalBuffer.set then throws
// or writes as in js-bson, finalBuffer untouched before it.
const INTO_MIN = 32 * 1024;
const EMPTY_OUT = new ArrayBuffer(0);
const typedArraySet = TYPED_ARRAY.set;
const { hasOwn, getPrototypeOf, getOwnPropertyDescriptor } = Object;
const { isArrayBuffer } = require('node:util').types;

/**
 * The ArrayBuffer under `finalBuffer` if the document may be written into it
 * directly: a Uint8Array or Buffer (no other prototype, no `set` of its own,
 * the built-in %TypedArray%.prototype.set) over a non-shared ArrayBuffer that
 * no binary arg of the tape shares (the writer reads them while it writes);
 * else null. None of these reads runs user code.
 */
function directBuffer(finalBuffer, args, argc) {
  if (!ArrayBuffer.isView(finalBuffer)) return null;
  const proto = getPrototypeOf(finalBuffer);
  if (proto !== Buffer.prototype && proto !== Uint8Array.prototype) return null;
  if (hasOwn(finalBuffer, 'set') || hasOwn(Buffer.prototype, 'set') || hasOwn(Uint8Array.prototype, 'set')) return null;
  if (getOwnPropertyDescriptor(TYPED_ARRAY, 'set')?.value !== typedArraySet) return null;
  const ab = typedArrayBuffer.call(finalBuffer);
  if (!isArrayBuffer(ab)) return null;
  for (let i = ARG0; i < argc; i++) {
    const arg = args[i];
    if (ArrayBuffer.isView(arg) && typedArrayBuffer.call(arg) === ab) return null;
  }
  return ab;
}

/** runNative's direct write into serializeWithBufferAndIndex's finalBuffer at `index`: the length, or -1 (not written; see INTO_MIN). */
function writeInto(tape, finalBuffer, index, opsLen, argc, BSONError) {
  if (!Number.isInteger(index) || index < 0) return -1;
  const args = tape.args;
  const ab = directBuffer(finalBuffer, args, argc);
  if (ab === null) return -1;
  const counted = encodeInto(EMPTY_OUT, 0, opsLen, argc, args);
  if (typeof counted === 'string') throw new BSONError(counted);
  if (counted >= -1) return -1; // (not a count: the usual path reports it)
  const n = -counted - 2;
  if (n > typedArrayLength.call(finalBuffer) - index) return -1;
  const at = typedArrayByteOffset.call(finalBuffer) + index;
  if (at + n > 0xffffffff) return -1; // (the native side takes the offset and end as u32s)
  let r;
  encCtl[5] = at + n; // (the writer stores nothing past the document: src/encode.rs CTL_OUT_END)
  try {
    r = encodeInto(ab, at, opsLen, argc, args);
  } finally {
    encCtl[5] = 0;
    register(SLOT.encOut, pool); // (the caller's buffer is never kept)
  }
  if (typeof r === 'string') throw new BSONError(r);
  if (r !== n) throw new BSONError(`bson-rs: wrote ${r} bytes into finalBuffer where ${n} were counted`);
  noteLatin1(encCtl[4]);
  lastBuf = null;
  return n;
}

/** The last document written by runNative(…, fresh = true) as a Buffer of its own or a pool view. */
function takeDocument(n) {
  if (lastBuf === pool) {
    // a view of the pool; the next document starts at the next 8-byte boundary
    const result = bufferView(pool, lastOff, n);
    poolPos = (lastOff + n + 7) & ~7;
    return result;
  }
  if (lastBuf !== big) {
    // a buffer of its own (sized by the estimate): returned as a view if it is nearly full
    const cap = lastBuf.byteLength;
    if (n >= cap - (cap >> 3)) return bufferView(lastBuf, 0, n);
  }
  const result = Buffer.allocUnsafe(n);
  result.set(new Uint8Array(lastBuf, 0, n));
  shrinkBig();
  return result;
}

/** The last document written by runNative as a transient view (valid until the next call); null when it was written into finalBuffer (writeInto). */
function lastDocument(n) {
  if (lastBuf === null) return null;
  return new Uint8Array(lastBuf, lastOff, n); // the pool position is not advanced
}

module.exports = { Tape, ELEMENT_VALUE_BYTES, runNative, takeDocument, lastDocument, shrinkBig, ensureInternalSize };
