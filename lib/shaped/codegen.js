'use strict';
// The one place bson-rs generates code (`new Function`): the deserialize
// factories (lib/deserialize/shapes.js) and the shape-compiled sizers
// (lib/shaped/size.js). Under --disallow-code-generation-from-strings (or a
// CSP that forbids eval) `compile` returns null and callers keep their loops.

let available = true;
try {
  available = new Function('return 1')() === 1;
} catch {
  available = false;
}

/** new Function(...params, body), or null when code generation is not allowed here. */
function compile(params, body) {
  if (!available) return null;
  try {
    return new Function(...params, body);
  } catch {
    available = false;
    return null;
  }
}

/** Source of the test that the array `keys` holds exactly the key list `list` (compiled frames' key compare). */
function sameKeysSource(list) {
  let same = `keys.length === ${list.length}`;
  for (let i = 0; i < list.length; i++) same += ` && keys[${i}] === ${JSON.stringify(list[i])}`;
  return same;
}

module.exports = {
  compile,
  sameKeysSource,
  get available() {
    return available;
  }
};
