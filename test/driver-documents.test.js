'use strict';
// The driver plug-in's OnDemandDocument#toObject (lib/driver.js): on each
// mongodb this package tests (7.x, and 6.x under mongoose 8), installing
// replaces it and uninstalling restores it; the replacement returns what the
// driver's own method returns (values, classes, errors) for every option set,
// reads the options in the same order, and steps aside for a deserialize it
// did not install. A driver whose method differs from the known source keeps it.
// The same for CursorResponse#shift (below), which also leaves the driver's
// own method everything it does not model (raw, encrypted replies, errors).
const { describe, it } = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const driver = require('../lib/driver');
const { canonText } = require('./e2e/canon');
const { traced } = require('./support/traps');

const ROOT = path.join(__dirname, '..');
const ON_DEMAND = path.join('lib', 'cmap', 'wire_protocol', 'on_demand', 'document.js');
const RESPONSES = path.join('lib', 'cmap', 'wire_protocol', 'responses.js');
const STACKS = {
  'mongodb 7 (bson 7)': path.join(ROOT, 'node_modules', 'mongodb'),
  'mongodb 6 (bson 6)': path.join(ROOT, 'node_modules', 'mongoose8', 'node_modules', 'mongodb')
};

/** A reply-like buffer: documents back to back after a few bytes, and each one's offset. */
function batch(bson) {
  const docs = [
    { ok: 1 },
    {
      _id: new bson.ObjectId('65a1b2c3d4e5f60718293a4b'),
      n: 42,
      big: bson.Long.fromString('9007199254740993'),
      small: bson.Long.fromNumber(7),
      x: 1.5,
      s: 'héllo ✓',
      at: new Date(1700000000000),
      re: /ab+c/i,
      bin: new bson.Binary(Buffer.from([1, 2, 3]), 0),
      uuid: new bson.Binary(Buffer.alloc(16, 7), 4),
      dec: bson.Decimal128.fromString('1.25'),
      sub: { a: [1, 'two', { three: 3 }], raw: { k: 'v' } },
      comments: [{ by: 'u1', votes: 3 }, { by: 'u2', votes: -1 }],
      nul: null,
      ts: new bson.Timestamp({ t: 5, i: 6 })
    },
    { ref: new bson.DBRef('coll', new bson.ObjectId('65a1b2c3d4e5f60718293a4c')), code: new bson.Code('x', { y: 1 }) }
  ];
  const parts = [Buffer.from([0xde, 0xad, 0xbe])];
  const offsets = [];
  let at = parts[0].length;
  for (const d of docs) {
    const bytes = Buffer.from(bson.serialize(d));
    offsets.push(at);
    parts.push(bytes);
    at += bytes.length;
  }
  parts.push(Buffer.from([0xff]));
  return { buffer: Buffer.concat(parts), offsets };
}

// What the driver passes (AbstractCursor's deserializationOptions and others), and edge cases.
const driverOptions = {
  readPreference: { mode: 'primary' },
  fieldsAsRaw: undefined,
  useBigInt64: false,
  promoteValues: true,
  promoteBuffers: false,
  promoteLongs: true,
  serializeFunctions: false,
  ignoreUndefined: false,
  bsonRegExp: false,
  raw: false,
  enableUtf8Validation: true,
  validation: { utf8: true }
};
const OPTION_SETS = [
  undefined,
  null,
  {},
  driverOptions,
  { ...driverOptions, validation: { utf8: false } },
  { promoteLongs: false },
  { promoteValues: false },
  { useBigInt64: true },
  { promoteBuffers: true },
  { bsonRegExp: true },
  { fieldsAsRaw: { sub: true, comments: 1 } },
  { validation: { utf8: { s: true } } },
  { index: 1000, allowObjectSmallerThanBufferSize: false }, // (overridden by toObject's own)
  { useBigInt64: true, promoteValues: false }, // js-bson's option error
  { validation: { utf8: {} } }, // js-bson's option error
  { index: 'x', promoteValues: 'yes' }, // not modelled: js-bson's own function
  Object.create({ promoteLongs: false }) // an inherited option: not copied by the spread
];

/** The canonical text of fn()'s value (its BSON values must be of `bson`'s classes), or of its error. */
function outcome(fn, bson) {
  let value;
  try {
    value = fn();
  } catch (e) {
    return `throws ${e.constructor.name}: ${e.message}`;
  }
  return canonText(value, bson);
}

/** Options whose every read is logged (accessors), behind the tests' tracing Proxy (get, has, ownKeys, getOwnPropertyDescriptor). */
function loggingOptions(log) {
  const options = {};
  for (const [k, v] of Object.entries({ promoteLongs: false, validation: { utf8: true }, index: 7, bsonRegExp: true })) {
    Object.defineProperty(options, k, {
      enumerable: true,
      get() {
        log.push(`get ${k}`);
        return v;
      }
    });
  }
  return traced(options, log);
}

/** Installing replaces proto[name] by a method of the same name and arity (same attributes); uninstalling restores the exact descriptor. */
function assertReplacedAndRestored(t, mongodb, proto, name) {
  const before = Object.getOwnPropertyDescriptor(proto, name);
  driver.install(mongodb);
  t.after(() => driver.uninstall(mongodb));
  const during = Object.getOwnPropertyDescriptor(proto, name);
  assert.notStrictEqual(during.value, before.value, 'replaced');
  assert.deepStrictEqual({ ...during, value: null }, { ...before, value: null }, 'same attributes');
  assert.strictEqual(during.value.name, name);
  assert.strictEqual(during.value.length, 1);
  driver.uninstall(mongodb);
  assert.deepStrictEqual(Object.getOwnPropertyDescriptor(proto, name), before, 'restored');
}

for (const [stack, dir] of Object.entries(STACKS)) {
  describe(`OnDemandDocument#toObject under the plug-in, ${stack}`, () => {
    const mongodb = require(dir);
    const { OnDemandDocument } = require(path.join(dir, ON_DEMAND));
    const bson = driver.driverBson(mongodb);
    const proto = OnDemandDocument.prototype;

    it('is replaced by install and restored, descriptor and all, by uninstall', (t) => {
      assertReplacedAndRestored(t, mongodb, proto, 'toObject');
    });

    it("returns the driver's own result for every option set (values, classes, errors)", (t) => {
      const original = proto.toObject;
      const { buffer, offsets } = batch(bson);
      driver.install(mongodb);
      t.after(() => driver.uninstall(mongodb));
      const patched = proto.toObject;
      assert.notStrictEqual(patched, original);
      let compared = 0;
      for (const offset of offsets) {
        const doc = new OnDemandDocument(buffer, offset);
        for (const options of OPTION_SETS) {
          const theirs = outcome(() => original.call(doc, options), bson);
          const ours = outcome(() => patched.call(doc, options), bson);
          assert.strictEqual(ours, theirs, `offset ${offset}, options ${JSON.stringify(options)}`);
          compared++;
        }
      }
      assert.strictEqual(compared, offsets.length * OPTION_SETS.length);
      assert.ok(outcome(() => patched.call(new OnDemandDocument(buffer, offsets[1]), undefined), bson).includes('héllo ✓'));
    });

    it('reads the options as the driver does: the same accessors and traps, in the same order', (t) => {
      const original = proto.toObject;
      const { buffer, offsets } = batch(bson);
      const doc = new OnDemandDocument(buffer, offsets[1]);
      const theirLog = [];
      const theirs = outcome(() => original.call(doc, loggingOptions(theirLog)), bson);
      driver.install(mongodb);
      t.after(() => driver.uninstall(mongodb));
      const ourLog = [];
      const ours = outcome(() => proto.toObject.call(doc, loggingOptions(ourLog)), bson);
      assert.strictEqual(ours, theirs);
      assert.ok(theirLog.includes('get promoteLongs') && theirLog.some((e) => e[0] === 'ownKeys'), JSON.stringify(theirLog));
      assert.deepStrictEqual(ourLog, theirLog);
    });

    it('calls whatever deserialize the bson module has when it is not the one installed', (t) => {
      const { buffer, offsets } = batch(bson);
      driver.install(mongodb);
      t.after(() => driver.uninstall(mongodb));
      const installed = bson.deserialize;
      const calls = [];
      bson.deserialize = function spy(bytes, options) {
        calls.push(options);
        return installed(bytes, options);
      };
      try {
        const value = new OnDemandDocument(buffer, offsets[0]).toObject({ promoteLongs: false });
        assert.deepStrictEqual(value, { ok: 1 });
      } finally {
        bson.deserialize = installed;
      }
      assert.deepStrictEqual(calls, [{ promoteLongs: false, index: offsets[0], allowObjectSmallerThanBufferSize: true }]);
    });
  });
}

describe('a driver whose OnDemandDocument#toObject or CursorResponse#shift is not the known one', () => {
  /** A mongodb package (version 7.5.0) over our bson whose document.js has the given toObject body (and responses.js the given source), loaded as the driver would. */
  function fakeDriver(t, toObjectSource, responsesSource = null) {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'bson-rs-ondemand-'));
    t.after(() => fs.rmSync(root, { recursive: true, force: true }));
    const mongodb = path.join(root, 'node_modules', 'mongodb');
    fs.mkdirSync(path.join(mongodb, path.dirname(ON_DEMAND)), { recursive: true });
    fs.mkdirSync(path.join(mongodb, 'node_modules'));
    fs.symlinkSync(path.join(ROOT, 'node_modules', 'bson'), path.join(mongodb, 'node_modules', 'bson'), 'dir');
    fs.writeFileSync(path.join(mongodb, 'package.json'), JSON.stringify({ name: 'mongodb', version: '7.5.0', main: 'lib/index.js' }));
    fs.writeFileSync(path.join(mongodb, 'lib', 'bson.js'), "'use strict';\nmodule.exports = require('bson');\n");
    fs.writeFileSync(
      path.join(mongodb, ON_DEMAND),
      `'use strict';\nconst bson_1 = require('../../../bson');\nclass OnDemandDocument {\n  constructor(bson, offset) { this.bson = bson; this.offset = offset; }\n  ${toObjectSource}\n}\nexports.OnDemandDocument = OnDemandDocument;\n`
    );
    let index = "'use strict';\nexports.OnDemandDocument = require('./cmap/wire_protocol/on_demand/document').OnDemandDocument;\nexports.MongoClient = class MongoClient {};\n";
    if (responsesSource !== null) {
      fs.writeFileSync(path.join(mongodb, RESPONSES), responsesSource);
      index += "exports.CursorResponse = require('./cmap/wire_protocol/responses').CursorResponse;\n";
    }
    fs.writeFileSync(path.join(mongodb, 'lib', 'index.js'), index);
    return require(mongodb);
  }
  const KNOWN = `toObject(options) {
        return (0, bson_1.deserialize)(this.bson, {
            ...options,
            index: this.offset,
            allowObjectSmallerThanBufferSize: true
        });
    }`;

  it('is kept as it is (and the codec functions are still installed)', (t) => {
    const mongodb = fakeDriver(t, KNOWN.replace('allowObjectSmallerThanBufferSize: true', 'allowObjectSmallerThanBufferSize: false'));
    const original = mongodb.OnDemandDocument.prototype.toObject;
    driver.install(mongodb);
    t.after(() => driver.uninstall()); // (all copies: the folder is gone by then)
    assert.strictEqual(driver.isInstalled(mongodb), true);
    assert.strictEqual(mongodb.OnDemandDocument.prototype.toObject, original);
  });

  // mongodb 7's CursorResponse#shift, as the driver's file has it
  const KNOWN_SHIFT = fs
    .readFileSync(path.join(STACKS['mongodb 7 (bson 7)'], RESPONSES), 'utf8')
    .match(/\n {4}shift\(options\) \{\n {8}if \(this\.iterated >= this\.batchSize\)[\s\S]*?\n {4}\}\n/)[0];
  /** responses.js of a fake driver: a CursorResponse with `shiftSource` over a two-element batch whose index gives document offset `indexed` (the driver's own get: 5). */
  function responses(shiftSource, indexed) {
    return `'use strict';
const bson_1 = require('../../bson');
const utils_1 = {};
class CursorResponse {
  constructor(bytes) { this.iterated = 0; this._batch = { isArray: true, cache: Object.create(null), elements: [[3, 0, 0, ${indexed}, 0], [2, 0, 0, 0, 0]], bson: bytes, get(i) { this.cache[i] = { offset: 5, bson: this.bson }; return this.cache[i]; } }; }
  get batchSize() { return 2; }
  get encryptedBatch() { return null; }
  get batch() { return this._batch; }
${shiftSource}
}
exports.CursorResponse = CursorResponse;
`;
  }

  it("a CursorResponse#shift whose source or batch layout is not the known one is kept", (t) => {
    const kept = [
      ['a changed source', KNOWN_SHIFT.replace('this.iterated += 1;', 'this.iterated++;'), 5],
      ['an element index the probe does not recognise', KNOWN_SHIFT, 999]
    ];
    for (const [what, source, indexed] of [...kept, ['the known source and layout (the control)', KNOWN_SHIFT, 5]]) {
      const mongodb = fakeDriver(t, KNOWN, responses(source, indexed));
      const original = mongodb.CursorResponse.prototype.shift;
      const originalToObject = mongodb.OnDemandDocument.prototype.toObject;
      driver.install(mongodb);
      try {
        assert.notStrictEqual(mongodb.OnDemandDocument.prototype.toObject, originalToObject, `${what}: toObject replaced`);
        const replaced = mongodb.CursorResponse.prototype.shift !== original;
        assert.strictEqual(replaced, indexed === 5 && source === KNOWN_SHIFT, what);
      } finally {
        driver.uninstall();
      }
    }
  });

  it('the known source (its layout aside) is replaced, and gives the same documents', (t) => {
    const mongodb = fakeDriver(t, KNOWN.replace(/\n\s*/g, ' '));
    const original = mongodb.OnDemandDocument.prototype.toObject;
    const bson = driver.driverBson(mongodb);
    const { buffer, offsets } = batch(bson);
    driver.install(mongodb);
    t.after(() => driver.uninstall());
    const patched = mongodb.OnDemandDocument.prototype.toObject;
    assert.notStrictEqual(patched, original);
    for (const offset of offsets) {
      const doc = new mongodb.OnDemandDocument(buffer, offset);
      assert.strictEqual(outcome(() => patched.call(doc, driverOptions), bson), outcome(() => original.call(doc, driverOptions), bson));
    }
  });
});

// CursorResponse#shift under the plug-in (lib/driver.js patchShift): it reads
// each document of a batch without building the driver's OnDemandDocument for
// it; everything it does not model goes to the driver's own method.

/** A find reply's bytes whose first batch holds `documents` (or what `edit` makes of them). */
function cursorReply(bson, documents, edit = (bytes) => bytes) {
  return edit(Buffer.from(bson.serialize({ cursor: { firstBatch: documents, id: 0, ns: 'db.c' }, ok: 1 })));
}

/** Each shift's outcome (and `iterated` after it) until the batch is done or a shift throws twice. */
function shiftAll(response, options, bson) {
  const steps = [];
  let errors = 0;
  for (let i = 0; i < 12 && errors < 2; i++) {
    let done = false;
    const text = outcome(() => {
      const value = response.shift(options);
      done = value === null;
      return value;
    }, bson);
    if (text.startsWith('throws')) errors++;
    steps.push(`${text} @${response.iterated}`);
    if (done) break;
  }
  return steps;
}

/** Replaces the first occurrence of `from` (bytes) in `bytes` with `to`, same length. */
function patchBytes(bytes, from, to) {
  const at = bytes.indexOf(Buffer.from(from));
  assert.ok(at > 0 && from.length === to.length);
  Buffer.from(to).copy(bytes, at);
  return bytes;
}

for (const [stack, dir] of Object.entries(STACKS)) {
  describe(`CursorResponse#shift under the plug-in, ${stack}`, () => {
    const mongodb = require(dir);
    const { CursorResponse, MongoDBResponse } = require(path.join(dir, RESPONSES));
    const { OnDemandDocument } = require(path.join(dir, ON_DEMAND));
    const bson = driver.driverBson(mongodb);
    const proto = CursorResponse.prototype;
    const documents = () => [{ ok: 1 }, { k: 'v', n: [1, { m: 2 }] }, { s: 'héllo', at: new Date(5), big: bson.Long.fromString('9007199254740993') }];

    /** Both methods' steps over fresh responses of the same bytes (`prepare` runs on each response first). */
    function compare(original, patched, bytes, options, prepare = () => {}) {
      const theirs = new CursorResponse(bytes);
      prepare(theirs);
      const ours = new CursorResponse(bytes);
      prepare(ours);
      const theirSteps = shiftAll({ shift: (o) => original.call(theirs, o), get iterated() { return theirs.iterated; } }, options, bson);
      const ourSteps = shiftAll({ shift: (o) => patched.call(ours, o), get iterated() { return ours.iterated; } }, options, bson);
      assert.deepStrictEqual(ourSteps, theirSteps, `options ${JSON.stringify(options)}`);
      return ourSteps;
    }

    it('is replaced by install and restored, descriptor and all, by uninstall', (t) => {
      assertReplacedAndRestored(t, mongodb, proto, 'shift');
    });

    it("returns the driver's own documents for every option set, raw included", (t) => {
      const original = proto.shift;
      const bytes = cursorReply(bson, documents());
      driver.install(mongodb);
      t.after(() => driver.uninstall(mongodb));
      assert.notStrictEqual(proto.shift, original);
      for (const options of [...OPTION_SETS, { raw: true }, { ...driverOptions, raw: true }]) {
        const steps = compare(original, proto.shift, bytes, options);
        assert.ok(steps.length >= 2, JSON.stringify(steps));
      }
      assert.match(compare(original, proto.shift, bytes, undefined).join('\n'), /héllo/);
    });

    it("gives the driver's own errors, and leaves the cursor where the driver's method does", (t) => {
      const original = proto.shift;
      driver.install(mongodb);
      t.after(() => driver.uninstall(mongodb));
      const cases = {
        // not a document: the driver's "BSON element "1" is missing"
        'a string in the batch': cursorReply(bson, [{ a: 1 }, 'x', { b: 2 }]),
        'a number in the batch': cursorReply(bson, [7]),
        // an invalid string inside a document: deserialize's error, or U+FFFD without validation
        'invalid UTF-8': cursorReply(bson, [{ s: 'abc' }, { t: 1 }], (b) => patchBytes(b, 'abc', [0x61, 0xff, 0x63])),
        // a string's length past its document: the driver's own element index throws first
        'a string running past its document': cursorReply(bson, [{ s: 'abc', z: 1 }], (b) => patchBytes(b, [4, 0, 0, 0, 0x61], [40, 0, 0, 0, 0x61])),
        // a document's declared size too small: neither reads it
        'a bad document size': cursorReply(bson, [{ s: 'abcd' }], (b) => patchBytes(b, [0x11, 0, 0, 0, 2, 0x73], [0x05, 0, 0, 0, 2, 0x73]))
      };
      const stepsByCase = {};
      for (const [name, bytes] of Object.entries(cases)) {
        for (const options of [undefined, driverOptions, { ...driverOptions, validation: { utf8: false } }]) {
          stepsByCase[name] = compare(original, proto.shift, bytes, options);
        }
      }
      for (const name of ['a string in the batch', 'a number in the batch', 'a string running past its document', 'a bad document size']) {
        assert.ok(stepsByCase[name].some((s) => s.startsWith('throws')), `${name}: ${stepsByCase[name]}`);
      }
      assert.match(stepsByCase['invalid UTF-8'][0], /\uFFFD/);
    });

    it('agrees on a batch element the driver looked up before, and steps aside for an encrypted reply', (t) => {
      const original = proto.shift;
      const bytes = cursorReply(bson, documents());
      driver.install(mongodb);
      t.after(() => driver.uninstall(mongodb));
      compare(original, proto.shift, bytes, driverOptions, (r) => r.batch.get(1, bson.BSONType.object, true));
      const calls = [];
      const decorated = compare(original, proto.shift, bytes, driverOptions, (r) => {
        r.encryptedResponse = new MongoDBResponse(bytes);
        const get = r.encryptedBatch.get;
        r.encryptedBatch.get = function (...args) {
          calls.push(args[0]);
          return get.apply(this, args);
        };
      });
      assert.ok(decorated.length >= 3);
      assert.deepStrictEqual(calls, [0, 1, 2, 0, 1, 2], 'both methods read the encrypted batch');
    });

    it("calls the driver's own method under someone else's deserialize or toObject", (t) => {
      const bytes = cursorReply(bson, documents());
      driver.install(mongodb);
      t.after(() => driver.uninstall(mongodb));
      const installed = bson.deserialize;
      const seen = [];
      bson.deserialize = function spy(buffer, options) {
        seen.push(options.index);
        return installed(buffer, options);
      };
      try {
        assert.deepStrictEqual(new CursorResponse(bytes).shift(driverOptions), { ok: 1 });
      } finally {
        bson.deserialize = installed;
      }
      assert.strictEqual(seen.length, 1);
      const documentProto = OnDemandDocument.prototype;
      const ourToObject = documentProto.toObject;
      const offsets = [];
      documentProto.toObject = function wrapped(options) {
        offsets.push(this.offset);
        return ourToObject.call(this, options);
      };
      try {
        const response = new CursorResponse(bytes);
        assert.deepStrictEqual(response.shift(driverOptions), { ok: 1 });
        assert.deepStrictEqual(response.shift(driverOptions), { k: 'v', n: [1, { m: 2 }] });
      } finally {
        documentProto.toObject = ourToObject;
      }
      // ({ ok: 1 } is 13 bytes; the next element's type byte and name "1" come before the next document)
      assert.deepStrictEqual(offsets, [seen[0], seen[0] + 13 + 3]);
    });
  });
}
