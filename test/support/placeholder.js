'use strict';
// Whether the codec in this checkout is still the js-bson-delegating placeholder.
// Tests that can only pass with the real codec are marked `todo` while it is.
// No side effects on load.
const fs = require('node:fs');
const path = require('node:path');

function codecIsPlaceholder() {
  const root = path.join(__dirname, '..', '..', 'lib');
  return ['serialize.js', 'deserialize.js'].some(f => {
    try {
      return fs.readFileSync(path.join(root, f), 'utf8').includes('PLACEHOLDER');
    } catch {
      return false;
    }
  });
}

/** `{ todo }` options for node:test while the placeholder is in place, else `{}`. */
function todoWhilePlaceholder() {
  return codecIsPlaceholder() ? { todo: 'until the Rust codec is merged (lib/ still has the PLACEHOLDER codec)' } : {};
}

module.exports = { codecIsPlaceholder, todoWhilePlaceholder };
