'use strict';
// Comparison helpers: run a function and capture its outcome, and turn any
// value (as produced by deserialize, or given to serialize) into a canonical
// string that records types, constructor identity and content exactly.
// No side effects on load.
const assert = require('node:assert');
const bson = require('./oracle').js;

const BSON_ERROR_NAMES = ['BSONError', 'BSONVersionError', 'BSONRuntimeError', 'BSONOffsetError'];

/** Classifies a thrown value: the js-bson error class name, a built-in error name, or a description. */
function errorClass(e, B = bson) {
  if (e === null || (typeof e !== 'object' && typeof e !== 'function')) return `non-object:${typeof e}`;
  for (const name of BSON_ERROR_NAMES.slice().reverse()) {
    // most specific first (subclasses before BSONError)
    if (Object.getPrototypeOf(e) === B[name].prototype) return name;
  }
  if (B.BSONError.isBSONError(e)) return `foreign-${e.name}`; // a BSONError of another js-bson copy
  const ctor = Object.getPrototypeOf(e)?.constructor;
  return ctor && typeof ctor.name === 'string' ? ctor.name : 'unknown';
}

/** True when `e` is js-bson's BSONError (or one of its subclasses) from the oracle copy. */
function isBSONError(e, B = bson) {
  return e instanceof B.BSONError;
}

/**
 * Runs fn and returns { ok: true, value } or { ok: false, error: { name, message, class }, thrown }.
 */
function outcome(fn, B = bson) {
  try {
    return { ok: true, value: fn() };
  } catch (thrown) {
    let message;
    try {
      message = thrown && typeof thrown === 'object' ? String(thrown.message) : String(thrown);
    } catch {
      message = '<unprintable>';
    }
    return {
      ok: false,
      error: { name: thrown?.name, message, class: errorClass(thrown, B) },
      thrown
    };
  }
}

function hex(u8) {
  return Buffer.from(u8.buffer, u8.byteOffset, u8.byteLength).toString('hex');
}

function protoTag(v, B) {
  const proto = Object.getPrototypeOf(v);
  if (proto === null) return 'null-proto';
  if (proto === Object.prototype) return 'Object';
  if (proto === Array.prototype) return 'Array';
  if (proto === Buffer.prototype) return 'Buffer';
  if (proto === Uint8Array.prototype) return 'Uint8Array';
  if (proto === Date.prototype) return 'Date';
  if (proto === RegExp.prototype) return 'RegExp';
  if (proto === Map.prototype) return 'Map';
  for (const name of ['ObjectId', 'Binary', 'UUID', 'Long', 'Timestamp', 'Double', 'Int32', 'Decimal128',
    'Code', 'DBRef', 'BSONRegExp', 'BSONSymbol', 'MinKey', 'MaxKey']) {
    if (proto === B[name].prototype) return `bson.${name}`;
  }
  const ctorName = proto.constructor && proto.constructor.name;
  // e.g. a class of a different js-bson copy: same name, different identity
  return `other:${ctorName}`;
}

function numberTag(n) {
  return Object.is(n, -0) ? '-0' : String(n);
}

/**
 * A canonical string for v: types, constructor identity (against the oracle
 * js-bson `B`), array holes, own `__proto__` keys, -0, NaN, lone surrogates.
 * Recursion is bounded by `maxDepth` (use a byte comparison for deep values).
 */
function canon(v, B = bson, maxDepth = 2000) {
  const seen = new Set();
  const walk = (x, depth) => {
    if (depth > maxDepth) throw new Error('canon: value too deep');
    switch (typeof x) {
      case 'undefined':
        return 'undefined';
      case 'boolean':
        return `bool:${x}`;
      case 'number':
        return `num:${numberTag(x)}`;
      case 'bigint':
        return `bigint:${x}`;
      case 'string':
        return `str:${JSON.stringify(x)}`;
      case 'symbol':
        return `symbol:${String(x)}`;
      case 'function':
        return `function:${JSON.stringify(Function.prototype.toString.call(x))}`;
    }
    if (x === null) return 'null';
    if (seen.has(x)) return '<cycle>';
    seen.add(x);
    const tag = protoTag(x, B);
    let body;
    switch (tag) {
      case 'Array': {
        const parts = [];
        for (let i = 0; i < x.length; i++) parts.push(i in x ? walk(x[i], depth + 1) : '<hole>');
        const extra = Object.keys(x).filter(k => !/^(0|[1-9][0-9]*)$/.test(k));
        body = `[${parts.join(',')}]${extra.length ? `+keys${JSON.stringify(extra)}` : ''}`;
        break;
      }
      case 'Buffer':
      case 'Uint8Array':
        body = hex(x);
        break;
      case 'Date':
        body = numberTag(x.getTime());
        break;
      case 'RegExp':
        body = `${JSON.stringify(x.source)}/${x.flags}`;
        break;
      case 'Map':
        body = `{${[...x].map(([k, val]) => `${walk(k, depth + 1)}=>${walk(val, depth + 1)}`).join(',')}}`;
        break;
      case 'bson.ObjectId':
        body = x.toHexString();
        break;
      case 'bson.Binary':
      case 'bson.UUID':
        body = `${x.sub_type}:${x.position}:${protoTag(x.buffer, B)}:${hex(x.buffer)}`;
        break;
      case 'bson.Long':
      case 'bson.Timestamp':
        body = `${x.low}:${x.high}:${x.unsigned}`;
        break;
      case 'bson.Double':
      case 'bson.Int32':
        body = numberTag(x.value);
        break;
      case 'bson.Decimal128':
        body = hex(x.bytes);
        break;
      case 'bson.Code':
        body = `${walk(x.code, depth + 1)}|${walk(x.scope, depth + 1)}`;
        break;
      case 'bson.DBRef':
        body = `${walk(x.collection, depth + 1)}|${walk(x.oid, depth + 1)}|${walk(x.db, depth + 1)}|${walk(x.fields, depth + 1)}`;
        break;
      case 'bson.BSONRegExp':
        body = `${JSON.stringify(x.pattern)}/${JSON.stringify(x.options)}`;
        break;
      case 'bson.BSONSymbol':
        body = JSON.stringify(x.value);
        break;
      case 'bson.MinKey':
      case 'bson.MaxKey':
        body = '';
        break;
      default: {
        // plain objects, null-prototype objects, anything else: own string keys in order
        const parts = [];
        for (const k of Object.keys(x)) {
          const d = Object.getOwnPropertyDescriptor(x, k);
          parts.push(`${JSON.stringify(k)}:${'value' in d ? walk(d.value, depth + 1) : '<accessor>'}`);
        }
        body = `{${parts.join(',')}}`;
      }
    }
    seen.delete(x);
    return `${tag}(${body})`;
  };
  return walk(v, 0);
}

/** EJSON canonical (relaxed: false) of a value, or an error marker. */
function ejson(v, B = bson) {
  try {
    return B.EJSON.stringify(v, { relaxed: false });
  } catch (e) {
    return `<EJSON threw ${errorClass(e, B)}: ${e && e.message}>`;
  }
}

/** Asserts two values are the same: canonical form and EJSON canonical. */
function assertSameValue(actual, expected, context = '', B = bson) {
  const a = canon(actual, B);
  const e = canon(expected, B);
  if (a !== e) assert.fail(`${context}\nvalues differ:\n  actual:   ${clip(a)}\n  expected: ${clip(e)}`);
  const ea = ejson(actual, B);
  const ee = ejson(expected, B);
  if (ea !== ee) assert.fail(`${context}\nEJSON differs:\n  actual:   ${clip(ea)}\n  expected: ${clip(ee)}`);
}

/** Asserts two byte arrays are equal (and both Uint8Arrays). */
function assertSameBytes(actual, expected, context = '') {
  assert.ok(actual instanceof Uint8Array, `${context}: actual is not a Uint8Array`);
  assert.ok(expected instanceof Uint8Array, `${context}: expected is not a Uint8Array`);
  const a = hex(actual);
  const e = hex(expected);
  if (a !== e) assert.fail(`${context}\nbytes differ:\n  actual:   ${clip(a)}\n  expected: ${clip(e)}`);
}

/** Asserts serialize results are equal bytes and both Buffers (or both not). */
function assertSameSerialized(actual, expected, context = '') {
  assertSameBytes(actual, expected, context);
  assert.strictEqual(Buffer.isBuffer(actual), Buffer.isBuffer(expected), `${context}: Buffer.isBuffer differs`);
}

/**
 * Asserts two outcomes are the same: both returned (then `compareValues(a, e)`)
 * or both threw the same class of error with the same message.
 */
function assertSameOutcome(actual, expected, context = '', compareValues = (a, e, c) => assertSameValue(a, e, c)) {
  if (expected.ok && actual.ok) {
    compareValues(actual.value, expected.value, context);
    return;
  }
  if (expected.ok && !actual.ok) {
    assert.fail(`${context}\njs-bson returned but bson-rs threw ${actual.error.class}: ${actual.error.message}\n${actual.thrown && actual.thrown.stack}`);
  }
  if (!expected.ok && actual.ok) {
    let shown;
    try {
      shown = canon(actual.value);
    } catch {
      shown = String(actual.value);
    }
    assert.fail(`${context}\njs-bson threw ${expected.error.class}: ${expected.error.message}\nbut bson-rs returned ${clip(shown)}`);
  }
  assert.deepStrictEqual(actual.error, expected.error, `${context}\nerrors differ`);
}

function clip(s, n = 600) {
  return s.length > n ? `${s.slice(0, n)}… (${s.length} chars)` : s;
}

module.exports = {
  outcome,
  errorClass,
  isBSONError,
  canon,
  ejson,
  hex,
  clip,
  assertSameValue,
  assertSameBytes,
  assertSameSerialized,
  assertSameOutcome
};
