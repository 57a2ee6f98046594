'use strict';
// What is timed (run.js) and what the peak-RSS children run (memory.js).
const OPERATIONS = ['deserialize', 'serialize', 'calculateObjectSize'];

/**
 * A fresh zero-argument function calling `api[op]` with default options on the
 * document (serialize, calculateObjectSize) or on its BSON bytes (deserialize).
 * Each function has its own code (new Function), so its call site stays
 * monomorphic whatever else runs in the process; the result goes to a sink so
 * the call cannot be optimised away.
 */
function makeBenchFunction(api, op, d) {
  if (!OPERATIONS.includes(op)) throw new Error(`unknown operation ${op}`);
  const input = op === 'deserialize' ? d.bytes : d.doc;
  const sink = { value: null };
  // eslint-disable-next-line no-new-func
  return new Function('api', 'input', 'sink', `return function bench_${op}() { sink.value = api.${op}(input); };`)(
    api,
    input,
    sink
  );
}

/** Calls per document and operation in the memory workload: ~8 MiB of BSON, 8..500 calls. */
function memoryIterations(bytes) {
  return Math.min(500, Math.max(8, Math.ceil((8 * 1048576) / bytes)));
}

module.exports = { OPERATIONS, makeBenchFunction, memoryIterations };
