'use strict';
// Whether the codec in this checkout is still the js-bson-delegating placeholder.
// Tests that can only pass with the real codec are marked `todo` while it is.
// No side effects on load.
const fs = require('node:fs');
const path = require('node:path');

/** True if any of `files` (in lib/; default both codec halves) is still the placeholder. */
function codecIsPlaceholder(files = ['serialize.js', 'deserialize.js']) {
  const root = path.join(__dirname, '..', '..', 'lib');
  return files.some(f => {
    try {
      return fs.readFileSync(path.join(root, f), 'utf8').includes('PLACEHOLDER');
    } catch {
      return false;
    }
  });
}

/** `{ todo }` options for node:test while the placeholder is in place, else `{}`. */
function todoWhilePlaceholder(files) {
  return codecIsPlaceholder(files) ? { todo: 'until the Rust codec is merged (lib/ still has the PLACEHOLDER codec)' } : {};
}

module.exports = { codecIsPlaceholder, todoWhilePlaceholder };
