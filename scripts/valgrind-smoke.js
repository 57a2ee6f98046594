'use strict';
// A short workout of the native codec for memory checkers (valgrind, see
// scripts/sanitize.sh): every BSON corpus fixture and bench document through
// serialize / deserialize / calculateObjectSize with several option sets, the
// corpus's decode errors, and deterministic mutations of valid documents.
// Exits 0 when every result matches js-bson's (or both throw).
const fs = require('fs');
const path = require('path');
const assert = require('assert');
const ours = require('..');
const js = require('bson');

const root = path.join(__dirname, '..');
const valid = [];
const invalid = [];
const fixtures = path.join(root, 'test/fixtures/bson-corpus');
for (const f of fs.readdirSync(fixtures).filter((f) => f.endsWith('.json')).sort()) {
  const spec = JSON.parse(fs.readFileSync(path.join(fixtures, f), 'utf8'));
  for (const v of spec.valid || []) {
    valid.push(Buffer.from(v.canonical_bson, 'hex'));
    if (v.degenerate_bson) valid.push(Buffer.from(v.degenerate_bson, 'hex'));
  }
  for (const e of spec.decodeErrors || []) invalid.push(Buffer.from(e.bson, 'hex'));
}
const bench = path.join(root, 'bench/documents');
for (const f of fs.readdirSync(bench).filter((f) => f.endsWith('.json')).sort()) {
  valid.push(Buffer.from(js.serialize(js.EJSON.parse(fs.readFileSync(path.join(bench, f), 'utf8'), { relaxed: false }))));
}
// A big document (grows the scratch buffers, many strings in several sink chunks).
const big = { a: [] };
for (let i = 0; i < 3000; i++) big.a.push({ k: 'v' + i, n: i, d: i + 0.5 });
valid.push(Buffer.from(js.serialize(big)));

const optionSets = [
  {},
  { promoteValues: false },
  { promoteLongs: false, useBigInt64: true },
  { promoteBuffers: true, bsonRegExp: true },
  { raw: true },
  { fieldsAsRaw: { a: true, 0: true } },
  { validation: { utf8: false } },
  { validation: { utf8: { a: true } } },
  { allowObjectSmallerThanBufferSize: true },
];

function outcome(fn) {
  try {
    return { ok: fn() };
  } catch (e) {
    return { err: e.constructor.name + ': ' + e.message };
  }
}

function same(a, b, what) {
  if ('err' in a || 'err' in b) {
    assert.deepStrictEqual(a, b, what);
  } else {
    assert.deepStrictEqual(js.EJSON.serialize(a.ok, { relaxed: false }), js.EJSON.serialize(b.ok, { relaxed: false }), what);
  }
}

let checks = 0;
function roundtrip(buf, label) {
  for (const opts of optionSets) {
    const a = outcome(() => ours.deserialize(buf, opts));
    const b = outcome(() => js.deserialize(buf, opts));
    if (opts.raw || opts.fieldsAsRaw) {
      assert.strictEqual('err' in a, 'err' in b, `${label} ${JSON.stringify(opts)}`);
    } else {
      same(a, b, `${label} ${JSON.stringify(opts)}`);
    }
    checks++;
  }
  const doc = outcome(() => js.deserialize(buf, { promoteValues: false }));
  if ('ok' in doc) {
    const s1 = outcome(() => Buffer.from(ours.serialize(doc.ok)));
    const s2 = outcome(() => Buffer.from(js.serialize(doc.ok)));
    assert.deepStrictEqual(s1, s2, `serialize ${label}`);
    assert.strictEqual(ours.calculateObjectSize(doc.ok), js.calculateObjectSize(doc.ok), `size ${label}`);
    const n = 2 * buf.length + 64;
    const o1 = Buffer.alloc(n);
    const o2 = Buffer.alloc(n);
    same(outcome(() => ours.serializeWithBufferAndIndex(doc.ok, o1, { index: 8 })), outcome(() => js.serializeWithBufferAndIndex(doc.ok, o2, { index: 8 })), `withBuffer ${label}`);
    assert.deepStrictEqual(o1, o2, `withBuffer bytes ${label}`);
    checks += 3;
  }
}

valid.forEach((b, i) => roundtrip(b, `valid #${i}`));
invalid.forEach((b, i) => roundtrip(b, `invalid #${i}`));

// Deterministic mutations: byte flips, truncations, length-prefix edits.
let seed = 0x2545f491;
const rnd = (n) => {
  seed ^= seed << 13;
  seed ^= seed >>> 17;
  seed ^= seed << 5;
  return (seed >>> 0) % n;
};
const small = valid.filter((b) => b.length < 4096);
for (let i = 0, n = Number(process.env.SMOKE_MUTATIONS || 1500); i < n; i++) {
  const src = small[rnd(small.length)];
  const b = Buffer.from(src);
  switch (rnd(4)) {
    case 0:
      b[rnd(b.length)] = rnd(256);
      break;
    case 1:
      b.writeInt32LE(rnd(2) ? b.length : b.length + rnd(9) - 4, 0);
      b[rnd(b.length)] ^= 1 << rnd(8);
      break;
    case 2: {
      const at = 4 + rnd(Math.max(1, b.length - 4));
      if (at + 4 <= b.length) b.writeInt32LE([0, -1, 0x7fffffff, 5, b.length][rnd(5)], at);
      break;
    }
    default: {
      const t = b.subarray(0, rnd(b.length + 1));
      const a = outcome(() => ours.deserialize(t));
      const c = outcome(() => js.deserialize(t));
      same(a, c, `truncated #${i}`);
      checks++;
      continue;
    }
  }
  const opts = optionSets[rnd(optionSets.length)];
  const a = outcome(() => ours.deserialize(b, opts));
  const c = outcome(() => js.deserialize(b, opts));
  if (!opts.raw && !opts.fieldsAsRaw) same(a, c, `mutation #${i} ${JSON.stringify(opts)}`);
  checks++;
}

// deserializeStream over a concatenation.
const stream = Buffer.concat(small.slice(0, 50).filter((b) => 'ok' in outcome(() => js.deserialize(b))));
const docsA = [];
const docsB = [];
ours.deserializeStream(stream, 0, 10, docsA, 0, {});
js.deserializeStream(stream, 0, 10, docsB, 0, {});
assert.deepStrictEqual(js.EJSON.serialize(docsA, { relaxed: false }), js.EJSON.serialize(docsB, { relaxed: false }));

console.log(`valgrind-smoke: ${checks} checks passed (${valid.length} valid, ${invalid.length} invalid inputs)`);
