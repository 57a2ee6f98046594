'use strict';
// Writes the seed corpora of fuzz/ from the BSON corpus fixtures and the bench
// documents (serialized with the installed js-bson). Run: node scripts/fuzz-seeds.js
// Decode seeds are 3 header bytes (see fuzz/src/checks.rs `decode`) + BSON.
const fs = require('fs');
const path = require('path');
const crypto = require('crypto');
const { EJSON, serialize } = require('bson');

const root = path.join(__dirname, '..');
const docs = [];
const fixtures = path.join(root, 'test/fixtures/bson-corpus');
for (const f of fs.readdirSync(fixtures).filter((f) => f.endsWith('.json')).sort()) {
  const spec = JSON.parse(fs.readFileSync(path.join(fixtures, f), 'utf8'));
  for (const v of spec.valid || []) {
    docs.push(Buffer.from(v.canonical_bson, 'hex'));
    if (v.degenerate_bson) docs.push(Buffer.from(v.degenerate_bson, 'hex'));
  }
  for (const e of spec.decodeErrors || []) docs.push(Buffer.from(e.bson, 'hex'));
}
const bench = path.join(root, 'bench/documents');
for (const f of fs.readdirSync(bench).filter((f) => f.endsWith('.json')).sort()) {
  docs.push(Buffer.from(serialize(EJSON.parse(fs.readFileSync(path.join(bench, f), 'utf8'), { relaxed: false }))));
}

// Headers: default options, promoteValues off + small scratch, raw + fieldsAsRaw, bigint + bsonRegExp.
const headers = [
  [0x83, 0x00, 0x00],
  [0x00, 0x40, 0x21],
  [0xa3, 0x02, 0x0f],
  [0x9b, 0x01, 0x33],
];
function write(dir, bytes) {
  fs.mkdirSync(dir, { recursive: true });
  const name = crypto.createHash('sha1').update(bytes).digest('hex');
  fs.writeFileSync(path.join(dir, name), bytes);
}
let n = 0;
// decode and decode_tape_walk share one corpus (same input format): fuzz/corpus/decode.
for (const target of ['decode']) {
  const dir = path.join(root, 'fuzz/corpus', target);
  docs.forEach((d, i) => {
    write(dir, Buffer.concat([Buffer.from(headers[i % headers.length]), d]));
    n++;
  });
}
// encode_roundtrip reads a generator program, not BSON: seed it with byte
// strings that select each mode and value kind (the fuzzer takes it from there).
const enc = path.join(root, 'fuzz/corpus/encode_roundtrip');
for (let mode = 0; mode < 8; mode++) {
  for (let kind = 0; kind < 22; kind += mode < 5 ? 1 : 7) {
    const b = Buffer.alloc(48);
    for (let i = 0; i < b.length; i++) b[i] = (i * 37 + kind * 11 + mode) & 0xff;
    b[0] = mode;
    b[1] = 7; // fields
    b[3] = kind;
    write(enc, b);
    n++;
  }
}
console.log(`${n} seeds written`);
