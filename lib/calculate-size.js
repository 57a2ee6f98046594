'use strict';
// calculateObjectSize, bound to one js-bson copy: a JS walk that mirrors
// js-bson's parser/calculate_size.ts (no native call). `elementSize` is the
// one place each BSON type is sized; the loops of internalCalculateObjectSize
// take plain numbers and strings through numberSize / stringSize first.
const { Buffer } = require('node:buffer');
const { isMap, isDate, isRegExp, isAnyArrayBuffer } = require('./serialize/predicates');

// Name-length memo, by slot (a frame's base + position): documents of one
// shape hit it with a pointer compare instead of Buffer.byteLength.
const memoNames = new Array(1024).fill('');
const memoNameBytes = new Int32Array(1024);

// The circular-structure path is scanned while short, mirrored in a Set when deep.
const SCAN_DEPTH = 64;

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

/** A number element with a name of `nameBytes` bytes: int32 (not -0) or double (int64 for js-bson's calc). */
function numberSize(nameBytes, value) {
  return (value | 0) === value && (value !== 0 || 1 / value > 0) ? nameBytes + 1 + (4 + 1) : nameBytes + 1 + (8 + 1);
}

/** A string element. */
function stringSize(nameBytes, value) {
  return 1 + nameBytes + 1 + 4 + byteLength(value) + 1;
}

function onCalcPath(st, value) {
  if (st.path !== null) return st.path.has(value);
  const entered = st.entered;
  for (let i = 0; i < entered.length; i++) if (entered[i] === value) return true;
  return false;
}

module.exports = function createSizer(bson, layout) {
  const { BSONError, BSONVersionError, Binary } = bson;
  const VERSION_SYMBOL = Symbol.for('@@mdb.bson.version');
  const BSON_MAJOR_VERSION = layout.major ?? 7;
  const SUBTYPE_BYTE_ARRAY = Binary?.SUBTYPE_BYTE_ARRAY ?? 2;

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
          // numbers and strings first (same reads and result as elementSize)
          if (t === 'number' || t === 'string') {
            if (typeof value.toBSON !== 'function') {
              // (numberSize hand-inlined here, its one copy: measured 1.27x on int32_1000 /
              // double_1000, where TurboFan often left the call in this loop un-inlined)
              const nb = nameLength(st, i, true);
              total +=
                t === 'number'
                  ? nb + ((value | 0) === value && (value !== 0 || 1 / value > 0) ? 1 + (4 + 1) : 1 + (8 + 1))
                  : stringSize(nb, value);
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
              total += t === 'number' ? numberSize(nameLength(st, key, false), value) : stringSize(nameLength(st, key, false), value);
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

  /** The size of one element: js-bson's calculateElement, one case per type. */
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
        return stringSize(nameLength(st, name, isArray), value);
      case 'number':
        return numberSize(nameLength(st, name, isArray), value);
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
            case 'Long': // int64
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
      case 'bigint': // int64
        return nameLength(st, name, isArray) + 1 + (8 + 1);
      case 'symbol':
        return 0;
      default:
        throw new BSONError(`Unrecognized JS type: ${typeof value}`);
    }
  }

  return calculateObjectSize;
};
