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
 * js-bson 7.3.4's codec for values of the given major: bson734 itself for 7,
 * else its code compiled with that major version (it reads public fields; for
 * bson 6 values, whose classes carry no type symbol, the tag is read from
 * `_bsontype`). Test-only: the reference for what bson-rs does deliberately
 * as 7.3.4 does (README, "Differences from js-bson").
 */
function reference734(major) {
  if (major === 7) return require('bson734');
  const Module = require('node:module');
  const file = require.resolve('bson734');
  const source = require('node:fs').readFileSync(file, 'utf8');
  const patched = source
    .replace('const BSON_MAJOR_VERSION = 7;', `const BSON_MAJOR_VERSION = ${major};`)
    .replaceAll('value[bsonType]', 'value._bsontype');
  if (!patched.includes(`const BSON_MAJOR_VERSION = ${major};`)) throw new Error(`oracle: cannot retarget bson 7.3.4 to major ${major}`);
  const m = new Module(`${file}?major=${major}`, module);
  m.filename = file;
  m.paths = Module._nodeModulePaths(path.dirname(file));
  m._compile(patched, file);
  return m.exports;
}

/** `fn` of the reference, throwing the copy's own error classes. */
function asCopy(copy, reference, fn) {
  return function (...args) {
    try {
      return fn.apply(reference, args);
    } catch (e) {
      if (e instanceof reference.BSONVersionError) throw new copy.BSONVersionError();
      if (e instanceof reference.BSONError) throw new copy.BSONError(e.message);
      throw e;
    }
  };
}

function isStackOverflow(e) {
  return e instanceof RangeError && e.message === 'Maximum call stack size exceeded';
}

/** The copy's `fn`, or, where its recursion overflows the JS stack, the reference's. */
function orDeeper(copyFn, referenceFn) {
  return function (...args) {
    try {
      return copyFn(...args);
    } catch (e) {
      if (isStackOverflow(e)) return referenceFn(...args);
      throw e;
    }
  };
}

/**
 * The oracle for an older copy, where bson-rs is deliberately 7.3.4:
 * - calculateObjectSize is 7.3.4's: copies before 7.3.4 miscount -0 and Code
 *   with an empty scope, before 7.3.2 Int32, BSONSymbol and Maps, 7.3.0-7.3.2
 *   never return on a cycle, and bson 6 miscounts more.
 * - bson 6.x and 7.0-7.2 recurse: where they overflow the JS stack (deep
 *   documents, a Code scope that contains itself), 7.3.4's result or error.
 */
function olderOracle(copy, major, recursive) {
  const reference = reference734(major);
  const calculateObjectSize = asCopy(copy, reference, reference.calculateObjectSize);
  const fixed = { calculateObjectSize };
  if (recursive) {
    fixed.serialize = orDeeper(copy.serialize, asCopy(copy, reference, reference.serialize));
    fixed.deserialize = orDeeper(copy.deserialize, asCopy(copy, reference, reference.deserialize));
  }
  return Object.freeze({ ...copy, ...fixed, BSON: Object.freeze({ ...copy.BSON, ...fixed }) });
}

function load() {
  if (name === 'bson') return { js: require('bson'), rs: require('../..') };
  let js = require(name);
  if (before(version, '7.3.4')) js = olderOracle(js, Number(version.split('.')[0]), recursive);
  const { createCodec, bsonNamespace } = require('../../lib/codec');
  const BSON = bsonNamespace(js, createCodec(require(name)));
  return { js, rs: Object.freeze({ BSON, ...BSON }) };
}

/** bson 6.x and 7.0-7.2 serialize and deserialize recursively: past the JS
 * stack they throw RangeError where bson-rs (like 7.3) goes on. */
const recursive = before(version, '7.3.0');

const { js, rs } = load();

module.exports = { js, rs, name, version, recursive, before: target => before(version, target) };
