'use strict';
// The driver plug-in's OnDemandDocument#toObject (lib/driver.js): on each
// mongodb this package tests (7.x, and 6.x under mongoose 8), installing
// replaces it and uninstalling restores it; the replacement returns what the
// driver's own method returns (values, classes, errors) for every option set,
// reads the options in the same order, and steps aside for a deserialize it
// did not install. A driver whose method differs from the known source keeps it.
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

for (const [stack, dir] of Object.entries(STACKS)) {
  describe(`OnDemandDocument#toObject under the plug-in, ${stack}`, () => {
    const mongodb = require(dir);
    const { OnDemandDocument } = require(path.join(dir, ON_DEMAND));
    const bson = driver.driverBson(mongodb);
    const proto = OnDemandDocument.prototype;

    it('is replaced by install and restored, descriptor and all, by uninstall', (t) => {
      const before = Object.getOwnPropertyDescriptor(proto, 'toObject');
      driver.install(mongodb);
      t.after(() => driver.uninstall(mongodb));
      const during = Object.getOwnPropertyDescriptor(proto, 'toObject');
      assert.notStrictEqual(during.value, before.value, 'replaced');
      assert.deepStrictEqual({ ...during, value: null }, { ...before, value: null }, 'same attributes');
      assert.strictEqual(during.value.name, 'toObject');
      assert.strictEqual(during.value.length, 1);
      driver.uninstall(mongodb);
      assert.deepStrictEqual(Object.getOwnPropertyDescriptor(proto, 'toObject'), before, 'restored');
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

describe('a driver whose OnDemandDocument#toObject is not the known one', () => {
  /** A mongodb package (version 7.5.0) over our bson whose document.js has the given toObject body, loaded as the driver would. */
  function fakeDriver(t, toObjectSource) {
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
    fs.writeFileSync(
      path.join(mongodb, 'lib', 'index.js'),
      "'use strict';\nexports.OnDemandDocument = require('./cmap/wire_protocol/on_demand/document').OnDemandDocument;\nexports.MongoClient = class MongoClient {};\n"
    );
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
