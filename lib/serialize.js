'use strict';
// PLACEHOLDER: delegates to js-bson until the Rust writer lands.
module.exports = function createSerializer(bson) {
  return {
    serialize: bson.serialize,
    serializeWithBufferAndIndex: bson.serializeWithBufferAndIndex,
    calculateObjectSize: bson.calculateObjectSize,
    setInternalBufferSize: bson.setInternalBufferSize
  };
};
