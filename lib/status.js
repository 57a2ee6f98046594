'use strict';
// bson-rs/native: whether the Rust codec is in use.
//   require('bson-rs/native') // { loaded: true, binary: '/…/bson-rs.linux-x64-gnu.node', reason: null }
// `reason` says why not (and what to do) when `loaded` is false; then bson-rs
// runs js-bson's own codec functions. Reading this prints no warning.
const { loaded, binary, reason } = require('./loader');

module.exports = Object.freeze({ loaded, binary, reason });
