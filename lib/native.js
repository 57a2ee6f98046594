'use strict';
// Holds the loaded addon (see ./loader.js) and owns the scratch ArrayBuffers shared with Rust
// (slots and formats in ARCHITECTURE.md). One instance per environment:
// a worker thread loads its own copy of this module and of the addon state.
const loader = require('./loader');

// lib/codec.js loads this module (through serialize.js and deserialize.js) only
// when the addon loaded; anyone else gets the loader's reason.
if (!loader.loaded) throw new Error(`bson-rs: no native codec: ${loader.reason}`);
const { addon } = loader;

const SLOT = { decOps: 0, decNums: 1, encOps: 2, encNums: 3, encBytes: 4, encOut: 5, encCtl: 6 };
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
