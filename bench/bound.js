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

// ---------- deserialize ----------
// The deserialize bound: what js-bson's deserialize must do with a document's
// bytes (default options), in one pass of tight JS: check each size and
// terminator as it reads them, find each key's NUL, make the key and value
// strings (ASCII by a Latin-1 slice, others decoded as UTF-8 with js-bson's
// validation), make each value (numbers; a Date, ObjectId, Binary or Long
// through js-bson's constructors) and build each object in key order. Keys and
// string values are remembered by their position in the document (a byte
// compare finds them again in a document of the same shape, as bson-rs's
// readers do), and an object is built by assignment, so no code is generated.
// It takes the types of the peers' documents and throws on any other (and on
// the `$ref` / `$id` / `$db` and `__proto__` keys, which js-bson treats
// specially): peers.js then reports "n/a". It leaves out js-bson's option
// handling and its error messages for malformed input.

const MEMO_SLOTS = 4096;

/** The deserialize bound for js-bson copy `bson`: (bytes) => document. */
function createDeserializeBound(bson) {
  const { ObjectId, Binary, Long, UUID } = bson;
  const { isUtf8 } = require('node:buffer');
  const keyMemo = new Array(MEMO_SLOTS).fill('');
  const valueMemo = new Array(MEMO_SLOTS).fill('');
  const f64 = new Float64Array(1);
  const f64Bytes = new Uint8Array(f64.buffer);
  let at = 0; // the read position
  let slot = 0; // the element ordinal in the document (its memo slot)

  function int32(buf, i) {
    return buf[i] | (buf[i + 1] << 8) | (buf[i + 2] << 16) | (buf[i + 3] << 24);
  }

  /** buf[start, end) as a string, from memos[k] when that holds the same ASCII bytes. */
  function text(memos, k, buf, start, end, validate) {
    const memo = memos[k];
    const n = end - start;
    let ascii = true;
    if (memo.length === n) {
      let i = 0;
      while (i < n && memo.charCodeAt(i) === buf[start + i]) i++;
      if (i === n) return memo;
    }
    for (let i = start; i < end; i++) {
      if (buf[i] >= 0x80) {
        ascii = false;
        break;
      }
    }
    if (ascii) return (memos[k] = buf.latin1Slice(start, end));
    if (validate && !isUtf8(buf.subarray(start, end))) throw new Error('bound: invalid UTF-8');
    return buf.utf8Slice(start, end);
  }

  /** The document or array whose elements start at `at` and whose last byte (its 0) is at `last`. */
  function readObject(buf, last, isArray) {
    const out = isArray ? [] : {};
    for (;;) {
      const type = buf[at++];
      if (type === 0) {
        if (at - 1 !== last) throw new Error('bound: bad document size');
        return out;
      }
      const k = slot++ & (MEMO_SLOTS - 1);
      const keyStart = at;
      while (buf[at] !== 0) {
        if (at >= last) throw new Error('bound: illegal CString');
        at++;
      }
      let key = null;
      if (!isArray) {
        key = text(keyMemo, k, buf, keyStart, at, false);
        if (key.charCodeAt(0) === 36 && (key === '$ref' || key === '$id' || key === '$db')) throw new Error('bound: DBRef keys');
        if (key === '__proto__') throw new Error('bound: __proto__ key');
      }
      at++;
      const value = readValue(buf, type, k, last);
      if (isArray) out.push(value);
      else out[key] = value;
    }
  }

  function readValue(buf, type, k, last) {
    switch (type) {
      case 0x01: {
        if (at + 8 > last) throw new Error('bound: bad double');
        for (let i = 0; i < 8; i++) f64Bytes[i] = buf[at + i];
        at += 8;
        return f64[0];
      }
      case 0x02: {
        const size = int32(buf, at);
        const start = at + 4;
        if (size <= 0 || size > last - start || buf[start + size - 1] !== 0) throw new Error('bound: bad string length');
        at = start + size;
        return text(valueMemo, k, buf, start, start + size - 1, true);
      }
      case 0x03:
      case 0x04: {
        const size = int32(buf, at);
        if (size < 5 || size > last - at + 1) throw new Error('bound: bad embedded size');
        const end = at + size - 1;
        at += 4;
        const value = readObject(buf, end, type === 0x04);
        at = end + 1;
        return value;
      }
      case 0x05: {
        const size = int32(buf, at);
        const subType = buf[at + 4];
        const start = at + 5;
        if (size < 0 || size > last - start || subType === 2) throw new Error('bound: binary');
        at = start + size;
        const value = new Binary(buf.subarray(start, start + size), subType);
        return subType === 4 && UUID.isValid(value) ? value.toUUID() : value;
      }
      case 0x07: {
        if (at + 12 > last) throw new Error('bound: ObjectId');
        const value = new ObjectId(buf, at);
        at += 12;
        return value;
      }
      case 0x08: {
        const b = buf[at++];
        if (b > 1) throw new Error('bound: boolean');
        return b === 1;
      }
      case 0x09: {
        const low = int32(buf, at);
        const high = int32(buf, at + 4);
        at += 8;
        return new Date(high * 4294967296 + (low >>> 0));
      }
      case 0x0a:
        return null;
      case 0x10: {
        const value = int32(buf, at);
        at += 4;
        return value;
      }
      case 0x12: {
        const low = int32(buf, at);
        const high = int32(buf, at + 4);
        at += 8;
        const n = high * 4294967296 + (low >>> 0);
        return n >= -9007199254740992 && n <= 9007199254740992 ? n : new Long(low, high);
      }
      default:
        throw new Error(`bound: unsupported type ${type}`);
    }
  }

  return function deserializeBound(buf) {
    const n = buf.length;
    if (n < 5 || int32(buf, 0) !== n || buf[n - 1] !== 0) throw new Error('bound: bad document size');
    at = 4;
    slot = 0;
    return readObject(buf, n - 1, false);
  };
}

module.exports = { sizeBound, serializeBound, createDeserializeBound, utf8Length };
