'use strict';
// Quick side-by-side: serialize and calculateObjectSize, js-bson vs bson-rs.
// Usage: node bench/quick-encode.js [filter] [--rounds N]
// Prints median ratio (js-bson time / bson-rs time) over interleaved rounds.
const fs = require('node:fs');
const path = require('node:path');
const js = require('bson');
const rs = require('..');

const filter = process.argv[2] && !process.argv[2].startsWith('--') ? process.argv[2] : '';
const roundsArg = process.argv.indexOf('--rounds');
const ROUNDS = roundsArg > 0 ? Number(process.argv[roundsArg + 1]) : 7;

const docs = [];
const dir = path.join(__dirname, 'documents');
for (const file of fs.readdirSync(dir).sort()) {
  if (!file.endsWith('.json')) continue;
  docs.push([file.replace('.json', ''), js.EJSON.parse(fs.readFileSync(path.join(dir, file), 'utf8'))]);
}

const flat10 = {
  _id: new js.ObjectId(),
  name: 'Alice Example',
  age: 42,
  score: 98.6,
  active: true,
  email: 'alice@example.com',
  created: new Date(1700000000000),
  count: 12345,
  tag: 'customer',
  ratio: 0.25
};

function order(i) {
  return {
    _id: new js.ObjectId(),
    orderNo: 100000 + i,
    customer: {
      name: 'Customer ' + i,
      address: { street: i + ' Main Street', city: 'Springfield', zip: '12345', country: 'US' }
    },
    items: [
      { sku: 'SKU-' + i, qty: 2, price: js.Decimal128.fromString('19.99') },
      { sku: 'SKU-' + (i + 1), qty: 1, price: js.Decimal128.fromString('5.49') }
    ],
    total: js.Decimal128.fromString('45.47'),
    createdAt: new Date(1700000000000 + i * 1000),
    version: js.Long.fromNumber(i),
    tags: ['new', 'priority', 'web']
  };
}

docs.push(['flat10', flat10]);
docs.push(['orders1000', { orders: Array.from({ length: 1000 }, (_, i) => order(i)) }]);
docs.push(['int32x1000', { a: Array.from({ length: 1000 }, (_, i) => i * 7) }]);
docs.push(['doublex1000', { a: Array.from({ length: 1000 }, (_, i) => i * 1.5 + 0.1) }]);
docs.push(['strx1000', { a: Array.from({ length: 1000 }, (_, i) => 'str' + i) }]);
docs.push(['oidx1000', { a: Array.from({ length: 1000 }, () => new js.ObjectId()) }]);
docs.push(['datex1000', { a: Array.from({ length: 1000 }, (_, i) => new Date(1700000000000 + i)) }]);
let deep = { leaf: 1 };
for (let i = 0; i < 50; i++) deep = { level: i, child: deep };
docs.push(['deep50', deep]);

function timeOne(fn, doc, minMs) {
  // run until at least minMs elapsed; return ns per op
  let n = 0;
  const start = process.hrtime.bigint();
  let now = start;
  const limit = BigInt(Math.round(minMs * 1e6));
  do {
    for (let i = 0; i < 16; i++) fn(doc);
    n += 16;
    now = process.hrtime.bigint();
  } while (now - start < limit);
  return Number(now - start) / n;
}

function median(a) {
  const s = [...a].sort((x, y) => x - y);
  return s[s.length >> 1];
}

function bench(label, jsFn, rsFn) {
  const results = [];
  for (const [name, doc] of docs) {
    if (filter && !name.includes(filter)) continue;
    // correctness first
    const a = jsFn(doc);
    const b = rsFn(doc);
    const same = typeof a === 'number' ? a === b : Buffer.from(a).equals(Buffer.from(b));
    if (!same) throw new Error(`${label} ${name}: bson-rs result differs from js-bson`);
    for (let i = 0; i < 200; i++) {
      jsFn(doc);
      rsFn(doc);
    }
    const ratios = [];
    const jsT = [];
    const rsT = [];
    for (let r = 0; r < ROUNDS; r++) {
      const tj = timeOne(jsFn, doc, 40);
      const tr = timeOne(rsFn, doc, 40);
      jsT.push(tj);
      rsT.push(tr);
      ratios.push(tj / tr);
    }
    const ratio = median(ratios);
    results.push(ratio);
    console.log(
      `${label.padEnd(10)} ${name.padEnd(14)} js ${median(jsT).toFixed(0).padStart(9)} ns  rs ${median(rsT)
        .toFixed(0)
        .padStart(9)} ns  x${ratio.toFixed(2)}`
    );
  }
  const geo = Math.exp(results.reduce((s, r) => s + Math.log(r), 0) / results.length);
  console.log(`${label} geomean x${geo.toFixed(2)}  min x${Math.min(...results).toFixed(2)}`);
}

bench('serialize', d => js.serialize(d), d => rs.serialize(d));
bench('calcSize', d => js.calculateObjectSize(d), d => rs.calculateObjectSize(d));
