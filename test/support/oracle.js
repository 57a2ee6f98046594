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
 * and before 7.3.3 never return on a cycle. For them the oracle of
 * calculateObjectSize is 7.3.4's, throwing the copy's own error classes.
 */
function sizeAs734(copy) {
  const reference = require('bson734');
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
    const calculateObjectSize = sizeAs734(js);
    js = Object.freeze({ ...js, calculateObjectSize, BSON: Object.freeze({ ...js.BSON, calculateObjectSize }) });
  }
  const { createCodec, bsonNamespace } = require('../../lib/codec');
  const BSON = bsonNamespace(js, createCodec(require(name)));
  return { js, rs: Object.freeze({ BSON, ...BSON }) };
}

const { js, rs } = load();

module.exports = { js, rs, name, version, before: target => before(version, target) };
