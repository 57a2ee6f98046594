'use strict';
// The JS writer of the smallest tapes (lib/serialize/small.js) against
// js-bson: every document it writes must have js-bson's bytes, and every tape
// it does not take (another op, string args, more than MAX_OPS ops) must
// still come out right through the Rust writer. Each test checks that the JS
// writer did write documents, so that a change that sends everything to the
// Rust writer fails here.
const test = require('node:test');
const assert = require('node:assert');
const { js, rs } = require('./support/oracle');
const { Rng } = require('./support/prng');
const { outcome } = require('./support/compare');
const small = require('../lib/serialize/small');
const { keyCacheState } = require('../lib/serialize/keys');

function sameBytes(doc, options, context) {
  const e = outcome(() => js.serialize(doc, options));
  const a = outcome(() => rs.serialize(doc, options));
  assert.deepStrictEqual(a, e, context);
  if (e.ok) {
    const into = Buffer.alloc(e.value.length + 7, 0xee);
    const end = rs.serializeWithBufferAndIndex(doc, into, { ...options, index: 3 });
    assert.strictEqual(end, 3 + e.value.length - 1, context);
    assert.deepStrictEqual(into.subarray(3, 3 + e.value.length), Buffer.from(e.value), context);
  }
}

/** Runs `f` and returns how many documents the JS writer wrote meanwhile. */
function written(f) {
  const before = small.counts.written;
  f();
  return small.counts.written - before;
}

const { Long, Timestamp, ObjectId, Decimal128, Int32, Double } = js;

function dateWithTime(ms) {
  const d = new Date(0);
  d.getTime = () => ms; // writeDate reads getTime(): any number reaches the writer
  return d;
}

// [document, whether the JS writer takes its tape]
const EDGE = [
  [{ ok: 1 }, true],
  [{ n: 1, ok: 1 }, true],
  [{}, true],
  [{ z: -0, nan: NaN, inf: Infinity, ninf: -Infinity, max: 2147483647, min: -2147483648, over: 2147483648, frac: 0.1 }, true],
  [{ t: true, f: false, n: null, u: undefined }, true],
  [{ s: '', s48: 'x'.repeat(48), nul: 'a\u0000b' }, true],
  [{ l: Long.MAX_VALUE, m: Long.MIN_VALUE, z: Long.ZERO, ts: new Timestamp({ t: 4294967295, i: 1 }) }, true],
  [{ d0: new Date(0), neg: new Date(-1), lo: new Date(-8.64e15), hi: new Date(8.64e15), bad: new Date(NaN) }, true],
  [{ down: dateWithTime(-1.5), up: dateWithTime(2.7), near: dateWithTime(-(2 ** 53) + 1) }, true],
  [{ big: dateWithTime(1e30) }, false], // past 2^53: Rust's saturating conversion
  [{ small: dateWithTime(-1e30), edge: dateWithTime(2 ** 53 + 2) }, false],
  [{ _id: new ObjectId('0123456789abcdef01234567'), ff: new ObjectId('ffffffffffffffffffffffff') }, true],
  [{ a: [1, 'x', null, undefined, [2, [3]], { b: 1 }] }, true], // 16 ops
  [{ a: [() => 1, Symbol('s'), 1, () => 2, 2] }, true], // skipped in an array: indices 2 and 4
  [{ a: new Array(12).fill(7) }, true],
  [{ $set: { 'day.2026-01-01': 5 } }, true],
  [{ '': 1, 'a.b': 2, $x: 3 }, true],
  [{ é: 1 }, false], // a non-ASCII cached key
  [{ s: 'é' }, false], // a string arg
  [{ s49: 'y'.repeat(49) }, false],
  [{ d: Decimal128.fromString('1.5') }, false],
  [{ i: new Int32(5), x: new Double(2) }, true],
  [{ o: { p: { q: { r: { s: 1 } } } } }, true],
  [{ a: 1, b: 2, c: 3, d: 4, e: 5, f: 6, g: 7, h: 8, i: 9, j: 10, k: 11, l: 12, m: 13, n: 14, o: 15 }, true], // 16 ops
  [{ a: 1, b: 2, c: 3, d: 4, e: 5, f: 6, g: 7, h: 8, i: 9, j: 10, k: 11, l: 12, m: 13, n: 14, o: 15, p: 16 }, false], // 17
  [
    {
      o: Object.assign(new ObjectId(), {
        serializeInto(b, i) {
          for (let k = 0; k < 12; k++) b[i + k] = k + 1;
          return 12;
        }
      }),
      after: 'abc' // (its bytes follow the ObjectId's on the bytes tape)
    },
    true
  ]
];

test('edge documents have js-bson bytes, under every option set, written where expected', () => {
  for (const options of [undefined, { ignoreUndefined: false }, { checkKeys: true }, { serializeFunctions: true }]) {
    for (const [i, [doc, inJS]] of EDGE.entries()) {
      const context = `EDGE[${i}] ${JSON.stringify(options)}`;
      sameBytes(doc, options, context);
      if (options === undefined) assert.strictEqual(written(() => rs.serialize(doc)), inJS ? 1 : 0, context);
    }
  }
});

/** A random tiny document: mostly what the JS writer takes, sometimes what it does not. */
function tinyValue(rng, depth) {
  switch (rng.int(0, 15)) {
    case 0:
      return rng.int(-5, 5);
    case 1:
      return rng.pick([0.5, -0, NaN, 2 ** 31, -(2 ** 31), 1e300, -Infinity]);
    case 2:
      return 'abcdefghijklmnopqrstuvwxyz0123456789-_'.slice(0, rng.int(0, 38));
    case 3:
      return rng.bool();
    case 4:
      return rng.pick([null, undefined]);
    case 5:
      return Long.fromBits(rng.int(-(2 ** 31), 2 ** 31 - 1), rng.int(-(2 ** 31), 2 ** 31 - 1));
    case 6:
      return new Date(rng.int(-1e12, 1e13));
    case 7:
      return new ObjectId(rng.bytes(12));
    case 8:
      return new Timestamp({ t: rng.int(0, 2 ** 31), i: rng.int(0, 99) });
    case 9:
    case 10:
      return depth > 0 ? tinyObject(rng, depth - 1) : {};
    case 11:
      return depth > 0 ? Array.from({ length: rng.int(0, 3) }, () => tinyValue(rng, depth - 1)) : [];
    case 12:
      return rng.pick(['é', 'x'.repeat(60), Decimal128.fromString('2'), new Int32(1), 5n, /r/g, Buffer.from('ab')]);
    default:
      return rng.int(0, 1000);
  }
}

function tinyKey(rng) {
  const k = rng.int(0, 9);
  if (k === 0) return 'k' + rng.int(0, 1e9); // new on (nearly) every call: a key on the bytes tape
  if (k === 1) return rng.pick(['é', 'ключ', '$set', 'a.b', '']);
  return rng.pick(['ok', 'n', '_id', 'x', 'value', 'createdAt', 'a', 'b']);
}

function tinyObject(rng, depth) {
  const o = {};
  for (let i = rng.int(0, 4); i > 0; i--) o[tinyKey(rng)] = tinyValue(rng, depth);
  return o;
}

test('random tiny documents have js-bson bytes', () => {
  const rng = new Rng(0x5a11);
  const N = 4000;
  const n = written(() => {
    for (let i = 0; i < N; i++) {
      const doc = tinyObject(rng, 2);
      sameBytes(doc, rng.chance(0.2) ? { ignoreUndefined: false } : undefined, `doc ${i}`);
    }
  });
  assert.ok(n > N / 2, `the JS writer wrote ${n} of ${2 * N} documents`);
});

test('documents written into the pool stay intact when later ones fill it', () => {
  const docs = [];
  const out = [];
  const n = written(() => {
    for (let i = 0; i < 30000; i++) {
      const doc = { i, s: 'v' + (i % 97) };
      docs.push(doc);
      out.push(rs.serialize(doc));
    }
  });
  assert.ok(n >= 30000, `the JS writer wrote ${n} documents`);
  for (let i = 0; i < docs.length; i += 7) assert.deepStrictEqual(out[i], js.serialize(docs[i]), `doc ${i}`);
});

test('keys sent on the bytes tape (a cold key window) have js-bson bytes', () => {
  // ever-new keys make the key window cold: new keys then go on the bytes tape
  for (let i = 0; i < 3 * 4096 && !keyCacheState('').cold; i++) rs.serialize({ ['warm' + i]: i });
  assert.ok(keyCacheState('').cold, 'the key window went cold');
  const n = written(() => {
    for (let i = 0; i < 500; i++) {
      sameBytes({ ['u' + i]: i, ['v' + i]: 'x' + i, ok: 1 }, undefined, `doc ${i}`);
      sameBytes({ $set: { ['day.' + i]: i, ['night.' + i]: [i, { ['w' + i]: true }] } }, undefined, `set ${i}`);
    }
  });
  assert.ok(n >= 1000, `the JS writer wrote ${n} documents`);
});

test('a key on the bytes tape with a NUL is refused as the Rust writer refuses it; the bytes after a key are not part of it', () => {
  // (the walk never stages such a key; the JS writer still checks, a word at a time)
  const { Tape } = require('../lib/serialize/buffers');
  const OP = require('../lib/serialize/ops');
  const KEY_BYTES = 1 << 30;
  const out = new Uint8Array(512);
  const view = new DataView(out.buffer);
  for (let n = 1; n <= 64; n++) {
    for (let at = -1; at < n; at++) {
      const t = new Tape(1);
      t.u8.fill(0, 0, 128); // zeros after the key
      for (let j = 0; j < n; j++) t.u8[j] = j === at ? 0 : 97 + (j % 26);
      t.ops[0] = OP.INT32 | KEY_BYTES | (n << 8);
      t.ops[1] = OP.END;
      t.opi = 2;
      t.i32[0] = 7;
      t.ni = 1;
      const length = small.writeSmall(t, out, view, 0);
      if (at >= 0) {
        assert.strictEqual(length, -1, `key of ${n} with a NUL at ${at}`);
        continue;
      }
      const key = String.fromCharCode(...t.u8.subarray(0, n));
      assert.strictEqual(Buffer.from(out.subarray(0, length)).toString('hex'), js.serialize({ [key]: 7 }).toString('hex'), `key of ${n}`);
    }
  }
});
