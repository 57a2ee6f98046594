'use strict';
// The build tools of `npm run release:pack`, installed on demand into a cache
// directory (not the repository): zig from PyPI's ziglang package (pip) and
// cargo-zigbuild from crates.io (cargo install). Both are pinned.
//   BSON_RS_TOOLS_DIR  where they go (default: $XDG_CACHE_HOME or ~/.cache, /bson-rs-tools)
//   BSON_RS_PYTHON     the Python with pip (default: python3)
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const ZIG_VERSION = '0.14.1';
const ZIGBUILD_VERSION = '0.24.1';

function toolsDir() {
  if (process.env.BSON_RS_TOOLS_DIR) return path.resolve(process.env.BSON_RS_TOOLS_DIR);
  const cache = process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
  return path.join(cache, 'bson-rs-tools');
}

function run(command, args, options = {}) {
  const r = spawnSync(command, args, { encoding: 'utf8', ...options });
  if (r.error) throw new Error(`release:pack: cannot run ${command}: ${r.error.message}`);
  return r;
}

function works(command, args) {
  const r = spawnSync(command, args, { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : null;
}

/** The path of a pinned zig binary (from PyPI's ziglang), installing it if missing. */
function ensureZig(log = console.error) {
  const dir = path.join(toolsDir(), `ziglang-${ZIG_VERSION}`);
  const zig = path.join(dir, 'ziglang', process.platform === 'win32' ? 'zig.exe' : 'zig');
  if (works(zig, ['version']) === ZIG_VERSION) return zig;
  const python = process.env.BSON_RS_PYTHON || 'python3';
  log(`release:pack: installing zig ${ZIG_VERSION} (PyPI ziglang) into ${dir}`);
  fs.rmSync(dir, { recursive: true, force: true });
  const args = ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', '--no-deps', '--target', dir, `ziglang==${ZIG_VERSION}`];
  let r = run(python, args);
  if (r.status !== 0 && /externally-managed/.test(r.stderr)) r = run(python, [...args, '--break-system-packages']);
  if (r.status !== 0) throw new Error(`release:pack: pip install ziglang==${ZIG_VERSION} failed:\n${r.stdout}${r.stderr}`);
  const version = works(zig, ['version']);
  if (version !== ZIG_VERSION) throw new Error(`release:pack: ${zig} does not run (zig version: ${version})`);
  return zig;
}

/** The path of a pinned cargo-zigbuild, installing it (cargo install --locked) if missing. */
function ensureZigbuild(log = console.error) {
  const root = path.join(toolsDir(), `cargo-zigbuild-${ZIGBUILD_VERSION}`);
  const bin = path.join(root, 'bin', process.platform === 'win32' ? 'cargo-zigbuild.exe' : 'cargo-zigbuild');
  if (fs.existsSync(bin) && works(bin, ['--version'])) return bin;
  log(`release:pack: installing cargo-zigbuild ${ZIGBUILD_VERSION} (cargo install) into ${root}; this takes a few minutes`);
  const r = run('cargo', ['install', '--locked', '--quiet', '--root', root, '--version', ZIGBUILD_VERSION, 'cargo-zigbuild'], {
    stdio: ['ignore', 'inherit', 'inherit']
  });
  if (r.status !== 0) throw new Error(`release:pack: cargo install cargo-zigbuild@${ZIGBUILD_VERSION} failed (see above)`);
  return bin;
}

/**
 * The GLIBC symbol versions a shared object requires, from `objdump -T`
 * (e.g. ['2.2.5', '2.3', '2.14']), sorted, each once.
 */
function glibcVersions(file, objdump = process.env.OBJDUMP || 'objdump') {
  const r = run(objdump, ['-T', file]);
  if (r.status !== 0) throw new Error(`release:pack: objdump -T ${file} failed:\n${r.stderr}`);
  const seen = new Set();
  for (const m of r.stdout.matchAll(/\bGLIBC_(\d+(?:\.\d+)+)\b/g)) seen.add(m[1]);
  return [...seen].sort(compareVersions);
}

function compareVersions(a, b) {
  const x = a.split('.').map(Number);
  const y = b.split('.').map(Number);
  for (let i = 0; i < Math.max(x.length, y.length); i++) {
    const d = (x[i] || 0) - (y[i] || 0);
    if (d !== 0) return d;
  }
  return 0;
}

/** Throws unless every GLIBC version `file` requires is at most `floor`; returns the versions. */
function checkGlibcFloor(file, floor, objdump) {
  const versions = glibcVersions(file, objdump);
  if (versions.length === 0) throw new Error(`release:pack: objdump -T ${file} shows no GLIBC symbol versions; is it a glibc binary?`);
  const tooNew = versions.filter((v) => compareVersions(v, floor) > 0);
  if (tooNew.length > 0) {
    throw new Error(`release:pack: ${file} requires GLIBC ${tooNew.join(', ')}, newer than the floor ${floor}`);
  }
  return versions;
}

module.exports = { ensureZig, ensureZigbuild, glibcVersions, checkGlibcFloor, compareVersions, toolsDir, ZIG_VERSION, ZIGBUILD_VERSION };
