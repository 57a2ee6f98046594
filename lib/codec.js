'use strict';
// createCodec(bson): the six codec functions, producing and recognising the
// classes of the given js-bson copy (ours, or the one a MongoDB driver loaded).
const createSerializer = require('./serialize');
const createDeserializer = require('./deserialize');
const { versionOf } = require('./layout');
const { selfCheck } = require('./selfcheck');

const codecs = new WeakMap();

/**
 * The codec for a js-bson copy, built once per copy. Throws (and builds
 * nothing) when the copy fails the self-check in lib/selfcheck.js.
 */
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
    selfCheck(bson, codec, `bson ${versionOf(bson)}`);
    codecs.set(bson, codec);
  }
  return codec;
}

/**
 * js-bson's `BSON` namespace for a codec: a frozen, null-prototype object with
 * every export of `bson` but `BSON` itself, the codec functions replaced.
 */
function bsonNamespace(bson, codec) {
  const namespace = Object.create(null);
  for (const name of Object.keys(bson)) {
    if (name === 'BSON') continue;
    namespace[name] = Object.prototype.hasOwnProperty.call(codec, name) ? codec[name] : bson[name];
  }
  return Object.freeze(namespace);
}

module.exports = { createCodec, bsonNamespace };
