'use strict';
// The published packages, installed as a user would: the main tarball and the
// platform tarball packed by scripts/pack.js (what `npm run release:pack`
// uses), installed into a fresh app with `npm install --ignore-scripts` and no
// cargo or rustc on PATH.
//
// The platform tarball is made here from the ./bson_rs.node that `npm install`
// built, for this machine's platform: the packaging and the loader are what is
// tested. The release build of linux-x64-gnu (cargo-zigbuild, glibc 2.17 floor,
// checked with objdump) takes minutes and belongs to `npm run release:pack`;
// scripts/check-node-versions.sh installs those tarballs under Node 20-26.
const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const { packMain, packPlatform } = require('../scripts/pack');
const { glibcVersions, checkGlibcFloor } = require('../scripts/release-tools');
const { PLATFORMS, platformKey } = require('../lib/platforms');

const ROOT = path.resolve(__dirname, '..');
const { version } = require('../package.json');
const platform = platformKey();
const PLATFORM_PKG = `bson-rs-${platform}`;
const MAX_NODE_MODULES = 8 * 1024 * 1024;

let tmp;
let mainTgz;
let platformTgz;

before(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'bson-rs-packaging-'));
  const local = path.join(ROOT, 'bson_rs.node');
  assert.ok(fs.existsSync(local), `${local} is missing: run npm install (or npm run build) first`);
  assert.ok(PLATFORMS.includes(platform), `no platform package for ${platform}`);
  mainTgz = packMain(path.join(tmp, 'dist')).file;
  platformTgz = packPlatform(path.join(tmp, 'dist'), platform, local).file;
});

after(() => {
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

/** This environment without npm's script variables and with no cargo or rustc on PATH. */
function userEnv(extra = {}) {
  const env = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (/^npm_/i.test(key) && !/^npm_config_(cache|registry|userconfig)$/i.test(key)) continue;
    if (/^(CARGO|RUSTC|RUSTUP_TOOLCHAIN|BSON_RS_REQUIRE_NATIVE)$/.test(key)) continue;
    env[key] = value;
  }
  const hasRust = (dir) => ['cargo', 'rustc', 'cargo.exe', 'rustc.exe'].some((b) => fs.existsSync(path.join(dir, b)));
  env.PATH = (process.env.PATH || '').split(path.delimiter).filter((dir) => dir && !hasRust(dir)).join(path.delimiter);
  return { ...env, ...extra };
}

function run(command, args, options) {
  return spawnSync(command, args, { encoding: 'utf8', timeout: 240000, ...options });
}

function dirSize(dir) {
  let total = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) total += dirSize(full);
    else if (entry.isFile()) total += fs.statSync(full).size;
  }
  return total;
}

/** A fresh app with the given tarballs installed the way a user without Rust would. */
function installApp(name, tarballs, flags = []) {
  const app = path.join(tmp, name);
  fs.mkdirSync(app);
  fs.writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name, version: '1.0.0', private: true }));
  const env = userEnv();
  assert.equal(run('cargo', ['--version'], { env }).error?.code, 'ENOENT', 'cargo is still on PATH');
  const r = run(
    'npm',
    ['install', '--ignore-scripts', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error', ...flags, ...tarballs],
    { cwd: app, env }
  );
  assert.equal(r.status, 0, `npm install failed:\n${r.stdout}\n${r.stderr}`);
  const nm = path.join(app, 'node_modules');
  const installed = path.join(nm, 'bson-rs');
  const manifest = JSON.parse(fs.readFileSync(path.join(installed, 'package.json'), 'utf8'));
  assert.equal(manifest.scripts, undefined, 'the published package has no scripts');
  assert.deepEqual(
    manifest.optionalDependencies,
    Object.fromEntries(PLATFORMS.map((p) => [`bson-rs-${p}`, version])),
    'every platform package, at the same version'
  );
  assert.equal(manifest.devDependencies, undefined);
  assert.ok(!fs.existsSync(path.join(installed, 'bson_rs.node')), 'no binary in the main package');
  assert.ok(!fs.existsSync(path.join(installed, 'target')), 'no target/ in the installed package');
  assert.ok(fs.existsSync(path.join(installed, 'bench', 'ratios.svg')), "the README's chart is packed");
  assert.ok(fs.existsSync(path.join(installed, 'docs', 'PERFORMANCE.md')), "the README's performance record is packed");
  for (const dev of ['mongodb', 'typescript', 'mitata']) assert.ok(!fs.existsSync(path.join(nm, dev)), `${dev} was installed`);
  const size = dirSize(nm);
  assert.ok(size < MAX_NODE_MODULES, `node_modules is ${(size / 1048576).toFixed(1)} MB`);
  return { app, env, nm, size };
}

// Run in the app: a round trip through bson-rs equals js-bson's, in CommonJS and ESM.
const ROUND_TRIP = `
  const assert = require('node:assert/strict');
  const rs = require('bson-rs');
  const js = require('bson');
  const doc = { _id: new js.ObjectId(), n: js.Long.fromNumber(2 ** 40), d: js.Decimal128.fromString('1.5'), s: 'héllo', a: [1, 2.5, null, true], b: new js.Binary(Buffer.from('xyz')) };
  const bytes = rs.serialize(doc);
  assert.ok(Buffer.from(bytes).equals(Buffer.from(js.serialize(doc))), 'same bytes as js-bson');
  assert.equal(rs.calculateObjectSize(doc), js.calculateObjectSize(doc));
  const back = rs.deserialize(bytes, { promoteLongs: false });
  assert.ok(back._id instanceof js.ObjectId && back.n instanceof js.Long && back.d instanceof js.Decimal128);
  assert.equal(js.EJSON.stringify(back), js.EJSON.stringify(js.deserialize(bytes, { promoteLongs: false })));
  import('bson-rs').then((esm) => {
    assert.ok(Buffer.from(esm.serialize(doc)).equals(Buffer.from(bytes)), 'ESM entry agrees');
    console.log('NATIVE ' + JSON.stringify(require('bson-rs/native')));
  });
`;

function node(app, env, script) {
  return run(process.execPath, ['-e', script], { cwd: app, env, timeout: 60000 });
}

function nativeReport(r) {
  assert.equal(r.status, 0, `child failed:\n${r.stdout}\n${r.stderr}`);
  const line = r.stdout.split('\n').find((l) => l.startsWith('NATIVE '));
  assert.ok(line, r.stdout);
  return JSON.parse(line.slice('NATIVE '.length));
}

test(`main + ${PLATFORM_PKG} tarballs, no Rust, --ignore-scripts: the native codec loads from the platform package`, () => {
  const { app, env, nm, size } = installApp('app-native', [mainTgz, platformTgz]);
  const binary = path.join(nm, PLATFORM_PKG, `bson-rs.${platform}.node`);
  assert.ok(fs.existsSync(binary), `${binary} is missing`);
  const r = node(app, env, ROUND_TRIP);
  const status = nativeReport(r);
  assert.deepEqual(status, { loaded: true, binary: fs.realpathSync(binary), reason: null });
  assert.equal(r.stderr, '', 'no warning with the native codec');
  // Not js-bson's own functions: the Rust codec is what runs.
  const own = node(app, env, "console.log(require('bson-rs').serialize === require('bson').serialize)");
  assert.equal(own.stdout.trim(), 'false');
  console.log(`native install: node_modules ${(size / 1048576).toFixed(2)} MB`);
});

test('main tarball alone: js-bson fallback with one warning line; BSON_RS_REQUIRE_NATIVE=1 throws', () => {
  // --omit=optional: the platform package is skipped, as npm does for users who pass it,
  // and the result does not depend on what the registry holds.
  const { app, env, nm, size } = installApp('app-fallback', [mainTgz], ['--omit=optional']);
  assert.ok(!fs.existsSync(path.join(nm, PLATFORM_PKG)));
  // The plug-ins on the fallback: a driver and Mongoose from this repository (symlinked).
  for (const dep of ['mongodb', 'mongoose']) fs.symlinkSync(fs.realpathSync(path.join(ROOT, 'node_modules', dep)), path.join(nm, dep), 'dir');
  const script = `${ROUND_TRIP}
    require('bson-rs'); // again: still one warning
    assert.equal(require('bson-rs').serialize, require('bson').serialize, "js-bson's own function");
    const info = require('bson-rs/driver').install(require('mongodb'));
    assert.equal(info.native, false, 'the driver plug-in says it runs on the fallback');
    const mongoose = require('mongoose');
    assert.equal(require('bson-rs/mongoose').install(mongoose).native, false, 'so does the Mongoose plug-in');
  `;
  const r = node(app, env, script);
  const status = nativeReport(r);
  assert.equal(status.loaded, false);
  assert.equal(status.binary, null);
  assert.match(status.reason, new RegExp(`${PLATFORM_PKG} is not installed`));
  assert.ok(status.reason.includes(`npm install ${PLATFORM_PKG}@${version}`), status.reason);
  const lines = r.stderr.split('\n').filter(Boolean);
  assert.equal(lines.length, 1, `one warning line, got:\n${r.stderr}`);
  assert.ok(lines[0].startsWith('bson-rs: no native codec ('), lines[0]);
  assert.ok(lines[0].includes(`npm install ${PLATFORM_PKG}@${version}`), lines[0]);
  assert.doesNotMatch(lines[0], /npm install`? (inside|in the bson-rs package)|cd node_modules/);

  const strict = node(app, { ...env, BSON_RS_REQUIRE_NATIVE: '1' }, "require('bson-rs')");
  assert.notEqual(strict.status, 0, 'BSON_RS_REQUIRE_NATIVE=1 makes the fallback an error');
  assert.match(strict.stderr, /Error: bson-rs: no native codec \(.*BSON_RS_REQUIRE_NATIVE=1 forbids/);
  const report = node(app, { ...env, BSON_RS_REQUIRE_NATIVE: '1' }, "console.log(require('bson-rs/native').loaded)");
  assert.equal(report.stdout.trim(), 'false', 'bson-rs/native still reports');
  console.log(`fallback install: node_modules ${(size / 1048576).toFixed(2)} MB`);
});

const hasObjdump = spawnSync('objdump', ['--version']).status === 0;
test('the glibc floor check of release:pack reads objdump -T and refuses a binary above the floor', { skip: platform.endsWith('-gnu') && hasObjdump ? false : 'needs Linux glibc and objdump' }, () => {
  const local = path.join(ROOT, 'bson_rs.node');
  const versions = glibcVersions(local);
  assert.ok(versions.length > 0 && versions.every((v) => /^2\.\d+(\.\d+)?$/.test(v)), versions.join(' '));
  const highest = versions[versions.length - 1];
  assert.deepEqual(checkGlibcFloor(local, highest), versions);
  assert.throws(() => checkGlibcFloor(local, '2.0'), new RegExp(`requires GLIBC .*${highest.replace(/\./g, '\\.')}, newer than the floor 2\\.0`));
});
