'use strict';
// Differential tests of bson-rs deserialize / deserializeStream against js-bson.
const test = require('node:test');
const assert = require('node:assert');
const { spawnSync } = require('node:child_process');
const path = require('node:path');

const { js, rs } = require('./support/oracle');
const { traced } = require('./support/traps');
const { cws } = require('./support/bsonbuild');

const { EJSON } = js;

// ---------------------------------------------------------------------------
// helpers

function outcome(fn) {
  try {
    return { value: fn() };
  } catch (error) {
    return { error };
  }
}

/** Structural equality that also checks prototypes, own keys and exact primitives. */
function deepSame(a, b, where = '$', seen = new Map()) {
  if (typeof a !== typeof b) assert.fail(`${where}: typeof ${typeof a} !== ${typeof b}`);
  if (a === null || typeof a !== 'object') {
    if (typeof a === 'function') return;
    assert.ok(Object.is(a, b), `${where}: ${String(a)} !== ${String(b)}`);
    return;
  }
  if (b === null) assert.fail(`${where}: expected object, got null`);
  if (seen.get(a) === b) return;
  seen.set(a, b);
  assert.strictEqual(Object.getPrototypeOf(a), Object.getPrototypeOf(b), `${where}: prototype differs`);
  if (ArrayBuffer.isView(a)) {
    assert.strictEqual(Buffer.compare(Buffer.from(a.buffer, a.byteOffset, a.byteLength), Buffer.from(b.buffer, b.byteOffset, b.byteLength)), 0, `${where}: bytes differ`);
    return;
  }
  if (a instanceof Date) {
    assert.ok(Object.is(a.getTime(), b.getTime()), `${where}: date differs`);
    return;
  }
  if (a instanceof RegExp) {
    assert.strictEqual(a.source, b.source, `${where}: regexp source`);
    assert.strictEqual(a.flags, b.flags, `${where}: regexp flags`);
    return;
  }
  const ka = Reflect.ownKeys(a);
  const kb = Reflect.ownKeys(b);
  assert.deepStrictEqual(kb, ka, `${where}: own keys differ`);
  for (const k of ka) {
    const da = Object.getOwnPropertyDescriptor(a, k);
    const db = Object.getOwnPropertyDescriptor(b, k);
    assert.strictEqual(db.enumerable, da.enumerable, `${where}.${String(k)}: enumerable`);
    if ('value' in da) deepSame(da.value, db.value, `${where}.${String(k)}`, seen);
  }
}

function describeError(e) {
  return `${e.constructor.name}: ${e.message}`;
}

/** js-bson and bson-rs give the same value, or the same error class and message. */
function same(bytes, options, label = '') {
  const a = outcome(() => js.deserialize(bytes, options));
  const b = outcome(() => rs.deserialize(bytes, options));
  if (a.error || b.error) {
    assert.ok(a.error, `${label}: bson-rs threw ${b.error && describeError(b.error)} but js-bson returned`);
    assert.ok(b.error, `${label}: js-bson threw ${describeError(a.error)} but bson-rs returned`);
    assert.strictEqual(describeError(b.error), describeError(a.error), label);
    assert.strictEqual(Object.getPrototypeOf(b.error), Object.getPrototypeOf(a.error), label);
    return a;
  }
  const ea = outcome(() => EJSON.stringify(a.value, { relaxed: false }));
  const eb = outcome(() => EJSON.stringify(b.value, { relaxed: false }));
  if (!ea.error) assert.strictEqual(eb.value, ea.value, label);
  deepSame(a.value, b.value, label || '$');
  return a;
}

function hex(s) {
  return Buffer.from(s.replace(/\s+/g, ''), 'hex');
}

function int32(n) {
  const b = Buffer.alloc(4);
  b.writeInt32LE(n);
  return b;
}

/** Builds a BSON document from [type, key, valueBytes] elements. */
function doc(elements) {
  const parts = [];
  for (const [type, key, value] of elements) {
    parts.push(Buffer.from([type]), Buffer.from(key, 'utf8'), Buffer.from([0]), value);
  }
  const body = Buffer.concat(parts);
  return Buffer.concat([int32(body.length + 5), body, Buffer.from([0])]);
}

function str(bytes) {
  const b = typeof bytes === 'string' ? Buffer.from(bytes, 'utf8') : Buffer.from(bytes);
  return Buffer.concat([int32(b.length + 1), b, Buffer.from([0])]);
}

function cstr(s) {
  return Buffer.concat([Buffer.from(s, 'utf8'), Buffer.from([0])]);
}

function prng(seed) {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s / 4294967296;
  };
}

// A document with every BSON type, including the deprecated ones.
function everyTypeDoc() {
  const base = js.serialize({
    double: 1.5,
    negZero: -0,
    nan: NaN,
    inf: -Infinity,
    string: 'héllo wörld ✓ 😀',
    empty: '',
    object: { a: 1, nested: { b: [1, 2, { c: 'd' }] } },
    array: [1, 'two', 3.5, null, [[]], {}],
    binary: new js.Binary(Buffer.from([1, 2, 3]), 0),
    binFn: new js.Binary(Buffer.from([4, 5]), 1),
    binOld: new js.Binary(Buffer.from([6, 7, 8]), 2),
    uuidOld: new js.Binary(Buffer.alloc(16, 9), 3),
    uuid: new js.UUID('0123456789abcdef0123456789abcdef'),
    uuidShort: new js.Binary(Buffer.alloc(15, 1), 4),
    md5: new js.Binary(Buffer.alloc(16, 2), 5),
    user: new js.Binary(Buffer.alloc(3, 3), 0x80),
    oid: new js.ObjectId('0123456789abcdef01234567'),
    t: true,
    f: false,
    date: new Date(1700000000123),
    dateNeg: new Date(-1),
    dateMax: new Date(8.64e15),
    null: null,
    regex: /a[bc]+$/imsguy,
    code: new js.Code('function () { return 1; }'),
    codeScope: new js.Code('function () { return x; }', { x: 1, y: { z: [1] } }),
    int: 42,
    intNeg: -2147483648,
    ts: new js.Timestamp({ t: 4294967295, i: 1 }),
    long: js.Long.fromString('9007199254740991'),
    longBig: js.Long.fromString('9007199254740992'),
    longNeg: js.Long.fromString('-9007199254740991'),
    longMin: js.Long.MIN_VALUE,
    longMax: js.Long.MAX_VALUE,
    dec: js.Decimal128.fromString('-1.234E+5'),
    min: new js.MinKey(),
    max: new js.MaxKey(),
    dbref: new js.DBRef('coll', new js.ObjectId('0123456789abcdef01234567'), 'db', { extra: 1 }),
    dbrefNoDb: new js.DBRef('coll', 5),
    sym: new js.BSONSymbol('symbol'),
    int32: new js.Int32(7),
    dbl: new js.Double(7)
  });
  // Append undefined (0x06) and DBPointer (0x0C) by hand.
  const extra = Buffer.concat([
    Buffer.from([0x06]),
    cstr('undef'),
    Buffer.from([0x0c]),
    cstr('ptr'),
    str('db.coll'),
    Buffer.from('0123456789abcdef01234567', 'hex')
  ]);
  const body = Buffer.concat([base.subarray(4, base.length - 1), extra]);
  return Buffer.concat([int32(body.length + 5), body, Buffer.from([0])]);
}

const OPTION_SETS = (() => {
  const sets = [undefined, {}, null];
  for (const promoteLongs of [undefined, false]) {
    for (const promoteValues of [undefined, false]) {
      for (const promoteBuffers of [undefined, true]) {
        for (const useBigInt64 of [undefined, true]) {
          for (const bsonRegExp of [undefined, true]) {
            sets.push({ promoteLongs, promoteValues, promoteBuffers, useBigInt64, bsonRegExp });
          }
        }
      }
    }
  }
  sets.push({ raw: true }, { raw: true, promoteValues: false }, { fieldsAsRaw: { array: true } });
  sets.push({ fieldsAsRaw: { array: 1, '2': true } }, { fieldsAsRaw: { toString: false } }, { fieldsAsRaw: {} });
  sets.push({ validation: { utf8: false } }, { validation: { utf8: { string: true } } });
  sets.push({ validation: { utf8: { string: false } } });
  return sets;
})();

// ---------------------------------------------------------------------------

test('every BSON type with every option combination', () => {
  const bytes = everyTypeDoc();
  for (const options of OPTION_SETS) {
    // Several rounds: first decodes use generic objects, later ones compiled shapes.
    for (let round = 0; round < 3; round++) same(bytes, options, JSON.stringify(options) + ' round ' + round);
  }
});

test('values are instances of the js-bson classes', () => {
  const v = rs.deserialize(everyTypeDoc(), { promoteValues: false });
  assert.ok(v.oid instanceof js.ObjectId);
  assert.ok(v.long instanceof js.Long);
  assert.ok(v.int32 instanceof js.Int32);
  assert.ok(v.double instanceof js.Double);
  assert.ok(v.uuid instanceof js.UUID);
  assert.ok(v.binary instanceof js.Binary);
  assert.ok(v.dec instanceof js.Decimal128);
  assert.ok(v.dbref instanceof js.DBRef);
  assert.ok(v.ptr instanceof js.DBRef);
  assert.ok(v.sym instanceof js.BSONSymbol);
  assert.ok(v.codeScope instanceof js.Code);
  assert.ok(v.ts instanceof js.Timestamp);
  const p = rs.deserialize(everyTypeDoc(), { useBigInt64: true, promoteBuffers: true });
  assert.strictEqual(typeof p.long, 'bigint');
  assert.ok(Buffer.isBuffer(p.binary));
  assert.strictEqual(p.sym, 'symbol');
});

test('documents from the bench set and generated shapes', () => {
  const fs = require('node:fs');
  const dir = path.join(__dirname, '..', 'bench', 'documents');
  for (const file of fs.readdirSync(dir)) {
    const value = EJSON.parse(fs.readFileSync(path.join(dir, file), 'utf8'));
    const bytes = js.serialize(value);
    for (const options of [undefined, { promoteValues: false }, { raw: true }, { useBigInt64: true }]) {
      for (let round = 0; round < 3; round++) same(bytes, options, file);
    }
  }
  const orders = [];
  for (let i = 0; i < 300; i++) {
    orders.push({ _id: new js.ObjectId(), n: i, name: 'x' + (i % 7), tags: ['a', i], when: new Date(i) });
    if (i % 10 === 0) orders.push({ odd: i, __proto__x: 1 });
  }
  same(js.serialize({ orders }), undefined, 'orders');
});

test('arrays of numbers', () => {
  const value = {
    x: 1,
    ints: [1, -2, 2147483647, -2147483648, 0],
    doubles: [-0, 0.5, NaN, Infinity, -Infinity, 1e308],
    mixed: [1, 1.5, 2, js.Long.fromNumber(2 ** 40), js.Long.fromString('9007199254740993')],
    y: 2.5,
    nested: [[1, 2], [3.5], [], [[4]]],
    afterString: ['s', 1, 2],
    empty: [],
    long: [js.Long.fromNumber(5), js.Long.fromNumber(-5)],
    // int64s inside a run of numbers: the ±2^53 edges and a Long in the middle
    longRun: [js.Long.fromNumber(2 ** 53), 1, 2.5, js.Long.fromNumber(-(2 ** 53)), js.Long.fromString('9007199254740993'), 3, js.Long.MIN_VALUE]
  };
  const bytes = js.serialize(value);
  for (const options of [undefined, { promoteValues: false }, { useBigInt64: true }, { promoteLongs: false }]) {
    for (let round = 0; round < 3; round++) same(bytes, options, 'numbers ' + JSON.stringify(options));
  }
  const v = rs.deserialize(bytes);
  assert.ok(Object.is(v.doubles[0], -0));
  assert.deepStrictEqual(v.ints, [1, -2, 2147483647, -2147483648, 0]);
});

test('arrays of ObjectIds (built straight from the tape)', () => {
  const oid = i => new js.ObjectId(i.toString(16).padStart(24, 'a'));
  const list = n => Array.from({ length: n }, (_, i) => oid(i));
  const value = {
    one: oid(1),
    ids: list(2),
    empty: [],
    single: list(1),
    // past the packed template's 65,536 elements
    many: list(70000),
    mixed: [oid(3), 1, oid(4)],
    afterOther: ['s', oid(5), oid(6)],
    nested: [[oid(7)], oid(8), [oid(9), oid(10)], []],
    inObjects: [{ _id: oid(11) }, { _id: oid(12), refs: list(3) }],
    last: list(3)
  };
  const bytes = js.serialize(value);
  for (const options of [undefined, { promoteValues: false }, { bsonRegExp: true }]) {
    for (let round = 0; round < 2; round++) same(bytes, options, 'ObjectIds ' + JSON.stringify(options));
  }
  const v = rs.deserialize(bytes);
  assert.strictEqual(v.many.length, 70000);
  assert.strictEqual(v.many[69999].toHexString(), oid(69999).toHexString());
  assert.ok(v.ids[1] instanceof js.ObjectId && v.ids[0] !== v.ids[1]);
  // each call builds new arrays (the template is copied, never handed out)
  const w = rs.deserialize(bytes);
  assert.notStrictEqual(w.ids, v.ids);
  w.ids[0] = null;
  assert.ok(v.ids[0] instanceof js.ObjectId);
  assert.ok(rs.deserialize(bytes).ids[0] instanceof js.ObjectId);
});

test('arrays of Dates (built straight from the tape)', () => {
  const date = ms => new Date(ms);
  const value = {
    one: date(1),
    dates: [date(0), date(-1), date(8.64e15), date(1700000000123)],
    single: [date(5)],
    // past the packed template's 65,536 elements
    many: Array.from({ length: 70000 }, (_, i) => date(i * 1000)),
    mixed: [date(3), new js.ObjectId('6592000000000000000000aa'), date(4)],
    nested: [[date(7)], date(8), [date(9), date(10)], []],
    inObjects: [{ at: date(11) }, { at: date(12), log: [date(13), date(14)] }]
  };
  const bytes = Buffer.from(js.serialize(value));
  // int64 milliseconds out of a Date's range, and past 2^53 (rounded as js-bson rounds them)
  const wide = js.serialize({ a: [date(1), date(2)] });
  const at = wide.indexOf(0x09); // the first element's type byte; its value follows '0' and its NUL
  for (const [lo, hi] of [[0, 0x7fffffff], [0xffffffff, 0x001fffff], [1, 0x80000000]]) {
    const b = Buffer.from(wide);
    b.writeUInt32LE(lo, at + 3);
    b.writeInt32LE(hi | 0, at + 7);
    same(b, undefined, `date ${lo} ${hi}`);
  }
  for (const options of [undefined, { promoteValues: false }]) {
    for (let round = 0; round < 2; round++) same(bytes, options, 'Dates ' + JSON.stringify(options));
  }
  const v = rs.deserialize(bytes);
  assert.strictEqual(v.many.length, 70000);
  assert.strictEqual(v.many[69999].getTime(), 69999000);
  assert.ok(v.dates[0] instanceof Date && v.dates[0] !== rs.deserialize(bytes).dates[0]);
});

test('duplicate keys keep the first position and the last value', () => {
  const bytes = doc([
    [0x10, 'a', int32(1)],
    [0x10, 'b', int32(2)],
    [0x10, 'a', int32(3)]
  ]);
  for (let round = 0; round < 4; round++) {
    same(bytes, undefined, 'dup');
  }
  assert.deepStrictEqual(Object.entries(rs.deserialize(bytes)), [['a', 3], ['b', 2]]);
});

test('__proto__ keys are own properties and never change the prototype', () => {
  const inner = doc([[0x10, 'polluted', int32(1)]]);
  const bytes = doc([
    [0x03, '__proto__', inner],
    [0x10, 'x', int32(2)]
  ]);
  const nested = doc([[0x03, 'o', bytes], [0x04, 'arr', doc([[0x03, '0', bytes]])]]);
  for (let round = 0; round < 4; round++) {
    for (const b of [bytes, nested]) {
      same(b, undefined, '__proto__');
      const v = rs.deserialize(b);
      const o = v.o ?? v;
      assert.strictEqual(Object.getPrototypeOf(o), Object.prototype);
      assert.ok(Object.prototype.hasOwnProperty.call(o, '__proto__'));
      assert.strictEqual(o.polluted, undefined);
      assert.strictEqual(Object.getOwnPropertyDescriptor(o, '__proto__').value.polluted, 1);
    }
  }
  assert.strictEqual({}.polluted, undefined);
});

test('unusual keys and string values', () => {
  const keys = ['', '"', '\\', "'", '\n', '\u2028', 'a b', 'constructor', 'toString', 'hasOwnProperty', 'valueOf', '0', '-1', '1.5', '4294967295', '4294967294', '01', '__proto__', '__defineGetter__', 'é', '😀', '\u{fffd}', '$', '$ref', 'x'.repeat(40)];
  const elements = keys.map((k, i) => [0x02, k, str(i % 2 ? 'v\u0000nul' + i : 'x'.repeat(i))]);
  const d = doc(elements);
  const reversed = doc(elements.slice().reverse());
  for (let round = 0; round < 4; round++) {
    same(d, undefined, 'keys');
    same(reversed, undefined, 'keys reversed');
    same(doc([[0x03, 'o', d], [0x04, 'a', doc([[0x03, '0', d], [0x03, '1', reversed]])]]), undefined, 'nested keys');
  }
  // String values around the value-cache limit (32 bytes), with NULs and multi-byte characters.
  const values = [];
  for (let n = 0; n < 40; n++) values.push([0x02, 'k' + n, str('\u0000'.repeat(n % 3) + 'é'.repeat(n >> 1) + 'a'.repeat(n & 1))]);
  const vd = doc(values);
  for (let round = 0; round < 3; round++) same(vd, undefined, 'values');
});

test('non-ASCII strings: latin1-range, two-byte, astral, long, and past the one-pass conversion (16 MiB)', () => {
  // (src/decode.rs make_string converts valid UTF-8 itself up to 16 MiB, to a one-byte string when every unit is below 0x100)
  const pieces = ['é', 'ÿ', '\u0080', 'Ā', '日本', '😀', '\uffff', '\u{10ffff}', 'aé', 'é'.repeat(40), '日'.repeat(30) + 'x'];
  for (const p of pieces) {
    for (const n of [1, 2, 3]) {
      const text = p.repeat(n);
      same(doc([[0x02, 's', str(text)], [0x02, text, str('v')]]), undefined, `piece ${JSON.stringify(text)}`);
    }
  }
  const cases = [];
  for (const len of [64 * 1024 - 2, 64 * 1024 + 2, 1 << 20]) for (const unit of ['é', '日', '😀', 'ab😀日é']) cases.push([len, unit]);
  for (const len of [16 * 1024 * 1024 - 1, 16 * 1024 * 1024 + 1]) for (const unit of ['é', '日']) cases.push([len, unit]);
  for (const [len, unit] of cases) {
    const bytes = Buffer.byteLength(unit);
    const text = 'a'.repeat(len % bytes) + unit.repeat(Math.floor(len / bytes));
    const d = doc([[0x02, 's', str(text)], [0x0e, 'y', str(text)]]);
    const v = same(d, undefined, `${Buffer.byteLength(text)} bytes of ${unit}`);
    assert.strictEqual(v.value.s, text);
  }
  // a long string after a longer one (the scratch freed and grown again)
  for (const n of [3 << 20, 1 << 16, 2 << 20]) {
    const text = '日本語'.repeat(n / 3);
    assert.strictEqual(rs.deserialize(js.serialize({ s: text })).s, text);
  }
});

test('non-ASCII strings of mixed runs, across the UTF-8 decoder\'s 16-byte blocks', () => {
  // (core/src/utf8.rs to_utf16: blocks of 16 ASCII bytes, 8 two-byte or 5
  // three-byte characters from 64 bytes on, the scalar loop for the rest)
  const kinds = [['a', ' ', '~'], ['é', 'Ж', 'ß', '\u07ff'], ['日', 'の', '\u0800', '\uffff'], ['😀', '\u{10ffff}']];
  let seed = 12345;
  const next = (n) => {
    seed = (seed * 1103515245 + 12345) >>> 0;
    return (seed >>> 8) % n;
  };
  for (let round = 0; round < 300; round++) {
    let text = '';
    const target = 40 + next(700);
    while (text.length < target) {
      const kind = kinds[next(kinds.length)];
      for (let n = 1 + next(24); n > 0; n--) text += kind[next(kind.length)];
    }
    const v = same(doc([[0x02, 's', str(text)]]), undefined, `text ${JSON.stringify(text.slice(0, 40))}...`);
    assert.strictEqual(v.value.s, text);
  }
});

test('DBRef candidates (documents, and code-with-scope scopes: a DBRef under the recursive bson 6.x / 7.0-7.2)', () => {
  const oid = Buffer.from('0123456789abcdef01234567', 'hex');
  const cases = [
    [[0x02, '$ref', str('c')], [0x07, '$id', oid]],
    [[0x02, '$ref', str('c')], [0x07, '$id', oid], [0x02, '$db', str('d')]],
    [[0x02, '$ref', str('c')], [0x07, '$id', oid], [0x10, '$db', int32(1)]],
    [[0x02, '$ref', str('db.c')], [0x07, '$id', oid], [0x10, 'extra', int32(1)]],
    [[0x02, '$ref', str('c')], [0x0a, '$id', Buffer.alloc(0)]],
    [[0x10, '$ref', int32(1)], [0x07, '$id', oid]],
    [[0x02, '$ref', str('c')], [0x07, '$id', oid], [0x10, '$other', int32(1)]],
    [[0x10, '$other', int32(1)], [0x02, '$ref', str('c')], [0x07, '$id', oid]],
    [[0x0e, '$ref', str('c')], [0x07, '$id', oid]],
    [[0x07, '$id', oid], [0x02, '$ref', str('c')]],
    [[0x10, 'x', int32(1)]]
  ];
  for (const elements of cases) {
    const top = doc(elements);
    const nested = doc([[0x03, 'ref', top], [0x04, 'list', doc([[0x03, '0', top], [0x03, '1', top]])]]);
    const scoped = doc([[0x0f, 'code', cws('f', top)], [0x03, 'in', doc([[0x0f, 'c', cws('g', nested)]])]]);
    for (const options of [undefined, { promoteValues: false }, { raw: true }]) {
      for (let round = 0; round < 3; round++) {
        same(top, options, 'dbref top');
        same(nested, options, 'dbref nested');
        same(scoped, options, 'dbref scope');
      }
    }
  }
});

// Arrays whose ObjectIds and dates the Rust reader takes in runs (values.rs same_type_run).
function runsDoc() {
  const oid = (i) => new js.ObjectId(Buffer.alloc(12, i));
  const date = (i) => new Date(i * 86400000);
  return js.serialize({ o: [oid(1), oid(2), oid(3)], d: [date(1), date(-2), date(3)], m: [oid(4), date(5), date(6), oid(7), 1], e: [oid(8)] });
}

test('truncations of valid documents at every length give the same errors', () => {
  const numbers = js.serialize({ a: [1, 2.5, 3, -0, 4], b: [[7, 8], 9.5], c: 1 });
  for (const bytes of [everyTypeDoc(), numbers, runsDoc()]) truncations(bytes);
});

function truncations(bytes) {
  for (let cut = 0; cut < bytes.length; cut++) {
    const prefix = bytes.subarray(0, cut);
    same(prefix, undefined, `cut ${cut}`);
    if (cut >= 5) {
      // Fix the length and the terminator so the reader goes further.
      const fixed = Buffer.from(prefix);
      fixed.writeInt32LE(cut, 0);
      fixed[cut - 1] = 0;
      same(fixed, undefined, `fixed cut ${cut}`);
      same(fixed, { useBigInt64: true }, `fixed cut ${cut} bigint`);
      same(fixed, { allowObjectSmallerThanBufferSize: true }, `fixed cut ${cut} allow`);
      const padded = Buffer.concat([fixed, bytes.subarray(cut)]);
      same(padded, { allowObjectSmallerThanBufferSize: true }, `padded cut ${cut}`);
    }
  }
}

test('lying lengths at every int32 position', () => {
  const numbers = js.serialize({ a: [1, 2.5, 3, -0, 4], b: [[7, 8], 9.5], c: 1 });
  for (const bytes of [everyTypeDoc(), numbers, runsDoc()]) lyingLengths(bytes);
});

function lyingLengths(bytes) {
  const lies = [0, 1, 4, 5, -1, -5, 0x7fffffff, -0x80000000, 12, 13, 16, 0x10, 0x01];
  for (let pos = 0; pos + 4 <= bytes.length; pos++) {
    for (const lie of lies) {
      const b = Buffer.from(bytes);
      b.writeInt32LE(lie, pos);
      same(b, undefined, `lie ${lie} at ${pos}`);
    }
  }
  // Single bytes too (types, key bytes, terminators).
  for (let pos = 0; pos < bytes.length; pos++) {
    for (const v of [0, 1, 2, 0x10, 0x01, 0x30, 0xff]) {
      const b = Buffer.from(bytes);
      b[pos] = v;
      same(b, undefined, `byte ${v} at ${pos}`);
      same(b, { promoteValues: false }, `byte ${v} at ${pos} promoteValues false`);
    }
  }
}

test('random byte mutations give the same result', () => {
  const sources = [everyTypeDoc(), js.serialize({ a: [{ b: 'c', d: 1.5 }, { e: new Date(0) }], f: { g: null } })];
  const rand = prng(12345);
  for (const source of sources) {
    for (let k = 0; k < 3000; k++) {
      const b = Buffer.from(source);
      const flips = 1 + Math.floor(rand() * 3);
      for (let f = 0; f < flips; f++) b[Math.floor(rand() * b.length)] = Math.floor(rand() * 256);
      same(b, undefined, `mutation ${k}`);
      if (k % 5 === 0) same(b, { promoteValues: false, bsonRegExp: true, validation: { utf8: false } }, `mutation ${k}`);
    }
  }
});

test('specific malformed inputs', () => {
  const cases = [
    Buffer.alloc(0),
    Buffer.from([5]),
    Buffer.from([5, 0]),
    Buffer.from([5, 0, 0, 0]),
    Buffer.from([5, 0, 0, 0, 1]),
    Buffer.from([4, 0, 0, 0, 0]),
    hex('ffffff7f00'),
    hex('0000008000'),
    doc([[0x08, 'b', Buffer.from([2])]]),
    doc([[0x08, 'b', Buffer.from([0xff])]]),
    doc([[0x14, 'k', Buffer.alloc(0)]]),
    doc([[0x80, 'k', Buffer.alloc(0)]]),
    doc([[0x20, 'k\xff', Buffer.alloc(0)]]),
    doc([[0x04, 'arr', doc([[0x33, '0', Buffer.alloc(0)]])]]),
    Buffer.concat([int32(9), Buffer.from([0x0a, 0x61, 0x62, 0x63, 0x00])]),
    doc([[0x03, 'o', Buffer.from([5, 0, 0, 0, 1])]]),
    doc([[0x03, 'o', Buffer.from([6, 0, 0, 0, 0, 0])]]),
    doc([[0x04, 'o', Buffer.from([6, 0, 0, 0, 0, 0])]]),
    doc([[0x0f, 'o', Buffer.concat([int32(12), str('a'), doc([])])]]),
    doc([[0x0f, 'o', Buffer.concat([int32(100), str('a'), doc([])])]]),
    doc([[0x0f, 'o', Buffer.concat([int32(14), str('a'), doc([])])]]),
    doc([[0x0f, 'o', Buffer.concat([int32(15), str('a'), doc([])])]]),
    doc([[0x0f, 'o', Buffer.concat([int32(16), str('a'), doc([])])]]),
    doc([[0x05, 'b', Buffer.concat([int32(4), Buffer.from([2]), int32(0)])]]),
    doc([[0x05, 'b', Buffer.concat([int32(4), Buffer.from([2]), int32(-1)])]]),
    doc([[0x05, 'b', Buffer.concat([int32(4), Buffer.from([2]), int32(5)])]]),
    doc([[0x05, 'b', Buffer.concat([int32(6), Buffer.from([2]), int32(1), Buffer.from([1, 2])])]]),
    doc([[0x05, 'b', Buffer.concat([int32(0x7fffffff), Buffer.from([0])])]]),
    doc([[0x05, 'b', Buffer.concat([int32(-7), Buffer.from([0])])]]),
    doc([[0x02, 's', str([0xff, 0xfe])]]),
    doc([[0x0d, 's', str([0xc3])]]),
    doc([[0x0e, 's', str([0xed, 0xa0, 0x80])]]),
    doc([[0x0c, 's', Buffer.concat([str([0xe2, 0x82]), Buffer.alloc(12)])]]),
    doc([[0x0b, 'r', Buffer.from('ab')]]),
    doc([[0x0b, 'r', Buffer.from([0x61, 0, 0x6d])]]),
    doc([[0x11, 't', Buffer.from([1, 2, 3])]]),
    doc([[0x12, 't', Buffer.from([1, 2, 3, 4, 5])]]),
    doc([[0x07, 'o', Buffer.from([1, 2, 3, 4, 5])]]),
    doc([[0x13, 'd', Buffer.from([1, 2, 3, 4, 5])]])
  ];
  for (const b of cases) {
    for (const options of [undefined, { useBigInt64: true }, { validation: { utf8: false } }, { bsonRegExp: true }]) {
      same(b, options, b.toString('hex'));
    }
  }
});

test('UTF-8: validation settings and lossy decoding match js-bson', () => {
  const bad = [[0xff], [0xc3], [0xe2, 0x82], [0xf0, 0x9f, 0x98], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0xc0, 0xaf], [0x61, 0xf8, 0x62], [0xef, 0xbb, 0xbf, 0x61], [0xe0, 0x80, 0x80]];
  for (const bytes of bad) {
    const d = doc([
      [0x02, 'bad', str(bytes)],
      [0x02, 'good', str('ok')],
      [0x03, 'sub', doc([[0x02, 'x', str(bytes)]])],
      [0x0e, 'sym', str(bytes)],
      [0x0d, 'code', str(bytes)]
    ]);
    const key = doc([[0x02, Buffer.from(bytes).toString('latin1'), str('v')]]);
    const rawKey = Buffer.concat([int32(0), Buffer.from([0x02]), Buffer.from(bytes), Buffer.from([0]), str('v'), Buffer.from([0])]);
    rawKey.writeInt32LE(rawKey.length, 0);
    for (const options of [
      undefined,
      { validation: { utf8: false } },
      { validation: { utf8: true } },
      { validation: { utf8: { bad: false } } },
      { validation: { utf8: { bad: true } } },
      { validation: { utf8: { good: true } } },
      { validation: { utf8: { good: false, sub: false } } },
      { validation: { utf8: { sub: false, bad: false, sym: false, code: false } } }
    ]) {
      same(d, options, JSON.stringify(bytes) + ' ' + JSON.stringify(options));
      same(key, options, 'key');
      same(rawKey, options, 'raw key');
    }
  }
});

test('option errors and their order', () => {
  const good = js.serialize({ a: 1 });
  const option = [
    { useBigInt64: true, promoteValues: false },
    { useBigInt64: true, promoteLongs: false },
    { validation: { utf8: {} } },
    { validation: { utf8: { a: 1 } } },
    { validation: { utf8: { a: true, b: false } } },
    { validation: {} },
    { validation: { utf8: null } },
    { validation: 5 },
    { index: 1.5 },
    { index: '0' },
    { index: -1 },
    { promoteValues: 0 },
    { promoteValues: 1 },
    { fieldsAsRaw: 'a' },
    { bsonRegExp: 1 },
    { raw: 0 }
  ];
  for (const options of option) {
    same(good, options, JSON.stringify(options));
    same(Buffer.from([1, 2]), options, 'short ' + JSON.stringify(options));
  }
  // Inherited options are not seen by deserializeObject but index/allow are.
  const inherited = Object.create({ promoteValues: false, allowObjectSmallerThanBufferSize: true });
  same(Buffer.concat([good, Buffer.from([1, 2, 3])]), inherited, 'inherited');
  same(good, Object.create({ promoteValues: false }), 'inherited promoteValues');
});

test('fieldsAsRaw: reused and mutated objects, prototypes, array names', () => {
  const bytes = js.serialize({
    a: [{ x: 1 }, [{ y: 2 }]],
    b: [{ z: 3 }],
    toString: [{ t: 1 }],
    '': [{ e: 1 }],
    n: { a: [{ deep: 1 }], 0: [{ idx: 1 }] },
    list: [[{ in: 1 }], [{ in: 2 }]]
  });
  const fr = { a: true };
  same(bytes, { fieldsAsRaw: fr }, 'a');
  fr.a = 0;
  same(bytes, { fieldsAsRaw: fr }, 'a falsy');
  fr.b = 1;
  same(bytes, { fieldsAsRaw: fr }, 'b added');
  delete fr.b;
  fr[''] = true;
  same(bytes, { fieldsAsRaw: fr }, 'empty name');
  fr.toString = null;
  same(bytes, { fieldsAsRaw: fr }, 'toString shadowed');
  same(bytes, { fieldsAsRaw: Object.create({ a: 1 }) }, 'inherited');
  same(bytes, { fieldsAsRaw: Object.create(null) }, 'null prototype');
  same(bytes, { fieldsAsRaw: { 0: true, 1: true } }, 'indexes');
  same(bytes, { fieldsAsRaw: ['x'] }, 'array');
});

test('fieldsAsRaw and raw around code-with-scope scopes (the recursive bson 6.x / 7.0-7.2 read a scope with the options of its frame)', () => {
  const scope = { d: { e: 1 }, f: [1, { g: 2 }], s: new js.Code('y', { h: {} }) };
  const bytes = js.serialize({ arr: [new js.Code('x', scope), [new js.Code('w', scope)]], o: new js.Code('z', scope), d: { e: 2 } });
  for (const options of [{ fieldsAsRaw: { arr: 1 } }, { fieldsAsRaw: { f: 1 } }, { fieldsAsRaw: { d: 1 } }, { fieldsAsRaw: { s: 1, h: 1 } }, { raw: true }]) {
    same(bytes, options, JSON.stringify(options));
  }
});

test('index and allowObjectSmallerThanBufferSize', () => {
  const a = js.serialize({ a: 1, s: 'x' });
  const b = js.serialize({ b: [1, 2], c: { d: true } });
  const both = Buffer.concat([Buffer.from([9, 9, 9]), a, b, Buffer.from([7])]);
  for (const index of [0, 1, 3, 3 + a.length, both.length - 1, both.length, both.length + 10]) {
    for (const allow of [undefined, true, false]) {
      same(both, { index, allowObjectSmallerThanBufferSize: allow }, `index ${index} allow ${allow}`);
    }
  }
});

test('an options object is read as js-bson reads it (Proxy traps, in order)', () => {
  const bytes = js.serialize({ a: 1, n: js.Long.fromNumber(5), s: 'x' });
  const padded = Buffer.concat([Buffer.from([7, 7]), bytes, Buffer.from([9])]);
  const sets = [
    [bytes, {}],
    [bytes, { promoteLongs: false }],
    [bytes, { promoteValues: false, bsonRegExp: true, validation: { utf8: false } }],
    [bytes, { fieldsAsRaw: { a: 1 }, raw: false, useBigInt64: true }],
    [padded, { index: 2, allowObjectSmallerThanBufferSize: true }],
    [bytes, { index: 0, allowObjectSmallerThanBufferSize: false, promoteBuffers: true }]
  ];
  for (const [buffer, base] of sets) {
    const theirs = [];
    const ours = [];
    const a = outcome(() => js.deserialize(buffer, traced(base, theirs)));
    const b = outcome(() => rs.deserialize(buffer, traced(base, ours)));
    assert.ok(!a.error && !b.error, JSON.stringify(base));
    deepSame(b.value, a.value);
    assert.ok(theirs.length > 3, JSON.stringify(theirs));
    assert.deepStrictEqual(ours, theirs, JSON.stringify(base));
  }
});

test('deserializeStream matches js-bson', () => {
  const docs = [{ a: 1 }, { b: 'two', c: [1, 2] }, { d: new js.ObjectId(), e: { f: null } }];
  const data = Buffer.concat([Buffer.from([0, 0]), ...docs.map(d => js.serialize(d))]);
  for (const options of [undefined, {}, { promoteValues: false }, { index: 99 }, { allowObjectSmallerThanBufferSize: false }]) {
    const outA = [];
    const outB = [];
    const ra = outcome(() => js.deserializeStream(data, 2, 3, outA, 1, options));
    const rb = outcome(() => rs.deserializeStream(data, 2, 3, outB, 1, options));
    if (ra.error) {
      assert.ok(rb.error);
      assert.strictEqual(describeError(rb.error), describeError(ra.error));
    } else {
      assert.strictEqual(rb.value, ra.value);
      deepSame(outA, outB);
    }
  }
  // Too many documents requested: same error.
  const a = outcome(() => js.deserializeStream(data, 2, 4, [], 0, {}));
  const b = outcome(() => rs.deserializeStream(data, 2, 4, [], 0, {}));
  assert.strictEqual(describeError(b.error), describeError(a.error));
  // ArrayBuffer input.
  const ab = new Uint8Array(data).buffer;
  const outA = [];
  const outB = [];
  assert.strictEqual(rs.deserializeStream(ab, 2, 3, outB, 0, {}), js.deserializeStream(ab, 2, 3, outA, 0, {}));
  deepSame(outA, outB);
});

test('input types: Uint8Array views, ArrayBuffer, invalid inputs', () => {
  const bytes = js.serialize({ a: 'x', b: new js.Binary(Buffer.from([1, 2])) });
  const shifted = new Uint8Array(bytes.length + 8);
  shifted.set(bytes, 8);
  same(shifted.subarray(8), undefined, 'view');
  same(new Uint8Array(bytes).buffer, undefined, 'arraybuffer');
  same(new DataView(new Uint8Array(bytes).buffer), undefined, 'dataview');
  for (const input of [null, undefined, 'abc', 5, {}, []]) same(input, undefined, String(input));
});

test('deep nesting (20,000 levels) behaves like js-bson', () => {
  // {a: {a: ... {}}} built by hand; js-bson's reader is iterative too.
  let d = doc([]);
  for (let i = 0; i < 20000; i++) d = doc([[i % 2 ? 0x03 : 0x04, i % 2 ? 'a' : '0', d]]);
  const a = outcome(() => js.deserialize(d));
  const b = outcome(() => rs.deserialize(d));
  if (a.error) {
    assert.ok(b.error);
  } else {
    assert.ok(!b.error, b.error && b.error.message);
    // Walk both iteratively.
    let x = a.value;
    let y = b.value;
    let depth = 0;
    while (x && typeof x === 'object' && Object.keys(x).length) {
      const k = Object.keys(x)[0];
      assert.deepStrictEqual(Object.keys(y), [k]);
      assert.strictEqual(Array.isArray(y), Array.isArray(x));
      x = x[k];
      y = y[k];
      depth++;
    }
    assert.strictEqual(depth, 20000);
  }
});

test('many distinct keys stay correct (bounded caches)', () => {
  for (let i = 0; i < 200000; i++) {
    const k = 'key_' + i.toString(36);
    const d = doc([[0x10, k, int32(i)], [0x02, 'v' + (i % 3), str('s' + i)]]);
    const v = rs.deserialize(d);
    const keys = Object.keys(v);
    if (keys.length !== 2 || keys[0] !== k || v[k] !== i || v['v' + (i % 3)] !== 's' + i) {
      assert.fail(`document ${i}: ${JSON.stringify(v)}`);
    }
  }
  // Wide objects (past the factory arity bound) and long keys.
  const wide = {};
  for (let i = 0; i < 600; i++) wide['w' + i] = i;
  wide['x'.repeat(5000)] = 'long key';
  const bytes = js.serialize({ wide, list: [wide, wide] });
  for (let round = 0; round < 3; round++) same(bytes, undefined, 'wide');
});

test('documents of 128 keys or more (factories that construct) are js-bson\'s plain objects', () => {
  // From 128 keys the compiled factory is a constructor (shapes.js
  // compileConstructor); with a __proto__ key it stays an object literal.
  for (const n of [127, 128, 145, 256]) {
    for (const variant of ['plain', 'duplicate', 'proto']) {
      const elements = [];
      for (let i = 0; i < n; i++) {
        const key = i === 3 ? '7' : variant === 'duplicate' && i === n - 1 ? 'k1' : variant === 'proto' && i === 5 ? '__proto__' : 'k' + i;
        elements.push(i % 2 ? [0x10, key, int32(i)] : [0x02, key, str('s' + i)]);
      }
      const bytes = doc([[0x03, 'd', doc(elements)], [0x04, 'list', doc([[0x03, '0', doc(elements)]])]]);
      for (let round = 0; round < 30; round++) {
        const a = same(bytes, undefined, `${n} keys, ${variant}, round ${round}`).value;
        const b = rs.deserialize(bytes);
        assert.strictEqual(b.d.constructor, Object);
        assert.deepStrictEqual(Object.keys(b.d), Object.keys(a.d));
      }
    }
  }
});

test('objects of keys never seen before (built in dictionary mode) are js-bson\'s', () => {
  // Past small.js's 128 bytes, so that the Rust reader and the builder read them; after
  // thousands of fresh keys the reader's key table is cold and new keys arrive as strings.
  const pad = [0x02, 'pad', str('p'.repeat(120))];
  let last;
  for (let i = 0; i < 30000; i++) {
    const m = doc([[0x02, 't' + i, str('v' + i)], [0x10, 'u' + i, int32(i)], [0x10, 'fixed', int32(1)]]);
    const d = doc([pad, [0x03, 'm', m]]);
    if (i % 1000 === 0) same(d, undefined, `fresh ${i}`);
    else {
      const v = rs.deserialize(d);
      const keys = Object.keys(v.m);
      if (keys.length !== 3 || keys[0] !== 't' + i || v.m['u' + i] !== i || Object.getPrototypeOf(v.m) !== Object.prototype) {
        assert.fail(`document ${i}: ${JSON.stringify(v)}`);
      }
    }
    last = i;
  }
  // tricky keys among fresh ones: integer-like keys come first, __proto__ stays an own property
  for (let i = 0; i < 200; i++) {
    const n = last + 1 + i;
    const m = doc([[0x10, 'z' + n, int32(1)], [0x10, '10', int32(2)], [0x10, '2', int32(3)], [0x10, '__proto__', int32(4)], [0x10, 'constructor', int32(5)], [0x10, '', int32(6)], [0x10, 'a' + n, int32(7)]]);
    const bytes = doc([pad, [0x03, 'm', m], [0x04, 'arr', doc([[0x03, '0', m]])]]);
    same(bytes, undefined, `tricky ${i}`);
    const v = rs.deserialize(bytes);
    assert.deepStrictEqual(Object.keys(v.m), ['2', '10', 'z' + n, '__proto__', 'constructor', '', 'a' + n]);
    assert.strictEqual(Object.getPrototypeOf(v.m), Object.prototype);
    assert.strictEqual(v.m.__proto__, 4); // eslint-disable-line no-proto
  }
});

test('only objects with keys the reader did not intern are built in dictionary mode', () => {
  // (%HasFastProperties: V8's own flag, in a child process with natives syntax)
  const script = `
    const js = require('bson');
    const rs = require(${JSON.stringify(path.join(__dirname, '..'))});
    const pad = 'p'.repeat(120);
    // a document of recurring keys (> 128 bytes: the Rust reader), first decodes and later ones
    const fixed = js.serialize({ pad, m: { a: 1, b: 'x', c: true } });
    const first = rs.deserialize(fixed);
    for (let i = 0; i < 10; i++) rs.deserialize(fixed);
    const later = rs.deserialize(fixed);
    // ever-new keys until the reader's key table is cold, then one more
    for (let i = 0; i < 8000; i++) rs.deserialize(js.serialize({ pad, m: { ['t' + i]: i, ['u' + i]: i, fixed: 1 } }));
    const fresh = rs.deserialize(js.serialize({ pad, m: { tLast: 1, uLast: 2, fixed: 1 } }));
    process.stdout.write(JSON.stringify([%HasFastProperties(first.m), %HasFastProperties(later.m), %HasFastProperties(fresh.m)]));
  `;
  const r = spawnSync(process.execPath, ['--allow-natives-syntax', '-e', script], { encoding: 'utf8', cwd: path.join(__dirname, '..') });
  assert.strictEqual(r.stderr, '');
  assert.deepStrictEqual(JSON.parse(r.stdout), [true, true, false]);
});

test('large documents grow and shrink the scratch', () => {
  const big = { a: Array.from({ length: 300000 }, (_, i) => (i % 2 ? i : 'v' + i)) };
  const bytes = js.serialize(big);
  same(bytes, undefined, 'big');
  same(js.serialize({ small: 1 }), undefined, 'after big');
  const strings = { s: Array.from({ length: 20000 }, (_, i) => 'é' + i) };
  same(js.serialize(strings), undefined, 'many strings');
});

test('two copies of the JS module over one addon instance (module registry reset)', () => {
  const root = path.join(__dirname, '..');
  const saved = {};
  for (const k of Object.keys(require.cache)) {
    if (k.startsWith(root + path.sep) && k.endsWith('.js') && !k.includes('node_modules') && !k.includes(path.sep + 'test' + path.sep)) {
      saved[k] = require.cache[k];
      delete require.cache[k];
    }
  }
  let rs2;
  try {
    rs2 = require('..');
  } finally {
    Object.assign(require.cache, saved);
  }
  assert.notStrictEqual(rs2.deserialize, rs.deserialize);
  const docs = [];
  for (let i = 0; i < 30; i++) docs.push(js.serialize({ ['k' + (i % 5)]: 'v' + (i % 7), arr: [i, 'x' + (i % 3), { z: i }], big: Array.from({ length: i * 300 }, (_, j) => j) }));
  for (let round = 0; round < 4; round++) {
    for (let i = 0; i < docs.length; i++) {
      const expected = EJSON.stringify(js.deserialize(docs[i]), { relaxed: false });
      const which = (i + round) % 3 === 0 ? rs2 : rs;
      assert.strictEqual(EJSON.stringify(which.deserialize(docs[i]), { relaxed: false }), expected);
    }
  }
});

test('works without code generation (--disallow-code-generation-from-strings)', () => {
  const script = `
    const js = require('bson');
    const rs = require(${JSON.stringify(path.join(__dirname, '..'))});
    let threw = false;
    try { new Function('return 1'); } catch { threw = true; }
    if (!threw) throw new Error('code generation was allowed');
    const inner = js.serialize({ polluted: 1 });
    const parts = [];
    const d = Buffer.concat([Buffer.from([0,0,0,0,3]), Buffer.from('__proto__\\0'), inner, Buffer.from([0x10]), Buffer.from('x\\0'), Buffer.from([2,0,0,0]), Buffer.from([0])]);
    d.writeInt32LE(d.length, 0);
    const docs = [d, js.serialize({ a: 1, b: [1, 'x', { c: null }], d: new js.ObjectId('0123456789abcdef01234567') })];
    for (let round = 0; round < 5; round++) {
      for (const b of docs) {
        const x = js.EJSON.stringify(js.deserialize(b), { relaxed: false });
        const v = rs.deserialize(b);
        const y = js.EJSON.stringify(v, { relaxed: false });
        if (x !== y) throw new Error('mismatch ' + x + ' ' + y);
        if (Object.getPrototypeOf(v) !== Object.prototype) throw new Error('prototype changed');
      }
    }
    process.stdout.write('ok');
  `;
  const r = spawnSync(process.execPath, ['--disallow-code-generation-from-strings', '-e', script], {
    encoding: 'utf8',
    cwd: path.join(__dirname, '..')
  });
  assert.strictEqual(r.stderr, '');
  assert.strictEqual(r.stdout, 'ok');
});

test('regular expression options mapping and errors', () => {
  const flagsList = ['', 'i', 'm', 's', 'imsx', 'u', 'l', 'x', 'ms', 'sm', 'ii', 'a', 'z\u00e9'];
  for (const flags of flagsList) {
    for (const source of ['ab+c', '(', '\\', 'é+']) {
      const d = doc([[0x0b, 'r', Buffer.concat([cstr(source), cstr(flags)])]]);
      same(d, undefined, `/${source}/${flags}`);
      same(d, { bsonRegExp: true }, `bson /${source}/${flags}`);
    }
  }
});

test('Latin-1 text read as js-bson reads it: every character below U+0100 around the ends of 64-byte blocks, then one from U+0100, as values and keys', () => {
  // (text from 64 UTF-8 bytes is narrowed to Latin-1 bytes in 64-byte blocks
  // where the CPU has AVX-512, a block ending with a lead leaving it to the next)
  const texts = [];
  for (let c = 0; c < 256; c += 5) {
    for (const fill of ['a', 'é']) {
      for (const at of [0, 31, 32, 62, 63, 64, 65, 95, 127]) {
        const chars = Array(130).fill(fill);
        chars[at] = String.fromCharCode(c);
        texts.push(chars.join(''));
      }
    }
  }
  for (const n of [40, 63, 64, 65, 127, 128, 129, 3000]) texts.push('Crème brûlée à la française. '.repeat(200).slice(0, n));
  // one from U+0100 at every place around the blocks' ends and at the end:
  // the characters narrowed before it are widened, the rest decoded
  // (utf8::to_utf16_after_latin1)
  for (const t of texts.slice(0, 40)) {
    for (const bad of ['Ā', '€', '日', '😀']) {
      for (const at of [0, 1, 31, 62, 63, 64, 70, 100, 129, 130]) texts.push(t.slice(0, at) + bad + t.slice(at));
    }
  }
  for (const t of texts) {
    const doc = { t, list: [t, t.slice(1)], [t.slice(0, 90).replace(/\0/g, '_')]: 1 };
    const bytes = js.serialize(doc);
    const got = rs.deserialize(bytes);
    assert.deepStrictEqual(got, js.deserialize(bytes));
    assert.strictEqual(got.t, t);
  }
});
