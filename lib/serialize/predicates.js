'use strict';
// js-bson's type predicates (parser/utils.ts), shared by the serialize walk,
// calculateObjectSize and the root checks.
const { typedArrayTag } = require('../buffer-view');
const objectToString = Object.prototype.toString;

function isUint8Array(value) {
  return typedArrayTag.call(value) === 'Uint8Array';
}
function isAnyArrayBuffer(value) {
  return (
    typeof value === 'object' &&
    value != null &&
    Symbol.toStringTag in value &&
    (value[Symbol.toStringTag] === 'ArrayBuffer' ||
      value[Symbol.toStringTag] === 'SharedArrayBuffer')
  );
}
function isRegExp(value) {
  return value instanceof RegExp || objectToString.call(value) === '[object RegExp]';
}
function isMap(value) {
  return (
    typeof value === 'object' &&
    value != null &&
    Symbol.toStringTag in value &&
    value[Symbol.toStringTag] === 'Map'
  );
}
function isDate(value) {
  return value instanceof Date || objectToString.call(value) === '[object Date]';
}

// isMap and isAnyArrayBuffer of the variable `v` as source, for generated
// code (shaped/size.js, shaped/serialize.js): there each `Symbol.toStringTag
// in v` has an inline cache of its shape's own, where the one in the shared
// function goes megamorphic in a process of many shapes (~10% of sizing
// { ok: 1 } there). The same reads in the same order; the generated code
// gets Symbol.toStringTag as TO_STRING_TAG.
function inlineIsMap(v) {
  return `(typeof ${v} === 'object' && ${v} != null && TO_STRING_TAG in ${v} && ${v}[TO_STRING_TAG] === 'Map')`;
}
function inlineIsAnyArrayBuffer(v) {
  return `(typeof ${v} === 'object' && ${v} != null && TO_STRING_TAG in ${v} && (${v}[TO_STRING_TAG] === 'ArrayBuffer' || ${v}[TO_STRING_TAG] === 'SharedArrayBuffer'))`;
}

/**
 * Whether V8 likely holds string `s` as two-byte (it has a character above
 * U+00FF), judged from two of its characters: a one-byte string has none, and
 * a miss only costs speed.
 */
function looksTwoByte(s) {
  const n = s.length;
  return s.charCodeAt(n >>> 1) > 0xff || s.charCodeAt(n >>> 2) > 0xff;
}

// A character above U+00FF. V8 compiles a regular expression's one-byte
// code without the class, so on a one-byte string the search fails at once
// (~20 ns for 100 KB), where it scans a two-byte one until its first such
// character (~0.45 ns a unit). RegExp.prototype.exec and
// String.prototype.slice as bson-rs loaded them: no user method runs.
const NON_LATIN1 = /[^\x00-\xff]/;
const regExpExec = RegExp.prototype.exec;
const stringSlice = String.prototype.slice;
// Strings searched: from this many units (calculateObjectSize measures a
// two-byte one natively, serialize writes it natively). On a one-byte string
// the search costs ~20-60 ns, ~6% of writing 5,000 ASCII characters.
const LONG_STRING = 4096;
// Units searched (from the start): 1/32 of the string, at most this many.
// A two-byte string without such a character there pays the search for
// nothing (~0.45 ns a unit) and is measured or written as js-bson does;
// 1/32 keeps that under ~5% of what measuring it costs (~0.33 ns a unit).
const TWO_BYTE_PREFIX_MAX = 256;

/**
 * Whether a LONG_STRING `s` has a character above U+00FF in its first
 * 1/32 (at most TWO_BYTE_PREFIX_MAX units), so that V8 holds it as
 * two-byte: text mostly in Latin-1 with typographic quotes, dashes or a few
 * such letters (French, German, Spanish, ...), which looksTwoByte's two
 * samples miss.
 */
function longTwoByte(s) {
  const n = s.length;
  return n >= LONG_STRING && regExpExec.call(NON_LATIN1, stringSlice.call(s, 0, Math.min(n >>> 5, TWO_BYTE_PREFIX_MAX))) !== null;
}

/**
 * Whether no character of `s` is above U+00FF, so that its Latin-1 bytes
 * are all of it. On a one-byte string the search fails at once (~14 ns
 * whatever its length); a two-byte one is scanned until such a character.
 */
function noneAboveLatin1(s) {
  return regExpExec.call(NON_LATIN1, s) === null;
}

module.exports = { isUint8Array, isAnyArrayBuffer, isRegExp, isMap, isDate, inlineIsMap, inlineIsAnyArrayBuffer, looksTwoByte, longTwoByte, noneAboveLatin1, LONG_STRING };
