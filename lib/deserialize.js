'use strict';
// PLACEHOLDER: delegates to js-bson until the Rust reader lands.
module.exports = function createDeserializer(bson) {
  return { deserialize: bson.deserialize, deserializeStream: bson.deserializeStream };
};
