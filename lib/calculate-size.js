'use strict';
// calculateObjectSize, bound to one js-bson copy: a JS walk that mirrors
// js-bson's parser/calculate_size.ts (no native call). `elementSize` is the
// one place each BSON type is sized (with the size rules below it, which
// lib/shaped/size.js's compiled sizers call too); the loops take plain
// numbers and strings through numberSize / stringSize first.
//
// Two drivers walk the same frames in the same order (js-bson's: a frame's
// values in key order, then its child objects last-pushed first):
//   - `walk`, js-bson's explicit stack, used without code generation, with
//     serializeFunctions, below MAX_FRAME_DEPTH nested frames, under an
//     object whose key list is too long to compile (MAX_KEYS), and for an
//     object that no compiled frame reached (a root) until its key list is
//     compiled (shaped/table.js WALK_FIRST_USES);
//   - `frame`, a recursion that hands each plain object to the sizer compiled
//     for its key list (lib/shaped/size.js) once that list has recurred.
const { Buffer } = require('node:buffer');
const { addon } = require('./native');
const { isMap, isDate, isRegExp, isAnyArrayBuffer, looksTwoByte, longTwoByte, LONG_STRING } = require('./serialize/predicates');
const { onPath } = require('./serialize/path');
const { createShapes, MAX_KEYS } = require('./shaped/size');
const { freshAt } = require('./shaped/table');

// Name-length memo, by slot (a frame's base + position): documents of one
// shape hit it with a pointer compare instead of Buffer.byteLength. Bases
// are below 1024; a document of more keys runs on into the slots past them
// (with 1024 slots in all, keys 1024 apart took turns at a slot and missed
// on every call: 2,000 keys sized at 1.12x js-bson's speed, 1.19-1.21x so).
const NAME_MEMO_SLOTS = 16384;
const memoNames = new Array(NAME_MEMO_SLOTS).fill('');
const memoNameBytes = new Int32Array(NAME_MEMO_SLOTS);

// `frame` recursion depth after which a subtree goes to the explicit stack.
const MAX_FRAME_DEPTH = 48;

// Frame flags on the stacks: bit 0 ignoreUndefined, bit 1 exit marker (walk),
// bits 2+ the 1-based position in the parent's compiled sizer (frame).
const IGNORE_UNDEFINED = 1;
const EXIT = 2;

/**
 * ByteUtils.utf8ByteLength: Buffer.byteLength (a V8 fast call; beats a JS
 * loop and a native batch), except for a long string (LONG_STRING) that V8
 * holds as two-byte by looksTwoByte's samples or longTwoByte's search, which
 * is measured from its code units (src/encode.rs utf8Length): V8 measures it
 * by encoding it, in 2-4x that time. (A one-byte string is left to
 * Buffer.byteLength: on a sequential one it counts ~60 bytes a ns, where
 * copying it out through Node-API and counting took 4x its time.)
 */
function byteLength(s) {
  if (typeof s === 'string' && s.length >= LONG_STRING && (looksTwoByte(s) || longTwoByte(s))) return addon.utf8Length(s);
  return Buffer.byteLength(s, 'utf8');
}

/**
 * UTF-8 length of array index `i` as an element name (i.toString()): its
 * digits, counted without a string (String(i) for indices from 10,000 on
 * made sizing 100,000 int32s 1.7x js-bson's speed against 14x at 10,000).
 */
function indexLength(i) {
  return i < 10 ? 1 : i < 100 ? 2 : i < 1000 ? 3 : i < 10000 ? 4 : longIndexLength(i);
}

/** indexLength from 10,000 on (its own function: the common ladder stays small). */
function longIndexLength(i) {
  return i < 100000 ? 5 : i < 1000000 ? 6 : i < 10000000 ? 7 : i < 100000000 ? 8 : i < 1000000000 ? 9 : 10;
}

/** UTF-8 length of an element name: an array index (indexLength) or a key. */
function nameLength(st, name, isArray) {
  if (isArray) return indexLength(name);
  const m = st.memo;
  if (m < 0 || typeof name !== 'string') return Buffer.byteLength(name, 'utf8');
  if (memoNames[m] === name) return memoNameBytes[m];
  const n = Buffer.byteLength(name, 'utf8');
  memoNames[m] = name;
  memoNameBytes[m] = n;
  return n;
}

// ---- size rules: one per BSON type, given the name's UTF-8 length ----

/** A number element: int32 (not -0) or double (int64 for js-bson's calc). */
function numberSize(nameBytes, value) {
  return (value | 0) === value && (value !== 0 || 1 / value > 0) ? nameBytes + 1 + (4 + 1) : nameBytes + 1 + (8 + 1);
}
/** A string element. */
function stringSize(nameBytes, value) {
  return 1 + nameBytes + 1 + 4 + byteLength(value) + 1;
}
/** null, undefined (written as null), MinKey, MaxKey. */
function nullSize(nameBytes) {
  return nameBytes + 1 + 1;
}
function booleanSize(nameBytes) {
  return nameBytes + 1 + (1 + 1);
}
function objectIdSize(nameBytes) {
  return nameBytes + 1 + (12 + 1);
}
/** Date, Long (int64), Double, Timestamp, bigint. */
function eightByteSize(nameBytes) {
  return nameBytes + 1 + (8 + 1);
}
/** An embedded document or array: its type byte and name (its body is its own frame). */
function embeddedSize(nameBytes) {
  return nameBytes + 1 + 1;
}

// The walk's state, one per re-entrancy level (a toBSON or a getter may call
// calculateObjectSize), shared by every js-bson copy: reused, as making it and
// its two arrays (grown at their first push) on each call cost 5-20% of a loop
// sizing { ok: 1 }, and more where its garbage brought scavenges (bench child:
// ok_1 2.24x -> 3.34x js-bson).
const states = [];
let level = 0;

/** Drops what a call left in its state (all of it after an error; after a return only `target`). */
function releaseState(st) {
  st.target = null;
  if (st.path.size !== 0) {
    st.path.clear();
    st.inSet = 0;
  }
  st.memo = -1;
  st.toBSONChecked = false;
  st.depth = 0;
  if (st.entered.length !== 0) st.entered.length = 0;
  if (st.stack.length !== 0) st.stack.length = 0;
}

/** Whether `value` is on the circular-structure path, `entered` (serialize/path.js). */
function onCalcPath(st, value) {
  const entered = st.entered;
  return onPath(st, entered, entered.length - 1, value);
}

function enter(st, obj) {
  st.entered.push(obj);
}

function exit(st) {
  const entered = st.entered;
  entered.pop();
  if (entered.length < st.inSet) st.inSet = entered.length;
}

const reflectGet = Reflect.get;

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

  function internalCalculateObjectSize(object, serializeFunctions, ignoreUndefined) {
    const lvl = level;
    let st = states[lvl];
    if (st === undefined) {
      // (stack: the frame driver's pending children)
      st = { entered: [], path: new Set(), inSet: 0, memo: -1, toBSONChecked: false, depth: 0, stack: [], target: null };
      states[lvl] = st;
    }
    level = lvl + 1;
    try {
      const flags = (ignoreUndefined ?? false) ? IGNORE_UNDEFINED : 0;
      if (shapes !== null && !serializeFunctions) {
        if (shapes.framesNow()) {
          // the compiled frame of the last root's key list first (table.js setRoot)
          const root = shapes.predictedRoot();
          const size = root !== null && typeof object === 'object' && object !== null ? root.frame(st, object, flags) : frame(st, object, flags, null);
          shapes.documentDone(size);
          return size;
        }
        // a cold table: the roots bring ever-new key lists (openFrame's `fresh`)
        return walk(st, object, flags, false, typeof object === 'object' && object !== null);
      }
      return walk(st, object, flags, serializeFunctions, false);
    } finally {
      level = lvl;
      releaseState(st);
    }
  }

  // What a frame holds, after js-bson's checks in js-bson's order
  // (Array.isArray, Map, toBSON): the object to enumerate is st.target.
  const ARRAY = 0;
  const MAP = 1;
  const OBJECT = 2;
  // `fresh`: obj, an object, has a hidden class V8 has not seen (ever-new
  // keys), so its toBSON is read with Reflect.get (shaped/serialize.js FRESH_READS).
  function openFrame(st, obj, fresh) {
    if (Array.isArray(obj)) {
      st.target = obj;
      return ARRAY;
    }
    if (obj instanceof Map || isMap(obj)) {
      st.target = obj;
      return MAP;
    }
    st.target = typeof (fresh ? reflectGet(obj, 'toBSON') : obj?.toBSON) === 'function' ? obj.toBSON() : obj;
    return OBJECT;
  }

  // js-bson's object stack of { object, ignoreUndefined, exit } frames is kept
  // as pairs in one array: [object, flags]. Its `path` Set (objects entered
  // and not yet exited) is a stack: `entered` (serialize/path.js).
  function walk(st, object, flags, serializeFunctions, freshRoot) {
    // (its own array, not st.stack: measured 1.1-1.2x slower on { [id]: n })
    return walkStack(st, [object, flags & IGNORE_UNDEFINED], serializeFunctions, freshRoot === true);
  }

  /** walk for an object `frame` has entered and enumerated: its elements, then its subtree on walk's stack. */
  function walkEntered(st, obj, target, keys, flags) {
    const stack = [obj, (flags & IGNORE_UNDEFINED) | EXIT];
    const total = 5 + objectFields(st, target, keys, flags & IGNORE_UNDEFINED, false, stack);
    return total + walkStack(st, stack, false, false);
  }

  /** The frames on `stack`, last first (`fresh`: the first is a fresh root, see openFrame). */
  function walkStack(st, stack, serializeFunctions, fresh) {
    let total = 0;
    while (stack.length > 0) {
      const f = stack.pop();
      const obj = stack.pop();
      if (f & EXIT) {
        exit(st);
        continue;
      }
      enter(st, obj);
      stack.push(obj, f | EXIT);
      total += 5 + fields(st, openFrame(st, obj, fresh), st.target, f & IGNORE_UNDEFINED, serializeFunctions, stack);
      fresh = false;
    }
    return total;
  }

  /** A frame's elements (children pushed on `stack`, unsized). */
  function fields(st, kind, target, ignoreUndefined, serializeFunctions, stack) {
    if (kind === ARRAY) return arrayFields(st, target, ignoreUndefined, serializeFunctions, stack);
    if (kind === MAP) return mapFields(st, target, ignoreUndefined, serializeFunctions, stack);
    return objectFields(st, target, Object.keys(target), ignoreUndefined, serializeFunctions, stack);
  }

  function arrayFields(st, array, ignoreUndefined, serializeFunctions, stack) {
    let total = 0;
    let number, string; // (one toBSON read per kind, as in serialize/walk.js's arrayLane)
    for (let i = 0; i < array.length; i++) {
      const value = array[i];
      const t = typeof value;
      // numbers and strings first (same reads and result as elementSize)
      if (t === 'number' || t === 'string') {
        if (t === 'number' ? typeof (number = value).toBSON !== 'function' : typeof (string = value).toBSON !== 'function') {
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
      total += elementSize(st, i, value, serializeFunctions, true, ignoreUndefined, stack);
    }
    return total;
  }

  // (`target`, as js-bson names it: a TypeError's message quotes it)
  function mapFields(st, target, ignoreUndefined, serializeFunctions, stack) {
    let total = 0;
    st.memo = -1;
    for (const [key, value] of target) {
      total += elementSize(st, key, value, serializeFunctions, false, ignoreUndefined, stack);
    }
    return total;
  }

  function objectFields(st, target, keys, ignoreUndefined, serializeFunctions, stack) {
    let total = 0;
    const base = (stack.length << 4) & 1023;
    let number, string; // (one toBSON read per kind, as in serialize/walk.js's arrayLane)
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i];
      st.memo = (base + i) & (NAME_MEMO_SLOTS - 1);
      const value = target[key];
      const t = typeof value;
      if (t === 'number' || t === 'string') {
        if (t === 'number' ? typeof (number = value).toBSON !== 'function' : typeof (string = value).toBSON !== 'function') {
          total += t === 'number' ? numberSize(nameLength(st, key, false), value) : stringSize(nameLength(st, key, false), value);
          continue;
        }
        st.toBSONChecked = true;
      }
      total += elementSize(st, key, value, serializeFunctions, false, ignoreUndefined, stack);
    }
    return total;
  }

  /**
   * The recursive driver (default options): one frame, then its children,
   * last-pushed first, each through `frame` again (or through the compiled
   * frame of the shape its parent's sizer saw at that position). `parent` is
   * the shape node whose compiled sizer pushed this object, if any (flags >> 2
   * = the position).
   */
  function frame(st, obj, flags, parent) {
    if (st.depth >= MAX_FRAME_DEPTH) return walk(st, obj, flags, false);
    st.depth++;
    enter(st, obj);
    const kind = openFrame(st, obj, freshAt(parent, flags >>> 2));
    return frameBody(st, obj, kind, st.target, kind === OBJECT ? Object.keys(st.target) : null, flags, parent);
  }

  /** The rest of `frame` once the object is entered and enumerated (also where a compiled frame whose keys differ goes on). */
  function frameBody(st, obj, kind, target, keys, flags, parent) {
    if (kind === OBJECT && keys.length > MAX_KEYS) {
      // never compiled: the frame driver's look-ups would only cost (full_bson's
      // 91 keys: 0.88x the walk's time), so the walk sizes this whole subtree
      const total = walkEntered(st, obj, target, keys, flags);
      st.depth--;
      return total;
    }
    const stack = st.stack;
    const base = stack.length;
    const ignoreUndefined = flags & IGNORE_UNDEFINED;
    let total = 5;
    let node = null;
    if (kind === OBJECT) {
      if (parent === null || flags >>> 2 === 0) {
        // no compiled frame above (a root, a Code scope, ...): walked until its key list is compiled (table.js WALK_FIRST_USES)
        node = st.depth === 1 ? shapes.lookUpWalked(keys) : shapes.lookUpRoot(keys);
        if (node === null || node.body === null) {
          total = walkEntered(st, obj, target, keys, flags);
          if (node !== null) shapes.walked(node, total);
          st.depth--;
          return total;
        }
        if (st.depth === 1) shapes.setRoot(node);
      } else node = shapes.lookUp(keys, parent, flags >>> 2);
    } else if (kind === ARRAY) node = shapes.arrayAt(parent, flags >>> 2);
    if (node !== null && node.body !== null) total += node.body(st, target, ignoreUndefined, stack, keys);
    else if (kind === OBJECT) total += objectFields(st, target, keys, ignoreUndefined, false, stack);
    else total += fields(st, kind, target, ignoreUndefined, false, stack);
    total += drain(st, base, node);
    exit(st);
    st.depth--;
    return total;
  }

  /** Sizes the frames pushed above `base`, last first; `node` = the shape whose sizer pushed them. */
  function drain(st, base, node) {
    const stack = st.stack;
    let total = 0;
    while (stack.length > base) {
      const f = stack.pop();
      const child = stack.pop();
      const slot = node === null || f < 4 ? undefined : node.slots[(f >>> 2) - 1];
      // (not at a position of ever-new key lists: the slot's compiled frame would read a new hidden class, see openFrame)
      const compiled = slot !== undefined && slot.frame !== null && !freshAt(node, f >>> 2);
      total += compiled ? slot.frame(st, child, f, node) : frame(st, child, f, node);
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
        if (isArray || !ignoreUndefined) return nullSize(nameLength(st, name, isArray));
        return 0;
      case 'boolean':
        return booleanSize(nameLength(st, name, isArray));
      case 'object': {
        if (value === null) return nullSize(nameLength(st, name, isArray));
        // Fast path (a documented difference): `_bsontype` is read once and the
        // value dispatched on it, instead of js-bson's chain that reads it up to
        // 14 times and probes Date / ArrayBuffer before the BSON tags. Sizes and
        // errors are the same for every real value.
        const tag = value._bsontype;
        if (typeof tag === 'string') {
          if (value[VERSION_SYMBOL] !== BSON_MAJOR_VERSION) throw new BSONVersionError();
          const size = taggedSize(st, name, isArray, value, tag, ignoreUndefined, objectStack);
          if (size >= 0) return size;
        }
        return untaggedSize(st, name, isArray, value, ignoreUndefined, objectStack);
      }
      case 'function':
        if (serializeFunctions) {
          return nameLength(st, name, isArray) + 1 + 1 + 4 + byteLength(value.toString()) + 1;
        }
        return 0;
      case 'bigint': // int64
        return eightByteSize(nameLength(st, name, isArray));
      case 'symbol':
        return 0;
      default:
        throw new BSONError(`Unrecognized JS type: ${typeof value}`);
    }
  }

  /** A value whose `_bsontype` is the string `tag` (version checked); -1: size it as an untagged object. */
  function taggedSize(st, name, isArray, value, tag, ignoreUndefined, objectStack) {
    switch (tag) {
      case 'ObjectId':
        return objectIdSize(nameLength(st, name, isArray));
      case 'Long': // int64
      case 'Double':
      case 'Timestamp':
        return eightByteSize(nameLength(st, name, isArray));
      case 'Decimal128':
        return nameLength(st, name, isArray) + 1 + (16 + 1);
      case 'Int32':
        return nameLength(st, name, isArray) + 1 + (4 + 1);
      case 'MinKey':
      case 'MaxKey':
        return nullSize(nameLength(st, name, isArray));
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
          objectStack.push(value.scope, ignoreUndefined ? IGNORE_UNDEFINED : 0);
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
        objectStack.push(orderedValues, IGNORE_UNDEFINED);
        return embeddedSize(nameLength(st, name, isArray));
      }
      case 'BSONRegExp':
        if (value instanceof RegExp || isRegExp(value)) return -1; // js-bson tests RegExp first
        return nameLength(st, name, isArray) + 1 + 1 + byteLength(value.pattern) + 1 + byteLength(value.options) + 1;
    }
    return -1;
  }

  /** An object without a string `_bsontype`: Date, binary data, RegExp, or an embedded document (pushed). */
  function untaggedSize(st, name, isArray, value, ignoreUndefined, objectStack) {
    if (value instanceof Date || isDate(value)) {
      return eightByteSize(nameLength(st, name, isArray));
    } else if (ArrayBuffer.isView(value) || value instanceof ArrayBuffer || isAnyArrayBuffer(value)) {
      return nameLength(st, name, isArray) + 1 + (1 + 4 + 1) + value.byteLength;
    } else if (value instanceof RegExp || isRegExp(value)) {
      return regExpSize(nameLength(st, name, isArray), value);
    }
    if (onCalcPath(st, value)) {
      throw new BSONError('Cannot convert circular structure to BSON');
    }
    objectStack.push(value, ignoreUndefined ? IGNORE_UNDEFINED : 0);
    return embeddedSize(nameLength(st, name, isArray));
  }

  function regExpSize(nameBytes, value) {
    return (
      nameBytes +
      1 +
      1 +
      byteLength(value.source) +
      1 +
      (value.global ? 1 : 0) +
      (value.ignoreCase ? 1 : 0) +
      (value.multiline ? 1 : 0) +
      1
    );
  }

  const shapes = createShapes({
    walk,
    frame,
    frameBody,
    enter,
    exit,
    isMap,
    MAX_FRAME_DEPTH,
    OBJECT,
    ARRAY,
    MAP,
    elementSize,
    taggedSize,
    untaggedSize,
    regExpSize,
    onCalcPath,
    indexLength,
    numberSize,
    stringSize,
    nullSize,
    booleanSize,
    objectIdSize,
    eightByteSize,
    embeddedSize,
    isDate,
    isRegExp,
    isAnyArrayBuffer,
    BSONError,
    BSONVersionError,
    VERSION_SYMBOL,
    BSON_MAJOR_VERSION
  });

  return calculateObjectSize;
};
