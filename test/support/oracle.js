'use strict';
// The js-bson copy a differential suite compares against, and bson-rs built over
// that copy's classes. By default: require('bson') and require('..'). With
// BSON_RS_ORACLE=<alias> (an npm-alias devDependency such as bson731), every
// suite that loads this module runs against that published copy instead, with
// bson-rs's codec created for it exactly as the driver plug-in creates it.
const path = require('node:path');

const name = process.env.BSON_RS_ORACLE || 'bson';
const root = path.join(__dirname, '..', '..');
const version = require(path.join(root, 'node_modules', name, 'package.json')).version;

/** Is this copy's version before `major.minor.patch`? */
function before(v, target) {
  const a = v.split('.').map(Number);
  const b = target.split('.').map(Number);
  for (let k = 0; k < 3; k++) if (a[k] !== b[k]) return a[k] < b[k];
  return false;
}

/**
 * js-bson 7.3.4's codec for values of the given major: bson734 itself for 7,
 * else its code compiled with that major version (it reads public fields; for
 * bson 6 values, whose classes carry no type symbol, the tag is read from
 * `_bsontype`). Test-only: the reference for what bson-rs does deliberately
 * as 7.3.4 does (README, "Differences from js-bson").
 */
function reference734(major) {
  if (major === 7) return require('bson734');
  const Module = require('node:module');
  const file = require.resolve('bson734');
  const source = require('node:fs').readFileSync(file, 'utf8');
  const patched = source
    .replace('const BSON_MAJOR_VERSION = 7;', `const BSON_MAJOR_VERSION = ${major};`)
    .replaceAll('value[bsonType]', 'value._bsontype');
  if (!patched.includes(`const BSON_MAJOR_VERSION = ${major};`)) throw new Error(`oracle: cannot retarget bson 7.3.4 to major ${major}`);
  const m = new Module(`${file}?major=${major}`, module);
  m.filename = file;
  m.paths = Module._nodeModulePaths(path.dirname(file));
  m._compile(patched, file);
  return m.exports;
}

/** `fn` of the reference, throwing the copy's own error classes. */
function asCopy(copy, reference, fn) {
  return function (...args) {
    try {
      return fn.apply(reference, args);
    } catch (e) {
      if (e instanceof reference.BSONVersionError) throw new copy.BSONVersionError();
      if (e instanceof reference.BSONError) throw new copy.BSONError(e.message);
      throw e;
    }
  };
}

function isStackOverflow(e) {
  return e instanceof RangeError && e.message === 'Maximum call stack size exceeded';
}

/** The copy's `fn`, or, where its recursion overflows the JS stack, the reference's. */
function orDeeper(copyFn, referenceFn) {
  return function (...args) {
    try {
      return copyFn(...args);
    } catch (e) {
      if (isStackOverflow(e)) return referenceFn(...args);
      throw e;
    }
  };
}

/**
 * The oracle for an older copy, where bson-rs is deliberately 7.3.4:
 * - calculateObjectSize is 7.3.4's: copies before 7.3.4 miscount -0 and Code
 *   with an empty scope, before 7.3.2 Int32, BSONSymbol and Maps, 7.3.0-7.3.2
 *   never return on a cycle, and bson 6 miscounts more.
 * - bson 6.x and 7.0-7.2 recurse: where they overflow the JS stack (deep
 *   documents, a Code scope that contains itself), 7.3.4's result or error.
 */
function olderOracle(copy, major, recursive) {
  const reference = reference734(major);
  const calculateObjectSize = asCopy(copy, reference, reference.calculateObjectSize);
  const fixed = { calculateObjectSize };
  if (before(version, '6.10.1')) {
    // (its type tests call Object.prototype.toString, once per object, where
    // 6.10.1 and later read Symbol.toStringTag: same bytes, other traps)
    const later = require('bson6101');
    fixed.serialize = asCopy(copy, later, later.serialize);
    fixed.serializeWithBufferAndIndex = asCopy(copy, later, later.serializeWithBufferAndIndex);
  }
  if (before(version, '6.10.3')) {
    fixed.deserialize = signedInt64s(copy.deserialize, asCopy(copy, reference, reference.deserialize), 0);
    fixed.deserializeStream = signedInt64s(copy.deserializeStream, asCopy(copy, reference, reference.deserializeStream), 3);
  }
  if (recursive) {
    fixed.serialize = orDeeper(fixed.serialize ?? copy.serialize, asCopy(copy, reference, reference.serialize));
    fixed.deserialize = orDeeper(fixed.deserialize ?? copy.deserialize, asCopy(copy, reference, reference.deserialize));
  }
  return Object.freeze({ ...copy, ...fixed, BSON: Object.freeze({ ...copy.BSON, ...fixed }) });
}

const TWO_63 = 2n ** 63n;
const TWO_64 = 2n ** 64n;

/**
 * Whether bson-rs hands a deserialize with these options to the copy's own
 * (README, "How it works": a non-integer index, a non-boolean promoteValues,
 * a primitive fieldsAsRaw, a malformed validation object), as bson 6.x reads
 * them (inherited ones too). `withIndex`: the options' index counts.
 */
function handedToCopy(options, withIndex) {
  const o = options == null ? {} : options;
  const index = o.index ? o.index : 0;
  const fieldsAsRaw = o.fieldsAsRaw == null ? null : o.fieldsAsRaw;
  const validation = o.validation == null ? { utf8: true } : o.validation;
  return (
    (withIndex && (typeof index !== 'number' || !Number.isSafeInteger(index) || index < 0)) ||
    typeof (o.promoteValues ?? true) !== 'boolean' ||
    (fieldsAsRaw !== null && typeof fieldsAsRaw !== 'object' && typeof fieldsAsRaw !== 'function') ||
    validation === null ||
    typeof validation !== 'object' ||
    (typeof validation.utf8 !== 'boolean' && (validation.utf8 === null || typeof validation.utf8 !== 'object'))
  );
}

/**
 * `fn` (deserialize, or deserializeStream with its documents array as
 * argument `documentsArg`) with every bigint of its result read as signed:
 * bson 6.10.0-6.10.2 read an int64 under useBigInt64 as unsigned (a negative
 * one 2^64 too large), where bson-rs reads it as later releases do (README,
 * Differences), but for the calls it hands to the copy's own deserialize.
 * No int64 read right is 2^63 or more, so the correction is exact; the
 * options are read (for handedToCopy) only when there is one to correct.
 */
function signedInt64s(fn, reference, documentsArg) {
  const optionsArg = documentsArg === 0 ? 1 : 5;
  const fix = (root, options) => {
    const stack = [root];
    let handed = null;
    while (stack.length > 0) {
      const object = stack.pop();
      for (const key of Object.keys(object)) {
        const value = object[key];
        if (typeof value === 'bigint' && value >= TWO_63) {
          if (handed === null) handed = handedToCopy(options, documentsArg === 0);
          if (!handed) Object.defineProperty(object, key, { value: value - TWO_64 });
        } else if (value !== null && typeof value === 'object' && !ArrayBuffer.isView(value)) stack.push(value);
      }
    }
  };
  const outOfRange = e => e instanceof RangeError && / cannot be converted to a BigInt /.test(e.message);
  return function (...args) {
    try {
      const result = fn.apply(this, args);
      if (documentsArg === 0 && result !== null && typeof result === 'object') fix(result, args[optionsArg]);
      return result;
    } catch (e) {
      // (an int64 cut off by the end of the input: those releases make a
      // bigint of NaN and throw RangeError; later ones, as bson-rs, a BSONError)
      if (outOfRange(e) && !handedToCopy(args[optionsArg], documentsArg === 0)) return reference.apply(this, args);
      throw e;
    } finally {
      const documents = args[documentsArg];
      if (documentsArg !== 0 && documents !== null && typeof documents === 'object') fix(documents, args[optionsArg]);
    }
  };
}

function load() {
  if (name === 'bson') return { js: require('bson'), rs: require('../..') };
  let js = require(name);
  if (before(version, '7.3.4')) js = olderOracle(js, Number(version.split('.')[0]), recursive);
  const { createCodec, bsonNamespace } = require('../../lib/codec');
  const BSON = bsonNamespace(js, createCodec(require(name)));
  return { js, rs: Object.freeze({ BSON, ...BSON }) };
}

/** bson 6.x and 7.0-7.2 serialize and deserialize recursively: past the JS
 * stack they throw RangeError where bson-rs (like 7.3) goes on. */
const recursive = before(version, '7.3.0');

const { js, rs } = load();

module.exports = { js, rs, name, version, recursive, before: target => before(version, target) };
