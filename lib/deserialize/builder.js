'use strict';
// The tape builder: follows the decode tape the Rust reader wrote
// (ARCHITECTURE.md, "Decode tape") and builds the JS values, bound to one
// js-bson copy's classes. `build`'s switch has one case per tape op: the one
// place each BSON type is read back. The reader has validated everything and
// decided every type and option, so no case checks its input.
const { Buffer } = require('node:buffer');
const { tape } = require('./tape');
const { keys, cachedStrings, factories, arities, assignValue, dictionaryObject, runDefinitions } = require('./shapes');
const { F_PROMOTE_VALUES, F_PROMOTE_BUFFERS } = require('./options');
const { binaryByConstructors, binaryByFields } = require('../layout');
const { bufferView, typedArrayBuffer, typedArrayByteOffset } = require('../buffer-view');

// Op codes (see ARCHITECTURE.md).
const NUM = 0x01;
const STR = 0x02;
const TRUE = 0x03;
const FALSE = 0x04;
const NULL = 0x05;
const UNDEFINED = 0x06;
const INT32_OBJ = 0x07;
const DOUBLE_OBJ = 0x08;
const DATE = 0x09;
const LONG_OBJ = 0x0a;
const BIGINT = 0x0b;
const OID = 0x0c;
const DECIMAL128 = 0x0d;
const BINARY = 0x0e;
const REGEXP = 0x0f;
const SYMBOL = 0x10;
const TIMESTAMP = 0x11;
const MINKEY = 0x12;
const MAXKEY = 0x13;
const CODE = 0x14;
const DBPOINTER = 0x15;
const RAW = 0x16;
const STR_CACHED = 0x17;
const OBJ = 0x20;
const OBJ_DBREF = 0x21;
const OBJ_GENERIC = 0x22;
const OBJ_GENERIC_DBREF = 0x23;
const ARRAY = 0x24;
const CODE_W_SCOPE = 0x25;
const ARRAY_NUMS = 0x26;
const ARRAY_INTS = 0x27;
const ARRAY_OIDS = 0x28;
const ARRAY_DATES = 0x29;

// The value stack of tapes of at most YOUNG_STACK_OPS words, shared by every
// copy's builder (a longer tape gets a stack of its own: see build).
const stack = [];
const YOUNG_STACK_OPS = 1024;
// Set by the builder when a value on the stack is a view of the input buffer.
let retainsInput = false;

/**
 * Drops references to the last document's values: a long tape's stack goes
 * with it; a short one's values are overwritten by the next document, but
 * views into the input (Binary, raw) are dropped now.
 */
function releaseValues(bodyLen) {
  forgetInput();
  if (retainsInput && bodyLen <= YOUNG_STACK_OPS) {
    const st = stack;
    const n = st.length < bodyLen + 1 ? st.length : bodyLen + 1;
    for (let k = 0; k < n; k++) st[k] = undefined;
  }
  retainsInput = false;
}

// Packed arrays (small integers / doubles / objects) that arrays built
// straight from the tape are copied from, so a new array gets its final size
// and element kind at once.
const TEMPLATE_MAX = 65536;
const intTemplate = [];
const doubleTemplate = [];
const objectTemplate = [];
function packedArray(template, filler, n) {
  if (n > TEMPLATE_MAX) {
    const a = [];
    for (let k = 0; k < n; k++) a.push(filler);
    return a;
  }
  while (template.length < n) template.push(filler);
  return template.slice(0, n);
}

/**
 * input.subarray(start, end): for a Buffer, the Buffer over the same memory
 * that Node's Buffer#subarray makes (new FastBuffer(this.buffer,
 * this.byteOffset + start, length)), made with the input's ArrayBuffer and
 * offset read through the getters: Buffer#subarray's `this.buffer` went
 * through V8's generic load IC (a view: 137-145 ns -> 98-119 ns).
 */
function viewOf(input, start, end) {
  if (!(input instanceof Buffer)) return input.subarray(start, end);
  if (input !== viewInput) {
    viewBuffer = typedArrayBuffer.call(input);
    viewOffset = typedArrayByteOffset.call(input);
    viewInput = input;
  }
  return bufferView(viewBuffer, viewOffset + start, end - start);
}

// The input Buffer of the views just made, its ArrayBuffer and offset:
// read once per document, not once per binary (the `buffer` getter is a
// C++ builtin, ~7% of deserializing 1,000 UUIDs). Forgotten after each
// document (forgetInput), so that no input outlives its call here.
let viewInput = null;
let viewBuffer = null;
let viewOffset = 0;

function forgetInput() {
  viewInput = null;
  viewBuffer = null;
}

function getUint32LE(source, offset) {
  return source[offset] + source[offset + 1] * 256 + source[offset + 2] * 65536 + source[offset + 3] * 16777216;
}

function isDBRefLike(value) {
  return (
    value != null &&
    typeof value === 'object' &&
    '$id' in value &&
    value.$id != null &&
    '$ref' in value &&
    typeof value.$ref === 'string' &&
    (!('$db' in value) || ('$db' in value && typeof value.$db === 'string'))
  );
}

/** js-bson's RegExp flags from BSON regex options. */
function regExpFlags(options) {
  let flags = '';
  for (let k = 0; k < options.length; k++) {
    switch (options[k]) {
      case 'm':
        flags += 'm';
        break;
      case 's':
        flags += 'g';
        break;
      case 'i':
        flags += 'i';
        break;
    }
  }
  return flags;
}

/** Copies older than js-bson 6 do not export ByteUtils: the same Node logic. */
function byteUtilsOf(bson) {
  return (
    bson.ByteUtils ?? {
      toLocalBufferType(potentialBuffer) {
        if (Buffer.isBuffer(potentialBuffer)) return potentialBuffer;
        if (ArrayBuffer.isView(potentialBuffer)) {
          return Buffer.from(potentialBuffer.buffer, potentialBuffer.byteOffset, potentialBuffer.byteLength);
        }
        const stringTag = potentialBuffer?.[Symbol.toStringTag] ?? Object.prototype.toString.call(potentialBuffer);
        if (
          stringTag === 'ArrayBuffer' ||
          stringTag === 'SharedArrayBuffer' ||
          stringTag === '[object ArrayBuffer]' ||
          stringTag === '[object SharedArrayBuffer]'
        ) {
          return Buffer.from(potentialBuffer);
        }
        throw new bson.BSONError('Cannot create Buffer from the passed potentialBuffer.');
      },
      allocateUnsafe(size) {
        return Buffer.allocUnsafe(size);
      }
    }
  );
}

function createBuilder(bson, layout) {
  const { ObjectId, Long, Binary, UUID, Decimal128, Double, Int32, Code, DBRef } = bson;
  const { BSONRegExp, BSONSymbol, Timestamp, MinKey, MaxKey, BSONError } = bson;
  const ByteUtils = byteUtilsOf(bson);
  const oidFromInts = layout.objectIdFromInts;
  const oidPrototype = ObjectId.prototype;
  const binaryFields = layout.binaryFromFields;
  const binaryPrototype = Binary.prototype;
  const uuidPrototype = UUID.prototype;

  function toPotentialDbRef(doc) {
    if (isDBRefLike(doc)) {
      const { $ref, $id, $db, ...fields } = doc;
      return new DBRef($ref, $id, $db, fields);
    }
    return doc;
  }

  function copyBytes(input, offset, n) {
    const bytes = ByteUtils.allocateUnsafe(n);
    for (let k = 0; k < n; k++) bytes[k] = input[offset + k];
    return bytes;
  }

  /** The ObjectId whose four 24-bit ints the reader put on the tape (OID):
   * made the way `new ObjectId(input, offset)` makes it where the layout
   * probe found that equivalent, else from its 12 bytes, as older copies'
   * deserializers do. */
  function objectId(i0, i1, i2, i3) {
    if (oidFromInts) {
      const oid = Object.create(oidPrototype);
      oid.i0 = i0;
      oid.i1 = i1;
      oid.i2 = i2;
      oid.i3 = i3;
      return oid;
    }
    const b = ByteUtils.allocateUnsafe(12);
    b[0] = i0 >>> 16;
    b[1] = i0 >>> 8;
    b[2] = i0;
    b[3] = i1 >>> 16;
    b[4] = i1 >>> 8;
    b[5] = i1;
    b[6] = i2 >>> 16;
    b[7] = i2 >>> 8;
    b[8] = i2;
    b[9] = i3 >>> 16;
    b[10] = i3 >>> 8;
    b[11] = i3;
    return new ObjectId(b);
  }

  /**
   * Whether one of the n key words at ops[pc] is 0: a key the Rust reader
   * did not intern, in practice one never seen before (ids or dates as keys).
   */
  function hasFreshKey(ops, pc, n) {
    for (let k = 0; k < n; k++) if (ops[pc + k] === 0) return true;
    return false;
  }

  /**
   * A binary value: a view of the input, as js-bson's, in a Binary, or in
   * the UUID js-bson makes of a 16-byte subtype 4 (new Binary(view), then
   * toUUID() if UUID.isValid). Made as `Object.create` with the fields
   * assigned where the layout probe found that the same object (1,000 UUIDs:
   * 0.26x the time), else through the constructors. Outside build's switch:
   * in a process that has decoded many shapes, build's inlining budget is
   * spent and the view / the constructors were called out of line (a generic
   * construct stub); here they are inlined into one small function.
   */
  function binary(input, start, end, subType, promote) {
    const view = viewOf(input, start, end);
    if (promote) return ByteUtils.toLocalBufferType(view);
    if (binaryFields === null || !(view instanceof Buffer)) return binaryByConstructors(Binary, UUID, view, subType);
    return binaryByFields(binaryFields, binaryPrototype, uuidPrototype, view, subType);
  }

  /** Builds the document on the tape (body `bodyLen` words, then `defsLen` words of definitions). */
  function build(input, flags, bodyLen, defsLen) {
    const ops = tape.ops;
    const f64 = tape.f64;
    const i32 = tape.i32;
    const i64 = tape.i64;
    const S = tape.strings;
    // Definitions first.
    // (Most documents have no definitions: then the call is never made and
    // so not inlined, which leaves build's inlining budget to the value cases.)
    let si = defsLen === 0 ? 0 : runDefinitions(ops, 2 + bodyLen, 2 + bodyLen + defsLen, S);
    const promoteValues = (flags & F_PROMOTE_VALUES) !== 0;
    const promoteBuffers = (flags & F_PROMOTE_BUFFERS) !== 0;
    // A long tape gets a value stack of its own, new in this call: a store of
    // a new value (an object, a Date, a string made now) into the long-lived
    // shared stack is an old-to-new store and takes the write barrier's slow
    // path, which a store into a new array does not (orders_1000: 0.89-0.96x
    // the time; below 1,024 words the new array's growth cost as much as it saved).
    const st = bodyLen > YOUNG_STACK_OPS ? [] : stack;
    const end = 2 + bodyLen;
    let ni = 0;
    let sp = 0;
    let pc = 2;
    while (pc < end) {
      const w = ops[pc++];
      switch (w & 0xff) {
        case NUM: {
          // A run of consecutive numbers: doubles, int32s, promoted int64s.
          const runEnd = ni + (w >>> 8);
          while (ni < runEnd) st[sp++] = f64[ni++];
          break;
        }
        case STR:
          st[sp++] = S[si++];
          break;
        case STR_CACHED:
          st[sp++] = cachedStrings[w >>> 8];
          break;
        case OBJ: {
          const id = w >>> 8;
          sp -= arities[id];
          st[sp] = factories[id](st, sp);
          sp++;
          break;
        }
        case TRUE:
          st[sp++] = true;
          break;
        case FALSE:
          st[sp++] = false;
          break;
        case NULL:
          st[sp++] = null;
          break;
        case OID: {
          const k = 2 * ni;
          ni += 2;
          st[sp++] = objectId(i32[k], i32[k + 1], i32[k + 2], i32[k + 3]);
          break;
        }
        case ARRAY_NUMS: {
          // An array of numbers, built directly (unboxed doubles).
          const n = w >>> 8;
          const a = packedArray(doubleTemplate, 0.5, n);
          for (let k = 0; k < n; k++) a[k] = f64[ni + k];
          ni += n;
          st[sp++] = a;
          break;
        }
        case ARRAY_INTS: {
          // An array of int32 values: small-integer elements, like js-bson's.
          const n = w >>> 8;
          const a = packedArray(intTemplate, 0, n);
          for (let k = 0; k < n; k++) a[k] = f64[ni + k] | 0;
          ni += n;
          st[sp++] = a;
          break;
        }
        case ARRAY_OIDS: {
          // An array of ObjectIds, built directly: not through the value stack
          // (a store of a new object into the shared stack takes the write barrier's slow path)
          const n = w >>> 8;
          const a = packedArray(objectTemplate, null, n);
          for (let k = 0; k < n; k++) {
            const j = 2 * ni;
            ni += 2;
            a[k] = objectId(i32[j], i32[j + 1], i32[j + 2], i32[j + 3]);
          }
          st[sp++] = a;
          break;
        }
        case ARRAY_DATES: {
          // An array of Dates, built directly (as ARRAY_OIDS)
          const n = w >>> 8;
          const a = packedArray(objectTemplate, null, n);
          for (let k = 0; k < n; k++) a[k] = new Date(f64[ni++]);
          st[sp++] = a;
          break;
        }
        case ARRAY: {
          const n = ops[pc++];
          sp -= n;
          st[sp] = n === 0 ? [] : st.slice(sp, sp + n); // (see small.js makeArray)
          sp++;
          break;
        }
        case DATE:
          st[sp++] = new Date(f64[ni++]);
          break;
        case OBJ_GENERIC:
        case OBJ_GENERIC_DBREF: {
          const n = ops[pc++];
          sp -= n;
          let o = hasFreshKey(ops, pc, n) ? dictionaryObject() : {};
          for (let k = 0; k < n; k++) {
            const kw = ops[pc++];
            assignValue(o, kw === 0 ? S[si++] : keys[kw - 1], st[sp + k]);
          }
          if ((w & 0xff) === OBJ_GENERIC_DBREF) o = toPotentialDbRef(o);
          st[sp++] = o;
          break;
        }
        case OBJ_DBREF: {
          const id = w >>> 8;
          sp -= arities[id];
          st[sp] = toPotentialDbRef(factories[id](st, sp));
          sp++;
          break;
        }
        case UNDEFINED:
          st[sp++] = undefined;
          break;
        case INT32_OBJ:
          st[sp++] = new Int32(f64[ni++]);
          break;
        case DOUBLE_OBJ:
          st[sp++] = new Double(f64[ni++]);
          break;
        case LONG_OBJ: {
          // int64 as a Long (promoted int64s arrive as NUM, bigints as BIGINT)
          const k = 2 * ni++;
          st[sp++] = new Long(i32[k], i32[k + 1]);
          break;
        }
        case BIGINT:
          st[sp++] = i64[ni++];
          break;
        case DECIMAL128:
          st[sp++] = new Decimal128(copyBytes(input, ops[pc++], 16));
          break;
        case BINARY: {
          const offset = ops[pc++];
          retainsInput = true;
          st[sp++] = binary(input, offset, offset + ops[pc++], w >>> 8, promoteBuffers && promoteValues);
          break;
        }
        case REGEXP: {
          const source = S[si++];
          const options = S[si++];
          st[sp++] = w >>> 8 === 1 ? new BSONRegExp(source, options) : new RegExp(source, regExpFlags(options));
          break;
        }
        case SYMBOL: {
          const symbol = S[si++];
          st[sp++] = promoteValues ? symbol : new BSONSymbol(symbol);
          break;
        }
        case TIMESTAMP: {
          const offset = ops[pc++];
          st[sp++] = new Timestamp({ i: getUint32LE(input, offset), t: getUint32LE(input, offset + 4) });
          break;
        }
        case MINKEY:
          st[sp++] = new MinKey();
          break;
        case MAXKEY:
          st[sp++] = new MaxKey();
          break;
        case CODE:
          st[sp++] = new Code(S[si++]);
          break;
        case DBPOINTER: {
          const namespace = S[si++];
          st[sp++] = new DBRef(namespace, new ObjectId(copyBytes(input, ops[pc++], 12)));
          break;
        }
        case RAW: {
          const offset = ops[pc++];
          retainsInput = true;
          st[sp++] = viewOf(input, offset, offset + ops[pc++]);
          break;
        }
        case CODE_W_SCOPE: {
          const scope = st[--sp];
          const code = st[sp - 1];
          st[sp - 1] = new Code(code, scope);
          break;
        }
        default:
          throw new BSONError('bson-rs internal error: unknown tape op ' + (w & 0xff));
      }
    }
    return st[0];
  }

  return { build, binary, objectId, ByteUtils, regExpFlags };
}

module.exports = { createBuilder, releaseValues, forgetInput, regExpFlags };
