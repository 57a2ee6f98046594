'use strict';
// serialize / calculateObjectSize / serializeWithBufferAndIndex / setInternalBufferSize:
// bson-rs against js-bson (the oracle) — same bytes, same sizes, same errors.
const test = require('node:test');
const assert = require('node:assert');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { js, rs } = require('./support/oracle');
const { assertFastSizeTraps, traced } = require('./support/traps');

const {
  Binary,
  BSONRegExp,
  BSONSymbol,
  Code,
  DBRef,
  Decimal128,
  Double,
  Int32,
  Long,
  MaxKey,
  MinKey,
  ObjectId,
  Timestamp,
  UUID
} = js;

function hex(b) {
  return Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex');
}

function outcome(fn) {
  try {
    const value = fn();
    return { ok: true, value: value instanceof Uint8Array ? hex(value) : value };
  } catch (error) {
    return {
      ok: false,
      name: error?.constructor?.name,
      message: error?.message,
      bsonError: error instanceof js.BSONError
    };
  }
}

/** Same serialize bytes (or same error) and same calculateObjectSize (or same error). */
function same(doc, options) {
  const a = outcome(() => js.serialize(doc, options));
  const b = outcome(() => rs.serialize(doc, options));
  assert.deepStrictEqual(b, a);
  const c = outcome(() => js.calculateObjectSize(doc, options));
  const d = outcome(() => rs.calculateObjectSize(doc, options));
  assert.deepStrictEqual(d, c);
  return a;
}

function sameSerialize(doc, options) {
  const a = outcome(() => js.serialize(doc, options));
  const b = outcome(() => rs.serialize(doc, options));
  assert.deepStrictEqual(b, a);
  return a;
}

function sameSize(doc, options) {
  const a = outcome(() => js.calculateObjectSize(doc, options));
  const b = outcome(() => rs.calculateObjectSize(doc, options));
  assert.deepStrictEqual(b, a);
  return a;
}

const allOptions = [
  undefined,
  {},
  { checkKeys: true },
  { serializeFunctions: true },
  { ignoreUndefined: false },
  { checkKeys: true, serializeFunctions: true, ignoreUndefined: false },
  { ignoreUndefined: 'yes', checkKeys: 1 } // non-booleans fall back to the defaults
];

function allTypesDoc() {
  return {
    double: 1.5,
    int: 42,
    negInt: -7,
    string: 'hello',
    nonAscii: 'héllo wörld ✓',
    emoji: '😀 pair',
    longString: 'x'.repeat(300),
    longNonAscii: 'é'.repeat(100),
    empty: '',
    nested: { a: { b: { c: 'deep' } } },
    array: [1, 'two', 3.5, null, { x: 1 }, [2, [3]]],
    emptyArray: [],
    emptyObject: {},
    bin: Buffer.from('binary data'),
    u8: new Uint8Array([1, 2, 3]),
    oid: new ObjectId('65494a394033a116319ce2da'),
    t: true,
    f: false,
    date: new Date(1700000000000),
    nil: null,
    undef: undefined,
    regexp: /ab+c/gim,
    code: new Code('function () { return 1; }'),
    codeScope: new Code('function () { return x; }', { x: 1, y: 'two' }),
    symbol: new BSONSymbol('sym'),
    int32: new Int32(-12),
    ts: new Timestamp({ t: 1700000000, i: 3 }),
    long: Long.fromString('-1234567890123456789'),
    ulong: Long.fromString('18446744073709551615', true),
    dec: Decimal128.fromString('1234.5678'),
    minKey: new MinKey(),
    maxKey: new MaxKey(),
    bsonRegExp: new BSONRegExp('^a.*z$', 'xsmi'),
    dbref: new DBRef('coll', new ObjectId('0123456789ab0123456789ab'), 'db', { extra: 1 }),
    dbrefNoDb: new DBRef('coll', new ObjectId('0123456789ab0123456789ab')),
    binSub2: new Binary(Buffer.from('old binary'), 2),
    uuid: new UUID('0123456789abcdef0123456789abcdef'),
    bigint: 123n,
    dbl: new Double(-0),
    fn: function named() {
      return 1;
    },
    arrow: () => 2,
    sym: Symbol('skipped')
  };
}

test('every type, every option: identical bytes and sizes', () => {
  for (const options of allOptions) same(allTypesDoc(), options);
});

test('numbers: int32 edges, -0, NaN, infinities, fractions, safe-integer edges', () => {
  const values = [
    0, -0, 1, -1, 2147483647, -2147483648, 2147483648, -2147483649, 4294967296, 0.5, -0.5,
    NaN, Infinity, -Infinity, Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER,
    Number.MAX_SAFE_INTEGER + 2, Number.MAX_VALUE, Number.MIN_VALUE, 1e21, 2 ** 53
  ];
  same({ values });
  for (const v of values) same({ v });
});

test('bigint wraps to int64 like js-bson', () => {
  for (const v of [0n, -1n, 2n ** 63n - 1n, 2n ** 63n, -(2n ** 63n), -(2n ** 63n) - 1n, 2n ** 64n + 5n, 2n ** 100n]) {
    same({ v, a: [v] });
  }
});

test('dates: valid, invalid, extremes, fractional, overridden getTime', () => {
  const odd = new Date(5);
  odd.getTime = () => 123.75;
  for (const d of [new Date(0), new Date(-1), new Date(NaN), new Date(8.64e15), new Date(-8.64e15), odd]) {
    same({ d, a: [d] });
  }
});

test('regular expressions: every flag combination, BSONRegExp options sorted', () => {
  for (const flags of ['', 'g', 'i', 'm', 's', 'u', 'y', 'd', 'gim', 'imsuy', 'dgimsuy']) {
    same({ r: new RegExp('a(b)c', flags) });
  }
  same({ r: new BSONRegExp('x', 'xsmli') });
  const unsorted = new BSONRegExp('x', 'i');
  unsorted.options = 'zyxmi'; // js-bson sorts whatever is there
  same({ r: unsorted });
  same({ r: new BSONRegExp('é✓', 'u') });
  same({ r: /\u00e9+/ });
});

test('regular expressions on the bytes tape and as string args: lengths around the bound, in arrays among binaries', () => {
  // pattern + options of up to 48 ASCII bytes go on the bytes tape (types.js putRegex), others as args
  const vm = require('node:vm');
  const all = [];
  for (let n = 0; n <= 50; n++) {
    for (const flags of ['', 'i', 'gim']) all.push(new RegExp('a'.repeat(n), flags));
  }
  all.push(/é+/, /x/u, new RegExp('\\u0000'), vm.runInNewContext('/other-realm/m'));
  const odd = new BSONRegExp('p', 'i');
  odd.options = 'é'; // js-bson writes whatever is there
  const nul = new BSONRegExp('p'.repeat(40), 'i');
  nul.options = 'i\u0000m';
  all.push(new BSONRegExp('q'.repeat(45), 'ixs'), new BSONRegExp('q'.repeat(46), 'ixs'), odd, nul);
  same({ list: all });
  same(Object.fromEntries(all.map((r, i) => ['r' + i, r])));
  // untagged objects in the array lane, in turn: RegExps, Uint8Arrays past an element's room, strings, Dates
  const mixed = all.map((r, i) => [r, new Uint8Array(100 + i), 's'.repeat(48), new Date(i), vm.runInNewContext('new Date(7)')][i % 5]);
  same({ mixed });
});

test('Code and BSONSymbol strings on the bytes tape and as string args: lengths around the bound, scripts, keys of every kind', () => {
  // short ASCII strings go on the bytes tape (types.js putText), others as args
  const texts = ['', 'x', 'a\u0000b', 'é', 'x'.repeat(47) + 'é', '日本', 'a\ud800b', '😀'];
  for (let n = 40; n <= 50; n++) texts.push('c'.repeat(n));
  const values = texts.flatMap((text) => [new Code(text), new BSONSymbol(text)]);
  const odd = new Code('y');
  odd.code = 42; // not a string: js-bson's TypeError from its toString
  same({ values });
  same(Object.fromEntries(values.map((v, i) => ['k' + i, v])));
  same(Object.fromEntries(values.map((v, i) => [`fresh_${i}_${Date.now()}`, v]))); // keys new to the key cache
  same({ m: new Map(values.map((v, i) => ['m' + i, v])) });
  same({ odd });
  same({ list: [odd] });
  // many in one document: the bytes tape grows inside the array lane
  same({ list: Array.from({ length: 5000 }, (_, i) => (i % 2 ? new Code('f' + i) : new BSONSymbol('s'.repeat(i % 50)))) });
});

test('short strings of a large document go into one rope: lengths around the bounds, every script, among other args, across native chunks, nested calls', () => {
  // Past ROPE_AFTER bytes of tape, strings of ROPE_MIN to SHORT_STRING_BYTES
  // units are pieces of one rope argument that Rust cuts by length (types.js
  // putRopePiece); shorter ones stay on the bytes tape, longer ones are args.
  const { addon } = require('../lib/native');
  const { ROPE_MIN, ROPE_AFTER, SHORT_STRING_BYTES } = require('../lib/serialize/ops');
  const { encode } = addon;
  const marks = ['rope-mark-0', 'rope-mark-1'].map((m) => m.padEnd(ROPE_MIN, '.'));
  let ropes = 0;
  addon.encode = function (...args) {
    for (const a of args) if (typeof a === 'string' && a.includes(marks[0] + marks[1])) ropes++;
    return encode.apply(this, args);
  };
  try {
    const texts = [];
    for (const n of [ROPE_MIN - 1, ROPE_MIN, ROPE_MIN + 1, SHORT_STRING_BYTES - 1, SHORT_STRING_BYTES, SHORT_STRING_BYTES + 1]) {
      texts.push('a'.repeat(n), 'é'.repeat(n), '日'.repeat(n), ('x😀').repeat(n).slice(0, n), 'a\u0000b'.padEnd(n, 'c'));
      // lone surrogates at a piece's ends: its neighbours must not pair with them
      texts.push('\udc00'.padEnd(n, 'y'), 'z'.repeat(n - 1) + '\ud83d', '\ude00' + 'w'.repeat(n - 1));
    }
    const pad = Array.from({ length: Math.ceil(ROPE_AFTER / 10) + 1 }, (_, i) => 'pad' + String(i).padStart(7, '0')); // 10 bytes each, on the tape
    ropes = 0;
    same({ pad, marks, texts });
    assert.ok(ropes > 0, 'the rope was not used');
    // under keys of every kind (cached, new, non-ASCII and so sent as args, Map keys), among long strings and binaries
    const big = new Binary(Buffer.alloc(4096, 7));
    same({ pad, ...Object.fromEntries(texts.map((t, i) => ['k' + i, t])), long: 'L'.repeat(100), big });
    same({ pad, ...Object.fromEntries(texts.map((t, i) => [`fresh_${i}_${Date.now()}_é`, t])) });
    same({ pad, m: new Map(texts.map((t, i) => ['m' + i, t])), after: ['é'.repeat(60), big, ...texts] });
    // a document of the same shape, again and again (compiled frames), and after it one with fewer pieces
    const order = (i) => ({ _id: i, name: 'customer name ' + i, email: `user${i}@example.com`, city: 'Springfield' + i, tags: ['tag-number-' + i, 'x'] });
    for (let k = 0; k < 6; k++) same({ orders: Array.from({ length: 40 - k * 5 }, (_, i) => order(i + k)) });
    // more args than one native call takes: the rope's first piece comes before, among and after chunk edges
    for (const before of [0, 8190, 9000]) {
      same({ args: Array.from({ length: before }, (_, i) => 'é' + i), pad, texts, more: Array.from({ length: 9000 }, (_, i) => i % 2 ? 'ö' + i : 'piece-of-rope-' + i) });
    }
    // a nested serialize inside a document with a rope has a rope of its own
    const inner = { pad, texts: texts.slice().reverse() };
    const doc = { pad, texts, nested: { toBSON: () => ({ bytes: rs.serialize(inner) }) }, after: texts };
    const plain = { pad, texts, nested: { bytes: js.serialize(inner) }, after: texts };
    assert.strictEqual(hex(rs.serialize(doc)), hex(js.serialize(plain)));
    // into a caller's buffer
    const target = Buffer.alloc(200000);
    const end = rs.serializeWithBufferAndIndex({ pad, texts }, target, { index: 10 });
    assert.strictEqual(hex(target.subarray(10, end + 1)), hex(js.serialize({ pad, texts })));
  } finally {
    addon.encode = encode;
  }
});

test('arrays of binaries on the bytes tape: every length around the bounds, subtypes, among other values, past the index table', () => {
  // (the native writer's run of binaries: up to 48 bytes in one fixed-size copy, longer ones copied
  // from the tape; subtype 2 and indices of 5 digits or more are left to its general path)
  const sizes = [];
  for (let n = 0; n <= 70; n++) sizes.push(n);
  sizes.push(127, 128, 255, 256, 257, 511, 1022, 1023, 1024, 1025, 2048);
  const data = (n, seed) => Buffer.from(Array.from({ length: n }, (_, j) => (seed * 31 + j * 7) & 0xff));
  for (const subtype of [0, 2, 4, 0x80]) {
    same({ list: sizes.map((n, i) => new Binary(data(n, i), subtype)) });
    same({ list: sizes.map((n, i) => (i % 3 === 2 ? i : i % 3 === 1 ? data(n, i) : new Binary(data(n, i), subtype))) });
  }
  same({ a: { list: sizes.map((n, i) => [new Binary(data(n, i)), new Binary(data(n + 1, i)), 'x'.repeat(i % 50)]) } });
  const long = Array.from({ length: 10050 }, (_, i) => new Binary(data(49 + (i % 80), i)));
  same({ long, after: new Binary(data(300, 1)) });
});

test('a document of many binaries written in one native pass, returned in a buffer of its own size', () => {
  // (its size is estimated with room for each element's header: one pass, not a second into a second
  // buffer; from OWN_BUFFER_MIN up it is written into the returned buffer, below that into the scratch and copied)
  const { addon } = require('../lib/native');
  const { encode, encodeTape } = addon;
  let calls = 0;
  addon.encode = function (...args) {
    calls++;
    return encode.apply(this, args);
  };
  addon.encodeTape = function () {
    calls++;
    return encodeTape.call(this);
  };
  try {
    for (const size of [256, 1024, 4096]) {
      for (const make of [(i) => new Binary(Buffer.alloc(size, i)), (i) => Buffer.alloc(size, i), (i) => new Binary(Buffer.alloc(size, i), 2)]) {
        const doc = { list: Array.from({ length: 200 }, (_, i) => make(i)) };
        calls = 0;
        const b = rs.serialize(doc);
        assert.strictEqual(calls, 1, `size ${size}`);
        assert.ok(b.equals(js.serialize(doc)));
        assert.ok(b.buffer.byteLength - b.byteLength <= b.byteLength >> 3);
      }
    }
  } finally {
    addon.encode = encode;
    addon.encodeTape = encodeTape;
  }
});

test('a document mostly of large binaries is written into the buffer it is returned in (no copy)', () => {
  // (from the pool's limit up, binaries from 8 KiB: a GridFS chunk, a thumbnail; copied from the scratch
  // they were 0.94-1.00x js-bson; binaries of 1 KiB are still copied, faster through the scratch)
  const { allocUnsafe } = Buffer;
  let copies = 0;
  Buffer.allocUnsafe = function (n) {
    if (n >= 30 * 1024) copies++;
    return allocUnsafe.call(this, n);
  };
  try {
    const id = new ObjectId('65a1b2c3d4e5f60718293a4b');
    for (const size of [31 * 1024, 64 * 1024, 255 * 1024]) {
      const data = Buffer.alloc(size, size & 0xff);
      for (const doc of [
        { _id: id, files_id: id, n: 3, data: new Binary(data) },
        { data },
        { img: new Binary(data.subarray(7, size - 9), 4), w: 64, h: 64 }
      ]) {
        copies = 0;
        const b = rs.serialize(doc);
        assert.strictEqual(copies, 0, `size ${size}`);
        assert.ok(b.equals(js.serialize(doc)), `size ${size}`);
        assert.ok(b.buffer.byteLength - b.byteLength <= b.byteLength >> 3);
      }
    }
    const many = { list: Array.from({ length: 100 }, (_, i) => new Binary(Buffer.alloc(1024, i))) };
    copies = 0;
    const bytes = rs.serialize(many);
    assert.strictEqual(copies, 1);
    assert.ok(bytes.equals(js.serialize(many)));
  } finally {
    Buffer.allocUnsafe = allocUnsafe;
  }
});

test('documents of 11 KB fill a new process\'s first output pool (the 64 KiB scratch) without a second native pass', () => {
  // (each document goes into a pool only where the pool has room for twice its estimate: judged by the
  // first pool's own size, not the 120 KiB of the pools made later, else one of them was encoded twice)
  const script = `
    const { addon } = require('./lib/native');
    const rs = require('.');
    const js = require('bson');
    const { encode, encodeTape } = addon;
    let calls = 0;
    addon.encode = function (...args) { calls++; return encode.apply(this, args); };
    addon.encodeTape = function () { calls++; return encodeTape.call(this); };
    const out = [];
    for (const text of ['Crème brûlée à la française. '.repeat(380), 'plain ASCII text. '.repeat(610)]) {
      for (let i = 0; i < 12; i++) {
        const doc = { i, text };
        calls = 0;
        const b = rs.serialize(doc);
        out.push([calls, b.equals(js.serialize(doc))]);
      }
    }
    process.stdout.write(JSON.stringify(out));`;
  const r = spawnSync(process.execPath, ['-e', script], { cwd: path.join(__dirname, '..'), encoding: 'utf8', timeout: 60000 });
  assert.strictEqual(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  assert.strictEqual(out.length, 24);
  for (const [k, [calls, same]] of out.entries()) {
    assert.ok(same, `document ${k}`);
    assert.strictEqual(calls, 1, `document ${k}`);
  }
});

test('serialize returns Node\'s own Buffers: pool views and buffers of their own, as js-bson\'s (prototype, class, deep equality)', () => {
  const util = require('node:util');
  const docs = [{ ok: 1 }, { n: 1, ok: 1, s: 'x'.repeat(40) }, { big: 'y'.repeat(200000) }, { list: Array.from({ length: 200 }, (_, i) => Buffer.alloc(1024, i)) }];
  for (const doc of docs) {
    const b = rs.serialize(doc);
    const expected = js.serialize(doc);
    assert.strictEqual(Object.getPrototypeOf(b), Buffer.prototype);
    assert.strictEqual(b.constructor, Buffer);
    assert.ok(Buffer.isBuffer(b));
    assert.ok(util.isDeepStrictEqual(b, expected), `${Object.keys(doc)}`);
  }
  // Where Buffer[Symbol.species] is not Node's Buffer class, views come from Buffer.from
  const modulePath = require.resolve('../lib/buffer-view');
  const saved = Object.getOwnPropertyDescriptor(Buffer, Symbol.species);
  delete require.cache[modulePath];
  Object.defineProperty(Buffer, Symbol.species, { configurable: true, get: () => Uint8Array });
  try {
    const { bufferView, nodeBufferClass } = require(modulePath);
    assert.strictEqual(nodeBufferClass, null);
    const view = bufferView(new ArrayBuffer(16), 4, 8);
    assert.strictEqual(Object.getPrototypeOf(view), Buffer.prototype);
    assert.deepStrictEqual([view.byteOffset, view.length], [4, 8]);
  } finally {
    Object.defineProperty(Buffer, Symbol.species, saved);
    delete require.cache[modulePath];
  }
  const { nodeBufferClass } = require(modulePath);
  assert.strictEqual(nodeBufferClass.prototype, Buffer.prototype);
});

test('binaries copied to the tape by a compiled frame near the end of a fresh tape: the frame counts its room again', () => {
  // A Binary of up to 1,023 bytes (SET_BINARY_MAX) is copied to the bytes tape, more
  // than an element's room: without a recount, the short strings after it ran
  // past the tape's end (fresh processes, so that the tape has its first size;
  // the pads move the binaries across that end).
  const script = `
    const js = require('bson'); const rs = require('.');
    const mk = (i) => ({ b: new js.Binary(Buffer.alloc(256, i & 255), 0), s0: 'a'.repeat(48), s1: 'b'.repeat(48), s2: 'c'.repeat(48), s3: 'd'.repeat(48) });
    for (let i = 0; i < 8; i++) rs.serialize({ list: [mk(i)] }); // (compiled; the tape keeps its first size)
    const pad = Number(process.argv[1]);
    const doc = { p: Array.from({ length: Math.ceil(pad / 40) }, (_, i) => 'x'.repeat(Math.min(40, pad - 40 * i))), list: Array.from({ length: 400 }, (_, i) => mk(i)) };
    const a = js.serialize(doc); let b; try { b = rs.serialize(doc); } catch (e) { b = e.message; }
    process.stdout.write(JSON.stringify(Buffer.isBuffer(b) && a.equals(b)));`;
  for (let pad = 0; pad <= 448; pad += 16) {
    const r = spawnSync(process.execPath, ['-e', script, String(pad)], { cwd: path.join(__dirname, '..'), encoding: 'utf8', timeout: 60000 });
    assert.strictEqual(r.status, 0, r.stderr);
    assert.strictEqual(r.stdout, 'true', `pad ${pad}`);
  }
});

test('null bytes: keys, regexp source, BSONRegExp pattern', () => {
  same({ 'a\u0000b': 1 });
  same({ 'a\u0000b': undefined }); // key checked even when the value is skipped
  same({ r: new RegExp('a\u0000b') });
  const withNul = new BSONRegExp('a', 'i');
  withNul.pattern = 'a\u0000b';
  same({ r: withNul });
  same(new Map([['x\u0000', 1]]));
  same({ a: ['ok\u0000'] }); // string values may contain NUL
  same({ s: 'a\u0000b', long: 'x'.repeat(80) + '\u0000' });
  // a source / pattern that is not a string: js-bson's match call and its errors
  class NumberSource extends RegExp {
    get source() {
      return 5;
    }
  }
  same({ r: new NumberSource('a') });
  for (const pattern of [7, null, { match: () => ['\u0000'] }, { match: () => null, toString: () => 'p' }]) {
    const odd = new BSONRegExp('a', 'i');
    odd.pattern = pattern;
    same({ r: odd });
  }
});

test('checkKeys: $ and . rules, exempt keys, arrays, DBRef frames', () => {
  const docs = [
    { $set: 1 },
    { 'a.b': 1 },
    { $db: 'x', $ref: 'y', $id: 1, $clusterTime: 2 },
    { nested: { $bad: 1 } },
    { arr: [{ 'x.y': 1 }] },
    { dollarDot: { '$a.b': 1 } },
    new Map([['$m', 1]]),
    { ref: new DBRef('c', new ObjectId('0123456789ab0123456789ab'), 'db', { 'weird.key': 1, $other: 2 }) },
    { code: new Code('x', { 'a.b': 1 }) }
  ];
  for (const doc of docs) {
    same(doc, { checkKeys: true });
    same(doc, { checkKeys: false });
  }
});

test('ignoreUndefined: documents, arrays (always null), DBRef fields (always ignored)', () => {
  const doc = {
    a: undefined,
    b: [undefined, 1, undefined],
    c: { d: undefined },
    ref: new DBRef('c', new ObjectId('0123456789ab0123456789ab'), undefined, { u: undefined, v: 1 }),
    m: new Map([['u', undefined]])
  };
  same(doc, { ignoreUndefined: true });
  same(doc, { ignoreUndefined: false });
});

test('serializeFunctions: values, arrays (index gaps when skipped), Code', () => {
  const doc = {
    f() {
      return 'method';
    },
    arr: [1, () => 'x', Symbol('s'), 4, function () {}],
    code: new Code(function add(a, b) {
      return a + b;
    })
  };
  same(doc, { serializeFunctions: true });
  same(doc, { serializeFunctions: false });
});

test('Maps: order, nesting, non-string keys', () => {
  same(new Map([['b', 1], ['a', new Map([['z', [1, 2]]])]]));
  same({ m: new Map([['x', 1], ['y', 'two']]) });
  same({ m: new Map([[1, 'a']]) }); // TypeError in serialize and in calculateObjectSize
  same({ m: new Map([[Symbol('k'), 'a']]) });
  same({ m: new Map([[1, undefined]]) }); // skipped before the key is written
  same({ m: new Map([[{}, Symbol('v')]]) });
  same({ m: new Map() });
  // String objects: js-bson writes ≤ 25 ASCII units (its latin fast path), throws otherwise
  for (const key of ['a', '', 'a.b', '$x', 'x'.repeat(25), 'x'.repeat(26), 'é']) {
    same({ m: new Map([[new String(key), 1]]) }, { checkKeys: true });
  }
});

test('typed arrays, ArrayBuffer, DataView, Buffer views with offsets', () => {
  const pool = Buffer.from('0123456789abcdefghijklmnopqrstuvwxyz');
  same({
    u16: new Uint16Array([1, 2, 65535]),
    i8: new Int8Array([-1, 2]),
    f64: new Float64Array([1.5, -0]),
    u8c: new Uint8ClampedArray([300, 5]),
    big: new BigInt64Array([1n, -2n]),
    ab: new ArrayBuffer(8),
    dv: new DataView(new ArrayBuffer(4)),
    view: pool.subarray(5, 30),
    u8view: new Uint8Array(pool.buffer, pool.byteOffset + 3, 4),
    emptyU8: new Uint8Array(0),
    bigU8: new Uint8Array(100000).fill(7)
  });
  // (a view other than a Uint8Array is a document of its keys: its indices, then any other own keys)
  const extra = new Float32Array([0.5, -1, 3]);
  extra.note = 'x';
  Object.defineProperty(extra, 'later', { enumerable: true, get: () => 'read last' });
  const shrinking = new Int16Array(new ArrayBuffer(8, { maxByteLength: 16 }));
  shrinking.set([1, 2, 3, 4]);
  for (let round = 0; round < 12; round++) {
    same({ f32: new Float32Array(64).fill(1.5 + round), extra, nested: [new Uint16Array([round, 2]), { w: new Float64Array(3).fill(round) }] });
    same({ v: { toBSON: () => new Int32Array([round, -round]) }, dv: new DataView(new ArrayBuffer(2)), shrinking });
    same({ first: { toBSON() { shrinking.buffer.resize(4); return 1; } }, shrinking });
    shrinking.buffer.resize(8);
  }
});

test('array holes, extra array properties, sparse and array-likes', () => {
  // eslint-disable-next-line no-sparse-arrays
  const holes = [1, , 3, , ,];
  const extra = [1, 2];
  extra.foo = 'ignored';
  same({ holes, extra, sparse: Object.assign(new Array(5), { 2: 'x' }) });
  same({ arrayLike: { length: 2, 0: 'a', 1: 'b' } });
  same({ args: (function () { return arguments; })(1, 'b') });
});

test('getters, toBSON on values and objects, null-prototype objects, symbol keys', () => {
  let calls = 0;
  const withGetter = {
    get g() {
      calls++;
      return 'got';
    }
  };
  same({ withGetter });
  assert.strictEqual(calls, 4); // serialize + size, js-bson and bson-rs each read it once
  const nullProto = Object.assign(Object.create(null), { a: 1, b: { c: 2 } });
  same({ nullProto });
  same(nullProto);
  same({ [Symbol('hidden')]: 1, visible: 2 });
  same({ v: { toBSON: () => 'replaced' } });
  same({ v: { toBSON: () => ({ inner: { toBSON: () => 5 } }) } });
  same({ v: { toBSON: () => undefined } });
  same({ toBSON: () => ({ root: 'replaced' }) });
  same({ toBSON: () => 42 }); // serialize: BSONError; size: counts the number's properties
  same({ toBSON: () => null }); // TypeError from Object.keys in both
  same({ a: { toBSON: () => [1, 2] } });
  same({ numbered: { 2: 'b', 1: 'a', x: 'c' } });
  // a value whose toBSON returns an object that itself has toBSON: js-bson calls both
  const log = [];
  const outer = {
    toBSON() {
      log.push('outer');
      return { toBSON: () => (log.push('inner'), { done: true }) };
    }
  };
  const a = js.serialize({ outer });
  const jsLog = log.splice(0);
  const b = rs.serialize({ outer });
  assert.strictEqual(hex(b), hex(a));
  assert.deepStrictEqual(log, jsLog);
});

test('Proxy documents: same bytes and the same trap sequence as js-bson', () => {
  for (const make of [
    log => ({ p: traced({ a: 1, b: [1, 2], c: { d: 'x' } }, log) }),
    log => ({ p: traced([1, 'two', { three: 3 }], log) }),
    log => traced({ root: true, n: null }, log)
  ]) {
    for (const fn of ['serialize', 'calculateObjectSize']) {
      const jsLog = [];
      const rsLog = [];
      const a = outcome(() => js[fn](make(jsLog)));
      const b = outcome(() => rs[fn](make(rsLog)));
      assert.deepStrictEqual(b, a);
      if (fn === 'calculateObjectSize') assertFastSizeTraps(rsLog, jsLog, fn);
      else assert.deepStrictEqual(rsLog, jsLog, fn);
    }
  }
});

test('empty arrays under compiled frames: same bytes and trap sequence as js-bson', () => {
  // (walk.js enterDocument writes an empty array without entering the walk;
  // the key lists recur, so from their 4th use they go through compiled frames)
  const docs = [
    log => ({ e: traced([], log), n: 1 }),
    log => ({ a: { b: traced([], log), c: [] }, d: [[], traced([], log)] }),
    (log, i) => ({ e: traced(i % 2 ? [] : [i, 'x'], log), n: 1 })
  ];
  for (const make of docs) {
    for (let i = 0; i < 12; i++) {
      for (const fn of ['serialize', 'calculateObjectSize']) {
        const jsLog = [];
        const rsLog = [];
        const a = outcome(() => js[fn](make(jsLog, i)));
        const b = outcome(() => rs[fn](make(rsLog, i)));
        assert.deepStrictEqual(b, a, `${fn} ${i}`);
        if (fn === 'calculateObjectSize') assertFastSizeTraps(rsLog, jsLog, fn);
        else assert.deepStrictEqual(rsLog, jsLog, `${fn} ${i}`);
      }
    }
  }
});

test('strings: lone surrogates become EF BF BD like Buffer.write, in keys and values', () => {
  const lone = ['\ud800', '\udc00x', 'a\ud83d', '\ud83d\ude00', 'x\udfff\ud800y'];
  for (const s of lone) {
    same({ [s]: s, long: s.repeat(40), arr: [s] });
  }
  const r = rs.serialize({ s: '\ud800' });
  assert.strictEqual(hex(r).includes('efbfbd'), true);
});

test('two-byte strings (written from their UTF-16 code units): every length and script, lone surrogates anywhere', () => {
  // (that path is taken where the addon has SIMD for it: x86_64 with SSSE3, as on the machines CI runs on)
  const { addon } = require('../lib/native');
  assert.strictEqual(addon.utf16Simd, process.arch === 'x64');
  const fill = (unit, n) => unit.repeat(Math.ceil(n / unit.length)).slice(0, n);
  const units = ['東京都渋谷区の天気', 'Привет, мир ', 'ok 😀🎉 ', 'a\ud800b\udc00日', 'crème 日本 ', 'é日', '日aaaaaaa'];
  for (let n = 1; n <= 140; n++) {
    for (const unit of units) {
      const s = fill(unit, n);
      same({ s, list: [s, s + 'x', 'x' + s], sub: { t: s } });
    }
  }
  // text dense with emoji too (its surrogate pairs in the SIMD blocks)
  if (addon.utf16Simd) {
    const { stringArgOp } = require('../lib/serialize/types');
    const { STRING_UTF16 } = require('../lib/serialize/ops');
    for (const s of [fill('😀', 100), fill('🎉😀', 999), fill('🇫🇷', 3000)]) assert.strictEqual(stringArgOp(s), STRING_UTF16);
  }
  // a lone surrogate, or a split pair, at every position of a CJK and a mixed text
  for (const base of [fill('日本語のテキスト', 70), fill('ab日cdeé', 70), fill('😀', 70)]) {
    for (let at = 0; at < base.length; at++) {
      for (const u of ['\ud83d', '\ude00', 'z']) same({ s: base.slice(0, at) + u + base.slice(at + 1) });
      same({ s: base.slice(0, at) + '😀' + base.slice(at + 2) }); // a whole pair
    }
  }
  // many of them: several native chunks, strings carried from one to the next
  same({ list: Array.from({ length: 20000 }, (_, i) => fill('日本', 50 + (i % 30)) + i) });
  // into a buffer too small, and one just large enough
  const doc = { s: fill('東京都渋谷区の天気', 3000) };
  const size = js.calculateObjectSize(doc);
  for (const room of [size - 1, size - 200, 100, size]) {
    const a = outcome(() => js.serializeWithBufferAndIndex(doc, Buffer.alloc(room)));
    const b = outcome(() => rs.serializeWithBufferAndIndex(doc, Buffer.alloc(room)));
    assert.deepStrictEqual(b, a, `room ${room}`);
  }
});

test('long Latin text with a few characters above U+00FF: found by the prefix search, same bytes and sizes as js-bson; Latin-1 and late two-byte text too', () => {
  // (lib/serialize/predicates.js longTwoByte: such text is two-byte in V8, and
  // is written and measured natively; its two samples alone miss it)
  const { longTwoByte, looksTwoByte, LONG_STRING } = require('../lib/serialize/predicates');
  const fill = (unit, n) => unit.repeat(Math.ceil(n / unit.length)).slice(0, n);
  const french = fill('Le cœur déçu mais l’âme plutôt naïve, rêva au-delà des îles. ', 6000);
  const latin1 = fill('Le coeur déçu mais l\'âme plutôt naïve, rêva au-delà des îles. ', 6000);
  assert.ok(!looksTwoByte(french) && longTwoByte(french));
  assert.ok(!longTwoByte(latin1) && !longTwoByte(french.slice(0, LONG_STRING - 1)));
  const withAt = (at, c) => latin1.slice(0, at) + c + latin1.slice(at + 1);
  // the first 1/32 of the string is searched (187 of 6,000 units), at most 256 units
  assert.ok(longTwoByte(withAt(186, '’')) && !longTwoByte(withAt(187, '’')), 'only the first 1/32 is searched');
  const longer = fill(latin1, 40000);
  assert.ok(longTwoByte(longer.slice(0, 255) + '’' + longer.slice(256)) && !longTwoByte(longer.slice(0, 256) + '’' + longer.slice(257)), 'at most 256 units');
  for (const text of [french, latin1, withAt(5, '\ud83d'), withAt(5, '😀'.slice(0, 1)) + '😀', withAt(7, '\ude00'), fill('a’😀é\ud800', 5000), withAt(2000, '’')]) {
    for (const n of [LONG_STRING - 1, LONG_STRING, LONG_STRING + 1, 5999]) {
      const s = text.slice(0, n);
      same({ s, list: [s, 'x' + s], sub: { t: s } });
    }
  }
  // long Latin-1 text (measured by Buffer.byteLength, written by V8): every
  // Latin-1 character, sequential and sliced strings, Latin-1 text that V8
  // holds as two-byte (a slice of a two-byte string), and documents of 32 KB
  // and more, which are written into a buffer of their own
  let every = '';
  for (let c = 0; c < 256; c++) every += String.fromCharCode(c);
  const flat = (s) => JSON.parse(JSON.stringify(s)); // a sequential string
  for (const text of [fill(every, 70000), flat(fill(every, 70000)), fill('ÿ', 33000), ('’' + latin1).slice(1), fill('a', 5000) + 'é', flat(fill('a', 40000) + 'é')]) {
    assert.ok(!longTwoByte(text));
    same({ text, list: [text, text + 'é'] });
  }
  // two-byte text whose first character above U+00FF is past the search: written and measured as js-bson does
  for (const n of [5000, 40000, 300000]) {
    const text = flat(fill(latin1, n - 1) + '😀’');
    assert.ok(!longTwoByte(text));
    same({ text });
    same({ text, n: 1, more: fill('x', n) });
  }
  // the search runs no user method: String.prototype.slice and RegExp.prototype.exec replaced
  const { slice } = String.prototype;
  const { exec } = RegExp.prototype;
  const calls = [];
  let a, b;
  try {
    String.prototype.slice = function () { calls.push('slice'); return slice.apply(this, arguments); }; // eslint-disable-line no-extend-native
    RegExp.prototype.exec = function () { calls.push('exec'); return exec.apply(this, arguments); }; // eslint-disable-line no-extend-native
    a = [rs.serialize({ french }), rs.calculateObjectSize({ french })];
  } finally {
    String.prototype.slice = slice; // eslint-disable-line no-extend-native
    RegExp.prototype.exec = exec; // eslint-disable-line no-extend-native
  }
  assert.deepStrictEqual(calls, []);
  b = [js.serialize({ french }), js.calculateObjectSize({ french })];
  assert.deepStrictEqual(a, b);
});

test('strings of 64+ units with no character above U+00FF: written from their Latin-1 bytes, same bytes as js-bson', () => {
  const { stringArgOp, LONG_ASCII } = require('../lib/serialize/types');
  const { STRING, STRING_UTF16, STRING_LATIN1 } = require('../lib/serialize/ops');
  const simd = require('../lib/native').addon?.utf16Simd === true;
  const fill = (unit, n) => unit.repeat(Math.ceil(n / unit.length)).slice(0, n);
  const flat = (s) => JSON.parse(JSON.stringify(s)); // a sequential string
  const french = fill("Le coeur déçu mais l'âme plutôt naïve, rêva au-delà des îles. ", 3000);
  // (earlier tests' text may have paused the search: Latin-1 text, found
  // by its retries, resumes it)
  const resume = () => {
    for (let i = 0; i < 40; i++) rs.serialize({ list: Array.from({ length: 20 }, () => french) });
  };
  if (simd) {
    resume();
    assert.strictEqual(stringArgOp(french), STRING_LATIN1);
    assert.strictEqual(stringArgOp(fill('a', 64)), STRING_LATIN1);
    assert.strictEqual(stringArgOp(fill('é', 63)), STRING, 'below 64 units: V8');
    assert.strictEqual(stringArgOp(fill('a', 200) + '’'), STRING_UTF16, 'the search found one above U+00FF');
  }
  // every Latin-1 character at the edges of the 16-byte blocks and at the end
  for (const n of [64, 65, 80, 97, 200, 1000]) {
    for (const c of [0x00, 0x7f, 0x80, 0xbf, 0xc0, 0xe9, 0xff]) {
      for (const at of [0, 15, 16, 31, 32, n - 1]) {
        const s = fill('abcdefghij', n);
        same({ s: s.slice(0, at) + String.fromCharCode(c) + s.slice(at + 1) });
      }
    }
  }
  let every = '';
  for (let c = 0; c < 256; c++) every += String.fromCharCode(c);
  // dense and sparse Latin-1, sequential, sliced and concatenated strings,
  // in arrays of 20,000 (several native chunks: strings carried from one to
  // the next are written from their UTF-8), and 40 KB and 1 MB documents (a
  // buffer of their own, sized near the text's length: too little room to
  // widen in place, V8's UTF-8)
  for (const text of [fill('é', 100), fill('ÿ', 1000) + 'abc', fill(every, 700), flat(fill(every, 700)), french, flat(french), ('x' + french).slice(1), french.slice(0, 1500) + flat(french.slice(1500))]) {
    same({ text, list: [text, text.slice(3)] });
  }
  same({ list: Array.from({ length: 20000 }, (_, i) => french.slice(i % 50, 64 + (i % 300))) });
  same({ text: fill(french, 40000) });
  same({ text: fill('é', 40000) });
  same({ text: fill(french, 1 << 20), n: 1 });
  // into a buffer too small, just large enough, and with room to spare
  const doc = { s: french, t: fill(every, 300) };
  const size = js.calculateObjectSize(doc);
  for (const room of [size - 1, size, size + 15, size + 16, size + 5000]) {
    const a = outcome(() => js.serializeWithBufferAndIndex(doc, Buffer.alloc(room)));
    const b = outcome(() => rs.serializeWithBufferAndIndex(doc, Buffer.alloc(room)));
    assert.deepStrictEqual(b, a, `room ${room}`);
  }
  // The search pauses (one string in 16 searched): after four more searches
  // that find a character above U+00FF (mostly-ASCII two-byte text, one
  // such character at its end) than ones that do not, and after 32 strings
  // in a row written from their Latin-1 bytes had none above U+007F (ASCII)
  const late = fill('plain text ', 300) + '✓';
  const ascii = fill('plain ASCII text ', 100);
  if (simd) {
    resume();
    const ops = Array.from({ length: 40 }, () => stringArgOp(late));
    const searched = ops.filter((op) => op === STRING_UTF16).length;
    assert.ok(ops.slice(0, 4).every((op) => op === STRING_UTF16), 'the first four are searched');
    assert.ok(searched >= 5 && searched <= 7, `then one in 16: ${searched} of 40`);
    resume();
    assert.strictEqual(stringArgOp(french), STRING_LATIN1, 'searching resumed');
    rs.serialize({ list: Array.from({ length: 40 }, () => ascii) });
    const afterAscii = Array.from({ length: 32 }, () => stringArgOp(ascii));
    const latin1 = afterAscii.filter((op) => op === STRING_LATIN1).length;
    assert.ok(latin1 >= 1 && latin1 <= 3 && afterAscii.every((op) => op === STRING_LATIN1 || op === STRING), `after ASCII, one in 16: ${latin1} of 32`);
    // but not for strings of LONG_ASCII units and more
    const longAscii = fill('plain ASCII text ', LONG_ASCII);
    assert.ok([LONG_ASCII, LONG_ASCII + 1, 1 << 20].every((n) => stringArgOp(fill(longAscii, n)) === STRING_LATIN1), 'long ASCII still searched');
    const below = Array.from({ length: 16 }, () => stringArgOp(longAscii.slice(1)));
    assert.ok(below.filter((op) => op === STRING).length >= 15, 'one unit shorter: paused');
    same({ text: longAscii, french: fill(french, LONG_ASCII), list: [ascii, longAscii, fill(longAscii, 40000)] });
    resume();
    assert.strictEqual(stringArgOp(french), STRING_LATIN1, 'searching resumed');
  }
  same({ list: Array.from({ length: 100 }, (_, i) => (i % 3 ? late : french)) });
});

test('keys: non-ASCII, long (sent inline), many distinct keys past the cache bound', () => {
  same({ 'ключ': 1, 'clé': 'v', '✓': true, ['k'.repeat(200)]: 1, ['é'.repeat(70)]: 2 });
  const many = {};
  for (let i = 0; i < 70000; i++) many['distinct_key_' + i] = i;
  same(many);
  // the cache is full now: new keys still work, with their checks
  same({ brand_new_key_after_bound: 1, 'another.new': 2 }, { checkKeys: true });
  same({ '$fresh': 1 }, { checkKeys: true });
  same({ 'fresh\u0000nul': 1 });
});

test('every BSON class and its edge cases', () => {
  const oid = new ObjectId('65494a394033a116319ce2da');
  same({
    oids: [oid, new ObjectId(), ObjectId.createFromTime(0)],
    decs: [Decimal128.fromString('0'), Decimal128.fromString('-1E-6176'), Decimal128.fromString('NaN')],
    longs: [Long.MAX_VALUE, Long.MIN_VALUE, Long.ZERO, Long.fromNumber(-1, true)],
    ts: [new Timestamp({ t: 0, i: 0 }), new Timestamp({ t: 0xffffffff, i: 0xffffffff })],
    doubles: [new Double(1), new Double(NaN), new Double(-0), new Double(Infinity)],
    ints: [new Int32(0), new Int32(-2147483648), new Int32(2147483647)],
    codes: [new Code(''), new Code('x', {}), new Code('é', { nested: { deep: [1] } }), new Code('s', null)],
    syms: [new BSONSymbol(''), new BSONSymbol('é✓')],
    keys: [new MinKey(), new MaxKey()],
    refs: [
      new DBRef('c', oid),
      new DBRef('c', oid, 'db'),
      new DBRef('c', oid, undefined, { a: 1, $db: 'inFields' }),
      new DBRef('c', 5, 'db', { nested: { x: [1] } })
    ]
  });
});

test('Code with scope: Map scope, array scope, toBSON scope, circular scope', () => {
  same({ c: new Code('f', new Map([['a', 1]])) });
  same({ c: new Code('f', [1, undefined, 'x']) });
  same({ c: new Code('f', { toBSON: () => ({ replaced: true }) }) });
  const scope = { a: 1 };
  scope.self = { c: new Code('g', scope) };
  same({ c: new Code('f', scope) });
  const root = {};
  root.c = new Code('f', root);
  same(root);
});

test('Binary: subtypes 0, 2, 4, 9 and a partly filled buffer', () => {
  const partial = new Binary();
  partial.put(1);
  partial.put(2);
  same({
    b0: new Binary(Buffer.from([1, 2, 3])),
    b2: new Binary(Buffer.from('old'), 2),
    b2empty: new Binary(Buffer.alloc(0), 2),
    b4: new Binary(Buffer.alloc(16, 1), 4),
    b128: new Binary(Buffer.from('user'), 128),
    partial,
    large: new Binary(Buffer.alloc(70000, 3), 0)
  });
});

test('Binary vectors (subtype 9): valid ones and every validation error', () => {
  same({ v: Binary.fromInt8Array(new Int8Array([1, -2, 3])) });
  same({ v: Binary.fromFloat32Array(new Float32Array([1.5, -2])) });
  same({ v: Binary.fromPackedBits(new Uint8Array([1, 0, 1, 1, 0, 0, 0, 0, 1])) });
  same({ v: new Binary(Buffer.from([0x03, 0]), 9) });
  const bad = [
    [0x03, 1, 5], // int8 with padding
    [0x27, 1, 0, 0, 0, 0], // float32 with padding
    [0x27, 0, 1, 2, 3], // float32 not a multiple of 4
    [0x10, 3], // empty packed bits with padding
    [0x10, 8, 0xff] // padding > 7
  ];
  for (const bytes of bad) same({ v: new Binary(Buffer.from(bytes), 9) });
});

test('errors: root checks, circular structures, unknown _bsontype, version mismatch', () => {
  const roots = [
    [1],
    [],
    5,
    'str',
    true,
    Symbol('s'),
    () => {},
    new Date(),
    /x/,
    Buffer.alloc(1),
    new Uint8Array(2),
    new ArrayBuffer(2),
    new ObjectId(),
    new Long(1),
    { _bsontype: 'anything' },
    null,
    undefined
  ];
  for (const root of roots) sameSerialize(root);
  for (const root of roots) if (root != null) sameSize(root);
  const circular = { a: 1 };
  circular.self = circular;
  same(circular);
  const viaArray = { list: [] };
  viaArray.list.push({ back: viaArray });
  same(viaArray);
  const shared = { x: 1 };
  same({ a: shared, b: shared, c: [shared, shared] }); // repeated, not circular
  same({ u: { _bsontype: 'Unknown', [Symbol.for('@@mdb.bson.version')]: 7 } });
  same({ u: { _bsontype: 'ObjectId', [Symbol.for('@@mdb.bson.version')]: 7 } }); // tag symbol missing
  same({ u: { _bsontype: 'ObjectId' } }); // version mismatch
  same({ u: { _bsontype: 'ObjectId', [Symbol.for('@@mdb.bson.version')]: 6 } });
  same({ u: { _bsontype: 5 } });
  same({ u: { _bsontype: null } });
});

test('deep circular structure past the scanned depth', () => {
  const root = {};
  let cur = root;
  for (let i = 0; i < 100; i++) cur = cur.next = {};
  cur.loop = root.next.next; // an ancestor 98 levels up
  same(root);
  cur.loop = { fine: true };
  same(root);
});

test('circular structures and repeated objects past the scanned depth, in branch after branch', () => {
  // (past serialize/path.js's SCAN_DEPTH the path is looked up in a Set that
  // also holds sources of frames closed since: a hit there is a cycle only if
  // the path has it)
  let reads = 0;
  const chain = (n, tag) => {
    const levels = [{ n: 0 }];
    for (let i = 1; i < n; i++) levels.push((levels[i - 1].c = i === 6 ? { get n() { reads++; return tag; } } : { n: i }));
    levels[n - 1].c = { leaf: tag };
    return levels;
  };
  const outcomes = (doc) => {
    let a;
    for (const fn of ['serialize', 'calculateObjectSize']) {
      reads = 0;
      a = outcome(() => js[fn](doc));
      const jsReads = reads;
      reads = 0;
      const b = outcome(() => rs[fn](doc));
      assert.deepStrictEqual(b, a, fn);
      assert.strictEqual(reads, jsReads, fn);
    }
    return a;
  };
  for (let round = 0; round < 8; round++) {
    const a = chain(150, 'a');
    const b = chain(150, 'b');
    // (serialize walks a branch after the one before it, calculateObjectSize before)
    const doc = round % 2 ? { a: a[0], b: b[0] } : { b: b[0], a: a[0] };
    outcomes(doc);
    b[140].c = a[120]; // in the Set since branch a: not on b's path
    assert.ok(outcomes(doc).ok);
    b[140].c = { x: a[3], y: [a[130]] };
    assert.ok(outcomes(doc).ok);
    b[140].c = b[5]; // an ancestor below the scanned depth: b[6] read once in both, then the error
    assert.match(outcomes(doc).message, /circular/);
    b[140].c = b[120];
    assert.match(outcomes(doc).message, /circular/);
    b[140].c = [1, { z: b[110] }];
    assert.match(outcomes(doc).message, /circular/);
  }
});

test('a 20,000-level deep document', () => {
  let doc = { leaf: 'end' };
  for (let i = 0; i < 20000; i++) doc = i % 2 ? { level: i, child: doc } : { arr: [doc] };
  same(doc);
});

test('arrays past 10,000 and 1,000,000 elements: each kind of the native array runs at every index width', () => {
  // (the runs take index digits from a table below 10,000 and count them out
  // up to 1,000,000; past that run_inner writes the elements)
  const oid = new ObjectId('65a1b2c3d4e5f60718293a4b');
  const kinds = [
    (i) => i,
    (i) => i + 0.5,
    (i) => 'v' + (i % 97),
    (i) => new Date(i),
    (i) => Long.fromNumber(i * 3),
    (i) => new Timestamp({ t: i, i: 1 }),
    () => oid,
    () => null,
    (i) => new Binary(Buffer.from([i & 255, 1, 2]))
  ];
  const n = 1_000_050;
  // blocks of 16: one kind (a long run) or every kind in turn
  const values = Array.from({ length: n }, (_, i) => {
    const block = i >> 4;
    return kinds[(block & 1 ? block : i) % kinds.length](i);
  });
  const doc = { values, after: 1 };
  assert.ok(Buffer.from(rs.serialize(doc)).equals(js.serialize(doc)));
  assert.strictEqual(rs.calculateObjectSize(doc), js.calculateObjectSize(doc));
  // sized again and again: then by the compiled sizer of its array too
  const small = { flags: Array.from({ length: 12_000 }, (_, i) => (i % 3 === 0 ? null : i % 3 === 1)) };
  const want = js.calculateObjectSize(small);
  for (let i = 0; i < 80; i++) assert.strictEqual(rs.calculateObjectSize(small), want, `call ${i}`);
});

test('a document larger than 17 MiB is serialized whole and round-trips through js-bson', () => {
  const big = 'a'.repeat(18 * 1024 * 1024) + 'é';
  const bytes = rs.serialize({ big, after: 1 });
  assert.strictEqual(bytes.length, 4 + (1 + 4 + 4 + Buffer.byteLength(big) + 1) + (1 + 6 + 4) + 1);
  const back = js.deserialize(bytes);
  assert.strictEqual(back.big, big);
  assert.strictEqual(back.after, 1);
  assert.strictEqual(rs.calculateObjectSize({ big, after: 1 }), bytes.length);
  // and the next small document is still right
  same({ small: true });
});

test('many string arguments (several native chunks) incl. two-argument regexps at chunk edges', () => {
  const strings = Array.from({ length: 20000 }, (_, i) => 'é' + i);
  same({ strings });
  // (non-ASCII sources: sent as string args, not on the bytes tape)
  const regexps = Array.from({ length: 9000 }, (_, i) => new RegExp('p' + i + 'é', 'i'));
  same({ a: 'é', regexps });
  const mixed = {};
  for (let i = 0; i < 9000; i++) mixed['k' + i + 'é'.repeat(40)] = i % 3 ? 'v' + i + '✓' : new BSONRegExp('x' + i, 'm');
  same(mixed);
});

test('a Binary over a Uint8Array subclass: its byteLength getter is not run (js-bson reads none), copied or by reference', () => {
  let reads = 0;
  class Counted extends Uint8Array {
    get byteLength() {
      reads++;
      return 1; // (wrong on purpose: the data's real length is used)
    }
  }
  for (const n of [16, 48, 49, 100, 9000]) {
    const bin = new Binary(Buffer.alloc(1), 0);
    bin.buffer = new Counted(n).fill(n & 0xff);
    bin.position = n;
    same({ bin, list: [bin, bin] });
  }
  assert.strictEqual(reads, 0);
});

test('a Binary whose position runs past its data: zeros up to 16 bytes, as js-bson copies them one by one', () => {
  // (up to 16 bytes the walk copies without reading the data's length)
  for (let size = 1; size <= 16; size++) {
    for (const have of [0, 1, size >> 1, size - 1]) {
      const bin = new Binary(Buffer.alloc(have, 0x5a), 0x80);
      bin.position = size;
      const uuid = new Binary(new Uint8Array(have).fill(7), 4);
      uuid.position = size;
      same({ bin, list: [uuid, bin, uuid] });
    }
  }
});

test('binaries of 15 to 50 bytes: whole arrays, parts of longer data, views at an offset, subtype 2, Buffers', () => {
  const data = (n, seed) => Uint8Array.from({ length: n }, (_, i) => (i * 29 + seed) & 255);
  for (let size = 15; size <= 50; size++) {
    const whole = new Binary(data(size, size), 0x80);
    const part = new Binary(data(size + 9, 3), 0);
    part.position = size; // (the 9 bytes past it are not written)
    const view = new Binary(data(size + 20, 7).subarray(11, 11 + size), 4);
    const old = new Binary(data(size, 1), 2);
    const buf = Buffer.from(data(size, 5));
    same({ whole, part, view, old, buf, list: [whole, part, view, old, buf, whole] });
  }
  same({ hashes: Array.from({ length: 3000 }, (_, i) => new Binary(data(32, i))) });
  // 40 bytes of 1 MiB: only those are copied (the whole data would not fit the tape's room)
  const head = new Binary(data(1 << 20, 9), 0);
  head.position = 40;
  same({ head, list: [head, head] });
});

test('binary arguments across native chunks, and Uint8Array look-alikes', () => {
  const bins = Array.from({ length: 12000 }, (_, i) => (i % 2 ? Buffer.from([i & 255, 1, 2]) : 'é' + i));
  same({ bins });
  const proxied = new Proxy(new Uint8Array([1, 2, 3]), {});
  sameSerialize({ proxied });
  const weird = new Binary(Buffer.from([1, 2, 3, 4]));
  weird.position = 2; // fewer bytes than the buffer holds
  same({ weird });
});

test('many empty binaries and Uint8Arrays in one document', () => {
  // (an empty one used to double the bytes tape: 20 of them threw a RangeError)
  const { Binary } = js;
  const empties = () => [new Binary(Buffer.alloc(0)), new Binary(Buffer.alloc(0), 2), Buffer.alloc(0), new Uint8Array(0)];
  const docs = [
    { v: Array.from({ length: 1000 }, (_, i) => empties()[i % 4]) },
    Object.fromEntries(Array.from({ length: 400 }, (_, i) => ['k' + i, empties()[i % 4]])),
    { v: Array.from({ length: 300 }, (_, i) => ({ a: empties()[i % 4], b: i })) }
  ];
  for (const doc of docs) {
    assert.deepStrictEqual(Buffer.from(rs.serialize(doc)), js.serialize(doc));
    assert.strictEqual(rs.calculateObjectSize(doc), js.calculateObjectSize(doc));
  }
});

test('tape growth inside a lane run: every tape, every kind the lanes write', () => {
  // The lanes check the tapes' room once per several elements (Tape#room).
  // Each document in a process of its own, so that the tapes start at their
  // first size and the document fills one of them (ops, number slots, bytes) mid-run.
  const script = `
    const { js, rs } = require('./test/support/oracle');
    const { ObjectId, Long, Timestamp, Binary, UUID, Decimal128 } = js;
    const n = 40000;
    const oid = (i) => new ObjectId(i.toString(16).padStart(24, '0'));
    const array = (make) => ({ run: Array.from({ length: n }, (_, i) => make(i)) });
    const make = {
      // the document lane: numbers and strings under many keys
      wide: () => Object.fromEntries(Array.from({ length: n }, (_, i) => ['k' + i, i % 2 ? 'v'.repeat(i % 48) : i * 1.5])),
      // the array lane
      long: () => array((i) => 'L'.repeat(49) + i), // an op (and a string arg) each
      oids: () => array(oid), // 2 number slots each
      short: () => array((i) => 's'.repeat(i % 49) + i), // up to 53 bytes each
      longs: () => array((i) => Long.fromNumber(i * 1e6)),
      dates: () => array((i) => new Date(i * 1000)),
      mixed: () => array((i) => [i, 'x'.repeat(i % 48), oid(i), new Date(i), Timestamp.fromNumber(i), i + 0.5][i % 6]),
      // tagged values the lane writes through writeTagged (HAND_ROOM): binaries
      // of more bytes than an element's room, then 20 strings of 48 bytes (which
      // ran past the bytes tape when the lane went on after a binary)
      binaries: () => array((i) => (i % 21 ? 's'.repeat(48) : new Binary(Buffer.alloc(1000 + ((i * 37) % 3000), i & 0xff), i % 5))),
      tagged: () => array((i) => [new UUID(i.toString(16).padStart(32, '0')), Decimal128.fromString(i + '.5'), 'y'.repeat(i % 49)][i % 3]),
      // binaries of up to 49 bytes (the lane goes on after those within an
      // element's room), old byte arrays among them, between 48-byte strings
      smallBinaries: () => array((i) => (i % 3 ? 's'.repeat(48) : new Binary(Buffer.alloc((i >> 2) % 50, i & 0xff), i % 2 ? 2 : 4))),
      // untagged objects: RegExps of 48 bytes on the bytes tape, Uint8Arrays past an element's room
      regexps: () => array((i) => (i % 21 === 20 ? new Uint8Array(1000 + ((i * 37) % 3000)) : new RegExp('r'.repeat(45 + (i % 2)), i % 2 ? 'im' : 'gim'))),
      // RegExps of 49 to 60 bytes: string args, not on the bytes tape
      longRegexps: () => array((i) => new RegExp('r'.repeat(46 + (i % 12)), 'gim')),
      // the document lane at its byte bound: an inline key of 64 bytes and a
      // 48-byte string, then a cached key and a 48-byte string, in turn
      inlineKeys: () => {
        const keys = require('./lib/serialize/keys');
        // fill the native key table (cached keys c0.., then fillers), so
        // that every new key is sent inline; each 256-key document twice, so
        // that keys are defined even in a cold window (defined where they recur)
        const names = Array.from({ length: keys.KEY_CACHE_MAX }, (_, i) => (i < n / 2 ? 'c' : 'f') + i);
        for (let i = 0; i < names.length; i += 256) {
          const d = Object.fromEntries(names.slice(i, i + 256).map((k) => [k, 1]));
          rs.serialize(d);
          rs.serialize(d);
        }
        if (keys.keyCacheState('c0').size !== keys.KEY_CACHE_MAX) throw new Error('key table not full');
        // and a warm window, in which a cached key is looked up, not sent
        // inline (a window of 8192 documents ends at the next fresh key)
        const known = { c0: 1, c1: 'x', c2: 2.5 };
        for (let i = 0; i < 8192; i++) rs.serialize(known);
        rs.serialize({ fresh: 1 });
        if (keys.keyCacheState('c0').cold) throw new Error('window still cold');
        const s = 'v'.repeat(48);
        return Object.fromEntries(Array.from({ length: n }, (_, i) => [i % 2 ? 'c' + (i >> 1) : ('i' + i).padEnd(64, 'z'), s]));
      }
    };
    const doc = make[process.argv[1]]();
    const same = [0, 1].map(() => Buffer.from(rs.serialize(doc)).equals(js.serialize(doc)));
    console.log(JSON.stringify(same));
  `;
  for (const name of ['wide', 'long', 'oids', 'short', 'longs', 'dates', 'mixed', 'binaries', 'tagged', 'smallBinaries', 'regexps', 'longRegexps', 'inlineKeys']) {
    const r = spawnSync(process.execPath, ['-e', script, name], { cwd: path.join(__dirname, '..'), encoding: 'utf8', timeout: 120000 });
    assert.strictEqual(r.status, 0, r.stderr);
    assert.deepStrictEqual(JSON.parse(r.stdout), [true, true], name);
  }
});

test('a toBSON defined on Number / String / Boolean.prototype after the lanes and sizers are optimised', () => {
  // The toBSON reads of primitives (serialize/walk.js's arrayLane) are folded away by TurboFan
  // while the prototypes have none; defining one later must be seen at once,
  // by serialize and by calculateObjectSize (walk and compiled sizers).
  const script = `
    const { js, rs } = require('./test/support/oracle');
    const docs = [
      { a: [1, 2.5, 'x', true, 3], n: 4, s: 'y', b: false },
      { v: Array.from({ length: 64 }, (_, i) => (i % 4 === 0 ? 'k' + i : i % 4 === 1 ? i * 1.5 : i % 4 === 2 ? i : i % 8 === 3)) }
    ];
    const run = () => docs.map((d) => [Buffer.from(rs.serialize(d)).toString('hex'), rs.calculateObjectSize(d)]);
    const oracle = () => docs.map((d) => [Buffer.from(js.serialize(d)).toString('hex'), js.calculateObjectSize(d)]);
    for (let i = 0; i < 20000; i++) run();
    const out = [JSON.stringify(run()) === JSON.stringify(oracle())];
    for (const [Proto, f] of [[Number, function () { return 'n' + this; }], [String, function () { return this.length; }], [Boolean, function () { return this ? 1 : 0; }]]) {
      Proto.prototype.toBSON = f;
      const got = run();
      out.push(JSON.stringify(got) === JSON.stringify(oracle()) && JSON.stringify(got) !== JSON.stringify((delete Proto.prototype.toBSON, run())));
    }
    console.log(JSON.stringify(out));
  `;
  const r = spawnSync(process.execPath, ['-e', script], { cwd: path.join(__dirname, '..'), encoding: 'utf8', timeout: 120000 });
  assert.strictEqual(r.status, 0, r.stderr);
  assert.deepStrictEqual(JSON.parse(r.stdout), [true, true, true, true]);
});

test('runs of numbers in arrays: toBSON lookups, proxies, tape growth inside a run', () => {
  const doc = { a: [1, 2.5, -0, NaN, 2 ** 31, 'x', 3, new Int32(4), 5], long: Array.from({ length: 70000 }, (_, i) => (i % 3 ? i * 0.5 : i)) };
  same(doc);
  let reads = 0;
  Object.defineProperty(Number.prototype, 'toBSON', {
    configurable: true,
    get() {
      reads++;
      return undefined;
    }
  });
  try {
    const small = { a: [1, 2, 3.5, 'x', 4], n: 6 };
    reads = 0;
    const a = hex(js.serialize(small));
    const jsReads = reads;
    reads = 0;
    const b = hex(rs.serialize(small));
    assert.strictEqual(b, a);
    assert.strictEqual(reads, jsReads);
    reads = 0;
    const c = js.calculateObjectSize(small);
    const jsSizeReads = reads;
    reads = 0;
    assert.strictEqual(rs.calculateObjectSize(small), c);
    assert.strictEqual(reads, jsSizeReads);
  } finally {
    delete Number.prototype.toBSON;
  }
  Number.prototype.toBSON = function () {
    return 'n' + this;
  };
  try {
    same({ a: [1, 2, 3.5, 'x', 4], n: 6 });
  } finally {
    delete Number.prototype.toBSON;
  }
  String.prototype.toBSON = function () {
    return this.length;
  };
  try {
    same({ a: ['ab', 1, 'é', 'y'.repeat(60), 2], s: 'top' });
  } finally {
    delete String.prototype.toBSON;
  }
  same({ mixed: ['a', 1, 'é', 'y'.repeat(60), 2.5, '', 'b'.repeat(48), 'c'.repeat(49), null, 'd'] });
  const log = [];
  const proxied = new Proxy([1, 2, 3, 'four', 5, 6], {
    get(t, k, r) {
      log.push(String(k));
      return Reflect.get(t, k, r);
    }
  });
  js.serialize({ p: proxied });
  const jsLog = log.splice(0);
  rs.serialize({ p: proxied });
  assert.deepStrictEqual(log, jsLog);
});

test('runs of booleans and nulls in arrays: toBSON reads, holes and undefined, tape growth, indices past 10,000', () => {
  const flags = Array.from({ length: 70000 }, (_, i) => (i % 7 === 0 ? null : i % 3 === 0));
  const holey = [true, , false, undefined, null, 1, 'x', null, true]; // eslint-disable-line no-sparse-arrays
  same({ flags, holey, mixed: [null, true, new Date(0), false, null, 2.5, true, { a: null }, [false, null]] });
  same({ flags: [true, false, null] }, { ignoreUndefined: false });
  let reads = 0;
  Object.defineProperty(Boolean.prototype, 'toBSON', {
    configurable: true,
    get() {
      reads++;
      return undefined;
    }
  });
  try {
    const small = { a: [true, null, false, 1, null, true], b: true };
    reads = 0;
    const a = hex(js.serialize(small));
    const jsReads = reads;
    reads = 0;
    assert.strictEqual(hex(rs.serialize(small)), a);
    assert.strictEqual(reads, jsReads);
    assert.strictEqual(jsReads, 4);
  } finally {
    delete Boolean.prototype.toBSON;
  }
  Boolean.prototype.toBSON = function () {
    return this ? 'yes' : 'no';
  };
  try {
    same({ a: [true, null, false, 1, true], b: false });
  } finally {
    delete Boolean.prototype.toBSON;
  }
});

test('a Decimal128 whose bytes is a getter: read once per byte, as js-bson, after the writer is optimised', () => {
  const plain = { d: js.Decimal128.fromString('1.5'), a: [js.Decimal128.fromString('-2.25'), js.Decimal128.fromString('3')] };
  for (let i = 0; i < 20000; i++) rs.serialize(plain);
  same(plain);
  const shifting = (log) => {
    const d = js.Decimal128.fromString('7.125');
    const real = d.bytes;
    let reads = 0;
    Object.defineProperty(d, 'bytes', {
      get() {
        log.push(reads);
        // each read returns other bytes, so a read made once and kept shows in the output
        return reads++ % 2 ? real : Buffer.alloc(16, reads);
      }
    });
    return { d, a: [d] };
  };
  const jsLog = [];
  const rsLog = [];
  const a = hex(js.serialize(shifting(jsLog)));
  assert.strictEqual(hex(rs.serialize(shifting(rsLog))), a);
  assert.deepStrictEqual(rsLog, jsLog);
  assert.strictEqual(jsLog.length, 32);
});

test('objects in arrays (lane hand-over): same trap sequence as js-bson for proxied elements', () => {
  function traced(target, log, name, unbound) {
    return new Proxy(target, {
      get(t, k, r) {
        log.push([name, 'get', typeof k === 'symbol' ? k.toString() : k]);
        if (unbound) return Reflect.get(t, k, r);
        const v = Reflect.get(t, k, t);
        return typeof v === 'function' ? v.bind(t) : v;
      },
      has(t, k) {
        log.push([name, 'has', typeof k === 'symbol' ? k.toString() : k]);
        return Reflect.has(t, k);
      },
      getPrototypeOf(t) {
        log.push([name, 'getPrototypeOf']);
        return Reflect.getPrototypeOf(t);
      },
      ownKeys(t) {
        log.push([name, 'ownKeys']);
        return Reflect.ownKeys(t);
      },
      getOwnPropertyDescriptor(t, k) {
        log.push([name, 'gopd', typeof k === 'symbol' ? k.toString() : k]);
        return Reflect.getOwnPropertyDescriptor(t, k);
      }
    });
  }
  const targets = () => [
    { plain: 1 },
    new Date(5),
    new ObjectId('65494a394033a116319ce2da'),
    new Long(7),
    new Int32(3),
    /re/i,
    Buffer.from('ab'),
    [1, 2],
    new Map([['m', 1]]),
    new Code('c'),
    new Code('cs', { s: 1, n: { d: [2] } }),
    new Code('ca', [1, { x: 2 }]),
    new MinKey(),
    new MaxKey(),
    new Binary(Buffer.from('bin'), 2),
    Binary.fromInt8Array(new Int8Array([1, 2])),
    Decimal128.fromString('1.5'),
    new Timestamp({ t: 1, i: 2 }),
    new Double(1.5),
    new BSONRegExp('p', 'mi'),
    new BSONSymbol('s'),
    new DBRef('c', new ObjectId('65494a394033a116319ce2da'), 'db')
  ];
  for (const unbound of [false, true]) {
    for (const fn of ['serialize', 'calculateObjectSize']) {
      for (let t = 0; t < targets().length; t++) {
        const jsLog = [];
        const rsLog = [];
        const make = log => ({
          // (el: the lane's first object element; after: one after a Date the lane wrote, read at other sites)
          a: [1, traced(targets()[t], log, 'el', unbound), new ObjectId('65494a394033a116319ce2da'), new Date(9), traced(targets()[t], log, 'after', unbound), 'x'],
          b: traced(targets()[t], log, 'field', unbound)
        });
        const a = outcome(() => js[fn](make(jsLog)));
        const b = outcome(() => rs[fn](make(rsLog)));
        assert.deepStrictEqual(b, a, `${fn} ${t} ${unbound}`);
        if (fn === 'calculateObjectSize') assertFastSizeTraps(rsLog, jsLog, `${fn} ${t} ${unbound}`);
        else assert.deepStrictEqual(rsLog, jsLog, `${fn} ${t} ${unbound}`);
      }
    }
  }
  // plain runs of mixed lane values
  same({ a: [new ObjectId(), new Date(1), 1, 'x', new Date(NaN), new ObjectId(), { o: 1 }, [new Date(2)], new Long(5), null, true] });
  const sub = new (class extends ObjectId {
    serializeInto(buf, i) {
      return super.serializeInto(buf, i);
    }
  })('65494a394033a116319ce2da');
  same({ a: [sub, sub], b: sub });
  same({ a: [{ _bsontype: 'ObjectId' }] });
  same({ a: [{ _bsontype: 'Foo', [Symbol.for('@@mdb.bson.version')]: 7 }] });
  // Code values in the lane: with and without a scope, a scope holding arrays of Codes, a circular scope
  const scope = { v: 1 };
  same({ a: Array.from({ length: 300 }, (_, i) => (i % 5 ? new Code('c' + i) : new Code('s' + i, i % 2 ? scope : { i, list: [new Code('in'), new Code('in2', { z: [i] })] }))) });
  same({ a: [new Code('x', null), new Code('y', 'not an object'), new Code('z', {}), 7] });
  const circular = { c: null };
  circular.c = [new Code('loop', circular)];
  same(circular);
  const viaGetter = { get k() { return [new Code('again', viaGetter)]; } }; // (a new array each time, the same scope)
  same(viaGetter);
});

test('sizes of long strings that are not Latin-1 (measured natively) and of those that look Latin-1', () => {
  const fill = (unit, n) => unit.repeat(Math.ceil(n / unit.length)).slice(0, n);
  const texts = [];
  for (const n of [4095, 4096, 5000, 70000, 1 << 20]) {
    for (const unit of ['Привет, мир ', '東京都渋谷区', 'ok 😀🎉 ', 'é', 'a\ud800b\udc00\udbff\udfff日', '\ud83d\ude00']) texts.push(fill(unit, n));
    // a lone surrogate at each sampled position and at the ends; an astral pair split by a sample
    const base = fill('日本', n).split('');
    for (const at of [0, n >>> 2, n >>> 1, n - 1]) {
      const t = base.slice();
      t[at] = '\udc01';
      texts.push(t.join(''));
    }
    // two-byte text whose sampled characters are ASCII: Buffer.byteLength's path
    const t = base.slice();
    t[n >>> 1] = 'a';
    t[n >>> 2] = 'b';
    texts.push(t.join(''));
    texts.push(fill('a', n - 1) + '日');
  }
  for (const text of texts) {
    const label = `${text.length} units from ${JSON.stringify(text.slice(0, 4))}`;
    for (let i = 0; i < 6; i++) {
      // (repeated: the key list is compiled after a few documents, shaped/size.js)
      const doc = { s: text, code: new Code(text), sym: new BSONSymbol(text), re: new BSONRegExp(text, 'i'), list: [text] };
      assert.strictEqual(rs.calculateObjectSize(doc), js.calculateObjectSize(doc), label);
    }
    assert.strictEqual(rs.calculateObjectSize({ s: text }), Buffer.from(text).length + 13, label); // 4 + 1 + 2 + 4 + bytes + 1 + 1
  }
});

test('output scratch growth and reuse', () => {
  for (const n of [60000, 70000, 1 << 20, 100, 3 << 20, 10]) same({ s: 'z'.repeat(n), n });
});

test('long strings of every script in changing order (the learned size estimate): bytes, own buffers', () => {
  const fill = (unit, n) => unit.repeat(Math.ceil(n / unit.length)).slice(0, n);
  const kinds = {
    ascii: (n) => fill('lorem ipsum dolor ', n),
    latin1: (n) => fill('crème brûlée à la café ', n),
    cjk: (n) => fill('東京都渋谷区の天気', n),
    emoji: (n) => fill('ok 😀🎉 ', n),
    lone: (n) => fill('a\ud800b\udc00', n),
    mixed: (n) => fill('abc', n >> 1) + fill('Привет', n >> 1)
  };
  let seed = 7;
  const rand = (k) => (seed = (seed * 1103515245 + 12345) % 2147483648) % k;
  const names = Object.keys(kinds);
  const kept = [];
  for (let round = 0; round < 60; round++) {
    const n = [8000, 30000, 40000, 120000, 300000][rand(5)];
    const doc = { t: kinds[names[rand(names.length)]](n), i: round };
    if (rand(3) === 0) doc.u = kinds[names[rand(names.length)]](n >> 2);
    const a = js.serialize(doc);
    const b = rs.serialize(doc);
    assert.ok(b.equals(a), `round ${round}`);
    // a view of a buffer at most 1/8 larger than the document (README), and nobody else's
    assert.ok(b.buffer.byteLength - b.byteLength <= Math.max(b.byteLength >> 3, 120 * 1024), `round ${round}`);
    kept.push([b, Buffer.from(a)]);
    const into = Buffer.alloc(a.length + 5, 0xcc);
    assert.strictEqual(rs.serializeWithBufferAndIndex(doc, into, { index: 5 }), a.length + 4);
    assert.ok(into.subarray(5).equals(a), `round ${round} (into a buffer)`);
  }
  for (const [b, a] of kept) assert.ok(b.equals(a), 'an earlier result was overwritten');
});

test('serializeWithBufferAndIndex: same bytes, index and return value, same error when too small', () => {
  const doc = allTypesDoc();
  for (const index of [undefined, 0, 7]) {
    const a = Buffer.alloc(2000, 0xcc);
    const b = Buffer.alloc(2000, 0xcc);
    const ra = js.serializeWithBufferAndIndex(doc, a, { index });
    const rb = rs.serializeWithBufferAndIndex(doc, b, { index });
    assert.strictEqual(rb, ra);
    assert.ok(b.equals(a));
  }
  for (const [doc2, size] of [[{ a: 'x'.repeat(100) }, 50], [null, 3], [{}, 4]]) {
    const a = outcome(() => js.serializeWithBufferAndIndex(doc2, Buffer.alloc(size)));
    const b = outcome(() => rs.serializeWithBufferAndIndex(doc2, Buffer.alloc(size)));
    assert.deepStrictEqual(b, a);
  }
  const a = outcome(() => js.serializeWithBufferAndIndex({ a: 1 }, Buffer.alloc(20), { index: 15 }));
  const b = outcome(() => rs.serializeWithBufferAndIndex({ a: 1 }, Buffer.alloc(20), { index: 15 }));
  assert.deepStrictEqual(b, a);
  assert.strictEqual(a.ok, false);
  const c = outcome(() => js.serializeWithBufferAndIndex([1], Buffer.alloc(20)));
  const d = outcome(() => rs.serializeWithBufferAndIndex([1], Buffer.alloc(20)));
  assert.deepStrictEqual(d, c);
});

test('serializeWithBufferAndIndex of a document mostly of large binaries writes it straight into finalBuffer: nothing past it touched, never kept, js-bson\'s bytes and errors', () => {
  // (counted first, then written into finalBuffer's memory: one copy of the data where
  // the scratch and finalBuffer.set made two; anything else goes through finalBuffer.set)
  const { addon } = require('../lib/native');
  const setScratch = addon.setScratch;
  const registered = [];
  addon.setScratch = function (slot, buffer) {
    registered.push(buffer);
    return setScratch.call(this, slot, buffer);
  };
  const data = Buffer.alloc(64 * 1024);
  for (let i = 0; i < data.length; i++) data[i] = (i * 7) & 0xff;
  const id = new ObjectId('65a1b2c3d4e5f60718293a4b');
  /** Runs both libraries on finalBuffers from `make` (the same way); returns rs's. */
  const both = (label, doc, make, index) => {
    const a = make();
    const b = make();
    registered.length = 0;
    const ra = outcome(() => js.serializeWithBufferAndIndex(doc, a, { index }));
    const rb = outcome(() => rs.serializeWithBufferAndIndex(doc, b, { index }));
    assert.deepStrictEqual(rb, ra, label);
    if (b.buffer.byteLength > 0) assert.ok(Buffer.from(b.buffer).equals(Buffer.from(a.buffer)), `${label}: the whole ArrayBuffer`);
    return b;
  };
  try {
    // (a key last whose value has no bytes: the writer stores a defined key's words whole, scratch past its end)
    const docs = [
      { _id: id, data: new Binary(data) },
      { data: new Binary(data), z: null },
      { list: [new Binary(data.subarray(0, 40000)), new Binary(data.subarray(1, 30001), 4)], k: true, m: new MinKey() }
    ];
    for (let round = 0; round < 6; round++) {
      for (const [i, doc] of docs.entries()) {
        for (const index of [undefined, 0, 13]) {
          // a view at an offset into a larger buffer of 0xee
          const b = both(`doc ${i} index ${index}`, doc, () => Buffer.alloc(300000, 0xee).subarray(100, 200000), index);
          assert.ok(registered.includes(b.buffer), `doc ${i}: written into finalBuffer`);
          assert.notStrictEqual(registered.at(-1), b.buffer, 'finalBuffer is not kept');
        }
      }
    }
    const doc = docs[1];
    const usual = (label, make, index) => {
      const b = both(label, doc, make, index);
      if (b.buffer.byteLength > 0) assert.ok(!registered.includes(b.buffer), `${label}: through finalBuffer.set`);
    };
    usual('too small', () => Buffer.alloc(70000, 0xee), 10000);
    usual('negative index', () => Buffer.alloc(70000, 0xee), -1);
    usual('fractional index', () => Buffer.alloc(70000, 0xee), 13.5);
    usual('a SharedArrayBuffer', () => Buffer.from(new SharedArrayBuffer(70000)), 3);
    usual('a Uint8Array subclass', () => new (class Bytes extends Uint8Array {})(70000), 3);
    usual('a Uint16Array', () => new Uint16Array(70000), 0);
    const detached = () => {
      const b = new Uint8Array(70000);
      structuredClone(b.buffer, { transfer: [b.buffer] });
      return b;
    };
    both('a detached buffer', doc, detached, 0);
    // its own `set`: called as js-bson calls it
    const calls = [];
    const withSet = () => {
      const b = Buffer.alloc(70000, 0xee);
      b.set = function (src, at) {
        calls.push([src.length, at]);
        return Uint8Array.prototype.set.call(this, src, at);
      };
      return b;
    };
    usual('an own set', withSet, 5);
    assert.deepStrictEqual(calls[1], calls[0]);
    assert.strictEqual(calls.length, 2);
    // a binary over finalBuffer's own memory, apart from the output and overlapped by it
    const overlapping = (b) => ({ data: new Binary(b.subarray(100000, 100000 + data.length)) });
    for (const index of [0, 60000, 99990]) {
      const a = Buffer.alloc(200000, 0xee);
      const b = Buffer.alloc(200000, 0xee);
      data.copy(a, 100000);
      data.copy(b, 100000);
      registered.length = 0;
      assert.strictEqual(rs.serializeWithBufferAndIndex(overlapping(b), b, { index }), js.serializeWithBufferAndIndex(overlapping(a), a, { index }));
      assert.ok(b.equals(a), `overlapping at ${index}`);
      assert.ok(!registered.includes(b.buffer));
    }
  } finally {
    addon.setScratch = setScratch;
  }
});

test('options objects: null, non-objects, getters', () => {
  for (const options of [null, 5, 'x', { get checkKeys() { return true; } }]) {
    same({ $a: 1 }, options);
  }
});

test('setInternalBufferSize accepts like js-bson (and only pre-sizes)', () => {
  for (const size of [0, -1, 100, 1 << 20, NaN, '12', '1000000', undefined, 10n]) {
    assert.deepStrictEqual(outcome(() => rs.setInternalBufferSize(size)), outcome(() => js.setInternalBufferSize(size)));
  }
  for (const size of ['100000000', 2 ** 53, {}]) {
    const a = outcome(() => js.setInternalBufferSize(size));
    const b = outcome(() => rs.setInternalBufferSize(size));
    assert.strictEqual(b.ok, a.ok);
    assert.strictEqual(b.name, a.name);
    assert.strictEqual(b.message, a.message);
  }
  same({ after: 'presize' });
});

test('minInternalBufferSize option', () => {
  same({ a: 1 }, { minInternalBufferSize: 1 << 20 });
  same({ a: 1 }, { minInternalBufferSize: -5 });
});

test('re-entrancy: serialize and calculateObjectSize called from toBSON and getters', () => {
  const innerDoc = { inner: 'value'.repeat(10), n: 1, list: ['a', 'é', 3] };
  const expectedInner = hex(js.serialize(innerDoc));
  const seen = [];
  const doc = {
    before: 'x'.repeat(30),
    nested: {
      toBSON() {
        const bytes = rs.serialize(innerDoc);
        seen.push(hex(bytes));
        return { size: rs.calculateObjectSize(innerDoc), bytes };
      }
    },
    get viaGetter() {
      const bytes = rs.serialize({ deeper: { toBSON: () => rs.serialize({ deepest: true }) } });
      return bytes.length;
    },
    after: [1, 'é', new ObjectId('65494a394033a116319ce2da')]
  };
  const out = rs.serialize(doc);
  assert.strictEqual(seen[0], expectedInner);
  // js-bson shares one buffer between nested calls, so the oracle is the same
  // document with the nested results computed beforehand.
  const plain = {
    before: doc.before,
    nested: { size: js.calculateObjectSize(innerDoc), bytes: js.serialize(innerDoc) },
    viaGetter: js.serialize({ deeper: js.serialize({ deepest: true }) }).length,
    after: doc.after
  };
  assert.strictEqual(hex(out), hex(js.serialize(plain)));
  assert.strictEqual(rs.calculateObjectSize(doc), js.calculateObjectSize(plain));
  // an error thrown by the nested call leaves the outer one usable
  const throwing = { a: { toBSON: () => rs.serialize([1]) } };
  assert.throws(() => rs.serialize(throwing), /array as the root/);
  same({ still: 'fine' });
});

test('calculateObjectSize after an error thrown deep in a document starts from a clean state', () => {
  // (its state is reused from call to call: what an error left on the
  // circular-structure path must not make the next call see a cycle)
  for (const options of [undefined, { serializeFunctions: true }]) {
    const deep = {};
    let at = deep;
    for (let i = 0; i < 80; i++) at = at.c = { n: i }; // (past 64 levels the path is a Set)
    at.boom = { toBSON() { throw new Error('boom'); } };
    assert.throws(() => rs.calculateObjectSize(deep, options), /boom/);
    const again = { a: deep.c, b: [deep.c.c.c] };
    delete at.boom;
    assert.strictEqual(rs.calculateObjectSize(again, options), js.calculateObjectSize(again, options));
    assert.strictEqual(rs.calculateObjectSize(deep, options), js.calculateObjectSize(deep, options));
    // and from a toBSON at each of the first 10 levels, a call sizing a subtree below them
    let lower = deep;
    for (let i = 0; i < 12; i++) lower = lower.c;
    let level = deep;
    for (let i = 0; i < 10; i++, level = level.c) level.sized = { toBSON: () => ({ inner: rs.calculateObjectSize(lower, options) }) };
    const expected = js.calculateObjectSize(deep, options);
    assert.strictEqual(rs.calculateObjectSize(deep, options), expected);
  }
});

test('serialize result is a fresh Buffer each time', () => {
  const a = rs.serialize({ a: 1 });
  const b = rs.serialize({ a: 2 });
  assert.ok(Buffer.isBuffer(a));
  assert.notStrictEqual(a.buffer === b.buffer && a.byteOffset === b.byteOffset, true);
  assert.strictEqual(a[7], 1);
  assert.strictEqual(b[7], 2);
});

test('classes from another js-bson major are refused (BSONVersionError)', () => {
  const major = js.MinKey.prototype[Symbol.for('@@mdb.bson.version')];
  const fake = { _bsontype: 'Long', [Symbol.for('@@mdb.bson.version')]: major === 6 ? 7 : 6, low: 1, high: 0 };
  const a = outcome(() => js.serialize({ fake }));
  const b = outcome(() => rs.serialize({ fake }));
  assert.deepStrictEqual(b, a);
  assert.strictEqual(b.name, 'BSONVersionError');
});

test('seeded random documents: identical bytes, sizes and errors', () => {
  let seed = 12345;
  const rand = () => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed / 0x7fffffff;
  };
  const pick = a => a[Math.floor(rand() * a.length)];
  const keys = ['a', 'b', 'é', '$x', 'a.b', '', 'k'.repeat(70), 'key\u0000', 'ünï', '0', '_id'];
  function value(depth) {
    const r = rand();
    if (depth > 3 || r < 0.45) {
      return pick([
        () => Math.floor(rand() * 2 ** 33) - 2 ** 32,
        () => rand() * 1e6,
        () => -0,
        () => NaN,
        () => 'x'.repeat(Math.floor(rand() * 60)),
        () => 'é✓\ud800'.repeat(Math.floor(rand() * 20)),
        () => rand() < 0.5,
        () => null,
        () => undefined,
        () => BigInt(Math.floor(rand() * 1e9)) * 12345678901n,
        () => new Date(Math.floor(rand() * 1e13)),
        () => new ObjectId(),
        () => Long.fromNumber(rand() * 1e15),
        () => new Int32(Math.floor(rand() * 1000)),
        () => new Double(rand()),
        () => Decimal128.fromString(String(Math.floor(rand() * 1e6))),
        () => new Binary(Buffer.from([1, 2, 3]), pick([0, 2, 4, 5, 128])),
        () => Buffer.alloc(Math.floor(rand() * 40), 7),
        () => /re/gi,
        () => new BSONRegExp('p', 'im'),
        () => new Code('c'),
        () => new MinKey(),
        () => new Timestamp({ t: 1, i: 2 }),
        () => Symbol('s'),
        () => () => 1
      ])();
    }
    if (r < 0.7) return Array.from({ length: Math.floor(rand() * 6) }, () => value(depth + 1));
    if (r < 0.75) return new Map([[pick(keys), value(depth + 1)]]);
    if (r < 0.8) return new Code('f', doc(depth + 1));
    if (r < 0.85) return new DBRef('c', new ObjectId(), rand() < 0.5 ? 'db' : undefined, doc(depth + 1));
    return doc(depth + 1);
  }
  function doc(depth) {
    const d = {};
    const n = Math.floor(rand() * 6);
    for (let i = 0; i < n; i++) d[pick(keys) + (rand() < 0.5 ? i : '')] = value(depth);
    return d;
  }
  for (let i = 0; i < 1500; i++) {
    const d = doc(0);
    const options = pick(allOptions);
    same(d, options);
  }
});

test("an object that says it is a Map but has no entries(): js-bson 7.3's TypeError, at the root, in a document and in calculateObjectSize", () => {
  // (V8's message quotes the variable js-bson calls entries() on; bson-rs names it as js-bson 7.3 does)
  const oracle = require('./support/oracle');
  const fake = () => ({ a: 1, [Symbol.toStringTag]: 'Map' });
  const cases = [() => fake(), () => ({ x: fake() }), () => ({ x: [fake()] })];
  for (let round = 0; round < 10; round++) {
    for (const make of cases) {
      for (const f of ['serialize', 'calculateObjectSize']) {
        const e = outcome(() => js[f](make()));
        const a = outcome(() => rs[f](make()));
        assert.strictEqual(a.ok, false, f);
        if (oracle.before('7.3.0')) assert.strictEqual(a.name, e.name, f);
        else assert.deepStrictEqual(a, e, f);
      }
    }
  }
});
