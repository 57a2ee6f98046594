'use strict';
// bson-rs: js-bson's exports, with the codec functions replaced by the Rust codec.
// Classes, EJSON, errors and utils are js-bson's own objects.
const bson = require('bson');
const { createCodec, bsonNamespace } = require('./lib/codec');

const BSON = bsonNamespace(bson, createCodec(bson));

module.exports = { BSON, ...BSON };
