'use strict';
// bson-rs: js-bson's exports, with the codec functions replaced by the Rust codec.
// Classes, EJSON, errors and utils are js-bson's own objects.
const bson = require('bson');
const { createCodec } = require('./lib/codec');

const codec = createCodec(bson);
const api = {};
for (const name of Object.keys(bson)) {
  if (name === 'BSON') continue;
  api[name] = Object.prototype.hasOwnProperty.call(codec, name) ? codec[name] : bson[name];
}
// js-bson's BSON namespace is a frozen, null-prototype object with every export but itself.
const BSON = Object.freeze(Object.assign(Object.create(null), api));

module.exports = { BSON, ...api };
