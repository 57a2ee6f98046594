'use strict';
// serialize / serializeWithBufferAndIndex / calculateObjectSize /
// setInternalBufferSize, bound to one js-bson copy's classes: option handling
// of js-bson's serializer.ts; the walk (serialize/walk.js: the root checks, then
// the document) writes the tape, one native call (serialize/buffers.js,
// runNative) lays out the bytes.
const { Buffer } = require('node:buffer');
const { layoutOf } = require('./layout');
const { runNative, takeDocument, lastDocument, shrinkBig, ensureInternalSize } = require('./serialize/buffers');
const { createWalk, Walker } = require('./serialize/walk');
const createSizer = require('./calculate-size');

const walkers = []; // one per re-entrancy level, shared by every js-bson copy
let level = 0; // re-entrancy depth (serialize called from a toBSON / getter)

const EMPTY_DOCUMENT = new Uint8Array([5, 0, 0, 0, 0]);

function emptyDocument() {
  const result = Buffer.allocUnsafe(5);
  result[0] = 5;
  result[1] = 0;
  result[2] = 0;
  result[3] = 0;
  result[4] = 0;
  return result;
}

module.exports = function createSerializer(bson) {
  const { BSONError } = bson;
  const layout = layoutOf(bson);
  const { walkDocument: walk, documentDone } = createWalk(bson, layout);

  /** The whole serialize: walk, native write; returns the length (serialize/buffers.js: takeDocument / lastDocument). */
  function serializeToOut(object, checkKeys, serializeFunctions, ignoreUndefined, fresh, into, index) {
    const lvl = level;
    let walker = walkers[lvl];
    if (walker === undefined) {
      walker = new Walker(lvl);
      walkers[lvl] = walker;
    }
    level = lvl + 1;
    walker.maxDepth = 0;
    walker.tape.reset();
    try {
      walk(walker, object, checkKeys, serializeFunctions, ignoreUndefined);
      const n = runNative(walker.tape, BSONError, fresh, into, index);
      documentDone(n);
      return n;
    } finally {
      level = lvl;
      walker.release();
    }
  }

  function serialize(object, options = {}) {
    const checkKeys = typeof options.checkKeys === 'boolean' ? options.checkKeys : false;
    const serializeFunctions =
      typeof options.serializeFunctions === 'boolean' ? options.serializeFunctions : false;
    const ignoreUndefined =
      typeof options.ignoreUndefined === 'boolean' ? options.ignoreUndefined : true;
    if (typeof options.minInternalBufferSize === 'number') {
      ensureInternalSize(options.minInternalBufferSize);
    }

    if (object == null) return emptyDocument();
    // (js-bson's root checks: the walk's, serialize/walk.js walkDocument)
    const n = serializeToOut(object, checkKeys, serializeFunctions, ignoreUndefined, true, null, 0);
    return takeDocument(n);
  }

  function serializeWithBufferAndIndex(object, finalBuffer, options = {}) {
    const checkKeys = typeof options.checkKeys === 'boolean' ? options.checkKeys : false;
    const serializeFunctions =
      typeof options.serializeFunctions === 'boolean' ? options.serializeFunctions : false;
    const ignoreUndefined =
      typeof options.ignoreUndefined === 'boolean' ? options.ignoreUndefined : true;
    const startIndex = typeof options.index === 'number' ? options.index : 0;

    let n;
    let bytes;
    if (object == null) {
      n = 5;
      bytes = EMPTY_DOCUMENT;
    } else {
      n = serializeToOut(object, checkKeys, serializeFunctions, ignoreUndefined, false, finalBuffer, startIndex);
      bytes = lastDocument(n); // (null: written into finalBuffer)
    }
    try {
      if (bytes !== null) finalBuffer.set(bytes, startIndex);
    } finally {
      shrinkBig();
    }
    return startIndex + n - 1;
  }

  function setInternalBufferSize(size) {
    ensureInternalSize(size);
  }

  const calculateObjectSize = createSizer(bson, layout);

  return { serialize, serializeWithBufferAndIndex, calculateObjectSize, setInternalBufferSize };
};
