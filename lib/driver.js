'use strict';
// bson-rs/driver: routes a MongoDB Node.js driver's BSON codec through bson-rs.
//
//   require('bson-rs/driver').install(require('mongodb'));
//
// The driver (mongodb 6.x and 7.x) reads `serialize`, `deserialize`,
// `calculateObjectSize`, ... from the `bson` module it loaded at each call,
// either as `bson.serialize` or through the frozen `bson.BSON` namespace
// (`BSON.serialize`), both via its own lib/bson.js re-export getters. The
// module's exports are writable data properties, so installing means
// replacing the six codec functions on that module and replacing its `BSON`
// namespace with an equal frozen object whose codec members are ours.
//
// The codec is created for the driver's own bson copy (found from the
// driver's location, not ours), so deserialized values are instances of the
// classes the driver, and Mongoose on top of it, check against.
const fs = require('node:fs');
const path = require('node:path');
const { createCodec, documentReader, isSupportedVersion, SUPPORTED_BSON, CODEC_NAMES } = require('./codec');
// False when bson-rs runs without its native addon (js-bson's own functions, see ./loader.js).
const { loaded: native } = require('./loader');

/** bson majors whose classes and semantics the codec mirrors (lib/codec.js has the exact range). */
const SUPPORTED_BSON_MAJORS = Object.freeze([6, 7]);

// Kept on the bson module itself (non-enumerable, registered symbol), so that two
// copies of bson-rs in one process see each other's installation.
const STATE = Symbol.for('bson-rs.driver.installation');
// Every bson module object installed into, shared by all bson-rs copies in this realm.
const REGISTRY_KEY = Symbol.for('bson-rs.driver.installed-modules');
const registry = (globalThis[REGISTRY_KEY] ??= new Set());

function findPackageJson(file, ...expectedNames) {
  let dir = path.dirname(file);
  for (;;) {
    const candidate = path.join(dir, 'package.json');
    try {
      const json = JSON.parse(fs.readFileSync(candidate, 'utf8'));
      if (json && expectedNames.includes(json.name)) return { dir, json };
    } catch {
      // not there or not JSON: keep walking up
    }
    const parent = path.dirname(dir);
    if (parent === dir) return null;
    dir = parent;
  }
}

/** The require.cache entry whose exports are `mod` (or an ESM namespace of them). */
function findCachedModule(mod) {
  const candidates = [mod];
  if (mod && typeof mod === 'object' && mod.default && typeof mod.default === 'object') {
    candidates.push(mod.default);
  }
  for (const key of Object.keys(require.cache)) {
    const entry = require.cache[key];
    if (entry && candidates.includes(entry.exports)) return entry;
  }
  // An ESM namespace of a CommonJS module: match by a distinctive export.
  if (mod && typeof mod.MongoClient === 'function') {
    for (const key of Object.keys(require.cache)) {
      const entry = require.cache[key];
      if (entry && entry.exports && entry.exports.MongoClient === mod.MongoClient) return entry;
    }
  }
  return null;
}

/**
 * Locates the driver and the bson copy it loaded.
 * `mongodb` is the driver module (require('mongodb')), an ESM namespace of it,
 * or a path to a file inside the driver package.
 */
function locate(mongodb) {
  let driverFile;
  if (typeof mongodb === 'string') {
    driverFile = require.resolve(mongodb);
  } else if (mongodb && (typeof mongodb === 'object' || typeof mongodb === 'function')) {
    const entry = findCachedModule(mongodb);
    if (entry === null) {
      throw new TypeError(
        'bson-rs/driver: install() could not find this mongodb module among the loaded modules; ' +
          "pass the object returned by require('mongodb')"
      );
    }
    driverFile = entry.filename;
  } else {
    throw new TypeError("bson-rs/driver: install(mongodb) needs the driver module, e.g. install(require('mongodb'))");
  }
  const driverPkg = findPackageJson(driverFile, 'mongodb');
  if (driverPkg === null) {
    throw new TypeError(`bson-rs/driver: ${driverFile} is not inside a mongodb package`);
  }
  // Resolve exactly as the driver's lib/bson.js does: require("bson") from the driver's lib folder.
  const bsonFile = require.resolve('bson', { paths: [path.join(driverPkg.dir, 'lib')] });
  const bsonPkg = findPackageJson(bsonFile, 'bson', 'bson-rs');
  return {
    mongodbDir: driverPkg.dir,
    mongodbVersion: String(driverPkg.json.version),
    bsonFile,
    bsonVersion: bsonPkg ? String(bsonPkg.json.version) : 'unknown',
    // npm overrides put bson-rs itself where the driver looks for bson: nothing to patch.
    viaOverride: bsonPkg !== null && bsonPkg.json.name === 'bson-rs'
  };
}

function checkSupported(where) {
  if (!isSupportedVersion(where.bsonVersion)) {
    throw new Error(
      `bson-rs/driver: mongodb ${where.mongodbVersion} uses bson ${where.bsonVersion} (${where.bsonFile}); ` +
        `bson-rs supports ${SUPPORTED_BSON} only`
    );
  }
}

function loadBson(where) {
  // The driver has already loaded it, so this returns the driver's own module object.
  const bson = require(where.bsonFile);
  for (const name of [...CODEC_NAMES, 'BSON']) {
    const d = Object.getOwnPropertyDescriptor(bson, name);
    if (d === undefined || !('value' in d) || (!d.writable && !d.configurable)) {
      throw new Error(`bson-rs/driver: ${where.bsonFile} has no writable export "${name}"; cannot install`);
    }
  }
  return bson;
}

function setExport(bson, name, value) {
  const d = Object.getOwnPropertyDescriptor(bson, name);
  if (d.writable) bson[name] = value;
  else Object.defineProperty(bson, name, { ...d, value });
}

// The driver reads each document of a reply (each of a find's documents)
// through OnDemandDocument#toObject, which calls deserialize with
// `{ ...options, index: this.offset, allowObjectSmallerThanBufferSize: true }`.
// Made so for every document, that object gets a hidden class of its own
// (V8 11, Node 20), so making it and every read of it missed V8's caches:
// ~2 us a document, more than reading the document. Where the method's
// source is exactly this one, install replaces it with one that makes the
// same reads in the same order (the bson module's deserialize, this.bson,
// the spread of options, this.offset) and hands the spread's copy to the
// codec, which reads the settings from it as js-bson would from that object.
const ON_DEMAND_FILE = path.join('lib', 'cmap', 'wire_protocol', 'on_demand', 'document.js');
const TO_OBJECT_SOURCE =
  'toObject(options) { return (0, bson_1.deserialize)(this.bson, { ...options, index: this.offset, allowObjectSmallerThanBufferSize: true }); }';

/** Replaces the driver's OnDemandDocument#toObject (see above); returns what restore needs, or null if it is left as it is. */
function patchToObject(where, bson, codec) {
  const deserializeAt = documentReader(codec);
  // (only a module the driver has loaded: the file the driver's own requires found)
  const cached = require.cache[path.join(where.mongodbDir, ON_DEMAND_FILE)];
  const OnDemandDocument = cached?.exports?.OnDemandDocument;
  if (deserializeAt === null || typeof OnDemandDocument !== 'function') return null;
  const proto = OnDemandDocument.prototype;
  const descriptor = Object.getOwnPropertyDescriptor(proto, 'toObject');
  if (descriptor === undefined || typeof descriptor.value !== 'function' || !descriptor.writable || !descriptor.configurable) return null;
  const original = descriptor.value;
  if (Function.prototype.toString.call(original).replace(/\s+/g, ' ') !== TO_OBJECT_SOURCE) return null;
  const ours = codec.deserialize;
  const toObject = {
    toObject(options) {
      // (someone else's deserialize on the module since: the driver's own method calls that)
      if (bson.deserialize !== ours) return original.call(this, options);
      const bytes = this.bson;
      const copy = { ...options };
      return deserializeAt(bytes, this.offset, copy);
    }
  }.toObject;
  Object.defineProperty(proto, 'toObject', { ...descriptor, value: toObject });
  return Object.freeze({ proto, descriptor, method: toObject });
}

// A cursor hands out each document of a batch through CursorResponse#shift,
// which first builds an OnDemandDocument for it: two dictionaries and an
// index of the document's elements (js-bson's onDemand.parseToElements, an
// array per element), kept in the batch's cache until the batch is dropped.
// Its only use there is toObject, which reads the whole document anyway:
// ~0.6 us a document, and garbage (bench:driver's find() of 10,000
// documents on mongodb 7: 111 -> 71-80 ms without it). Where shift's source
// is exactly this one, and the driver's batches have the element layout a
// probe expects (below), install replaces it with one that reads the
// document straight from the batch's element. What it does not model (an
// encrypted reply, raw, an element that is not a document, a decode error)
// goes to the driver's own method, which then gives the driver's own result
// or error.
const RESPONSES_FILE = path.join('lib', 'cmap', 'wire_protocol', 'responses.js');
const SHIFT_SOURCE =
  'shift(options) { if (this.iterated >= this.batchSize) { return null; } const result = this.batch.get(this.iterated, bson_1.BSONType.object, true) ?? null; const encryptedResult = this.encryptedBatch?.get(this.iterated, bson_1.BSONType.object, true) ?? null; this.iterated += 1; if (options?.raw) { return result.toBytes(); } else { const object = result.toObject(options); if (encryptedResult) { (0, utils_1.decorateDecryptionResult)(object, encryptedResult.toObject(options), true); } return object; } }';
const BSON_DOCUMENT = 3; // an element's type byte (BSONType.object)
const ELEMENT_TYPE = 0; // an element of OnDemandDocument#elements: [type, nameOffset, nameLength, offset, length]
const ELEMENT_OFFSET = 3;

/** Whether this driver's CursorResponse lays out a batch as shift's replacement reads it (see above). */
function batchLayoutMatches(CursorResponse, bson) {
  try {
    const response = new CursorResponse(bson.serialize({ cursor: { firstBatch: [{ a: 1 }, 'b'], id: 0 }, ok: 1 }));
    const batch = response.batch;
    const [first, second] = batch.elements;
    if (batch.isArray !== true || response.encryptedBatch !== null || batch.cache[0] !== undefined) return false;
    if (first[ELEMENT_TYPE] !== BSON_DOCUMENT || second[ELEMENT_TYPE] === BSON_DOCUMENT) return false;
    const document = batch.get(0, BSON_DOCUMENT, true);
    return document.offset === first[ELEMENT_OFFSET] && document.bson === batch.bson && batch.cache[0] !== undefined;
  } catch {
    return false;
  }
}

/** Replaces the driver's CursorResponse#shift (see above); returns what restore needs, or null if it is left as it is. */
function patchShift(where, bson, codec, toObjectPatch) {
  const deserializeAt = documentReader(codec);
  const cached = require.cache[path.join(where.mongodbDir, RESPONSES_FILE)];
  const CursorResponse = cached?.exports?.CursorResponse;
  if (toObjectPatch === null || deserializeAt === null || typeof CursorResponse !== 'function') return null;
  const proto = CursorResponse.prototype;
  const descriptor = Object.getOwnPropertyDescriptor(proto, 'shift');
  if (descriptor === undefined || typeof descriptor.value !== 'function' || !descriptor.writable || !descriptor.configurable) return null;
  const original = descriptor.value;
  if (Function.prototype.toString.call(original).replace(/\s+/g, ' ') !== SHIFT_SOURCE) return null;
  if (!batchLayoutMatches(CursorResponse, bson)) return null;
  const ours = codec.deserialize;
  const { proto: documentProto, method: ourToObject } = toObjectPatch;
  const shift = {
    shift(options) {
      // (the driver's method would reach someone else's deserialize or toObject)
      if (bson.deserialize !== ours || documentProto.toObject !== ourToObject) return original.call(this, options);
      const index = this.iterated;
      if (index >= this.batchSize) return null;
      const batch = this.batch;
      const element = batch.isArray === true ? batch.elements[index] : undefined;
      if (element === undefined || element[ELEMENT_TYPE] !== BSON_DOCUMENT || this.encryptedBatch !== null || options?.raw) {
        return original.call(this, options);
      }
      this.iterated = index + 1;
      const bytes = batch.bson;
      const copy = { ...options };
      try {
        return deserializeAt(bytes, element[ELEMENT_OFFSET], copy);
      } catch {
        // The driver's own method, from the same state, throws the driver's own error.
        this.iterated = index;
        return original.call(this, options);
      }
    }
  }.shift;
  Object.defineProperty(proto, 'shift', { ...descriptor, value: shift });
  return Object.freeze({ proto, descriptor, method: shift });
}

/**
 * Routes the given driver's codec through bson-rs. Installing twice is harmless.
 * Returns a description of what was patched; `native: false` there (and the
 * warning line of ./loader.js) means bson-rs itself runs js-bson's functions.
 */
function install(mongodb) {
  const where = locate(mongodb);
  if (where.viaOverride) {
    return Object.freeze({
      mongodbDir: where.mongodbDir,
      mongodbVersion: where.mongodbVersion,
      bsonFile: where.bsonFile,
      bsonVersion: `bson-rs ${where.bsonVersion}`,
      viaOverride: true,
      native
    });
  }
  checkSupported(where);
  const bson = loadBson(where);
  const info = Object.freeze({
    mongodbDir: where.mongodbDir,
    mongodbVersion: where.mongodbVersion,
    bsonFile: where.bsonFile,
    bsonVersion: where.bsonVersion,
    viaOverride: false,
    native
  });
  if (bson[STATE] !== undefined) return info;

  // Build the codec from the pristine module, before anything on it changes.
  const codec = createCodec(bson);
  const originals = { BSON: bson.BSON };
  for (const name of CODEC_NAMES) originals[name] = bson[name];

  const namespace = Object.assign(Object.create(null), originals.BSON);
  for (const name of CODEC_NAMES) namespace[name] = codec[name];
  Object.freeze(namespace);

  const toObject = patchToObject(where, bson, codec);
  const shift = patchShift(where, bson, codec, toObject);
  Object.defineProperty(bson, STATE, {
    value: Object.freeze({ originals: Object.freeze(originals), codec, namespace, info, patches: Object.freeze([toObject, shift]) }),
    configurable: true,
    enumerable: false,
    writable: false
  });
  for (const name of CODEC_NAMES) setExport(bson, name, codec[name]);
  setExport(bson, 'BSON', namespace);
  registry.add(bson);
  return info;
}

function restore(bson) {
  const state = bson[STATE];
  if (state === undefined) return false;
  for (const name of CODEC_NAMES) setExport(bson, name, state.originals[name]);
  setExport(bson, 'BSON', state.originals.BSON);
  for (const patch of state.patches) {
    if (patch === null) continue;
    // (a method someone replaced after ours is theirs to keep)
    const name = patch.method.name;
    if (patch.proto[name] === patch.method) Object.defineProperty(patch.proto, name, patch.descriptor);
  }
  delete bson[STATE];
  registry.delete(bson);
  return true;
}

/**
 * Restores the original js-bson functions of the given driver's bson copy, or,
 * without an argument, of every bson copy installed into. Returns true if
 * anything was restored.
 */
function uninstall(mongodb) {
  if (mongodb !== undefined) {
    const where = locate(mongodb);
    if (where.viaOverride) return false;
    const cached = require.cache[where.bsonFile];
    return cached !== undefined && cached.exports != null ? restore(cached.exports) : false;
  }
  let restored = false;
  for (const bson of [...registry]) restored = restore(bson) || restored;
  return restored;
}

/** Whether the given driver's bson copy currently routes through bson-rs. */
function isInstalled(mongodb) {
  const where = locate(mongodb);
  if (where.viaOverride) return true;
  const cached = require.cache[where.bsonFile];
  if (cached === undefined || cached.exports == null) return false;
  const state = cached.exports[STATE];
  return state !== undefined && cached.exports.BSON === state.namespace;
}

/** The bson module object (js-bson copy) the given driver loaded. */
function driverBson(mongodb) {
  const where = locate(mongodb);
  return require(where.bsonFile);
}

module.exports = {
  install,
  uninstall,
  isInstalled,
  driverBson,
  CODEC_NAMES,
  SUPPORTED_BSON_MAJORS
};
