'use strict';
// The decode tape's memory: the two scratch buffers the Rust reader writes
// (ops words, 8-byte number slots) and the string sink it calls. Shared by
// every js-bson copy's deserializer (one addon state per environment).
const { Buffer } = require('node:buffer');
const { addon, SLOT, ensureScratch, shrinkScratch } = require('../native');

// (Buffer's own latin1 decoder, also for a plain Uint8Array input)
const latin1Slice = Buffer.prototype.latin1Slice;

const MIN_OPS_BYTES = 64 * 1024;
const MIN_NUMS_BYTES = 64 * 1024;
// After a document needed more than this, the scratch goes back to the default size.
const SHRINK_ABOVE = 8 * 1024 * 1024;

/** The current views (replaced when a buffer grows) and the strings of the last decode. */
const tape = {
  ops: null, // Uint32Array: decOps[0] body length, decOps[1] definitions length, then the words
  f64: null, // number slots as doubles …
  i32: null, // … as int32 pairs (Long halves) …
  i64: null, // … and as int64 (bigint)
  // byte lengths of the two scratch buffers (plain numbers: cheaper to test than byteLength)
  opsBytes: 0,
  numsBytes: 0,
  strings: [], // decoded strings, in consumption order
  stringCount: 0
};

function refreshOps(bytes) {
  tape.ops = new Uint32Array(ensureScratch(SLOT.decOps, bytes));
  tape.opsBytes = tape.ops.byteLength;
}
function refreshNums(bytes) {
  const buffer = ensureScratch(SLOT.decNums, bytes);
  tape.numsBytes = buffer.byteLength;
  tape.f64 = new Float64Array(buffer);
  tape.i32 = new Int32Array(buffer);
  tape.i64 = new BigInt64Array(buffer);
}
refreshOps(MIN_OPS_BYTES);
refreshNums(MIN_NUMS_BYTES);

// Decoded strings arrive here, in consumption order, before decode() returns.
function sink() {
  const n = arguments.length;
  const base = tape.stringCount;
  const strings = tape.strings;
  for (let k = 0; k < n; k++) strings[base + k] = arguments[k];
  tape.stringCount = base + n;
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
  addon.setScratch(SLOT.decOps, tape.ops.buffer);
  addon.setScratch(SLOT.decNums, tape.f64.buffer);
  addon.setSink(sink);
  owner.decoder = self;
}
claimAddon();

/**
 * One native decode into the tape: `undefined` on success, else the reader's
 * error message (see ARCHITECTURE.md, "Native functions"). Grows the scratch
 * and retries when the reader asks for more room.
 */
function decodeToTape(buffer, index, flags, rawNames, utf8Names) {
  if (owner.decoder !== self) claimAddon();
  for (;;) {
    tape.stringCount = 0;
    // The index and flags go through the scratch (cheaper than napi arguments).
    tape.ops[0] = flags;
    tape.f64[0] = index;
    const r = rawNames === null && utf8Names === null ? nativeDecode(buffer) : nativeDecode(buffer, rawNames, utf8Names);
    if (r !== -1) {
      if (typeof r === 'number') readSpans(buffer, r);
      return typeof r === 'string' ? r : undefined;
    }
    const needOps = tape.ops[0];
    const needNums = tape.ops[1];
    if (needOps * 4 > tape.opsBytes) refreshOps(needOps * 4);
    if (needNums * 8 > tape.numsBytes) refreshNums(needNums * 8);
  }
}

/**
 * The decode's `n` strings when the reader left them to JS: short ASCII runs
 * of the input, as (start, end) pairs after the tape (core decode.rs,
 * write_js_spans). Cheaper than the native call into `sink` for a few strings.
 */
function readSpans(buffer, n) {
  const ops = tape.ops;
  const strings = tape.strings;
  let at = 2 + ops[0] + ops[1];
  for (let k = 0; k < n; k++, at += 2) strings[k] = latin1Slice.call(buffer, ops[at], ops[at + 1]);
  tape.stringCount = n;
}

/** After a decode: drops the strings of a big one, shrinks scratch grown for a huge one. */
function releaseTape() {
  if (tape.stringCount > 4096) tape.strings = [];
  if (tape.opsBytes > SHRINK_ABOVE) {
    shrinkScratch(SLOT.decOps, MIN_OPS_BYTES);
    refreshOps(MIN_OPS_BYTES);
  }
  if (tape.numsBytes > SHRINK_ABOVE) {
    shrinkScratch(SLOT.decNums, MIN_NUMS_BYTES);
    refreshNums(MIN_NUMS_BYTES);
  }
}

module.exports = { tape, decodeToTape, releaseTape };
