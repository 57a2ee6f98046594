'use strict';
// deserialize / deserializeStream, bound to one js-bson copy's classes.
// The Rust reader (core, "decode") validates the whole document and writes
// a tape (deserialize/tape.js); deserialize/builder.js follows it.
// Options: deserialize/options.js.
const { Buffer } = require('node:buffer');
const { layoutOf } = require('./layout');
const { tape, decodeToTape, releaseTape } = require('./deserialize/tape');
const { createBuilder, releaseValues, forgetInput, regExpFlags } = require('./deserialize/builder');
const { readSmall } = require('./deserialize/small');
const { createOptionsReader, isDefault, getInt32LE, DEFAULT_FLAGS, F_BSON_REGEXP, F_RECURSIVE } = require('./deserialize/options');

let utf8Cause;
function invalidUtf8Cause() {
  if (utf8Cause === undefined) {
    try {
      new TextDecoder('utf8', { fatal: true }).decode(new Uint8Array([0xff]));
    } catch (e) {
      utf8Cause = e;
    }
  }
  return utf8Cause;
}

module.exports = function createDeserializer(bson) {
  const { BSONRegExp, BSONError } = bson;
  const layout = layoutOf(bson);
  const { build, binary, objectId, ByteUtils } = createBuilder(bson, layout);
  // The copy's messages for malformed nested documents (see ARCHITECTURE.md, "Reads of js-bson internals").
  const nestedChecks = layout.readsNestedRecursively ? F_RECURSIVE : 0;
  const { readOptions, readCopied } = createOptionsReader(BSONError, layout.readsInheritedOptions);
  const jsDeserialize = bson.deserialize;

  function fail(message, flags) {
    // js-bson builds each RegExp as it reads it, so an invalid one read before
    // the error found by the Rust reader throws first.
    const strings = tape.strings;
    for (let k = 0; k + 1 < tape.stringCount; k += 2) {
      if (flags & F_BSON_REGEXP) new BSONRegExp(strings[k], strings[k + 1]);
      else new RegExp(strings[k], regExpFlags(strings[k + 1]));
    }
    if (message.charCodeAt(0) === 1) throw new RangeError(message.slice(1));
    if (message === 'Invalid UTF-8 string in BSON document') {
      throw new BSONError(message, { cause: invalidUtf8Cause() });
    }
    throw new BSONError(message);
  }

  // (what the small-document reader makes under promoteValues: false)
  const numberClasses = { Int32: bson.Int32, Double: bson.Double };

  function run(buffer, index, flags, rawNames, utf8Names) {
    const small = readSmall(buffer, index, flags, rawNames, binary, objectId, numberClasses);
    if (small !== undefined) {
      forgetInput();
      return small;
    }
    const r = decodeToTape(buffer, index, flags | nestedChecks, rawNames, utf8Names);
    if (typeof r === 'string') fail(r, flags);
    const bodyLen = tape.ops[0];
    try {
      return build(buffer, flags, bodyLen, tape.ops[1]);
    } finally {
      // Drop references to this document's values and strings.
      releaseValues(bodyLen);
      releaseTape();
    }
  }

  function internalDeserialize(buffer, options) {
    const read = readOptions(buffer, options);
    if (read === null) return jsDeserialize(buffer, options);
    return run(buffer, read.index, read.flags, read.rawNames, read.utf8Names);
  }

  // js-bson's toLocalBufferType returns a Node Buffer as it is (Buffer.isBuffer):
  // that check is done inline when this ByteUtils is known to do so.
  const passesBuffers = (() => {
    try {
      const b = Buffer.alloc(1);
      return ByteUtils.toLocalBufferType(b) === b;
    } catch {
      return false;
    }
  })();

  function deserialize(buffer, options = undefined) {
    if (!(passesBuffers && buffer instanceof Buffer)) buffer = ByteUtils.toLocalBufferType(buffer);
    if (isDefault(options)) return run(buffer, 0, DEFAULT_FLAGS, null, null);
    return internalDeserialize(buffer, options);
  }

  /**
   * deserialize(buffer, { ...copy, index: at, allowObjectSmallerThanBufferSize: true })
   * for a `copy` of the options the caller has made (see readCopied): what the
   * driver's OnDemandDocument#toObject asks for, without building that object.
   * (Built per document, it has a hidden class of its own, so each of its
   * reads missed V8's caches: ~2 us a document of mongodb 7's find().)
   */
  function deserializeAt(buffer, at, copy) {
    if (!(passesBuffers && buffer instanceof Buffer)) buffer = ByteUtils.toLocalBufferType(buffer);
    const read = readCopied(buffer, copy, at);
    if (read === null) return jsDeserialize(buffer, { ...copy, index: at, allowObjectSmallerThanBufferSize: true });
    return run(buffer, read.index, read.flags, read.rawNames, read.utf8Names);
  }

  function deserializeStream(data, startIndex, numberOfDocuments, documents, docStartIndex, options) {
    const internalOptions = Object.assign({ allowObjectSmallerThanBufferSize: true, index: 0 }, options);
    const bufferData = ByteUtils.toLocalBufferType(data);

    let index = startIndex;
    for (let i = 0; i < numberOfDocuments; i++) {
      const size = getInt32LE(bufferData, index);
      internalOptions.index = index;
      documents[docStartIndex + i] = internalDeserialize(bufferData, internalOptions);
      index = index + size;
    }
    return index;
  }

  return { deserialize, deserializeStream, deserializeAt };
};
