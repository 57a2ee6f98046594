#!/usr/bin/env node
'use strict';
// Peak-RSS child: `node bench/memory.js <js-bson|bson-rs> <ops,comma,separated> <document names...>`.
// Loads only the named library, builds the documents, runs the same fixed
// workload (memoryIterations calls per document and operation, then a full gc,
// so the peak reflects the largest working set of one document x operation plus
// its garbage rather than where V8's heap-growth heuristics happened to land)
// and prints JSON with process.resourceUsage().maxRSS (bytes). Run with --expose-gc.
const [libName, opsArg, ...names] = process.argv.slice(2);
const api =
  libName === 'bson-rs' ? (process.env.BENCH_AA === '1' ? require('bson') : require('..')) : libName === 'js-bson' ? require('bson') : null;
if (!api) throw new Error(`unknown library ${libName}`);
const { buildDocuments } = require('./documents');
const { makeSampler, memoryIterations } = require('./workload');

const ops = opsArg.split(',');
const docs = buildDocuments(require('bson'), { only: (name) => names.includes(name) }).filter((d) => names.includes(d.name));
for (const d of docs) {
  d.bytes = api.serialize(d.doc); // both libraries produce the same bytes (checked by run.js)
  if (d.pool) d.poolBytes = d.pool.map((x) => api.serialize(x));
}
// What building the documents left is garbage: collected now, so that where
// V8 happened to collect it does not decide the peak (without this, the RSS
// before the workload moved by ~40 MiB between identical children).
if (typeof globalThis.gc === 'function') globalThis.gc();
const rssBeforeWorkload = process.memoryUsage().rss;
// and the peak starts here (Linux: "5" resets the high-water mark to the
// current RSS), so the transient peak of building the documents, the
// harness's and not the library's, does not count either
let peakReset = false;
try {
  require('node:fs').writeFileSync('/proc/self/clear_refs', '5');
  peakReset = true;
} catch {
  // (elsewhere: the peak of the whole process)
}

const t0 = process.hrtime.bigint();
let calls = 0;
for (const d of docs) {
  for (const op of ops) {
    const n = memoryIterations(d.bytes.length);
    makeSampler(api, op, d)(n);
    calls += n;
    if (typeof globalThis.gc === 'function') globalThis.gc();
  }
}
const workloadMs = Number(process.hrtime.bigint() - t0) / 1e6;
process.stdout.write(
  JSON.stringify({
    maxRSS: process.resourceUsage().maxRSS * 1024,
    peakReset,
    rssBeforeWorkload,
    rssAfterWorkload: process.memoryUsage().rss,
    calls,
    workloadMs: Math.round(workloadMs)
  })
);
