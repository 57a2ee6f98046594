'use strict';
// deserialize's options, as js-bson's deserializer.ts reads them, turned into
// the reader's flag word (ARCHITECTURE.md, "Decode flags") and name lists.

const F_PROMOTE_LONGS = 1;
const F_PROMOTE_VALUES = 2;
const F_PROMOTE_BUFFERS = 4;
const F_USE_BIGINT64 = 8;
const F_BSON_REGEXP = 16;
const F_RAW = 32;
const F_ALLOW_SMALLER = 64;
const F_UTF8 = 128;
const F_UTF8_MAP = 256;
// bson 6.x / 7.0-7.2's nested-document checks (layout.readsNestedRecursively).
const F_RECURSIVE = 512;
const DEFAULT_FLAGS = F_PROMOTE_LONGS | F_PROMOTE_VALUES | F_UTF8;

function getInt32LE(source, offset) {
  return source[offset] | (source[offset + 1] << 8) | (source[offset + 2] << 16) | (source[offset + 3] << 24);
}

/**
 * No options (undefined or null, which js-bson reads as {}): the fast path,
 * no parsing. Any object, even an empty one, goes through readOptions: an
 * emptiness test (a for-in) cost ~0.45 us a call on the driver's options,
 * which are built by a spread and so get a new hidden class each time (no
 * enum cache), while readOptions costs an empty {} ~30 ns.
 */
function isDefault(options) {
  return options == null;
}

// Property names of objects seen as prototypes of a fieldsAsRaw object
// (in practice Object.prototype), listed once: names added to such a
// prototype later are not seen.
const protoNames = new WeakMap();
const rawNamesMemo = new WeakMap();
function protoNamesOf(proto) {
  let names = protoNames.get(proto);
  if (names === undefined) {
    names = Object.getOwnPropertyNames(proto);
    protoNames.set(proto, names);
  }
  return names;
}

/**
 * Names `n` for which `fieldsAsRaw[n]` is truthy, own or inherited, each
 * preceded by a NUL, for the native side (a BSON key never contains NUL).
 */
function rawNamesOf(fieldsAsRaw) {
  // Reuse the last answer for this object while its own properties and
  // prototype are unchanged (the prototypes' names are listed once anyway).
  const own = Object.getOwnPropertyNames(fieldsAsRaw);
  const proto = Object.getPrototypeOf(fieldsAsRaw);
  const memo = rawNamesMemo.get(fieldsAsRaw);
  if (memo !== undefined && memo.proto === proto && memo.own.length === own.length) {
    let same = true;
    for (let k = 0; k < own.length; k++) {
      if (own[k] !== memo.own[k] || !fieldsAsRaw[own[k]] !== !memo.truthy[k]) {
        same = false;
        break;
      }
    }
    if (same) return memo.names;
  }
  const names = computeRawNames(fieldsAsRaw);
  const truthy = own.map(name => !!fieldsAsRaw[name]);
  rawNamesMemo.set(fieldsAsRaw, { proto, own, truthy, names });
  return names;
}

function computeRawNames(fieldsAsRaw) {
  let names = '';
  for (let o = fieldsAsRaw; o != null; o = Object.getPrototypeOf(o)) {
    const own = o === fieldsAsRaw ? Object.getOwnPropertyNames(o) : protoNamesOf(o);
    for (let k = 0; k < own.length; k++) {
      const name = own[k];
      // Skip names shadowed by an object nearer in the chain (seen already).
      let shadowed = false;
      for (let p = fieldsAsRaw; p !== o; p = Object.getPrototypeOf(p)) {
        if (Object.prototype.hasOwnProperty.call(p, name)) {
          shadowed = true;
          break;
        }
      }
      if (shadowed || name.includes('\0') || !fieldsAsRaw[name]) continue;
      names += '\0' + name;
    }
  }
  return names;
}

function createOptionsReader(BSONError, readsInheritedOptions) {
  // The checks internalDeserialize makes before deserializeObject reads the
  // options; used only to order errors like js-bson when an option is invalid.
  function headerChecks(buffer, index, allowSmaller) {
    const size = getInt32LE(buffer, index);
    if (size < 5) throw new BSONError(`bson size must be >= 5, is ${size}`);
    if (allowSmaller && buffer.length < size) {
      throw new BSONError(`buffer length ${buffer.length} must be >= bson size ${size}`);
    }
    if (!allowSmaller && buffer.length !== size) {
      throw new BSONError(`buffer length ${buffer.length} must === bson size ${size}`);
    }
    if (size + index > buffer.byteLength) {
      throw new BSONError(
        `(bson size ${size} + options.index ${index} must be <= buffer length ${buffer.byteLength})`
      );
    }
    if (buffer[index + size - 1] !== 0) {
      throw new BSONError("One object, sized correctly, with a spot for an EOO, but the EOO isn't 0x00");
    }
  }

  // The result of readOptions (reused: it is consumed before the next call).
  const read = { index: 0, flags: 0, rawNames: null, utf8Names: null };

  /**
   * js-bson's option handling for `buffer`: fills and returns `read`, or returns
   * null for settings whose JS semantics we do not model (the caller lets
   * js-bson itself handle them); throws js-bson's option errors.
   */
  function readOptions(buffer, options) {
    options = options == null ? {} : options;
    const index = options && options.index ? options.index : 0;
    // (read twice, as internalDeserialize's two size checks read it; the first read decides)
    const allowSmaller = options.allowObjectSmallerThanBufferSize;
    options.allowObjectSmallerThanBufferSize; // eslint-disable-line no-unused-expressions
    // deserializeObject reads its settings from an own-property copy (7.3+),
    // or from the options object itself, inherited ones too (6.x, 7.0-7.2).
    return readSettings(buffer, readsInheritedOptions ? options : { ...options }, index, allowSmaller);
  }

  /**
   * readOptions for `{ ...copy, index: at, allowObjectSmallerThanBufferSize: true }`,
   * where `copy` is the caller's own-property copy of its options (the
   * driver's OnDemandDocument#toObject, lib/driver.js). js-bson would read
   * the same settings from that object (own ones, and Object.prototype's).
   */
  function readCopied(buffer, copy, at) {
    return readSettings(buffer, copy, at ? at : 0, true);
  }

  /** readOptions' work once the document's index and allowObjectSmallerThanBufferSize are read; `o` holds the other settings. */
  function readSettings(buffer, o, index, allowSmaller) {
    const fieldsAsRaw = o.fieldsAsRaw == null ? null : o.fieldsAsRaw;
    const raw = o.raw == null ? false : o.raw;
    const bsonRegExp = typeof o.bsonRegExp === 'boolean' ? o.bsonRegExp : false;
    const promoteBuffers = o.promoteBuffers ?? false;
    const promoteLongs = o.promoteLongs ?? true;
    const promoteValues = o.promoteValues ?? true;
    const useBigInt64 = o.useBigInt64 ?? false;
    const validation = o.validation == null ? { utf8: true } : o.validation;

    // Non-integer index, non-boolean promoteValues, a primitive fieldsAsRaw,
    // a malformed validation object: js-bson's.
    if (
      typeof index !== 'number' ||
      !Number.isSafeInteger(index) ||
      index < 0 ||
      typeof promoteValues !== 'boolean' ||
      (fieldsAsRaw !== null && typeof fieldsAsRaw !== 'object' && typeof fieldsAsRaw !== 'function') ||
      validation === null ||
      typeof validation !== 'object' ||
      (typeof validation.utf8 !== 'boolean' && (validation.utf8 === null || typeof validation.utf8 !== 'object'))
    ) {
      return null;
    }

    let optionsError;
    if (useBigInt64 && !promoteValues) optionsError = 'Must either request bigint or Long for int64 deserialization';
    else if (useBigInt64 && !promoteLongs) optionsError = 'Must either request bigint or Long for int64 deserialization';

    let flags = 0;
    let utf8Names = null;
    const utf8 = validation.utf8;
    if (typeof utf8 === 'boolean') {
      if (utf8) flags |= F_UTF8;
    } else if (optionsError === undefined) {
      const names = Object.keys(utf8);
      const values = names.map(key => utf8[key]);
      if (values.length === 0) {
        optionsError = 'UTF-8 validation setting cannot be empty';
      } else if (typeof values[0] !== 'boolean') {
        optionsError = 'Invalid UTF-8 validation option, must specify boolean values';
      } else if (!values.every(item => item === values[0])) {
        optionsError = 'Invalid UTF-8 validation option - keys must be all true or all false';
      } else {
        if (values[0]) flags |= F_UTF8;
        flags |= F_UTF8_MAP;
        utf8Names = '';
        for (const name of names) if (!name.includes('\0')) utf8Names += '\0' + name;
      }
    }
    if (optionsError !== undefined) {
      headerChecks(buffer, index, allowSmaller);
      throw new BSONError(optionsError);
    }

    if (promoteLongs) flags |= F_PROMOTE_LONGS;
    if (promoteValues) flags |= F_PROMOTE_VALUES;
    if (promoteBuffers) flags |= F_PROMOTE_BUFFERS;
    if (useBigInt64) flags |= F_USE_BIGINT64;
    if (bsonRegExp) flags |= F_BSON_REGEXP;
    if (raw) flags |= F_RAW;
    if (allowSmaller) flags |= F_ALLOW_SMALLER;
    read.index = index;
    read.flags = flags;
    read.rawNames = fieldsAsRaw === null ? null : rawNamesOf(fieldsAsRaw);
    read.utf8Names = utf8Names;
    return read;
  }

  return { readOptions, readCopied };
}

module.exports = {
  createOptionsReader,
  isDefault,
  getInt32LE,
  DEFAULT_FLAGS,
  F_PROMOTE_VALUES,
  F_PROMOTE_BUFFERS,
  F_RAW,
  F_ALLOW_SMALLER,
  F_UTF8_MAP,
  F_BSON_REGEXP,
  F_RECURSIVE
};
