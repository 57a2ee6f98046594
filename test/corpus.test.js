'use strict';
// The BSON corpus and binary-vector spec tests, run the way js-bson runs them
// (test/node/bson_corpus.spec.test.js and bson_binary_vector.spec.test.ts in
// mongodb/js-bson), with bson-rs's codec, and every result also compared with
// js-bson's.
const { describe, it } = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const path = require('node:path');
const { js, rs, name: oracleName } = require('./support/oracle');
const { layoutOf } = require('../lib/layout');
const { outcome, assertSameValue, assertSameBytes, assertSameOutcome, hex } = require('./support/compare');

const CORPUS_DIR = path.join(__dirname, 'fixtures', 'bson-corpus');
const VECTOR_DIR = path.join(__dirname, 'fixtures', 'bson-binary-vector');

// js-bson's runner options
const deserializeOptions = { bsonRegExp: true, promoteLongs: true, promoteValues: false };
const serializeOptions = { ignoreUndefined: false };

const { EJSON } = js;
const normalize = cEJ => JSON.stringify(JSON.parse(cEJ));
const nativeToCEJSON = native => EJSON.stringify(native, { relaxed: false });
const nativeToREJSON = native => EJSON.stringify(native, { relaxed: true });
const jsonToNative = json => EJSON.parse(json, { relaxed: false });
const fromHex = h => Buffer.from(h, 'hex');

function loadCorpus() {
  return fs
    .readdirSync(CORPUS_DIR)
    .filter(f => f.endsWith('.json'))
    .sort()
    .map(f => ({ file: f, ...JSON.parse(fs.readFileSync(path.join(CORPUS_DIR, f), 'utf8')) }));
}

/** deserialize then serialize, with a codec; returns an outcome */
function roundTrip(codec, bytes, dopts) {
  return outcome(() => codec.serialize(codec.deserialize(Buffer.from(bytes), dopts), serializeOptions));
}

describe('BSON corpus', () => {
  const scenarios = loadCorpus();

  it('has the corpus fixtures', () => {
    assert.ok(scenarios.length >= 30, `expected the corpus in ${CORPUS_DIR}`);
  });

  for (const scenario of scenarios) {
    const deprecated = !!scenario.deprecated;
    describe(`${scenario.description} (${scenario.file})`, () => {
      for (const v of scenario.valid || []) {
        it(`valid: ${v.description}`, () => {
          const cB = fromHex(v.canonical_bson);
          // deprecated types are compared after conversion (promoteValues: true), as js-bson does
          const dopts = deprecated ? { ...deserializeOptions, promoteValues: true } : deserializeOptions;
          const expectedBytes = deprecated ? fromHex(v.converted_bson) : cB;

          // bson-rs's result equals js-bson's, whatever it is
          const rsRound = roundTrip(rs, cB, dopts);
          const jsRound = roundTrip(js, cB, dopts);
          assertSameOutcome(rsRound, jsRound, 'round trip vs js-bson', assertSameBytes);
          assertSameOutcome(
            outcome(() => rs.deserialize(Buffer.from(cB), dopts)),
            outcome(() => js.deserialize(Buffer.from(cB), dopts)),
            'deserialize vs js-bson'
          );

          // and the spec's expectation
          if (v.description === 'All BSON types' && scenario.file === 'multi-type-deprecated.json') {
            // js-bson skips this case (NODE-3987): promoteValues turns the Symbol into a
            // string and the Long into a number, so the bytes are not converted_bson.
            // The comparison with js-bson above is what applies.
          } else {
            assert.ok(rsRound.ok, `round trip threw: ${rsRound.error && rsRound.error.message}`);
            assertSameBytes(rsRound.value, expectedBytes, 'round trip vs canonical/converted BSON');
          }

          // calculateObjectSize of the native value matches the canonical size
          const native = rs.deserialize(Buffer.from(cB), dopts);
          assert.strictEqual(rs.calculateObjectSize(native, serializeOptions), js.calculateObjectSize(native, serializeOptions));

          if (v.degenerate_bson) {
            const dB = fromHex(v.degenerate_bson);
            // degenerate BSON to JS equals canonical BSON to JS
            assertSameValue(rs.deserialize(dB, deserializeOptions), rs.deserialize(cB, deserializeOptions), 'degenerate vs canonical');
            assertSameValue(rs.deserialize(dB, deserializeOptions), js.deserialize(dB, deserializeOptions), 'degenerate vs js-bson');
            // degenerate BSON round-tripped is canonical BSON
            assertSameBytes(rs.serialize(rs.deserialize(dB, deserializeOptions), serializeOptions), cB, 'degenerate round trip');
          }
        });

        it(`valid-extjson: ${v.description}`, t => {
          let cB;
          let cEJ;
          if (deprecated) {
            cB = fromHex(v.converted_bson);
            cEJ = normalize(v.converted_extjson);
          } else {
            cB = fromHex(v.canonical_bson);
            cEJ = normalize(v.canonical_extjson);
          }
          // Each check: bson-rs must equal js-bson, and the spec wherever js-bson meets the spec.
          // (Where js-bson's own EJSON deviates from the spec, the deviation is reported, not failed:
          // EJSON is js-bson's object, not bson-rs's code.)
          const check = (label, actual, viaJs, spec, same) => {
            same(actual, viaJs, `${label}: bson-rs vs js-bson`);
            let jsMeetsSpec = true;
            try {
              same(viaJs, spec, label);
            } catch {
              jsMeetsSpec = false;
            }
            if (jsMeetsSpec) same(actual, spec, `${label}: bson-rs vs spec`);
            else t.diagnostic(`js-bson deviates from the spec (${label}); bson-rs matches js-bson`);
          };
          const eq = (a, e, m) => assert.strictEqual(a, e, m);
          const bytesEq = (a, e, m) => assertSameBytes(a, e, m);

          const nativeFromCB = rs.deserialize(cB, deserializeOptions);
          const jsNativeFromCB = js.deserialize(cB, deserializeOptions);
          assertSameValue(nativeFromCB, jsNativeFromCB, 'deserialize vs js-bson');
          check('BSON -> native -> canonical EJSON', nativeToCEJSON(nativeFromCB), nativeToCEJSON(jsNativeFromCB), cEJ, eq);
          if (!v.lossy) {
            const native = () => jsonToNative(cEJ);
            check('canonical EJSON -> native -> BSON', rs.serialize(native(), serializeOptions), js.serialize(native(), serializeOptions), cB, bytesEq);
          }
          if (v.degenerate_extjson && !v.lossy) {
            const native = () => jsonToNative(normalize(v.degenerate_extjson));
            check('degenerate EJSON -> native -> BSON', rs.serialize(native(), serializeOptions), js.serialize(native(), serializeOptions), cB, bytesEq);
          }
          if (v.relaxed_extjson) {
            check('BSON -> native -> relaxed EJSON', nativeToREJSON(nativeFromCB), nativeToREJSON(jsNativeFromCB), normalize(v.relaxed_extjson), eq);
          }
          // default options (promoteValues: true) agree with js-bson too
          assertSameOutcome(
            outcome(() => rs.deserialize(cB)),
            outcome(() => js.deserialize(cB)),
            'default options vs js-bson'
          );
        });
      }

      for (const d of scenario.decodeErrors || []) {
        it(`decodeError: ${d.description}`, () => {
          const B = fromHex(d.bson);
          for (const opts of [deserializeOptions, undefined, { promoteValues: true }]) {
            const actual = outcome(() => rs.deserialize(Buffer.from(B), opts));
            const expected = outcome(() => js.deserialize(Buffer.from(B), opts));
            assert.ok(!expected.ok, 'js-bson is expected to reject this document');
            assert.strictEqual(expected.error.class, 'BSONError', `js-bson threw ${expected.error.class}`);
            assert.ok(!actual.ok, `bson-rs accepted an invalid document (${hex(B)})`);
            assert.ok(actual.thrown instanceof js.BSONError, `bson-rs threw ${actual.error.class}: ${actual.error.message}`);
            assert.strictEqual(actual.error.message, expected.error.message, 'message differs from js-bson');
          }
        });
      }
      // parseErrors exercise EJSON.parse / Decimal128.fromString, which are js-bson's own
      // objects in bson-rs (checked by identity in api.test.js), not the codec.
    });
  }
});

// ---------------------------------------------------------------------------
// Binary vector spec

const INVALID_VECTOR_MESSAGES = new Map([
  ['FLOAT32 with padding', 'Invalid Vector: padding must be zero for int8 and float32 vectors'],
  ['INT8 with padding', 'Invalid Vector: padding must be zero for int8 and float32 vectors'],
  ['Padding specified with no vector data PACKED_BIT', 'Invalid Vector: padding must be zero for packed bit vectors that are empty'],
  ['Exceeding maximum padding PACKED_BIT', 'Invalid Vector: padding must be a value between 0 and 7'],
  ['Negative padding PACKED_BIT', 'Invalid Vector: padding must be a value between 0 and 7'],
  ['Insufficient vector data FLOAT32', 'Invalid Vector: Float32 vector must contain a multiple of 4 bytes']
]);

// bson 6.10.0-6.10.3 write a Float32 vector whose data is no whole number of
// floats, where later releases refuse it; bson-rs writes it as the copy does
// (layout.checksFloat32VectorSize).
const REFUSES_ODD_FLOAT32 = layoutOf(require(oracleName)).checksFloat32VectorSize;

/** Whether serializing the spec's invalid vector `description` throws with the oracle copy. */
function refused(description) {
  return REFUSES_ODD_FLOAT32 || !/^Insufficient vector data .*FLOAT32$/.test(description);
}

/** Builds the Binary the way js-bson's runner does; throws for inputs JS typed arrays cannot hold. */
function makeVector(vector, dtypeHex, padding) {
  let binary;
  switch (dtypeHex) {
    case '0x10':
      if (vector.some(f => typeof f !== 'number' || f > 255 || f < 0 || !Number.isSafeInteger(f))) throw new Error('unsupported_error');
      binary = js.Binary.fromPackedBits(new Uint8Array(vector), padding);
      break;
    case '0x03':
      if (vector.some(f => typeof f !== 'number' || f < -128 || f > 127 || !Number.isInteger(f))) throw new Error('unsupported_error');
      binary = js.Binary.fromInt8Array(new Int8Array(vector));
      break;
    case '0x27':
      binary = js.Binary.fromFloat32Array(new Float32Array(vector));
      break;
    default:
      throw new Error(`Unknown dtype_hex: ${dtypeHex}`);
  }
  binary.buffer[0] = +dtypeHex;
  binary.buffer[1] = padding ?? 0;
  return binary;
}

describe('BSON binary vector spec', () => {
  const files = fs.readdirSync(VECTOR_DIR).filter(f => f.endsWith('.json')).sort();

  it('has the vector fixtures', () => {
    assert.ok(files.length >= 3);
  });

  for (const file of files) {
    const suite = EJSON.parse(fs.readFileSync(path.join(VECTOR_DIR, file), 'utf8'));
    describe(`${suite.description} (${file})`, () => {
      for (const test of suite.tests) {
        if (test.valid) {
          it(`valid: ${test.description}`, () => {
            const bin = makeVector(test.vector, test.dtype_hex, test.padding);
            const doc = { [suite.test_key]: bin };
            const bytes = rs.serialize(doc);
            assert.strictEqual(hex(bytes), test.canonical_bson.toLowerCase());
            assertSameBytes(bytes, js.serialize(doc), 'vs js-bson');
            assert.strictEqual(rs.calculateObjectSize(doc), bytes.length);

            const canonical = fromHex(test.canonical_bson);
            const decoded = rs.deserialize(canonical);
            assertSameValue(decoded, js.deserialize(canonical), 'deserialize vs js-bson');
            const value = decoded[suite.test_key];
            assert.strictEqual(value.sub_type, 0x09);
            assert.strictEqual(value.buffer[0], +test.dtype_hex);
            assert.strictEqual(value.buffer[1], test.padding);
            // and it re-serializes to the same bytes
            assert.strictEqual(hex(rs.serialize(decoded)), test.canonical_bson.toLowerCase());
          });
        } else {
          it(`invalid: ${test.description}`, () => {
            const expectedMessage = INVALID_VECTOR_MESSAGES.get(test.description);
            let checked = 0;
            if (test.canonical_bson != null) {
              // decoding the invalid bytes is allowed; serializing the result is not
              const canonical = fromHex(test.canonical_bson);
              const decodedRs = outcome(() => rs.deserialize(canonical));
              const decodedJs = outcome(() => js.deserialize(canonical));
              assertSameOutcome(decodedRs, decodedJs, 'deserialize vs js-bson');
              if (decodedJs.ok) {
                const actual = outcome(() => rs.serialize(decodedRs.value));
                const expected = outcome(() => js.serialize(decodedJs.value));
                assertSameOutcome(actual, expected, 'serialize of decoded invalid vector', assertSameBytes);
                if (refused(test.description)) {
                  assert.ok(!actual.ok && actual.thrown instanceof js.BSONError, 'serialize must throw a BSONError');
                  if (expectedMessage) assert.match(actual.error.message, new RegExp(expectedMessage));
                } else assert.ok(actual.ok, 'written, as this copy writes it');
                checked++;
              }
            }
            if (test.vector != null) {
              const made = outcome(() => makeVector(test.vector, test.dtype_hex, test.padding));
              if (made.ok) {
                const doc = { [suite.test_key]: made.value };
                const actual = outcome(() => rs.serialize(doc));
                assertSameOutcome(actual, outcome(() => js.serialize(doc)), 'serialize vs js-bson', assertSameBytes);
                if (refused(test.description)) {
                  assert.ok(!actual.ok && actual.thrown instanceof js.BSONError, 'serialize must throw a BSONError');
                  if (expectedMessage) assert.match(actual.error.message, new RegExp(expectedMessage));
                } else assert.ok(actual.ok, 'written, as this copy writes it');
                checked++;
              }
            }
            if (checked === 0) {
              // The inputs cannot even be built as a JS typed array (e.g. int8 overflow):
              // js-bson's runner expects its Binary helpers to throw; nothing reaches the codec.
              const made = outcome(() => makeVector(test.vector, test.dtype_hex, test.padding));
              assert.ok(!made.ok, 'the vector could not be built');
            }
          });
        }
      }
    });
  }
});
