#!/usr/bin/env node
// npm run release:pack -- DIR [--binaries BINDIR]
//
// Writes the release tarballs into DIR:
//   bson-rs-<version>.tgz                 the main package (no binary, no install script)
//   bson-rs-<platform>-<version>.tgz      one per platform binary at hand
// Without --binaries (a clone on Linux x64, after `npm install`): builds the
// linux-x64-gnu binary here with cargo-zigbuild for glibc 2.17
// (x86_64-unknown-linux-gnu.2.17), installing zig and cargo-zigbuild on demand
// (scripts/release-tools.js), and fails unless `objdump -T` shows no GLIBC
// symbol version above 2.17.
// With --binaries BINDIR (the release workflow): packs every
// BINDIR/bson-rs.<platform>.node there is, checking the glibc floor of the
// linux gnu ones the same way; builds nothing.
'use strict';
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { packMain, packPlatform, PLATFORMS } = require('./pack');
const tools = require('./release-tools');

const ROOT = path.resolve(__dirname, '..');
const GLIBC_FLOOR = '2.17';

function usage(message) {
  console.error(`release:pack: ${message}\nusage: npm run release:pack -- DIR [--binaries BINDIR]`);
  process.exit(2);
}

function parseArgs(argv) {
  let outDir = null;
  let binaries = null;
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--binaries') binaries = argv[++i] || usage('--binaries needs a directory');
    else if (argv[i].startsWith('-')) usage(`unknown option ${argv[i]}`);
    else if (outDir === null) outDir = argv[i];
    else usage(`unexpected argument ${argv[i]}`);
  }
  if (outDir === null) usage('no output directory given');
  return { outDir: path.resolve(outDir), binaries: binaries && path.resolve(binaries) };
}

/** Builds the linux-x64-gnu binary with a glibc 2.17 floor; returns its path. */
function buildLinuxX64Gnu() {
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    usage('without --binaries, release:pack builds linux-x64-gnu and must run on Linux x64');
  }
  const zig = tools.ensureZig();
  const zigbuild = tools.ensureZigbuild();
  const target = `x86_64-unknown-linux-gnu.${GLIBC_FLOOR}`;
  const targetDir = process.env.CARGO_TARGET_DIR || path.join(ROOT, 'target');
  console.error(`release:pack: cargo zigbuild --release --target ${target} (zig ${tools.ZIG_VERSION})`);
  const r = spawnSync(zigbuild, ['zigbuild', '--release', '--package', 'bson-rs', '--target', target], {
    cwd: ROOT,
    stdio: ['ignore', 'inherit', 'inherit'],
    env: {
      ...process.env,
      CARGO_TARGET_DIR: targetDir,
      CARGO_ZIGBUILD_ZIG_COMMAND: zig,
      CARGO_ZIGBUILD_ZIG_PATH: zig,
      CARGO_ZIGBUILD_CACHE_DIR: path.join(tools.toolsDir(), 'cargo-zigbuild-cache')
    }
  });
  if (r.error) throw r.error;
  if (r.status !== 0) throw new Error(`release:pack: cargo zigbuild failed (exit ${r.status}, see above)`);
  return path.join(targetDir, 'x86_64-unknown-linux-gnu', 'release', 'libbson_rs.so');
}

function checkFloor(platform, file) {
  if (!platform.endsWith('-gnu') || !platform.startsWith('linux-')) return;
  // An x86-64 objdump may not read an arm64 binary; binutils-aarch64-linux-gnu has one that does.
  const cross = 'aarch64-linux-gnu-objdump';
  const objdump =
    platform.startsWith('linux-arm64') && process.arch !== 'arm64' && spawnSync(cross, ['--version']).status === 0 ? cross : undefined;
  const versions = tools.checkGlibcFloor(file, GLIBC_FLOOR, objdump);
  console.error(`release:pack: ${platform}: objdump -T: GLIBC versions required: ${versions.join(' ')} (all <= ${GLIBC_FLOOR})`);
}

function main() {
  const { outDir, binaries } = parseArgs(process.argv.slice(2));
  const platformBinaries = [];
  if (binaries === null) {
    platformBinaries.push(['linux-x64-gnu', buildLinuxX64Gnu()]);
  } else {
    for (const platform of PLATFORMS) {
      const file = path.join(binaries, `bson-rs.${platform}.node`);
      if (fs.existsSync(file)) platformBinaries.push([platform, file]);
    }
    if (platformBinaries.length === 0) usage(`no bson-rs.<platform>.node file in ${binaries}`);
  }
  const written = [];
  for (const [platform, file] of platformBinaries) {
    checkFloor(platform, file);
    written.push(packPlatform(outDir, platform, file));
  }
  written.push(packMain(outDir));
  for (const { file, size } of written) console.log(`${file}\t${size} bytes`);
}

try {
  main();
} catch (e) {
  console.error(e.message);
  process.exit(1);
}
