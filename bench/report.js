#!/usr/bin/env node
'use strict';
// Markdown for the README from bench/results.json: ratio matrix, chart,
// detailed ops/s and MB/s (collapsed), memory, machine and method.
//
//   node bench/report.js [results.json] > section.md
// (run.js also writes it to bench/results.md)
const fs = require('node:fs');
const path = require('node:path');

const ratio = (r) => (Number.isFinite(r) ? `${r.toFixed(2)}×` : '–');
const int = (n) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : '–');
const mb = (n) => (!Number.isFinite(n) ? '–' : n >= 100 ? Math.round(n).toLocaleString('en-US') : n.toFixed(1));
const size = (n) => (n >= 1048576 ? `${(n / 1048576).toFixed(n % 1048576 ? 2 : 0)} MiB` : n >= 10240 ? `${Math.round(n / 1024)} KiB` : `${n} B`);
const mib = (n) => `${(n / 1048576).toFixed(1)} MiB`;

function renderMarkdown(report, { chartPath = 'bench/ratios.svg' } = {}) {
  const ops = Object.keys(report.summary);
  const docs = report.documents.filter((d) => report.results.some((r) => r.document === d.name));
  const find = (doc, op) => report.results.find((r) => r.document === doc && r.operation === op);
  const m = report.machine;
  const out = [];

  out.push('## Performance', '');
  if (report.libraries.placeholderFunctions && report.libraries.placeholderFunctions.length) {
    out.push(
      `> **Placeholder build:** bson-rs ${report.libraries.placeholderFunctions.map((f) => `\`${f}\``).join(', ')} ` +
        'were still js-bson\'s own functions in this run, so these ratios only show the harness\'s noise level.',
      ''
    );
  }
  out.push(`![bson-rs vs js-bson speed-up per document](${chartPath})`, '');
  const hasFresh = ops.some((op) => report.summary[op].fresh);
  out.push(
    'Speed-up = js-bson time / bson-rs time for the same call with default options (higher is better for bson-rs; ' +
      '1.00× = no difference). Median over rounds. ' +
      (hasFresh
        ? '*shared*: all documents in one process, one after the other (each library\'s JIT has seen every document ' +
          'before); *fresh*: each document × operation alone in a new process (only that document ever ran there). ' +
          'In the chart, bars are the shared-process speed-ups and ○ marks the fresh-process ones.'
        : ''),
    ''
  );
  const sub = hasFresh ? ['shared', 'fresh'] : [''];
  const cell = (r, which) => ratio(which === 'fresh' ? r?.fresh?.ratio : r?.ratio);
  if (hasFresh) {
    out.push(`| document | BSON size | ${ops.map((op) => `${op} shared | fresh`).join(' | ')} |`);
  } else {
    out.push(`| document | BSON size | ${ops.join(' | ')} |`);
  }
  out.push(`| --- | ---: | ${ops.flatMap(() => sub.map(() => '---:')).join(' | ')} |`);
  for (const d of docs) {
    out.push(`| ${d.name} | ${size(d.bytes)} | ${ops.flatMap((op) => sub.map((w) => cell(find(d.name, op), w))).join(' | ')} |`);
  }
  const sum = (op, w) => (w === 'fresh' ? report.summary[op].fresh : report.summary[op]);
  out.push(`| **geometric mean** | | ${ops.flatMap((op) => sub.map((w) => (sum(op, w) ? `**${ratio(sum(op, w).geomean)}**` : '–'))).join(' | ')} |`);
  out.push(
    `| minimum | | ${ops.flatMap((op) => sub.map((w) => (sum(op, w) ? `${ratio(sum(op, w).min.ratio)} (${sum(op, w).min.document})` : '–'))).join(' | ')} |`
  );
  out.push('');

  if (report.memory) {
    const js = report.memory['js-bson'];
    const rs = report.memory['bson-rs'];
    out.push(
      `**Peak RSS** for the same workload (every document × operation above, about ${report.memory.workloadMiBPerCase ?? 4} MiB of ` +
        'BSON each, one process per library, ' +
        `median of ${js.maxRSSRuns.length} runs): js-bson ${mib(js.maxRSS)}, bson-rs ${mib(rs.maxRSS)} ` +
        `(${ratio(report.memory.ratio)}; target: at or below js-bson's, ≤ 1.00×).`,
      ''
    );
  }

  if (hasFresh) {
    out.push('<details><summary>Fresh-process times (ns per call) and range over rounds</summary>', '');
    out.push('| document | operation | js-bson ns | bson-rs ns | speed-up | range over rounds | shared: js-bson ns | bson-rs ns |');
    out.push('| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |');
    const ns = (n) => (n >= 1e5 ? int(n) : n >= 100 ? Math.round(n).toString() : n.toFixed(1));
    for (const op of ops) {
      for (const d of docs) {
        const r = find(d.name, op);
        if (!r || !r.fresh) continue;
        out.push(
          `| ${d.name} | ${op} | ${ns(r.fresh.nsPerOp['js-bson'])} | ${ns(r.fresh.nsPerOp['bson-rs'])} | ${ratio(r.fresh.ratio)} | ` +
            `${r.fresh.ratioMin.toFixed(2)}–${r.fresh.ratioMax.toFixed(2)} | ${ns(r['js-bson'].nsPerOp)} | ${ns(r['bson-rs'].nsPerOp)} |`
        );
      }
    }
    out.push('', '</details>', '');
  }

  out.push('<details><summary>Operations per second and throughput</summary>', '');
  out.push('| document | operation | js-bson ops/s | bson-rs ops/s | js-bson MB/s | bson-rs MB/s | speed-up | range over rounds |');
  out.push('| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |');
  for (const op of ops) {
    for (const d of docs) {
      const r = find(d.name, op);
      if (!r) continue;
      out.push(
        `| ${d.name} | ${op} | ${int(r['js-bson'].opsPerSec)} | ${int(r['bson-rs'].opsPerSec)} | ` +
          `${mb(r['js-bson'].mbPerSec)} | ${mb(r['bson-rs'].mbPerSec)} | ${ratio(r.ratio)} | ${r.ratioMin.toFixed(2)}–${r.ratioMax.toFixed(2)} |`
      );
    }
  }
  out.push('', 'MB/s counts the BSON bytes of the document (1 MB = 10^6 bytes) for all three operations.', '', '</details>', '');

  out.push('<details><summary>Documents</summary>', '');
  for (const d of docs) out.push(`- \`${d.name}\` (${size(d.bytes)}${d.pool ? ' each' : ''}): ${d.description}`);
  out.push('', '</details>', '');

  out.push(
    `Measured ${report.generated.slice(0, 10)} with \`npm run bench\` on ${m.cpu.model} (${m.cpu.cores} cores), ` +
      `${m.platform}, Node.js ${m.node}, js-bson ${report.libraries['js-bson']}, bson-rs ${report.libraries['bson-rs']}.`,
    '',
    '**Method.** Both libraries run in one process on the same inputs (js-bson\'s classes; deserialize gets js-bson\'s ' +
      'bytes). Before timing, the harness checks that they agree on every document (identical `serialize` bytes, same ' +
      '`calculateObjectSize`, `deserialize` results equal as canonical Extended JSON and in classes and key order) and ' +
      `leaves out any document where they do not. Each sampler is warmed up (JIT) first. Then, for ${report.settings.rounds} ` +
      'rounds, each document × operation starts from a full GC and alternates short samples of the two libraries ' +
      `(~${report.settings.sampleMs} ms of back-to-back calls each, timed by ` +
      `[mitata](https://github.com/evanwashere/mitata)${report.libraries.mitata ? ` ${report.libraries.mitata}` : ''}'s ` +
      '`measure()`, median batch; alternating which goes first) until each has had ' +
      `${report.settings.timeMs} ms. The speed-up of a round is the median of the per-pair ratios js-bson time / bson-rs ` +
      'time; the tables give its median over rounds, and the geometric mean over documents (ops/s and MB/s: median over ' +
      'the quieter half of the rounds, the same rounds for both libraries). Fine ' +
      'interleaving and medians keep the ratio honest on a noisy, shared machine: load bursts hit both libraries alike. ' +
      'Each benchmark repeats the same document, so per-key and per-shape caches are warm, as in a workload of ' +
      'same-shaped documents, except the `newkeys_*` rows: each call takes the next document of a pool built before ' +
      'timing (deserialize: their BSON bytes), and no key repeats within 100,000+ keys, more than any key cache holds. ' +
      (hasFresh
        ? `The *fresh* column repeats each document × operation in a process of its own (build that document, warm up, ` +
          `${report.settings.freshRounds} rounds of the same interleaved pairs), since which documents ran before changes ` +
          'both libraries\' JIT state (inline caches, feedback, optimised code). '
        : '') +
      'Peak RSS is the high-water mark of the resident set (`process.resourceUsage().maxRSS`) of a child process that ' +
      'loads only one of the libraries, builds the documents, collects its garbage and resets the mark (Linux: ' +
      '`/proc/self/clear_refs`), then runs the same fixed workload: the library, the documents and what the workload ' +
      'allocates, not the transient peak of building the documents. Raw numbers: [`bench/results.json`](bench/results.json).',
    ''
  );
  return out.join('\n');
}

module.exports = { renderMarkdown };

if (require.main === module) {
  const input = path.resolve(process.argv[2] || path.join(__dirname, 'results.json'));
  process.stdout.write(renderMarkdown(JSON.parse(fs.readFileSync(input, 'utf8'))));
}
