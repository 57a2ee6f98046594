'use strict';
// Quick side-by-side: js-bson deserialize vs bson-rs deserialize.
// Usage: node bench/quick-decode.js [filter]
// Prints per-document median ns/op for both and the ratio (js / rs).
const fs = require('node:fs');
const path = require('node:path');
const js = require('bson');
const rs = require('..');

const filter = process.argv[2];
const docs = [];
const dir = path.join(__dirname, 'documents');
for (const file of fs.readdirSync(dir).sort()) {
  if (!file.endsWith('.json')) continue;
  docs.push([file.replace(/\.json$/, ''), js.EJSON.parse(fs.readFileSync(path.join(dir, file), 'utf8'))]);
}
const flat10 = {};
for (let i = 0; i < 10; i++) flat10['field' + i] = i % 3 === 0 ? 'value' + i : i % 3 === 1 ? i * 1.5 : i;
docs.push(['flat10', flat10]);
const orders = [];
for (let i = 0; i < 1000; i++) {
  orders.push({
    _id: new js.ObjectId(),
    customer: 'customer-' + (i % 50),
    total: i * 3.25,
    items: i % 7,
    status: i % 2 ? 'shipped' : 'pending',
    createdAt: new Date(1700000000000 + i * 1000)
  });
}
docs.push(['orders1000', { orders }]);
docs.push(['int32x1000', { a: Array.from({ length: 1000 }, (_, i) => i) }]);
docs.push(['doublex1000', { a: Array.from({ length: 1000 }, (_, i) => i + 0.5) }]);
docs.push(['stringx1000', { a: Array.from({ length: 1000 }, (_, i) => 'string number ' + i) }]);
// Longer than the 32-byte value cache: every string is created on each decode.
docs.push(['longstrx1000', { a: Array.from({ length: 1000 }, (_, i) => 'a longer string value, number ' + i + ' of many') }]);
let deep = { leaf: 1 };
for (let i = 0; i < 50; i++) deep = { level: i, child: deep };
docs.push(['deep50', deep]);

// CPU time of this process (user + system), in ns: steadier than wall time
// on a shared machine.
function cpuNs() {
  const u = process.cpuUsage();
  return (u.user + u.system) * 1000;
}
function measure(fn, bytes) {
  // Calibrate to ~20 ms per sample.
  let n = 1;
  for (;;) {
    const t0 = cpuNs();
    for (let i = 0; i < n; i++) fn(bytes);
    const dt = cpuNs() - t0;
    if (dt > 20e6) break;
    n *= 2;
  }
  return n;
}
function sample(fn, bytes, n) {
  const t0 = cpuNs();
  for (let i = 0; i < n; i++) fn(bytes);
  return (cpuNs() - t0) / n;
}
const median = a => a.slice().sort((x, y) => x - y)[a.length >> 1];

const ratios = [];
for (const [name, doc] of docs) {
  if (filter && !name.includes(filter)) continue;
  const bytes = js.serialize(doc);
  const nJs = measure(js.deserialize, bytes);
  const nRs = measure(rs.deserialize, bytes);
  const tJs = [];
  const tRs = [];
  for (let round = 0; round < 11; round++) {
    tJs.push(sample(js.deserialize, bytes, nJs));
    tRs.push(sample(rs.deserialize, bytes, nRs));
  }
  const a = median(tJs);
  const b = median(tRs);
  ratios.push(a / b);
  console.log(`${name.padEnd(14)} ${String(bytes.length).padStart(7)} B  js ${a.toFixed(0).padStart(8)} ns  rs ${b.toFixed(0).padStart(8)} ns  x${(a / b).toFixed(2)}`);
}
const geo = Math.exp(ratios.reduce((s, r) => s + Math.log(r), 0) / ratios.length);
console.log(`geometric mean x${geo.toFixed(2)}, min x${Math.min(...ratios).toFixed(2)}`);
