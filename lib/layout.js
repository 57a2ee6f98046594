'use strict';
// What the codec relies on in one js-bson copy's classes beyond their public
// API, found out by probing that copy once (never assumed from its version):
// a lockfile may hold any published bson. ARCHITECTURE.md lists every such read.

/** Does `ObjectId` keep its 12 bytes as four 24-bit ints `i0`..`i3` that its
 * own `serializeInto` writes (js-bson >= 7.3.2)? Only then may the serializer
 * read the ints instead of calling `serializeInto`. */
function objectIdIsFourInts(ObjectId) {
  try {
    const serializeInto = ObjectId.prototype.serializeInto;
    if (typeof serializeInto !== 'function') return false;
    const bytes = new Uint8Array(12);
    for (let k = 0; k < 12; k++) bytes[k] = k + 1;
    const oid = new ObjectId(bytes);
    if (oid.i0 !== 0x010203 || oid.i1 !== 0x040506 || oid.i2 !== 0x070809 || oid.i3 !== 0x0a0b0c) {
      return false;
    }
    // serializeInto must write what the ints say, not bytes kept elsewhere.
    oid.i0 = 0xa1a2a3;
    oid.i1 = 0xb1b2b3;
    oid.i2 = 0xc1c2c3;
    oid.i3 = 0xd1d2d3;
    const out = new Uint8Array(13);
    if (serializeInto.call(oid, out, 1) !== 12 || out[0] !== 0) return false;
    const expected = [0xa1, 0xa2, 0xa3, 0xb1, 0xb2, 0xb3, 0xc1, 0xc2, 0xc3, 0xd1, 0xd2, 0xd3];
    for (let k = 0; k < 12; k++) if (out[k + 1] !== expected[k]) return false;
    return true;
  } catch {
    return false;
  }
}

/** Does `new ObjectId(bytes, offset)` read 12 bytes at `offset` (js-bson >= 7.3.2)?
 * Older copies take a 12-byte buffer only. */
function objectIdTakesOffset(ObjectId) {
  try {
    const probe = new Uint8Array(13);
    for (let k = 0; k < 13; k++) probe[k] = k;
    return new ObjectId(probe, 1).toHexString() === '0102030405060708090a0b0c';
  } catch {
    return false;
  }
}

/** The bson major version the copy's classes carry (BSONVersionError checks it). */
function majorVersion(bson) {
  try {
    const major = bson.MinKey.prototype[Symbol.for('@@mdb.bson.version')];
    return typeof major === 'number' ? major : undefined;
  } catch {
    return undefined;
  }
}

/** The version in the package.json above the loaded module whose exports are
 * `bson` ('unknown version' for a copy not loaded through require). */
function versionOf(bson) {
  const fs = require('node:fs');
  const path = require('node:path');
  for (const entry of Object.values(require.cache)) {
    if (entry === undefined || entry.exports !== bson) continue;
    for (let dir = path.dirname(entry.filename); ; dir = path.dirname(dir)) {
      try {
        const json = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
        if (json && json.name === 'bson' && typeof json.version === 'string') return json.version;
      } catch {
        // no package.json here: keep walking up
      }
      if (path.dirname(dir) === dir) break;
    }
  }
  return 'unknown version';
}

const layouts = new WeakMap();

/** The probed facts about one bson copy, computed once per copy. */
function layoutOf(bson) {
  let layout = layouts.get(bson);
  if (layout === undefined) {
    layout = Object.freeze({
      major: majorVersion(bson),
      objectIdIsFourInts: objectIdIsFourInts(bson.ObjectId),
      objectIdTakesOffset: objectIdTakesOffset(bson.ObjectId)
    });
    layouts.set(bson, layout);
  }
  return layout;
}

module.exports = { layoutOf, versionOf };
