'use strict';
// Packs the npm tarballs of a release (used by scripts/release-pack.js and by
// test/packaging.test.js):
//   packMain(outDir)                      bson-rs-<version>.tgz
//   packPlatform(outDir, platform, file)  bson-rs-<platform>-<version>.tgz
// Each is packed from a staging copy, so the repository's package.json stays
// the contributor's (prepare script, devDependencies). The main package gets
// the platform packages as optionalDependencies (same version), no scripts,
// no devDependencies and no binary; each platform package is its template
// npm/<platform>/package.json with the release's version plus the binary.
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..');
const { PLATFORMS } = require('../lib/platforms');

const mainManifest = () => JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));

function npm(args, cwd) {
  const r = spawnSync('npm', args, { cwd, encoding: 'utf8', shell: process.platform === 'win32' });
  if (r.error) throw r.error;
  if (r.status !== 0) throw new Error(`npm ${args.join(' ')} failed in ${cwd} (exit ${r.status}):\n${r.stdout}${r.stderr}`);
  return r.stdout;
}

function packStaged(stage, outDir) {
  fs.mkdirSync(outDir, { recursive: true });
  const out = npm(['pack', '--ignore-scripts', '--json', '--pack-destination', path.resolve(outDir)], stage);
  const [info] = JSON.parse(out);
  return { file: path.join(path.resolve(outDir), info.filename), files: info.files.map((f) => f.path), size: info.size };
}

function withStage(fn) {
  const stage = fs.mkdtempSync(path.join(os.tmpdir(), 'bson-rs-stage-'));
  try {
    return fn(stage);
  } finally {
    fs.rmSync(stage, { recursive: true, force: true });
  }
}

/** The main package's manifest as published. */
function publishedManifest() {
  const json = mainManifest();
  delete json.scripts; // no install script (and the contributor scripts need the devDependencies)
  delete json.devDependencies;
  json.optionalDependencies = Object.fromEntries(PLATFORMS.map((p) => [`bson-rs-${p}`, json.version]));
  return json;
}

/** Packs bson-rs-<version>.tgz into outDir; returns { file, files, size }. */
function packMain(outDir) {
  // The files npm would pack from the repository (its `files` list), minus any binary.
  const [listing] = JSON.parse(npm(['pack', '--dry-run', '--ignore-scripts', '--json'], ROOT));
  const files = listing.files.map((f) => f.path).filter((f) => !f.endsWith('.node') && f !== 'package.json');
  return withStage((stage) => {
    for (const file of files) {
      fs.mkdirSync(path.dirname(path.join(stage, file)), { recursive: true });
      fs.copyFileSync(path.join(ROOT, file), path.join(stage, file));
    }
    fs.writeFileSync(path.join(stage, 'package.json'), JSON.stringify(publishedManifest(), null, 2) + '\n');
    const packed = packStaged(stage, outDir);
    const binaries = packed.files.filter((f) => f.endsWith('.node'));
    if (binaries.length > 0) throw new Error(`the main tarball would contain a binary: ${binaries.join(', ')}`);
    return packed;
  });
}

/** The platform package's manifest as published: its template, with the release's version and metadata. */
function platformManifest(platform) {
  if (!PLATFORMS.includes(platform)) throw new Error(`unknown platform ${platform} (known: ${PLATFORMS.join(', ')})`);
  const main = mainManifest();
  const json = JSON.parse(fs.readFileSync(path.join(ROOT, 'npm', platform, 'package.json'), 'utf8'));
  json.version = main.version;
  for (const key of ['license', 'repository', 'homepage', 'bugs', 'engines']) {
    if (main[key] !== undefined) json[key] = main[key];
  }
  return json;
}

/** Packs bson-rs-<platform>-<version>.tgz from the given .node file; returns { file, files, size }. */
function packPlatform(outDir, platform, binary) {
  const json = platformManifest(platform);
  return withStage((stage) => {
    fs.writeFileSync(path.join(stage, 'package.json'), JSON.stringify(json, null, 2) + '\n');
    fs.copyFileSync(path.join(ROOT, 'npm', platform, 'README.md'), path.join(stage, 'README.md'));
    fs.copyFileSync(binary, path.join(stage, json.main));
    return packStaged(stage, outDir);
  });
}

module.exports = { packMain, packPlatform, publishedManifest, platformManifest, PLATFORMS };
