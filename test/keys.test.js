'use strict';
// The serializer's key cache (lib/serialize/keys.js) under keys that are new
// on every call: the window turns cold, keys go inline (on the bytes tape, or
// as string args), and the bytes and errors stay js-bson's. Its own file: the
// cache is per process, and this test needs it to start empty.
const test = require('node:test');
const assert = require('node:assert');
const { js, rs } = require('./support/oracle');
const { keyCacheState } = require('../lib/serialize/keys');

function hex(b) {
  return Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex');
}

function outcome(fn) {
  try {
    return { bytes: hex(fn()) };
  } catch (e) {
    return { error: e.constructor.name, message: e.message };
  }
}

function same(doc, options) {
  const want = outcome(() => js.serialize(doc, options));
  const got = outcome(() => rs.serialize(doc, options));
  assert.deepStrictEqual(got, want);
}

// A document of the buckets / $set / user-id kind: fixed keys around ever-new ones.
function dynamic(i) {
  const m = {};
  for (let k = 0; k < 12; k++) m[`2024-01-${i}T${k}`] = k & 1 ? k * 1.5 : `v${k}`;
  return {
    _id: i,
    sensor: 'cpu',
    m,
    $set: { [`day.${i}`]: i, [`é${i}`]: 'ü', [`${'long'.repeat(20)}${i}`]: i, [`k${i}`]: { [`n${i}`]: [i, `s${i}`] } },
    [`u${i}`]: new Map([[`map${i}`, i]])
  };
}

test('the first window is short; documents whose subdocuments share memo slots keep the window warm', () => {
  // (in processes of their own: this file's other tests need a cache that saw only them)
  const run = (body) => {
    const script = `
      const { js, rs } = require('./test/support/oracle');
      const { keyCacheState } = require('./lib/serialize/keys');
      ${body}
    `;
    const { spawnSync } = require('node:child_process');
    const r = spawnSync(process.execPath, ['-e', script], { cwd: require('node:path').join(__dirname, '..'), encoding: 'utf8', timeout: 60000 });
    assert.strictEqual(r.status, 0, r.stderr);
    return JSON.parse(r.stdout);
  };
  // ever-new keys: cold after 40 documents (the first window ends at 32 documents, not 4,096 fresh keys)
  assert.deepStrictEqual(
    run(`
      const out = [keyCacheState('k0').cold];
      for (let i = 0; i < 40; i++) rs.serialize({ ['k' + i]: i });
      const doc = { ['k' + 1e6]: 1 };
      out.push(keyCacheState('k0').cold, keyCacheState('k0').size <= 64, Buffer.from(rs.serialize(doc)).equals(js.serialize(doc)));
      console.log(JSON.stringify(out));
    `),
    [false, true, true, true]
  );
  // one document of 300 keys, serialized again and again: its keys are fresh
  // in its first call only, so the first window ends warm and they stay defined
  // (when it ended at 256 fresh keys, it ended cold inside the first call)
  assert.deepStrictEqual(
    run(`
      const doc = {};
      for (let i = 0; i < 300; i++) doc['many_' + i] = i;
      for (let i = 0; i < 100; i++) rs.serialize(doc);
      rs.serialize({ one_more: 1 }); // (a window ends at a fresh key)
      console.log(JSON.stringify([keyCacheState('many_299').cold, keyCacheState('many_299').defined, Buffer.from(rs.serialize(doc)).equals(js.serialize(doc))]));
    `),
    [false, true, true]
  );
  // two documents in one array: their keys share memo slots (the row of the array's
  // elements) and miss them on every call, but they are cached (Map hits, not fresh
  // keys), so the window stays warm and they stay defined
  assert.deepStrictEqual(
    run(`
      const doc = { list: [{ x: 1, y: 'v' }, { p: 2, q: 'w' }] };
      for (let i = 0; i < 10000; i++) rs.serialize(doc);
      rs.serialize({ one_more: 1 }); // (a window ends at a fresh key)
      console.log(JSON.stringify([keyCacheState('p').cold, keyCacheState('p').defined, Buffer.from(rs.serialize(doc)).equals(js.serialize(doc))]));
    `),
    [false, true, true]
  );
});

test('ever-new keys: the window turns cold, and bytes stay js-bson\'s across it', () => {
  assert.strictEqual(keyCacheState('sensor').cold, false);
  for (let i = 0; i < 12000; i++) same(dynamic(i));
  const state = keyCacheState('2024-01-11999T3');
  assert.strictEqual(state.cold, true, 'cold after thousands of new keys per document');
  assert.strictEqual(state.defined, false, 'a key seen once is not defined in a cold window');
  // nor one that js-bson checks ('.'), which the document lane hands to the generic path
  assert.strictEqual(keyCacheState('day.11999').defined, false, 'a key with a dot seen once is not defined');
  assert.ok(keyCacheState('x').size < 12000, `${keyCacheState('x').size} keys defined for 12,000 documents`);
  // fixed keys were defined while the window was warm
  assert.strictEqual(keyCacheState('sensor').defined, true);
});

test('cold window: a key that recurs at its slot is defined; the bytes are the same before and after', () => {
  assert.strictEqual(keyCacheState('x').cold, true);
  const doc = () => ({ recurring_key: 1, [`fresh${Math.random()}`]: 2 });
  assert.strictEqual(keyCacheState('recurring_key').defined, false);
  for (let i = 0; i < 3; i++) same(doc());
  assert.strictEqual(keyCacheState('recurring_key').defined, true);
  same(doc());
});

test('cold window: the keys of sibling documents recur at slots of their own, so they are defined', () => {
  // (documents in a document get memo rows by their position: with one row per
  // depth, a.k and b.k took turns at one slot, missed it on every call and were
  // sent inline for good)
  assert.strictEqual(keyCacheState('x').cold, true);
  const doc = () => ({ a: { sibling_key_a: 1 }, b: { sibling_key_b: 2 }, [`fresh${Math.random()}`]: 3 });
  for (let i = 0; i < 3; i++) same(doc());
  assert.strictEqual(keyCacheState('sibling_key_a').defined, true);
  assert.strictEqual(keyCacheState('sibling_key_b').defined, true);
  same(doc());
});

test('cold window: every key of a document of more than 256 keys is defined (its keys do not take turns at memo slots)', () => {
  // (with rows of 256 memo slots, keys 1-44 and 257-300 shared slots, missed on
  // every call and were sent inline for good, and their misses kept the window cold)
  assert.strictEqual(keyCacheState('x').cold, true);
  const doc = {};
  for (let i = 0; i < 300; i++) doc[`wide_key_${i}`] = i % 3 === 0 ? `v${i}` : i;
  for (let i = 0; i < 3; i++) same(doc);
  for (const i of [0, 10, 43, 100, 255, 256, 299]) assert.strictEqual(keyCacheState(`wide_key_${i}`).defined, true, `wide_key_${i}`);
  same(doc);
});

test('cold window: every key of a document of more than 1,024 keys is defined (it runs on into the next memo rows)', () => {
  // (when a document's positions wrapped around within its row of 1,024 memo
  // slots, keys 1,024 apart took turns at a slot, missed on every call and
  // were sent inline for good)
  assert.strictEqual(keyCacheState('x').cold, true);
  const doc = {};
  for (let i = 0; i < 2500; i++) doc[`wider_key_${i}`] = i % 3 === 0 ? `v${i}` : i;
  for (let i = 0; i < 3; i++) same(doc);
  for (const i of [0, 1, 500, 1023, 1024, 1025, 1500, 2047, 2048, 2499]) assert.strictEqual(keyCacheState(`wider_key_${i}`).defined, true, `wider_key_${i}`);
  same({ nested: doc, after: { a: 1, b: [doc] } });
  same(doc);
});

test('cold window: key errors and checkKeys are js-bson\'s, inline keys included', () => {
  assert.strictEqual(keyCacheState('x').cold, true);
  for (let i = 0; i < 50; i++) {
    same({ a: 1, [`nul\u0000${i}`]: 1 });
    same({ [`dot.${i}`]: 1 }, { checkKeys: true });
    same({ [`$dollar${i}`]: 1 }, { checkKeys: true });
    same({ [`$dollar${i}`]: 1, [`dot.${i}`]: { [`x.${i}`]: 1 } }, { checkKeys: false });
    same({ [`k${i}`]: 1, [`${'x'.repeat(64)}${i}`]: 'ok', [`${'y'.repeat(63)}${i}`]: 'ok' });
    same(new Map([[`m${i}`, 1], [new String(`s${i}`), 2]]));
    same(new Map([[i, 1]]));
    // empty keys inline: no bytes to reserve (the tape must not grow for them)
    same(new Map([['', i], [`e${i}`, { '': [i] }]]));
  }
});

test('cold window: keys checked and copied in one pass (stageKey), through tape growth and hand-overs', () => {
  assert.strictEqual(keyCacheState('x').cold, true);
  for (let i = 0; i < 4; i++) {
    // thousands of fresh keys of up to 64 units in one document: the bytes tape grows mid-lane
    const big = {};
    for (let k = 0; k < 3000; k++) {
      const key = `${String(k).padStart(6, '0')}_${i}_${'k'.repeat(k % 57)}`;
      big[key] = k % 3 === 0 ? `s${k}` : k % 3 === 1 ? k : k + 0.5;
    }
    same(big);
    // a staged key next to keys the lane hands over: '.', NUL (at the start, in the middle), '$', non-ASCII
    // (Latin-1, Cyrillic, a lone surrogate, DEL), 65 units
    const mixed = {
      [`a${i}`]: 1,
      [`b.${i}`]: 2,
      [`c${i}`]: 'x',
      [`\u0000d${i}`]: 3,
      [`e${i}`]: 4,
      [`f${i}\u0000g`]: 5,
      [`$h${i}`]: 6,
      [`i${i}é`]: 'y',
      [`l${i}ключ`]: 8,
      [`m${i}\ud800`]: 9,
      [`n${i}\u007f.`]: 10,
      [`${'j'.repeat(64)}${i}`]: 7,
      [`k${i}`]: 'z'
    };
    same(mixed);
    same(mixed, { checkKeys: true });
    for (const key of Object.keys(mixed)) same({ [`p${i}`]: 1, [key]: 'v', [`q${i}`]: 2 }, { checkKeys: i % 2 === 0 });
  }
});

test('cold window: empty keys inline, at every depth, leave the tape as it is', () => {
  assert.strictEqual(keyCacheState('x').cold, true);
  let doc = { v: 1 };
  for (let d = 0; d < 20; d++) doc = { '': doc, [`k${d}_${Math.random()}`]: d };
  same(doc);
  // the writer itself: an inline empty key writes no bytes and must not grow the bytes tape
  const { Tape } = require('../lib/serialize/buffers');
  const { writeNull, KEY_INLINE } = require('../lib/serialize/types');
  const t = new Tape(1);
  const size = t.bytesSize;
  for (let i = 0; i < 4; i++) writeNull(t, KEY_INLINE, '');
  assert.strictEqual(t.bytesSize, size);
  assert.strictEqual(t.bi, 0);
});
