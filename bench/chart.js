#!/usr/bin/env node
'use strict';
// Renders bench/results.json to bench/ratios.svg: per operation (one panel
// each, side by side, same log scale), a horizontal bar per document from 1.0x
// to its median ratio (js-bson time / bson-rs time), the geometric mean, a line
// at 1.0x and the target of the operation. Plain SVG, light background, system
// font: it renders the same on GitHub and in any viewer.
//
//   node bench/chart.js [results.json] [out.svg]
const fs = require('node:fs');
const path = require('node:path');

// The geometric-mean goals of issue #11.
const TARGETS = { deserialize: 4, serialize: 2, calculateObjectSize: 3 };
const OP_LABEL = { deserialize: 'deserialize', serialize: 'serialize', calculateObjectSize: 'calculateObjectSize' };
const COLORS = { faster: '#2f7ed8', slower: '#d9534f', geomean: '#1b4f8a', grid: '#e4e7eb', axis: '#8a929b', text: '#24292f', muted: '#57606a', target: '#2da44e' };
const FONT = "-apple-system, BlinkMacSystemFont, 'Segoe UI', Helvetica, Arial, sans-serif";

const esc = (s) => String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const fmt = (r) => `${r >= 10 ? r.toFixed(1) : r.toFixed(2)}×`;

function niceTicks(lo, hi) {
  const candidates = [0.05, 0.1, 0.25, 0.5, 1, 1.5, 2, 3, 5, 10, 20, 50, 100];
  return candidates.filter((t) => t >= lo * 0.999 && t <= hi * 1.001);
}

function renderChart(report) {
  const ops = Object.keys(report.summary);
  const docs = [];
  for (const r of report.results) if (!docs.includes(r.document)) docs.push(r.document);
  const ratio = (doc, op) => {
    const r = report.results.find((x) => x.document === doc && x.operation === op);
    return r ? r.ratio : null;
  };
  const freshRatio = (doc, op) => {
    const r = report.results.find((x) => x.document === doc && x.operation === op);
    return r && r.fresh ? r.fresh.ratio : null;
  };
  const hasFresh = report.results.some((r) => r.fresh);

  const labelW = 150;
  const panelW = 250;

  // Shared log scale: at least 0.5x..4x, widened to the data (and targets).
  const values = report.results.flatMap((r) => [r.ratio, r.fresh?.ratio]).filter((r) => r > 0 && Number.isFinite(r));
  for (const op of ops) if (TARGETS[op]) values.push(TARGETS[op]);
  // The scale is the smallest of a few nice ranges that leaves ~42 px beyond
  // the extreme bars for their value labels.
  const vmin = Math.min(1, ...values);
  const vmax = Math.max(1, ...values);
  let lo;
  let hi;
  const fits = (l, h) => {
    const px = (v) => ((Math.log(v) - Math.log(l)) / (Math.log(h) - Math.log(l))) * panelW;
    return px(vmin) >= 42 && panelW - px(vmax) >= 42;
  };
  search: for (const h of [4, 5, 10, 20, 50, 100, 1000]) {
    for (const l of [0.5, 0.25, 0.1, 0.05, 0.01]) {
      if (fits(l, h)) {
        lo = l;
        hi = h;
        break search;
      }
    }
  }
  if (lo === undefined) {
    lo = vmin / 2;
    hi = vmax * 2;
  }
  const ticks = niceTicks(lo, hi);

  const gap = 44;
  const rowH = 20;
  const top = 88;
  const rows = docs.length + 1; // + geomean
  const plotH = rows * rowH + 8;
  const width = labelW + ops.length * panelW + (ops.length - 1) * gap + 20;
  const height = top + plotH + (report.memory ? 70 : 52);
  const x = (panel, r) => {
    const x0 = labelW + panel * (panelW + gap);
    return x0 + ((Math.log(r) - Math.log(lo)) / (Math.log(hi) - Math.log(lo))) * panelW;
  };
  const rowY = (i) => top + 4 + i * rowH + (i === docs.length ? 6 : 0);

  const s = [];
  s.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="${esc(FONT)}" font-size="12">`);
  s.push(`<rect width="${width}" height="${height}" fill="#ffffff"/>`);
  const m = report.machine;
  const title = 'bson-rs vs js-bson: speed-up (js-bson time / bson-rs time, median of per-round ratios)';
  s.push(`<text x="16" y="24" font-size="15" font-weight="600" fill="${COLORS.text}">${esc(title)}</text>`);
  const sub =
    `bson-rs ${report.libraries['bson-rs']} vs js-bson ${report.libraries['js-bson']} · node ${m.node} · ${m.cpu.model} (${m.cpu.cores} cores) · ` +
    `${report.settings.rounds} rounds · ${report.generated.slice(0, 10)}` +
    (report.libraries.placeholderFunctions && report.libraries.placeholderFunctions.length ? ' · PLACEHOLDER BUILD (codec = js-bson)' : '');
  s.push(`<text x="16" y="42" fill="${COLORS.muted}">${esc(sub)}</text>`);

  // Row labels and zebra stripes.
  docs.forEach((doc, i) => {
    const y = rowY(i);
    if (i % 2 === 0) s.push(`<rect x="10" y="${y}" width="${width - 20}" height="${rowH}" fill="#f6f8fa"/>`);
    s.push(`<text x="${labelW - 10}" y="${y + rowH / 2 + 4}" text-anchor="end" fill="${COLORS.text}">${esc(doc)}</text>`);
  });
  const gy = rowY(docs.length);
  s.push(`<line x1="10" x2="${width - 10}" y1="${gy - 3}" y2="${gy - 3}" stroke="${COLORS.axis}" stroke-width="0.8"/>`);
  s.push(`<text x="${labelW - 10}" y="${gy + rowH / 2 + 4}" text-anchor="end" font-weight="600" fill="${COLORS.text}">geometric mean</text>`);

  ops.forEach((op, p) => {
    const x0 = labelW + p * (panelW + gap);
    const yTop = top;
    const yBot = top + plotH;
    s.push(`<text x="${x0 + panelW / 2}" y="${top - 24}" text-anchor="middle" font-size="13" font-weight="600" fill="${COLORS.text}">${esc(OP_LABEL[op] || op)}</text>`);
    let lastLabel = -Infinity;
    for (const t of ticks) {
      const tx = x(p, t);
      s.push(`<line x1="${tx}" x2="${tx}" y1="${yTop}" y2="${yBot}" stroke="${COLORS.grid}" stroke-width="1"/>`);
      if (tx - lastLabel < 26 && t !== 1) continue; // too close to the previous label
      lastLabel = tx;
      s.push(`<text x="${tx}" y="${yBot + 14}" text-anchor="middle" font-size="10.5" fill="${COLORS.muted}">${t}×</text>`);
    }
    const target = TARGETS[op];
    if (target) {
      const tx = x(p, target);
      s.push(`<line x1="${tx}" x2="${tx}" y1="${yTop - 16}" y2="${yBot}" stroke="${COLORS.target}" stroke-width="1.5" stroke-dasharray="5 3"/>`);
      s.push(`<text x="${tx + 3}" y="${yTop - 6}" font-size="10.5" fill="${COLORS.target}">target ${target}×</text>`);
    }
    const one = x(p, 1);
    const bar = (i, r, color, bold) => {
      const y = rowY(i) + 4;
      const h = rowH - 8;
      const xr = x(p, r);
      const bx = Math.min(one, xr);
      const bw = Math.max(1, Math.abs(xr - one));
      s.push(`<rect x="${bx.toFixed(1)}" y="${y}" width="${bw.toFixed(1)}" height="${h}" rx="2" fill="${color}"/>`);
      const right = r >= 1;
      const lx = right ? Math.max(xr, one) + 4 : Math.min(xr, one) - 4;
      s.push(
        `<text x="${lx.toFixed(1)}" y="${y + h / 2 + 4}" text-anchor="${right ? 'start' : 'end'}" font-size="11"${bold ? ' font-weight="600"' : ''} fill="${COLORS.text}" stroke="#ffffff" stroke-width="3" paint-order="stroke">${fmt(r)}</text>`
      );
    };
    docs.forEach((doc, i) => {
      const r = ratio(doc, op);
      if (r == null) return;
      bar(i, r, r >= 1 ? COLORS.faster : COLORS.slower, false);
    });
    // Fresh-process speed-ups: a ring on each row.
    docs.forEach((doc, i) => {
      const r = freshRatio(doc, op);
      if (r == null) return;
      s.push(`<circle cx="${x(p, r).toFixed(1)}" cy="${rowY(i) + rowH / 2}" r="3.6" fill="#ffffff" stroke="${COLORS.text}" stroke-width="1.4"/>`);
    });
    bar(docs.length, report.summary[op].geomean, COLORS.geomean, true);
    s.push(`<line x1="${one}" x2="${one}" y1="${yTop - 4}" y2="${yBot}" stroke="${COLORS.text}" stroke-width="1.3"/>`);
  });

  const foot =
    'Bars (shared process) start at 1.0× (no difference); right = bson-rs faster, left (red) = slower. Log scale. ' +
    (hasFresh ? '○ = fresh process (that document alone). ' : '') +
    'Dashed green: geomean goal.';
  s.push(`<text x="16" y="${top + plotH + 40}" font-size="11" fill="${COLORS.muted}">${esc(foot)}</text>`);
  if (report.memory) {
    const mem =
      `Peak RSS, same workload: js-bson ${(report.memory['js-bson'].maxRSS / 1048576).toFixed(0)} MiB, ` +
      `bson-rs ${(report.memory['bson-rs'].maxRSS / 1048576).toFixed(0)} MiB (×${report.memory.ratio.toFixed(2)}).`;
    s.push(`<text x="16" y="${top + plotH + 58}" font-size="11" fill="${COLORS.muted}">${esc(mem)}</text>`);
  }
  s.push('</svg>');
  return `${s.join('\n')}\n`;
}

function writeChart(report, outPath) {
  fs.writeFileSync(outPath, renderChart(report));
  return outPath;
}

module.exports = { renderChart, writeChart };

if (require.main === module) {
  const input = path.resolve(process.argv[2] || path.join(__dirname, 'results.json'));
  const output = path.resolve(process.argv[3] || path.join(path.dirname(input), 'ratios.svg'));
  writeChart(JSON.parse(fs.readFileSync(input, 'utf8')), output);
  console.log(`wrote ${path.relative(process.cwd(), output)}`);
}
