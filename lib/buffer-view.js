'use strict';
// A Buffer over part of an ArrayBuffer, as Node makes one: its Buffer class
// (lib/buffer.js FastBuffer; Buffer.prototype is its prototype, and
// Buffer[Symbol.species] returns it). Buffer.from(arrayBuffer, offset, length)
// makes the same object after checks of its arguments that the callers here
// do not need (24 -> 16 ns a view). Where Buffer[Symbol.species] is not that
// class, Buffer.from.
const { Buffer } = require('node:buffer');

const species = Buffer[Symbol.species];
const FastBuffer = typeof species === 'function' && species.prototype === Buffer.prototype ? species : null;

// %TypedArray%.prototype and its getters, called on a value known to be a
// typed array: they read its internal slots, so no user getter runs, and
// they skip V8's generic load IC (see the callers for what each saved).
const TYPED_ARRAY = Object.getPrototypeOf(Uint8Array.prototype);
const getter = name => Object.getOwnPropertyDescriptor(TYPED_ARRAY, name).get;
const typedArrayBuffer = getter('buffer');
const typedArrayByteOffset = getter('byteOffset');
const typedArrayByteLength = getter('byteLength');
const typedArrayLength = getter('length');
const typedArrayTag = getter(Symbol.toStringTag); // (undefined for a value that is no typed array)

/** A Buffer over `length` bytes of ArrayBuffer `ab` from `offset` (in range: the callers' own offsets). */
function bufferView(ab, offset, length) {
  return FastBuffer !== null ? new FastBuffer(ab, offset, length) : Buffer.from(ab, offset, length);
}

module.exports = { bufferView, nodeBufferClass: FastBuffer, TYPED_ARRAY, typedArrayBuffer, typedArrayByteOffset, typedArrayByteLength, typedArrayLength, typedArrayTag };
