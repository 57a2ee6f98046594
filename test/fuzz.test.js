'use strict';
// Seeded, bounded fuzzing of bson-rs against js-bson.
//   FUZZ_SEED=<int>   base seed (default fixed, printed in every failure)
//   FUZZ_CASES=<int>  number of cases per test (default 1500 documents, 4000 mutations)
// Each case n uses its own generator seeded from (seed, n), so a failure is
// reproducible from the printed seed and case number.
const { describe, it } = require('node:test');
const assert = require('node:assert');
const { js, rs } = require('./support/oracle');
const { Rng, seedFromEnv, casesFromEnv } = require('./support/prng');
const gen = require('./support/gen');
const { outcome, canon, clip, assertSameSerialized, assertSameOutcome, assertSameValue } = require('./support/compare');

const SEED = seedFromEnv(0xb50f);
const DOC_CASES = casesFromEnv(1500);
const MUTATION_CASES = casesFromEnv(4000);

const caseRng = (seed, n) => new Rng((seed ^ Math.imul(n + 1, 0x9e3779b9)) >>> 0);
const where = n => `FUZZ_SEED=${SEED} case ${n}`;

const show = v => {
  try {
    return clip(canon(v), 300);
  } catch {
    return String(v);
  }
};

// ---------------------------------------------------------------------------
// Mutations of valid BSON

const LENGTHS = [0x7fffffff, -1, -2147483648, 0, 1, 4, 5, 0x80000000, 0xffff, 6, 13];

function mutate(rng, input) {
  let bytes = Buffer.from(input);
  const applied = [];
  const steps = rng.int(1, 3);
  for (let s = 0; s < steps; s++) {
    const kind = rng.int(0, 8);
    const pos = rng.int(0, Math.max(0, bytes.length - 1));
    switch (kind) {
      case 0: {
        // flip random bits of one byte
        if (bytes.length === 0) break;
        bytes[pos] ^= 1 << rng.int(0, 7);
        applied.push(`flip@${pos}`);
        break;
      }
      case 1: {
        // set a byte to an interesting value
        if (bytes.length === 0) break;
        bytes[pos] = rng.pick([0, 0xff, 0x7f, 0x80, 1, 0x0a, 0x03, 0x04, 0x02, 0x05, 0x0f, 0x13, 0x11, 0x12, 0x0c, 0x0b]);
        applied.push(`set@${pos}=${bytes[pos]}`);
        break;
      }
      case 2: {
        // truncate
        const len = rng.int(0, bytes.length);
        bytes = bytes.subarray(0, len);
        applied.push(`truncate@${len}`);
        break;
      }
      case 3:
      case 4: {
        // rewrite a 4-byte little-endian length somewhere (often the document length at 0)
        if (bytes.length < 4) break;
        const at = rng.chance(0.4) ? 0 : rng.int(0, bytes.length - 4);
        const value = rng.chance(0.7) ? rng.pick(LENGTHS) : bytes.length + rng.int(-6, 6);
        bytes.writeUInt32LE(value >>> 0, at);
        applied.push(`len@${at}=${value}`);
        break;
      }
      case 5: {
        // trailing garbage
        const extra = rng.bytes(rng.int(1, 8));
        bytes = Buffer.concat([bytes, extra]);
        applied.push(`append${extra.length}`);
        break;
      }
      case 6: {
        // insert bytes
        const extra = rng.bytes(rng.int(1, 4));
        bytes = Buffer.concat([bytes.subarray(0, pos), extra, bytes.subarray(pos)]);
        applied.push(`insert@${pos}+${extra.length}`);
        break;
      }
      case 7: {
        // delete bytes
        const n = rng.int(1, 4);
        bytes = Buffer.concat([bytes.subarray(0, pos), bytes.subarray(pos + n)]);
        applied.push(`delete@${pos}-${n}`);
        break;
      }
      default: {
        // fix the outer length after other damage, so inner damage is reached
        if (bytes.length >= 4) {
          bytes.writeInt32LE(bytes.length, 0);
          applied.push('fixlen');
        }
      }
    }
  }
  return { bytes, applied };
}

function sourceDocument(rng) {
  if (rng.chance(0.6)) return gen.randomRawDocument(rng, rng.int(0, 3), { invalidUtf8: rng.chance(0.2) });
  const doc = gen.randomObject(rng, js, rng.int(0, 3));
  const o = outcome(() => js.serialize(doc, { ignoreUndefined: false, serializeFunctions: true }));
  return o.ok ? Buffer.from(o.value) : gen.randomRawDocument(rng, 1);
}

function fuzzOptions(rng) {
  const opts = rng.chance(0.7) ? gen.randomDeserializeOptions(rng) : undefined;
  if (rng.chance(0.3)) return { ...(opts || {}), allowObjectSmallerThanBufferSize: true };
  return opts;
}

describe(`fuzz (FUZZ_SEED=${SEED})`, () => {
  it('self-check: mutations change the bytes, and the checks detect a wrong result', () => {
    const rng = new Rng(1);
    let changed = 0;
    for (let n = 0; n < 200; n++) {
      const src = sourceDocument(rng);
      if (!mutate(rng, src).bytes.equals(src)) changed++;
    }
    assert.ok(changed > 150, `only ${changed}/200 mutations changed the bytes`);
    assert.throws(() => checkSameClass(outcome(() => ({ a: 1 })), outcome(() => ({ a: 2 })), 'x'));
    assert.throws(() => checkSameClass(outcome(() => { throw new Error('e'); }), outcome(() => { throw new js.BSONError('e'); }), 'x'));
    assert.throws(() => checkSameClass(outcome(() => 1), outcome(() => { throw new js.BSONError('e'); }), 'x'));
  });

  it(`${DOC_CASES} random documents × random options: identical outcome to js-bson`, () => {
    for (let n = 0; n < DOC_CASES; n++) {
      const rng = caseRng(SEED, n);
      const doc = gen.randomDocument(rng, js, rng.int(0, 4));
      const sopts = gen.randomSerializeOptions(rng);
      const ctx = `${where(n)} serialize options ${JSON.stringify(sopts)} doc ${show(doc)}`;
      const expected = outcome(() => js.serialize(doc, sopts));
      assertSameOutcome(outcome(() => rs.serialize(doc, sopts)), expected, ctx, assertSameSerialized);
      assertSameOutcome(
        outcome(() => rs.calculateObjectSize(doc, sopts)),
        outcome(() => js.calculateObjectSize(doc, sopts)),
        `calculateObjectSize ${ctx}`,
        (a, e, c) => assert.ok(Object.is(a, e), `${c}: ${a} !== ${e}`)
      );
      if (expected.ok) {
        const dopts = gen.randomDeserializeOptions(rng);
        assertSameOutcome(
          outcome(() => rs.deserialize(expected.value, dopts)),
          outcome(() => js.deserialize(expected.value, dopts)),
          `deserialize ${JSON.stringify(dopts)} of ${ctx}`
        );
      }
    }
  });

  // Results of the mutation run, shared by the two tests below.
  const messageDiffs = [];
  const rsBetter = []; // js-bson threw a non-BSONError, bson-rs a BSONError
  let jsThrewBSONError = 0;
  let jsReturned = 0;

  it(`${MUTATION_CASES} mutated documents: same value, or an error of the same class (BSONError where js-bson throws one)`, t => {
    for (let n = 0; n < MUTATION_CASES; n++) {
      const rng = caseRng(SEED ^ 0x6d757461, n);
      const source = sourceDocument(rng);
      const { bytes, applied } = mutate(rng, source);
      const opts = fuzzOptions(rng);
      const ctx = `${where(n)} mutations [${applied.join(' ')}] options ${JSON.stringify(opts)}\n  input ${bytes.toString('hex')}`;
      const expected = outcome(() => js.deserialize(Buffer.from(bytes), opts));
      const actual = outcome(() => rs.deserialize(Buffer.from(bytes), opts));
      if (expected.ok) {
        jsReturned++;
        assert.ok(actual.ok, `${ctx}\njs-bson returned ${show(expected.value)}\nbut bson-rs threw ${actual.error && actual.error.class}: ${actual.error && actual.error.message}`);
        assertSameValue(actual.value, expected.value, ctx);
        continue;
      }
      assert.ok(!actual.ok, `${ctx}\njs-bson threw ${expected.error.class}: ${expected.error.message}\nbut bson-rs returned ${show(actual.value)}`);
      if (expected.error.class === 'BSONError') {
        jsThrewBSONError++;
        assert.ok(
          actual.thrown instanceof js.BSONError,
          `${ctx}\njs-bson threw BSONError: ${expected.error.message}\nbut bson-rs threw ${actual.error.class}: ${actual.error.message}`
        );
        if (actual.error.message !== expected.error.message) {
          messageDiffs.push(`${ctx}\n  js-bson: ${expected.error.message}\n  bson-rs: ${actual.error.message}`);
        }
      } else if (actual.error.class !== expected.error.class || actual.error.message !== expected.error.message) {
        // js-bson threw something else (e.g. SyntaxError from new RegExp, TypeError):
        // bson-rs must throw the same, or a clean BSONError.
        assert.ok(
          actual.thrown instanceof js.BSONError,
          `${ctx}\njs-bson threw ${expected.error.class}: ${expected.error.message}\nbut bson-rs threw ${actual.error.class}: ${actual.error.message}`
        );
        rsBetter.push(`${ctx}\n  js-bson: ${expected.error.class}: ${expected.error.message}\n  bson-rs: BSONError: ${actual.error.message}`);
      }
    }
    t.diagnostic(`${jsReturned} accepted by js-bson, ${jsThrewBSONError} rejected with a BSONError, ` +
      `${MUTATION_CASES - jsReturned - jsThrewBSONError} with another error`);
    t.diagnostic(`${messageDiffs.length} BSONError messages differ from js-bson's`);
    t.diagnostic(`${rsBetter.length} cases where js-bson threw a non-BSONError and bson-rs a BSONError`);
    for (const s of rsBetter.slice(0, 3)) t.diagnostic(s);
  });

  it('mutated documents: BSONError messages equal js-bson\'s', () => {
    if (messageDiffs.length > 0) {
      assert.fail(
        `${messageDiffs.length} of ${jsThrewBSONError} BSONError messages differ from js-bson's; first ones:\n` +
          messageDiffs.slice(0, 5).join('\n')
      );
    }
  });

  it('mutated documents with index/allowObjectSmallerThanBufferSize and deserializeStream', () => {
    const cases = Math.ceil(MUTATION_CASES / 6);
    for (let n = 0; n < cases; n++) {
      const rng = caseRng(SEED ^ 0x73747265, n);
      const a = sourceDocument(rng);
      const { bytes: b2, applied } = mutate(rng, sourceDocument(rng));
      const prefix = rng.bytes(rng.int(0, 5));
      const data = Buffer.concat([prefix, a, b2, rng.bytes(rng.int(0, 3))]);
      const opts = { ...(gen.randomDeserializeOptions(rng) || {}), index: prefix.length, allowObjectSmallerThanBufferSize: rng.chance(0.8) };
      const ctx = `${where(n)} mutations [${applied.join(' ')}] options ${JSON.stringify(opts)}\n  input ${data.toString('hex')}`;
      const single = [outcome(() => rs.deserialize(Buffer.from(data), opts)), outcome(() => js.deserialize(Buffer.from(data), opts))];
      checkSameClass(single[0], single[1], `deserialize ${ctx}`);
      const docsRs = [];
      const docsJs = [];
      const count = rng.int(1, 3);
      const stream = [
        outcome(() => rs.deserializeStream(Buffer.from(data), prefix.length, count, docsRs, 0, opts)),
        outcome(() => js.deserializeStream(Buffer.from(data), prefix.length, count, docsJs, 0, opts))
      ];
      checkSameClass(stream[0], stream[1], `deserializeStream count ${count} ${ctx}`);
      assertSameValue(docsRs, docsJs, `deserializeStream documents ${ctx}`);
    }
  });
});

/** Same value, or both threw; a BSONError from js-bson requires a BSONError from bson-rs. */
function checkSameClass(actual, expected, ctx) {
  if (expected.ok) {
    assert.ok(actual.ok, `${ctx}\nbson-rs threw ${actual.error && actual.error.class}: ${actual.error && actual.error.message}`);
    if (typeof expected.value === 'number') assert.strictEqual(actual.value, expected.value, ctx);
    else assertSameValue(actual.value, expected.value, ctx);
    return;
  }
  assert.ok(!actual.ok, `${ctx}\njs-bson threw ${expected.error.class}: ${expected.error.message} but bson-rs returned`);
  if (expected.error.class === 'BSONError' || actual.error.class !== expected.error.class) {
    assert.ok(actual.thrown instanceof js.BSONError, `${ctx}\njs-bson threw ${expected.error.class}: ${expected.error.message}\nbson-rs threw ${actual.error.class}: ${actual.error.message}`);
  }
}
