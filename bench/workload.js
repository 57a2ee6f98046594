'use strict';
// What is timed (run.js) and what the peak-RSS children run (memory.js).
const { performance } = require('node:perf_hooks');

const OPERATIONS = ['deserialize', 'serialize', 'calculateObjectSize'];

/**
 * A sampler for one library, operation and document: sampler(n) makes n calls
 * of `api[op]` with default options on the document (serialize,
 * calculateObjectSize) or on its BSON bytes (deserialize) and returns the
 * elapsed wall time in ns. Each sampler is compiled separately (new Function),
 * so its loop and call site stay monomorphic whatever else runs in the
 * process; results go to a sink so the calls cannot be optimised away.
 */
function makeSampler(api, op, d) {
  if (!OPERATIONS.includes(op)) throw new Error(`unknown operation ${op}`);
  const input = op === 'deserialize' ? d.bytes : d.doc;
  const sink = { value: null };
  // eslint-disable-next-line no-new-func
  return new Function(
    'api',
    'input',
    'sink',
    'performance',
    `return function sample_${op}(n) {
      const t0 = performance.now();
      for (let i = 0; i < n; i++) sink.value = api.${op}(input);
      const t1 = performance.now();
      sink.value = null;
      return (t1 - t0) * 1e6;
    };`
  )(api, input, sink, performance);
}

/**
 * The same call as makeSampler's, as a zero-argument function for mitata's
 * measure() (run.js): one call of `api[op]` on the document or its bytes, the
 * result kept in a sink. Compiled separately per library, operation and
 * document, like the sampler.
 */
function makeCall(api, op, d) {
  if (!OPERATIONS.includes(op)) throw new Error(`unknown operation ${op}`);
  const input = op === 'deserialize' ? d.bytes : d.doc;
  const sink = { value: null };
  // eslint-disable-next-line no-new-func
  return new Function('api', 'input', 'sink', `return function call_${op}() { sink.value = api.${op}(input); };`)(api, input, sink);
}

/** Calls per document and operation in the memory workload: ~MEMORY_MIB of BSON, 4..250 calls. */
const MEMORY_MIB = 4;
function memoryIterations(bytes) {
  return Math.min(250, Math.max(4, Math.ceil((MEMORY_MIB * 1048576) / bytes)));
}

module.exports = { OPERATIONS, MEMORY_MIB, makeSampler, makeCall, memoryIterations };
