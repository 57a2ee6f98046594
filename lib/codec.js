'use strict';
// createCodec(bson): the six codec functions, producing and recognising the
// classes of the given js-bson copy (ours, or the one a MongoDB driver loaded).
// Without the native addon (see ./loader.js) they are that copy's own functions.
const native = require('./loader');
const { versionOf } = require('./layout');
const { selfCheck } = require('./selfcheck');
const { COMPILE_AFTER } = require('./shaped/table');

const codecs = new WeakMap();
const documentReaders = new WeakMap(); // codec -> its deserializeAt (see documentReader)
let warmedUp = false; // (once per process: every copy's codec runs the same functions)

/**
 * Runs the codec on two small documents when the first codec is built. V8
 * compiles a function at its first call: the first serialize of `{ ok: 1 }`
 * took 1.4-1.5 ms that way (js-bson's 0.6 ms), and the first key list
 * compiled (lib/shaped) ~0.3 ms more, in the application's first requests;
 * here it is paid in require(). A function called a few times records next
 * to no type feedback (V8 allocates it after about 8 calls' worth of
 * bytecode), so the application's documents still decide what V8 optimises.
 * (64 calls of the tiny document gave its path baseline code here, and a new
 * process's first 1,000 serializes of { ok: 1 } 1.16x the speed, but its
 * feedback in the shared writers cost serializing 1,000 int32s or doubles
 * in a fresh process a third: 3.3-3.6x js-bson -> 2.3-2.4x.)
 * Its keys are ones no application document is likely to reuse as a whole
 * list. An error is left to the application's own first call.
 */
function warmUp(bson, codec) {
  warmedUp = true;
  // The JS paths of the smallest documents; its key list recurs until it is
  // compiled, which compiles the compilers.
  const tiny = { bsonRsWarmUp: 1 };
  // The native paths: more elements and bytes than the small paths take.
  const doc = {
    _id: new bson.ObjectId('0123456789abcdef01234567'),
    name: 'warm-up',
    n: 1,
    x: 1.5,
    flag: true,
    none: null,
    at: new Date(0),
    tags: ['a', 'b'],
    sub: { k: 1, s: 'text', list: [1, 2.5] },
    note: 'a string long enough to take the document past the small reader'
  };
  try {
    for (let k = 0; k < COMPILE_AFTER; k++) {
      codec.calculateObjectSize(tiny);
      codec.serialize(tiny);
    }
    codec.deserialize(codec.serialize(tiny));
    codec.calculateObjectSize(doc);
    codec.deserialize(codec.serialize(doc));
  } catch {
    // (an optimisation only)
  }
}

/** The six functions bson-rs provides in place of a js-bson copy's own. */
const CODEC_NAMES = Object.freeze([
  'serialize',
  'serializeWithBufferAndIndex',
  'deserialize',
  'deserializeStream',
  'calculateObjectSize',
  'setInternalBufferSize'
]);

/** The bson releases bson-rs reproduces (each tested as its own oracle). */
const SUPPORTED_BSON = 'bson 6.10.x (mongodb 6.x, mongoose 8.x) and 7.x (mongodb 7.x, mongoose 9.x)';

/** Is `version` (from the copy's package.json, or 'unknown…') one of SUPPORTED_BSON?
 * A copy of unknown version still has to pass the self-check. */
function isSupportedVersion(version) {
  if (version.startsWith('unknown')) return true;
  const [major, minor] = version.split('.').map(Number);
  return (major === 6 && minor >= 10) || major === 7;
}

/**
 * The bson releases the test suite runs as oracles (package.json's bson
 * devDependency aliases, test/versions.test.js): their codecs are checked
 * against bson-rs's at test time, far beyond the self-check's one document.
 * createCodec self-checks every other version. (Skipping it here matters: it
 * sends every BSON type through the serializer at load time, which leaves
 * the serializer's inline caches megamorphic before the application's first
 * document; js-bson pays nothing of the kind.)
 */
const TESTED_BSON = Object.freeze(['6.10.0', '6.10.1', '6.10.2', '6.10.3', '6.10.4', '7.0.0', '7.1.0', '7.1.1', '7.2.0', '7.3.0', '7.3.1', '7.3.2', '7.3.3', '7.3.4']);

function checkVersion(version) {
  if (!isSupportedVersion(version)) {
    throw new Error(
      `bson-rs: refusing bson ${version}: bson-rs reproduces ${SUPPORTED_BSON}; ` +
        'update it (`npm update bson`, or the driver that brings it). Nothing was installed.'
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
    const { deserialize, deserializeStream, deserializeAt } = createDeserializer(bson);
    codec = Object.freeze({
      serialize,
      serializeWithBufferAndIndex,
      deserialize,
      deserializeStream,
      calculateObjectSize,
      setInternalBufferSize
    });
    documentReaders.set(codec, deserializeAt);
    if (!TESTED_BSON.includes(version)) selfCheck(bson, codec, `bson ${version}`);
    if (!warmedUp) warmUp(bson, codec);
    codecs.set(bson, codec);
  }
  return codec;
}

/**
 * The codec's `deserializeAt(buffer, index, copy)` (lib/deserialize.js), for
 * the driver plug-in's OnDemandDocument#toObject and CursorResponse#shift;
 * null without the addon.
 */
function documentReader(codec) {
  return documentReaders.get(codec) ?? null;
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

module.exports = { createCodec, documentReader, bsonNamespace, isSupportedVersion, SUPPORTED_BSON, TESTED_BSON, CODEC_NAMES };
