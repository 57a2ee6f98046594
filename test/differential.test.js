'use strict';
// Differential tests: bson-rs (require('..')) against js-bson (require('bson'))
// on seeded random documents and options, plus a table of explicit edge cases.
// Everything is compared: bytes, values (canonical form with constructor
// identity + EJSON canonical), sizes, serializeWithBufferAndIndex results,
// deserializeStream results, and error class + message.
const { describe, it } = require('node:test');
const assert = require('node:assert');
const { js, rs } = require('./support/oracle');
const { Rng } = require('./support/prng');
const gen = require('./support/gen');
const b = require('./support/bsonbuild');
const {
  outcome,
  canon,
  assertSameValue,
  assertSameBytes,
  assertSameSerialized,
  assertSameOutcome
} = require('./support/compare');
const { todoWhilePlaceholder } = require('./support/placeholder');

const show = v => {
  try {
    return canon(v).slice(0, 400);
  } catch {
    return String(v);
  }
};
const showOpts = o => {
  try {
    return JSON.stringify(o);
  } catch {
    return String(o);
  }
};

function sameNumber(a, e, ctx) {
  assert.ok(Object.is(a, e), `${ctx}\n  actual: ${a}\n  expected: ${e}`);
}

/** Wraps bytes as one of the input kinds deserialize accepts. */
function asInput(bytes, kind) {
  switch (kind) {
    case 'Buffer':
      return Buffer.from(bytes);
    case 'Uint8Array':
      return new Uint8Array(bytes);
    case 'offset-view': {
      // a view that does not start at the beginning of its ArrayBuffer
      const backing = new Uint8Array(bytes.length + 7);
      backing.set(bytes, 3);
      return backing.subarray(3, 3 + bytes.length);
    }
    case 'ArrayBuffer':
      return new Uint8Array(bytes).buffer;
    case 'DataView':
      return new DataView(new Uint8Array(bytes).buffer);
    default:
      throw new Error(kind);
  }
}
const INPUT_KINDS = ['Buffer', 'Buffer', 'Uint8Array', 'offset-view', 'ArrayBuffer', 'DataView'];

describe('self-check of the comparison helpers', () => {
  it('detects a different value, a different class, and a different error', () => {
    assert.throws(() => assertSameValue({ a: 1 }, { a: 2 }));
    assert.throws(() => assertSameValue({ a: new js.Int32(1) }, { a: new js.Double(1) }));
    assert.throws(() => assertSameValue({ a: 1 }, { a: new js.Int32(1) }));
    assert.throws(() => assertSameValue({ a: -0 }, { a: 0 }));
    assert.throws(() => assertSameValue({ a: Buffer.from([1]) }, { a: new Uint8Array([1]) }));
    assert.throws(() => assertSameValue([1, , 3], [1, undefined, 3])); // eslint-disable-line no-sparse-arrays
    assert.throws(() => assertSameValue({ a: 1, b: 2 }, { b: 2, a: 1 }));
    assert.throws(() => assertSameValue(Object.create(null), {}));
    // a class with the same name but another identity (e.g. another js-bson copy)
    class Long {
      constructor() {
        this.low = 0;
        this.high = 0;
        this.unsigned = false;
      }
    }
    assert.throws(() => assertSameValue(new Long(), js.Long.ZERO));
    assert.throws(() => assertSameBytes(Buffer.from([1, 2]), Buffer.from([1, 3])));
    const e1 = outcome(() => {
      throw new js.BSONError('x');
    });
    const e2 = outcome(() => {
      throw new Error('x');
    });
    const e3 = outcome(() => {
      throw new js.BSONError('y');
    });
    assert.throws(() => assertSameOutcome(e1, e2));
    assert.throws(() => assertSameOutcome(e1, e3));
    assert.throws(() => assertSameOutcome(outcome(() => 1), e1));
    assert.throws(() => assertSameOutcome(e1, outcome(() => 1)));
    // and accepts equal ones
    assertSameOutcome(outcome(() => ({ a: [1, 'x'] })), outcome(() => ({ a: [1, 'x'] })));
    assertSameOutcome(e1, outcome(() => {
      throw new js.BSONError('x');
    }));
  });
});

describe('serialize / calculateObjectSize / serializeWithBufferAndIndex on random documents', () => {
  const SEED = 0x5e1a;
  const CASES = 500;

  it(`${CASES} documents × options (seed ${SEED})`, () => {
    const rng = new Rng(SEED);
    for (let n = 0; n < CASES; n++) {
      const doc = gen.randomDocument(rng);
      const opts = gen.randomSerializeOptions(rng);
      const ctx = `case ${n} (seed ${SEED}) options ${showOpts(opts)}\ndoc ${show(doc)}`;

      const expected = outcome(() => js.serialize(doc, opts));
      assertSameOutcome(outcome(() => rs.serialize(doc, opts)), expected, `serialize: ${ctx}`, assertSameSerialized);

      assertSameOutcome(
        outcome(() => rs.calculateObjectSize(doc, opts)),
        outcome(() => js.calculateObjectSize(doc, opts)),
        `calculateObjectSize: ${ctx}`,
        sameNumber
      );

      // serializeWithBufferAndIndex into identical garbage-filled buffers
      const size = expected.ok ? expected.value.length : 64;
      const index = rng.pick([undefined, 0, 1, rng.int(0, 20)]);
      const length = rng.chance(0.1) ? rng.int(0, size) : size + (index ?? 0) + rng.int(0, 16);
      const garbage = rng.bytes(length);
      const bufJs = Buffer.from(garbage);
      const bufRs = Buffer.from(garbage);
      const withIndex = index === undefined ? opts : { ...opts, index };
      assertSameOutcome(
        outcome(() => rs.serializeWithBufferAndIndex(doc, bufRs, withIndex)),
        outcome(() => js.serializeWithBufferAndIndex(doc, bufJs, withIndex)),
        `serializeWithBufferAndIndex (index ${index}, buffer ${length}): ${ctx}`,
        sameNumber
      );
      assertSameBytes(bufRs, bufJs, `serializeWithBufferAndIndex buffer contents: ${ctx}`);

      // and the bytes deserialize the same way
      if (expected.ok) {
        const dopts = gen.randomDeserializeOptions(rng);
        assertSameOutcome(
          outcome(() => rs.deserialize(expected.value, dopts)),
          outcome(() => js.deserialize(expected.value, dopts)),
          `deserialize(serialize(doc)) with ${showOpts(dopts)}: ${ctx}`
        );
      }
    }
  });
});

describe('deserialize on random raw BSON', () => {
  const SEED = 0xdec0;
  const CASES = 700;

  it(`${CASES} documents × options × input kinds (seed ${SEED})`, () => {
    const rng = new Rng(SEED);
    for (let n = 0; n < CASES; n++) {
      const bytes = gen.randomRawDocument(rng, rng.int(0, 4), { invalidUtf8: rng.chance(0.4) });
      let opts = gen.randomDeserializeOptions(rng);
      let input = bytes;
      // index + allowObjectSmallerThanBufferSize: put the document inside a larger buffer
      if (opts && rng.chance(0.25)) {
        const before = rng.int(0, 9);
        const after = rng.int(0, 9);
        input = Buffer.concat([rng.bytes(before), bytes, rng.bytes(after)]);
        opts = { ...opts };
        if (rng.chance(0.9)) opts.index = before;
        if (rng.chance(0.9)) opts.allowObjectSmallerThanBufferSize = rng.pick([true, true, false]);
      }
      const kind = rng.pick(INPUT_KINDS);
      const ctx = `case ${n} (seed ${SEED}) input ${kind} ${input.toString('hex')}\noptions ${showOpts(opts)}`;
      const inJs = asInput(input, kind);
      const inRs = asInput(input, kind);
      const expected = outcome(() => js.deserialize(inJs, opts));
      const actual = outcome(() => rs.deserialize(inRs, opts));
      assertSameOutcome(actual, expected, ctx);

      // Views into the input (Binary, promoted Buffers, raw fields) must alias it the same way:
      // mutate both inputs identically and compare again.
      if (expected.ok && !(inJs instanceof ArrayBuffer)) {
        const vJs = new Uint8Array(inJs.buffer, inJs.byteOffset, inJs.byteLength);
        const vRs = new Uint8Array(inRs.buffer, inRs.byteOffset, inRs.byteLength);
        for (let i = 0; i < vJs.length; i++) {
          vJs[i] ^= 0x5a;
          vRs[i] ^= 0x5a;
        }
        assertSameValue(actual.value, expected.value, `after mutating the input: ${ctx}`);
      }
    }
  });
});

describe('deserializeStream on random concatenated documents', () => {
  const SEED = 0x57ea;
  const CASES = 250;

  it(`${CASES} streams (seed ${SEED})`, () => {
    const rng = new Rng(SEED);
    for (let n = 0; n < CASES; n++) {
      const docs = [];
      for (let i = rng.int(1, 4); i > 0; i--) docs.push(gen.randomRawDocument(rng, rng.int(0, 2)));
      const prefix = rng.bytes(rng.int(0, 6));
      const data = Buffer.concat([prefix, ...docs, rng.bytes(rng.int(0, 3))]);
      const count = rng.chance(0.85) ? rng.int(0, docs.length) : docs.length + 1;
      const startIndex = rng.chance(0.9) ? prefix.length : rng.int(0, data.length);
      const docStartIndex = rng.int(0, 2);
      const opts = rng.chance(0.8) ? gen.randomDeserializeOptions(rng) : rng.pick([undefined, {}, { index: 3 }]);
      const kind = rng.pick(['Buffer', 'Uint8Array', 'ArrayBuffer']);
      const outJs = ['sentinel'];
      const outRs = ['sentinel'];
      const ctx = `case ${n} (seed ${SEED}) ${data.toString('hex')} start ${startIndex} count ${count} docStart ${docStartIndex} options ${showOpts(opts)}`;
      assertSameOutcome(
        outcome(() => rs.deserializeStream(asInput(data, kind), startIndex, count, outRs, docStartIndex, opts)),
        outcome(() => js.deserializeStream(asInput(data, kind), startIndex, count, outJs, docStartIndex, opts)),
        ctx,
        sameNumber
      );
      assertSameValue(outRs, outJs, `documents array: ${ctx}`);
    }
  });
});

// ---------------------------------------------------------------------------
// Explicit edge cases (each one named, so a failure says what broke)

const SERIALIZE_OPTION_SETS = [
  undefined,
  {},
  { ignoreUndefined: false },
  { serializeFunctions: true },
  { checkKeys: true },
  { checkKeys: true, serializeFunctions: true, ignoreUndefined: false }
];

const fn = function add(a, b2) {
  return a + b2;
};

const EDGE_DOCS = {
  'empty document': {},
  'numbers: int32 bounds, doubles, -0, NaN, infinities': {
    a: 0, b: -0, c: 2147483647, d: 2147483648, e: -2147483648, f: -2147483649, g: 1.5, h: NaN, i: Infinity,
    j: -Infinity, k: 9007199254740991, l: 9007199254740992, m: 5e-324, n: 1e308, o: -1e-7
  },
  'strings: empty, non-ASCII, emoji, NUL inside a value, lone surrogates': {
    a: '', b: 'héllo', c: '日本語', d: '😀👩‍👩‍👧', e: 'x\u0000y', f: '\ud800', g: '\udfff', h: 'a\udc00\ud800b', i: '\uffff'
  },
  'keys: non-ASCII, emoji, lone surrogates, empty, numeric-looking': {
    é: 1, '😀': 2, '\ud800': 3, '': 4, '0': 5, '9007199254740993': 6, 'a\udfffb': 7
  },
  'nested documents and arrays, holes, empty arrays': {
    a: { b: { c: { d: [1, [2, [3, []]], {}] } } },
    holes: [1, , 3, , ], // eslint-disable-line no-sparse-arrays
    arrayWithProps: Object.assign([1, 2], { extra: 'ignored' })
  },
  'undefined and null, top level and in arrays': { a: undefined, b: null, c: [undefined, null] },
  'functions and symbols': { f: fn, arrow: () => 1, s: Symbol('x'), nested: { g: fn } },
  bigint: { a: 0n, b: -1n, c: 2n ** 63n - 1n, d: -(2n ** 63n), e: 2n ** 64n + 3n, f: -(2n ** 65n) },
  'dates incl. invalid and out of range': {
    a: new Date(0), b: new Date(-1), c: new Date(8.64e15), d: new Date(NaN), e: new Date(-8.64e15), f: new Date(1.7e12 + 0.5)
  },
  'RegExp flags': { a: /a/, b: /b/gimsuy, c: /c/d, d: /é😀/u, e: new RegExp('/', 'g'), f: /x/v },
  'Binary subtypes, UUID, Buffers, typed arrays, ArrayBuffer': {
    b0: new js.Binary(Buffer.from('abc'), 0),
    b1: new js.Binary(Buffer.from('abc'), 1),
    b2: new js.Binary(Buffer.from('abc'), 2),
    b3: new js.Binary(Buffer.alloc(16, 1), 3),
    b4: new js.Binary(Buffer.alloc(16, 2), 4),
    b4short: new js.Binary(Buffer.alloc(5, 2), 4),
    b5: new js.Binary(Buffer.alloc(16, 3), 5),
    b6: new js.Binary(Buffer.from('enc'), 6),
    b7: new js.Binary(Buffer.from('col'), 7),
    b8: new js.Binary(Buffer.from('sens'), 8),
    b80: new js.Binary(Buffer.from('user'), 0x80),
    uuid: new js.UUID('6e2c1b0c-5f5a-4d4e-9a0b-3c2d1e0f9a8b'),
    buf: Buffer.from([1, 2, 3]),
    u8: new Uint8Array([4, 5]),
    i16: new Int16Array([1, -1]),
    f64: new Float64Array([1.5]),
    ab: new ArrayBuffer(4),
    dv: new DataView(new ArrayBuffer(2)),
    emptyBin: new js.Binary()
  },
  'vectors: int8, float32, packed bits': {
    i8: js.Binary.fromInt8Array(new Int8Array([-128, 0, 127])),
    f32: js.Binary.fromFloat32Array(new Float32Array([1.5, -Infinity, NaN])),
    bits: js.Binary.fromPackedBits(new Uint8Array([0xff, 0x80]), 7),
    empty: js.Binary.fromInt8Array(new Int8Array([]))
  },
  'invalid vector: float32 with padding': { v: new js.Binary(Buffer.from([0x27, 3, 0, 0, 0, 0]), 9) },
  'invalid vector: int8 with padding': { v: new js.Binary(Buffer.from([0x03, 1, 5]), 9) },
  'invalid vector: packed bits empty with padding': { v: new js.Binary(Buffer.from([0x10, 1]), 9) },
  'invalid vector: float32 not a multiple of 4 bytes': { v: new js.Binary(Buffer.from([0x27, 0, 1, 2, 3]), 9) },
  'Code, Code with scope, Code from a function': {
    a: new js.Code('x = 1'),
    b: new js.Code('function () { return y; }', { y: 1, nested: { z: [1] } }),
    c: new js.Code(fn),
    d: new js.Code('x', {}),
    e: new js.Code('x', null)
  },
  DBRef: {
    a: new js.DBRef('coll', new js.ObjectId('0123456789abcdef01234567')),
    b: new js.DBRef('coll', new js.ObjectId('0123456789abcdef01234567'), 'db', { extra: 1, $x: undefined }),
    c: new js.DBRef('coll', 5),
    d: { $ref: 'coll', $id: 1, $db: 'db' }
  },
  'MinKey, MaxKey, ObjectId': { min: new js.MinKey(), max: new js.MaxKey(), oid: new js.ObjectId('ffffffffffffffffffffffff') },
  'Long, Timestamp, Double, Int32, Decimal128': {
    l1: js.Long.MAX_VALUE, l2: js.Long.MIN_VALUE, l3: js.Long.fromNumber(-1), l4: new js.Long(1, 2, true),
    l5: js.Long.UZERO, t: new js.Timestamp({ t: 4294967295, i: 4294967295 }), t0: new js.Timestamp(0n),
    d1: new js.Double(1), d2: new js.Double(-0), d3: new js.Double(NaN), d4: new js.Double(2 ** 31),
    i1: new js.Int32(-5), i2: new js.Int32(2147483647),
    dec: js.Decimal128.fromString('-1.23E+6144'), dec2: js.Decimal128.fromString('NaN'), dec3: js.Decimal128.fromString('0E-6176')
  },
  'BSONRegExp and BSONSymbol': { r: new js.BSONRegExp('a+', 'xsmi'), r2: new js.BSONRegExp('é', ''), s: new js.BSONSymbol('sym') },
  'toBSON objects': {
    a: { toBSON: () => ({ x: 1 }) },
    b: { toBSON: () => 5 },
    c: { toBSON: () => 'str' },
    d: { toBSON: () => null },
    e: { toBSON: () => undefined },
    f: { toBSON: () => new js.Int32(3) },
    g: { toBSON: () => [1, 2] },
    h: { toBSON: 'not a function', y: 2 },
    i: { toBSON: () => ({ toBSON: () => ({ deep: true }) }) }
  },
  'Maps, incl. nested and with odd keys': {
    m: new Map([['a', 1], ['b', new Map([['c', [1]]])]]),
    m2: new Map([['$x', 1], ['y.z', 2]]),
    empty: new Map()
  },
  'null-prototype objects': { a: Object.assign(Object.create(null), { x: 1, y: { z: 2 } }) },
  'boxed primitives and class instances': {
    n: new Number(1), s: new String('ab'), b: new Boolean(true),
    inst: new (class P { constructor() { this.p = 1; } })(),
    err: new Error('e')
  },
  'keys starting with $ and containing dots': { $a: 1, 'b.c': 2, $ref: 'x', $id: 1, $db: 'd', $clusterTime: 3, nested: { $x: 1 } },
  'a key with a null byte': { 'a\u0000b': 1 },
  'a RegExp source with a null byte': { r: new RegExp('a\u0000b') },
  'a BSONRegExp pattern with a null byte': { r: Object.assign(new js.BSONRegExp('ab', 'i'), { pattern: 'a\u0000b' }) },
  'an unknown _bsontype': { x: { _bsontype: 'Nope' } },
  'a BSON value of a foreign version': { x: { _bsontype: 'ObjectId', [Symbol.for('@@mdb.bson.version')]: 6, id: Buffer.alloc(12) } },
  'an own __proto__ key': JSON.parse('{"__proto__": {"polluted": 1}, "a": 1}'),
  'a Map key that is not a string': { m: new Map([[1, 'one']]) },
  'a Map with an object key': { m: new Map([[{}, 'obj']]) }
};

const EDGE_ROOTS = {
  'root null': null,
  'root undefined': undefined,
  'root number': 5,
  'root string': 'str',
  'root array': [1, 2],
  'root Date': new Date(0),
  'root RegExp': /x/,
  'root Buffer': Buffer.alloc(3),
  'root ArrayBuffer': new ArrayBuffer(3),
  'root BSON value': new js.ObjectId(),
  'root Map': new Map([['a', 1]]),
  'root toBSON': { toBSON: () => ({ a: 1 }) },
  'root toBSON returning a number': { toBSON: () => 1 },
  'root toBSON returning null': { toBSON: () => null },
  'root with a symbol-keyed property only': { [Symbol('k')]: 1 },
  'root function': function f() {}
};

describe('serialize: explicit edge cases', () => {
  for (const [name, doc] of Object.entries({ ...EDGE_DOCS, ...EDGE_ROOTS })) {
    it(name, () => {
      for (const opts of SERIALIZE_OPTION_SETS) {
        const ctx = `${name} with ${showOpts(opts)}`;
        const expected = outcome(() => js.serialize(doc, opts));
        assertSameOutcome(outcome(() => rs.serialize(doc, opts)), expected, `serialize ${ctx}`, assertSameSerialized);
        assertSameOutcome(
          outcome(() => rs.calculateObjectSize(doc, opts)),
          outcome(() => js.calculateObjectSize(doc, opts)),
          `calculateObjectSize ${ctx}`,
          sameNumber
        );
        if (expected.ok) {
          for (const dopts of [undefined, { promoteValues: false }, { promoteLongs: false, bsonRegExp: true }, { useBigInt64: true, promoteBuffers: true }]) {
            assertSameOutcome(
              outcome(() => rs.deserialize(expected.value, dopts)),
              outcome(() => js.deserialize(expected.value, dopts)),
              `deserialize ${showOpts(dopts)} of ${ctx}`
            );
          }
        }
      }
    });
  }
});

// Raw documents with every BSON type, including deprecated ones.
const T = b.T;
const OID = Buffer.from('0123456789abcdef01234567', 'hex');
const ALL_TYPES = b.doc(
  b.el(T.double, 'double', b.f64(-0)),
  b.el(T.string, 'string', b.str('é😀')),
  b.el(T.object, 'object', b.doc(b.el(T.int32, 'x', b.i32(1)))),
  b.el(T.array, 'array', b.arr([T.int32, b.i32(1)], [T.string, b.str('two')])),
  b.el(T.binary, 'bin0', b.bin(0, 'abc')),
  b.el(T.binary, 'bin2', b.bin(2, 'abc')),
  b.el(T.binary, 'uuid', b.bin(4, Buffer.alloc(16, 7))),
  b.el(T.binary, 'uuidShort', b.bin(4, Buffer.alloc(3, 7))),
  b.el(T.binary, 'vector', b.bin(9, Buffer.from([0x03, 0, 1, 2]))),
  b.el(T.undefined, 'undefined'),
  b.el(T.oid, 'oid', OID),
  b.el(T.bool, 'true', Buffer.from([1])),
  b.el(T.bool, 'false', Buffer.from([0])),
  b.el(T.date, 'date', b.i64(-1n)),
  b.el(T.date, 'dateOutOfRange', b.i64(2n ** 62n)),
  b.el(T.null, 'null'),
  b.el(T.regex, 'regex', Buffer.concat([b.cstr('a+'), b.cstr('imsux')])),
  b.el(T.dbpointer, 'dbpointer', Buffer.concat([b.str('db.coll'), OID])),
  b.el(T.code, 'code', b.str('x = 1')),
  b.el(T.symbol, 'symbol', b.str('sym')),
  b.el(T.codeWScope, 'cws', b.cws('f()', b.doc(b.el(T.int32, 'y', b.i32(2))))),
  b.el(T.int32, 'int32', b.i32(-2147483648)),
  b.el(T.timestamp, 'timestamp', Buffer.concat([b.u32(0xffffffff), b.u32(0x80000000)])),
  b.el(T.int64, 'int64small', b.i64(42n)),
  b.el(T.int64, 'int64big', b.i64(2n ** 60n)),
  b.el(T.int64, 'int64min', b.i64(-(2n ** 63n))),
  b.el(T.decimal128, 'decimal', Buffer.from(js.Decimal128.fromString('1.5').bytes)),
  b.el(T.minKey, 'minKey'),
  b.el(T.maxKey, 'maxKey'),
  b.el(T.object, 'dbref', b.doc(b.el(T.string, '$ref', b.str('c')), b.el(T.oid, '$id', OID), b.el(T.string, '$db', b.str('d')), b.el(T.int32, 'x', b.i32(1)))),
  b.el(T.object, 'notDbref', b.doc(b.el(T.string, '$ref', b.str('c')), b.el(T.oid, '$id', OID), b.el(T.int32, '$x', b.i32(1)))),
  b.el(T.object, 'dbrefNoId', b.doc(b.el(T.string, '$ref', b.str('c')))),
  b.el(T.int32, '__proto__', b.i32(5)),
  b.el(T.int32, 'dup', b.i32(1)),
  b.el(T.string, 'dup', b.str('second'))
);

const DESERIALIZE_OPTION_SETS = [
  undefined,
  null,
  {},
  { promoteValues: false },
  { promoteLongs: false },
  { promoteBuffers: true },
  { promoteBuffers: true, promoteValues: false },
  { useBigInt64: true },
  { useBigInt64: true, promoteLongs: false },
  { useBigInt64: true, promoteValues: false },
  { bsonRegExp: true },
  { bsonRegExp: 1 },
  { raw: true },
  { fieldsAsRaw: { array: true, object: true } },
  { fieldsAsRaw: { array: 1 } },
  { validation: { utf8: false } },
  { validation: { utf8: true } },
  { validation: { utf8: { string: true } } },
  { validation: { utf8: { string: false } } },
  { validation: { utf8: {} } },
  { validation: { utf8: { a: true, b: false } } },
  { validation: { utf8: { a: 'yes' } } },
  { validation: {} },
  { allowObjectSmallerThanBufferSize: true }
];

const BAD_UTF8 = Buffer.from([0x61, 0xff, 0x62]);
const RAW_DOCS = {
  'every BSON type': ALL_TYPES,
  'root DBRef': b.doc(b.el(T.string, '$ref', b.str('c')), b.el(T.oid, '$id', OID)),
  'invalid UTF-8 in a string value': b.doc(b.el(T.string, 'string', b.str(BAD_UTF8)), b.el(T.string, 'other', b.str('ok'))),
  'invalid UTF-8 in another key': b.doc(b.el(T.string, 'string', b.str('ok')), b.el(T.string, 'other', b.str(BAD_UTF8))),
  'invalid UTF-8 in a nested string': b.doc(b.el(T.object, 'string', b.doc(b.el(T.string, 'x', b.str(BAD_UTF8))))),
  'invalid UTF-8 in an array under a listed key': b.doc(b.el(T.array, 'string', b.arr([T.string, b.str(BAD_UTF8)]))),
  'invalid UTF-8 in code, symbol, dbpointer': b.doc(
    b.el(T.code, 'a', b.str(BAD_UTF8)), b.el(T.symbol, 'b', b.str(BAD_UTF8)), b.el(T.dbpointer, 'c', Buffer.concat([b.str(BAD_UTF8), OID]))),
  'invalid UTF-8 in a key (never validated)': b.doc(b.el(T.int32, Buffer.from([0xff, 0xfe]), b.i32(1))),
  'invalid UTF-8 in a regex (never validated)': b.doc(b.el(T.regex, 'r', Buffer.concat([b.cstr(BAD_UTF8), b.cstr('i')]))),
  'UTF-8 surrogates encoded (invalid)': b.doc(b.el(T.string, 'string', b.str(Buffer.from([0xed, 0xa0, 0x80])))),
  'overlong UTF-8 (invalid)': b.doc(b.el(T.string, 'string', b.str(Buffer.from([0xc0, 0x80])))),
  'a regex that JavaScript cannot compile': b.doc(b.el(T.regex, 'r', Buffer.concat([b.cstr('['), b.cstr('')]))),
  'a regex with options JavaScript and BSONRegExp reject': b.doc(b.el(T.regex, 'r', Buffer.concat([b.cstr('a'), b.cstr('gz')]))),
  'deeply nested arrays and documents': b.doc(b.el(T.array, 'a', b.arr([T.array, b.arr([T.object, b.doc(b.el(T.array, 'x', b.arr()))])])))
};

describe('deserialize: explicit documents × every option set', () => {
  for (const [name, bytes] of Object.entries(RAW_DOCS)) {
    it(name, () => {
      for (const opts of DESERIALIZE_OPTION_SETS) {
        assertSameOutcome(
          outcome(() => rs.deserialize(Buffer.from(bytes), opts)),
          outcome(() => js.deserialize(Buffer.from(bytes), opts)),
          `${name} with ${showOpts(opts)}`
        );
      }
    });
  }

  it('index and allowObjectSmallerThanBufferSize', () => {
    const d = Buffer.concat([Buffer.from([9, 9, 9]), ALL_TYPES, Buffer.from([7, 7])]);
    for (const index of [undefined, 0, 3, 4, 2, d.length, -1, 1.5, '3']) {
      for (const allow of [undefined, true, false]) {
        const opts = { index, allowObjectSmallerThanBufferSize: allow };
        assertSameOutcome(
          outcome(() => rs.deserialize(d, opts)),
          outcome(() => js.deserialize(d, opts)),
          `options ${showOpts(opts)}`
        );
      }
    }
  });

  it('fieldsAsRaw and validation maps are looked up like js-bson (inherited names, numeric indexes, odd map types)', () => {
    const sub = b.doc(b.el(T.int32, 'x', b.i32(1)));
    const arrOfDocs = b.arr([T.object, sub], [T.array, b.arr([T.object, sub])]);
    const bytes = b.doc(
      ...['constructor', 'toString', '__proto__', 'valueOf', 'hasOwnProperty', 'get', 'size', '0', 'length', 'a'].map(k =>
        b.el(T.array, k, arrOfDocs)),
      b.el(T.string, 'constructor2', b.str(BAD_UTF8))
    );
    const maps = [{}, { a: true }, { 0: true }, Object.create(null), new Map([['a', true]]), 'a string', ['a'], { toString: true, a: 0 },
      JSON.parse('{"__proto__": true}')];
    for (const fieldsAsRaw of maps) {
      const opts = { fieldsAsRaw };
      assertSameOutcome(
        outcome(() => rs.deserialize(Buffer.from(bytes), opts)),
        outcome(() => js.deserialize(Buffer.from(bytes), opts)),
        `fieldsAsRaw ${Object.prototype.toString.call(fieldsAsRaw)} ${showOpts(fieldsAsRaw)}`
      );
    }
    for (const utf8 of [{ constructor2: false }, { constructor2: true }, { toString: false }, JSON.parse('{"__proto__": false}'),
      Object.assign(Object.create({ constructor2: false }), { a: true }), new Map([['a', true]]), ['x'], 'str', 0, null]) {
      const opts = { validation: { utf8 } };
      assertSameOutcome(
        outcome(() => rs.deserialize(Buffer.from(bytes), opts)),
        outcome(() => js.deserialize(Buffer.from(bytes), opts)),
        `validation.utf8 ${Object.prototype.toString.call(utf8)} ${showOpts(utf8)}`
      );
    }
  });

  it('a Uint8Array subclass and other views as input', () => {
    class MyBytes extends Uint8Array {}
    const inputs = [
      new MyBytes(ALL_TYPES),
      new Int32Array(new Uint8Array(Buffer.concat([ALL_TYPES, Buffer.alloc((4 - (ALL_TYPES.length % 4)) % 4)])).buffer),
      new Float64Array(8)
    ];
    for (const input of inputs) {
      for (const opts of [undefined, { allowObjectSmallerThanBufferSize: true }]) {
        assertSameOutcome(
          outcome(() => rs.deserialize(input, opts)),
          outcome(() => js.deserialize(input, opts)),
          `${input.constructor.name} with ${showOpts(opts)}`
        );
      }
    }
  });
});

describe('results are independent of later calls', () => {
  it('serialize and deserialize results are not overwritten by later calls (no shared scratch)', () => {
    const SEED = 0x1dea;
    const rng = new Rng(SEED);
    const kept = [];
    for (let n = 0; n < 200; n++) {
      const doc = gen.randomDocument(rng, js, 2);
      const bytes = outcome(() => rs.serialize(doc));
      const raw = gen.randomRawDocument(rng, 2);
      const opts = rng.pick([undefined, { promoteBuffers: true }, { raw: true }, { fieldsAsRaw: { arr: true, doc: true } }, { promoteValues: false }]);
      const value = outcome(() => rs.deserialize(raw, opts));
      kept.push({ doc, bytes, raw, opts, value });
    }
    kept.forEach(({ doc, bytes, raw, opts, value }, n) => {
      const ctx = `case ${n} (seed ${SEED})`;
      assertSameOutcome(bytes, outcome(() => js.serialize(doc)), `kept serialize result ${ctx}`, assertSameSerialized);
      assertSameOutcome(value, outcome(() => js.deserialize(raw, opts)), `kept deserialize result ${ctx} ${showOpts(opts)}`);
    });
  });
});

describe('setInternalBufferSize', () => {
  it('returns what js-bson returns for ordinary and odd sizes', () => {
    for (const size of [0, 1, 1024, -1, NaN, '10', undefined, null]) {
      assertSameOutcome(
        outcome(() => rs.setInternalBufferSize(size)),
        outcome(() => js.setInternalBufferSize(size)),
        `setInternalBufferSize(${String(size)})`
      );
    }
    // still works afterwards
    assertSameBytes(rs.serialize({ a: 1 }), js.serialize({ a: 1 }), 'serialize after setInternalBufferSize');
  });
});

describe('documents larger than js-bson\'s 17 MiB buffer', () => {
  it('serialize produces a complete document that deserializes back (js-bson would truncate or throw)', todoWhilePlaceholder(['serialize.js']), () => {
    const big = 'x'.repeat(9 * 1024 * 1024);
    const doc = { a: big, b: big, n: 1 };
    const bytes = rs.serialize(doc);
    assert.strictEqual(bytes.length, rs.calculateObjectSize(doc));
    assert.strictEqual(bytes.length, js.calculateObjectSize(doc));
    assert.strictEqual(Buffer.from(bytes.buffer, bytes.byteOffset, 4).readInt32LE(0), bytes.length);
    const back = js.deserialize(bytes);
    assert.strictEqual(back.a.length, big.length);
    assert.strictEqual(back.b, big);
    assert.strictEqual(back.n, 1);
    assert.deepStrictEqual(Object.keys(rs.deserialize(bytes)), ['a', 'b', 'n']);
  });
});
