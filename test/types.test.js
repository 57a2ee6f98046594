'use strict';
// index.d.ts and the subpath typings compile against real usage (js-bson's types).
const { test } = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const path = require('node:path');
const os = require('node:os');
const { spawnSync } = require('node:child_process');

const tsc = require.resolve('typescript/bin/tsc');
const dir = path.join(__dirname, 'types');

function compile(file, mode = ['--module', 'node16', '--moduleResolution', 'node16']) {
  const args = [tsc, '--noEmit', '--strict', ...mode, '--target', 'es2022', file];
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

// As a consumer compiles: an app with bson-rs in its node_modules (a symlink to this checkout).
const MODES = {
  'commonjs (node10 resolution)': ['--module', 'commonjs', '--moduleResolution', 'node10'],
  node16: ['--module', 'node16', '--moduleResolution', 'node16'],
  nodenext: ['--module', 'nodenext', '--moduleResolution', 'nodenext']
};
for (const [name, mode] of Object.entries(MODES)) {
  test(`TypeScript, ${name}: import driver = require('bson-rs/driver'), bson-rs/mongoose, bson-rs/native`, (t) => {
    const app = fs.mkdtempSync(path.join(os.tmpdir(), 'bson-rs-types-'));
    t.after(() => fs.rmSync(app, { recursive: true, force: true }));
    fs.writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'app', private: true }));
    fs.mkdirSync(path.join(app, 'node_modules'));
    fs.symlinkSync(path.resolve(__dirname, '..'), path.join(app, 'node_modules', 'bson-rs'), 'dir');
    const file = path.join(app, 'usage-cjs.ts');
    fs.copyFileSync(path.join(dir, 'usage-cjs.ts'), file);
    const r = compile(file, mode);
    assert.strictEqual(r.status, 0, r.stdout + r.stderr);
  });
}
