'use strict';
// The js-bson copy a differential suite compares against, and bson-rs built over
// that copy's classes. By default: require('bson') and require('..'). With
// BSON_RS_ORACLE=<alias> (an npm-alias devDependency such as bson731), every
// suite that loads this module runs against that published copy instead, with
// bson-rs's codec created for it exactly as the driver plug-in creates it.
const path = require('node:path');

const name = process.env.BSON_RS_ORACLE || 'bson';
const root = path.join(__dirname, '..', '..');
const version = require(path.join(root, 'node_modules', name, 'package.json')).version;

/** Is this copy's version before `major.minor.patch`? */
function before(v, target) {
  const a = v.split('.').map(Number);
  const b = target.split('.').map(Number);
  for (let k = 0; k < 3; k++) if (a[k] !== b[k]) return a[k] < b[k];
  return false;
}

/**
 * bson-rs sizes exactly what serialize writes, as js-bson 7.3.4 does, whatever
 * the copy (README, "Differences from js-bson"): copies before 7.3.4 miscount
 * -0, Code with an empty scope, and before 7.3.2 Int32, BSONSymbol and Maps,
 * and 7.3.0-7.3.2 never return on a cycle; bson 6 miscounts more. For them
 * the oracle of calculateObjectSize is 7.3.4's, throwing the copy's own error
 * classes. For bson 6 values that is 7.3.4's code compiled with major
 * version 6 (it reads the same public fields and `_bsontype`).
 */
function sizeAs734(copy, major) {
  let reference = require('bson734');
  if (major !== 7) {
    const Module = require('node:module');
    const file = require.resolve('bson734');
    const source = require('node:fs').readFileSync(file, 'utf8');
    const patched = source.replace('const BSON_MAJOR_VERSION = 7;', `const BSON_MAJOR_VERSION = ${major};`);
    if (patched === source) throw new Error('oracle: cannot retarget bson 7.3.4 to major ' + major);
    const m = new Module(`${file}?major=${major}`, module);
    m.filename = file;
    m.paths = Module._nodeModulePaths(path.dirname(file));
    m._compile(patched, file);
    reference = m.exports;
  }
  return function calculateObjectSize(...args) {
    try {
      return reference.calculateObjectSize(...args);
    } catch (e) {
      if (e instanceof reference.BSONVersionError) throw new copy.BSONVersionError();
      if (e instanceof reference.BSONError) throw new copy.BSONError(e.message);
      throw e;
    }
  };
}

function load() {
  if (name === 'bson') return { js: require('bson'), rs: require('../..') };
  let js = require(name);
  if (before(version, '7.3.4')) {
    const calculateObjectSize = sizeAs734(js, Number(version.split('.')[0]));
    js = Object.freeze({ ...js, calculateObjectSize, BSON: Object.freeze({ ...js.BSON, calculateObjectSize }) });
  }
  const { createCodec, bsonNamespace } = require('../../lib/codec');
  const BSON = bsonNamespace(js, createCodec(require(name)));
  return { js, rs: Object.freeze({ BSON, ...BSON }) };
}

const { js, rs } = load();

/** bson 6.x and 7.0-7.2 serialize and deserialize recursively: past the JS
 * stack they throw RangeError where bson-rs (like 7.3) goes on. */
const recursive = before(version, '7.3.0');

module.exports = { js, rs, name, version, recursive, before: target => before(version, target) };
