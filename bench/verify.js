'use strict';
// Before anything is timed, both libraries must agree on a document:
// serialize gives the same bytes, calculateObjectSize the same number, and
// deserialize (of js-bson's bytes) values that are equal as canonical Extended
// JSON and have the same classes, keys and primitive values all the way down.

function describe(v) {
  if (v === null) return 'null';
  if (typeof v !== 'object') return typeof v;
  const proto = Object.getPrototypeOf(v);
  return proto === null ? 'null-prototype object' : proto.constructor ? proto.constructor.name : 'object';
}

/** Returns null when a and b have the same structure, else the path and reason. */
function structuralDiff(a, b, at = '$') {
  if (typeof a !== typeof b) return `${at}: ${typeof a} vs ${typeof b}`;
  if (a === null || b === null || typeof a !== 'object') {
    if (typeof a === 'function') return null;
    return Object.is(a, b) ? null : `${at}: ${String(a).slice(0, 40)} vs ${String(b).slice(0, 40)}`;
  }
  if (Object.getPrototypeOf(a) !== Object.getPrototypeOf(b)) return `${at}: ${describe(a)} vs ${describe(b)}`;
  if (ArrayBuffer.isView(a)) {
    if (a.byteLength !== b.byteLength) return `${at}: ${a.byteLength} bytes vs ${b.byteLength}`;
    return Buffer.compare(Buffer.from(a.buffer, a.byteOffset, a.byteLength), Buffer.from(b.buffer, b.byteOffset, b.byteLength)) === 0
      ? null
      : `${at}: different bytes`;
  }
  if (a instanceof Date) return Object.is(a.getTime(), b.getTime()) ? null : `${at}: ${a.toISOString()} vs ${b.toISOString()}`;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length || ka.some((k, i) => k !== kb[i])) return `${at}: keys [${ka.slice(0, 5)}...] vs [${kb.slice(0, 5)}...]`;
  for (const k of ka) {
    const d = structuralDiff(a[k], b[k], `${at}.${k}`);
    if (d) return d;
  }
  return null;
}

function attempt(fn) {
  try {
    return { value: fn() };
  } catch (error) {
    return { error };
  }
}

/** Returns a list of { operation, error } (empty when the libraries agree). */
function verifyDocument(js, rs, doc) {
  const problems = [];
  const fail = (operation, error) => problems.push({ operation, error });

  const jsBytes = js.serialize(doc);
  const ser = attempt(() => rs.serialize(doc));
  if (ser.error) fail('serialize', `bson-rs threw: ${ser.error.message}`);
  else if (Object.getPrototypeOf(ser.value) !== Object.getPrototypeOf(jsBytes)) fail('serialize', `returns ${describe(ser.value)}, js-bson ${describe(jsBytes)}`);
  else if (Buffer.compare(ser.value, jsBytes) !== 0) {
    let at = 0;
    while (at < jsBytes.length && ser.value[at] === jsBytes[at]) at++;
    fail('serialize', `different bytes (${ser.value.length} vs js-bson ${jsBytes.length}; first difference at byte ${at})`);
  }

  const size = attempt(() => rs.calculateObjectSize(doc));
  const jsSize = js.calculateObjectSize(doc);
  if (size.error) fail('calculateObjectSize', `bson-rs threw: ${size.error.message}`);
  else if (size.value !== jsSize) fail('calculateObjectSize', `${size.value} vs js-bson ${jsSize}`);

  const jsValue = js.deserialize(jsBytes);
  const de = attempt(() => rs.deserialize(jsBytes));
  if (de.error) fail('deserialize', `bson-rs threw: ${de.error.message}`);
  else {
    const a = js.EJSON.stringify(jsValue, { relaxed: false });
    const b = js.EJSON.stringify(de.value, { relaxed: false });
    if (a !== b) fail('deserialize', 'values differ as canonical Extended JSON');
    else {
      const diff = structuralDiff(jsValue, de.value);
      if (diff) fail('deserialize', `structure differs at ${diff}`);
    }
  }
  return problems;
}

module.exports = { verifyDocument, structuralDiff };
