'use strict';
// The JS reader for the smallest documents (lib/deserialize/small.js) against
// js-bson: every document it takes must come out as js-bson's, and every
// document it should not take (another type, bad sizes, bad bytes) must still
// give js-bson's value or error (through the Rust reader).
const test = require('node:test');
const assert = require('node:assert');
const { js, rs } = require('./support/oracle');
const { Rng } = require('./support/prng');
const b = require('./support/bsonbuild');
const { outcome, assertSameOutcome } = require('./support/compare');
const small = require('../lib/deserialize/small');
const { DEFAULT_FLAGS } = require('../lib/deserialize/options');

function same(bytes, options, context) {
  const e = outcome(() => js.deserialize(bytes, options));
  const a = outcome(() => rs.deserialize(bytes, options));
  assertSameOutcome(a, e, context);
  return e;
}

const T = b.T;
const SAMPLES = [
  b.doc(b.el(T.int32, 'ok', b.i32(1))),
  b.doc(b.el(T.double, 'ok', b.f64(1))),
  b.doc(b.el(T.int32, 'n', b.i32(1)), b.el(T.double, 'ok', b.f64(1))),
  b.doc(),
  b.doc(b.el(T.string, 's', b.str('abc')), b.el(T.bool, 't', Buffer.from([1])), b.el(T.null, 'z')),
  b.doc(b.el(T.object, '$set', b.doc(b.el(T.int32, 'day.20260101', b.i32(-5))))),
  b.doc(b.el(T.string, 'e', b.str('')), b.el(T.string, 'nul', b.str('a\u0000b')), b.el(T.double, 'm', b.f64(-0))),
  b.doc(b.el(T.double, 'nan', b.f64(NaN)), b.el(T.double, 'inf', b.f64(-Infinity)), b.el(T.int32, 'min', b.i32(-2147483648))),
  b.doc(b.el(T.object, 'a', b.doc(b.el(T.object, 'b', b.doc(b.el(T.object, 'c', b.doc(b.el(T.null, 'd')))))))),
  b.doc(b.el(T.string, '$ref', b.str('c')), b.el(T.int32, '$id', b.i32(1))),
  b.doc(b.el(T.int32, '__proto__', b.i32(1)), b.el(T.int32, 'x', b.i32(2))),
  b.doc(b.el(T.int32, 'é', b.i32(1))),
  b.doc(b.el(T.string, 's', b.str('é'))),
  b.doc(b.el(T.int64, 'l', b.i64(5n)), b.el(T.oid, 'o', Buffer.alloc(12, 7))),
  b.doc(b.el(T.int32, '', b.i32(3)), b.el(T.int32, 'dup', b.i32(1)), b.el(T.int32, 'dup', b.i32(2))),
  b.doc(b.el(T.binary, 'b', b.bin(0, Buffer.from('xyz'))), b.el(T.binary, 'e', b.bin(0x80, Buffer.alloc(0)))),
  b.doc(b.el(T.binary, 'u', b.bin(4, Buffer.alloc(16, 9))), b.el(T.binary, 'v', b.bin(4, Buffer.alloc(3, 9)))),
  b.doc(b.el(T.binary, 'two', b.bin(2, Buffer.from('ab')))),
  // arrays and ObjectIds (samples 18-24)
  b.doc(b.el(T.array, 'values', b.doc())),
  b.doc(b.el(T.oid, '_id', Buffer.from('65494a394033a116319ce2da', 'hex')), b.el(T.int32, 'n', b.i32(1))),
  b.doc(b.el(T.array, 'a', b.doc(b.el(T.int32, '0', b.i32(1)), b.el(T.string, '1', b.str('x')), b.el(T.oid, '2', Buffer.alloc(12, 0xff)))), b.el(T.int32, 'ok', b.i32(1))),
  b.doc(b.el(T.array, 'a', b.doc(b.el(T.int32, 'x', b.i32(1)), b.el(T.int32, 'x', b.i32(2)), b.el(T.int32, '', b.i32(3))))),
  b.doc(b.el(T.array, 'a', b.doc(b.el(T.array, '0', b.doc(b.el(T.object, '0', b.doc(b.el(T.null, 'z')))))))),
  b.doc(b.el(T.array, 'a', b.doc(b.el(T.int32, '$ref', b.i32(1)), b.el(T.int32, '__proto__', b.i32(2))))),
  b.doc(b.el(T.array, 'a', b.doc(b.el(T.int32, 'é', b.i32(1))))),
  // dates (samples 25-26): either side of 1970, both halves of the int64, past Date's range
  b.doc(b.el(T.date, 'at', b.i64(0n)), b.el(T.date, 'neg', b.i64(-1n)), b.el(T.date, 'hi', b.i64(0x1_0000_0001n)), b.el(T.date, 'edge', b.i64(8640000000000000n))),
  b.doc(b.el(T.oid, '_id', Buffer.alloc(12, 3)), b.el(T.array, 'd', b.doc(b.el(T.date, '0', b.i64(-8640000000000001n)), b.el(T.date, '1', b.i64(2n ** 63n - 1n)), b.el(T.date, '2', b.i64(-(2n ** 63n))))))
];
// Documents over BIG_BYTES
const BIG = [
  b.doc(b.el(T.binary, 'b', b.bin(0, Buffer.alloc(100000, 1)))),
  b.doc(b.el(T.int32, 'n', b.i32(1)), b.el(T.binary, 'b', b.bin(4, Buffer.alloc(70000, 2))), b.el(T.string, 's', b.str('x'))),
  b.doc(b.el(T.string, 's', b.str('y'.repeat(100000)))),
  b.doc(...Array.from({ length: 9000 }, (_, i) => b.el(T.int32, 'k' + i, b.i32(i))))
];
const OPTIONS = [
  undefined,
  {},
  { promoteValues: false },
  { promoteLongs: false },
  { raw: true },
  { fieldsAsRaw: { $set: true, a: true } },
  { validation: { utf8: false } },
  { validation: { utf8: { s: false } } },
  { useBigInt64: true },
  { index: 0 },
  { allowObjectSmallerThanBufferSize: true },
  { bsonRegExp: true, promoteBuffers: true }
];

test('small documents: same values as js-bson under every option set', () => {
  for (const [i, bytes] of SAMPLES.entries()) {
    for (const options of OPTIONS) {
      for (let r = 0; r < 3; r++) same(bytes, options, `sample ${i} ${JSON.stringify(options)}`);
    }
  }
});

test('the JS reader takes exactly the documents it is meant for', () => {
  const taken = bytes => small.readSmall(Buffer.from(bytes), 0, DEFAULT_FLAGS, null, () => ({}), () => ({}), null) !== undefined;
  assert.ok(taken(SAMPLES[0]) && taken(SAMPLES[2]) && taken(SAMPLES[3]) && taken(SAMPLES[5]) && taken(SAMPLES[7]));
  assert.ok(!taken(SAMPLES[9]), 'a possible DBRef');
  assert.ok(!taken(SAMPLES[10]), '__proto__');
  assert.ok(!taken(SAMPLES[11]) && !taken(SAMPLES[12]), 'non-ASCII');
  assert.ok(!taken(SAMPLES[13]), 'int64 and ObjectId');
  assert.ok(taken(SAMPLES[18]) && taken(SAMPLES[19]) && taken(SAMPLES[20]) && taken(SAMPLES[21]), 'arrays and ObjectIds');
  assert.ok(taken(SAMPLES[22]) && taken(SAMPLES[23]), "arrays' keys are not read as keys");
  assert.ok(taken(SAMPLES[25]) && taken(SAMPLES[26]), 'dates');
  assert.ok(!taken(SAMPLES[24]), "a non-ASCII array key (js-bson does not read it; left to the Rust reader)");
  const many = b.doc(...Array.from({ length: small.MAX_ELEMENTS + 1 }, (_, i) => b.el(T.int32, 'k' + i, b.i32(i))));
  assert.ok(!taken(many), 'more elements than MAX_ELEMENTS');
  const twelve = b.doc(...Array.from({ length: 12 }, (_, i) => b.el(i % 3 ? T.int32 : T.bool, 'k' + i, i % 3 ? b.i32(i) : Buffer.from([i & 1]))));
  assert.ok(taken(twelve), 'twelve elements');
  same(twelve, undefined, 'twelve elements');
  assert.ok(!taken(Buffer.concat([SAMPLES[0], Buffer.from([0])])), 'a buffer longer than the document');
  assert.ok(taken(SAMPLES[15]) && taken(SAMPLES[16]) && !taken(SAMPLES[17]), 'binary, but not subtype 2');
  assert.ok(taken(BIG[0]) && taken(BIG[1]), 'big binaries');
  assert.ok(!taken(BIG[2]) && !taken(BIG[3]), 'a long string, many elements');
  const medium = b.doc(b.el(T.string, 's', b.str('m'.repeat(small.MAX_BYTES))));
  assert.ok(!taken(medium), 'between MAX_BYTES and BIG_BYTES');
});

test('big documents the JS reader takes or gives up: same values as js-bson', () => {
  for (const [i, bytes] of BIG.entries()) {
    for (const options of [undefined, { promoteBuffers: true }, { promoteValues: false }]) same(bytes, options, `big ${i}`);
  }
  for (const cut of [1, 5, 100]) same(BIG[0].subarray(0, BIG[0].length - cut), undefined, `big cut ${cut}`);
  const lying = Buffer.from(BIG[0]);
  lying.writeInt32LE(200000, 7); // the binary's length, past the document
  same(lying, undefined, 'binary longer than the document');
});

test('every single-byte change and every truncation of small documents: js-bson\'s value or error', () => {
  const values = [0, 1, 2, 4, 5, 0x7f, 0x80, 0xc3, 0xff];
  let checked = 0;
  for (const bytes of SAMPLES) {
    for (let at = 0; at < bytes.length; at++) {
      for (const v of values) {
        if (bytes[at] === v) continue;
        const mutated = Buffer.from(bytes);
        mutated[at] = v;
        same(mutated, undefined, `byte ${at} of ${bytes.toString('hex')} set to ${v}`);
        checked++;
      }
      same(bytes.subarray(0, at), undefined, `${bytes.toString('hex')} cut at ${at}`);
    }
  }
  assert.ok(checked > 1000, `${checked} mutations`);
});

test('keys and values from the memo only when their bytes match', () => {
  const rng = new Rng(0xabc);
  const letters = 'abcxyz';
  const pick = n => Array.from({ length: n }, () => letters[rng.int(0, letters.length - 1)]).join('');
  for (let i = 0; i < 2000; i++) {
    const doc = {};
    for (let k = rng.int(0, 4); k > 0; k--) doc[pick(rng.int(0, 3))] = rng.chance(0.5) ? pick(rng.int(0, 3)) : { [pick(2)]: pick(2) };
    const bytes = js.serialize(doc);
    same(bytes, undefined, JSON.stringify(doc));
  }
});

test('random small documents of every type', () => {
  const gen = require('./support/gen');
  const rng = new Rng(0x5a11);
  let taken = 0;
  for (let i = 0; i < 4000; i++) {
    const bytes = gen.randomRawDocument(rng, rng.int(0, 2));
    if (bytes.length > small.MAX_BYTES) continue;
    if (small.readSmall(Buffer.from(bytes), 0, DEFAULT_FLAGS, null, () => ({}), () => ({}), null) !== undefined) taken++;
    same(bytes, undefined, bytes.toString('hex'));
  }
  assert.ok(taken > 50, `${taken} taken by the JS reader`);
});

test('documents given up on late: after one, the next are turned away before any value is made', () => {
  let made = 0;
  const binary = () => (made++, {});
  const objectId = () => (made++, {});
  const late = [
    js.serialize({ _id: new js.ObjectId(), n: 1, ts: new js.Timestamp({ t: 1, i: 2 }) }),
    b.doc(b.el(T.binary, 'b', b.bin(0, Buffer.from('x'))), ...Array.from({ length: small.MAX_ELEMENTS }, (_, i) => b.el(T.bool, String.fromCharCode(97 + i), Buffer.from([1])))),
    js.serialize({ _id: new js.ObjectId(), s: 'é' }),
    js.serialize({ _id: new js.ObjectId(), q: { a: [1, { l: js.Long.fromNumber(5) }] } }),
    js.serialize({ _id: new js.ObjectId(), q: { a: { b: { c: { d: 1 } } } } })
  ];
  for (const bytes of late) {
    assert.ok(bytes.length <= small.MAX_BYTES);
    small.readSmall(Buffer.from(bytes), 0, DEFAULT_FLAGS, null, binary, objectId, null);
    made = 0;
    for (let i = 0; i < 3; i++) assert.strictEqual(small.readSmall(Buffer.from(bytes), 0, DEFAULT_FLAGS, null, binary, objectId, null), undefined);
    assert.strictEqual(made, 0, `values made for ${bytes.toString('hex')}`);
    same(bytes, undefined, bytes.toString('hex'));
  }
  // while that check runs, the documents the reader takes are still taken
  for (const i of [0, 2, 5, 8, 15, 16, 18, 19, 20, 21, 22, 23, 25, 26]) {
    assert.notStrictEqual(small.readSmall(Buffer.from(SAMPLES[i]), 0, DEFAULT_FLAGS, null, () => ({}), () => ({}), null), undefined, `sample ${i}`);
  }
  assert.notStrictEqual(small.readSmall(Buffer.from(BIG[0]), 0, DEFAULT_FLAGS, null, () => ({}), () => ({}), null), undefined, 'a big binary');
});

test('ever-new keys: dictionary-mode objects with js-bson\'s values; alternating shapes stay fast', () => {
  // values first, in this process: fresh keys (integer-like ones too) once the key window is cold
  for (let i = 0; i < 3000; i++) {
    same(js.serialize({ ['id' + i]: i }), undefined, `id ${i}`);
    same(js.serialize({ $set: { [String(i)]: i, ['day.' + i]: 'v' } }), undefined, `set ${i}`);
  }
  // the objects' mode (%HasFastProperties: V8's own flag, in a child process with natives syntax)
  const { spawnSync } = require('node:child_process');
  const path = require('node:path');
  const script = `
    const js = require('bson');
    const rs = require(${JSON.stringify(path.join(__dirname, '..'))});
    const first = rs.deserialize(js.serialize({ firstEver: 1 })); // a new key, but the window is not cold
    const ok = js.serialize({ ok: 1 }), ack = js.serialize({ n: 1, ok: 1 });
    let alternating = true;
    for (let i = 0; i < 2000; i++) {
      const a = rs.deserialize(i % 2 ? ok : ack);
      if (i > 1000 && !%HasFastProperties(a)) alternating = false;
    }
    const warm = rs.deserialize(js.serialize({ anotherNew: 1 })); // new, after windows of misses of seen keys: not cold
    rs.deserialize(js.serialize({ $set: { x: 1 } })); // ($set: a key seen lately)
    for (let i = 0; i < 2000; i++) rs.deserialize(js.serialize({ ['id' + i]: i }));
    const fresh = rs.deserialize(js.serialize({ idLast: 1 }));
    const nested = rs.deserialize(js.serialize({ $set: { 'day.last': 1 } }));
    const again = rs.deserialize(ok);
    const same = rs.deserialize(ok); // (its key from the memo)
    process.stdout.write(JSON.stringify([%HasFastProperties(first), alternating, %HasFastProperties(warm), %HasFastProperties(fresh), %HasFastProperties(nested), %HasFastProperties(nested.$set), %HasFastProperties(again), %HasFastProperties(same)]));
  `;
  const r = spawnSync(process.execPath, ['--allow-natives-syntax', '-e', script], { encoding: 'utf8', cwd: path.join(__dirname, '..') });
  assert.strictEqual(r.stderr, '');
  assert.deepStrictEqual(JSON.parse(r.stdout), [true, true, true, false, true, false, true, true]);
});

test('recurring key lists: objects from their compiled factory, as js-bson; a list that changes is followed', () => {
  const docs = [
    { n: 1, ok: 1 },
    { ok: 1 },
    { a: 'x', b: { c: null, d: true }, e: 2.5 },
    { n: 1, ok: 1, extra: 'y' },
    { ok: 0, n: 1 },
    { b: { d: false, c: null }, a: 'x', e: 2.5 },
    { 1: 'one', 0: 'zero', z: 2 }
  ].map((doc) => js.serialize(doc));
  docs.push(b.doc(b.el(T.int32, 'dup', b.i32(1)), b.el(T.int32, 'x', b.i32(2)), b.el(T.int32, 'dup', b.i32(3))));
  // each list many times in a row (compiled), then interleaved with the others at the same ordinals
  for (const bytes of docs) {
    for (let i = 0; i < 40; i++) {
      const got = rs.deserialize(bytes);
      assert.deepStrictEqual(got, js.deserialize(bytes));
      assert.deepStrictEqual(Object.keys(got), Object.keys(js.deserialize(bytes)));
    }
  }
  for (let i = 0; i < 400; i++) {
    const bytes = docs[(i * 7) % docs.length];
    const got = rs.deserialize(bytes);
    assert.deepStrictEqual(got, js.deserialize(bytes), `round ${i}`);
    assert.deepStrictEqual(JSON.stringify(got), JSON.stringify(js.deserialize(bytes)), `key order, round ${i}`);
  }
});

test('no reference to a document read here is kept after the call', () => {
  // { b: <1 MiB binary> } is read here (a view of the input), and { b, c: <Date> } is begun here, then
  // handed to the Rust reader at its Date: either input must be collectable after
  const { spawnSync } = require('node:child_process');
  const path = require('node:path');
  const script = `
    const js = require('bson');
    const rs = require(${JSON.stringify(path.join(__dirname, '..'))});
    const refs = [];
    for (let i = 0; i < 20; i++) {
      const b = new js.Binary(Buffer.alloc(1 << 20, i));
      let input = js.serialize(i % 2 ? { b, c: new Date(0) } : { b }); // (the last one is handed over)
      refs.push(new WeakRef(input.buffer));
      let out = rs.deserialize(input);
      if (out.b.buffer.length !== 1 << 20) throw new Error('not the binary');
      input = out = null;
    }
    (async () => {
      for (let k = 0; k < 5; k++) { await new Promise((r) => setImmediate(r)); global.gc(); }
      process.stdout.write(String(refs.filter((r) => r.deref() !== undefined).length));
    })();
  `;
  const r = spawnSync(process.execPath, ['--expose-gc', '-e', script], { encoding: 'utf8', cwd: path.join(__dirname, '..') });
  assert.strictEqual(r.stderr, '');
  assert.strictEqual(r.stdout, '0');
});

test('compiled layouts: js-bson\'s values for their documents, js-bson\'s value or error for every other byte', () => {
  const layouts = [
    b.doc(b.el(T.double, 'ok', b.f64(1))),
    b.doc(b.el(T.int32, 'n', b.i32(1)), b.el(T.double, 'ok', b.f64(1))),
    b.doc(b.el(T.bool, 't', Buffer.from([1])), b.el(T.null, 'z'), b.el(T.int32, '', b.i32(-2147483648)), b.el(T.double, 'd', b.f64(-0))),
    b.doc(b.el(T.int32, 'dup', b.i32(1)), b.el(T.bool, 'dup', Buffer.from([0]))),
    b.doc(b.el(T.double, 'a"\\\'b', b.f64(NaN)), b.el(T.int32, '0', b.i32(7)), b.el(T.int32, 'constructor', b.i32(8))),
    b.doc(b.el(T.array, 'values', b.doc())),
    b.doc(b.el(T.object, 'o', b.doc()), b.el(T.array, 'a', b.doc()), b.el(T.int32, 'n', b.i32(3)))
  ];
  for (const [i, bytes] of layouts.entries()) {
    const { compiled, hits } = small.layoutCounts;
    for (let r = 0; r < 12; r++) same(bytes, undefined, `layout ${i}, call ${r}`);
    assert.strictEqual(small.layoutCounts.compiled, compiled + 1, `layout ${i} compiled`);
    assert.ok(small.layoutCounts.hits > hits, `layout ${i} read by its reader`);
    // while its reader is the last one made: every other value of every byte, and every truncation
    const before = small.layoutCounts.hits;
    for (let at = 0; at < bytes.length; at++) {
      for (const v of [0, 1, 2, 0x30, 0x7f, 0x80, 0xff]) {
        if (bytes[at] === v) continue;
        const mutated = Buffer.from(bytes);
        mutated[at] = v;
        same(mutated, undefined, `layout ${i}: byte ${at} set to ${v}`);
        same(bytes, undefined, `layout ${i} again`);
      }
      same(bytes.subarray(0, at), undefined, `layout ${i} cut at ${at}`);
      same(Buffer.concat([bytes, Buffer.from([0])]), undefined, `layout ${i} and a byte more`);
    }
    assert.ok(small.layoutCounts.hits > before + bytes.length, `layout ${i}: its reader stayed in use`);
  }
  // the last two readers are tried: alternating two compiled layouts, both hit
  const hits = small.layoutCounts.hits;
  for (let r = 0; r < 10; r++) {
    same(layouts[layouts.length - 2], undefined, 'alternating, the one before last');
    same(layouts[layouts.length - 1], undefined, 'alternating, the last');
  }
  assert.strictEqual(small.layoutCounts.hits, hits + 20);
  // two new layouts alternating from their first use: both compiled
  const pair = [b.doc(b.el(T.int32, 'n', b.i32(1)), b.el(T.int32, 'nModified', b.i32(1)), b.el(T.double, 'ok', b.f64(1))), b.doc(b.el(T.bool, 'acknowledged', Buffer.from([1])))];
  const before = small.layoutCounts.compiled;
  for (let r = 0; r < 12; r++) for (const bytes of pair) same(bytes, undefined, 'alternating layouts');
  assert.strictEqual(small.layoutCounts.compiled, before + 2, 'both alternating layouts compiled');
  // no layout: other types, nested documents, a layout that does not recur
  const compiled = small.layoutCounts.compiled;
  for (let r = 0; r < 12; r++) {
    same(b.doc(b.el(T.string, 's', b.str('x')), b.el(T.int32, 'n', b.i32(r))), undefined, 'a string');
    same(b.doc(b.el(T.object, 'o', b.doc(b.el(T.int32, 'n', b.i32(r))))), undefined, 'nested');
    same(b.doc(b.el(T.array, 'a', b.doc(b.el(T.int32, '0', b.i32(r))))), undefined, 'an array');
  }
  for (let r = 0; r < 40; r++) same(b.doc(b.el(T.int32, 'k' + r, b.i32(r))), undefined, 'new keys');
  assert.strictEqual(small.layoutCounts.compiled, compiled);
});

test('promoteValues: false and raw: the reader takes the smallest replies (js-bson\'s Int32 and Double; an embedded document under raw goes to the Rust reader); the layouts compiled for the defaults are not used', () => {
  const numbers = { Int32: js.Int32, Double: js.Double };
  const binary = (buf, start, end, subType) => new js.Binary(buf.subarray(start, end), subType);
  const objectId = () => new js.ObjectId('65494a394033a116319ce2da');
  const { F_PROMOTE_VALUES, F_RAW } = require('../lib/deserialize/options');
  const read = (bytes, wrap, raw) => small.readSmall(Buffer.from(bytes), 0, (DEFAULT_FLAGS & ~(wrap ? F_PROMOTE_VALUES : 0)) | (raw ? F_RAW : 0), null, binary, objectId, numbers);
  const okDouble = SAMPLES[1];
  const nAndOk = SAMPLES[2];
  for (const bytes of [okDouble, nAndOk, SAMPLES[4], SAMPLES[7], SAMPLES[19], SAMPLES[25]]) {
    const wrapped = read(bytes, true, false);
    assert.notStrictEqual(wrapped, undefined);
    assertSameOutcome(outcome(() => wrapped), outcome(() => js.deserialize(bytes, { promoteValues: false })), 'promoteValues: false');
    const raw = read(bytes, false, true);
    assert.notStrictEqual(raw, undefined);
    assertSameOutcome(outcome(() => raw), outcome(() => js.deserialize(bytes, { raw: true })), 'raw');
  }
  assert.ok(read(nAndOk, true, false).n instanceof js.Int32);
  assert.ok(read(okDouble, true, false).ok instanceof js.Double);
  const nested = b.doc(b.el(T.object, 'o', b.doc()), b.el(T.int32, 'n', b.i32(3)));
  assert.strictEqual(read(nested, false, true), undefined, 'an embedded document under raw');
  // through deserialize, after each layout has a reader compiled under the defaults
  for (const bytes of [okDouble, nAndOk, nested, b.doc(b.el(T.array, 'values', b.doc()), b.el(T.object, 'e', b.doc()))]) {
    for (let r = 0; r < 12; r++) same(bytes, undefined, 'defaults');
    const hits = small.layoutCounts.hits;
    for (const options of [{ promoteValues: false }, { raw: true }, { raw: true, promoteValues: false }, { promoteValues: false, promoteBuffers: true }]) {
      for (let r = 0; r < 4; r++) same(bytes, options, JSON.stringify(options));
    }
    assert.strictEqual(small.layoutCounts.hits, hits, 'no compiled layout under these options');
  }
});

test('documents at an offset, with a fieldsAsRaw and a per-key UTF-8 setting (the driver\'s reads of its replies): taken, js-bson\'s values; an array under a raw name is not', () => {
  const { F_ALLOW_SMALLER, F_UTF8_MAP } = require('../lib/deserialize/options');
  const driver = { fieldsAsRaw: {}, promoteValues: true, promoteBuffers: false, promoteLongs: true, bsonRegExp: false, raw: false, useBigInt64: false, validation: { utf8: { writeErrors: false } } };
  const objectNames = Object.getOwnPropertyNames(Object.prototype).map(n => '\0' + n).join('');
  const at = (bytes, offset, tail = 0) => Buffer.concat([Buffer.alloc(offset, 0xee), bytes, Buffer.alloc(tail, 0xdd)]);
  const flat = [SAMPLES[0], SAMPLES[2], SAMPLES[4], SAMPLES[19], SAMPLES[25], b.doc(b.el(T.int32, 'n', b.i32(1)), b.el(T.int32, 'nModified', b.i32(1)), b.el(T.double, 'ok', b.f64(1)))];
  for (const [i, bytes] of flat.entries()) {
    for (const offset of [0, 1, 21]) {
      for (const tail of [0, 3]) {
        const buf = at(bytes, offset, tail);
        const taken = small.readSmall(buf, offset, DEFAULT_FLAGS | F_ALLOW_SMALLER | F_UTF8_MAP, objectNames, () => ({}), () => ({}), null);
        assert.notStrictEqual(taken, undefined, `sample ${i} at ${offset}`);
        for (let r = 0; r < 6; r++) {
          same(buf, { ...driver, index: offset, allowObjectSmallerThanBufferSize: true }, `sample ${i} at ${offset}, ${tail} bytes after`);
          // without allowObjectSmallerThanBufferSize: js-bson's error unless the buffer is the document
          same(buf, { index: offset }, `sample ${i} at ${offset}, not allowed smaller`);
        }
      }
    }
  }
  // arrays under fieldsAsRaw names: js-bson makes their documents views (given up on here); other arrays are read
  const withArrays = [
    [b.doc(b.el(T.array, 'a', b.doc(b.el(T.object, '0', b.doc(b.el(T.int32, 'x', b.i32(1))))))), { a: true }, false],
    [b.doc(b.el(T.array, 'toString', b.doc(b.el(T.object, '0', b.doc())))), {}, false],
    [b.doc(b.el(T.array, 'b', b.doc(b.el(T.array, '0', b.doc(b.el(T.object, '0', b.doc())))))), { 0: true }, false],
    [b.doc(b.el(T.array, 'ab', b.doc(b.el(T.object, '0', b.doc())))), { a: true, abc: true }, true],
    [b.doc(b.el(T.object, 'o', b.doc(b.el(T.array, 'a', b.doc(b.el(T.object, '0', b.doc())))))), { a: 1 }, false]
  ];
  for (const [i, [bytes, fieldsAsRaw, read]] of withArrays.entries()) {
    const names = Object.keys(fieldsAsRaw).map(n => '\0' + n).join('') + objectNames;
    assert.strictEqual(small.readSmall(Buffer.from(bytes), 0, DEFAULT_FLAGS, names, () => ({}), () => ({}), null) !== undefined, read, `array case ${i}`);
    for (const offset of [0, 5]) same(at(bytes, offset, 2), { fieldsAsRaw, index: offset, allowObjectSmallerThanBufferSize: true }, `array case ${i} at ${offset}`);
  }
  // a recurring layout at an offset: read, and every other byte there too; compiled layouts are for whole buffers only
  const layout = b.doc(b.el(T.int32, 'n', b.i32(7)), b.el(T.bool, 'acknowledged', Buffer.from([1])), b.el(T.double, 'ok', b.f64(1)));
  const compiled = small.layoutCounts.compiled;
  for (let r = 0; r < 12; r++) same(at(layout, 9, 4), { ...driver, index: 9, allowObjectSmallerThanBufferSize: true }, 'layout at an offset');
  assert.notStrictEqual(small.readSmall(at(layout, 9, 4), 9, DEFAULT_FLAGS | F_ALLOW_SMALLER, null, () => ({}), () => ({}), null), undefined);
  assert.strictEqual(small.layoutCounts.compiled, compiled, 'no layout compiled from documents at an offset');
  for (let i = 0; i < layout.length; i++) {
    for (const v of [0, 1, 0x41, 0xff]) {
      const mutated = at(layout, 9, 4);
      if (mutated[9 + i] === v) continue;
      mutated[9 + i] = v;
      same(mutated, { ...driver, index: 9, allowObjectSmallerThanBufferSize: true }, `layout at an offset, byte ${i} set to ${v}`);
    }
  }
});
