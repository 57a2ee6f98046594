'use strict';
// The platform packages of the napi-rs layout (npm/<platform>/package.json)
// and this machine's key among them. No side effects: scripts/pack.js uses it too.
const fs = require('node:fs');

const PLATFORMS = Object.freeze([
  'linux-x64-gnu',
  'linux-x64-musl',
  'linux-arm64-gnu',
  'linux-arm64-musl',
  'darwin-x64',
  'darwin-arm64',
  'win32-x64-msvc'
]);

function isMusl() {
  // As napi-rs does: ldd's text first (cheap), then the process report.
  try {
    return fs.readFileSync('/usr/bin/ldd', 'latin1').includes('musl');
  } catch {
    // no /usr/bin/ldd
  }
  try {
    const report = process.report.getReport();
    const header = typeof report === 'string' ? JSON.parse(report).header : report.header;
    return !header.glibcVersionRuntime;
  } catch {
    return false;
  }
}

/** This machine's platform key, e.g. linux-x64-gnu (or darwin-arm64, win32-x64-msvc). */
function platformKey() {
  const base = `${process.platform}-${process.arch}`;
  if (process.platform === 'linux') return `${base}-${isMusl() ? 'musl' : 'gnu'}`;
  if (process.platform === 'win32') return `${base}-msvc`;
  return base;
}

module.exports = { PLATFORMS, platformKey };
