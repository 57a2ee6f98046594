'use strict';
// A tiny raw BSON byte builder, so tests can craft documents js serialize()
// never produces (deprecated types, invalid UTF-8, lying lengths, ...).
// No side effects on load.

const toBytes = x => (typeof x === 'string' ? Buffer.from(x, 'utf8') : Buffer.from(x));

function i32(n) {
  const b = Buffer.alloc(4);
  b.writeInt32LE(n | 0);
  return b;
}
function u32(n) {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(n >>> 0);
  return b;
}
function i64(n) {
  const b = Buffer.alloc(8);
  b.writeBigInt64LE(BigInt.asIntN(64, BigInt(n)));
  return b;
}
function f64(n) {
  const b = Buffer.alloc(8);
  b.writeDoubleLE(n);
  return b;
}
/** a C string: bytes + NUL */
function cstr(s) {
  return Buffer.concat([toBytes(s), Buffer.from([0])]);
}
/** a BSON string: int32 length (incl. NUL) + bytes + NUL */
function str(s) {
  const bytes = toBytes(s);
  return Buffer.concat([i32(bytes.length + 1), bytes, Buffer.from([0])]);
}
/** an element: type byte + key cstring + payload */
function el(type, key, payload = Buffer.alloc(0)) {
  return Buffer.concat([Buffer.from([type]), cstr(key), toBytes(payload)]);
}
/** a document from elements: int32 total length + elements + NUL */
function doc(...elements) {
  const body = Buffer.concat(elements.map(toBytes));
  return Buffer.concat([i32(body.length + 5), body, Buffer.from([0])]);
}
/** an array document from payload-less element builders: [[type, payload], ...] */
function arr(...items) {
  return doc(...items.map(([type, payload], i) => el(type, String(i), payload)));
}
/** binary payload: int32 length + subtype + bytes (subtype 2 gets the inner length) */
function bin(subtype, data) {
  const bytes = toBytes(data);
  if (subtype === 2) return Buffer.concat([i32(bytes.length + 4), Buffer.from([2]), i32(bytes.length), bytes]);
  return Buffer.concat([i32(bytes.length), Buffer.from([subtype]), bytes]);
}
/** code with scope payload */
function cws(code, scopeDoc) {
  const s = str(code);
  return Buffer.concat([i32(4 + s.length + scopeDoc.length), s, scopeDoc]);
}

const T = {
  double: 0x01, string: 0x02, object: 0x03, array: 0x04, binary: 0x05, undefined: 0x06, oid: 0x07,
  bool: 0x08, date: 0x09, null: 0x0a, regex: 0x0b, dbpointer: 0x0c, code: 0x0d, symbol: 0x0e,
  codeWScope: 0x0f, int32: 0x10, timestamp: 0x11, int64: 0x12, decimal128: 0x13, minKey: 0xff, maxKey: 0x7f
};

module.exports = { i32, u32, i64, f64, cstr, str, el, doc, arr, bin, cws, T };
