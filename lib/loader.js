'use strict';
// Finds and loads the native addon. The one place that decides whether
// bson-rs runs its Rust codec or falls back to js-bson's own functions:
//   1. the platform package's binary (bson-rs-linux-x64-gnu, ...: an optional
//      dependency of the published package, chosen by npm from os/cpu/libc);
//   2. a locally built ./bson_rs.node (a clone after `npm install`, or a build
//      from source with scripts/build.js);
//   3. otherwise no native codec (`loaded: false` and the reason why).
// Nothing here throws; lib/codec.js acts on the result (fallback() below).
const fs = require('node:fs');
const path = require('node:path');

const { PLATFORMS, platformKey } = require('./platforms');

const ROOT = path.join(__dirname, '..');
const { version } = require('../package.json');

function firstLine(error) {
  return String((error && error.message) || error).split('\n')[0];
}

function load() {
  const platform = platformKey();
  const pkg = `bson-rs-${platform}`;
  const supported = PLATFORMS.includes(platform);
  let platformProblem = null;

  if (supported) {
    let file = null;
    try {
      file = require.resolve(pkg);
    } catch {
      platformProblem = `the platform package ${pkg} is not installed`;
    }
    if (file !== null) {
      try {
        return { addon: require(file), loaded: true, binary: file, reason: null, platform, pkg };
      } catch (e) {
        platformProblem = `${file} (from ${pkg}) failed to load: ${firstLine(e)}`;
      }
    }
  }

  const local = path.join(ROOT, 'bson_rs.node');
  let localProblem = null;
  if (fs.existsSync(local)) {
    try {
      return { addon: require(local), loaded: true, binary: local, reason: null, platform, pkg };
    } catch (e) {
      localProblem = `${local} failed to load: ${firstLine(e)}`;
    }
  }

  const build = `node ${path.join(ROOT, 'scripts', 'build.js')}`;
  const inClone = fs.existsSync(path.join(ROOT, '.git'));
  let reason;
  if (inClone) {
    // A clone: the binary comes from `npm install` (its prepare script) or `npm run build`.
    reason = `${localProblem || `${local} is not built`}; run \`npm run build\` in ${ROOT} (needs Rust: https://rustup.rs)`;
  } else if (supported) {
    reason =
      `${platformProblem}${localProblem ? ` and ${localProblem}` : ''}; ` +
      `install it next to bson-rs: \`npm install ${pkg}@${version}\` ` +
      '(npm skips optional dependencies under --omit=optional, or with a lockfile made on another platform)';
  } else {
    reason =
      `no prebuilt binary for ${platform}${localProblem ? ` and ${localProblem}` : ''}; ` +
      `to build one from source (needs Rust: https://rustup.rs), run \`${build}\``;
  }
  return { addon: null, loaded: false, binary: null, reason, platform, pkg };
}

const native = load();

const WARNED = Symbol.for('bson-rs.fallback-warned');

/**
 * Called when a codec is built without the native addon: throws under
 * BSON_RS_REQUIRE_NATIVE=1, else prints one warning line to stderr (once per
 * process, or per worker thread, shared by every bson-rs copy loaded).
 */
function fallback() {
  const message = `bson-rs: no native codec (${native.reason}); using js-bson's own codec functions`;
  if (process.env.BSON_RS_REQUIRE_NATIVE === '1') {
    throw new Error(`${message}, which BSON_RS_REQUIRE_NATIVE=1 forbids`);
  }
  if (globalThis[WARNED] === true) return;
  globalThis[WARNED] = true;
  process.stderr.write(`${message}. Set BSON_RS_REQUIRE_NATIVE=1 to make this an error.\n`);
}

module.exports = {
  addon: native.addon,
  loaded: native.loaded,
  binary: native.binary,
  reason: native.reason,
  platform: native.platform,
  fallback
};
