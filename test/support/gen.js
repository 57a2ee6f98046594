'use strict';
// Seeded generators: JS documents covering every type js-bson serializes,
// raw BSON documents covering every BSON type (incl. deprecated ones and
// invalid UTF-8), and serialize/deserialize option sets. Deterministic for a
// given Rng. No side effects on load.
const bson = require('./oracle').js;
const b = require('./bsonbuild');

// Keys are drawn mostly from this pool so that option maps (fieldsAsRaw,
// validation.utf8) hit real keys.
const KEY_POOL = ['a', 'b', 'c', 'arr', 'doc', 'x', 'y', 'value', '0', '1', '$ref', '$id', '$db', '_id', 'é', '😀'];
const ODD_KEYS = ['', 'a.b', '$a', '$', '.', 'ключ', '日本', '\ud800', 'x\udc00y', '__proto__', 'constructor',
  'toString', 'hasOwnProperty', '$clusterTime', 'a b', '\u00ff', '9007199254740993', 'length'];

const NUMBERS = [0, -0, 1, -1, 42, 2147483647, 2147483648, -2147483648, -2147483649, 4294967295, 4294967296,
  9007199254740991, 9007199254740992, -9007199254740991, -9007199254740992, 1.5, -1.5, 0.1, 1e308, -1e308,
  5e-324, -5e-324, Number.EPSILON, NaN, Infinity, -Infinity, 1e21, 123456789.123, 2 ** 63, -(2 ** 63)];

const STRINGS = ['', 'a', 'hello world', 'héllo', 'ß', '日本語', '😀', '👩‍👩‍👧', '\ud800', '\udfff', 'a\ud800b',
  '\udc00\ud800', 'x\u0000y', '\u0000', '\u007f', '\u0080', '\u07ff', '\u0800', '\uffff', '\ufeff',
  'ascii only but a bit longer than sixteen bytes', 'é'.repeat(40)];

const BIGINTS = [0n, 1n, -1n, 2n ** 31n, 2n ** 53n + 1n, 2n ** 63n - 1n, -(2n ** 63n), 2n ** 63n, 2n ** 64n + 5n,
  -(2n ** 70n)];

const DECIMALS = ['0', '-0', '1', '-1.5', '1E+6144', '9.999999999999999999999999999999999E+6144', '1E-6176',
  'NaN', 'Infinity', '-Infinity', '1234567890123456789012345678901234', '0.000001', '-0E+3'];

const INVALID_UTF8 = [[0xff], [0xc3], [0xc0, 0x80], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0x61, 0xe2, 0x82],
  [0x80], [0xf0, 0x9f, 0x98]];

function randomString(rng) {
  if (rng.chance(0.6)) return rng.pick(STRINGS);
  const n = rng.int(0, 24);
  let s = '';
  for (let i = 0; i < n; i++) {
    const kind = rng.int(0, 5);
    if (kind <= 2) s += String.fromCharCode(rng.int(0x20, 0x7e));
    else if (kind === 3) s += String.fromCharCode(rng.int(0x80, 0x7ff));
    else if (kind === 4) s += String.fromCodePoint(rng.int(0x800, 0x10ffff));
    else s += String.fromCharCode(rng.int(0xd800, 0xdfff)); // lone surrogate (maybe paired by chance)
  }
  return s;
}

function randomKey(rng) {
  if (rng.chance(0.75)) return rng.pick(KEY_POOL);
  if (rng.chance(0.7)) return rng.pick(ODD_KEYS);
  return randomString(rng).replace(/\u0000/g, '');
}

function randomNumber(rng) {
  const k = rng.int(0, 3);
  if (k === 0) return rng.pick(NUMBERS);
  if (k === 1) return rng.int(-1000, 1000);
  if (k === 2) return (rng.float() - 0.5) * 10 ** rng.int(-10, 20);
  return new Float64Array(new Uint32Array([rng.u32(), rng.u32()]).buffer)[0];
}

function randomLong(rng, B) {
  const k = rng.int(0, 3);
  if (k === 0) return B.Long.fromNumber(rng.pick(NUMBERS.filter(Number.isFinite)));
  if (k === 1) return new B.Long(rng.u32() | 0, rng.u32() | 0, rng.bool());
  if (k === 2) return B.Long.fromBigInt(rng.pick(BIGINTS));
  return B.Long.fromInt(rng.int(-100, 100));
}

function randomBinary(rng, B) {
  switch (rng.int(0, 9)) {
    case 0:
      return new B.Binary(rng.bytes(rng.int(0, 40)), rng.pick([0, 1, 2, 3, 5, 6, 7, 8, 0x80, 0xff]));
    case 1:
      return new B.UUID(rng.bytes(16));
    case 2:
      return new B.Binary(rng.bytes(16), 4);
    case 3:
      return new B.Binary(rng.bytes(rng.pick([0, 3, 15, 17])), 4); // subtype 4, not a valid UUID length
    case 4:
      return B.Binary.fromInt8Array(new Int8Array(rng.bytes(rng.int(0, 8)).buffer));
    case 5:
      return B.Binary.fromFloat32Array(new Float32Array([rng.float(), -rng.float() * 1e6, Infinity].slice(0, rng.int(0, 3))));
    case 6:
      return B.Binary.fromPackedBits(rng.bytes(rng.int(1, 4)), rng.int(0, 7));
    case 7: {
      // a vector with invalid metadata (sometimes): serialize must throw js-bson's BSONError
      if (rng.chance(0.7)) return B.Binary.fromInt8Array(new Int8Array([1, -1]));
      const bad = new B.Binary(Buffer.from([rng.pick([0x03, 0x27, 0x10]), rng.int(1, 9), 1, 2, 3]), 9);
      return bad;
    }
    case 8: {
      // a Binary whose position is less than its buffer's length
      const bin = new B.Binary(Buffer.alloc(32), 0);
      bin.write(rng.bytes(rng.int(0, 10)), 0);
      return bin;
    }
    default:
      return new B.Binary(rng.bytes(rng.int(0, 20)), 2);
  }
}

function randomDate(rng) {
  return new Date(rng.pick([0, -1, 1, 8.64e15, -8.64e15, NaN, 1700000000000, rng.int(-1e12, 1e13), 1.5]));
}

function randomRegExp(rng) {
  const sources = ['a', '^abc$', '[a-z]+', 'é+', '😀', '\\d', '(?:x)', '/'];
  const flags = ['', 'i', 'g', 'm', 's', 'u', 'y', 'gim', 'ims', 'd', 'gimsuy', 'v'];
  return new RegExp(rng.pick(sources), rng.pick(flags));
}

function randomBsonValue(rng, B, depth) {
  switch (rng.int(0, 15)) {
    case 0:
      return new B.ObjectId(rng.bytes(12));
    case 1:
      return randomBinary(rng, B);
    case 2:
      return randomLong(rng, B);
    case 3:
      return new B.Timestamp({ t: rng.u32(), i: rng.u32() });
    case 4:
      return new B.Double(rng.chance(0.3) ? rng.pick([-0, NaN, Infinity, 1, 2 ** 31]) : randomNumber(rng));
    case 5:
      return new B.Int32(rng.pick([0, -1, 2147483647, -2147483648, rng.int(-1e6, 1e6)]));
    case 6:
      return B.Decimal128.fromString(rng.pick(DECIMALS));
    case 7:
      return new B.BSONRegExp(rng.pick(['a', 'b+', 'é', '']), rng.pick(['', 'i', 'mi', 'xsmli', 'xum', 'u']));
    case 8:
      return new B.BSONSymbol(randomString(rng));
    case 9:
      return new B.MinKey();
    case 10:
      return new B.MaxKey();
    case 11:
      return new B.Code(rng.pick(['function () {}', 'x = 1', '', 'é😀']));
    case 12:
      return new B.Code(rng.pick(['function () { return a; }', 'x']), depth > 0 ? randomObject(rng, B, depth - 1) : { a: 1 });
    case 13:
      return new B.Code(function named(a) {
        return a;
      });
    case 14:
      return new B.DBRef(rng.pick(['coll', 'a.b', 'é']), rng.chance(0.7) ? new B.ObjectId(rng.bytes(12)) : rng.int(0, 9),
        rng.chance(0.5) ? 'db' : undefined, rng.chance(0.5) ? { extra: rng.int(0, 9), $other: true } : undefined);
    default:
      return new B.Int32(rng.int(-5, 5));
  }
}

/** A random JS value for serialize (any type js-bson accepts, plus some it rejects). */
function randomValue(rng, B = bson, depth = 3) {
  const k = rng.int(0, 29);
  switch (k) {
    case 0:
    case 1:
    case 2:
      return randomNumber(rng);
    case 3:
    case 4:
      return randomString(rng);
    case 5:
      return rng.bool();
    case 6:
      return null;
    case 7:
      return undefined;
    case 8:
      return rng.pick(BIGINTS);
    case 9:
      return randomDate(rng);
    case 10:
      return randomRegExp(rng);
    case 11:
      return rng.chance(0.5) ? rng.bytes(rng.int(0, 20)) : new Uint8Array(rng.bytes(rng.int(0, 20)));
    case 12:
    case 13:
    case 14:
    case 15:
      return randomBsonValue(rng, B, depth);
    case 16:
      return rng.pick([function f() { return 1; }, () => 2, async function g() {}, class K {}]);
    case 17:
      return Symbol('s');
    case 18:
    case 19:
    case 20:
      return depth > 0 ? randomObject(rng, B, depth - 1) : {};
    case 21:
    case 22:
      return depth > 0 ? randomArray(rng, B, depth - 1) : [];
    case 23:
      if (depth > 0) {
        const m = new Map();
        for (let i = rng.int(0, 4); i > 0; i--) m.set(randomKey(rng), randomValue(rng, B, depth - 1));
        return m;
      }
      return new Map();
    case 24: {
      const inner = depth > 0 ? randomObject(rng, B, depth - 1) : { t: 1 };
      const primitive = rng.pick([1, 'str', null, undefined, true]); // drawn now: toBSON must be deterministic
      return rng.pick([
        { toBSON: () => inner },
        { toBSON: () => primitive },
        { toBSON: () => new B.Int32(7) },
        { x: 1, toBSON: 'not a function' }
      ]);
    }
    case 25: {
      const o = Object.create(null);
      o[randomKey(rng)] = randomNumber(rng);
      return o;
    }
    case 26:
      return rng.pick([new Int16Array([1, 2]), new Float64Array([1.5]), new ArrayBuffer(3), new DataView(new ArrayBuffer(2))]);
    case 27:
      // rejected by js-bson (BSONVersionError) only sometimes, so most documents stay serializable
      if (rng.chance(0.2)) return rng.pick([{ _bsontype: 'Unknown' }, { _bsontype: 5 }]);
      return rng.pick([{ _bsontype: null, a: 1 }, new Number(3), new String('s'), new Boolean(false)]);
    case 28: {
      // an array with holes and extra properties
      const a = [1, , 3]; // eslint-disable-line no-sparse-arrays
      if (rng.bool()) a.extra = 'x';
      a.length = rng.int(3, 5);
      return a;
    }
    default:
      return { [randomKey(rng)]: randomString(rng) };
  }
}

function randomObject(rng, B = bson, depth = 3) {
  const o = {};
  const n = rng.int(0, 6);
  for (let i = 0; i < n; i++) {
    const key = randomKey(rng);
    const value = randomValue(rng, B, depth);
    if (key === '__proto__') Object.defineProperty(o, key, { value, enumerable: true, writable: true, configurable: true });
    else o[key] = value;
  }
  return o;
}

function randomArray(rng, B = bson, depth = 3) {
  const a = [];
  for (let i = rng.int(0, 5); i > 0; i--) a.push(randomValue(rng, B, depth));
  return a;
}

/** A random root document for serialize: mostly plain objects, sometimes a Map or a toBSON object. */
function randomDocument(rng, B = bson, depth = 3) {
  const k = rng.int(0, 19);
  if (k === 0) {
    const m = new Map();
    for (let i = rng.int(0, 4); i > 0; i--) m.set(randomKey(rng), randomValue(rng, B, depth));
    return m;
  }
  if (k === 1) {
    const inner = randomObject(rng, B, depth);
    return { toBSON: () => inner };
  }
  if (k === 2) return rng.pick([null, undefined, [], 5, 'str', new Date(0), /x/, Buffer.alloc(2), new B.Int32(1), new B.ObjectId(rng.bytes(12))]);
  return randomObject(rng, B, depth);
}

/** Serialize options, including non-boolean values js-bson ignores. */
function randomSerializeOptions(rng) {
  const o = {};
  const pick = () => rng.pick([undefined, true, false, true, false, 1, 'yes']);
  for (const name of ['checkKeys', 'serializeFunctions', 'ignoreUndefined']) {
    const v = pick();
    if (v !== undefined || rng.bool()) o[name] = v;
  }
  return rng.chance(0.05) ? rng.pick([undefined, {}]) : o;
}

// ---------------------------------------------------------------------------
// Raw BSON documents

function randomRawString(rng, invalidUtf8) {
  if (invalidUtf8 && rng.chance(0.3)) {
    const bytes = [...Buffer.from(randomString(rng).replace(/\u0000/g, '')).subarray(0, 6)];
    bytes.splice(rng.int(0, bytes.length), 0, ...rng.pick(INVALID_UTF8));
    return Buffer.from(bytes);
  }
  return Buffer.from(randomString(rng), 'utf8');
}

function randomRawKey(rng, invalidUtf8) {
  if (invalidUtf8 && rng.chance(0.1)) return Buffer.from(rng.pick(INVALID_UTF8));
  return Buffer.from(randomKey(rng).replace(/\u0000/g, ''), 'utf8');
}

function randomRawElement(rng, key, depth, opts) {
  const T = b.T;
  const inv = opts.invalidUtf8;
  switch (rng.int(0, 24)) {
    case 0:
      return b.el(T.double, key, b.f64(randomNumber(rng)));
    case 1:
    case 2:
      return b.el(T.string, key, b.str(randomRawString(rng, inv)));
    case 3:
      return b.el(T.object, key, depth > 0 ? randomRawDocument(rng, depth - 1, opts) : b.doc());
    case 4:
      return b.el(T.array, key, depth > 0 ? randomRawArray(rng, depth - 1, opts) : b.doc());
    case 5: {
      const subtype = rng.pick([0, 1, 2, 3, 4, 4, 5, 6, 7, 8, 9, 0x80]);
      let data = rng.bytes(rng.pick([0, 1, 5, 16, 16, 17]));
      if (subtype === 9 && rng.chance(0.7)) data = Buffer.concat([Buffer.from([rng.pick([3, 0x27, 0x10]), rng.int(0, 1)]), data]);
      return b.el(T.binary, key, b.bin(subtype, data));
    }
    case 6:
      return b.el(T.undefined, key);
    case 7:
      return b.el(T.oid, key, rng.bytes(12));
    case 8:
      return b.el(T.bool, key, Buffer.from([rng.int(0, 1)]));
    case 9:
      return b.el(T.date, key, b.i64(rng.pick([0n, -1n, 8640000000000000n, 8640000000000001n, -(2n ** 63n), 2n ** 63n - 1n, BigInt(rng.int(-1e12, 1e12))])));
    case 10:
      return b.el(T.null, key);
    case 11:
      return b.el(T.regex, key, Buffer.concat([b.cstr(rng.pick(['a', 'é+', '', '[', '\\'])), b.cstr(rng.pick(['', 'i', 'imsx', 'lsux', 'g', 'z', 'smi']))]));
    case 12:
      return b.el(T.dbpointer, key, Buffer.concat([b.str(randomRawString(rng, inv)), rng.bytes(12)]));
    case 13:
      return b.el(T.code, key, b.str(randomRawString(rng, inv)));
    case 14:
      return b.el(T.symbol, key, b.str(randomRawString(rng, inv)));
    case 15:
      return b.el(T.codeWScope, key, b.cws(rng.pick(['x', 'function(){}', '']), depth > 0 ? randomRawDocument(rng, depth - 1, opts) : b.doc()));
    case 16:
    case 17:
      return b.el(T.int32, key, b.i32(rng.pick([0, -1, 2147483647, -2147483648, rng.int(-1e6, 1e6)])));
    case 18:
      return b.el(T.timestamp, key, Buffer.concat([b.u32(rng.u32()), b.u32(rng.u32())]));
    case 19:
    case 20:
      return b.el(T.int64, key, b.i64(rng.pick([...BIGINTS.map(x => BigInt.asIntN(64, x)), 2n ** 53n - 1n, 2n ** 53n, -(2n ** 53n) + 1n, -(2n ** 53n), BigInt(rng.int(-1e9, 1e9))])));
    case 21:
      return b.el(T.decimal128, key, rng.chance(0.5) ? Buffer.from(bson.Decimal128.fromString(rng.pick(DECIMALS)).bytes) : rng.bytes(16));
    case 22:
      return b.el(T.minKey, key);
    case 23:
      return b.el(T.maxKey, key);
    default: {
      // a DBRef-shaped (or almost DBRef-shaped) subdocument
      const fields = [b.el(T.string, '$ref', b.str('coll')), b.el(T.oid, '$id', rng.bytes(12))];
      if (rng.bool()) fields.push(b.el(T.string, '$db', b.str('db')));
      if (rng.bool()) fields.push(b.el(T.int32, rng.pick(['extra', '$bad', 'a']), b.i32(1)));
      if (rng.chance(0.2)) fields.reverse();
      return b.el(T.object, key, b.doc(...fields));
    }
  }
}

/** A random raw BSON document (valid framing; may contain invalid UTF-8 if opts.invalidUtf8). */
function randomRawDocument(rng, depth = 3, opts = {}) {
  const elements = [];
  for (let i = rng.int(0, 6); i > 0; i--) elements.push(randomRawElement(rng, randomRawKey(rng, opts.invalidUtf8), depth, opts));
  return b.doc(...elements);
}

function randomRawArray(rng, depth = 3, opts = {}) {
  const elements = [];
  const n = rng.int(0, 5);
  for (let i = 0; i < n; i++) {
    // mostly proper indices; sometimes wrong ones (js-bson ignores array keys)
    const key = rng.chance(0.9) ? String(i) : rng.pick(['x', '7', '']);
    elements.push(randomRawElement(rng, key, depth, opts));
  }
  return b.doc(...elements);
}

/** Deserialize options, including invalid combinations js-bson rejects. */
function randomDeserializeOptions(rng) {
  const o = {};
  const tri = () => rng.pick([undefined, true, false]);
  for (const name of ['promoteLongs', 'promoteValues', 'promoteBuffers', 'useBigInt64', 'bsonRegExp', 'raw']) {
    let v = tri();
    if (name === 'raw') v = rng.pick([undefined, undefined, undefined, false, true]);
    if (name === 'useBigInt64') v = rng.pick([undefined, undefined, false, false, true]);
    if (v !== undefined) o[name] = v;
  }
  if (rng.chance(0.1)) o.bsonRegExp = rng.pick([1, 'true']);
  if (rng.chance(0.05)) o.promoteValues = rng.pick([0, 1, null]);
  if (rng.chance(0.2)) {
    o.fieldsAsRaw = {};
    for (let i = rng.int(1, 3); i > 0; i--) o.fieldsAsRaw[rng.pick(KEY_POOL)] = rng.pick([true, true, 1, false, 0]);
  }
  if (rng.chance(0.3)) {
    const k = rng.int(0, 7);
    if (k === 0) o.validation = { utf8: true };
    else if (k === 1) o.validation = { utf8: false };
    else if (k === 2 || k === 3) {
      const setting = k === 2;
      const utf8 = {};
      for (let i = rng.int(1, 3); i > 0; i--) utf8[rng.pick(KEY_POOL)] = setting;
      o.validation = { utf8 };
    } else if (k === 4) o.validation = { utf8: {} };
    else if (k === 5) o.validation = { utf8: { a: true, b: false } };
    else if (k === 6) o.validation = { utf8: { a: 1 } };
    else o.validation = {};
  }
  return rng.chance(0.03) ? rng.pick([undefined, null, {}]) : o;
}

module.exports = {
  KEY_POOL,
  ODD_KEYS,
  NUMBERS,
  STRINGS,
  BIGINTS,
  DECIMALS,
  INVALID_UTF8,
  randomString,
  randomKey,
  randomValue,
  randomObject,
  randomArray,
  randomDocument,
  randomSerializeOptions,
  randomRawDocument,
  randomRawArray,
  randomDeserializeOptions
};
