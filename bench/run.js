#!/usr/bin/env node
'use strict';
// npm run bench: js-bson vs bson-rs, same process, interleaved.
//
// For R rounds, for every document and operation, js-bson and bson-rs are
// sampled alternately: a short sample of one, then of the other (which goes
// first alternates), until each has had BENCH_TIME. Each sample is one call of
// mitata's measure() (mitata 1.x) with a short CPU-time budget (BENCH_SAMPLE,
// 4 ms) and no gc; its value is mitata's median batch (p50, ns per call). Per
// round: each library's median time per call, and the median of the per-pair
// ratios js-bson time / bson-rs time. The report gives medians over rounds. On
// a shared, noisy machine a burst of load hits neighbouring samples of both
// libraries alike, and the medians drop the samples it hit hardest. (One
// measure() per library with a long budget is not interleaved: a burst lands
// on one library only; with identical code it gave per-round ratios of
// 0.14-4.8.)
//
// Environment knobs:
//   BENCH_ROUNDS  rounds (default 9)
//   BENCH_TIME    timed CPU time per library, document, operation and round, ms (default 40; "0.1s" works too)
//   BENCH_SAMPLE  length of one sample (mitata measure() min_cpu_time), ms (default 4)
//   BENCH_FILTER  regular expression selecting documents by name
//   BENCH_OPS     regular expression selecting operations
//   BENCH_MEMORY  0 skips the peak-RSS child processes
//   BENCH_MEMORY_RUNS  child processes per library (default 3; median reported)
//   BENCH_CHART   0 skips rendering bench/ratios.svg
//   BENCH_OUT     results file (default bench/results.json; bench/results.partial.json
//                 when BENCH_FILTER, BENCH_OPS or BENCH_AA is set)
//   BENCH_AA      1 = A/A run: js-bson in both slots (the harness's noise floor)
//   BENCH_FRESH   0 skips the fresh-process pass (same as --no-fresh)
//   BENCH_FRESH_ROUNDS  rounds in each fresh process (default 5)
//   BENCH_DOCUMENTS  a module exporting (bson) => ({ name: document }): your own documents, added to the set
//
// Options: --quick (3 rounds x 20 ms, 2 fresh rounds, one memory run each;
// writes bench/results.partial.json unless BENCH_OUT says otherwise),
// --no-fresh (shared process only).
//
// Fresh-process pass: after the shared-process rounds, every document x
// operation is timed again in a process of its own (`run.js --child DOC OP`,
// one after the other), which builds only that document, warms up both
// libraries on it and runs BENCH_FRESH_ROUNDS rounds of the same interleaved
// pairs. Nothing else ran in that process, so neither library's JIT state
// (inline caches, feedback, optimised code) nor bson-rs's key caches carry
// anything over from other documents.
//
// Output: the table on stdout, progress on stderr, bench/results.json and
// bench/ratios.svg. Exit code 1 if the libraries disagree on any document
// (those documents are not timed and not reported).
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { performance } = require('node:perf_hooks');

const bson = require('bson');
const { buildDocuments, POOL_NAMES } = require('./documents');
const { verifyDocument } = require('./verify');
const { OPERATIONS, MEMORY_MIB, makeCall } = require('./workload');

// BENCH_AA=1: an A/A run, js-bson against itself in the bson-rs slot, to see
// the harness's noise floor on this machine (ratios should be 1.00 +- a few %).
const bsonRs = process.env.BENCH_AA === '1' ? bson : loadBsonRs();

/** require('..'), building the addon first (npm run build) if it is missing. */
function loadBsonRs() {
  try {
    return require('..');
  } catch (err) {
    const root = path.join(__dirname, '..');
    if (fs.existsSync(path.join(root, 'bson_rs.node'))) throw err;
    process.stderr.write('bench: bson_rs.node is missing; building it first (npm run build)\n');
    const build = spawnSync(process.execPath, [path.join(root, 'scripts', 'build.js')], { cwd: root, stdio: 'inherit' });
    if (build.status !== 0) throw new Error('bench: building the addon failed; run `npm run build` and retry', { cause: err });
    for (const key of Object.keys(require.cache)) if (key.startsWith(root) && !key.includes('node_modules')) delete require.cache[key];
    return require('..');
  }
}
const LIBS = [
  { key: 'js', name: 'js-bson', api: bson },
  { key: 'rs', name: 'bson-rs', api: bsonRs }
];

function parseTime(text, fallbackMs) {
  if (text === undefined || text === '') return fallbackMs;
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s)?\s*$/.exec(text);
  if (!m) throw new Error(`BENCH_TIME: cannot parse ${JSON.stringify(text)} (e.g. 100, 100ms, 0.1s)`);
  return Number(m[1]) * (m[2] === 's' ? 1000 : 1);
}

const env = process.env;
const ARGS = process.argv.slice(2);
const CHILD = ARGS[0] === '--child' ? { document: ARGS[1], operation: ARGS[2] } : null;
const QUICK = ARGS.includes('--quick');
for (const a of ARGS) {
  if (!CHILD && !['--quick', '--no-fresh'].includes(a)) throw new Error(`bench: unknown option ${a} (known: --quick, --no-fresh)`);
}
const SETTINGS = {
  rounds: Math.max(1, Number.parseInt(env.BENCH_ROUNDS || (QUICK ? '3' : '9'), 10)),
  timeMs: parseTime(env.BENCH_TIME, QUICK ? 20 : 40),
  sampleMs: parseTime(env.BENCH_SAMPLE, 4),
  filter: env.BENCH_FILTER || null,
  ops: env.BENCH_OPS || null,
  memory: env.BENCH_MEMORY !== '0',
  memoryRuns: Math.max(1, Number.parseInt(env.BENCH_MEMORY_RUNS || (QUICK ? '1' : '3'), 10)),
  chart: env.BENCH_CHART !== '0',
  fresh: env.BENCH_FRESH !== '0' && !ARGS.includes('--no-fresh'),
  freshRounds: Math.max(1, Number.parseInt(env.BENCH_FRESH_ROUNDS || (QUICK ? '2' : '5'), 10)),
  quick: QUICK
};
// JIT warm-up and per-call time estimate, per library, document and operation.
SETTINGS.warmupMs = Math.min(60, Math.max(20, SETTINGS.timeMs / 2));
// A partial run (filter, operations or A/A) does not overwrite the committed
// full results unless BENCH_OUT says so. The chart and markdown go next to the
// results file: results<X>.json -> ratios<X>.svg, results<X>.md.
const PARTIAL = Boolean(SETTINGS.filter || SETTINGS.ops || env.BENCH_AA === '1' || env.BENCH_DOCUMENTS || QUICK);
const OUT = env.BENCH_OUT
  ? path.resolve(env.BENCH_OUT)
  : path.join(__dirname, PARTIAL ? 'results.partial.json' : 'results.json');
const OUT_BASE = path.basename(OUT).replace(/\.json$/i, '');
const CHART_OUT = path.join(path.dirname(OUT), `${OUT_BASE.startsWith('results') ? `ratios${OUT_BASE.slice(7)}` : `${OUT_BASE}.ratios`}.svg`);
const MD_OUT = path.join(path.dirname(OUT), `${OUT_BASE}.md`);

// ---------- progress (stderr) ----------
const tty = process.stderr.isTTY;
let lastProgressLen = 0;
function progress(text, { force = false } = {}) {
  if (tty) {
    process.stderr.write(`\r${text}\x1b[K`);
    lastProgressLen = text.length;
  } else if (force) {
    process.stderr.write(`${text}\n`);
  }
}
function progressDone() {
  if (tty && lastProgressLen) process.stderr.write('\r\x1b[K');
  lastProgressLen = 0;
}
function fmtDuration(sec) {
  sec = Math.max(0, Math.round(sec));
  return sec >= 60 ? `${Math.floor(sec / 60)}m${String(sec % 60).padStart(2, '0')}s` : `${sec}s`;
}

const { median, geomean, exposeGc } = require('./stats');

function cpuModel() {
  const cpus = os.cpus();
  return { model: cpus[0] ? cpus[0].model.trim() : 'unknown', cores: cpus.length };
}

/** A dependency's version, from the package.json above its entry point (it may not export ./package.json). */
function packageVersion(name) {
  let dir = path.dirname(require.resolve(name));
  for (;;) {
    const file = path.join(dir, 'package.json');
    if (fs.existsSync(file)) {
      const pkg = JSON.parse(fs.readFileSync(file, 'utf8'));
      if (pkg.name === name) return pkg.version;
    }
    const up = path.dirname(dir);
    if (up === dir) return 'unknown';
    dir = up;
  }
}

function isPlaceholder() {
  return ['serialize', 'deserialize', 'calculateObjectSize'].filter((op) => bsonRs[op] === bson[op]);
}

// ---------- timing ----------
// Every sample is timed by mitata's low-level measure() (mitata 1.x, ESM,
// loaded in main()). One measure() call is one short sample: mitata's own
// inner loop runs batches of back-to-back calls for about SETTINGS.sampleMs of
// timed CPU time; the sample's value is its median batch, ns per call
// (stats.p50; more robust to a burst inside the sample than stats.avg: in A/A
// runs p50 kept every ratio within 0.99-1.03, avg within 0.98-1.03).
// Each measure() call costs ~10-20 ms of wall time outside the timed loop on
// this machine (mostly allocating its 2^20-entry samples array), which is why
// samples are 4 ms rather than the 1 ms of the earlier hand-written loop:
// 1 ms samples would spend >90 % of the run in that overhead for little gain
// in interleaving (pairs are ~30 ms apart either way).
let mitata = null;
async function loadMitata() {
  mitata = await import('mitata');
}

let loopId = 0;
/**
 * measure() options for one (library, document, operation), given its
 * estimated ns per call. No gc (run.js does one gc() per document x operation
 * and round), no inner gc. warmup_samples: mitata makes one untimed call first,
 * and one more warm-up call lets it switch to batch mode (a batch of
 * batch_samples calls per timed sample) when a call takes <= 65 us; calls
 * slower than that are timed one by one. batch_samples is calibrated so that a
 * batch takes about a sixteenth of the sample (at least 4 calls). min_samples 1 and min_cpu_time =
 * the sample length: mitata stops after the first timed batch past it.
 * max_samples is never reached; it is a per-sampler number only so that the
 * source of mitata's compiled loop differs per sampler (V8 caches functions
 * compiled from identical source, feedback included) and its call site
 * `$fn()` stays monomorphic, as in a hand-written loop per sampler.
 */
function mitataOptions(nsPerCall, sampleMs) {
  const sampleNs = sampleMs * 1e6;
  const batch = nsPerCall <= 25_000;
  const unroll = 4;
  const batchSamples = Math.max(unroll, Math.round(sampleNs / 16 / nsPerCall / unroll) * unroll);
  return {
    gc: false,
    inner_gc: false,
    min_samples: 1,
    max_samples: 1e9 + ++loopId,
    min_cpu_time: sampleNs,
    warmup_samples: batch ? 1 : 0,
    batch_unroll: unroll,
    batch_samples: batchSamples
  };
}

/** One sample: median-batch ns per call over about sampleMs of back-to-back calls, and the timed ns. */
async function sample(fn, opts) {
  const st = await mitata.measure(fn, { ...opts });
  return { ns: st.p50, timed: st.avg * st.ticks };
}

/**
 * JIT warm-up and calibration, with mitata measure() too: about `ms` of CPU
 * time in batches of 4 calls, then about `ms` with the calibrated options;
 * returns the second run's mean ns per call.
 */
async function warmUp(fn, ms) {
  const first = await mitata.measure(fn, {
    gc: false,
    min_samples: 1,
    max_samples: 1e9 + ++loopId,
    min_cpu_time: ms * 1e6,
    warmup_samples: 1,
    batch_unroll: 4,
    batch_samples: 4
  });
  const opts = mitataOptions(first.p50, ms);
  return (await mitata.measure(fn, opts)).avg;
}

/**
 * One round of one document x operation: alternating samples of the two
 * libraries (pairs; which goes first alternates), each sample about
 * sampleMs of timed calls, until both have had timeMs of timed calls (and at
 * least MIN_PAIRS pairs; after MIN_PAIRS, at most 8 x timeMs + 40 ms per pair
 * of wall time in all, for mitata's per-call overhead and slow rounds). A burst
 * of load from other processes hits neighbouring samples of both libraries
 * alike, and medians drop the samples it hit hardest.
 */
const MIN_PAIRS = 9;
async function measurePair(c, round, gc) {
  gc();
  const js = [];
  const rs = [];
  const ratios = [];
  const timed = { js: 0, rs: 0 };
  const wallCap = 2 * 4 * SETTINGS.timeMs + 40 * MIN_PAIRS;
  const start = performance.now();
  for (let k = 0; k < 100000; k++) {
    if (k >= MIN_PAIRS && ((timed.js >= SETTINGS.timeMs * 1e6 && timed.rs >= SETTINGS.timeMs * 1e6) || performance.now() - start >= wallCap)) break;
    let tj;
    let tr;
    if ((k + round) % 2 === 0) {
      tj = await sample(c.fns.js, c.opts.js);
      tr = await sample(c.fns.rs, c.opts.rs);
    } else {
      tr = await sample(c.fns.rs, c.opts.rs);
      tj = await sample(c.fns.js, c.opts.js);
    }
    timed.js += tj.timed;
    timed.rs += tr.timed;
    js.push(tj.ns);
    rs.push(tr.ns);
    ratios.push(tj.ns / tr.ns);
  }
  return { js: median(js), rs: median(rs), ratio: median(ratios), pairs: ratios.length };
}

/** BSON inputs of a document: d.bytes (and d.poolBytes for a pool), js-bson's bytes. */
function prepareInputs(d) {
  d.bytes = bson.serialize(d.doc);
  if (d.pool) d.poolBytes = d.pool.map((x) => bson.serialize(x));
}

/** A fresh child's rounds -> the result's `fresh` entry. */
function summarizeFresh(child) {
  const ratios = child.rounds.map((r) => r.ratio);
  return {
    ratio: median(ratios),
    ratioMin: Math.min(...ratios),
    ratioMax: Math.max(...ratios),
    ratioRounds: ratios.map((r) => Math.round(r * 1000) / 1000),
    nsPerOp: { 'js-bson': median(child.rounds.map((r) => r.js)), 'bson-rs': median(child.rounds.map((r) => r.rs)) },
    warmNs: child.warmNs
  };
}

/**
 * `run.js --child DOC OP`: one document x operation alone in this process.
 * Builds only that document (no agreement check: the parent did it), warms up
 * both libraries, runs SETTINGS.rounds rounds of interleaved pairs and prints
 * { rounds: [{ js, rs, ratio, pairs }], warmNs } as JSON on stdout.
 */
async function childMain() {
  const gc = exposeGc();
  await loadMitata();
  const { document: name, operation: op } = CHILD;
  const d = buildDocuments(bson, { only: (n) => n === name }).find((x) => x.name === name);
  if (!d) throw new Error(`--child: no document ${name}`);
  if (!OPERATIONS.includes(op)) throw new Error(`--child: no operation ${op}`);
  prepareInputs(d);
  const c = { doc: d, op, fns: {}, warmNs: {}, opts: {} };
  for (const lib of LIBS) c.fns[lib.key] = makeCall(lib.api, op, d);
  for (const lib of LIBS) {
    c.warmNs[lib.key] = await warmUp(c.fns[lib.key], SETTINGS.warmupMs);
    c.opts[lib.key] = mitataOptions(c.warmNs[lib.key], SETTINGS.sampleMs);
  }
  const rounds = [];
  for (let round = 0; round < SETTINGS.rounds; round++) rounds.push(await measurePair(c, round % 2, gc));
  process.stdout.write(JSON.stringify({ rounds, warmNs: c.warmNs }));
}

async function main() {
  const started = Date.now();
  const gc = exposeGc();
  await loadMitata();
  const filter = SETTINGS.filter ? new RegExp(SETTINGS.filter) : null;
  const opFilter = SETTINGS.ops ? new RegExp(SETTINGS.ops) : null;
  const operations = OPERATIONS.filter((op) => !opFilter || opFilter.test(op));

  const placeholder = isPlaceholder();
  if (placeholder.length) {
    process.stderr.write(
      `note: bson-rs ${placeholder.join(', ')} ${placeholder.length > 1 ? "are still js-bson's own functions" : "is still js-bson's own function"} (placeholder build or BENCH_AA=1); expect ratios of ~1.0x\n`
    );
  }

  // ---------- documents, agreement check, warm-up and rounds, in two phases ----------
  // Phase 1: the documents with fixed keys. Phase 2: the newkeys_* pools, built
  // only then. 100k+ objects with distinct keys in the heap (and deserializing
  // them) slow js-bson's deserialize of the small and nested documents down (in
  // a full run with the pools built and warmed up first: up to 4x, nested_4
  // 4.3 -> 17.6 us per call, while bson-rs's were unchanged), which would
  // inflate phase 1's shared-process ratios; the fresh-process pass shows each
  // document without any of that.
  const selected = (name) => !filter || filter.test(name);
  const phases = [(name) => selected(name) && !POOL_NAMES.includes(name), (name) => selected(name) && POOL_NAMES.includes(name)];
  const docs = [];
  const mismatches = [];
  const cases = []; // one per document x operation
  const perRound = []; // per case, one measurePair() result per round
  for (let phase = 0; phase < phases.length; phase++) {
    const pick = phases[phase];
    const all = buildDocuments(bson, { only: pick }).filter((d) => pick(d.name));
    if (all.length === 0) continue;
    const phaseDocs = [];
    for (const d of all) {
      progress(`checking ${d.name}`);
      // A pool is checked on 64 of its members, spread over it.
      const members = d.pool ? Array.from({ length: 64 }, (_, k) => d.pool[Math.floor((k * d.pool.length) / 64)]) : [d.doc];
      const problems = members.flatMap((doc) => verifyDocument(bson, bsonRs, doc));
      if (problems.length) {
        for (const p of problems.slice(0, 3)) mismatches.push({ document: d.name, operation: p.operation, error: p.error });
        continue;
      }
      prepareInputs(d);
      phaseDocs.push(d);
    }
    progressDone();
    for (const m of mismatches) {
      if (all.some((d) => d.name === m.document)) process.stderr.write(`MISMATCH ${m.document} ${m.operation}: ${m.error} (document not reported)\n`);
    }

    // samplers, warm-up, calls per sample
    const phaseCases = [];
    for (const d of phaseDocs) {
      for (const op of operations) {
        const c = { doc: d, op, fns: {}, warmNs: {}, opts: {} };
        for (const lib of LIBS) c.fns[lib.key] = makeCall(lib.api, op, d);
        phaseCases.push(c);
      }
    }
    for (const c of phaseCases) {
      for (const lib of LIBS) {
        progress(`[warm-up] ${c.op} ${c.doc.name} (${lib.name})`);
        const ns = await warmUp(c.fns[lib.key], SETTINGS.warmupMs);
        c.warmNs[lib.key] = ns;
        c.opts[lib.key] = mitataOptions(ns, SETTINGS.sampleMs);
      }
    }
    progressDone();

    // rounds
    const phaseRounds = phaseCases.map(() => []);
    const total = phaseCases.length * SETTINGS.rounds;
    let done = 0;
    const roundsStart = performance.now();
    const label = phase === 0 ? '' : ' pools';
    for (let round = 0; round < SETTINGS.rounds; round++) {
      progress(`[round ${round + 1}/${SETTINGS.rounds}${label}]`, { force: true });
      for (let i = 0; i < phaseCases.length; i++) {
        const c = phaseCases[i];
        const elapsed = (performance.now() - roundsStart) / 1000;
        const eta = done ? (elapsed / done) * (total - done) : NaN;
        progress(`[round ${round + 1}/${SETTINGS.rounds}${label}] ${c.op} ${c.doc.name}` + (Number.isFinite(eta) ? `  ~${fmtDuration(eta)} left` : ''));
        phaseRounds[i].push(await measurePair(c, (round + i) % 2, gc));
        done++;
      }
    }
    progressDone();
    docs.push(...phaseDocs);
    cases.push(...phaseCases);
    perRound.push(...phaseRounds);
  }
  if (docs.length === 0 && mismatches.length === 0) throw new Error(`BENCH_FILTER ${SETTINGS.filter} selects no document`);

  // ---------- fresh processes: each document x operation in a process of its own ----------
  const fresh = cases.map(() => null);
  if (SETTINGS.fresh) {
    const freshStart = performance.now();
    for (let i = 0; i < cases.length; i++) {
      const c = cases[i];
      const elapsed = (performance.now() - freshStart) / 1000;
      const eta = i ? (elapsed / i) * (cases.length - i) : NaN;
      progress(`[fresh ${i + 1}/${cases.length}] ${c.op} ${c.doc.name}` + (Number.isFinite(eta) ? `  ~${fmtDuration(eta)} left` : ''), { force: i === 0 });
      const child = spawnSync(process.execPath, [__filename, '--child', c.doc.name, c.op], {
        encoding: 'utf8',
        maxBuffer: 1 << 20,
        env: { ...process.env, BENCH_ROUNDS: String(SETTINGS.freshRounds), BENCH_TIME: String(SETTINGS.timeMs), BENCH_SAMPLE: String(SETTINGS.sampleMs) }
      });
      if (child.status !== 0) throw new Error(`fresh child for ${c.op} ${c.doc.name} failed:\n${child.stderr}`);
      fresh[i] = JSON.parse(child.stdout);
    }
    progressDone();
  }

  // ---------- memory (child processes) ----------
  let memory = null;
  if (SETTINGS.memory && docs.length) {
    // Peak RSS varies by several % between identical runs, so each library's
    // child runs SETTINGS.memoryRuns times (alternating) and the median counts.
    const runs = { 'js-bson': [], 'bson-rs': [] };
    for (let run = 0; run < SETTINGS.memoryRuns; run++) {
      for (const lib of LIBS) {
        progress(`[memory ${run + 1}/${SETTINGS.memoryRuns}] ${lib.name} workload in a child process`, { force: true });
        const child = spawnSync(
          process.execPath,
          ['--expose-gc', path.join(__dirname, 'memory.js'), lib.name, operations.join(','), ...docs.map((d) => d.name)],
          { encoding: 'utf8', maxBuffer: 1 << 20 }
        );
        if (child.status !== 0) throw new Error(`memory child for ${lib.name} failed:\n${child.stderr}`);
        runs[lib.name].push(JSON.parse(child.stdout));
      }
    }
    progressDone();
    memory = {};
    for (const name of Object.keys(runs)) {
      const r = runs[name];
      memory[name] = {
        maxRSS: median(r.map((x) => x.maxRSS)),
        rssBeforeWorkload: median(r.map((x) => x.rssBeforeWorkload)),
        maxRSSRuns: r.map((x) => x.maxRSS),
        calls: r[0].calls,
        workloadMs: median(r.map((x) => x.workloadMs))
      };
    }
    memory.ratio = memory['bson-rs'].maxRSS / memory['js-bson'].maxRSS;
    memory.workloadMiBPerCase = MEMORY_MIB;
  }

  // ---------- results ----------
  const results = cases.map((c, i) => {
    const rounds = perRound[i];
    const ratios = rounds.map((r) => r.ratio);
    const bytes = c.doc.bytes.length;
    // ops/s and MB/s: median over the quieter half of the rounds, ranked by
    // the geometric mean of both libraries' times (the same rounds for both).
    // On a shared machine whole rounds run at half speed; taking each
    // library's median over all rounds independently can land one library in
    // a fast round and the other in a slow one.
    const quiet = [...rounds].sort((a, b) => a.js * a.rs - b.js * b.rs).slice(0, Math.ceil(rounds.length / 2));
    const lib = (key) => {
      const ns = rounds.map((r) => r[key]);
      const opsPerSec = median(quiet.map((r) => 1e9 / r[key]));
      return {
        opsPerSec,
        mbPerSec: (opsPerSec * bytes) / 1e6,
        nsPerOp: median(ns),
        nsPerOpRounds: ns.map((t) => Math.round(t * 10) / 10),
        callsPerBatch: c.opts[key].warmup_samples ? c.opts[key].batch_samples : 1
      };
    };
    return {
      document: c.doc.name,
      operation: c.op,
      bytes,
      'js-bson': lib('js'),
      'bson-rs': lib('rs'),
      ratio: median(ratios),
      ratioMin: Math.min(...ratios),
      ratioMax: Math.max(...ratios),
      ratioRounds: ratios.map((r) => Math.round(r * 1000) / 1000),
      pairsPerRound: median(rounds.map((r) => r.pairs)),
      fresh: fresh[i] && summarizeFresh(fresh[i])
    };
  });
  const summary = {};
  for (const op of operations) {
    const rows = results.filter((r) => r.operation === op);
    if (!rows.length) continue;
    const min = rows.reduce((a, r) => (r.ratio < a.ratio ? r : a));
    const max = rows.reduce((a, r) => (r.ratio > a.ratio ? r : a));
    summary[op] = {
      geomean: geomean(rows.map((r) => r.ratio)),
      min: { ratio: min.ratio, document: min.document },
      max: { ratio: max.ratio, document: max.document }
    };
    const freshRows = rows.filter((r) => r.fresh);
    if (freshRows.length) {
      const fmin = freshRows.reduce((a, r) => (r.fresh.ratio < a.fresh.ratio ? r : a));
      const fmax = freshRows.reduce((a, r) => (r.fresh.ratio > a.fresh.ratio ? r : a));
      summary[op].fresh = {
        geomean: geomean(freshRows.map((r) => r.fresh.ratio)),
        min: { ratio: fmin.fresh.ratio, document: fmin.document },
        max: { ratio: fmax.fresh.ratio, document: fmax.document }
      };
    }
  }

  const pkg = require('../package.json');
  const report = {
    generated: new Date().toISOString(),
    machine: {
      node: process.version,
      v8: process.versions.v8,
      platform: `${process.platform} ${os.release()}`,
      arch: process.arch,
      cpu: cpuModel(),
      totalMemoryMiB: Math.round(os.totalmem() / 1048576),
      loadavg: os.loadavg().map((x) => Math.round(x * 100) / 100)
    },
    libraries: {
      'js-bson': packageVersion('bson'),
      mitata: packageVersion('mitata'),
      'bson-rs': pkg.version,
      placeholderFunctions: placeholder
    },
    settings: { ...SETTINGS, partial: PARTIAL },
    method:
      'Same process, same inputs. Per round and document x operation (after a gc()), js-bson and bson-rs are sampled ' +
      `alternately (pairs, alternating which goes first), each sample one mitata ${packageVersion('mitata')} measure() ` +
      `of ~${SETTINGS.sampleMs} ms of back-to-back calls in batches (no gc; value: median batch, ns/call), ` +
      `until each library has had ${SETTINGS.timeMs} ms of timed calls. Round values: median ns/call of each library and median of the ` +
      'per-pair ratios js-bson time / bson-rs time. Reported ratio: median over rounds; geomean over documents. ' +
      'Reported ops/s and MB/s: median over the quieter half of the rounds (ranked by the geometric mean of both ' +
      'libraries\' times, the same rounds for both). ' +
      'MB/s counts the BSON bytes of the document (1 MB = 1e6 bytes). ' +
      (SETTINGS.fresh
        ? `Fresh-process column: each document x operation again in a process of its own (nothing else run there), ` +
          `the same warm-up and interleaved pairs, ${SETTINGS.freshRounds} rounds; its ratio is the median over those rounds.`
        : 'No fresh-process pass in this run.'),
    documents: docs.map((d) => ({ name: d.name, description: d.description, bytes: d.bytes.length, ...(d.pool ? { pool: d.pool.length } : {}) })),
    results,
    summary,
    memory,
    mismatches,
    durationSec: Math.round((Date.now() - started) / 1000)
  };
  fs.mkdirSync(path.dirname(OUT), { recursive: true }); // (BENCH_OUT may name a new directory)
  fs.writeFileSync(OUT, `${JSON.stringify(report, null, 2)}\n`);

  process.stdout.write(formatTable(report));
  process.stdout.write(`\nresults: ${path.relative(process.cwd(), OUT)}`);
  if (SETTINGS.chart) {
    const { writeChart } = require('./chart');
    const svg = writeChart(report, CHART_OUT);
    process.stdout.write(`, chart: ${path.relative(process.cwd(), svg)}`);
  }
  fs.writeFileSync(MD_OUT, require('./report').renderMarkdown(report));
  process.stdout.write(`, markdown: ${path.relative(process.cwd(), MD_OUT)}`);
  process.stdout.write(`  (${fmtDuration(report.durationSec)})\n`);
  if (mismatches.length) {
    process.stdout.write(`\n${mismatches.length} mismatch(es); not reported: ${[...new Set(mismatches.map((m) => m.document))].join(', ')}\n`);
    process.exitCode = 1;
  }
}

// ---------- table ----------
function fmtInt(n) {
  if (!Number.isFinite(n)) return '-';
  return Math.round(n).toLocaleString('en-US');
}
function fmtMB(n) {
  if (!Number.isFinite(n)) return '-';
  return n >= 100 ? Math.round(n).toLocaleString('en-US') : n.toFixed(1);
}
function fmtRatio(r) {
  return Number.isFinite(r) ? `${r.toFixed(2)}x` : '-';
}
function fmtBytes(n) {
  if (n >= 1048576) return `${(n / 1048576).toFixed(n % 1048576 ? 2 : 0)} MiB`;
  if (n >= 10240) return `${Math.round(n / 1024)} KiB`;
  return `${n} B`;
}
function fmtMiB(bytes) {
  return `${(bytes / 1048576).toFixed(1)} MiB`;
}

function renderTable(header, rows, align) {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)));
  const line = (cells) =>
    cells.map((c, i) => (align[i] === 'r' ? String(c).padStart(widths[i]) : String(c).padEnd(widths[i]))).join('  ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

function formatTable(report) {
  const out = [];
  const m = report.machine;
  out.push(
    `bson-rs ${report.libraries['bson-rs']} vs js-bson ${report.libraries['js-bson']} · node ${m.node} · ${m.cpu.model} (${m.cpu.cores} cores) · ` +
      `${report.settings.rounds} rounds x ${report.settings.timeMs} ms`
  );
  if (report.libraries.placeholderFunctions.length) {
    out.push(`NOTE: bson-rs ${report.libraries.placeholderFunctions.join(', ')} = js-bson's own functions (placeholder build)`);
  }
  out.push('ratio = js-bson time / bson-rs time (> 1 means bson-rs is faster): median over rounds, [min-max] over rounds');
  out.push('ops/s, MB/s: median over the quieter half of the rounds; MB/s = BSON bytes of the document / time\n');
  const header = ['document', 'size', 'operation', 'js-bson ops/s', 'bson-rs ops/s', 'js-bson MB/s', 'bson-rs MB/s', 'ratio', '[min-max]', 'fresh', '[min-max]'];
  const align = ['l', 'r', 'l', 'r', 'r', 'r', 'r', 'r', 'l', 'r', 'l'];
  const rows = [];
  for (const op of Object.keys(report.summary)) {
    for (const r of report.results.filter((x) => x.operation === op)) {
      rows.push([
        r.document,
        fmtBytes(r.bytes),
        op,
        fmtInt(r['js-bson'].opsPerSec),
        fmtInt(r['bson-rs'].opsPerSec),
        fmtMB(r['js-bson'].mbPerSec),
        fmtMB(r['bson-rs'].mbPerSec),
        fmtRatio(r.ratio),
        `[${r.ratioMin.toFixed(2)}-${r.ratioMax.toFixed(2)}]`,
        r.fresh ? fmtRatio(r.fresh.ratio) : '-',
        r.fresh ? `[${r.fresh.ratioMin.toFixed(2)}-${r.fresh.ratioMax.toFixed(2)}]` : ''
      ]);
    }
  }
  out.push(renderTable(header, rows, align));
  out.push('');
  const sumRows = Object.entries(report.summary).map(([op, s]) => [
    op,
    fmtRatio(s.geomean),
    `${fmtRatio(s.min.ratio)} (${s.min.document})`,
    `${fmtRatio(s.max.ratio)} (${s.max.document})`,
    s.fresh ? fmtRatio(s.fresh.geomean) : '-',
    s.fresh ? `${fmtRatio(s.fresh.min.ratio)} (${s.fresh.min.document})` : '-'
  ]);
  out.push(renderTable(['operation', 'geomean ratio', 'min ratio', 'max ratio', 'fresh geomean', 'fresh min'], sumRows, ['l', 'r', 'l', 'l', 'r', 'l']));
  if (report.memory) {
    const js = report.memory['js-bson'];
    const rs = report.memory['bson-rs'];
    out.push('');
    out.push(
      `peak RSS (same workload, one child process each): js-bson ${fmtMiB(js.maxRSS)}, bson-rs ${fmtMiB(rs.maxRSS)}, ` +
        `ratio ${report.memory.ratio.toFixed(3)} (target <= 1.00)`
    );
  }
  return `${out.join('\n')}\n`;
}

module.exports = { formatTable };

if (require.main === module) {
  (CHILD ? childMain() : main()).catch((err) => {
    progressDone();
    console.error(err);
    process.exit(2);
  });
}
