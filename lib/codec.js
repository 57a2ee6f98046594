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
 * The bson releases bson-rs reproduces: 6.10 (under mongodb 6 / mongoose 8)
 * and every 7.x. Others are refused before anything is built.
 */
function checkVersion(version) {
  const [major, minor] = version.split('.').map(Number);
  if (!((major === 6 && minor >= 10) || major === 7 || version === 'unknown version')) {
    throw new Error(
      `bson-rs: refusing bson ${version}: bson-rs reproduces bson 6.10.x and 7.x; ` +
        'update it (`npm update bson`, or the mongodb driver that brings it). Nothing was installed.'
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
