'use strict';
// deserialize / deserializeStream: option handling (mirrors js-bson's
// deserializer.ts) and the tape builder. The Rust reader (core/src/decode.rs)
// validates the whole document and writes a tape (ARCHITECTURE.md, "Decode
// tape"); this file only follows it, so it never sees malformed input.
const { Buffer } = require('node:buffer');
const { layoutOf } = require('./layout');
const { addon, SLOT, ensureScratch, shrinkScratch } = require('./native');

// ---------------------------------------------------------------------------
// Per-environment state shared by every js-bson copy's deserializer: the Rust
// key/shape caches are per environment, so the JS tables mirroring them are too.

const MIN_OPS_BYTES = 64 * 1024;
const MIN_NUMS_BYTES = 64 * 1024;
// After a document needed more than this, the scratch goes back to the default size.
const SHRINK_ABOVE = 8 * 1024 * 1024;

let ops;
let f64;
let i32;
let i64;
// byte lengths of the two scratch buffers (plain numbers: cheaper to test than byteLength)
let opsBytes = 0;
let numsBytes = 0;
function refreshOps(bytes) {
  ops = new Uint32Array(ensureScratch(SLOT.decOps, bytes));
  opsBytes = ops.byteLength;
}
function refreshNums(bytes) {
  const buffer = ensureScratch(SLOT.decNums, bytes);
  numsBytes = buffer.byteLength;
  f64 = new Float64Array(buffer);
  i32 = new Int32Array(buffer);
  i64 = new BigInt64Array(buffer);
}
refreshOps(MIN_OPS_BYTES);
refreshNums(MIN_NUMS_BYTES);

// Decoded strings arrive here, in consumption order, before decode() returns.
let strings = [];
let stringCount = 0;
function sink() {
  const n = arguments.length;
  const base = stringCount;
  for (let k = 0; k < n; k++) strings[base + k] = arguments[k];
  stringCount = base + n;
}

// When this module is evaluated more than once over the same addon instance
// (a test runner resetting its module registry), each copy re-registers its
// scratch buffers and sink before decoding; the addon then forgets what the
// other copy was told.
const self = {};
// Which copy the addon currently serves: a plain object hung on the addon once
// (the addon object itself has slow, dictionary-mode properties).
if (addon.__bsonRsOwner === undefined) addon.__bsonRsOwner = { decoder: null };
const owner = addon.__bsonRsOwner;
const nativeDecode = addon.decode;
function claimAddon() {
  addon.setScratch(SLOT.decOps, ops.buffer);
  addon.setScratch(SLOT.decNums, f64.buffer);
  addon.setSink(sink);
  owner.decoder = self;
}
claimAddon();

// Dense arrays (never holey past their length): a sparse write would turn
// them into hash-table ("dictionary") elements, slow to read.
const keys = []; // key id -> key string
const cachedStrings = new Array(4096).fill(''); // value-cache slot -> string
const factories = []; // shape id -> (stack, base) => object
const arities = []; // shape id -> key count
let stack = [];
// Set by the builder when a value on the stack is a view of the input buffer.
let retainsInput = false;

let codeGeneration = true;
try {
  codeGeneration = new Function('return 1')() === 1;
} catch {
  codeGeneration = false;
}

// js-bson's assignValue: never let a "__proto__" key set the prototype.
function assignValue(dest, name, value) {
  if (name === '__proto__') {
    Object.defineProperty(dest, name, { value, writable: true, enumerable: true, configurable: true });
  } else {
    dest[name] = value;
  }
}

// Property names of objects seen as prototypes of a fieldsAsRaw object
// (in practice Object.prototype), listed once: names added to such a
// prototype later are not seen.
const protoNames = new WeakMap();
const rawNamesMemo = new WeakMap();
function protoNamesOf(proto) {
  let names = protoNames.get(proto);
  if (names === undefined) {
    names = Object.getOwnPropertyNames(proto);
    protoNames.set(proto, names);
  }
  return names;
}

// Packed arrays (small integers / doubles) that number arrays are copied
// from, so a new array gets its final size and element kind at once.
const TEMPLATE_MAX = 65536;
const intTemplate = [];
const doubleTemplate = [];
function numberArray(template, filler, n) {
  if (n > TEMPLATE_MAX) {
    const a = [];
    for (let k = 0; k < n; k++) a.push(filler);
    return a;
  }
  while (template.length < n) template.push(filler);
  return template.slice(0, n);
}

function setDense(array, index, value) {
  while (array.length < index) array.push(undefined);
  array[index] = value;
}

// A shape's factory builds its first objects with a loop; its code is
// generated (`new Function`) only once it has built COMPILE_AFTER objects, so
// key sequences that recur only a few times (dynamic keys) never pay for a
// compilation.
const COMPILE_AFTER = 8;

function compileFactory(names) {
  const n = names.length;
  let src = 'return {';
  for (let k = 0; k < n; k++) {
    const quoted = JSON.stringify(names[k]);
    // A computed key defines an own property, even for "__proto__".
    src += (names[k] === '__proto__' ? '[' + quoted + ']' : quoted) + ':s[b' + (k === 0 ? '' : '+' + k) + '],';
  }
  src += '};';
  try {
    return new Function('s', 'b', src);
  } catch {
    codeGeneration = false;
    return null;
  }
}

// The factory for shape `id` (stored in factories[id] by the caller).
function makeFactory(id, names) {
  const n = names.length;
  let uses = 0;
  const loop = function (s, b) {
    if (++uses === COMPILE_AFTER && codeGeneration && factories[id] === loop) {
      const compiled = compileFactory(names);
      if (compiled !== null) {
        factories[id] = compiled;
        return compiled(s, b);
      }
    }
    const o = {};
    for (let k = 0; k < n; k++) assignValue(o, names[k], s[b + k]);
    return o;
  };
  return loop;
}

let utf8Cause;
function invalidUtf8Cause() {
  if (utf8Cause === undefined) {
    try {
      new TextDecoder('utf8', { fatal: true }).decode(new Uint8Array([0xff]));
    } catch (e) {
      utf8Cause = e;
    }
  }
  return utf8Cause;
}

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
const OBJ = 0x20;
const OBJ_DBREF = 0x21;
const OBJ_GENERIC = 0x22;
const OBJ_GENERIC_DBREF = 0x23;
const ARRAY = 0x24;
const CODE_W_SCOPE = 0x25;
const ARRAY_NUMS = 0x26;
const ARRAY_INTS = 0x27;
const STR_CACHED = 0x17;
const DEF_KEY = 0x30;
const DEF_SHAPE = 0x31;

// Flags.
const F_PROMOTE_LONGS = 1;
const F_PROMOTE_VALUES = 2;
const F_PROMOTE_BUFFERS = 4;
const F_USE_BIGINT64 = 8;
const F_BSON_REGEXP = 16;
const F_RAW = 32;
const F_ALLOW_SMALLER = 64;
const F_UTF8 = 128;
const F_UTF8_MAP = 256;
const DEFAULT_FLAGS = F_PROMOTE_LONGS | F_PROMOTE_VALUES | F_UTF8;

function getInt32LE(source, offset) {
  return source[offset] | (source[offset + 1] << 8) | (source[offset + 2] << 16) | (source[offset + 3] << 24);
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

function isOptionsError(value) {
  return value !== undefined;
}

module.exports = function createDeserializer(bson) {
  const {
    ObjectId,
    Long,
    Binary,
    UUID,
    Decimal128,
    Double,
    Int32,
    Code,
    DBRef,
    BSONRegExp,
    BSONSymbol,
    Timestamp,
    MinKey,
    MaxKey,
    BSONError
  } = bson;
  // Copies older than js-bson 6 do not export ByteUtils: use the same Node logic.
  const ByteUtils = bson.ByteUtils ?? {
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
      throw new BSONError('Cannot create Buffer from the passed potentialBuffer.');
    },
    allocateUnsafe(size) {
      return Buffer.allocUnsafe(size);
    }
  };
  const jsDeserialize = bson.deserialize;

  const oidAtOffset = layoutOf(bson).objectIdTakesOffset;

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

  function fail(message, flags) {
    // js-bson builds each RegExp as it reads it, so an invalid one read before
    // the error found by the Rust reader throws first.
    for (let k = 0; k + 1 < stringCount; k += 2) {
      if (flags & F_BSON_REGEXP) new BSONRegExp(strings[k], strings[k + 1]);
      else new RegExp(strings[k], regExpFlags(strings[k + 1]));
    }
    if (message.charCodeAt(0) === 1) throw new RangeError(message.slice(1));
    if (message === 'Invalid UTF-8 string in BSON document') {
      throw new BSONError(message, { cause: invalidUtf8Cause() });
    }
    throw new BSONError(message);
  }

  // The checks internalDeserialize makes before deserializeObject reads the
  // options; used only to order errors like js-bson when an option is invalid.
  function headerChecks(buffer, index, allowSmaller) {
    const size = getInt32LE(buffer, index);
    if (size < 5) throw new BSONError(`bson size must be >= 5, is ${size}`);
    if (allowSmaller && buffer.length < size) {
      throw new BSONError(`buffer length ${buffer.length} must be >= bson size ${size}`);
    }
    if (!allowSmaller && buffer.length !== size) {
      throw new BSONError(`buffer length ${buffer.length} must === bson size ${size}`);
    }
    if (size + index > buffer.byteLength) {
      throw new BSONError(
        `(bson size ${size} + options.index ${index} must be <= buffer length ${buffer.byteLength})`
      );
    }
    if (buffer[index + size - 1] !== 0) {
      throw new BSONError("One object, sized correctly, with a spot for an EOO, but the EOO isn't 0x00");
    }
  }

  /**
   * Names `n` for which `fieldsAsRaw[n]` is truthy, own or inherited, each
   * preceded by a NUL, for the native side (a BSON key never contains NUL).
   */
  function rawNamesOf(fieldsAsRaw) {
    // Reuse the last answer for this object while its own properties and
    // prototype are unchanged (the prototypes' names are listed once anyway).
    const own = Object.getOwnPropertyNames(fieldsAsRaw);
    const proto = Object.getPrototypeOf(fieldsAsRaw);
    const memo = rawNamesMemo.get(fieldsAsRaw);
    if (memo !== undefined && memo.proto === proto && memo.own.length === own.length) {
      let same = true;
      for (let k = 0; k < own.length; k++) {
        if (own[k] !== memo.own[k] || !fieldsAsRaw[own[k]] !== !memo.truthy[k]) {
          same = false;
          break;
        }
      }
      if (same) return memo.names;
    }
    const names = computeRawNames(fieldsAsRaw);
    const truthy = own.map(name => !!fieldsAsRaw[name]);
    rawNamesMemo.set(fieldsAsRaw, { proto, own, truthy, names });
    return names;
  }

  function computeRawNames(fieldsAsRaw) {
    let names = '';
    for (let o = fieldsAsRaw; o != null; o = Object.getPrototypeOf(o)) {
      const own = o === fieldsAsRaw ? Object.getOwnPropertyNames(o) : protoNamesOf(o);
      for (let k = 0; k < own.length; k++) {
        const name = own[k];
        // Skip names shadowed by an object nearer in the chain (seen already).
        let shadowed = false;
        for (let p = fieldsAsRaw; p !== o; p = Object.getPrototypeOf(p)) {
          if (Object.prototype.hasOwnProperty.call(p, name)) {
            shadowed = true;
            break;
          }
        }
        if (shadowed || name.includes('\0') || !fieldsAsRaw[name]) continue;
        names += '\0' + name;
      }
    }
    return names;
  }

  function build(input, flags, bodyLen, defsLen) {
    // Definitions first.
    let pc = 2 + bodyLen;
    const defsEnd = pc + defsLen;
    let si = 0;
    const S = strings;
    while (pc < defsEnd) {
      const w = ops[pc++];
      const op = w & 0xff;
      if (op === DEF_KEY) {
        setDense(keys, w >>> 8, S[si++]);
      } else if (op !== DEF_SHAPE) {
        cachedStrings[w >>> 8] = S[si++];
      } else {
        const id = w >>> 8;
        const n = ops[pc++];
        const names = new Array(n);
        for (let k = 0; k < n; k++) names[k] = keys[ops[pc++]];
        setDense(factories, id, makeFactory(id, names));
        setDense(arities, id, n);
      }
    }
    const promoteValues = (flags & F_PROMOTE_VALUES) !== 0;
    const promoteBuffers = (flags & F_PROMOTE_BUFFERS) !== 0;
    const st = stack;
    const end = 2 + bodyLen;
    let ni = 0;
    let sp = 0;
    pc = 2;
    while (pc < end) {
      const w = ops[pc++];
      switch (w & 0xff) {
        case NUM: {
          // A run of consecutive numbers.
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
        case OID:
          st[sp++] = oidAtOffset ? new ObjectId(input, ops[pc++]) : new ObjectId(copyBytes(input, ops[pc++], 12));
          break;
        case ARRAY_NUMS: {
          // An array of numbers, built directly (unboxed doubles).
          const n = w >>> 8;
          const a = numberArray(doubleTemplate, 0.5, n);
          for (let k = 0; k < n; k++) a[k] = f64[ni + k];
          ni += n;
          st[sp++] = a;
          break;
        }
        case ARRAY_INTS: {
          // An array of int32 values: small-integer elements, like js-bson's.
          const n = w >>> 8;
          const a = numberArray(intTemplate, 0, n);
          for (let k = 0; k < n; k++) a[k] = f64[ni + k] | 0;
          ni += n;
          st[sp++] = a;
          break;
        }
        case ARRAY: {
          const n = ops[pc++];
          sp -= n;
          st[sp] = st.slice(sp, sp + n);
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
          let o = {};
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
          const subType = w >>> 8;
          const offset = ops[pc++];
          const view = input.subarray(offset, offset + ops[pc++]);
          retainsInput = true;
          let value;
          if (promoteBuffers && promoteValues) {
            value = ByteUtils.toLocalBufferType(view);
          } else {
            value = new Binary(view, subType);
            if (subType === 4 && UUID.isValid(value)) value = value.toUUID();
          }
          st[sp++] = value;
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
          st[sp++] = input.subarray(offset, offset + ops[pc++]);
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

  function run(buffer, index, flags, rawNames, utf8Names) {
    if (owner.decoder !== self) claimAddon();
    for (;;) {
      stringCount = 0;
      const r =
        rawNames === null && utf8Names === null
          ? nativeDecode(buffer, index, flags)
          : nativeDecode(buffer, index, flags, rawNames, utf8Names);
      if (r === undefined || typeof r === 'number') {
        if (r === -1) {
          const needOps = ops[0];
          const needNums = ops[1];
          if (needOps * 4 > opsBytes) refreshOps(needOps * 4);
          if (needNums * 8 > numsBytes) refreshNums(needNums * 8);
          continue;
        }
        const bodyLen = ops[0];
        let result;
        try {
          result = build(buffer, flags, bodyLen, ops[1]);
        } finally {
          // Drop references to this document's values and strings.
          // Values of small documents are overwritten by the next decode;
          // views into the input (Binary, raw) and big documents are dropped now.
          if (bodyLen > 16384) stack.fill(undefined, 0, Math.min(stack.length, bodyLen + 1));
          else if (retainsInput) {
            const st = stack;
            const n = st.length < bodyLen + 1 ? st.length : bodyLen + 1;
            for (let k = 0; k < n; k++) st[k] = undefined;
          }
          retainsInput = false;
          if (stringCount > 4096) strings = [];
          if (opsBytes > SHRINK_ABOVE) {
            shrinkScratch(SLOT.decOps, MIN_OPS_BYTES);
            refreshOps(MIN_OPS_BYTES);
          }
          if (numsBytes > SHRINK_ABOVE) {
            shrinkScratch(SLOT.decNums, MIN_NUMS_BYTES);
            refreshNums(MIN_NUMS_BYTES);
          }
        }
        return result;
      }
      fail(r, flags);
    }
  }

  function internalDeserialize(buffer, options) {
    options = options == null ? {} : options;
    const index = options && options.index ? options.index : 0;
    const allowSmaller = options.allowObjectSmallerThanBufferSize;

    // deserializeObject reads its settings from an own-property copy.
    const o = { ...options };
    const fieldsAsRaw = o.fieldsAsRaw == null ? null : o.fieldsAsRaw;
    const raw = o.raw == null ? false : o.raw;
    const bsonRegExp = typeof o.bsonRegExp === 'boolean' ? o.bsonRegExp : false;
    const promoteBuffers = o.promoteBuffers ?? false;
    const promoteLongs = o.promoteLongs ?? true;
    const promoteValues = o.promoteValues ?? true;
    const useBigInt64 = o.useBigInt64 ?? false;
    const validation = o.validation == null ? { utf8: true } : o.validation;

    // Settings whose JS semantics we do not model (non-integer index, non-boolean
    // promoteValues, a primitive fieldsAsRaw, a malformed validation object):
    // let js-bson itself handle them.
    if (
      typeof index !== 'number' ||
      !Number.isSafeInteger(index) ||
      index < 0 ||
      typeof promoteValues !== 'boolean' ||
      (fieldsAsRaw !== null && typeof fieldsAsRaw !== 'object' && typeof fieldsAsRaw !== 'function') ||
      validation === null ||
      typeof validation !== 'object' ||
      (typeof validation.utf8 !== 'boolean' && (validation.utf8 === null || typeof validation.utf8 !== 'object'))
    ) {
      return jsDeserialize(buffer, options);
    }

    let optionsError;
    if (useBigInt64 && !promoteValues) optionsError = 'Must either request bigint or Long for int64 deserialization';
    else if (useBigInt64 && !promoteLongs) optionsError = 'Must either request bigint or Long for int64 deserialization';

    let flags = 0;
    let utf8Names = null;
    const utf8 = validation.utf8;
    if (typeof utf8 === 'boolean') {
      if (utf8) flags |= F_UTF8;
    } else if (!isOptionsError(optionsError)) {
      const names = Object.keys(utf8);
      const values = names.map(key => utf8[key]);
      if (values.length === 0) {
        optionsError = 'UTF-8 validation setting cannot be empty';
      } else if (typeof values[0] !== 'boolean') {
        optionsError = 'Invalid UTF-8 validation option, must specify boolean values';
      } else if (!values.every(item => item === values[0])) {
        optionsError = 'Invalid UTF-8 validation option - keys must be all true or all false';
      } else {
        if (values[0]) flags |= F_UTF8;
        flags |= F_UTF8_MAP;
        utf8Names = '';
        for (const name of names) if (!name.includes('\0')) utf8Names += '\0' + name;
      }
    }
    if (isOptionsError(optionsError)) {
      headerChecks(buffer, index, allowSmaller);
      throw new BSONError(optionsError);
    }

    if (promoteLongs) flags |= F_PROMOTE_LONGS;
    if (promoteValues) flags |= F_PROMOTE_VALUES;
    if (promoteBuffers) flags |= F_PROMOTE_BUFFERS;
    if (useBigInt64) flags |= F_USE_BIGINT64;
    if (bsonRegExp) flags |= F_BSON_REGEXP;
    if (raw) flags |= F_RAW;
    if (allowSmaller) flags |= F_ALLOW_SMALLER;
    return run(buffer, index, flags, fieldsAsRaw === null ? null : rawNamesOf(fieldsAsRaw), utf8Names);
  }

  // js-bson's toLocalBufferType returns a Node Buffer as it is (Buffer.isBuffer):
  // that check is done inline when this ByteUtils is known to do so.
  const passesBuffers = (() => {
    try {
      const b = Buffer.alloc(1);
      return ByteUtils.toLocalBufferType(b) === b;
    } catch {
      return false;
    }
  })();

  function deserialize(buffer, options = undefined) {
    if (!(passesBuffers && buffer instanceof Buffer)) buffer = ByteUtils.toLocalBufferType(buffer);
    if (
      options === undefined ||
      (options !== null &&
        typeof options === 'object' &&
        isEmpty(options) &&
        !options.index &&
        !options.allowObjectSmallerThanBufferSize)
    ) {
      return run(buffer, 0, DEFAULT_FLAGS, null, null);
    }
    return internalDeserialize(buffer, options);
  }

  function deserializeStream(data, startIndex, numberOfDocuments, documents, docStartIndex, options) {
    const internalOptions = Object.assign({ allowObjectSmallerThanBufferSize: true, index: 0 }, options);
    const bufferData = ByteUtils.toLocalBufferType(data);

    let index = startIndex;
    for (let i = 0; i < numberOfDocuments; i++) {
      const size = getInt32LE(bufferData, index);
      internalOptions.index = index;
      documents[docStartIndex + i] = internalDeserialize(bufferData, internalOptions);
      index = index + size;
    }
    return index;
  }

  return { deserialize, deserializeStream };
};

/** A plain object with no own or inherited enumerable properties and the default prototype. */
function isEmpty(options) {
  if (Object.getPrototypeOf(options) !== Object.prototype) return false;
  for (const _ in options) return false;
  return true;
}
