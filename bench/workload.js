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
  if (d.pool) return makePoolSampler(api, op, d);
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
  if (d.pool) return makePoolCall(api, op, d);
  const input = op === 'deserialize' ? d.bytes : d.doc;
  const sink = { value: null };
  // eslint-disable-next-line no-new-func
  return new Function('api', 'input', 'sink', `return function call_${op}() { sink.value = api.${op}(input); };`)(api, input, sink);
}

/** The inputs of a pool document (d.pool, d.poolBytes): its documents, or their BSON bytes for deserialize. */
function poolInputs(op, d) {
  const inputs = op === 'deserialize' ? d.poolBytes : d.pool;
  if (!inputs || inputs.length === 0) throw new Error(`${d.name}: pool without ${op === 'deserialize' ? 'poolBytes' : 'documents'}`);
  return inputs;
}

/**
 * makeSampler for a pool document: each call takes the next member of the pool
 * (cycling), so keys differ from call to call. The cursor lives in the closure
 * (one per library and operation) and carries on from sample to sample.
 */
function makePoolSampler(api, op, d) {
  const inputs = poolInputs(op, d);
  const sink = { value: null };
  // eslint-disable-next-line no-new-func
  return new Function(
    'api',
    'inputs',
    'sink',
    'performance',
    `let at = 0;
    const size = inputs.length;
    return function sample_pool_${op}(n) {
      const t0 = performance.now();
      for (let i = 0; i < n; i++) {
        sink.value = api.${op}(inputs[at]);
        if (++at === size) at = 0;
      }
      const t1 = performance.now();
      sink.value = null;
      return (t1 - t0) * 1e6;
    };`
  )(api, inputs, sink, performance);
}

/** makeCall for a pool document: one call on the next member of the pool (cycling). */
function makePoolCall(api, op, d) {
  const inputs = poolInputs(op, d);
  const sink = { value: null };
  // eslint-disable-next-line no-new-func
  return new Function(
    'api',
    'inputs',
    'sink',
    `let at = 0;
    const size = inputs.length;
    return function call_pool_${op}() {
      sink.value = api.${op}(inputs[at]);
      if (++at === size) at = 0;
    };`
  )(api, inputs, sink);
}

/** Calls per document and operation in the memory workload: ~MEMORY_MIB of BSON, 4..250 calls. */
const MEMORY_MIB = 4;
function memoryIterations(bytes) {
  return Math.min(250, Math.max(4, Math.ceil((MEMORY_MIB * 1048576) / bytes)));
}

module.exports = { OPERATIONS, MEMORY_MIB, makeSampler, makeCall, memoryIterations };
