'use strict';
// createCodec(bson): the six codec functions, producing and recognising the
// classes of the given js-bson copy (ours, or the one a MongoDB driver loaded).
const createSerializer = require('./serialize');
const createDeserializer = require('./deserialize');

const codecs = new WeakMap();

function createCodec(bson) {
  let codec = codecs.get(bson);
  if (codec === undefined) {
    const { serialize, serializeWithBufferAndIndex, calculateObjectSize, setInternalBufferSize } =
      createSerializer(bson);
    const { deserialize, deserializeStream } = createDeserializer(bson);
    codec = Object.freeze({
      serialize,
      serializeWithBufferAndIndex,
      deserialize,
      deserializeStream,
      calculateObjectSize,
      setInternalBufferSize
    });
    codecs.set(bson, codec);
  }
  return codec;
}

module.exports = { createCodec };
