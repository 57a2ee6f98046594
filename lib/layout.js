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

/** May the deserializer make an ObjectId as `Object.create(ObjectId.prototype)`
 * with `i0`..`i3` set (a fifth of the cost of the constructor's class fields
 * and super() call)? Only when the copy keeps four ints (7.3.2+) and that
 * object is the one `new ObjectId(bytes, offset)` makes: the same own
 * properties in the same order with the same descriptors, and the same
 * results from its methods and from the copy's own serialize. */
function objectIdFromInts(bson) {
  try {
    const { ObjectId } = bson;
    if (!objectIdIsFourInts(ObjectId) || !objectIdTakesOffset(ObjectId)) return false;
    const bytes = Uint8Array.of(0xff, 0x65, 0x1f, 0x2a, 0xb3, 0xc4, 0xd5, 0xe6, 0xf7, 0x08, 0x19, 0x2a, 0x3b);
    const built = new ObjectId(bytes, 1);
    const made = Object.create(ObjectId.prototype);
    made.i0 = 0x651f2a;
    made.i1 = 0xb3c4d5;
    made.i2 = 0xe6f708;
    made.i3 = 0x192a3b;
    const own = o => JSON.stringify(Reflect.ownKeys(o).map(k => [String(k), Object.getOwnPropertyDescriptor(o, k)]));
    const results = o => [
      o.toHexString(),
      o.toString(),
      o.toJSON(),
      o.inspect(),
      o.getTimestamp().getTime(),
      Buffer.from(o.id).toString('hex'),
      ObjectId.isValid(o),
      o.equals(built),
      built.equals(o),
      Buffer.from(bson.serialize({ o })).toString('hex'),
      bson.EJSON.stringify({ o })
    ];
    return own(made) === own(built) && JSON.stringify(results(made)) === JSON.stringify(results(built));
  } catch {
    return false;
  }
}

/** js-bson's deserializer's binary value: new Binary(view, subType), then toUUID() if UUID.isValid. */
function binaryByConstructors(Binary, UUID, view, subType) {
  const value = new Binary(view, subType);
  return subType === 4 && UUID.isValid(value) ? value.toUUID() : value;
}

/** The same value made as Object.create(prototype) with its fields assigned in `order` (binaryFromFields). */
function binaryByFields(order, binaryPrototype, uuidPrototype, view, subType) {
  const value = Object.create(subType === 4 && view.length === 16 ? uuidPrototype : binaryPrototype);
  if (order === 'buffer') {
    value.buffer = view;
    value.sub_type = subType;
  } else {
    value.sub_type = subType;
    value.buffer = view;
  }
  value.position = view.length;
  return value;
}

/**
 * May the deserializer make a Binary (or the UUID js-bson makes of a 16-byte
 * subtype 4) as `Object.create(prototype)` with its three fields assigned,
 * instead of through its constructors? js-bson's path for a UUID runs the
 * Binary and UUID constructors, two views and UUID.isValid (1,000 UUIDs:
 * about 4x the time). The answer is the order to assign them in: 'buffer'
 * (7.x: buffer, sub_type, position, its class fields' order), 'sub_type'
 * (6.x: its constructor's order), or null when neither makes the object
 * js-bson's deserializer makes (new Binary(view, subType), then toUUID() if
 * UUID.isValid): the same prototype, own properties in the same order with
 * the same descriptors, a Buffer kept as it is, and the same results from its
 * methods, util.inspect and the copy's own serialize and EJSON.
 */
function binaryFromFields(bson) {
  try {
    const { Binary, UUID } = bson;
    const util = require('node:util');
    const keep = Buffer.from('abc');
    if (new Binary(keep, 0).buffer !== keep) return null;
    const viaConstructors = (view, subType) => binaryByConstructors(Binary, UUID, view, subType);
    const made = (order, view, subType) => binaryByFields(order, Binary.prototype, UUID.prototype, view, subType);
    const own = o => JSON.stringify(Reflect.ownKeys(o).map(k => [String(k), Object.getOwnPropertyDescriptor(o, k)]));
    const outcome = f => {
      try {
        return JSON.stringify(f());
      } catch (error) {
        return 'throws ' + String(error?.message);
      }
    };
    const results = o => [
      Object.getPrototypeOf(o) === UUID.prototype,
      own(o),
      outcome(() => o.toString('hex')),
      outcome(() => o.toJSON()),
      outcome(() => o.length()),
      outcome(() => Buffer.from(o.value(true)).toString('hex')),
      outcome(() => o.value()),
      outcome(() => Buffer.from(o.read(1, 4)).toString('hex')),
      outcome(() => o.toHexString()),
      outcome(() => o.toUUID().toHexString()),
      outcome(() => o.equals(viaConstructors(Buffer.from(o.buffer), o.sub_type))),
      util.inspect(o),
      Buffer.from(bson.serialize({ o })).toString('hex'),
      bson.EJSON.stringify({ o }),
      bson.EJSON.stringify({ o }, { relaxed: false })
    ];
    const cases = [
      ['00112233445566778899aabbccddeeff', 4],
      ['00112233445566778899aabbccddee', 4],
      ['00112233445566778899aabbccddeeff', 0],
      ['616263', 0x80],
      ['', 0],
      ['0102', 2]
    ];
    for (const order of ['buffer', 'sub_type']) {
      const same = cases.every(([hex, subType]) => {
        const a = results(viaConstructors(Buffer.from(hex, 'hex'), subType));
        const b = results(made(order, Buffer.from(hex, 'hex'), subType));
        return JSON.stringify(a) === JSON.stringify(b);
      });
      if (same) return order;
    }
    return null;
  } catch {
    return null;
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

/** Does the copy's serializer refuse a Float32 vector (Binary subtype 9)
 * whose data is not a whole number of floats (bson 7.x and 6.10.4; 6.10.0-6.10.3
 * write it)? Seen by serializing a 3-byte one with the copy's own serialize. */
function checksFloat32VectorSize(bson) {
  try {
    const { Binary } = bson;
    bson.serialize({ v: new Binary(Uint8Array.of(Binary.VECTOR_TYPE.Float32, 0, 1), Binary.SUBTYPE_VECTOR) });
    return false;
  } catch (error) {
    return error instanceof bson.BSONError;
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
      objectIdFromInts: objectIdFromInts(bson),
      binaryFromFields: binaryFromFields(bson),
      tagReadByChain: tagReadByChain(bson),
      readsNestedRecursively: readsNestedRecursively(bson),
      readsInheritedOptions: readsInheritedOptions(bson),
      checksFloat32VectorSize: checksFloat32VectorSize(bson)
    });
    layouts.set(bson, layout);
  }
  return layout;
}

module.exports = { layoutOf, versionOf, binaryByConstructors, binaryByFields };
