'use strict';
// Memory: a million codec calls must not leak. Runs in a child process with
// --expose-gc so garbage collection can be forced before each measurement.
//
// RSS is noisy (allocator caching, V8 heap sizing, lazily committed pages), so
// the bound is 10% of the warmed-up RSS plus an absolute slack of 8 MiB. A
// leak of even 16 bytes per call would add ~16 MB over 1,000,000 calls and fail.
const { describe, it } = require('node:test');
const assert = require('node:assert');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const ROOT = path.join(__dirname, '..');
const CALLS = 1000000;
const SLACK = 8 * 1024 * 1024;

const CHILD = `
  const rs = require(${JSON.stringify(ROOT)});
  const js = require('bson');
  const doc = { _id: new js.ObjectId('0123456789abcdef01234567'), name: 'memory', n: 42, f: 1.5, ok: true,
    tags: ['a', 'b', 'é'], when: new Date(0), nested: { x: 1, y: [null, 'z'] }, big: 2n ** 40n, bin: Buffer.from('abc') };
  const bytes = rs.serialize(doc);
  const opts = [undefined, { promoteValues: false }, { useBigInt64: true }, { raw: true }, { promoteBuffers: true, bsonRegExp: true }];
  let sink = 0;
  const step = i => {
    switch (i % 3) {
      case 0: sink += rs.serialize(doc).length; break;
      case 1: sink += Object.keys(rs.deserialize(bytes, opts[i % opts.length])).length; break;
      default: sink += rs.calculateObjectSize(doc);
    }
  };
  const settle = () => { for (let k = 0; k < 4; k++) global.gc(); };
  for (let i = 0; i < 100000; i++) step(i);
  settle();
  const before = process.memoryUsage();
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < ${CALLS}; i++) step(i);
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  settle();
  const after = process.memoryUsage();
  console.log(JSON.stringify({ before, after, seconds, sink }));
`;

describe('memory', () => {
  it(`${CALLS.toLocaleString('en')} mixed serialize/deserialize/calculateObjectSize calls do not grow RSS (10% + 8 MiB)`, t => {
    const r = spawnSync(process.execPath, ['--expose-gc', '-e', CHILD], { encoding: 'utf8', timeout: 180000 });
    assert.strictEqual(r.signal, null, `child killed by ${r.signal}\n${r.stderr}`);
    assert.strictEqual(r.status, 0, r.stderr);
    const { before, after, seconds } = JSON.parse(r.stdout.trim().split('\n').pop());
    const mib = n => `${(n / 1048576).toFixed(1)} MiB`;
    t.diagnostic(`rss ${mib(before.rss)} -> ${mib(after.rss)}, heapUsed ${mib(before.heapUsed)} -> ${mib(after.heapUsed)}, ` +
      `external ${mib(before.external)} -> ${mib(after.external)}, arrayBuffers ${mib(before.arrayBuffers)} -> ${mib(after.arrayBuffers)}; ` +
      `${CALLS} calls in ${seconds.toFixed(1)} s`);
    const limit = before.rss * 1.1 + SLACK;
    assert.ok(after.rss <= limit, `RSS grew from ${mib(before.rss)} to ${mib(after.rss)} (limit ${mib(limit)})`);
    assert.ok(after.heapUsed <= before.heapUsed * 1.1 + SLACK, `heapUsed grew from ${mib(before.heapUsed)} to ${mib(after.heapUsed)}`);
    assert.ok(after.external <= before.external * 1.1 + SLACK, `external memory grew from ${mib(before.external)} to ${mib(after.external)}`);
  });
});

// Keys are untrusted input: a stream of documents whose keys are always new
// must not grow the key/shape caches (native or JS) without limit.
const NEW_KEYS_CHILD = `
  const rs = require(${JSON.stringify(ROOT)});
  const doc = i => ({ ['key_' + i]: i, ['other_' + i]: 'v' + (i & 7), nested: { ['in_' + i]: true } });
  const run = (from, to) => {
    for (let i = from; i < to; i++) {
      const d = doc(i);
      const b = rs.serialize(d);
      rs.deserialize(b);
      rs.deserialize(b); // a second sighting: the shape becomes a factory candidate
      rs.calculateObjectSize(d);
    }
  };
  const settle = () => { for (let k = 0; k < 4; k++) global.gc(); };
  run(0, 160000); // caches full and at their steady state (measured: the heap stops growing by here)
  settle();
  const before = process.memoryUsage();
  run(160000, 240000);
  settle();
  const after = process.memoryUsage();
  console.log(JSON.stringify({ before, after }));
`;

describe('memory with ever-new keys', () => {
  it('80,000 documents of new keys after the caches are full do not grow RSS or the heap (10% + 8 MiB)', t => {
    const r = spawnSync(process.execPath, ['--expose-gc', '-e', NEW_KEYS_CHILD], { encoding: 'utf8', timeout: 180000 });
    assert.strictEqual(r.status, 0, r.stderr);
    const { before, after } = JSON.parse(r.stdout.trim().split('\n').pop());
    const mib = n => `${(n / 1048576).toFixed(1)} MiB`;
    t.diagnostic(`rss ${mib(before.rss)} -> ${mib(after.rss)}, heapUsed ${mib(before.heapUsed)} -> ${mib(after.heapUsed)}`);
    assert.ok(after.rss <= before.rss * 1.1 + SLACK, `RSS grew from ${mib(before.rss)} to ${mib(after.rss)}`);
    assert.ok(after.heapUsed <= before.heapUsed * 1.1 + SLACK, `heapUsed grew from ${mib(before.heapUsed)} to ${mib(after.heapUsed)}`);
  });
});

// After a call, the codec holds nothing of what it was given: the walk's frames
// (serialize/walk.js Walker#release clears them up to the deepest one the call
// entered) and calculateObjectSize's state are reused by the next call. Each
// phase ends with a deep document that throws (a cycle), so a frame, or an
// entered object of calculateObjectSize, left uncleared after a return or an
// error keeps what it held.
const RETAIN_CHILD = `
  const rs = require(${JSON.stringify(ROOT)});
  const settle = async () => { for (let k = 0; k < 4; k++) { await new Promise((r) => setImmediate(r)); global.gc(); } };
  const chain = (depth, leaf) => { let o = leaf; for (let d = 0; d < depth; d++) o = { [d % 2 ? 'left' : 'right']: o, n: d }; return o; };
  function phase(call) {
    const refs = [];
    // shallow and deep trees, arrays of documents, a toBSON, past the depth where the cycle check keeps a Set
    for (const depth of [1, 2, 3, 5, 8, 20, 70, 4, 6]) {
      for (let i = 0; i < 12; i++) {
        const leaf = { v: i, data: new Uint8Array(64), tag: 'x'.repeat(20) };
        const doc = { top: chain(depth, leaf), list: [{ a: leaf }, { a: { b: leaf } }], own: { toBSON: () => ({ leaf }) }, n: i };
        refs.push(new WeakRef(leaf), new WeakRef(doc.list), new WeakRef(doc.top));
        call(doc);
      }
    }
    // last, a call that throws deep down (a cycle under 70 levels): its frames are dropped too
    const leaf = { v: -1, data: new Uint8Array(64) };
    leaf.self = { back: leaf };
    const bad = { top: chain(70, leaf) };
    refs.push(new WeakRef(leaf), new WeakRef(bad.top));
    try {
      call(bad);
      throw new Error('no error for a cycle');
    } catch (e) {
      if (!/circular/.test(e.message)) throw e;
    }
    return refs;
  }
  // deserialize: the input buffers of documents with binaries (views of the
  // input), through the tape and (last) through the small reader, results dropped.
  // (In a function of its own: a suspended async function keeps its locals.)
  function deserializePhase() {
    const refs = [];
    const docs = [{ s: 'x'.repeat(300), list: [1, 2, 3], b: new rs.Binary(new Uint8Array(100), 0), u: new rs.UUID() }, { b: new rs.Binary(new Uint8Array(16), 4) }];
    for (const d of docs) {
      for (let i = 0; i < 8; i++) {
        const input = rs.serialize(d);
        refs.push(new WeakRef(input));
        rs.deserialize(input);
      }
    }
    return refs;
  }
  (async () => {
    const out = {};
    for (const [name, call] of [['serialize', (d) => rs.serialize(d)], ['calculateObjectSize', (d) => rs.calculateObjectSize(d)]]) {
      const refs = phase(call);
      await settle();
      out[name] = refs.filter((r) => r.deref() !== undefined).length;
    }
    const refs = deserializePhase();
    await settle();
    out.deserialize = refs.filter((r) => r.deref() !== undefined).length;
    process.stdout.write(JSON.stringify(out));
  })();
`;

describe('no references kept', () => {
  it('serialize and calculateObjectSize keep no reference to the documents they were given, deserialize none to its input', () => {
    const r = spawnSync(process.execPath, ['--expose-gc', '-e', RETAIN_CHILD], { encoding: 'utf8', timeout: 60000 });
    assert.strictEqual(r.status, 0, r.stderr);
    assert.deepStrictEqual(JSON.parse(r.stdout), { serialize: 0, calculateObjectSize: 0, deserialize: 0 });
  });
});
