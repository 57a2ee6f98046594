'use strict';
// The "semantic bound" of issue #11 for calculateObjectSize (and a lower bound
// for serialize): the reads that js-bson's semantics require, done in the
// tightest JS we could write, and nothing else.
//
// What js-bson must do for a document (bson 7.3 calculateObjectSize), and so
// what this does:
//   - per object: Array.isArray, a `toBSON` read (called if it is a function),
//     Object.keys (arrays: indices 0..length-1, whose key sizes are digit counts);
//   - per value: read it once, dispatch on typeof;
//   - strings (values and keys): their UTF-8 byte length;
//   - numbers: integer / int32 range test (int32 vs double);
//   - objects: `toBSON`, `_bsontype` (plus the BSON-version symbol for BSON
//     values), then the few fields whose size varies (Binary sub_type and
//     position, Code code/scope, BSONRegExp pattern/options, RegExp source and
//     flags, BSONSymbol value, DBRef collection/oid/fields/db), Date and
//     ArrayBuffer views by instanceof / ArrayBuffer.isView.
// What it leaves out (so the bound is a little below what js-bson's semantics
// cost): the circular-structure check (js-bson keeps the path of ancestors in a
// Set), Map documents, BSON-version errors' details, serializeFunctions and
// ignoreUndefined (default options only), and prototype-patched primitives
// (`toBSON` is read on objects only). Recursion instead of an explicit stack.
//
// sizeBound(doc) === bson.calculateObjectSize(doc) for the benchmark documents
// (peers.js checks it before timing and reports "n/a" otherwise).

const VERSION = Symbol.for('@@mdb.bson.version');

/** UTF-8 byte length: a charCode loop for short strings, Buffer.byteLength (native, what js-bson calls) for long ones. */
function utf8Length(s) {
  const n = s.length;
  if (n > 32) return Buffer.byteLength(s, 'utf8');
  let bytes = n;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x80) bytes += c < 0x800 ? 1 : (c & 0xf800) === 0xd800 ? 1 : 2; // a surrogate pair: 2 units, 4 bytes
  }
  return bytes;
}

function digits(i) {
  return i < 10 ? 1 : i < 100 ? 2 : i < 1000 ? 3 : i < 10000 ? 4 : i < 100000 ? 5 : String(i).length;
}

/** Size of a document or array (4-byte length + elements + NUL). */
function objectSize(obj) {
  let total = 5;
  if (Array.isArray(obj)) {
    for (let i = 0, n = obj.length; i < n; i++) total += 1 + digits(i) + 1 + valueSize(obj[i], true);
    return total;
  }
  const toBSON = obj.toBSON;
  if (typeof toBSON === 'function') obj = obj.toBSON();
  const keys = Object.keys(obj);
  for (let k = 0, n = keys.length; k < n; k++) {
    const key = keys[k];
    const v = valueSize(obj[key], false);
    if (v >= 0) total += 1 + utf8Length(key) + 1 + v;
  }
  return total;
}

/** Size of one value after its type byte and key (-1: not written). */
function valueSize(value, inArray) {
  switch (typeof value) {
    case 'string':
      return 4 + utf8Length(value) + 1;
    case 'number':
      return Math.floor(value) === value && value >= -2147483648 && value <= 2147483647 && !Object.is(value, -0) ? 4 : 8;
    case 'boolean':
      return 1;
    case 'undefined':
      return 0; // default ignoreUndefined = false: written as null
    case 'bigint':
      return 8;
    case 'object':
      return objectValueSize(value);
    case 'function':
    case 'symbol':
      return inArray ? 0 : -1;
    default:
      throw new Error(`bound: unsupported ${typeof value}`);
  }
}

function objectValueSize(value) {
  if (value === null) return 0;
  const toBSON = value.toBSON;
  if (typeof toBSON === 'function') return valueSizeAfterToBSON(value.toBSON());
  const type = value._bsontype;
  if (typeof type === 'string') {
    if (value[VERSION] !== 7) throw new Error('bound: BSON version');
    switch (type) {
      case 'ObjectId':
        return 12;
      case 'Long':
      case 'Double':
      case 'Timestamp':
        return 8;
      case 'Int32':
        return 4;
      case 'Decimal128':
        return 16;
      case 'MinKey':
      case 'MaxKey':
        return 0;
      case 'Binary':
        return value.sub_type === 2 ? value.position + 9 : value.position + 5;
      case 'Code': {
        const code = value.code;
        const scope = value.scope;
        return scope != null && typeof scope === 'object' ? 4 + 4 + utf8Length(code) + 1 + objectSize(scope) : 4 + utf8Length(code) + 1;
      }
      case 'BSONRegExp':
        return utf8Length(value.pattern) + 1 + utf8Length(value.options) + 1;
      case 'BSONSymbol':
        return 4 + utf8Length(value.value) + 1;
      case 'DBRef': {
        const ordered = Object.assign({ $ref: value.collection, $id: value.oid }, value.fields);
        if (value.db != null) ordered.$db = value.db;
        return objectSize(ordered);
      }
      default:
        throw new Error(`bound: unsupported _bsontype ${type}`);
    }
  }
  if (value instanceof Date) return 8;
  if (ArrayBuffer.isView(value) || value instanceof ArrayBuffer) return 5 + value.byteLength;
  if (value instanceof RegExp) return utf8Length(value.source) + 1 + (value.global ? 1 : 0) + (value.ignoreCase ? 1 : 0) + (value.multiline ? 1 : 0) + 1;
  return objectSize(value);
}

function valueSizeAfterToBSON(value) {
  return valueSize(value, false);
}

/** The bound: calculateObjectSize's result, computed with only the reads js-bson's semantics require. */
function sizeBound(doc) {
  return objectSize(doc);
}

// ---------- serialize: the same reads, plus writing the bytes ----------
// A tight one-pass serializer for the common types (strings, numbers,
// booleans, null/undefined, objects, arrays, ObjectId, Date, Long, Int32,
// Double, Binary subtype 0, Decimal128): writes into one scratch buffer
// (js-bson's 17 MiB one, too) and copies the result out to a new Buffer of
// the exact size, as js-bson does. Any other type throws (the row is then
// "n/a"). Same omissions as above (no circular check; default options; no
// check for NUL in keys).
const SCRATCH = Buffer.allocUnsafe(17 * 1024 * 1024);
const F64 = new Float64Array(1);
const F64B = new Uint8Array(F64.buffer);
const hasUtf8Write = typeof SCRATCH.utf8Write === 'function';

function writeCString(buf, at, s) {
  const n = s.length;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x80) {
      const from = at - i;
      const written = hasUtf8Write ? buf.utf8Write(s, from) : buf.write(s, from, 'utf8');
      buf[from + written] = 0;
      return from + written + 1;
    }
    buf[at++] = c;
  }
  buf[at++] = 0;
  return at;
}
function writeInt32(buf, at, v) {
  buf[at] = v;
  buf[at + 1] = v >>> 8;
  buf[at + 2] = v >>> 16;
  buf[at + 3] = v >>> 24;
  return at + 4;
}
function writeString(buf, at, s) {
  const start = at;
  at += 4;
  const n = s.length;
  let ascii = n <= 32;
  if (ascii) {
    for (let i = 0; i < n; i++) {
      const c = s.charCodeAt(i);
      if (c >= 0x80) {
        ascii = false;
        break;
      }
      buf[at + i] = c;
    }
  }
  const bytes = ascii ? n : hasUtf8Write ? buf.utf8Write(s, at) : buf.write(s, at, 'utf8');
  at += bytes;
  buf[at++] = 0;
  writeInt32(buf, start, bytes + 1);
  return at;
}
function writeDouble(buf, at, v) {
  F64[0] = v;
  for (let i = 0; i < 8; i++) buf[at + i] = F64B[i];
  return at + 8;
}
function writeKey(buf, at, type, key) {
  buf[at++] = type;
  return writeCString(buf, at, key);
}
function writeArrayKey(buf, at, type, i) {
  buf[at++] = type;
  if (i < 10) buf[at++] = 48 + i;
  else if (i < 100) {
    buf[at++] = 48 + ((i / 10) | 0);
    buf[at++] = 48 + (i % 10);
  } else {
    const s = String(i);
    for (let k = 0; k < s.length; k++) buf[at++] = s.charCodeAt(k);
  }
  buf[at++] = 0;
  return at;
}

function writeObject(buf, at, obj) {
  const start = at;
  at += 4;
  if (Array.isArray(obj)) {
    for (let i = 0, n = obj.length; i < n; i++) at = writeElement(buf, at, null, i, obj[i]);
  } else {
    if (typeof obj.toBSON === 'function') obj = obj.toBSON();
    const keys = Object.keys(obj);
    for (let k = 0, n = keys.length; k < n; k++) at = writeElement(buf, at, keys[k], 0, obj[keys[k]]);
  }
  buf[at++] = 0;
  writeInt32(buf, start, at - start);
  return at;
}

/** Type byte and key (or array index i when key is null). */
function writeHead(buf, at, key, i, type) {
  return key === null ? writeArrayKey(buf, at, type, i) : writeKey(buf, at, type, key);
}

/** One element: key (or array index i when key is null) and value. */
function writeElement(buf, at, key, i, value) {
  switch (typeof value) {
    case 'string':
      return writeString(buf, writeHead(buf, at, key, i, 0x02), value);
    case 'number':
      if (Math.floor(value) === value && value >= -2147483648 && value <= 2147483647 && !Object.is(value, -0)) return writeInt32(buf, writeHead(buf, at, key, i, 0x10), value);
      return writeDouble(buf, writeHead(buf, at, key, i, 0x01), value);
    case 'boolean': {
      const p = writeHead(buf, at, key, i, 0x08);
      buf[p] = value ? 1 : 0;
      return p + 1;
    }
    case 'undefined':
      return writeHead(buf, at, key, i, 0x0a);
    case 'object':
      break;
    case 'function':
    case 'symbol':
      return at;
    default:
      throw new Error(`bound: unsupported ${typeof value}`);
  }
  if (value === null) return writeHead(buf, at, key, i, 0x0a);
  if (typeof value.toBSON === 'function') return writeElement(buf, at, key, i, value.toBSON());
  const type = value._bsontype;
  if (typeof type === 'string') {
    if (value[VERSION] !== 7) throw new Error('bound: BSON version');
    switch (type) {
      case 'ObjectId': {
        const p = writeHead(buf, at, key, i, 0x07);
        const id = value.id;
        for (let k = 0; k < 12; k++) buf[p + k] = id[k];
        return p + 12;
      }
      case 'Long':
        return writeInt32(buf, writeInt32(buf, writeHead(buf, at, key, i, 0x12), value.low), value.high);
      case 'Int32':
        return writeInt32(buf, writeHead(buf, at, key, i, 0x10), value.value);
      case 'Double':
        return writeDouble(buf, writeHead(buf, at, key, i, 0x01), value.value);
      case 'Decimal128': {
        const p = writeHead(buf, at, key, i, 0x13);
        buf.set(value.bytes, p);
        return p + 16;
      }
      case 'Binary': {
        if (value.sub_type !== 0) throw new Error('bound: Binary subtype');
        const n = value.position;
        const p = writeInt32(buf, writeHead(buf, at, key, i, 0x05), n);
        buf[p] = 0;
        buf.set(n === value.buffer.length ? value.buffer : value.buffer.subarray(0, n), p + 1);
        return p + 1 + n;
      }
      default:
        throw new Error(`bound: unsupported _bsontype ${type}`);
    }
  }
  if (value instanceof Date) {
    const t = value.getTime();
    const p = writeHead(buf, at, key, i, 0x09);
    const low = t % 4294967296 | 0;
    const high = Math.floor(t / 4294967296) | 0;
    return writeInt32(buf, writeInt32(buf, p, low), high);
  }
  if (ArrayBuffer.isView(value) || value instanceof ArrayBuffer || value instanceof RegExp) throw new Error('bound: unsupported object');
  return writeObject(buf, writeHead(buf, at, key, i, Array.isArray(value) ? 0x04 : 0x03), value);
}

/** The serialize bound: js-bson's bytes, with the reads its semantics require plus the writes, in one pass. */
function serializeBound(doc) {
  const n = writeObject(SCRATCH, 0, doc);
  const out = Buffer.allocUnsafe(n);
  SCRATCH.copy(out, 0, 0, n);
  return out;
}

module.exports = { sizeBound, serializeBound, utf8Length };
