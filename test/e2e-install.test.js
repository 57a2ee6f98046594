'use strict';
// bson-rs/driver and bson-rs/mongoose installation mechanics (no server needed).
const { test, afterEach } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const mongodb = require('mongodb');
const { Mongoose } = require('mongoose');

const driver = require('../lib/driver');
const bsonRs = require('../lib/mongoose');
const { createCodec } = require('../lib/codec');

const driverBson = driver.driverBson(mongodb);
const NAMES = driver.CODEC_NAMES;
const originalKeys = Object.keys(driverBson);
const original = Object.fromEntries([...NAMES, 'BSON'].map((n) => [n, driverBson[n]]));

afterEach(() => {
  bsonRs.uninstall();
  driver.uninstall();
});

function assertPristine() {
  for (const name of [...NAMES, 'BSON']) assert.equal(driverBson[name], original[name], `${name} is js-bson's`);
  assert.equal(driver.isInstalled(mongodb), false);
}

test("the driver's bson copy is found from the driver's location", () => {
  const expected = require.resolve('bson', { paths: [path.join(path.dirname(require.resolve('mongodb')))] });
  assert.equal(driverBson, require(expected));
  const info = driver.install(mongodb);
  assert.equal(info.bsonFile, expected);
  assert.match(info.bsonVersion, /^7\./);
  assert.match(info.mongodbVersion, /^7\./);
});

test('install routes the six codec functions and the BSON namespace; uninstall restores them', () => {
  assertPristine();
  driver.install(mongodb);
  const codec = createCodec(driverBson);
  for (const name of NAMES) {
    assert.equal(driverBson[name], codec[name], name);
    assert.equal(driverBson.BSON[name], codec[name], `BSON.${name}`);
  }
  const ns = driverBson.BSON;
  assert.notEqual(ns, original.BSON);
  assert.ok(Object.isFrozen(ns), 'namespace is frozen like js-bson');
  assert.equal(Object.getPrototypeOf(ns), null, 'namespace has a null prototype like js-bson');
  assert.deepEqual(Object.keys(ns), Object.keys(original.BSON), 'same members in the same order');
  for (const key of Object.keys(ns)) {
    if (!NAMES.includes(key)) assert.equal(ns[key], original.BSON[key], `BSON.${key} is unchanged`);
  }
  assert.deepEqual(Object.keys(driverBson), originalKeys, 'module exports keep their order');
  // What the driver actually reads: its lib/bson.js getters.
  assert.equal(mongodb.BSON, ns);
  const driverLibBson = require(path.join(path.dirname(require.resolve('mongodb')), 'bson.js'));
  assert.equal(driverLibBson.serialize, codec.serialize);
  assert.equal(driverLibBson.deserialize, codec.deserialize);
  assert.equal(driverLibBson.calculateObjectSize, codec.calculateObjectSize);
  assert.equal(driverLibBson.BSON.serialize, codec.serialize);

  assert.equal(driver.uninstall(mongodb), true);
  assertPristine();
  assert.equal(driver.uninstall(mongodb), false, 'uninstalling twice is harmless');
  assert.equal(driver.uninstall(), false);
});

test('installing twice is harmless', () => {
  const a = driver.install(mongodb);
  const ns = driverBson.BSON;
  const b = driver.install(mongodb);
  assert.deepEqual(a, b);
  assert.equal(driverBson.BSON, ns, 'second install changes nothing');
  assert.equal(driver.uninstall(), true);
  assertPristine();
});

test('a second copy of bson-rs sees the first one\'s installation', () => {
  const file = require.resolve('../lib/driver');
  const saved = require.cache[file];
  delete require.cache[file];
  let other;
  try {
    other = require('../lib/driver');
  } finally {
    require.cache[file] = saved;
  }
  assert.notEqual(other, driver);
  driver.install(mongodb);
  const ns = driverBson.BSON;
  other.install(mongodb);
  assert.equal(driverBson.BSON, ns);
  assert.equal(other.isInstalled(mongodb), true);
  assert.equal(other.uninstall(), true);
  assertPristine();
});

test('install accepts an ESM namespace of the driver', async () => {
  const ns = await import('mongodb');
  driver.install(ns);
  assert.equal(driver.isInstalled(mongodb), true);
  driver.uninstall(ns);
  assertPristine();
});

test('install rejects what is not a loaded mongodb module', () => {
  assert.throws(() => driver.install(), /install\(require\('mongodb'\)\)/);
  assert.throws(() => driver.install({}), /could not find this mongodb module/);
  assertPristine();
});

function fakeDriver(bsonVersion, mongodbVersion) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'bson-rs-fake-'));
  const nm = path.join(root, 'node_modules');
  fs.mkdirSync(path.join(nm, 'mongodb', 'lib'), { recursive: true });
  fs.mkdirSync(path.join(nm, 'bson', 'lib'), { recursive: true });
  fs.writeFileSync(path.join(nm, 'mongodb', 'package.json'), JSON.stringify({ name: 'mongodb', version: mongodbVersion, main: 'lib/index.js' }));
  fs.writeFileSync(
    path.join(nm, 'mongodb', 'lib', 'index.js'),
    "'use strict';\nconst bson = require('bson');\nexports.BSON = bson.BSON;\nexports.MongoClient = class MongoClient {};\n"
  );
  fs.writeFileSync(path.join(nm, 'bson', 'package.json'), JSON.stringify({ name: 'bson', version: bsonVersion, main: 'lib/bson.cjs' }));
  const names = ['serialize', 'serializeWithBufferAndIndex', 'deserialize', 'deserializeStream', 'calculateObjectSize', 'setInternalBufferSize'];
  fs.writeFileSync(
    path.join(nm, 'bson', 'lib', 'bson.cjs'),
    "'use strict';\n" +
      names.map((n) => `exports.${n} = function ${n}() {};\n`).join('') +
      'exports.BSON = Object.freeze(Object.assign(Object.create(null), exports));\n'
  );
  return { root, load: () => require(path.join(nm, 'mongodb')) };
}

test('install refuses a driver on bson 6 before 6.10 with one clear error', (t) => {
  const fake = fakeDriver('6.9.1', '6.9.0');
  t.after(() => fs.rmSync(fake.root, { recursive: true, force: true }));
  const fakeMongodb = fake.load();
  const before = fakeMongodb.BSON;
  assert.throws(
    () => driver.install(fakeMongodb),
    (e) => {
      assert.equal(
        e.message.split('\n').length,
        1,
        'one line'
      );
      assert.match(e.message, /mongodb 6\.9\.0 uses bson 6\.9\.1/);
      assert.match(e.message, /bson-rs supports bson 6\.10\.x \(mongodb 6\.x, mongoose 8\.x\) and 7\.x \(mongodb 7\.x, mongoose 9\.x\) only/);
      return true;
    }
  );
  const fakeBson = require(require.resolve('bson', { paths: [path.join(fake.root, 'node_modules', 'mongodb', 'lib')] }));
  assert.equal(fakeBson.BSON, before, 'nothing was patched');
  assert.equal(driver.isInstalled(fakeMongodb), false);
});

test('install refuses bson 8 too (unknown majors are not guessed at)', (t) => {
  const fake = fakeDriver('8.0.0', '8.0.0');
  t.after(() => fs.rmSync(fake.root, { recursive: true, force: true }));
  assert.throws(() => driver.install(fake.load()), /uses bson 8\.0\.0 .*supports bson 6\.10\.x .* and 7\.x/);
});

test('mongoose plug-in: installs on first model compilation, into the driver mongoose loaded', () => {
  const mongoose = new Mongoose();
  mongoose.plugin(bsonRs);
  bsonRs.install(mongoose);
  bsonRs.uninstall();
  assertPristine();
  // Turned back on by install(); then lazily by the plug-in itself.
  bsonRs.install(mongoose);
  assert.equal(bsonRs.isInstalled(mongoose), true);
  bsonRs.uninstall();
  assertPristine();

  const m2 = new Mongoose();
  m2.plugin(bsonRs);
  m2.model('X', new m2.Schema({ a: String }));
  assert.equal(driver.isInstalled(mongodb), false, 'an uninstalled plug-in stays off');
  bsonRs.install(); // resolves mongoose from the working directory
  assert.equal(driver.isInstalled(mongodb), true);
  bsonRs.uninstall();

  // Fresh module state: the plug-in alone installs when a model is compiled.
  const file = require.resolve('../lib/mongoose');
  const saved = require.cache[file];
  delete require.cache[file];
  let fresh;
  try {
    fresh = require('../lib/mongoose');
  } finally {
    require.cache[file] = saved;
  }
  const m3 = new Mongoose();
  m3.plugin(fresh);
  assert.equal(driver.isInstalled(mongodb), false);
  m3.model('Y', new m3.Schema({ a: String, sub: new m3.Schema({ b: Number }) }));
  assert.equal(driver.isInstalled(mongodb), true);
  assert.equal(fresh.isInstalled(m3), true);
  assert.equal(m3.mongo, mongodb, 'mongoose uses this driver');
  assert.equal(fresh.uninstall(), true);
  assertPristine();
});
