'use strict';
// The encode tape's op codes and limits (ARCHITECTURE.md, "Encode tape").
// A tape word is `op | keyRef << 8`; see lib/serialize/types.js for who writes each op.
module.exports = Object.freeze({
  END: 0x00,
  DOUBLE: 0x01,
  STRING: 0x02,
  DOC: 0x03,
  ARRAY: 0x04,
  BINARY: 0x05,
  OID: 0x07,
  FALSE: 0x08,
  DATE: 0x09,
  NULL: 0x0a,
  REGEX: 0x0b,
  CODE: 0x0d,
  SYMBOL: 0x0e,
  CODE_W_SCOPE: 0x0f,
  INT32: 0x10,
  TIMESTAMP: 0x11,
  INT64: 0x12,
  DECIMAL128: 0x13,
  TRUE: 0x18,
  SKIP: 0x20,
  STRING_BYTES: 0x22,
  OID_INTS: 0x23,
  BINARY_BYTES: 0x24,
  REGEX_BYTES: 0x25,
  STRING_UTF16: 0x26, // a string arg Rust reads as UTF-16 code units (types.js writeString)
  CODE_BYTES: 0x27, // code (no scope) whose string is on the bytes tape, as STRING_BYTES
  SYMBOL_BYTES: 0x28, // a symbol whose string is on the bytes tape, as STRING_BYTES
  STRING_ROPE_FIRST: 0x29, // a short string, the first piece of the document's rope (its arg)
  STRING_ROPE: 0x2a, // a short string, the next piece of the rope
  STRING_LATIN1: 0x2b, // a string arg with no character above U+00FF, Rust reads it as Latin-1 bytes
  MAXKEY: 0x7f,
  MINKEY: 0xff,

  // Binary data up to COPY_BINARY_MAX (an element's room) is copied into the
  // bytes tape when the walk reaches it (as js-bson copies it; byte by byte up
  // to 16 bytes or from a part of longer data, else with one TypedArray#set),
  // and whole typed arrays up to SET_BINARY_MAX with one TypedArray#set
  // (types.js copiesToTape); other data is passed by reference and read by
  // Rust after the walk (README: differences). Below 1 KiB the copy onto the
  // tape and Rust's second one from it cost less than the reference's
  // Node-API call and generic write (200 binaries of 512 B: 0.72-0.78x
  // js-bson's speed by reference, 0.79-0.90x copied; 50 documents of a 64 B
  // and a 900 B binary: 1.20-1.36x -> 1.40-1.47x); from 1 KiB up it is level
  // or slower (1 KiB level, 2 KiB 0.97x -> 0.80x in one A/B).
  COPY_BINARY_MAX: 48,
  SET_BINARY_MAX: 1023,
  // Binary data of at least this many bytes passed by reference counts
  // towards writing the document into a buffer of its own (buffers.js
  // runNative): copied there in one pass, not into the scratch and again
  // out of it. (Below it the copy into fresh memory was slower than the
  // two passes: 50 binaries of 4 KiB 0.95x -> 0.87x js-bson, 200 of 1 KiB
  // 0.82-0.84x -> 0.72-0.74x; 20 of 8 KiB 0.93-0.96x -> 1.05-1.06x.)
  OWN_BINARY_MIN: 8192,
  SHORT_STRING_BYTES: 48, // ASCII strings up to this length are written by the walk
  // Short strings of at least ROPE_MIN characters past ROPE_AFTER bytes of
  // tape go into the document's rope (types.js putRopePiece). (Measured on
  // string_1000, words of 4-16 characters: a piece costs about as much as
  // copying 12 characters; from 10 characters up 1.33x js-bson, from 13 up
  // 1.54x, from 16 up 1.41x, none 1.35x.)
  ROPE_AFTER: 256,
  ROPE_MIN: 13,
  CHUNK: 8192, // max string/byte args per native call
  ARG0: 3, // args[0..2] = first, opsLen, outOffset; string/byte args start here
  MIN_TAPE: 64 * 1024,
  KEEP_OUT: 17 * 1024 * 1024, // output / bytes scratch kept after a document up to this size
  MAX_BSON_SIZE: 2147483647
});
