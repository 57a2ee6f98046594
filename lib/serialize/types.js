'use strict';
// How each BSON type is put on the encode tape: one small function per type,
// in the spirit of js-bson's serializer.ts (serializeString, serializeLong, …).
// Each makes exactly js-bson's reads of the value, in js-bson's order; the walk
// (walk.js) decides which one to call, and the Rust writer (core, "encode")
// turns the tape into bytes.
//
// Every writer takes (t, w, key, value): t the Tape (buffers.js), w the key
// word (> 0 a cached key's tape bits, KEY_INDEX an array index written by
// Rust, KEY_INLINE the key is sent with the element, KEY_STAGED likewise but
// its bytes are on the tape already, KEY_NOT_STRING a non-string Map key,
// which throws), key the key.
// V8 inlines these into the walk's loops.
const OP = require('./ops');
const { looksTwoByte, longTwoByte, noneAboveLatin1, LONG_STRING } = require('./predicates');
const { addon } = require('../native');
// A binary's data is measured with %TypedArray%.prototype's byteLength
// getter (writeBinary): `data.byteLength` from a Buffer went through V8's
// generic load IC and the getter builtin, 12% of serializing 1,000 UUIDs;
// no user getter runs, as js-bson reads no byteLength there.
const { typedArrayByteLength } = require('../buffer-view');

const { END, DOUBLE, STRING, DOC, ARRAY, BINARY, OID, FALSE, DATE, NULL, REGEX, CODE, SYMBOL } = OP;
const { CODE_W_SCOPE, INT32, TIMESTAMP, INT64, DECIMAL128, TRUE, SKIP, STRING_BYTES, OID_INTS } = OP;
const { BINARY_BYTES, REGEX_BYTES, STRING_UTF16, CODE_BYTES, SYMBOL_BYTES, MAXKEY, MINKEY, COPY_BINARY_MAX, SET_BINARY_MAX, SHORT_STRING_BYTES } = OP;
const { OWN_BINARY_MIN } = OP;
const { STRING_ROPE_FIRST, STRING_ROPE, ROPE_AFTER, ROPE_MIN, STRING_LATIN1 } = OP;

/** Counts `n` bytes of binary data passed by reference towards the output's size and buffer (buffers.js runNative). */
function countBinaryArg(t, n) {
  t.ext += n;
  if (n >= OWN_BINARY_MIN) t.bigBinExt += n;
}

// The op of a string V8 holds as two-byte: STRING_UTF16 where the addon
// converts UTF-16 to UTF-8 with SIMD (x86_64 with SSSE3; surrogate pairs
// too: 100,000 units of emoji 1.10x -> 2.57x js-bson on Node.js 20, where
// they went to V8's WriteUtf8, op STRING, as its scalar loop was no faster).
const TWO_BYTE_STRING = addon?.utf16Simd === true ? STRING_UTF16 : STRING;
// Strings of this many units or more that do not look two-byte are searched
// for a character above U+00FF (noneAboveLatin1, ~14 ns); without one Rust
// reads them as Latin-1 bytes and widens them to UTF-8 with SIMD (op
// STRING_LATIN1), where V8's WriteUtf8 goes a character at a time once the
// string holds one above U+007F (1,000 characters of French: Node.js 24
// 0.41x -> ~1.0x js-bson's speed, 20 1.21-1.25x -> 4.5x).
const LATIN1_MIN = addon?.utf16Simd === true ? 64 : Infinity;
// The search is paused (only one string in SEARCH_RETRY searched) while it
// does not pay:
// - A search that finds such a character scans up to it (~0.45 ns a unit):
//   mostly-ASCII text with one late (✓, ’, an emoji) serialized at ~0.72x
//   the speed without the search on Node.js 20. Paused once SEARCH_MISSES_OFF more
//   searches found one than did not (counted up to SEARCH_MISSES_MAX).
// - On ASCII text it costs its ~14 ns for nothing (500 strings of 100
//   characters: 1.78x -> 1.44x js-bson). Paused once ASCII_RUN_OFF strings
//   in a row sent as STRING_LATIN1 had no character above U+007F (Rust
//   counts those that had: encCtl[4], noteLatin1). Not for strings of
//   LONG_ASCII units and more: Rust copies their Latin-1 bytes and widens
//   them faster than V8's WriteUtf8 checks them for ASCII and copies them
//   (the bench's child, AVX-512 and AVX2 alike: one 1 MiB ASCII string
//   0.95x -> 1.57-1.60x js-bson, 16 KiB 1.20x -> 1.44-1.56x, ten of 4 KiB
//   1.01x -> 1.23-1.31x; level at 1-2 KiB).
const SEARCH_MISSES_OFF = 4;
const SEARCH_MISSES_MAX = 8;
const ASCII_RUN_OFF = 32;
const SEARCH_RETRY = 16;
const LONG_ASCII = 2048;
let searchMisses = 0;
let searchSkips = 0;
let asciiRun = 0;
let latin1Sent = 0; // strings sent as STRING_LATIN1 since the last noteLatin1
let latin1Widened = 0; // Rust's count at the last noteLatin1

/**
 * After a native write: `widened` is Rust's count of STRING_LATIN1 strings
 * that held a character above U+007F, ever (encCtl[4]).
 */
function noteLatin1(widened) {
  if (latin1Sent === 0) return;
  asciiRun = widened !== latin1Widened ? 0 : Math.min(asciiRun + latin1Sent, ASCII_RUN_OFF);
  latin1Widened = widened;
  latin1Sent = 0;
}

/** The op of a string sent as an arg (more than SHORT_STRING_BYTES units). */
function stringArgOp(value) {
  return looksTwoByte(value) ? TWO_BYTE_STRING : value.length < LATIN1_MIN ? STRING : oneByteLookingOp(value);
}

/** stringArgOp of a string of at least LATIN1_MIN units that does not look two-byte. */
function oneByteLookingOp(value) {
  if ((searchMisses >= SEARCH_MISSES_OFF || (asciiRun >= ASCII_RUN_OFF && value.length < LONG_ASCII)) && ++searchSkips % SEARCH_RETRY !== 0) {
    return value.length >= LONG_STRING && longTwoByte(value) ? TWO_BYTE_STRING : STRING;
  }
  if (noneAboveLatin1(value)) {
    if (searchMisses > 0) searchMisses--;
    latin1Sent++;
    return STRING_LATIN1;
  }
  if (searchMisses < SEARCH_MISSES_MAX) searchMisses++;
  return TWO_BYTE_STRING;
}

const nullByte = /\x00/; // eslint-disable-line no-control-regex
const REGEXP_FLAGS = ['', 'i', 's', 'is', 'm', 'im', 'sm', 'ism'];

/**
 * js-bson's `value.source.match(/\x00/) != null` (a RegExp's source, a
 * BSONRegExp's pattern: `name`); for a string the same answer by indexOf, a
 * third of match's ~13 ns (arrays of 200 RegExps serialized at 0.84x js-bson's
 * speed with match). A value without a match method throws js-bson's TypeError.
 */
function hasNullByte(source, name) {
  if (typeof source === 'string') return source.indexOf('\x00') !== -1;
  if (source != null && typeof source.match !== 'function') throw new TypeError(name + '.match is not a function');
  return source.match(nullByte) != null;
}

function notAString() {
  return new TypeError('argument must be a string');
}

function str(value) {
  if (typeof value !== 'string') throw notAString();
  return value;
}

// (KEY_BYTES: the tape word's flag for a key on the bytes tape, length in bits 8-15; core encode.rs)
const KEY_BYTES = 1 << 30;
const KEY_BYTES_MAX = 64;
const KEY_INDEX = 0;
const KEY_INLINE = -1;
const KEY_NOT_STRING = -2;
const KEY_STAGED = -3; // an inline key whose bytes are already at t.bi (keys.js stageKey)

/** The element's op word (see the header); small, so that V8 inlines it into every writer. */
function putOp(t, op, w, key) {
  if (w >= 0) t.ops[t.opi++] = op | w;
  else putInlineKey(t, op, w, key);
}

/**
 * An element whose key is not cached: short ASCII keys go on the bytes tape
 * (no native string read; keys new on every call take this path), others as
 * a string arg. The key's bytes come before the value's.
 */
function putInlineKey(t, op, w, key) {
  if (w === KEY_NOT_STRING) throw notAString(); // js-bson's TypeError for a non-string Map key
  const n = key.length;
  if (w === KEY_STAGED) {
    t.ops[t.opi++] = op | KEY_BYTES | (n << 8);
    t.bi += n;
    return;
  }
  if (n <= KEY_BYTES_MAX) {
    t.reserveBytes(n);
    if (putAscii(t.u8, t.bi, key) === n) {
      t.ops[t.opi++] = op | KEY_BYTES | (n << 8);
      t.bi += n;
      return;
    }
  }
  t.ops[t.opi++] = op;
  t.args[t.ai++] = key;
}

/**
 * Copies string `s` to `u8` at `at` while its characters are 1..127 (ASCII
 * without NUL, as a BSON cstring needs); returns how many it copied
 * (s.length when all were). Room is the caller's.
 */
function putAscii(u8, at, s) {
  const n = s.length;
  let j = 0;
  for (; j < n; j++) {
    const c = s.charCodeAt(j);
    if (c > 127 || c === 0) break;
    u8[at + j] = c;
  }
  return j;
}

/** Closes the innermost document / array (and a code-with-scope around it). */
function writeEnd(t) {
  t.ops[t.opi++] = END;
}

/** A value js-bson skips; inside an array written by Rust it still takes an index. */
function writeSkip(t, rustArr) {
  if (rustArr) t.ops[t.opi++] = SKIP;
}

function writeNull(t, w, key) {
  putOp(t, NULL, w, key);
}

function writeBoolean(t, w, key, value) {
  putOp(t, value ? TRUE : FALSE, w, key);
}

/** A JS number: int32 when it is one (not -0), else a double. */
function writeNumber(t, w, key, value) {
  if ((value | 0) === value && (value !== 0 || 1 / value > 0)) {
    putOp(t, INT32, w, key);
    t.i32[t.ni * 2] = value;
  } else {
    putOp(t, DOUBLE, w, key);
    t.f64[t.ni] = value;
  }
  t.ni++;
}

/**
 * A string: short ASCII ones go to the bytes tape (as js-bson's
 * tryWriteBasicLatin); others are string args that Rust writes as UTF-8, from
 * their UTF-16 code units where V8 holds them as two-byte and from their
 * Latin-1 bytes where none is above U+00FF (V8 encodes both to UTF-8 one
 * character at a time; stringArgOp, core encode/out.rs).
 */
function writeString(t, w, key, value) {
  const n = value.length;
  if (n > SHORT_STRING_BYTES) {
    putOp(t, stringArgOp(value), w, key);
    putStringArg(t, value);
    return;
  }
  if (n >= ROPE_MIN && (t.ropeAt >= 0 || t.bi >= ROPE_AFTER)) {
    putRopePiece(t, w, key, value);
    return;
  }
  const at = t.opi;
  // (first: an inline key's bytes go before the string's)
  putOp(t, STRING_BYTES, w, key);
  const j = putShortString(t, value);
  if (j !== n) {
    // not ASCII after all: a string arg; from its code units if it starts
    // like CJK text (V8 writes short Greek or Cyrillic faster than a copy of
    // their code units and Rust: 0.83-0.88x the time in probes)
    const c = value.charCodeAt(j);
    t.ops[at] = (t.ops[at] & ~0xff) | (c >= 0x800 && (c & 0xf800) !== 0xd800 ? TWO_BYTE_STRING : STRING);
    putStringArg(t, value);
  }
}

/**
 * A short string of at least ROPE_MIN characters in a document past
 * ROPE_AFTER bytes of tape: a piece of the document's rope, its length in the
 * next number slot. runNative joins the pieces into one string arg (whose
 * slot the first piece reserves); Rust reads it once and cuts it into pieces
 * (op STRING_ROPE_FIRST, then STRING_ROPE), writing each one's UTF-16 as
 * UTF-8, so no character is copied or checked here (3-4 ns a character in
 * putShortString; a piece costs about as much as 12).
 */
function putRopePiece(t, w, key, value) {
  const n = value.length;
  if (t.ropeAt < 0) {
    putOp(t, STRING_ROPE_FIRST, w, key);
    t.ropeAt = t.ai++;
  } else {
    putOp(t, STRING_ROPE, w, key);
  }
  t.pieces[t.np++] = value;
  t.i32[t.ni * 2] = n;
  t.ni++;
  t.ext += n;
  t.strExt += n;
}

/**
 * The payload of a short-string op (STRING_BYTES, CODE_BYTES, SYMBOL_BYTES)
 * for `value` of at most SHORT_STRING_BYTES units: copies it to the bytes
 * tape while its characters are ASCII. When all are, its length goes in the
 * next number slot and the result is value.length; otherwise the index of
 * the first other character (the bytes copied are left as scratch).
 */
function putShortString(t, value) {
  const n = value.length;
  const u8 = t.u8;
  const bi = t.bi;
  for (let j = 0; j < n; j++) {
    const c = value.charCodeAt(j);
    if (c > 127) return j;
    u8[bi + j] = c;
  }
  t.i32[t.ni * 2] = n;
  t.ni++;
  t.bi = bi + n;
  return n;
}

/**
 * The string of the CODE_BYTES or SYMBOL_BYTES op at t.ops[at]: on the bytes
 * tape when it is short and ASCII, else a string arg under `argOp` (CODE,
 * SYMBOL). (Arrays of 200 Code or BSONSymbol values took 1.4-1.6x
 * js-bson's time with every string as an arg.)
 */
function putText(t, at, argOp, value) {
  if (value.length > SHORT_STRING_BYTES || putShortString(t, value) !== value.length) {
    t.ops[at] = (t.ops[at] & ~0xff) | argOp;
    t.args[t.ai++] = value;
  }
}

/** A string value sent as an arg (Rust writes it as UTF-8). */
function putStringArg(t, value) {
  t.args[t.ai++] = value;
  t.ext += value.length;
  t.strExt += value.length;
}

/**
 * A regular expression's pattern and options after its REGEX_BYTES op at
 * t.ops[at]: on the bytes tape when both are ASCII without NUL and fit an
 * element's room (their lengths in the slot), else as two string args (op
 * REGEX). Arrays of 200 RegExps took 1.4x js-bson's time with every one as args.
 */
function putRegex(t, at, pattern, options) {
  const np = pattern.length;
  const no = options.length;
  if (
    typeof pattern === 'string' &&
    np + no <= SHORT_STRING_BYTES &&
    putAscii(t.u8, t.bi, pattern) === np &&
    putAscii(t.u8, t.bi + np, options) === no
  ) {
    const i32 = t.i32;
    i32[t.ni * 2] = np;
    i32[t.ni * 2 + 1] = no;
    t.ni++;
    t.bi += np + no;
    return;
  }
  t.ops[at] = (t.ops[at] & ~0xff) | REGEX;
  t.args[t.ai++] = pattern;
  t.args[t.ai++] = options;
}

/** A bigint: int64. (A Long object is writeLong.) */
function writeBigInt(t, w, key, value) {
  putOp(t, INT64, w, key);
  t.i64[t.ni++] = value;
}

function writeDate(t, w, key, value) {
  putOp(t, DATE, w, key);
  t.f64[t.ni++] = value.getTime();
}

/** A Uint8Array (or Buffer) value: binary subtype 0. */
function writeUint8Array(t, w, key, value) {
  putOp(t, BINARY, w, key);
  const size = value.length;
  t.i32[t.ni * 2] = size;
  t.i32[t.ni * 2 + 1] = 0;
  t.ni++;
  let byteLength;
  if (ArrayBuffer.isView(value) && copiesToTape(size, (byteLength = typedArrayByteLength.call(value)))) {
    copyToTape(t, t.opi - 1, value, size, size === byteLength);
  } else {
    t.args[t.ai++] = ArrayBuffer.isView(value) ? value : toBytes(value, size);
    countBinaryArg(t, size);
  }
}

/** Opens a nested document or array (the walk then enters it). */
function writeDocument(t, w, key, isArray) {
  putOp(t, isArray ? ARRAY : DOC, w, key);
}

/** The writers that depend on the js-bson copy (its classes, symbols and layout). */
function createTypes(bson, layout) {
  const { BSONError, BSONVersionError, Binary } = bson;
  const VERSION_SYMBOL = Symbol.for('@@mdb.bson.version');
  const bsonType = bson.bsonType ?? Symbol.for('@@mdb.bson.type');
  const BSON_MAJOR_VERSION = layout.major ?? 7;
  const SUBTYPE_BYTE_ARRAY = Binary?.SUBTYPE_BYTE_ARRAY ?? 2;
  const SUBTYPE_VECTOR = Binary?.SUBTYPE_VECTOR ?? 9;
  const VECTOR_TYPE = Binary?.VECTOR_TYPE ?? { Int8: 0x03, Float32: 0x27, PackedBit: 0x10 };
  // (bson 6.10.0-6.10.3 write a Float32 vector of a size no float count gives)
  const checksFloat32Size = layout.checksFloat32VectorSize;
  // The ObjectId fast path reads i0..i3 in place of calling serializeInto, which is
  // exact only where the copy stores its bytes that way; elsewhere a sentinel that
  // no value's serializeInto can equal sends every ObjectId through serializeInto.
  const oidSerializeInto = layout.objectIdIsFourInts ? bson.ObjectId.prototype.serializeInto : Object.freeze({});

  // Where the copy's serializer reads a value's type (layout.tagReadByChain):
  // 7.3+ reads the tag symbol once; 6.x and 7.0-7.2 read `_bsontype` once per
  // `else if`, in CHAIN order, so a getter or Proxy sees as many reads.
  const tagKey = layout.tagReadByChain ? '_bsontype' : bsonType;
  const CHAIN = ['ObjectId', 'Decimal128', 'Long', 'Timestamp', 'Double', 'Code', 'Binary', 'BSONSymbol', 'DBRef', 'BSONRegExp', 'Int32', 'MinKey', 'MaxKey'];

  /** js-bson's version check of a value with a `_bsontype`, then its type tag. */
  function tagOf(value) {
    if (value[VERSION_SYMBOL] !== BSON_MAJOR_VERSION) throw new BSONVersionError();
    if (tagKey === bsonType) return value[bsonType];
    for (let k = 0; k < CHAIN.length; k++) if (value._bsontype === CHAIN[k]) return CHAIN[k];
    return undefined;
  }

  function writeRegExp(t, w, key, value) {
    const at = t.opi;
    putOp(t, REGEX_BYTES, w, key);
    if (value.source && hasNullByte(value.source, 'value.source')) {
      throw new BSONError('value ' + value.source + ' must not contain null bytes');
    }
    putRegex(t, at, value.source, REGEXP_FLAGS[(value.ignoreCase ? 1 : 0) | (value.global ? 2 : 0) | (value.multiline ? 4 : 0)]);
  }

  function writeObjectId(t, w, key, value) {
    const serializeInto = value.serializeInto; // read once, as js-bson's call does
    if (serializeInto !== oidSerializeInto) {
      writeObjectIdByCall(t, w, key, value, serializeInto);
      return;
    }
    // js-bson's own ObjectId#serializeInto writes i0..i3 as 3 bytes each: send the ints
    putOp(t, OID_INTS, w, key);
    const k = t.ni * 2;
    const i32 = t.i32;
    // js-bson's serializeInto reads each field three times (one per byte)
    i32[k] = oidInt(value.i0, value.i0, value.i0);
    i32[k + 1] = oidInt(value.i1, value.i1, value.i1);
    i32[k + 2] = oidInt(value.i2, value.i2, value.i2);
    i32[k + 3] = oidInt(value.i3, value.i3, value.i3);
    t.ni += 2;
  }

  /** An ObjectId whose serializeInto is not js-bson's own (or a copy without i0..i3): it writes the 12 bytes. */
  function writeObjectIdByCall(t, w, key, value, serializeInto) {
    putOp(t, OID, w, key);
    // js-bson calls value.serializeInto(buffer, index): the same TypeError when it is not a function
    if (typeof serializeInto !== 'function') throw new TypeError('value.serializeInto is not a function');
    serializeInto.call(value, t.u8, t.bi);
    t.bi += 12;
  }

  function writeDecimal128(t, w, key, value) {
    putOp(t, DECIMAL128, w, key);
    const u8 = t.u8;
    const bi = t.bi;
    // As js-bson: `bytes` read once per byte. Unrolled, TurboFan keeps one
    // load of a plain field for all sixteen (a getter still runs sixteen times).
    u8[bi] = value.bytes[0];
    u8[bi + 1] = value.bytes[1];
    u8[bi + 2] = value.bytes[2];
    u8[bi + 3] = value.bytes[3];
    u8[bi + 4] = value.bytes[4];
    u8[bi + 5] = value.bytes[5];
    u8[bi + 6] = value.bytes[6];
    u8[bi + 7] = value.bytes[7];
    u8[bi + 8] = value.bytes[8];
    u8[bi + 9] = value.bytes[9];
    u8[bi + 10] = value.bytes[10];
    u8[bi + 11] = value.bytes[11];
    u8[bi + 12] = value.bytes[12];
    u8[bi + 13] = value.bytes[13];
    u8[bi + 14] = value.bytes[14];
    u8[bi + 15] = value.bytes[15];
    t.bi = bi + 16;
  }

  /** A Long (int64) or a Timestamp: js-bson reads the tag again, then the two halves. */
  function writeLong(t, w, key, value) {
    putOp(t, value[tagKey] === 'Long' ? INT64 : TIMESTAMP, w, key);
    const k = t.ni * 2;
    t.i32[k] = value.getLowBits();
    t.i32[k + 1] = value.getHighBits();
    t.ni++;
  }

  /** A Double object. */
  function writeDouble(t, w, key, value) {
    putOp(t, DOUBLE, w, key);
    t.f64[t.ni++] = value.value;
  }

  /** An Int32 object. */
  function writeInt32(t, w, key, value) {
    const v = value.valueOf();
    putOp(t, INT32, w, key);
    t.i32[t.ni * 2] = v;
    t.ni++;
  }

  /** A Code: returns its scope (a code-with-scope; the walk then enters the scope) or null. */
  function writeCode(t, w, key, value) {
    if (value.scope && typeof value.scope === 'object') {
      putOp(t, CODE_W_SCOPE, w, key);
      t.args[t.ai++] = str(value.code);
      return value.scope;
    }
    const at = t.opi;
    putOp(t, CODE_BYTES, w, key);
    putText(t, at, CODE, str(value.code.toString()));
    return null;
  }

  /** A function with serializeFunctions: code. */
  function writeFunction(t, w, key, value) {
    putOp(t, CODE, w, key);
    t.args[t.ai++] = str(value.toString());
  }

  function writeBinary(t, w, key, value) {
    const opOfBinary = t.opi;
    putOp(t, BINARY, w, key);
    // js-bson's reads, in order: buffer, position, sub_type four times
    const data = value.buffer;
    const size = value.position;
    value.sub_type; // eslint-disable-line no-unused-expressions
    const subByte = value.sub_type;
    const byteArray = value.sub_type === SUBTYPE_BYTE_ARRAY;
    if (value.sub_type === SUBTYPE_VECTOR) validateBinaryVector(value);
    value.position; // eslint-disable-line no-unused-expressions -- js-bson advances by it
    t.i32[t.ni * 2] = size;
    t.i32[t.ni * 2 + 1] = byteArray ? 2 : (subByte & 0xff) | 0x100;
    t.ni++;
    let byteLength = -1;
    if (
      data instanceof Uint8Array &&
      ArrayBuffer.isView(data) &&
      typeof size === 'number' &&
      size >= 0 &&
      (size | 0) === size &&
      // (up to 16 bytes js-bson copies data[0..size) one by one, a 0 for an
      // index past the end, as copyBytes does: no length to read)
      (size <= 16 || copiesToTape(size, (byteLength = typedArrayByteLength.call(data))))
    ) {
      copyToTape(t, opOfBinary, data, size, size === byteLength);
    } else {
      // large data: by reference; position past the data (zeros follow) or unusual data: a copy
      t.args[t.ai++] =
        data instanceof Uint8Array
          ? size > COPY_BINARY_MAX && ArrayBuffer.isView(data) && size <= typedArrayByteLength.call(data) ? data : new Uint8Array(data)
          : toBytes(data, data?.length);
      if (typeof size === 'number' && size > 0) countBinaryArg(t, Math.floor(size));
    }
  }

  function validateBinaryVector(vector) {
    if (vector.sub_type !== SUBTYPE_VECTOR) return;
    const size = vector.position;
    const datatype = vector.buffer[0];
    const padding = vector.buffer[1];
    if ((datatype === VECTOR_TYPE.Float32 || datatype === VECTOR_TYPE.Int8) && padding !== 0) {
      throw new BSONError('Invalid Vector: padding must be zero for int8 and float32 vectors');
    }
    if (datatype === VECTOR_TYPE.Float32 && checksFloat32Size) {
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

  function writeSymbol(t, w, key, value) {
    const at = t.opi;
    putOp(t, SYMBOL_BYTES, w, key);
    putText(t, at, SYMBOL, str(value.value));
  }

  /** A DBRef: returns the document to write ($ref, $id, $db, fields); the walk enters it. */
  function writeDBRef(t, w, key, value) {
    const orderedValues = Object.assign(
      { $ref: value.collection, $id: value.oid },
      value.db != null ? { $db: value.db } : null,
      value.fields
    );
    putOp(t, DOC, w, key);
    return orderedValues;
  }

  function writeBSONRegExp(t, w, key, value) {
    const at = t.opi;
    putOp(t, REGEX_BYTES, w, key);
    if (hasNullByte(value.pattern, 'value.pattern')) {
      throw new BSONError('pattern ' + value.pattern + ' must not contain null bytes');
    }
    putRegex(t, at, str(value.pattern), str(value.options.split('').sort().join('')));
  }

  /** MinKey or MaxKey (js-bson reads the tag again). */
  function writeMinMaxKey(t, w, key, value) {
    putOp(t, value[tagKey] === 'MinKey' ? MINKEY : MAXKEY, w, key);
  }

  /**
   * A value with a type tag whose element holds no document (every tag but
   * Code, DBRef and an unknown one): writes it and returns true; else false.
   */
  function writeTagged(t, w, key, value, tag) {
    if (tag === 'ObjectId') writeObjectId(t, w, key, value);
    else if (tag === 'Decimal128') writeDecimal128(t, w, key, value);
    else if (tag === 'Long' || tag === 'Timestamp') writeLong(t, w, key, value);
    else if (tag === 'Double') writeDouble(t, w, key, value);
    else if (tag === 'Binary') writeBinary(t, w, key, value);
    else if (tag === 'BSONSymbol') writeSymbol(t, w, key, value);
    else if (tag === 'BSONRegExp') writeBSONRegExp(t, w, key, value);
    else if (tag === 'Int32') writeInt32(t, w, key, value);
    else if (tag === 'MinKey' || tag === 'MaxKey') writeMinMaxKey(t, w, key, value);
    else return false;
    return true;
  }

  return {
    tagOf,
    writeTagged,
    writeRegExp,
    writeObjectId,
    writeDecimal128,
    writeLong,
    writeDouble,
    writeInt32,
    writeCode,
    writeFunction,
    writeBinary,
    writeSymbol,
    writeDBRef,
    writeBSONRegExp,
    writeMinMaxKey
  };
}

/**
 * Whether `size` bytes of binary data from a Uint8Array of `byteLength`
 * bytes are copied to the bytes tape now (js-bson copies them at this point,
 * so a later getter's change is not seen): up to COPY_BINARY_MAX bytes of
 * any array, the whole array up to SET_BINARY_MAX bytes (see copyToTape).
 * Longer data, and a part of a longer array, go by reference (README: differences).
 */
function copiesToTape(size, byteLength) {
  return size <= COPY_BINARY_MAX ? size <= byteLength : size <= SET_BINARY_MAX && size === byteLength;
}

/**
 * Copies the data copiesToTape accepted to the bytes tape; the op at t.ops[at]
 * becomes BINARY_BYTES. Past 16 bytes a `whole` array (exactly `size` bytes
 * long) is copied with one TypedArray#set, as js-bson does: byte by byte, 500
 * binaries of 32 bytes took 1.6x js-bson's time, of 48 bytes 1.9x.
 */
function copyToTape(t, at, data, size, whole) {
  t.ops[at] = (t.ops[at] & ~0xff) | BINARY_BYTES;
  t.reserveBytes(size);
  if (size <= 16 || !whole) copyBytes(t.u8, t.bi, data, size);
  else t.u8.set(data, t.bi);
  t.bi += size;
}

/** Copies the first `n` (at most COPY_BINARY_MAX) bytes of the Uint8Array `src` into `u8` at `at`, one by one. */
function copyBytes(u8, at, src, n) {
  if (n === 16) {
    // (unrolled for UUIDs and other 16-byte values: 29 ns a value where the loop took 47)
    u8[at] = src[0];
    u8[at + 1] = src[1];
    u8[at + 2] = src[2];
    u8[at + 3] = src[3];
    u8[at + 4] = src[4];
    u8[at + 5] = src[5];
    u8[at + 6] = src[6];
    u8[at + 7] = src[7];
    u8[at + 8] = src[8];
    u8[at + 9] = src[9];
    u8[at + 10] = src[10];
    u8[at + 11] = src[11];
    u8[at + 12] = src[12];
    u8[at + 13] = src[13];
    u8[at + 14] = src[14];
    u8[at + 15] = src[15];
  } else {
    for (let j = 0; j < n; j++) u8[at + j] = src[j];
  }
}

/** js-bson's `buffer.set(value)` of an array-like that is not a real typed array. */
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

module.exports = {
  KEY_BYTES_MAX,
  KEY_INDEX,
  KEY_INLINE,
  KEY_STAGED,
  KEY_NOT_STRING,
  createTypes,
  notAString,
  writeEnd,
  writeSkip,
  writeNull,
  writeBoolean,
  writeNumber,
  writeString,
  stringArgOp,
  noteLatin1,
  LONG_ASCII,
  writeBigInt,
  writeDate,
  writeUint8Array,
  writeDocument
};
