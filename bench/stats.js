'use strict';
// Shared by the bench scripts: medians, geometric means, and a real gc().
const v8 = require('node:v8');
const vm = require('node:vm');

function median(values) {
  const s = [...values].sort((a, b) => a - b);
  const n = s.length;
  return n === 0 ? NaN : n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

function geomean(values) {
  return values.length === 0 ? NaN : Math.exp(values.reduce((a, v) => a + Math.log(v), 0) / values.length);
}

/** A gc() function, exposing it when the process was not started with --expose-gc. */
function exposeGc() {
  if (typeof globalThis.gc === 'function') return globalThis.gc;
  v8.setFlagsFromString('--expose-gc');
  return vm.runInNewContext('gc');
}

module.exports = { median, geomean, exposeGc };
