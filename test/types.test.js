'use strict';
// index.d.ts and the subpath typings compile against real usage (js-bson's types).
const { test } = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const tsc = require.resolve('typescript/bin/tsc');
const dir = path.join(__dirname, 'types');

function compile(file) {
  const args = [tsc, '--noEmit', '--strict', '--module', 'node16', '--moduleResolution', 'node16', '--target', 'es2022', file];
  return spawnSync(process.execPath, args, { encoding: 'utf8' });
}

test('TypeScript accepts bson-rs, bson-rs/driver and bson-rs/mongoose used as js-bson', () => {
  const r = compile(path.join(dir, 'usage.ts'));
  assert.strictEqual(r.status, 0, r.stdout + r.stderr);
});

test('TypeScript rejects a wrong use (the check is not vacuous)', () => {
  const file = path.join(dir, 'wrong.tmp.ts');
  fs.writeFileSync(file, "import { serialize } from 'bson-rs';\nexport const n: number = serialize({});\n");
  try {
    const r = compile(file);
    assert.notStrictEqual(r.status, 0, 'tsc accepted assigning a Uint8Array to a number');
    assert.match(r.stdout, /TS2322/);
  } finally {
    fs.unlinkSync(file);
  }
});
