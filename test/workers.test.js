'use strict';
// bson-rs in worker_threads: concurrent use gives correct results, and many
// short-lived workers can load it and exit cleanly (per-environment state).
const { describe, it } = require('node:test');
const assert = require('node:assert');
const path = require('node:path');
const { Worker } = require('node:worker_threads');
const js = require('bson');
const rs = require('..');

const ROOT = path.join(__dirname, '..');
const SUPPORT = path.join(__dirname, 'support');

function runWorker(source, workerData) {
  return new Promise((resolve, reject) => {
    const w = new Worker(source, { eval: true, workerData });
    let message;
    w.on('message', m => {
      message = m;
    });
    w.on('error', reject);
    w.on('exit', code => resolve({ code, message }));
  });
}

// Compares bson-rs with js-bson inside the worker on seeded random documents.
const COMPARE_WORKER = `
  const { workerData, parentPort } = require('node:worker_threads');
  const js = require('bson');
  const rs = require(${JSON.stringify(ROOT)});
  const { Rng } = require(${JSON.stringify(path.join(SUPPORT, 'prng.js'))});
  const gen = require(${JSON.stringify(path.join(SUPPORT, 'gen.js'))});
  const { outcome, canon } = require(${JSON.stringify(path.join(SUPPORT, 'compare.js'))});
  const rng = new Rng(workerData.seed);
  const failures = [];
  let compared = 0;
  const key = o => (o.ok ? (o.value instanceof Uint8Array ? Buffer.from(o.value).toString('hex') : canon(o.value)) : o.error.class + ': ' + o.error.message);
  for (let n = 0; n < workerData.cases && failures.length < 5; n++) {
    const doc = gen.randomDocument(rng);
    const sopts = gen.randomSerializeOptions(rng);
    const e = outcome(() => js.serialize(doc, sopts));
    const a = outcome(() => rs.serialize(doc, sopts));
    if (key(a) !== key(e)) failures.push('serialize case ' + n + ': ' + key(a).slice(0, 200) + ' vs ' + key(e).slice(0, 200));
    const raw = gen.randomRawDocument(rng, 2, { invalidUtf8: rng.chance(0.3) });
    const dopts = gen.randomDeserializeOptions(rng);
    const de = outcome(() => js.deserialize(raw, dopts));
    const da = outcome(() => rs.deserialize(raw, dopts));
    if (key(da) !== key(de)) failures.push('deserialize case ' + n + ': ' + key(da).slice(0, 200) + ' vs ' + key(de).slice(0, 200));
    const se = outcome(() => js.calculateObjectSize(doc, sopts));
    const sa = outcome(() => rs.calculateObjectSize(doc, sopts));
    if (key(sa) !== key(se)) failures.push('calculateObjectSize case ' + n + ': ' + key(sa) + ' vs ' + key(se));
    compared++;
  }
  parentPort.postMessage({ compared, failures });
`;

describe('worker_threads', () => {
  it('4 workers using bson-rs at the same time each get js-bson\'s results', async () => {
    const cases = 400;
    const results = await Promise.all([1, 2, 3, 4].map(i => runWorker(COMPARE_WORKER, { seed: 0x3000 + i, cases })));
    // and the main thread at the same time as well
    assert.deepStrictEqual(Buffer.from(rs.serialize({ main: [1, 'x'] })), Buffer.from(js.serialize({ main: [1, 'x'] })));
    results.forEach(({ code, message }, i) => {
      assert.strictEqual(code, 0, `worker ${i} exit code`);
      assert.ok(message, `worker ${i} sent no result`);
      assert.deepStrictEqual(message.failures, [], `worker ${i} (seed ${0x3000 + i + 1})`);
      assert.strictEqual(message.compared, cases);
    });
  });

  it('20 short-lived workers, one after another, load bson-rs and exit cleanly', async () => {
    const source = `
      const { parentPort } = require('node:worker_threads');
      const rs = require(${JSON.stringify(ROOT)});
      const bytes = rs.serialize({ a: 1, s: 'str', d: new Date(1), n: { x: [1, 2] } });
      const back = rs.deserialize(bytes);
      parentPort.postMessage({ hex: Buffer.from(bytes).toString('hex'), ok: back.a === 1 && back.s === 'str' && back.n.x[1] === 2 });
    `;
    const expected = Buffer.from(js.serialize({ a: 1, s: 'str', d: new Date(1), n: { x: [1, 2] } })).toString('hex');
    for (let i = 0; i < 20; i++) {
      const { code, message } = await runWorker(source);
      assert.strictEqual(code, 0, `worker ${i} exit code`);
      assert.ok(message && message.ok, `worker ${i} result`);
      assert.strictEqual(message.hex, expected, `worker ${i} bytes`);
    }
    // the process is still healthy
    assert.deepStrictEqual(rs.deserialize(rs.serialize({ still: 'fine' })), { still: 'fine' });
  });

  it('workers terminated while busy, and workers that exit without finishing, do not crash the process', async () => {
    const busy = `
      const { parentPort } = require('node:worker_threads');
      const rs = require(${JSON.stringify(ROOT)});
      parentPort.postMessage('started');
      const doc = { a: 'x'.repeat(1000), b: [1, 2, 3], c: { d: new Date(0) } };
      for (;;) rs.deserialize(rs.serialize(doc));
    `;
    for (let i = 0; i < 4; i++) {
      const w = new Worker(busy, { eval: true });
      await new Promise((resolve, reject) => {
        w.once('message', resolve);
        w.once('error', reject);
      });
      const code = await w.terminate();
      assert.strictEqual(code, 1, 'terminate() exit code');
    }
    const exiting = `
      const rs = require(${JSON.stringify(ROOT)});
      rs.serialize({ a: 1 });
      process.exit(0);
    `;
    for (let i = 0; i < 3; i++) {
      const { code } = await runWorker(exiting);
      assert.strictEqual(code, 0);
    }
    assert.deepStrictEqual(rs.deserialize(rs.serialize({ still: 'fine' })), { still: 'fine' });
  });

  it('short-lived workers that fill the native caches leave no native memory behind', () => {
    // Each worker fills the per-environment caches (decode keys/shapes, encode
    // keys: about 5 MiB of Rust memory) and exits. The environment cleanup hook
    // must free them. Measured: 3 MiB of growth over 12 workers; with the hook's
    // free removed, 58 MiB.
    // Run in a child so this process's own heap does not blur RSS.
    const child = `
      const { Worker } = require('node:worker_threads');
      const worker = ${JSON.stringify(`
        const rs = require(${JSON.stringify(ROOT)});
        const { workerData } = require('node:worker_threads');
        for (let i = 0; i < 20000; i++) {
          const doc = { ['k' + workerData + '_' + i]: i, ['q' + i]: 'v' };
          rs.deserialize(rs.serialize(doc));
          rs.deserialize(rs.serialize(doc));
        }
      `)};
      const run = i => new Promise((resolve, reject) => {
        const w = new Worker(worker, { eval: true, workerData: i });
        w.on('error', reject);
        w.on('exit', code => (code === 0 ? resolve() : reject(new Error('exit ' + code))));
      });
      (async () => {
        for (let i = 0; i < 4; i++) await run(i);
        global.gc();
        const before = process.memoryUsage().rss;
        for (let i = 4; i < 16; i++) await run(i);
        global.gc();
        const after = process.memoryUsage().rss;
        console.log(JSON.stringify({ before, after }));
      })().catch(e => { console.error(e); process.exit(1); });
    `;
    const { spawnSync } = require('node:child_process');
    const r = spawnSync(process.execPath, ['--expose-gc', '-e', child], { encoding: 'utf8', timeout: 240000 });
    assert.strictEqual(r.status, 0, r.stderr);
    const { before, after } = JSON.parse(r.stdout.trim().split('\n').pop());
    const growthMiB = (after - before) / 1048576;
    // Worker isolates themselves leave some allocator slack.
    assert.ok(growthMiB < 24, `RSS grew ${growthMiB.toFixed(1)} MiB over 12 workers (${(before / 1048576).toFixed(1)} -> ${(after / 1048576).toFixed(1)} MiB)`);
  });
});
