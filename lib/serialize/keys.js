'use strict';
// The encoder's key cache: key string -> entry = ((id + 1) << 8) | flags, where
// id is the key's number in the native key table (addon.defineKey) and flags
// are the js-bson key checks that would fail. Shared by every js-bson copy
// (one native key table per environment); bounded (KEY_CACHE_MAX keys).
const { addon } = require('../native');
const { KEY_BYTES_MAX, KEY_INLINE, KEY_STAGED } = require('./types');

const KEY_CACHE_MAX = 65536;
const KEY_MAX_LENGTH = 64; // longer keys are sent inline
const K_NUL = 1;
const K_DOLLAR = 2;
const K_DOT = 4;
const K_FLAGS = 7;
const K_STAGED = 8; // (returned, never cached) the key's bytes are on the bytes tape at tape.bi (stageKey)
const K_REF = ~0xff; // entry & K_REF: the key's tape bits (0 = send the key inline)

const keyCache = new Map();
const keyNames = []; // by id (the native key table's keys, for serialize/small.js)
let nextKeyId = 0;
const ignoreKeys = new Set(['$db', '$ref', '$id', '$clusterTime']);

// Key memo of the walk, by slot = (row + position) mod MEMO_SLOTS, where a
// document's row is its depth (bits 10-13) and an offset (bits 0-9) that
// memoRow derives from its position in its parent: documents of one shape
// hit it with a pointer compare of the interned key instead of a Map lookup,
// and so do sibling documents of different keys (full_bson's six code scopes
// missed on each of their 27 keys when every document of a depth had one
// row). A document of more than MEMO_ROW keys runs on into the next rows:
// when its positions wrapped around within its row, keys MEMO_ROW apart
// took turns at a slot and missed on every call, a Map look-up each (2,000
// keys: 0.98-1.00x js-bson's serialize speed, 1.25-1.27x without the
// misses), and in a cold window (below) each such miss counts as fresh, so
// the window stayed cold and those keys went inline for good (with rows of
// 256, a 300-key document after ever-new keys: 88 of its keys never defined).
const MEMO_ROW = 1024;
const MEMO_SLOTS = 16 * MEMO_ROW;
const memoKeys = new Array(MEMO_SLOTS).fill('');
const memoEntries = new Int32Array(MEMO_SLOTS);

function keyFlags(key) {
  if (key[0] === '$' && ignoreKeys.has(key)) return 0;
  let flags = 0;
  if (key.indexOf('\x00') !== -1) flags |= K_NUL;
  if (key[0] === '$') flags |= K_DOLLAR;
  if (key.includes('.')) flags |= K_DOT;
  return flags;
}

// Adaptive defining: documents with ever-new keys (dynamic keys) would fill
// the cache with keys that never hit, paying a Map miss and a native
// defineKey call each. A window ends after KEY_WINDOW fresh keys or
// 2 * KEY_WINDOW documents; when its fresh keys came at more than one per two
// documents, the next window is "cold": a key that misses the memo is sent
// inline without a Map lookup, and only a key that recurs at the same memo
// slot (so it is not one of the ever-new ones) is looked up and defined.
// A process's first window is judged by documents instead: it ends at the
// first fresh key after FIRST_DOCS documents, cold when more than half of
// them brought a fresh key. It used to end at 256 fresh keys: documents of
// ever-new keys then defined 256 keys natively first (a new process's first
// 1,000 calls of { [userId]: n } 6% slower than now), and one document of
// more than 256 keys ended it cold inside its first call. (It does not
// start cold: a document whose subdocuments share memo slots, as full_bson's
// did, misses its memo on every call, and in a cold window each miss counts
// as fresh, so the window stayed cold and those keys were sent inline for
// good: 6% slower.)
const KEY_WINDOW = 4096;
const FIRST_DOCS = 32;
const window = { docs: 0, fresh: 0, cold: false, first: true, freshDocs: 0, lastFreshDoc: -1 };

/** Counts one serialized document in the adaptive window (called per native write). */
function countDocument() {
  window.docs++;
}

/** Counts a fresh key (a Map miss; in a cold window, a memo miss) and ends the window when it is full. */
function countFresh() {
  window.fresh++;
  if (window.first) {
    if (window.lastFreshDoc !== window.docs) {
      window.lastFreshDoc = window.docs;
      window.freshDocs++;
    }
    if (window.docs >= FIRST_DOCS) endWindow(window.freshDocs * 2 > window.docs);
  } else if (window.fresh >= KEY_WINDOW || window.docs >= 2 * KEY_WINDOW) {
    endWindow(window.fresh * 2 > window.docs);
  }
}

function endWindow(cold) {
  window.cold = cold;
  window.fresh = 0;
  window.docs = 0;
  window.first = false;
}

/** Whether `key` may get an entry in the native key table (room left, not too long). */
function definable(key) {
  return nextKeyId < KEY_CACHE_MAX && key.length <= KEY_MAX_LENGTH;
}

/** Cache entry of a key not cached yet (defined in the native key table if there is room). */
function newKey(key) {
  const flags = keyFlags(key);
  if (!definable(key)) return flags; // inline key
  const id = nextKeyId++;
  addon.defineKey(id, key);
  keyNames[id] = key;
  const entry = ((id + 1) << 8) | flags;
  keyCache.set(key, entry);
  return entry;
}

/** The cache entry of `key`, defining it if it is new (a warm window, or a key that recurred). */
function lookUp(key, m) {
  let entry = keyCache.get(key);
  if (entry === undefined) {
    countFresh();
    entry = newKey(key);
  }
  memoKeys[m] = key;
  memoEntries[m] = entry;
  return entry;
}

/**
 * A memo miss in a cold window: the key is sent inline (its flags checked),
 * not looked up. Given the tape (by the document lane, whose next write is
 * this element), a short ASCII key is checked and copied in one pass (stageKey).
 */
function coldMiss(key, m, t) {
  countFresh();
  let flags = t === null ? -1 : stageKey(key, t);
  if (flags < 0) flags = keyFlags(key);
  memoKeys[m] = key;
  memoEntries[m] = flags & ~K_STAGED;
  return flags;
}

/**
 * Copies a key of 1..KEY_BYTES_MAX characters 1..127 to the bytes tape at
 * t.bi (t.bi is not advanced: putInlineKey does that) and returns its flags
 * | K_STAGED; -1 for any other key (keyFlags then). One pass instead of
 * keyFlags' two scans and putInlineKey's copy (keys new on every call).
 * (Its own copy loop: one shared with putInlineKey measured 3% slower on
 * newkeys_buckets serialize, 22 fresh children each.)
 */
function stageKey(key, t) {
  const n = key.length;
  // ('$' keys: keyFlags, with its ignoreKeys check)
  if (n === 0 || n > KEY_BYTES_MAX || key.charCodeAt(0) === 36) return -1;
  t.reserveBytes(n);
  const u8 = t.u8;
  const bi = t.bi;
  let flags = K_STAGED;
  for (let j = 0; j < n; j++) {
    const c = key.charCodeAt(j);
    if (c > 127 || c === 0) return -1;
    if (c === 46) flags |= K_DOT;
    u8[bi + j] = c;
  }
  return flags;
}

/**
 * The entry of string key `key` at memo slot `m` (see memoKeys). `t`: the
 * tape when the caller writes this key's element next (see coldMiss), else null.
 */
function keyEntry(key, m, t) {
  if (memoKeys[m] === key) {
    const entry = memoEntries[m];
    // (an inline entry that recurs at its slot: looked up, as it may be worth defining)
    if ((entry & K_REF) !== 0 || !window.cold || !definable(key)) return entry;
    return lookUp(key, m);
  }
  return window.cold ? coldMiss(key, m, t) : lookUp(key, m);
}

/**
 * The entry of a key of a recurring key list (shaped/serialize.js): cached,
 * or defined now whatever the window, as the list is known to recur.
 */
function entryOf(key) {
  const entry = keyCache.get(key);
  return entry !== undefined ? entry : newKey(key);
}

/** The writers' key word (types.js) of a string key's entry: its tape bits, KEY_STAGED or KEY_INLINE. */
function keyWord(entry) {
  const bits = entry & K_REF;
  if (bits !== 0) return bits;
  return (entry & K_STAGED) !== 0 ? KEY_STAGED : KEY_INLINE;
}

/** The key defined with `id`. */
function keyName(id) {
  return keyNames[id];
}

/** The memo row of a document at `depth` whose offset is derived from `at` (its parent's row plus its position there; 0 at the root). */
function memoRow(depth, at) {
  return ((depth & 15) * MEMO_ROW) | ((at * 37) & (MEMO_ROW - 1));
}

/** The memo slot of the key at position `idx` (1-based, after the increment) in a document of row `row`. */
function memoSlot(row, idx) {
  return (row + idx) & (MEMO_SLOTS - 1);
}

/** For tests: whether the window is cold, and whether `key` is defined. */
function keyCacheState(key) {
  return { cold: window.cold, defined: keyCache.has(key), size: keyCache.size };
}

module.exports = { keyEntry, entryOf, keyWord, keyName, memoRow, memoSlot, KEY_CACHE_MAX, countDocument, keyCacheState, K_NUL, K_DOLLAR, K_DOT, K_FLAGS, K_REF, K_STAGED };
