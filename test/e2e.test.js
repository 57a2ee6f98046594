'use strict';
// End-to-end: the real mongodb 7.x driver and mongoose 9.x (or, with
// BSON_RS_E2E_STACK=mongoose8 as test/e2e-mongoose8.test.js sets it, mongoose
// 8.x with its mongodb 6.x and bson 6.x) against a real
// wire-protocol server (mongoeco, started here), with and without bson-rs
// installed into the driver. Results must be equal (canonical form incl. class
// identity), BSON values must be instances of the driver's own bson classes,
// and every option the driver passes must give the same result in bson-rs as
// in js-bson. If the server cannot be set up, these tests FAIL (not skip),
// with one exception: on a machine without Python 3.13 (and no .venv-e2e),
// they skip with one line saying so, unless CI=true (then that fails too).
const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');

// mongoose 9 + mongodb 7 (bson 7), or the npm alias mongoose8 with the mongodb 6 (bson 6) it brings.
const MONGOOSE = process.env.BSON_RS_E2E_STACK === 'mongoose8' ? 'mongoose8' : 'mongoose';
const { Mongoose } = require(MONGOOSE);
const mongodb = require(require.resolve('mongodb', { paths: [path.dirname(require.resolve(MONGOOSE))] }));

const driver = require('../lib/driver');
const bsonRs = require('../lib/mongoose');
const { createCodec } = require('../lib/codec');
const { startServer, pythonMissing } = require('./e2e/server');
const { canonText } = require('./e2e/canon');
const workload = require('./e2e/workload');

const POSTS = Number(process.env.BSON_RS_E2E_DOCS || 2000);
const AUTHORS = 40;
const NAMES = driver.CODEC_NAMES;

// The driver's own bson copy and its pristine js-bson functions, taken before anything is installed.
const missing = process.env.CI === 'true' ? null : pythonMissing();
if (missing !== null) {
  test(`e2e tests (${MONGOOSE} + its mongodb against mongoeco)`, { skip: `${missing}; under CI=true this fails` }, () => {});
  return; // the rest of this file needs the server (a CommonJS module may return at its top level)
}

const driverBson = driver.driverBson(mongodb);
assert.equal(driver.isInstalled(mongodb), false, 'bson-rs must not be installed when the test starts');
const jsBson = Object.fromEntries(NAMES.map((n) => [n, driverBson[n]]));
const jsBsonNamespace = driverBson.BSON;

let server;
before(async () => {
  server = await startServer();
});
after(async () => {
  bsonRs.uninstall();
  driver.uninstall();
  if (server) await server.stop();
});

// ---- recording what the driver passes to the codec ---------------------------------

function optionsIndex(name) {
  switch (name) {
    case 'serializeWithBufferAndIndex':
      return 2;
    case 'deserializeStream':
      return 5;
    default:
      return 1;
  }
}

function summarize(options) {
  if (options == null || typeof options !== 'object') return String(options);
  const keys = Object.keys(options).sort();
  return keys
    .map((k) => {
      const v = options[k];
      if (k === 'index') return 'index:<n>';
      if (v !== null && typeof v === 'object') return `${k}:${JSON.stringify(v)}`;
      return `${k}:${typeof v === 'function' ? 'fn' : String(v)}`;
    })
    .join(',');
}

/** Wraps the installed functions (module exports and BSON namespace) with recorders. */
function startRecording() {
  const installed = Object.fromEntries(NAMES.map((n) => [n, driverBson[n]]));
  const installedNamespace = driverBson.BSON;
  const counts = Object.fromEntries(NAMES.map((n) => [n, 0]));
  const samples = new Map(); // signature -> [{ name, args, output }]
  const wrappers = {};
  for (const name of NAMES) {
    wrappers[name] = function recorded(...args) {
      counts[name]++;
      const result = installed[name].apply(this, args);
      const sig = `${name}(${summarize(args[optionsIndex(name)])})`;
      let list = samples.get(sig);
      if (list === undefined) samples.set(sig, (list = []));
      if (list.length < 3) {
        const copy = args.slice();
        if (name === 'deserialize' || name === 'deserializeStream') copy[0] = Buffer.from(args[0]);
        if (args[optionsIndex(name)] && typeof args[optionsIndex(name)] === 'object') {
          copy[optionsIndex(name)] = { ...args[optionsIndex(name)] };
        }
        list.push({ name, args: copy, output: name === 'serialize' ? Buffer.from(result) : result });
      }
      return result;
    };
  }
  for (const name of NAMES) driverBson[name] = wrappers[name];
  driverBson.BSON = Object.freeze(Object.assign(Object.create(null), installedNamespace, wrappers));
  return function stopRecording() {
    for (const name of NAMES) driverBson[name] = installed[name];
    driverBson.BSON = installedNamespace;
    return { counts, samples };
  };
}

// ---- the workload -----------------------------------------------------------------

const allTypes = () => ({
  _id: new mongodb.ObjectId('65a1b2c3d4e5f60718293a4b'),
  double: 1.5,
  negzero: -0,
  int: 42,
  int32: new mongodb.Int32(7),
  dbl: new mongodb.Double(3),
  big: 2 ** 53 + 2,
  str: 'héllo \u{1F600} \u0000 end',
  empty: '',
  obj: { a: 1, b: { c: [1, 'x', null] }, 'dotted.key': 1, $dollar: 2 },
  arr: [1, 2.5, 'three', [4], { five: 5 }, []],
  bin: new mongodb.Binary(Buffer.from('abc'), 0),
  binOld: new mongodb.Binary(Buffer.from('xyz'), 2),
  uuid: new mongodb.UUID('01234567-89ab-cdef-0123-456789abcdef'),
  md5: new mongodb.Binary(Buffer.alloc(16, 5), 5),
  user: new mongodb.Binary(Buffer.from([1, 2, 3]), 128),
  buf: Buffer.from([9, 8, 7]),
  u8: new Uint8Array([1, 2]),
  oid: new mongodb.ObjectId('000000000000000000000001'),
  t: true,
  f: false,
  date: new Date(1700000000000),
  predate: new Date(-1e12),
  nul: null,
  undef: undefined,
  re: /ab+c/i,
  reFlags: /x.*/ims,
  bre: new mongodb.BSONRegExp('y+', 'imx'),
  code: new mongodb.Code('function () { return 1; }'),
  codews: new mongodb.Code('f()', { a: 1, nested: { b: 'c' } }),
  fn: function answer() {
    return 42;
  },
  sym: new mongodb.BSONSymbol('sym'),
  ts: new mongodb.Timestamp({ t: 100, i: 5 }),
  long: mongodb.Long.fromString('9007199254740993'),
  small: mongodb.Long.fromNumber(5),
  negLong: mongodb.Long.fromString('-9223372036854775808'),
  bigint: 123456789012345678n,
  dec: mongodb.Decimal128.fromString('1234.5678E-10'),
  decNaN: mongodb.Decimal128.fromString('NaN'),
  min: new mongodb.MinKey(),
  max: new mongodb.MaxKey(),
  dbref: new mongodb.DBRef('coll', new mongodb.ObjectId('000000000000000000000002'), 'db', { extra: 1 }),
  map: new Map([
    ['k1', 1],
    ['k2', 'v']
  ]),
  deep: { l1: { l2: { l3: { l4: [{ l5: true }] } } } }
});

const READ_OPTIONS = [
  {},
  { promoteValues: false },
  { promoteLongs: false },
  { useBigInt64: true },
  { bsonRegExp: true },
  { promoteBuffers: true },
  { raw: true },
  { enableUtf8Validation: false },
  { fieldsAsRaw: { obj: true, arr: true } },
  { promoteValues: false, promoteBuffers: true, bsonRegExp: true }
];

/** Runs the whole workload on a fresh mongoose connection; returns comparable results. */
async function runWorkload(mongoose, label) {
  const results = {};
  const put = (key, value) => {
    results[key] = canonText(value, driverBson);
  };
  const conn = await mongoose
    .createConnection(server.uri, { dbName: `bsonrs_${label}`, autoIndex: false, autoCreate: false })
    .asPromise();
  try {
    const { Author, Post } = workload.defineModels(mongoose, conn);

    await Author.insertMany(workload.authors(AUTHORS));
    const inserted = await Post.insertMany(workload.posts(POSTS, AUTHORS, mongodb));
    put('insertMany.ids', inserted.map((d) => d._id));

    // lean read, small batches (getMore)
    const lean = await Post.find().sort({ seq: 1 }).batchSize(100).lean();
    assert.equal(lean.length, POSTS);
    put('find.lean', lean);
    assert.ok(lean[1]._id instanceof driverBson.ObjectId);
    assert.ok(lean[1].price instanceof driverBson.Decimal128);
    assert.ok(lean[1].blob instanceof driverBson.Binary);
    assert.ok(lean[1].published instanceof Date);

    // hydrated read
    const hydrated = await Post.find({ active: true }).sort({ seq: -1 }).batchSize(250);
    assert.ok(hydrated.length > 0);
    put(
      'find.hydrated',
      hydrated.map((d) => d.toObject({ flattenMaps: false }))
    );
    const h = hydrated.find((d) => d.comments.length > 0);
    assert.ok(h._id instanceof driverBson.ObjectId, 'hydrated _id is the driver ObjectId');
    assert.ok(h.author instanceof driverBson.ObjectId, 'ref is the driver ObjectId');
    assert.ok(h.price instanceof driverBson.Decimal128, 'Decimal128 is the driver class');
    assert.ok(Buffer.isBuffer(h.blob), 'Buffer path hydrates to a Buffer');
    assert.ok(h.tags instanceof Map, 'Map path hydrates to a Map');
    assert.ok(h.comments[0]._id instanceof driverBson.ObjectId);
    assert.equal(mongoose.Types.ObjectId, driverBson.ObjectId);

    // populate (a second find with $in of ObjectIds)
    const populated = await Post.find({ seq: { $lt: 60 } }).sort({ seq: 1 }).populate('author');
    assert.ok(populated[3].author && populated[3].author.name);
    put(
      'find.populate',
      populated.map((d) => d.toObject({ flattenMaps: false }))
    );

    // streaming cursor closed early (killCursors)
    const streamed = [];
    const cursor = Post.find().sort({ seq: 1 }).batchSize(50).lean().cursor();
    for await (const doc of cursor) {
      streamed.push(doc);
      if (streamed.length === 120) break;
    }
    await cursor.close();
    put('cursor.partial', streamed);

    // updates
    put('updateMany', await Post.updateMany({ seq: { $lt: 200 } }, { $inc: { views: 1 }, $set: { 'meta.rank.tier': 'bumped' } }));
    put(
      'findOneAndUpdate',
      await Post.findOneAndUpdate(
        { seq: 5 },
        {
          $push: { comments: { _id: workload.oidHex(4, 1), by: 'editor', at: new Date(1), votes: 9, flagged: false } },
          $set: { price: mongodb.Decimal128.fromString('99.99') }
        },
        { returnDocument: 'after' }
      ).lean()
    );
    const doc = await Post.findOne({ seq: 10 });
    doc.tags.set('edited', 'yes');
    doc.blob = Buffer.from('new bytes');
    doc.comments.push({ _id: workload.oidHex(4, 2), by: 'saver', at: new Date(2), votes: 1, flagged: true });
    doc.views = 12345.5;
    await doc.save();
    put(
      'bulkWrite',
      await Post.bulkWrite([
        { insertOne: { document: { ...workload.posts(1, AUTHORS, mongodb)[0], _id: workload.oidHex(5, 1), seq: POSTS + 1 } } },
        { updateOne: { filter: { seq: 150 }, update: { $set: { title: 'bulk', 'tags.bulk': 'yes' } } } },
        { updateMany: { filter: { seq: { $lt: 3 } }, update: { $set: { active: false } } } },
        { deleteOne: { filter: { seq: 151 } } }
      ])
    );
    put('afterUpdates', await Post.find({ seq: { $in: [5, 10, 150] } }).sort({ seq: 1 }).lean());

    // counts and an aggregate
    put('countDocuments', [await Post.countDocuments({ active: true }), await Post.countDocuments({ seq: { $gte: 1000 } })]);
    put(
      'aggregate',
      await Post.aggregate([
        { $match: { active: true } },
        { $group: { _id: '$author', n: { $sum: 1 }, views: { $sum: '$views' }, total: { $sum: '$price' }, last: { $max: '$published' } } },
        { $sort: { _id: 1 } }
      ])
    );
    put('deleteMany', await Post.deleteMany({ seq: { $gte: POSTS - 10 } }));
    put('countAfterDelete', await Post.countDocuments());

    // raw driver round trip of one document with every BSON type, read with each option set
    const raw = conn.db.collection('every_type');
    await raw.insertOne(allTypes(), { serializeFunctions: true });
    await raw.insertOne({ ...allTypes(), _id: 2 }, { ignoreUndefined: true, serializeFunctions: false, checkKeys: false });
    for (const options of READ_OPTIONS) {
      const found = await raw.find({}, options).sort({ _id: 1 }).toArray();
      assert.equal(found.length, 2);
      put(`raw.find ${JSON.stringify(options)}`, found);
    }
    put('raw.aggregate', await raw.aggregate([{ $project: { big: 1, dec: 1, map: 1, arr: 1 } }]).toArray());

    // what is stored, read back as documents for the cross-check
    results.stored = await conn.db.collection('posts').find({}, { sort: { seq: 1 } }).toArray();
    results.storedRaw = await raw.find({}, { sort: { _id: 1 } }).toArray();
  } finally {
    await conn.close();
  }
  return results;
}

// ---- tests ------------------------------------------------------------------------

const state = {};

test('with bson-rs: Mongoose global plug-in installs into the driver mongoose uses', async () => {
  const mongoose = new Mongoose();
  mongoose.plugin(bsonRs);
  assert.equal(driver.isInstalled(mongodb), false, 'nothing installed before a model is compiled');
  const probe = mongoose.model('Probe', new mongoose.Schema({ a: String }));
  assert.ok(probe);
  assert.equal(driver.isInstalled(mongodb), true, 'installed on first model compilation');
  assert.equal(bsonRs.isInstalled(mongoose), true);
  const codec = createCodec(driverBson);
  for (const name of NAMES) {
    assert.equal(driverBson[name], codec[name], `${name}: the driver calls bson-rs directly (options reach it unchanged)`);
    assert.equal(driverBson.BSON[name], codec[name], `BSON.${name} is bson-rs`);
  }
  assert.notEqual(driverBson.BSON, jsBsonNamespace);
  assert.equal(mongodb.BSON, driverBson.BSON, "the driver's lib/bson re-export reads the patched namespace");

  const stopRecording = startRecording();
  try {
    state.on = await runWorkload(mongoose, 'on');
  } finally {
    state.recording = stopRecording();
  }
  assert.equal(driver.isInstalled(mongodb), true);
});

test('without bson-rs: the same workload with js-bson', async () => {
  assert.ok(state.on, 'the bson-rs run completed');
  assert.equal(bsonRs.uninstall(), true, 'plug-in uninstall restores js-bson');
  assert.equal(driver.isInstalled(mongodb), false);
  for (const name of NAMES) assert.equal(driverBson[name], jsBson[name], `${name} restored`);
  assert.equal(driverBson.BSON, jsBsonNamespace, 'BSON namespace restored');

  const mongoose = new Mongoose();
  mongoose.plugin(bsonRs); // turned off: compiling models must not re-install
  state.off = await runWorkload(mongoose, 'off');
  assert.equal(driver.isInstalled(mongodb), false, 'an uninstalled plug-in stays off');
});

test('results with bson-rs equal results without it (canonical form and class identity)', () => {
  assert.ok(state.on && state.off, 'both runs completed');
  const keys = Object.keys(state.off).filter((k) => !k.startsWith('stored'));
  assert.deepEqual(Object.keys(state.on).filter((k) => !k.startsWith('stored')), keys);
  for (const key of keys) {
    assert.equal(state.on[key], state.off[key], `results differ for ${key}`);
  }
  // Everything stored by the bson-rs run equals what the js-bson run stored (both read by js-bson now).
  assert.equal(canonText(state.on.stored, driverBson), canonText(state.off.stored, driverBson), 'stored posts differ');
  assert.equal(canonText(state.on.storedRaw, driverBson), canonText(state.off.storedRaw, driverBson), 'stored raw documents differ');
});

test('every option set the driver passed gives the same result in bson-rs and js-bson', (t) => {
  assert.ok(state.recording, 'the bson-rs run was recorded');
  const { counts, samples } = state.recording;
  t.diagnostic(`codec calls: ${JSON.stringify(counts)}`);
  assert.ok(counts.serialize > 0, 'the driver serialized through bson-rs');
  assert.ok(counts.deserialize > 0, 'the driver deserialized through bson-rs');
  const codec = createCodec(driverBson);
  for (const [sig, list] of samples) {
    t.diagnostic(sig);
    for (const { name, args, output } of list) {
      const ours = codec[name](...args);
      const theirs = jsBson[name](...args);
      if (name === 'serialize') {
        assert.ok(Buffer.from(ours).equals(Buffer.from(theirs)), `${sig}: bytes differ`);
        assert.ok(output.equals(Buffer.from(theirs)), `${sig}: bytes produced during the run differ from js-bson's`);
      } else if (name === 'calculateObjectSize') {
        assert.equal(ours, theirs, sig);
      } else if (name === 'deserialize') {
        assert.equal(canonText(ours, driverBson), canonText(theirs, driverBson), sig);
      } else {
        assert.equal(canonText(ours, driverBson), canonText(theirs, driverBson), sig);
      }
    }
  }
  const optionKeys = new Set();
  for (const sig of samples.keys()) for (const m of sig.matchAll(/([A-Za-z0-9]+):/g)) optionKeys.add(m[1]);
  for (const key of ['promoteLongs', 'promoteValues', 'promoteBuffers', 'useBigInt64', 'bsonRegExp', 'raw', 'fieldsAsRaw', 'validation', 'index', 'allowObjectSmallerThanBufferSize', 'checkKeys', 'ignoreUndefined', 'serializeFunctions']) {
    assert.ok(optionKeys.has(key), `the run exercised the driver option ${key}`);
  }
});
