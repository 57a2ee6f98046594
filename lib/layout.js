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

/** Does the copy's serializer find a value's type by reading `_bsontype` once
 * per `else if` (bson 6.x, 7.0-7.2) rather than reading the
 * `Symbol.for('@@mdb.bson.type')` tag once (7.3+)? Seen by serializing an Int32
 * behind a Proxy with the copy's own serialize. */
function tagReadByChain(bson) {
  try {
    const tagSymbol = Symbol.for('@@mdb.bson.type');
    const reads = [];
    const probe = new Proxy(new bson.Int32(1), {
      get(target, key, receiver) {
        reads.push(key);
        return Reflect.get(target, key, receiver);
      }
    });
    bson.serialize({ v: probe });
    return !reads.includes(tagSymbol) && reads.filter(k => k === '_bsontype').length > 3;
  } catch {
    return false;
  }
}

/** Does the copy's deserializer parse a nested document by recursing (bson
 * 6.x, 7.0-7.2), so that a misplaced terminator is "corrupt object bson"
 * rather than 7.3's "Bad BSON Document: object not properly terminated"? */
function readsNestedRecursively(bson) {
  try {
    const bytes = Buffer.from(bson.serialize({ a: { b: 1 }, c: 1 }));
    bytes.writeInt32LE(bytes.readInt32LE(7) + 1, 7); // the inner document claims one byte more
    bson.deserialize(bytes);
    return false;
  } catch (error) {
    return error !== null && typeof error === 'object' && error.message === 'corrupt object bson';
  }
}

/** Does the copy's deserialize see options inherited through the prototype
 * chain (bson 6.x, 7.0-7.2 read `options.x` directly; 7.3+ copies own
 * properties first)? */
function readsInheritedOptions(bson) {
  try {
    const value = bson.deserialize(bson.serialize({ n: 1 }), Object.create({ promoteValues: false })).n;
    return typeof value === 'object' && value !== null;
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
      objectIdTakesOffset: objectIdTakesOffset(bson.ObjectId),
      tagReadByChain: tagReadByChain(bson),
      readsNestedRecursively: readsNestedRecursively(bson),
      readsInheritedOptions: readsInheritedOptions(bson)
    });
    layouts.set(bson, layout);
  }
  return layout;
}

module.exports = { layoutOf, versionOf };
