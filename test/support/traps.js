'use strict';
// Trap-sequence comparison for calculateObjectSize (test/serialize.test.js,
// test/shaped.test.js).
const assert = require('node:assert');
const { isDeepStrictEqual } = require('node:util');

// calculateObjectSize reads `_bsontype` once per value and dispatches on it
// (README, differences): its trap sequence is js-bson's with the repeated
// `_bsontype` reads, and the Date / ArrayBuffer / RegExp probes that js-bson
// makes before reaching a BSON tag, left out; everything else in the same order.
function assertFastSizeTraps(rsLog, jsLog, message) {
  const skippable = e => {
    const op = e[e.length - 2];
    const k = e[e.length - 1];
    return (
      (op === 'get' && k === '_bsontype') ||
      ((op === 'get' || op === 'has') && k === 'Symbol(Symbol.toStringTag)') ||
      k === 'getPrototypeOf'
    );
  };
  let j = 0;
  for (let i = 0; i < rsLog.length; i++) {
    while (j < jsLog.length && !isDeepStrictEqual(jsLog[j], rsLog[i])) {
      assert.ok(skippable(jsLog[j]), `${message}: js-bson's ${JSON.stringify(jsLog[j])} missing before ${JSON.stringify(rsLog[i])}`);
      j++;
    }
    assert.ok(j < jsLog.length, `${message}: unexpected ${JSON.stringify(rsLog[i])}`);
    j++;
  }
  for (; j < jsLog.length; j++) assert.ok(skippable(jsLog[j]), `${message}: js-bson's ${JSON.stringify(jsLog[j])} missing at the end`);
  const reads = log => log.filter(e => e[e.length - 2] === 'get' && e[e.length - 1] === '_bsontype').length;
  assert.ok(reads(rsLog) <= reads(jsLog), message);
}

/**
 * `target` behind a Proxy that logs its get / has / ownKeys /
 * getOwnPropertyDescriptor traps into `log` (and getPrototypeOf, which
 * `instanceof` calls, with `{ proto: true }`).
 */
function traced(target, log, { proto = false } = {}) {
  return new Proxy(target, {
    ...(proto && {
      getPrototypeOf(t) {
        log.push(['getPrototypeOf']);
        return Reflect.getPrototypeOf(t);
      }
    }),
    get(t, k, r) {
      log.push(['get', typeof k === 'symbol' ? k.toString() : k]);
      return Reflect.get(t, k, r);
    },
    has(t, k) {
      log.push(['has', typeof k === 'symbol' ? k.toString() : k]);
      return Reflect.has(t, k);
    },
    ownKeys(t) {
      log.push(['ownKeys']);
      return Reflect.ownKeys(t);
    },
    getOwnPropertyDescriptor(t, k) {
      log.push(['gopd', typeof k === 'symbol' ? k.toString() : k]);
      return Reflect.getOwnPropertyDescriptor(t, k);
    }
  });
}

module.exports = { assertFastSizeTraps, traced };
