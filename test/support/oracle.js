'use strict';
// The js-bson copy a differential suite compares against, and bson-rs built over
// that copy's classes. By default: require('bson') and require('..'). With
// BSON_RS_ORACLE=<alias> (an npm-alias devDependency such as bson731), every
// suite that loads this module runs against that published copy instead, with
// bson-rs's codec created for it exactly as the driver plug-in creates it.
const name = process.env.BSON_RS_ORACLE;

function load() {
  if (!name) return { js: require('bson'), rs: require('../..'), name: 'bson' };
  const js = require(name);
  const { createCodec, bsonNamespace } = require('../../lib/codec');
  const BSON = bsonNamespace(js, createCodec(js));
  return { js, rs: Object.freeze({ BSON, ...BSON }), name };
}

const { js, rs } = load();
const root = require('node:path').join(__dirname, '..', '..');
const version = require(require('node:path').join(root, 'node_modules', name || 'bson', 'package.json')).version;

module.exports = { js, rs, name: name || 'bson', version };
