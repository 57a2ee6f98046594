#!/usr/bin/env node
'use strict';
// npm run bench:cold: a process's first calls, where npm run bench (which
// warms both libraries up first) does not look. For every document and
// operation, one child process per library (`cold.js --child DOC OP LIB`)
// builds only that document, loads only that library and times its first N
// calls in one go (workload.js makeSampler(N)): parsing, the interpreter, V8's
// tier-up, bson-rs's key caches and compiled shapes all count; loading the
// module does not (each child times its require() too, reported on its own). N is 1,000 calls, fewer for big documents (about 4 MB of
// BSON per child, at least 10 calls). Each round runs a js-bson child and a
// bson-rs child (which goes first alternates); a round's ratio is js-bson time
// / bson-rs time; reported: the median and range over rounds.
//
// Knobs (environment): BENCH_ROUNDS (9: with 5, the rows near 1.00x changed
// sides from run to run), BENCH_FILTER and BENCH_OPS (regular
// expressions on document and operation names), BENCH_OUT (bench/cold.json;
// the markdown goes next to it as cold.md).
//
// `npm run bench:cold -- --mix`: a process that handles many document
// shapes. Each child builds MIX_DOCUMENTS and calls the operation on them in
// turn (one, the next, ...) for its first N calls, N in MIX_CALLS; rounds as
// above (BENCH_ROUNDS, 5 here; BENCH_OPS; BENCH_OUT, bench/cold-mix.json).
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const v8 = require('node:v8');
const vm = require('node:vm');

const { buildDocuments } = require('./documents');
const { OPERATIONS, makeSampler } = require('./workload');
const { median, geomean } = require('./stats');

const ARGS = process.argv.slice(2);
const env = process.env;

/** First-call count for a document of `bytes` bytes of BSON. */
function callsFor(bytes) {
  return Math.max(10, Math.min(1000, Math.floor(4e6 / Math.max(1, bytes))));
}

/**
 * gc() without --expose-gc on the command line, where the flag made
 * require('bson') ~8 ms slower (19.8 against 11.9 ms, medians of 5 loads);
 * set at run time, fetched, then unset, it made no difference measured.
 */
function gcFunction() {
  v8.setFlagsFromString('--expose-gc');
  const gc = vm.runInNewContext('gc');
  v8.setFlagsFromString('--no-expose-gc');
  return gc;
}

function childMain([name, op, lib, calls]) {
  const gc = gcFunction();
  const t0 = process.hrtime.bigint();
  const bson = require('bson');
  const bsonNs = Number(process.hrtime.bigint() - t0);
  const d = buildDocuments(bson, { only: (n) => n === name }).find((x) => x.name === name);
  if (!d) throw new Error(`--child: no document ${name}`);
  // (no js-bson call before the timing but the one that makes deserialize's
  // input, which warms up its serializer, not its deserializer; the parent
  // sized the document)
  if (op === 'deserialize') {
    d.bytes = bson.serialize(d.doc);
    if (d.pool) d.poolBytes = d.pool.map((x) => bson.serialize(x));
  }
  const n = Number(calls);
  // The harness's own objects (js-bson's module, the document, what building
  // it left) leave the young generation now: else the first scavenge, ~10 ms
  // of copying them, fell inside one library's timed calls or the other's by
  // chance (rounds of one row spanned 0.5-1.5x). Each library's own
  // allocations, its require() included, still make and pay for theirs.
  gc();
  // only the library timed is loaded (bson-rs loads js-bson's classes itself)
  const t1 = process.hrtime.bigint();
  const api = lib === 'rs' ? require('..') : bson;
  // loading: js-bson's require; bson-rs's require on top of it (it loads js-bson itself)
  const loadNs = bsonNs + Number(process.hrtime.bigint() - t1);
  const sampler = makeSampler(api, op, d);
  const ns = sampler(n);
  process.stdout.write(JSON.stringify({ ns, n, loadNs }));
}

// The documents of --mix: the spec documents and small_10_fields (eight
// shapes, 235 B to 6 KiB of BSON), and the call counts it times.
const MIX_DOCUMENTS = ['tweet', 'full_bson', 'mixed_small', 'mixed_medium', 'small_10_fields', 'nested_4', 'deep_bson', 'flat_bson'];
const MIX_CALLS = [2000, 8000, 30000, 100000];

function mixChildMain([op, lib, calls]) {
  const gc = gcFunction();
  const bson = require('bson');
  const docs = buildDocuments(bson, { only: (n) => MIX_DOCUMENTS.includes(n) })
    .filter((d) => MIX_DOCUMENTS.includes(d.name))
    .map((d) => (op === 'deserialize' ? bson.serialize(d.doc) : d.doc));
  if (docs.length !== MIX_DOCUMENTS.length) throw new Error('--mix-child: a document is missing');
  gc();
  const api = lib === 'rs' ? require('..') : bson;
  const n = Number(calls);
  const sink = { value: null };
  // (compiled per operation, as workload.js's samplers)
  // eslint-disable-next-line no-new-func
  const sample = new Function('api', 'docs', 'sink', `return function sample_mix_${op}(n) {
    const t0 = performance.now();
    for (let i = 0; i < n; i++) sink.value = api.${op}(docs[i % docs.length]);
    return (performance.now() - t0) * 1e6;
  };`)(api, docs, sink);
  process.stdout.write(JSON.stringify({ ns: sample(n), n }));
}

function mixMain() {
  const rounds = Number(env.BENCH_ROUNDS) > 0 ? Number(env.BENCH_ROUNDS) : 5;
  const opFilter = env.BENCH_OPS ? new RegExp(env.BENCH_OPS) : null;
  const out = path.resolve(env.BENCH_OUT || path.join(__dirname, 'cold-mix.json'));
  const started = Date.now();
  const results = [];
  for (const op of OPERATIONS.filter((o) => !opFilter || opFilter.test(o))) {
    for (const calls of MIX_CALLS) {
      process.stderr.write(`[cold --mix] ${op} ${calls}\n`);
      results.push({ operation: op, calls, ...timeRounds(rounds, (lib) => ['--mix-child', op, lib, String(calls)]) });
    }
  }
  const machine = `${os.cpus()[0]?.model ?? 'unknown CPU'} (${os.cpus().length} cores), Node.js ${process.version}`;
  const json = { generated: new Date().toISOString(), machine, rounds, documents: MIX_DOCUMENTS, results, durationSec: Math.round((Date.now() - started) / 1000) };
  fs.mkdirSync(path.dirname(out), { recursive: true });
  fs.writeFileSync(out, JSON.stringify(json, null, 2) + '\n');
  const lines = ['| operation | first calls | js-bson | bson-rs | speed-up | range over rounds |', '| --- | ---: | ---: | ---: | ---: | ---: |'];
  for (const r of results) lines.push(`| ${r.operation} | ${r.calls.toLocaleString('en-US')} | ${timeCells(r)} |`);
  const md = [
    "## Cold, many shapes: a process's first calls over eight documents in turn",
    '',
    `Speed-up = js-bson time / bson-rs time for the first N calls of a new process that loaded only that library and calls the operation on ${MIX_DOCUMENTS.join(', ')} in turn. Median over ${rounds} rounds of one child process per library. Measured ${json.generated.slice(0, 10)} with \`npm run bench:cold -- --mix\` on ${machine}.`,
    '',
    ...lines,
    ''
  ].join('\n');
  fs.writeFileSync(out.replace(/\.json$/, '.md'), md);
  process.stdout.write(md + '\n');
  process.stderr.write(`cold --mix: ${out} (${json.durationSec} s)\n`);
}

/** Runs `cold.js ...args` (a child mode) and returns what it printed, parsed. */
function runChild(args) {
  const r = spawnSync(process.execPath, [__filename, ...args], { encoding: 'utf8', maxBuffer: 1 << 20 });
  if (r.status !== 0) throw new Error(`cold child ${args.join(' ')} failed: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

/**
 * `rounds` rounds of one child per library (`argsOf(lib)`: its arguments;
 * which goes first alternates; `onChild(lib, result)` sees each): the medians
 * of their times and of the rounds' ratios js-bson time / bson-rs time.
 */
function timeRounds(rounds, argsOf, onChild = () => {}) {
  const js = [];
  const rs = [];
  const ratios = [];
  for (let round = 0; round < rounds; round++) {
    const got = {};
    for (const lib of round % 2 === 0 ? ['js', 'rs'] : ['rs', 'js']) {
      got[lib] = runChild(argsOf(lib));
      onChild(lib, got[lib]);
    }
    js.push(got.js.ns);
    rs.push(got.rs.ns);
    ratios.push(got.js.ns / got.rs.ns);
  }
  return { jsNs: median(js), rsNs: median(rs), ratio: median(ratios), ratioMin: Math.min(...ratios), ratioMax: Math.max(...ratios), ratios };
}

/** A result's table cells: the two times, the speed-up (bold below 1.00x) and its range over rounds. */
function timeCells(r) {
  const bold = r.ratio < 1 ? '**' : '';
  return `${fmtMs(r.jsNs)} ms | ${fmtMs(r.rsNs)} ms | ${bold}${r.ratio.toFixed(2)}×${bold} | ${r.ratioMin.toFixed(2)}–${r.ratioMax.toFixed(2)}`;
}

function fmtMs(ns) {
  const ms = ns / 1e6;
  return ms >= 100 ? ms.toFixed(0) : ms >= 10 ? ms.toFixed(1) : ms.toFixed(2);
}

function main() {
  const rounds = Number(env.BENCH_ROUNDS) > 0 ? Number(env.BENCH_ROUNDS) : 9;
  const filter = env.BENCH_FILTER ? new RegExp(env.BENCH_FILTER) : null;
  const opFilter = env.BENCH_OPS ? new RegExp(env.BENCH_OPS) : null;
  const out = path.resolve(env.BENCH_OUT || path.join(__dirname, filter || opFilter ? 'cold.partial.json' : 'cold.json'));
  const bson = require('bson');
  const docs = buildDocuments(bson).filter((d) => !filter || filter.test(d.name));
  const ops = OPERATIONS.filter((op) => !opFilter || opFilter.test(op));
  const started = Date.now();
  const results = [];
  const loads = { js: [], rs: [] }; // every child's time to load its library
  for (const d of docs) {
    for (const op of ops) {
      process.stderr.write(`[cold] ${d.name} ${op}\n`);
      const n = callsFor(bson.calculateObjectSize(d.doc));
      const timed = timeRounds(rounds, (lib) => ['--child', d.name, op, lib, String(n)], (lib, r) => loads[lib].push(r.loadNs));
      results.push({ document: d.name, operation: op, calls: n, ...timed });
    }
  }
  const machine = `${os.cpus()[0]?.model ?? 'unknown CPU'} (${os.cpus().length} cores), Node.js ${process.version}`;
  const load = { jsNs: median(loads.js), rsNs: median(loads.rs), children: loads.js.length };
  const json = { generated: new Date().toISOString(), machine, rounds, load, results, durationSec: Math.round((Date.now() - started) / 1000) };
  fs.mkdirSync(path.dirname(out), { recursive: true }); // (BENCH_OUT may name a new directory)
  fs.writeFileSync(out, JSON.stringify(json, null, 2) + '\n');
  const lines = [];
  lines.push('| document | operation | first calls | js-bson | bson-rs | speed-up | range over rounds |');
  lines.push('| --- | --- | ---: | ---: | ---: | ---: | ---: |');
  for (const r of results) lines.push(`| ${r.document} | ${r.operation} | ${r.calls} | ${timeCells(r)} |`);
  for (const op of ops) {
    const own = results.filter((r) => r.operation === op);
    if (own.length) lines.push(`| **geometric mean** | ${op} | | | | **${geomean(own.map((r) => r.ratio)).toFixed(2)}×** | |`);
  }
  const md = [
    '## Cold: a process\'s first calls',
    '',
    `Speed-up = js-bson time / bson-rs time for the first N calls of a new process that loaded only that library and built only that document (N in the table: 1,000, fewer for big documents). Median over ${rounds} rounds of one child process per library; each child collects its garbage (\`gc()\`) after building the document and before loading the library, so that the harness's objects are not scavenged inside the timed calls. Measured ${json.generated.slice(0, 10)} with \`npm run bench:cold\` on ${machine}.`,
    '',
    ...lines,
    '',
    `Loading the module (not in the times above; median over the ${load.children} children of each library): \`require('bson')\` ${fmtMs(load.jsNs)} ms; \`require('bson-rs')\` ${fmtMs(load.rsNs)} ms, js-bson's included (it loads the addon, probes the js-bson copy's classes and runs each codec function on two small documents, so that V8 has compiled them before the first call).`,
    ''
  ].join('\n');
  fs.writeFileSync(out.replace(/\.json$/, '.md'), md);
  process.stdout.write(md + '\n');
  process.stderr.write(`cold: ${out} (${json.durationSec} s)\n`);
}

if (ARGS[0] === '--child') childMain(ARGS.slice(1));
else if (ARGS[0] === '--mix-child') mixChildMain(ARGS.slice(1));
else if (ARGS[0] === '--mix') mixMain();
else main();
