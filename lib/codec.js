'use strict';
// createCodec(bson): the six codec functions, producing and recognising the
// classes of the given js-bson copy (ours, or the one a MongoDB driver loaded).
// Without the native addon (see ./loader.js) they are that copy's own functions.
const native = require('./loader');
const { versionOf } = require('./layout');
const { selfCheck } = require('./selfcheck');

const codecs = new WeakMap();

const CODEC_NAMES = [
  'serialize',
  'serializeWithBufferAndIndex',
  'deserialize',
  'deserializeStream',
  'calculateObjectSize',
  'setInternalBufferSize'
];

/**
 * bson 7.0–7.2 serialize and deserialize recursively; their errors on malformed
 * input, nesting limits, cycle and `__proto__` handling and property reads
 * differ from 7.3's in ways bson-rs does not reproduce (test/versions.test.js
 * ran the differential suites against each): refuse them rather than differ.
 */
function checkVersion(version) {
  const [major, minor] = version.split('.').map(Number);
  if (major === 7 && minor < 3) {
    throw new Error(
      `bson-rs: refusing bson ${version}: bson-rs reproduces bson 7.3.0 and later, not 7.0–7.2; ` +
        'update it with `npm update bson` (every mongodb 7.x accepts bson 7.3). Nothing was installed.'
    );
  }
}

/**
 * The codec for a js-bson copy, built once per copy. Throws (and builds
 * nothing) when the copy fails the self-check in lib/selfcheck.js.
 * Without the native addon: the copy's own functions, after native.fallback()
 * (one warning line, or the error BSON_RS_REQUIRE_NATIVE=1 asks for).
 */
function createCodec(bson) {
  let codec = codecs.get(bson);
  if (codec === undefined && !native.loaded) {
    native.fallback();
    codec = Object.freeze(Object.fromEntries(CODEC_NAMES.map((name) => [name, bson[name]])));
    codecs.set(bson, codec);
  }
  if (codec === undefined) {
    const version = versionOf(bson);
    checkVersion(version);
    // Required here, not at the top: they need the addon (lib/native.js).
    const createSerializer = require('./serialize');
    const createDeserializer = require('./deserialize');
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
    selfCheck(bson, codec, `bson ${version}`);
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
