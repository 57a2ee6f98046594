'use strict';
// The shape table behind the shape-compiled sizers (size.js):
// key lists seen at run time, each a node that gets compiled once it has
// recurred COMPILE_AFTER times. Nodes are found by key list (a Map on the
// first key, a few lists each) and remembered per position of the parent
// node, so nested documents of one shape find theirs with one list compare.
// The table is bounded (MAX_NODES, MAX_COMPILED), and while most look-ups
// bring a key list never seen before (keys made from ids or dates) it goes
// cold: the caller then takes its generic path.

const COMPILE_AFTER = 4;
// A root document's key list (lookUpWalked: the caller walks the document
// until its list is compiled) is compiled at its WALK_FIRST_USES-th use, or
// once its documents have amounted to WALK_FIRST_BYTES (as the sizer tells
// walked(); the serializer does not), while more than
// FEW_ROOTS root key lists are in use (in this window of COMPILE_WINDOW calls
// or the last); with fewer, at its COMPILE_AFTER-th. Each list's compiled
// code is optimised by V8 on its own: a process of many shapes pays for each,
// and until then it runs slower than the walk, whose code all shapes share.
// A process of one or a few shapes is quicker with them compiled at once
// (walked first there too, nested_4's first 1,000 serialize calls ran at
// 0.87x js-bson's speed against 1.31x; bench:cold's calculateObjectSize
// geometric mean 1.80x -> 1.67x): the serializer's walk is one big function
// that V8 optimises late (~48 ms of compile, at the ~3,800th call of
// small_10_fields), and a compiled root is tried first for the next root.
const WALK_FIRST_USES = 1024;
const WALK_FIRST_BYTES = 4 * 1024 * 1024;
const FEW_ROOTS = 3;
// After a document of BIG_DOCUMENT bytes or more, a key list of at most
// FEW_KEYS keys is compiled at its COMPILE_AFTER_BIG-th use instead: such a
// document's time goes to its values (a 1 MiB string or binary, an array of
// documents whose own lists are compiled as usual), and a compiled frame
// saves a few keys' worth (~0.1 us) a use, so that the compile (0.1-0.3 ms
// in a fresh process) would take thousands of calls to repay (sizing a 1 MiB
// binary ten times: 0.31 ms, 0.2 ms of it the compile; js-bson 0.35 ms).
const BIG_DOCUMENT = 64 * 1024;
const FEW_KEYS = 4;
const COMPILE_AFTER_BIG = 64;
const MAX_NODES = 1024; // key lists in a table
const MAX_COMPILED = 512; // nodes (key lists and array positions) compiled per table
const KEEP_RECENT = 16; // uses since the last sweep that keep a node
const MAX_PER_FIRST_KEY = 32; // documents of many collections all start with _id
// Key lists that come once in a call are compiled at most COMPILES_PER_WINDOW
// per COMPILE_WINDOW calls; one over the budget is compiled at a use in a later
// window. Each compiled list brings functions of its own for V8 to optimise,
// and V8 queues at most 8 optimising jobs at a time (a function that finds the
// queue full runs on unoptimised and asks again later): the 50 key lists of an
// `$and` of 50 conditions, all compiled in one call, kept the queue full and
// serializing it slower than js-bson for its first ~15,000 calls (0.71-0.80x
// in the bench's child); 8 a compile window, 1.21-1.36x there, and ahead of
// js-bson after ~6,000-11,000 calls. A list that comes again in the same call
// (the documents of an array) is compiled when due: held back with the
// others, sizing orders_1000's first 10 times took 87 ms instead of 68.
const COMPILES_PER_WINDOW = 8;
const COMPILE_WINDOW = 64;
// A position whose documents brought this many key lists new to the table
// ({ m: { [minute]: v } }: new keys at m on every call) is no longer looked
// up: its documents take the generic path, and the table stays warm for the
// rest of the document. (It must stop before the table's window ends, a
// quarter of WINDOW: else the whole table goes cold.)
const MAX_SLOT_MISSES = 8;
// cold: more than a quarter of a window's WINDOW look-ups brought a key
// list new to the table that did not come again by the end of the next
// window ({ $set: { [day]: v } } brings one such list in two look-ups);
// then calls use the generic path, and after COLD_CALLS of them the table
// gets two more windows of look-ups to show whether key lists recur again.
// (A look-up that adds a node costs ~0.5 µs: far too much to make on every
// call.) Lists are judged a window late, once they have had the time to
// recur: counted as they came, a process's first documents of many key lists
// sent the table cold for COLD_CALLS calls (an aggregate command of 17, its
// pipeline's stages and their operators: serialized at 1.04-1.07x js-bson's
// speed over its first 65,536 calls, 1.5x after).
const WINDOW = 64;
const COLD_CALLS = 65536;

// every table, for the tests' counters and resets
const tables = [];

/**
 * Whether the documents at 1-based position `pos` of `node` keep bringing
 * key lists new to the table (node.fresh, set by lookUp): there the walks
 * read an object's toBSON and _bsontype with Reflect.get and do not enter it
 * through the compiled frame the position had last (see shaped/serialize.js
 * FRESH_READS). (The generated code reads its own F[pos - 1] instead.)
 */
function freshAt(node, pos) {
  return node !== null && node.fresh !== null && node.fresh[pos - 1] === 1;
}

function sameKeys(a, b) {
  if (a === null || a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * A shape table. `compile(node)` generates the node's code (it sets
 * its own fields on the node) and returns whether it did; `isCompiled(node)`
 * says whether it has.
 */
function createTable(compile, isCompiled) {
  const byFirstKey = new Map();
  let nodeCount = 0;
  let compiledCount = 0;
  let calls = 0; // calls since the table went cold
  let probes = 0; // look-ups in the current window
  let added = []; // the nodes of the key lists new to the table in the current window
  let judged = []; // ... in the window before, judged when this one ends
  let unlisted = 0; // look-ups of the current window that found no room for a new key list
  let unlistedBefore = 0; // ... of the window before
  let cold = false;
  let lastUnslotted = null; // the node of the last look-up without a parent slot
  let root = null; // the compiled node of the last root document (setRoot), tried first for the next one
  let rootHits = 0; // (for the tests)
  let freshPositions = 0; // (for the tests)
  let afterBig = false; // the last document was BIG_DOCUMENT bytes or more
  let callNo = 0; // calls so far (framesNow)
  let windowStart = 0; // the call the current compile window (COMPILE_WINDOW) began at
  let windowCompiles = 0; // key lists that come once a call compiled in it
  let rootsWindow = 0; // the number of the current window of COMPILE_WINDOW calls (FEW_ROOTS)
  let rootsWindowStart = 0; // the call it began at
  let rootsNow = 0; // root key lists used in it
  let rootsBefore = 0; // ... in the window before

  // keys: the key list (null: an array node). slots: the node each
  // position's embedded object or array had last. misses: per position, the
  // key lists new to the table that came there; fresh (a Uint8Array the
  // compiler may give a node): 1 at a position once they reached
  // MAX_SLOT_MISSES. retryAt: the use at which a compile held back (budget,
  // no room) is tried again. walked: bytes walked (lookUpWalked). rootsWindow:
  // the last window it was counted in as a root (FEW_ROOTS). The compiler
  // adds its own fields (declared here, so that every node has one hidden
  // class).
  function newNode(keys) {
    if (nodeCount >= MAX_NODES) evictUncompiled();
    nodeCount++;
    return { keys, uses: 0, retryAt: 0, walked: 0, rootsWindow: -1, recent: 0, lastCall: -1, slots: [], alts: [], misses: [], fresh: null, body: null, frame: null, sized: null, root: null, enter: null, element: null };
  }

  // A full table keeps its compiled nodes and forgets the others (key lists
  // seen fewer than COMPILE_AFTER times), so that lists which recur later can
  // still be learned. (Array nodes live only in their parents' slots.)
  function evictUncompiled() {
    prune(isCompiled);
  }

  /** Keeps the listed nodes that `keep` accepts (nodeCount = their number); returns how many of them are compiled. */
  function prune(keep) {
    nodeCount = 0;
    let compiled = 0;
    for (const [first, list] of byFirstKey) {
      const kept = list.filter(keep);
      if (kept.length === 0) byFirstKey.delete(first);
      else byFirstKey.set(first, kept);
      nodeCount += kept.length;
      for (const n of kept) if (isCompiled(n)) compiled++;
    }
    return compiled;
  }

  /** Should this call use the table? Yes, but while cold no, except for a trial window every COLD_CALLS calls. */
  function framesNow() {
    callNo++;
    if (callNo - rootsWindowStart >= COMPILE_WINDOW) {
      rootsWindowStart = callNo;
      rootsWindow++;
      rootsBefore = rootsNow;
      rootsNow = 0;
    }
    if (cold && ++calls === COLD_CALLS) {
      calls = 0;
      cold = false;
      startWindows();
    }
    return !cold;
  }

  function startWindows() {
    probes = unlisted = unlistedBefore = 0;
    added = [];
    judged = [];
  }

  function endWindow() {
    let once = unlistedBefore; // new key lists of the window before that did not come again
    for (let i = 0; i < judged.length; i++) if (judged[i].uses <= 1) once++;
    cold = once * 4 > WINDOW;
    judged = added;
    added = [];
    unlistedBefore = unlisted;
    unlisted = 0;
    probes = 0;
  }

  function find(keys) {
    if (++probes === WINDOW) endWindow();
    const first = keys.length === 0 ? '' : keys[0];
    let list = byFirstKey.get(first);
    if (list !== undefined) {
      for (let i = 0; i < list.length; i++) if (sameKeys(list[i].keys, keys)) return list[i];
    }
    if (list === undefined) {
      list = [];
      byFirstKey.set(first, list);
    } else if (list.length >= MAX_PER_FIRST_KEY) {
      unlisted++;
      return null;
    }
    const node = newNode(keys);
    list.push(node);
    added.push(node);
    return node;
  }

  /**
   * Counts a use of `node`; compiles it once due: at its COMPILE_AFTER-th use,
   * or for a root's key list (`root`: lookUpWalked) while many are in use at
   * the WALK_FIRST_USES-th or once WALK_FIRST_BYTES walked; after a big
   * document a list of few keys not before COMPILE_AFTER_BIG (see BIG_DOCUMENT).
   */
  function use(node, root) {
    if (root) countRoot(node);
    node.recent++;
    const again = node.lastCall === callNo; // (used before in this call)
    node.lastCall = callNo;
    if (isCompiled(node) || ++node.uses < node.retryAt) return node;
    const walkFirst = root && node.walked < WALK_FIRST_BYTES && Math.max(rootsNow, rootsBefore) > FEW_ROOTS;
    const due = walkFirst ? WALK_FIRST_USES : COMPILE_AFTER;
    if (node.uses < (afterBig && node.keys !== null && node.keys.length <= FEW_KEYS ? Math.max(due, COMPILE_AFTER_BIG) : due)) return node;
    if (!again) {
      if (callNo - windowStart >= COMPILE_WINDOW) {
        windowStart = callNo;
        windowCompiles = 0;
      }
      if (windowCompiles >= COMPILES_PER_WINDOW) {
        node.retryAt = node.uses + 1;
        return node;
      }
    }
    if (compiledCount >= MAX_COMPILED) sweep();
    if (compiledCount < MAX_COMPILED && compile(node)) {
      compiledCount++;
      if (!again) windowCompiles++;
    } else node.retryAt = node.uses + 64; // (no room, or no code generation)
    return node;
  }

  // All compiled slots taken: forget the nodes used fewer than KEEP_RECENT
  // times since the last sweep (a node still held by a kept parent's slot
  // goes on working there). A node that found no room retries every 64 uses.
  function sweep() {
    compiledCount = prune(n => n.recent >= KEEP_RECENT);
    for (const list of byFirstKey.values()) for (const n of list) n.recent = 0;
  }

  // A position holds the last two nodes the Map found for it (slots, then
  // alts), both tried before the Map. One node serves every level of a tree
  // whose children differ by level (deep_bson: { right, left } over
  // { right, left } at every level but the last, over { rightValue,
  // leftValue } there); with one entry, every level change took the Map.
  // (A hit on alts does not swap them: the stores cost more than the compare.)
  function setSlot(parent, pos, node) {
    while (parent.slots.length < pos - 1) parent.slots.push(undefined);
    while (parent.alts.length < pos - 1) parent.alts.push(undefined);
    parent.alts[pos - 1] = parent.slots[pos - 1];
    parent.slots[pos - 1] = node;
  }

  /**
   * The node for an object with `keys` and no parent node (a root): the last
   * such node first, as consecutive documents of one shape skip the Map.
   * (Small, so that V8 can inline it into the callers: as a branch of lookUp,
   * which V8 does not inline, it was a call of ~15% of sizing { n: 1, ok: 1 }.)
   */
  function lookUpRoot(keys) {
    return lookUpUnslotted(keys, false);
  }

  /**
   * lookUpRoot for a root document, which the caller walks (its generic walk,
   * not the frame driver) until its key list is compiled, and whose size it
   * may tell walked(): while more than FEW_ROOTS root key lists are in use,
   * the list is due at WALK_FIRST_USES uses, or once its documents have
   * amounted to WALK_FIRST_BYTES.
   */
  function lookUpWalked(keys) {
    return lookUpUnslotted(keys, true);
  }

  /** Counts `node` among the root key lists used in this window (FEW_ROOTS). */
  function countRoot(node) {
    if (node.rootsWindow === rootsWindow) return;
    node.rootsWindow = rootsWindow;
    rootsNow++;
  }

  function lookUpUnslotted(keys, root) {
    const last = lastUnslotted;
    if (last === null || !sameKeys(last.keys, keys)) return findUnslotted(keys, root);
    if (++probes === WINDOW) endWindow();
    return use(last, root);
  }

  function findUnslotted(keys, root) {
    const node = find(keys);
    if (node === null) return null;
    lastUnslotted = node;
    return use(node, root);
  }

  /** The size of a root document of `node`'s key list that the caller walked (lookUpWalked). */
  function walked(node, bytes) {
    node.walked += bytes;
  }

  // The root prediction. A caller that found a compiled node for a root
  // document (its key list: one per document) calls setRoot; its next call
  // tries that node's compiled root first, whose own inline caches see that
  // one shape: at a single shared site, js-bson's root checks ('_bsontype' in
  // object, ...) went megamorphic in a process of many document shapes
  // (~35 ns of serializing { ok: 1 }). A hit counts as the look-up it
  // replaces (rootHit); a miss goes on to lookUpRoot.
  function setRoot(node) {
    root = node;
  }
  function predictedRoot() {
    return root;
  }
  /** The size in bytes of the document just sized or written (see BIG_DOCUMENT). */
  function documentDone(bytes) {
    afterBig = bytes >= BIG_DOCUMENT;
  }
  function rootHit(node) {
    node.recent++;
    countRoot(node);
    rootHits++;
    if (++probes === WINDOW) endWindow();
  }

  /** The node for an object with `keys`, through the parent node's slot at position `pos` (1-based; 0 = none). */
  function lookUp(keys, parent, pos) {
    if (parent === null || pos === 0) return lookUpRoot(keys);
    const hint = parent.slots[pos - 1];
    if (hint !== undefined && sameKeys(hint.keys, keys)) return isCompiled(hint) ? hint : use(hint, false);
    const alt = parent.alts[pos - 1];
    if (alt !== undefined && sameKeys(alt.keys, keys)) return isCompiled(alt) ? alt : use(alt, false);
    const misses = parent.misses[pos - 1] ?? 0;
    if (misses >= MAX_SLOT_MISSES) return null;
    const node = find(keys);
    if (node === null) return null;
    if (node.uses === 0) {
      // a key list new to the table
      while (parent.misses.length < pos - 1) parent.misses.push(0);
      parent.misses[pos - 1] = misses + 1;
      if (misses + 1 >= MAX_SLOT_MISSES && parent.fresh !== null) {
        parent.fresh[pos - 1] = 1;
        freshPositions++;
      }
    }
    setSlot(parent, pos, node);
    return use(node, false);
  }

  /** The node for an array at the parent's position `pos` (null when there is no parent node). */
  function arrayAt(parent, pos) {
    if (parent === null || pos === 0) return null;
    const hint = parent.slots[pos - 1];
    if (hint !== undefined && hint.keys === null) return isCompiled(hint) ? hint : use(hint, false);
    const node = newNode(null);
    setSlot(parent, pos, node);
    return use(node, false);
  }

  tables.push({
    cold: () => cold,
    nodes: () => nodeCount,
    compiled: () => compiledCount,
    rootHits: () => rootHits,
    freshPositions: () => freshPositions,
    reset() {
      byFirstKey.clear();
      lastUnslotted = null;
      root = null;
      nodeCount = compiledCount = calls = rootHits = freshPositions = callNo = windowStart = windowCompiles = 0;
      rootsWindow = rootsWindowStart = rootsNow = rootsBefore = 0;
      startWindows();
      cold = false;
      afterBig = false;
    }
  });
  return { lookUp, lookUpRoot, lookUpWalked, walked, arrayAt, framesNow, setRoot, predictedRoot, rootHit, documentDone };
}

// For the tests: counters over all tables, and a reset to empty tables.
const sum = f => tables.reduce((n, t) => n + f(t), 0);
const testing = {
  nodes: () => sum(t => t.nodes()),
  compiled: () => sum(t => t.compiled()),
  rootHits: () => sum(t => t.rootHits()),
  freshPositions: () => sum(t => t.freshPositions()),
  tables: () => tables.length,
  coldTables: () => sum(t => (t.cold() ? 1 : 0)),
  reset: () => tables.forEach(t => t.reset()),
  MAX_NODES,
  MAX_COMPILED,
  MAX_SLOT_MISSES,
  COLD_CALLS,
  COMPILES_PER_WINDOW,
  COMPILE_WINDOW
};

module.exports = { createTable, sameKeys, freshAt, testing, COMPILE_AFTER, WALK_FIRST_USES, WALK_FIRST_BYTES, FEW_ROOTS, COMPILE_AFTER_BIG, BIG_DOCUMENT, FEW_KEYS };
