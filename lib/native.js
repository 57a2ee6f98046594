'use strict';
// Loads the addon and owns the scratch ArrayBuffers shared with Rust
// (slots and formats in ARCHITECTURE.md). One instance per environment:
// a worker thread loads its own copy of this module and of the addon state.
const path = require('node:path');

let addon;
try {
  addon = require(path.join(__dirname, '..', 'bson_rs.node'));
} catch (cause) {
  throw new Error(
    'bson-rs: the native addon is missing or failed to load; run `npm install` (needs cargo) in the bson-rs package',
    { cause }
  );
}

const SLOT = { decOps: 0, decNums: 1, encOps: 2, encNums: 3, encBytes: 4, encOut: 5 };
// Large enough that V8 keeps the backing store off-heap, so its address is stable.
const MIN_SCRATCH = 64 * 1024;
const buffers = [];

/** Returns the slot's ArrayBuffer, replacing it with one of at least `bytes` bytes if needed. */
function ensureScratch(slot, bytes) {
  const current = buffers[slot];
  if (current !== undefined && current.byteLength >= bytes) return current;
  let size = MIN_SCRATCH;
  while (size < bytes) size *= 2;
  const buffer = new ArrayBuffer(size);
  addon.setScratch(slot, buffer);
  buffers[slot] = buffer;
  return buffer;
}

/** Drops an oversized scratch buffer back to the default size (after a huge document). */
function shrinkScratch(slot, keepBytes) {
  const current = buffers[slot];
  if (current !== undefined && current.byteLength > keepBytes) {
    buffers[slot] = undefined;
    return ensureScratch(slot, MIN_SCRATCH);
  }
  return current;
}

for (const slot of Object.values(SLOT)) ensureScratch(slot, MIN_SCRATCH);

module.exports = { addon, SLOT, ensureScratch, shrinkScratch };
