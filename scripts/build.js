#!/usr/bin/env node
// Compiles the Rust addon in release mode and places it at ./bson_rs.node.
// Run by `npm install` in a clone (the prepare script) and by `npm run build`.
// Outside a clone (a build from source inside an installed package, where
// lib/loader.js suggests it), cargo's target directory goes to a temporary
// directory that is removed afterwards, so no target/ stays in node_modules.
'use strict';
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const cargo = process.env.CARGO || 'cargo';

if (spawnSync(cargo, ['--version'], { stdio: 'ignore' }).status !== 0) {
  console.error('bson-rs: cargo was not found; install Rust (https://rustup.rs) to build the native addon.');
  process.exit(1);
}

const inClone = fs.existsSync(path.join(root, '.git'));
let targetDir = process.env.CARGO_TARGET_DIR;
let temporary = null;
if (!targetDir) {
  if (inClone) targetDir = path.join(root, 'target');
  else targetDir = temporary = fs.mkdtempSync(path.join(os.tmpdir(), 'bson-rs-target-'));
}
const cleanUp = () => temporary && fs.rmSync(temporary, { recursive: true, force: true });

const result = spawnSync(cargo, ['build', '--release', '--package', 'bson-rs'], {
  cwd: root,
  stdio: 'inherit',
  env: { ...process.env, CARGO_TARGET_DIR: targetDir }
});
if (result.status !== 0) {
  cleanUp();
  console.error('bson-rs: cargo build failed (see above).');
  process.exit(result.status || 1);
}

const names = { linux: 'libbson_rs.so', darwin: 'libbson_rs.dylib', win32: 'bson_rs.dll' };
const built = path.join(targetDir, 'release', names[process.platform] || names.linux);
const dest = path.join(root, 'bson_rs.node');
// Copy to a temporary name and rename, so a running process never sees half a file.
fs.copyFileSync(built, dest + '.tmp');
fs.renameSync(dest + '.tmp', dest);
cleanUp();
