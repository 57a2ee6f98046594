'use strict';
// What the shape-compiled sizer and serializer tests share (shaped.test.js,
// shaped-serialize.test.js).
const { testing: shapes } = require('../../lib/shaped/table');

/**
 * Calls `check(make(i))` for i = 0, 1, ...: `warm` times, then a compile
 * window (table.js COMPILE_WINDOW) at a time until a window compiles nothing
 * more, as key lists over a window's compile budget (COMPILES_PER_WINDOW)
 * are compiled in the windows after.
 */
function warmUntilCompiled(make, check, warm) {
  let i = 0;
  for (; i < warm; i++) check(make(i));
  for (let seen = -1; seen !== shapes.compiled(); ) {
    seen = shapes.compiled();
    for (const end = i + shapes.COMPILE_WINDOW; i < end; i++) check(make(i));
  }
}

/** An `$and` of 50 conditions on 50 fields: 50 key lists that come once a call (and `{ $gte, $lt }`, 50 times). */
const andOf50 = i => ({ $and: Array.from({ length: 50 }, (_, k) => ({ ['f' + k]: { $gte: i, $lt: k } })) });

module.exports = { warmUntilCompiled, andOf50 };
