'use strict';
// The serialize walk: js-bson's serializeInto (parser/serializer.ts), check
// for check and in the same order, so every getter, toBSON() and error happens
// as in js-bson. It visits the values and dispatches each to its writer in
// types.js, which puts it on the encode tape (ARCHITECTURE.md, "Encode tape").
//
// Two fast lanes (documentLane, arrayLane) take runs of elements without the
// generic dispatch: numbers / strings under keys that need no check in a
// document, and numbers, strings and any object but a document or array in
// an array. They make the generic path's reads and call the same writers;
// what they cannot take they hand over with what they already read
// (toBSONChecked / toBSONAbsent / pre).
const { isMap, isDate, isUint8Array, isRegExp, isAnyArrayBuffer } = require('./predicates');
const { keyEntry, keyWord, memoRow, memoSlot, K_NUL, K_DOLLAR, K_DOT, K_FLAGS, K_STAGED } = require('./keys');
const T = require('./types');
const { Tape, ELEMENT_VALUE_BYTES } = require('./buffers');
const { onPath, SCAN_DEPTH } = require('./path');
const { createFrameShapes, MAX_KEYS: MAX_SHAPE_KEYS } = require('../shaped/serialize');
const { sameKeys, freshAt } = require('../shaped/table');
const { typedArrayLength } = require('../buffer-view');

const { writeEnd, writeSkip, writeNull, writeBoolean, writeNumber, writeString, writeBigInt } = T;
const { writeDate, writeUint8Array, writeDocument } = T;
const { KEY_INDEX, KEY_INLINE, KEY_NOT_STRING } = T;

const PRE_NONE = 0;
const PRE_TAG = 2; // `_bsontype != null`, version checked, tag read
const PRE_UNTAGGED = 3; // `_bsontype == null` and writeUntagged's checks were false: a document or array
const PRE_SCOPE = 4; // a Code with scope, written: `preTag` holds the scope, which the walk enters
// Why a lane stopped (walker.hand).
const HAND_NONE = 0; // room needed, or the end of a document's keys: back to the loop
const HAND_END = 1; // the end of the array
const HAND_PLAIN = 2; // hands over an element it does not take
const HAND_TOBSON = 3; // ... whose toBSON it read (a function)
const HAND_NO_TOBSON = 4; // ... whose toBSON it read (not a function)
const HAND_PRE = 5; // ... with what `pre` says was read
const HAND_ROOM = 6; // written past an element's room (binary data over ELEMENT_VALUE_BYTES: types.js copiesToTape): the lane counts its room again
const NO_KEYS = [];
const KIND_OBJ = 0;
const KIND_ARR = 1;
const KIND_MAP = 2;
// An object frame over an ArrayBuffer view (a Float32Array, say), which
// js-bson writes as a document of its keys: the walk reads its elements
// itself, not in the document lane, a typed array's first `length` keys
// (its indices) by number, any other key with Reflect.get. (The lane's
// keyed load, given a typed array's elements under string keys, made V8
// deoptimize the lane over and over: 64 floats 0.68x js-bson's speed, and
// other documents serialized in the same process slower.)
const KIND_VIEW = 3;

/** The number of elements of an ArrayBuffer view, read as numbers in a KIND_VIEW frame (a DataView: none). */
function viewElements(view) {
  try {
    return typedArrayLength.call(view);
  } catch {
    return 0;
  }
}
// the two root errors after the type checks (walk's rootError)
const ROOT_TAGGED = 0;
const ROOT_VALUE = 1;

/** Puts `value` on the circular-structure path at depth `d` (path.js). */
function enterPath(walker, d, value) {
  walker.srcs[d] = value;
  if (d < walker.inSet) walker.inSet = d;
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
    this.single = false; // one element handed over by a compiled frame (handOne)
    this.elementNode = null; // an array's: the compiled node its last document element had
    this.memo = 0; // its key memo row (see memoRow)
    this.viewLength = 0; // KIND_VIEW: how many of its keys are element indices
  }
}

/** Per re-entrancy level: the tape, the frame stack and the circular-structure path. */
class Walker {
  constructor(level) {
    this.tape = new Tape(level);
    this.maxDepth = 0;
    this.frames = [];
    this.srcs = []; // frame sources by depth (the circular-structure path)
    this.path = new Set();
    this.inSet = 0; // srcs[0..inSet) are in `path` (path.js)
    // what a lane hands over (see documentLane / arrayLane)
    this.hand = 0;
    this.key = undefined;
    this.value = undefined;
    this.entry = 0; // HAND_NO_TOBSON: the key's cache entry (not looked up twice)
    this.shaped = false; // this call uses the shape table (walkDocument)
    this.pre = PRE_NONE;
    this.preTag = undefined;
    // an object's frame as opened (openFrame, or a compiled element that handed it back)
    this.openKind = KIND_OBJ;
    this.openTarget = null;
    this.openKeys = null;
  }
  /** The frame of depth `d`, which the walk enters. */
  frame(d) {
    // (a store made on every entry, not only past the deepest: a store that
    // only runs when a call goes deeper than the ones before had no type
    // feedback when V8 optimized the walk, and deoptimized it in the 3rd-5th
    // call of a fresh process; orders_1000's first calls)
    this.maxDepth = d > this.maxDepth ? d : this.maxDepth;
    let f = this.frames[d];
    if (f === undefined) {
      f = new Frame();
      this.frames[d] = f;
    }
    return f;
  }
  /** Drops references to user objects after a call. */
  release() {
    const frames = this.frames;
    const srcs = this.srcs;
    const maxDepth = this.maxDepth;
    for (let i = 0; i <= maxDepth; i++) {
      const f = frames[i];
      srcs[i] = undefined;
      f.src = null;
      f.target = null;
      f.keys = null;
      f.iter = null;
    }
    if (maxDepth >= SCAN_DEPTH) this.releaseDeep();
    this.key = undefined;
    this.value = undefined;
    this.preTag = undefined;
    this.openTarget = null;
    this.openKeys = null;
    this.tape.release();
  }
  releaseDeep() {
    this.path.clear();
    if (this.frames.length > 4096) {
      this.frames.length = 4096;
      this.srcs.length = 4096;
    }
  }
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

function keyError(entry, key, checkKeys, BSONError) {
  if (entry & K_NUL) throw new BSONError('key ' + key + ' must not contain null bytes');
  if (checkKeys) {
    if (entry & K_DOLLAR) throw new BSONError('key ' + key + " must not start with '$'");
    if (entry & K_DOT) throw new BSONError('key ' + key + " must not contain '.'");
  }
}

// 'toBSON' for keyed loads: an object whose hidden class is its own (built
// by spread and then given a property) misses V8's stub cache at a named
// load's megamorphic site and is looked up in its runtime, ~150 ns a read; a
// keyed load by a key V8 cannot fold into a name (this array is filled at run
// time) is looked up in the map inside the builtin. Same [[Get]], same order.
// (Driver-bench posts: 0.90x -> 1.28x js-bson with a compiled frame's reads
// keyed, 1.39x with this one too; same-shaped documents as fast or faster.)
const READ_BY_KEY = [];
READ_BY_KEY.push('toBSON');

// A frame iterates what js-bson's makeFrame iterates: arrays by index, Maps
// by entries(), anything else by Object.keys of its toBSON(). Each place that
// enters a document makes those reads in that order (frameKind, objectTarget,
// Object.keys) and stores the frame (setFrame) only when the document has no
// compiled frame: fields stored only to be read back cost a tree of small
// documents 10-20% (nested_4 serialize 2.28 -> 1.81 us). The three places
// (the root, enterDocument, a document in an array in walk) make those reads
// in openFrame, whose sites see every shape; where the key list the place had
// last is compiled, they go first to that node's own copy of the reads
// (shaped/serialize.js frameSource), whose sites see that one shape.

/** How js-bson iterates `source`: KIND_ARR, KIND_MAP or KIND_OBJ (its reads: Array.isArray, instanceof Map, isMap). */
function frameKind(source) {
  if (Array.isArray(source)) return KIND_ARR;
  return source instanceof Map || isMap(source) ? KIND_MAP : KIND_OBJ;
}

const reflectGet = Reflect.get;

/**
 * What an object frame iterates: `source`, or its toBSON() result (a keyed
 * load, see READ_BY_KEY; with Reflect.get for a root of ever-new keys, see
 * shaped/serialize.js FRESH_READS).
 */
function objectTarget(source, BSONError, fresh) {
  const toBSON = fresh ? reflectGet(source, READ_BY_KEY[0]) : source[READ_BY_KEY[0]];
  return typeof toBSON === 'function' ? toBSONTarget(source, BSONError) : source;
}

/** A Map frame's iterator. (Named as in js-bson's makeFrame: a TypeError's message quotes `sourceObject.entries`.) */
function entriesOf(sourceObject) {
  return sourceObject.entries();
}

/** What openFrame found (or a compiled element that is not its key list): in walker.openKind / openTarget / openKeys; false. */
function handBack(walker, kind, target, keys) {
  walker.openKind = kind;
  walker.openTarget = target;
  walker.openKeys = keys;
  return false;
}

/** Stores a frame of `kind` over `source` (target and keys: the object's, else `source` and null). */
function setFrame(f, kind, source, target, keys, ck, iu, rustArr) {
  f.src = source;
  f.ck = ck;
  f.iu = iu;
  f.idx = 0;
  f.rustArr = rustArr;
  f.single = false;
  f.elementNode = null;
  if (kind === KIND_OBJ && ArrayBuffer.isView(target)) {
    f.kind = KIND_VIEW;
    f.viewLength = viewElements(target);
  } else f.kind = kind;
  f.target = target;
  f.keys = keys;
  f.iter = kind === KIND_MAP ? entriesOf(source) : null;
}

/** Sets up frame `f` for one element a compiled frame hands over (see walk's `single`). */
function makeSingleFrame(f, ck, iu) {
  f.src = null;
  f.target = null;
  f.keys = NO_KEYS;
  f.iter = null;
  f.kind = KIND_OBJ;
  f.idx = 0;
  f.rustArr = false;
  f.ck = ck;
  f.iu = iu;
  f.single = true;
}

/** A document's toBSON() result, which must be an object (or null / undefined: Object.keys throws). */
function toBSONTarget(source, BSONError) {
  const target = source.toBSON();
  if (target != null && typeof target !== 'object') {
    throw new BSONError('toBSON function did not return an object');
  }
  return target;
}

/** The two fast lanes for one js-bson copy (they call the same writers as the walk). */
function createLanes(bson, layout, types) {
  const { BSONVersionError } = bson;
  const VERSION_SYMBOL = Symbol.for('@@mdb.bson.version');
  const bsonType = bson.bsonType ?? Symbol.for('@@mdb.bson.type');
  const BSON_MAJOR_VERSION = layout.major ?? 7;
  const { writeObjectId, writeLong, writeTagged, tagOf, writeRegExp, writeCode } = types;
  const tagByChain = layout.tagReadByChain;

  /**
   * An object without a `_bsontype`: a Date, binary or RegExp is written, in
   * js-bson's order of checks (true); false for a document or array.
   * (`instanceofDateRead`: `instanceof Date` was read, and false.)
   */
  function writeUntagged(t, w, key, value, instanceofDateRead) {
    if ((!instanceofDateRead && value instanceof Date) || isDate(value)) writeDate(t, w, key, value);
    else if (value instanceof Uint8Array || isUint8Array(value)) writeUint8Array(t, w, key, value);
    else if (value instanceof RegExp || isRegExp(value)) writeRegExp(t, w, key, value);
    else return false;
    return true;
  }

  /**
   * Document lane: numbers and strings under keys that need no check, from `key` /
   * `value` (read at position idx - 1). Returns the next position; walker.hand
   * says why it stopped (HAND_NONE: room needed or end of the keys) and
   * walker.key / walker.value hold the element it hands to the generic path.
   * (`keys` is our own array, so its length may be re-read freely.) Without
   * checkKeys (`ck`) only a NUL needs the check: '$' and '.' keys, as in
   * { $set: { 'a.b': 1 } }, stay in the lane.
   */
  function documentLane(walker, t, target, keys, idx, memo, key, value, ck) {
    const checked = ck ? K_FLAGS : K_NUL; // the key flags that keyError may throw for
    let hand = HAND_NONE;
    let room = t.room(); // (as in arrayLane)
    let number, string; // (one toBSON read per kind, as in arrayLane)
    for (;;) {
      if (typeof value === 'number' ? typeof (number = value).toBSON === 'function' : typeof (string = value).toBSON === 'function') {
        hand = HAND_TOBSON;
        break;
      }
      const entry = keyEntry(key, memoSlot(memo, idx), t);
      if ((entry & checked) !== 0) {
        // a key to check: the generic path (toBSON is known to be absent; it copies the key again)
        hand = HAND_NO_TOBSON;
        walker.entry = entry & ~K_STAGED;
        break;
      }
      const w = keyWord(entry);
      if (typeof value === 'number') writeNumber(t, w, key, value);
      else writeString(t, w, key, value);
      if ((--room <= 0 && (room = t.room()) === 0) || idx >= keys.length) break;
      key = keys[idx++];
      value = target[key];
      if (typeof value !== 'number' && typeof value !== 'string') {
        hand = HAND_PLAIN;
        break;
      }
    }
    walker.hand = hand;
    walker.key = key;
    walker.value = value;
    return idx;
  }

  /**
   * An object element of the array lane: a Date, ObjectId, Long or Timestamp
   * is written (HAND_NONE); one whose toBSON is a function is handed over
   * (HAND_TOBSON), anything else with what was read in walker.pre (HAND_PRE).
   * Its own function, so that V8 inlines these writers here whatever else the
   * lane has seen (measured: with them in the lane, the lane's last
   * compilation in the bench left them as calls).
   */
  function arrayObject(walker, t, i, value, afterValue) {
    // The toBSON and _bsontype reads are made at one of two pairs of sites:
    // one for an element after a Date, ObjectId, Long or Timestamp the lane
    // wrote (afterValue), one for any other, each with an inline cache of its own
    // (reads from an assignment, as in arrayLane). In an array of Dates the
    // afterValue pair sees only Date.prototype's map and TurboFan folds the
    // reads away; a single pair for every element went megamorphic in a process
    // that had serialized arrays of Dates, ObjectIds, Longs and documents
    // (objectid_1000 by bson-rs alone after the bench's other documents:
    // 60 µs per call with one pair, 34 µs with two). Same reads, same order,
    // whichever sites make them. (Two pairs, not one per class: V8 inlines
    // this function into the lane only while it is small.)
    let o;
    let tagless;
    if (afterValue) {
      if (typeof (o = value).toBSON === 'function') return HAND_TOBSON;
      tagless = (o = value)._bsontype == null;
    } else {
      if (typeof value.toBSON === 'function') return HAND_TOBSON;
      tagless = value._bsontype == null;
    }
    if (tagless) {
      if (!(value instanceof Date)) return untaggedElement(walker, t, i, value);
      writeDate(t, KEY_INDEX, i, value);
      return HAND_NONE;
    }
    // (types.js tagOf's reads, made here: a helper shared with the generic
    // path sees every BSON class and its loads go megamorphic; measured 3x on objectid_1000)
    let tag;
    if (tagByChain) tag = tagOf(value);
    else {
      if (value[VERSION_SYMBOL] !== BSON_MAJOR_VERSION) throw new BSONVersionError();
      tag = value[bsonType];
    }
    if (tag === 'ObjectId') writeObjectId(t, KEY_INDEX, i, value);
    else if (tag === 'Long' || tag === 'Timestamp') writeLong(t, KEY_INDEX, i, value);
    else return otherTagged(walker, t, i, value, tag);
    return HAND_NONE;
  }

  /**
   * Any other tagged object element of the array lane, with its tag read:
   * written here too, not handed to the walk one element at a time (1,000
   * UUIDs took 1.6x js-bson's time so, 200 Code values 1.2x). Only a
   * binary's bytes can exceed an element's room (HAND_ROOM). A Code with a
   * scope is written here and its scope handed to the walk to enter
   * (PRE_SCOPE); a value of no known tag is handed over with it (PRE_TAG).
   */
  function otherTagged(walker, t, i, value, tag) {
    const bi = t.bi;
    if (writeTagged(t, KEY_INDEX, i, value, tag)) return t.bi - bi <= ELEMENT_VALUE_BYTES ? HAND_NONE : HAND_ROOM;
    if (tag === 'Code') {
      const scope = writeCode(t, KEY_INDEX, i, value);
      if (scope === null) return HAND_NONE;
      walker.pre = PRE_SCOPE;
      walker.preTag = scope;
      return HAND_PRE;
    }
    walker.pre = PRE_TAG;
    walker.preTag = tag;
    return HAND_PRE;
  }

  /**
   * An object element of the array lane without a `_bsontype` and not
   * `instanceof Date`: a RegExp or binary is written here too (HAND_NONE, or
   * HAND_ROOM past an element's room), a document or array is handed over
   * (HAND_PRE, PRE_UNTAGGED). Handed to the walk one element at a time, 200
   * RegExps took 1.2x js-bson's time. (Its own function, so that
   * arrayObject stays small enough for V8 to inline into the lane.)
   */
  function untaggedElement(walker, t, i, value) {
    const bi = t.bi;
    if (writeUntagged(t, KEY_INDEX, i, value, true)) return t.bi - bi <= ELEMENT_VALUE_BYTES ? HAND_NONE : HAND_ROOM;
    walker.pre = PRE_UNTAGGED;
    return HAND_PRE;
  }

  /**
   * Array lane (arrays written by Rust): numbers, strings, Dates, ObjectIds
   * and Longs from `value` (= target[idx - 1]), with the generic path's reads
   * (length once per element, each element once, then its toBSON, _bsontype,
   * ... in js-bson's order). Returns the next index; walker.hand says why it
   * stopped (HAND_NONE room needed, HAND_END end of the array, else it hands
   * walker.value = target[index - 1] over, with what was read in walker.pre).
   */
  function arrayLane(walker, t, target, idx, value) {
    let i = idx - 1;
    let hand = HAND_NONE;
    let room = t.room(); // (a counter in a register instead of hasRoom()'s six loads per element)
    let number, string; // (the toBSON reads below)
    let afterValue = false; // an object element was written (arrayObject)
    for (;;) {
      // One toBSON read per kind, each with an inline cache of its own. V8
      // gives all reads of one name from one variable in a function a single
      // cache (its bytecode generator shares their feedback slot), so three
      // `value.toBSON` would still be one; a read from an assignment gets its
      // own. Numbers, strings, Dates, ObjectIds and Longs made the one cache
      // megamorphic after the bench's array documents, and every element paid
      // a generic load. The number read's cache sees only Number.prototype's
      // map, and TurboFan folds it away behind a prototype-stability check
      // (serialize int32_1000 after the other array documents: 24 µs -> 10 µs
      // per call, 8 µs in a process of its own). documentLane,
      // calculate-size.js and shaped/size.js read the same way.
      // (The lane's bytecode stays small enough for V8 to inline it into the
      // walk: 301 bytes were not, and int32_1000 serialized 15% slower in a
      // fresh process; the object case is in arrayObject.)
      if (typeof value === 'number') {
        if (typeof (number = value).toBSON === 'function') hand = HAND_TOBSON;
        else writeNumber(t, KEY_INDEX, i, value);
      } else if (typeof value === 'string') {
        if (typeof (string = value).toBSON === 'function') hand = HAND_TOBSON;
        else writeString(t, KEY_INDEX, i, value);
      } else {
        hand = arrayObject(walker, t, i, value, afterValue);
        afterValue = true; // (if it was not written, the lane stops here)
      }
      if (hand !== HAND_NONE) {
        // (past an element's room: the room left is counted again)
        if (hand !== HAND_ROOM || (room = t.room()) === 0) break;
        hand = HAND_NONE;
      } else if (--room <= 0 && (room = t.room()) === 0) break;
      if (idx >= target.length) {
        hand = HAND_END;
        break;
      }
      i = idx++;
      value = target[i];
      if (typeof value !== 'number' && typeof value !== 'string' && (typeof value !== 'object' || value === null)) {
        hand = HAND_PLAIN;
        break;
      }
    }
    walker.hand = hand;
    walker.value = value;
    return idx;
  }

  return { documentLane, arrayLane, writeUntagged };
}

// Compiled frames call each other down a document's levels on the JS stack
// (the walk keeps its own frames), so they stop at a bound past MongoDB's
// nesting limit of 100. (With 62, a document of 100 levels was 1.08-1.10x
// js-bson's speed, 200 levels 0.88-0.89x; with this 1.14-1.16x, 0.96-0.97x,
// both before path.js's unrolled scan; 254 was no faster at 200 levels.)
const MAX_COMPILED_DEPTH = 126;

function createWalk(bson, layout) {
  const { BSONError } = bson;
  const types = T.createTypes(bson, layout);
  const { documentLane, arrayLane, writeUntagged } = createLanes(bson, layout, types);
  const { tagOf, writeTagged, writeCode, writeFunction, writeDBRef } = types;

  function circular() {
    return new BSONError('Cannot convert circular structure to BSON');
  }

  /**
   * The walk: js-bson's serializeInto from the frame at depth `base` (made by
   * the caller, its source in srcs[base]) to that frame's end, writing
   * `walker.tape`. A `single` base frame is one element of a compiled frame's
   * document (handOne): its key, value and what was read of it are in walker.
   */
  function walk(walker, base, serializeFunctions) {
    const t = walker.tape;
    let depth = base;
    let toBSONChecked = false;
    let toBSONAbsent = false;
    let laneEntry = false; // the key's entry is in walker.entry (HAND_NO_TOBSON)
    let pre = PRE_NONE; // what the array lane already read of the value it hands over
    let preTag;

    let fr = walker.frames[base];
    let single = fr.single;
    // the current frame, in locals
    let kind = fr.kind;
    let target = fr.target;
    let keys = fr.keys;
    let iter = fr.iter;
    let idx = 0;
    let isArr = kind === KIND_ARR;
    let rustArr = fr.rustArr;
    let ck = fr.ck;
    let iu = fr.iu;
    let memo = memoRow(base, 0);
    fr.memo = memo;

    for (;;) {
      if (!t.hasRoom()) t.grow();

      let key;
      let value;
      let end = false;
      if (single) {
        single = false;
        key = walker.key;
        value = walker.value;
        laneEntry = true;
        const hand = walker.hand;
        if (hand === HAND_TOBSON) toBSONChecked = true;
        else if (hand === HAND_PRE) {
          pre = walker.pre;
          preTag = walker.preTag;
        }
      } else if (kind === KIND_OBJ) {
        if (idx >= keys.length) end = true;
        else {
          key = keys[idx++];
          value = target[key];
          if (typeof value === 'number' || typeof value === 'string') {
            idx = documentLane(walker, t, target, keys, idx, memo, key, value, ck);
            const hand = walker.hand;
            if (hand === HAND_NONE) continue;
            key = walker.key;
            value = walker.value;
            if (hand === HAND_TOBSON) toBSONChecked = true;
            else if (hand === HAND_NO_TOBSON) toBSONAbsent = laneEntry = true;
          }
        }
      } else if (kind === KIND_VIEW) {
        if (idx >= keys.length) end = true;
        else {
          key = keys[idx];
          value = idx < fr.viewLength ? target[idx] : reflectGet(target, key);
          idx++;
        }
      } else if (kind === KIND_ARR) {
        if (idx >= target.length) end = true;
        else {
          let i = idx++;
          value = target[i];
          if (rustArr && (typeof value === 'number' || typeof value === 'string' || (typeof value === 'object' && value !== null))) {
            idx = arrayLane(walker, t, target, idx, value);
            const hand = walker.hand;
            if (hand === HAND_NONE || hand === HAND_ROOM) continue;
            if (hand === HAND_END) end = true;
            else {
              // (room for this element was checked after the last write)
              i = idx - 1;
              value = walker.value;
              if (hand === HAND_TOBSON) toBSONChecked = true;
              else if (hand === HAND_PRE) {
                pre = walker.pre;
                preTag = walker.preTag;
              }
            }
          }
          key = rustArr ? i : String(i);
        }
      } else {
        const next = iter.next();
        if (next.done) end = true;
        else {
          idx++; // (the entry's position: its own key memo slot)
          key = next.value[0];
          value = next.value[1];
        }
      }

      if (end) {
        if (depth === base && fr.single) break; // (the compiled frame ends its document)
        writeEnd(t);
        if (depth === base) break;
        fr = walker.frames[--depth];
        kind = fr.kind;
        target = fr.target;
        keys = fr.keys;
        iter = fr.iter;
        idx = fr.idx;
        memo = fr.memo;
        isArr = kind === KIND_ARR;
        rustArr = fr.rustArr;
        ck = fr.ck;
        iu = fr.iu;
        continue;
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

      // The key word (types.js): > 0 cached key bits, or KEY_INDEX / KEY_INLINE / KEY_NOT_STRING.
      let w;
      if (isArr) {
        w = rustArr ? KEY_INDEX : KEY_INLINE;
      } else if (typeof key === 'string') {
        // (a second keyEntry would find the lane's memo entry and, in a cold
        // window, define the key as if it had recurred)
        const entry = laneEntry ? walker.entry : keyEntry(key, memoSlot(memo, idx), null);
        laneEntry = false;
        if ((entry & K_FLAGS) !== 0) keyError(entry, key, ck, BSONError);
        w = keyWord(entry);
      } else {
        // js-bson writes a key object such as a String of ≤ 25 ASCII units
        // (its latin fast path) and throws for any other non-string key.
        const latin = basicLatinKey(key);
        if (latin === null) w = KEY_NOT_STRING;
        else {
          key = latin;
          w = KEY_INLINE;
        }
      }

      // Dispatch in js-bson's order. `nested` is set to a document / array to enter.
      const type = typeof value;
      let nested = null;
      let nestedRust = false;
      let nestedCk = ck;
      let nestedIu = iu;
      if (pre === PRE_SCOPE) {
        // the array lane wrote a Code with scope: its scope (in preTag) is entered here
        pre = PRE_NONE;
        nested = preTag;
        preTag = undefined;
        if (onPath(walker, walker.srcs, depth, nested)) throw circular();
      } else if (value === undefined) {
        if (isArr || iu === false) writeNull(t, w, key);
      } else if (value === null) {
        writeNull(t, w, key);
      } else if (type === 'string') {
        writeString(t, w, key, value);
      } else if (type === 'number') {
        writeNumber(t, w, key, value);
      } else if (type === 'bigint') {
        writeBigInt(t, w, key, value);
      } else if (type === 'boolean') {
        writeBoolean(t, w, key, value);
      } else if (
        type === 'object' &&
        (pre === PRE_UNTAGGED || (pre === PRE_NONE && value._bsontype == null))
      ) {
        // (PRE_UNTAGGED: the lane made every check up to here)
        const untagged = pre === PRE_UNTAGGED;
        pre = PRE_NONE;
        if (untagged || !writeUntagged(t, w, key, value, false)) {
          if (onPath(walker, walker.srcs, depth, value)) throw circular();
          nestedRust = Array.isArray(value);
          writeDocument(t, w, key, nestedRust);
          nested = value;
        }
      } else if (type === 'object') {
        let tag;
        if (pre === PRE_TAG) {
          // the lane checked the version and read the tag
          pre = PRE_NONE;
          tag = preTag;
          preTag = undefined;
        } else tag = tagOf(value);
        if (writeTagged(t, w, key, value, tag)) {
          // (written)
        } else if (tag === 'Code') {
          const scope = writeCode(t, w, key, value);
          if (scope !== null) {
            if (onPath(walker, walker.srcs, depth, scope)) throw circular();
            nested = scope; // a document: array scopes get explicit keys
          }
        } else if (tag === 'DBRef') {
          nested = writeDBRef(t, w, key, value);
          nestedCk = false;
          nestedIu = true;
        } else if (typeof value._bsontype !== 'undefined') {
          throw new BSONError(`Unrecognized or invalid _bsontype: ${String(value._bsontype)}`);
        } else writeSkip(t, rustArr);
      } else if (type === 'function' && serializeFunctions) {
        writeFunction(t, w, key, value);
      } else {
        // symbols, functions without serializeFunctions: skipped
        writeSkip(t, rustArr);
      }
      if (nested === null) continue;

      // enter `nested`
      fr.idx = idx;
      fr = walker.frame(++depth);
      enterPath(walker, depth, nested);
      if (nestedRust) handBack(walker, KIND_ARR, nested, null); // (an array: openFrame's answer, known)
      else if (isArr && walker.shaped && depth <= MAX_COMPILED_DEPTH) {
        if (writeArrayDocument(walker, t, nested, depth, nestedCk, nestedIu, serializeFunctions)) {
          fr = walker.frames[--depth];
          continue;
        }
      } else openFrame(walker, nested);
      setFrame(fr, walker.openKind, nested, walker.openTarget, walker.openKeys, nestedCk, nestedIu, nestedRust);
      // its key memo row (from the parent's isArr, idx and row, still in the locals): a
      // document in an array shares its row with its siblings, which often have its
      // keys; one in a document gets a row of its own position
      memo = memoRow(depth, isArr ? memo : memo + idx);
      fr.memo = memo;
      kind = fr.kind;
      target = fr.target;
      keys = fr.keys;
      iter = fr.iter;
      idx = 0;
      isArr = kind === KIND_ARR;
      rustArr = nestedRust;
      ck = nestedCk;
      iu = nestedIu;
    }
  }

  // Shape-compiled frames (shaped/serialize.js): a document whose key list
  // recurs is written by a function generated for that list, from the root
  // down through documents of known shapes; every other element and subtree
  // goes to the walk, with what was read of it.
  const shapes = createFrameShapes({
    writeNull,
    writeBoolean,
    writeNumber,
    writeString,
    writeDate,
    writeTagged,
    tagOf,
    BSONVersionError: bson.BSONVersionError,
    VERSION_SYMBOL: Symbol.for('@@mdb.bson.version'),
    BSON_MAJOR_VERSION: layout.major ?? 7,
    bsonType: bson.bsonType ?? Symbol.for('@@mdb.bson.type'),
    HAND_PLAIN,
    HAND_TOBSON,
    HAND_PRE,
    PRE_TAG,
    enterDocument,
    handOne,
    roomNow,
    ELEMENT_VALUE_BYTES,
    openDocument,
    enterOpened,
    walkRoot,
    walkOpened,
    handBack,
    toBSONTarget: value => toBSONTarget(value, BSONError),
    MAX_COMPILED_DEPTH,
    KIND_ARR,
    KIND_OBJ,
    rootError,
    ROOT_TAGGED,
    ROOT_VALUE,
    KIND_MAP,
    isDate,
    isRegExp,
    isUint8Array,
    writeEnd,
    tagByChain: layout.tagReadByChain
  });

  /**
   * The shape node of an object frame's key list, if compiled (through
   * `parent`'s slot at `pos`, 1-based, 0 = none); `root`: the root's, walked
   * first while many root key lists are in use (table.js FEW_ROOTS).
   */
  function compiledNode(keys, parent, pos, root) {
    if (parent !== null) {
      // the two nodes the table keeps for this position (see table.js setSlot)
      const hint = parent.slots[pos - 1];
      if (hint !== undefined && hint.body !== null && sameKeys(hint.keys, keys)) return hint;
      const alt = parent.alts[pos - 1];
      if (alt !== undefined && alt.body !== null && sameKeys(alt.keys, keys)) return alt;
    }
    if (keys.length > MAX_SHAPE_KEYS) return null;
    const node = root ? shapes.lookUpWalked(keys) : parent === null ? shapes.lookUpRoot(keys) : shapes.lookUp(keys, parent, pos);
    return node !== null && node.body !== null ? node : null;
  }

  /**
   * A document (or array, or Map) in an array, its frame at depth `d`
   * entered: written through the compiled element of the key list the
   * array's last document had, else through its own key list's compiled
   * frame (true); else false, opened (walker.openKind, ...) for the walk.
   */
  function writeArrayDocument(walker, t, value, d, ck, iu, sf) {
    const arr = walker.frames[d - 1];
    const hint = arr.elementNode;
    if (hint !== null && hint.element(walker, t, value, d, ck, iu, sf)) return true;
    return writeArrayDocumentByKeys(walker, t, value, d, ck, iu, sf, arr, hint);
  }

  /**
   * writeArrayDocument past its `hint` (opened by hint.element, else opened
   * here): through the compiled frame of the document's own key list. (Its
   * own function, which V8 does not inline into the walk with the hint's
   * path: inlined, its look-ups made the walk's optimised code bigger and
   * slower to compile, and a new process's first 10 serialize calls of
   * orders_1000 took 96-97 ms against 89-91 now; warm, level.)
   */
  function writeArrayDocumentByKeys(walker, t, value, d, ck, iu, sf, arr, hint) {
    if (hint === null) openFrame(walker, value);
    if (walker.openKind !== KIND_OBJ) return false;
    const node = elementNode(arr, walker.openKeys);
    if (node === null) return false;
    node.body(walker, t, walker.openTarget, d, ck, iu, sf);
    writeEnd(t);
    return true;
  }

  /** The compiled node of a document element of array frame `arr` (the one the last had, first). */
  function elementNode(arr, keys) {
    const hint = arr.elementNode;
    if (hint !== null && sameKeys(hint.keys, keys)) return hint;
    const node = compiledNode(keys, null, 0, false);
    arr.elementNode = node;
    return node;
  }

  /** js-bson's root checks (serializeInto with no path yet), in its order. */
  function checkRoot(object) {
    if (Array.isArray(object)) {
      throw new BSONError('serialize does not support an array as the root input');
    }
    if (typeof object !== 'object') {
      throw new BSONError('serialize does not support non-object as the root input');
    } else if ('_bsontype' in object && typeof object._bsontype === 'string') {
      throw rootError(ROOT_TAGGED);
    } else if (isDate(object) || isRegExp(object) || isUint8Array(object) || isAnyArrayBuffer(object)) {
      throw rootError(ROOT_VALUE);
    }
  }

  function rootError(which) {
    return new BSONError(
      which === ROOT_TAGGED ? 'BSON types cannot be serialized as a document' : 'date, regexp, typedarray, and arraybuffer cannot be BSON documents'
    );
  }

  /**
   * js-bson's serializeInto of the root `object` (not null): the compiled root
   * of the last root's key list if there is one (shaped/serialize.js
   * frameSource: the same checks and reads), else js-bson's root checks, then
   * a compiled frame if the key list has one, else the walk.
   */
  function walkDocument(walker, object, checkKeys, serializeFunctions, ignoreUndefined) {
    walker.frame(0);
    enterPath(walker, 0, object);
    walker.shaped = shapes !== null && shapes.framesNow();
    if (walker.shaped) {
      const root = shapes.predictedRoot();
      if (root !== null) {
        root.root(walker, object, checkKeys, ignoreUndefined, serializeFunctions);
        return;
      }
    }
    // (a cold shape table: the roots bring ever-new key lists, so hidden classes V8 has not seen)
    walkRoot(walker, object, checkKeys, ignoreUndefined, serializeFunctions, shapes !== null && !walker.shaped);
  }

  /**
   * The root from js-bson's checks on (a compiled root passes on an array or
   * a non-object); `fresh`: a root of ever-new keys (see objectTarget).
   */
  function walkRoot(walker, object, ck, iu, sf, fresh) {
    checkRoot(object);
    openFrame(walker, object, fresh === true);
    walkOpened(walker, object, ck, iu, sf);
  }

  /** The root once opened: as an entered document at depth 0; its compiled node, if it has one, is predicted for the next root. */
  function walkOpened(walker, object, ck, iu, sf) {
    const node = enterOpened(walker, walker.tape, object, 0, null, 0, ck, iu, sf);
    if (node !== null) shapes.setRoot(node);
  }

  /**
   * A frame's checks in js-bson's order (frameKind, objectTarget, then
   * Object.keys): the result in walker.openKind / openTarget / openKeys
   * (false). A compiled element (shaped/serialize.js elementSource) makes
   * the same reads and hands back the same when it is not its key list.
   */
  function openFrame(walker, object, fresh) {
    const kind = frameKind(object);
    if (kind !== KIND_OBJ) return handBack(walker, kind, object, null);
    const target = objectTarget(object, BSONError, fresh);
    return handBack(walker, KIND_OBJ, target, Object.keys(target));
  }

  /**
   * An element of a compiled frame at `depth` whose value is an object with
   * no `_bsontype` and not `instanceof Date` (both read): the walk's checks
   * from there, in its order; a document or array is entered, through its
   * compiled frame when it has one. (A compiled parent calls the compiled
   * enter of the node its position had last instead: the same steps.)
   */
  function enterDocument(walker, t, w, key, value, depth, parent, pos, ck, iu, sf) {
    const d = openDocument(walker, t, w, key, value, depth);
    if (d < 0) return;
    openFrame(walker, value, freshAt(parent, pos));
    enterOpened(walker, t, value, d, parent, pos, ck, iu, sf);
  }

  /** writeUntagged, the cycle check and the document's header: the depth of its frame, or -1 when it was written as a value. */
  function openDocument(walker, t, w, key, value, depth) {
    if (writeUntagged(t, w, key, value, true)) return -1;
    if (onPath(walker, walker.srcs, depth, value)) throw circular();
    writeDocument(t, w, key, Array.isArray(value));
    const d = depth + 1;
    walker.frame(d);
    enterPath(walker, d, value);
    return d;
  }

  /** A document entered at depth `d`, once opened: through its key list's compiled frame (returned), else the walk (null). */
  function enterOpened(walker, t, value, d, parent, pos, ck, iu, sf) {
    const kind = walker.openKind;
    const node = kind === KIND_OBJ && walker.shaped && d <= MAX_COMPILED_DEPTH ? compiledNode(walker.openKeys, parent, pos, d === 0) : null;
    if (node !== null) {
      node.body(walker, t, walker.openTarget, d, ck, iu, sf);
      writeEnd(t);
      return node;
    }
    setFrame(walker.frames[d], kind, value, walker.openTarget, walker.openKeys, ck, iu, kind === KIND_ARR);
    walk(walker, d, sf);
    return null;
  }

  /** One element of a compiled frame at `depth` that the walk writes, with what was read of it (`hand`, `pre`). */
  function handOne(walker, depth, key, value, entry, hand, pre, preTag, ck, iu, sf) {
    walker.key = key;
    walker.value = value;
    walker.entry = entry;
    walker.hand = hand;
    walker.pre = pre;
    walker.preTag = preTag;
    makeSingleFrame(walker.frames[depth], ck, iu);
    walk(walker, depth, sf);
  }

  // (the document's size, for the shape table's compile threshold: table.js BIG_DOCUMENT)
  const documentDone = shapes !== null ? shapes.documentDone : () => {};
  return { walkDocument, documentDone };
}

/** How many elements may be written now (the tape grown first if it has no room). */
function roomNow(t) {
  if (!t.hasRoom()) t.grow();
  return t.room();
}

module.exports = { createWalk, Walker };
