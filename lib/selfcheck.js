'use strict';
// The self-check createCodec runs before bson-rs serves a js-bson copy: one
// probe document holding every BSON type and class, serialized, sized and
// deserialized (under several options) by that copy's own functions and by
// bson-rs's. The first difference refuses the copy, so a bson release whose
// internals bson-rs does not know fails here instead of writing wrong bytes.

const CLASS_NAMES = [
  'Binary',
  'BSONRegExp',
  'BSONSymbol',
  'Code',
  'DBRef',
  'Decimal128',
  'Double',
  'Int32',
  'Long',
  'MaxKey',
  'MinKey',
  'ObjectId',
  'Timestamp',
  'UUID'
];

/** Every BSON type, as values of the given copy's classes. */
function probeDocument(bson) {
  const { Binary, BSONRegExp, BSONSymbol, Code, DBRef, Decimal128, Double, Int32, Long } = bson;
  const { MaxKey, MinKey, ObjectId, Timestamp, UUID } = bson;
  const oid = new ObjectId('0123456789abcdef01234567');
  return {
    _id: oid,
    ids: [new ObjectId('ffeeddccbbaa998877665544'), oid, { nested: new ObjectId('a1b2c3d4e5f6a7b8c9d0e1f2') }],
    double: 1.5,
    negativeZero: -0,
    int: 42,
    bigInt: 2 ** 40,
    string: 'héllo wörld ✓ 😀',
    empty: '',
    doc: { a: 1, b: { c: [1, 'two', null] } },
    array: [1, 2.5, 'x', true, false, null, undefined],
    binary: new Binary(Buffer.from([1, 2, 3, 4]), 0x80),
    oldBinary: new Binary(Buffer.from([5, 6, 7]), Binary.SUBTYPE_BYTE_ARRAY),
    buffer: Buffer.from([9, 8, 7]),
    uuid: new UUID('00112233-4455-6677-8899-aabbccddeeff'),
    bool: true,
    date: new Date(1700000000123),
    nil: null,
    undef: undefined,
    regexp: /ab+c/imsu,
    bsonRegExp: new BSONRegExp('x.*y', 'mi'),
    code: new Code('function () { return 1; }'),
    codeWithScope: new Code('function () { return x; }', { x: 1, y: 'z' }),
    symbol: new BSONSymbol('sym'),
    int32: new Int32(5),
    doubleClass: new Double(3),
    timestamp: new Timestamp({ t: 1700000000, i: 7 }),
    long: Long.fromString('-9007199254740993'),
    unsignedish: Long.fromBits(0xffffffff, 0x7fffffff),
    decimal: Decimal128.fromString('1234.5678E-20'),
    minKey: new MinKey(),
    maxKey: new MaxKey(),
    dbref: new DBRef('things', oid, 'db', { extra: 1 }),
    map: new Map([
      ['k1', 1],
      ['k2', new ObjectId('00000000000000000000000a')]
    ]),
    toBSON: { toBSON: () => ({ replaced: true }) }
  };
}

const DESERIALIZE_OPTIONS = [
  {},
  { promoteValues: false },
  { promoteLongs: false },
  { useBigInt64: true },
  { bsonRegExp: true },
  { promoteBuffers: true }
];

/** A canonical text of a value: its content (canonical EJSON) and, depth first,
 * the class of every object in it, so that a value of another class (or of
 * another js-bson copy's class) differs. */
function describe(value, bson) {
  const tags = [];
  const walk = (v, depth) => {
    if (v === null || typeof v !== 'object' || depth > 16) {
      tags.push(v === null ? 'null' : typeof v);
      return;
    }
    const proto = Object.getPrototypeOf(v);
    const name = CLASS_NAMES.find(n => bson[n] && proto === bson[n].prototype);
    if (name !== undefined) tags.push(name);
    else if (proto === Object.prototype) tags.push('Object');
    else if (proto === Array.prototype) tags.push('Array');
    else if (proto === Buffer.prototype) tags.push('Buffer');
    else tags.push(proto === null ? 'null-prototype' : String(proto.constructor && proto.constructor.name));
    if (name === undefined && (proto === Object.prototype || proto === Array.prototype)) {
      for (const key of Object.keys(v)) walk(v[key], depth + 1);
    } else if (name === 'DBRef') {
      walk(v.oid, depth + 1);
    }
  };
  walk(value, 0);
  return bson.EJSON.stringify(value, { relaxed: false }) + ' ' + tags.join(',');
}

function firstDifference(a, b) {
  let k = 0;
  while (k < a.length && k < b.length && a[k] === b[k]) k++;
  return `from character ${k}: theirs ${JSON.stringify(a.slice(k, k + 60))}, ours ${JSON.stringify(b.slice(k, k + 60))}`;
}

/** The first difference between the copy's codec and bson-rs's on the probe, or null. */
function findDifference(bson, codec) {
  const doc = probeDocument(bson);
  const theirs = bson.serialize(doc);
  const ours = codec.serialize(doc);
  if (!Buffer.from(theirs).equals(Buffer.from(ours))) {
    let k = 0;
    while (theirs[k] === ours[k]) k++;
    const around = b => Buffer.from(b.subarray(k, k + 12)).toString('hex');
    return `serialize: bytes differ from byte ${k}: theirs ${around(theirs)}…, ours ${around(ours)}…`;
  }
  const withoutUndefined = bson.serialize(doc, { ignoreUndefined: true });
  if (!Buffer.from(withoutUndefined).equals(Buffer.from(codec.serialize(doc, { ignoreUndefined: true })))) {
    return 'serialize({ ignoreUndefined: true }): bytes differ';
  }
  // The size of the bytes serialize writes: copies before 7.3.4 miscount some
  // types (README, "Differences"), so theirs is not the reference here.
  const size = codec.calculateObjectSize(doc);
  if (size !== theirs.length) {
    return `calculateObjectSize: ${size}, but serialize wrote ${theirs.length} bytes`;
  }
  for (const options of DESERIALIZE_OPTIONS) {
    const expected = describe(bson.deserialize(theirs, options), bson);
    const actual = describe(codec.deserialize(theirs, options), bson);
    if (expected !== actual) {
      return `deserialize(${JSON.stringify(options)}): values differ ${firstDifference(expected, actual)}`;
    }
  }
  return null;
}

/** Throws one clear error, naming the copy and the first difference, unless the
 * codec matches the copy's own on the probe document. */
function selfCheck(bson, codec, label) {
  let difference;
  try {
    difference = findDifference(bson, codec);
  } catch (error) {
    difference = `the probe document threw ${error && error.name}: ${error && error.message}`;
  }
  if (difference !== null) {
    throw new Error(
      `bson-rs: refusing ${label}: its codec and bson-rs's disagree on the self-check document (${difference}); ` +
        'nothing was installed (bson-rs is tested with every bson 6.10.x and 7.x up to 7.3.4).'
    );
  }
}

module.exports = { selfCheck, probeDocument };
