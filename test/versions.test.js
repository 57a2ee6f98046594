'use strict';
// Every published bson 7.x and 6.10.x (mongodb 6 / mongoose 8), each its
// own oracle: the layout probe, the driver plug-in over each copy, the refusal
// of a copy whose internals are unknown or whose version is unsupported, and
// the differential / corpus / fuzz / hostile / serialize / shaped-serialize / deserialize suites
// re-run against each copy (test/support/oracle.js, BSON_RS_ORACLE).
const { describe, it } = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { layoutOf } = require('../lib/layout');
const { createCodec, TESTED_BSON } = require('../lib/codec');
const driver = require('../lib/driver');
const { copyWithUnknownObjectIdLayout } = require('./support/unknown-layout');

const ROOT = path.join(__dirname, '..');
// npm aliases in devDependencies: alias -> published version
const COPIES = {
  bson700: '7.0.0',
  bson710: '7.1.0',
  bson711: '7.1.1',
  bson720: '7.2.0',
  bson730: '7.3.0',
  bson731: '7.3.1',
  bson732: '7.3.2',
  bson733: '7.3.3',
  bson734: '7.3.4',
  bson6100: '6.10.0',
  bson6101: '6.10.1',
  bson6102: '6.10.2',
  bson6103: '6.10.3',
  bson6: '6.10.4'
};
const FOUR_INT_OBJECT_IDS = new Set(['7.3.2', '7.3.3', '7.3.4']);
// bson 6.x and 7.0-7.2: a recursive codec that reads `_bsontype` once per
// `else if`, checks nested documents its own way and sees inherited options.
const RECURSIVE = new Set(['6.10.0', '6.10.1', '6.10.2', '6.10.3', '6.10.4', '7.0.0', '7.1.0', '7.1.1', '7.2.0']);
// bson 6.10.0-6.10.3 write a Float32 vector whose data is no whole number of floats.
const ODD_FLOAT32_WRITTEN = new Set(['6.10.0', '6.10.1', '6.10.2', '6.10.3']);
const SUITES = ['differential', 'corpus', 'fuzz', 'hostile', 'serialize', 'shaped-serialize', 'deserialize'].map(s =>
  path.join(__dirname, `${s}.test.js`)
);

/** A node_modules tree with a mongodb package whose require('bson') is the given copy (a symlink). */
function fakeDriver(bsonDir, t) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'bson-rs-versions-'));
  t.after(() => fs.rmSync(root, { recursive: true, force: true }));
  const mongodb = path.join(root, 'node_modules', 'mongodb');
  fs.mkdirSync(path.join(mongodb, 'lib'), { recursive: true });
  fs.mkdirSync(path.join(mongodb, 'node_modules'));
  fs.writeFileSync(path.join(mongodb, 'package.json'), JSON.stringify({ name: 'mongodb', version: '7.5.0', main: 'lib/index.js' }));
  fs.writeFileSync(
    path.join(mongodb, 'lib', 'index.js'),
    "'use strict';\nexports.bson = require('bson');\nexports.MongoClient = class MongoClient {};\n"
  );
  fs.symlinkSync(bsonDir, path.join(mongodb, 'node_modules', 'bson'), 'dir');
  return require(mongodb);
}

/** The environment of a suite run against `alias`: a test runner of its own,
 * not a child reporting to this one (NODE_TEST_CONTEXT). */
function suiteEnv(alias) {
  const env = { ...process.env, BSON_RS_ORACLE: alias };
  delete env.NODE_TEST_CONTEXT;
  return env;
}

const hex = u8 => Buffer.from(u8).toString('hex');

describe('the tested versions', () => {
  it('TESTED_BSON (no self-check at load) is exactly the copies this file runs as oracles and package.json installs', () => {
    const pkg = require('../package.json');
    const aliases = Object.entries(pkg.devDependencies)
      .filter(([, spec]) => spec.startsWith('npm:bson@'))
      .map(([alias, spec]) => [alias, spec.slice('npm:bson@'.length)]);
    assert.deepStrictEqual(Object.fromEntries(aliases), COPIES);
    assert.deepStrictEqual([...TESTED_BSON].sort(), Object.values(COPIES).sort());
    for (const [alias, version] of Object.entries(COPIES)) {
      const installed = JSON.parse(fs.readFileSync(path.join(ROOT, 'node_modules', alias, 'package.json'), 'utf8'));
      assert.strictEqual(installed.version, version, alias);
    }
  });
});

describe('the layout probe', () => {
  for (const [alias, version] of Object.entries(COPIES)) {
    it(`bson ${version}: what the probes find`, () => {
      const layout = layoutOf(require(alias));
      assert.strictEqual(layout.major, Number(version.split('.')[0]));
      assert.strictEqual(layout.objectIdIsFourInts, FOUR_INT_OBJECT_IDS.has(version));
      assert.strictEqual(layout.objectIdFromInts, FOUR_INT_OBJECT_IDS.has(version));
      assert.strictEqual(layout.binaryFromFields, version.startsWith('6.') ? 'sub_type' : 'buffer');
      assert.strictEqual(layout.tagReadByChain, RECURSIVE.has(version));
      assert.strictEqual(layout.readsNestedRecursively, RECURSIVE.has(version));
      assert.strictEqual(layout.readsInheritedOptions, RECURSIVE.has(version));
      assert.strictEqual(layout.checksFloat32VectorSize, !ODD_FLOAT32_WRITTEN.has(version));
    });
  }
});

describe('ObjectIds made without their constructor (layout.objectIdFromInts)', () => {
  const bson = require('bson734');
  const createDeserializer = require('../lib/deserialize');
  const own = o => Reflect.ownKeys(o).map(k => [k, Object.getOwnPropertyDescriptor(o, k)]);

  it('are the objects js-bson deserialize makes: prototype, own properties and their descriptors', () => {
    const ids = ['0123456789abcdef01234567', 'ffffffffffffffffffffffff', '000000000000000000000000'];
    const bytes = bson.serialize({ a: ids.map(h => new bson.ObjectId(h)), b: { c: new bson.ObjectId(ids[0]) } });
    const ours = createDeserializer(bson).deserialize(bytes);
    const theirs = bson.deserialize(bytes);
    assert.strictEqual(layoutOf(bson).objectIdFromInts, true);
    for (const [o, t] of [...ours.a.map((o, k) => [o, theirs.a[k]]), [ours.b.c, theirs.b.c]]) {
      assert.strictEqual(Object.getPrototypeOf(o), bson.ObjectId.prototype);
      assert.deepStrictEqual(own(o), own(t));
      assert.strictEqual(o.toHexString(), t.toHexString());
    }
    assert.deepStrictEqual(ours, theirs);
  });

  it('are not made so for a copy whose constructor does more, which then gets its own constructor', () => {
    // e.g. a release that caches the hex string, or keeps a field of its own
    class ObjectId extends bson.ObjectId {
      constructor(id, offset) {
        super(id, offset);
        this.hex = this.toHexString();
      }
    }
    const copy = { ...bson, ObjectId };
    assert.strictEqual(layoutOf(copy).objectIdIsFourInts, true);
    assert.strictEqual(layoutOf(copy).objectIdFromInts, false);
    const hex = '0123456789abcdef01234567';
    const back = createDeserializer(copy).deserialize(bson.serialize({ a: [new bson.ObjectId(hex)], b: 1 }));
    assert.ok(back.a[0] instanceof ObjectId);
    assert.strictEqual(back.a[0].hex, hex);
    assert.strictEqual(back.a[0].toHexString(), hex);
  });

  it('are not made so when the prototype intercepts an int', () => {
    class ObjectId extends bson.ObjectId {}
    Object.defineProperty(ObjectId.prototype, 'i3', {
      get() {
        return this.low;
      },
      set(v) {
        this.low = v;
      }
    });
    assert.strictEqual(layoutOf({ ...bson, ObjectId }).objectIdFromInts, false);
  });
});

describe('Binaries and UUIDs made without their constructors (layout.binaryFromFields)', () => {
  const createDeserializer = require('../lib/deserialize');
  const own = o => Reflect.ownKeys(o).map(k => [k, Object.getOwnPropertyDescriptor(o, k)]);
  const hexes = ['00112233445566778899aabbccddeeff', '00112233445566778899aabbccddee', '', '616263'];

  for (const [alias, version] of Object.entries(COPIES)) {
    it(`bson ${version}: are the objects its deserialize makes (prototype, own properties in order, descriptors)`, () => {
      const bson = require(alias);
      const values = [];
      for (const hex of hexes) for (const subType of [4, 0, 2, 0x80]) values.push(new bson.Binary(Buffer.from(hex, 'hex'), subType));
      const bytes = bson.serialize({ a: values, b: { c: values[0] }, d: values[1] });
      const ours = createDeserializer(bson).deserialize(bytes);
      const theirs = bson.deserialize(bytes);
      const pairs = [...ours.a.map((o, k) => [o, theirs.a[k]]), [ours.b.c, theirs.b.c], [ours.d, theirs.d]];
      for (const [o, t] of pairs) {
        assert.strictEqual(Object.getPrototypeOf(o), Object.getPrototypeOf(t));
        assert.deepStrictEqual(own(o), own(t));
        assert.strictEqual(o.buffer.buffer, bytes.buffer, 'a view of the input, as js-bson');
      }
      assert.ok(ours.a[0] instanceof bson.UUID);
      assert.deepStrictEqual(ours, theirs);
    });
  }

  it('are made by the constructors for a copy whose constructor does more', () => {
    const bson = require('bson734');
    class Binary extends bson.Binary {
      constructor(buffer, subType) {
        super(buffer, subType);
        this.seen = true;
      }
    }
    const copy = { ...bson, Binary };
    assert.strictEqual(layoutOf(copy).binaryFromFields, null);
    const back = createDeserializer(copy).deserialize(bson.serialize({ a: new bson.Binary(Buffer.from('abc'), 0x80) }));
    assert.ok(back.a instanceof Binary);
    assert.strictEqual(back.a.seen, true);
  });
});

describe('the driver plug-in over each bson copy', () => {
  for (const [alias, version] of Object.entries(COPIES)) {
    it(`bson ${version}: ObjectIds keep their bytes through serialize and deserialize`, t => {
      const mongodb = fakeDriver(path.join(ROOT, 'node_modules', alias), t);
      const bson = mongodb.bson;
      assert.strictEqual(bson, require(alias));
      const original = bson.serialize;
      const doc = {
        _id: new bson.ObjectId('123456789123456789123456'),
        a: [new bson.ObjectId('aaaaaaaaaaaaaaaaaaaaaaaa'), { b: new bson.ObjectId() }],
        n: new bson.Long(1, 2),
        d: new bson.Decimal128('1.5')
      };
      const expected = hex(original(doc));
      const info = driver.install(mongodb);
      t.after(() => driver.uninstall()); // all copies: needs no lookup in the (by then removed) folder
      assert.strictEqual(info.bsonVersion, version);
      assert.notStrictEqual(bson.serialize, original, 'installed');
      assert.strictEqual(hex(bson.serialize(doc)), expected);
      assert.ok(expected.includes('123456789123456789123456') && expected.includes('aaaaaaaaaaaaaaaaaaaaaaaa'));
      const back = bson.deserialize(Buffer.from(expected, 'hex'), { promoteLongs: false });
      assert.ok(back._id instanceof bson.ObjectId);
      assert.strictEqual(back._id.toHexString(), '123456789123456789123456');
      assert.strictEqual(back.a[1].b.toHexString(), doc.a[1].b.toHexString());
      assert.strictEqual(hex(bson.serialize(back)), expected);
    });
  }
});

describe('where bson-rs deliberately reads as later releases (README, Differences)', () => {
  it('bson 6.10.0-6.10.2 read a negative int64 under useBigInt64 as unsigned; bson-rs reads it signed', () => {
    for (const alias of ['bson6100', 'bson6101', 'bson6102', 'bson6103']) {
      const bson = require(alias);
      const bytes = bson.serialize({ n: bson.Long.fromNumber(-2), p: bson.Long.fromNumber(3) });
      const theirs = bson.deserialize(bytes, { useBigInt64: true });
      const ours = createCodec(bson).deserialize(bytes, { useBigInt64: true });
      assert.deepStrictEqual(ours, { n: -2n, p: 3n }, alias);
      assert.deepStrictEqual(theirs, { n: alias === 'bson6103' ? -2n : 2n ** 64n - 2n, p: 3n }, alias);
    }
  });
});

describe('a copy whose internals bson-rs does not know', () => {
  it('is refused by createCodec with one clear error naming the first difference', () => {
    const copy = copyWithUnknownObjectIdLayout(require('bson731'));
    assert.strictEqual(layoutOf(copy).objectIdIsFourInts, true, 'the simulation fools the layout probe');
    assert.throws(
      () => createCodec(copy),
      e => /^bson-rs: refusing bson .*: .*disagree on the self-check document \(serialize: bytes differ/.test(e.message)
    );
  });

  it('is refused by the driver plug-in, which then patches nothing', t => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bson-rs-unknown-'));
    t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
    fs.mkdirSync(path.join(dir, 'lib'));
    fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'bson', version: '7.9.0', main: 'lib/bson.cjs' }));
    fs.writeFileSync(
      path.join(dir, 'lib', 'bson.cjs'),
      `'use strict';\nconst simulate = require(${JSON.stringify(path.join(__dirname, 'support', 'unknown-layout.js'))}).copyWithUnknownObjectIdLayout;\n` +
        `const copy = simulate(require(${JSON.stringify(path.join(ROOT, 'node_modules', 'bson731'))}));\n` +
        'Object.assign(exports, copy);\n'
    );
    const mongodb = fakeDriver(dir, t);
    const before = { ...mongodb.bson };
    assert.throws(() => driver.install(mongodb), /^Error: bson-rs: refusing bson 7\.9\.0: .*nothing was installed/);
    assert.deepStrictEqual({ ...mongodb.bson }, before);
    assert.strictEqual(driver.isInstalled(mongodb), false);
  });
});

describe('unsupported bson versions', () => {
  for (const version of ['6.9.1', '5.5.1', '8.0.0']) {
    it(`bson ${version} is refused with one clear error, nothing patched`, t => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bson-rs-version-'));
      t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
      fs.mkdirSync(path.join(dir, 'lib'));
      fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'bson', version, main: 'lib/bson.cjs' }));
      // the classes of a supported copy under another version number: only the version refuses it
      fs.writeFileSync(
        path.join(dir, 'lib', 'bson.cjs'),
        `'use strict';\nObject.assign(exports, require(${JSON.stringify(path.join(ROOT, 'node_modules', 'bson6'))}));\n`
      );
      const mongodb = fakeDriver(dir, t);
      const before = { ...mongodb.bson };
      const v = version.replace(/\./g, '\\.');
      assert.throws(() => driver.install(mongodb), new RegExp(`uses bson ${v} .*; bson-rs supports bson 6\\.10\\.x .* and 7\\.x .* only$`));
      assert.throws(
        () => createCodec(require(dir)),
        new RegExp(`^Error: bson-rs: refusing bson ${v}: bson-rs reproduces bson 6\\.10\\.x .* Nothing was installed\\.$`)
      );
      assert.deepStrictEqual({ ...mongodb.bson }, before);
      assert.strictEqual(driver.isInstalled(mongodb), false);
    });
  }
});

describe('the differential suites against each bson copy', () => {
  for (const [alias, version] of Object.entries(COPIES)) {
    it(`bson ${version}`, () => {
      const run = spawnSync(process.execPath, ['--test', '--test-reporter=tap', ...SUITES], {
        cwd: ROOT,
        env: suiteEnv(alias),
        encoding: 'utf8',
        maxBuffer: 256 * 1024 * 1024
      });
      const pass = /^# pass (\d+)$/m.exec(run.stdout);
      const fail = /^# fail (\d+)$/m.exec(run.stdout);
      const failures = run.stdout.split('\n').filter(line => /^\s*not ok/.test(line)).slice(0, 20);
      assert.ok(pass && Number(pass[1]) > 1000, `bson ${version}: ran the suites (${pass && pass[1]} passed)`);
      assert.strictEqual(fail && Number(fail[1]), 0, `bson ${version}:\n${failures.join('\n')}`);
      assert.strictEqual(run.status, 0, run.stderr.slice(-2000));
    });
  }
});

