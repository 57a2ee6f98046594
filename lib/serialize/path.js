'use strict';
// The circular-structure path of serialize and calculateObjectSize: js-bson's
// `path` Set, the sources of the open frames, `srcs[0..last]`. Up to
// SCAN_DEPTH levels (MongoDB's nesting limit) they are scanned. Deeper, the
// caller's `state.path` Set answers first: it holds srcs[0..state.inSet)
// (brought up to `last` when asked; a caller lowers inSet as it replaces
// srcs below it) and is only emptied when the call ends, so it may also
// hold sources of frames closed since: a value found in it is on the path
// only if the scan finds it (a repeated object, rarely).
//
// (Scanning the first 64 levels on every deeper level and deleting each
// source from the Set as its frame closed made serializing 100 levels
// 0.91-0.97x js-bson's speed, 200 levels 0.65-0.69x; a scan of one compare
// an iteration 1.02-1.13x and 0.90-0.98x; this one 1.23-1.31x and 0.96-1.08x.
// The Set from 32 levels on: 1.02-1.08x and 1.09-1.13x.)
const SCAN_DEPTH = 100;

/** Whether `value` is one of srcs[0..last] (`state`: { path: Set, inSet }). */
function onPath(state, srcs, last, value) {
  if (last >= SCAN_DEPTH) {
    const path = state.path;
    for (let d = state.inSet; d <= last; d++) path.add(srcs[d]);
    state.inSet = last + 1;
    if (!path.has(value)) return false;
  }
  let d = 0;
  // (four compares an iteration: ~0.9 ns a level against ~1.2-1.7)
  for (; d + 3 <= last; d += 4) {
    if (srcs[d] === value || srcs[d + 1] === value || srcs[d + 2] === value || srcs[d + 3] === value) return true;
  }
  for (; d <= last; d++) {
    if (srcs[d] === value) return true;
  }
  return false;
}

module.exports = { onPath, SCAN_DEPTH };
