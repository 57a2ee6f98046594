'use strict';
// The layout npm creates for the documented override
//   "overrides": { "mongodb": { "bson": { ".": "npm:bson-rs@…", "bson": "~7.3.4" } } }
// node_modules/mongodb, node_modules/bson = bson-rs, node_modules/bson/node_modules/bson = js-bson.
// Built here by copying (no registry access), then checked in a child process:
// the driver loads bson-rs as its `bson`, bson-rs loads the nested js-bson (not itself),
// and values are the nested js-bson's classes.
const { test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const ROOT = path.resolve(__dirname, '..');

/** Where Node's resolution from `from` finds package `name` (without going through its exports map). */
function packageDir(name, from) {
  let dir = from;
  for (;;) {
    const candidate = path.join(dir, 'node_modules', name);
    if (fs.existsSync(path.join(candidate, 'package.json'))) return candidate;
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`${name} not found from ${from}`);
    dir = parent;
  }
}

test('npm overrides layout (bson-rs as the driver\'s bson, js-bson nested under it) works', (t) => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'bson-rs-override-'));
  t.after(() => fs.rmSync(tmp, { recursive: true, force: true }));
  const nm = path.join(tmp, 'node_modules');
  const realMongodb = fs.realpathSync(packageDir('mongodb', ROOT));

  // node_modules/mongodb (a copy, so that its require("bson") resolves inside tmp)
  fs.mkdirSync(path.join(nm, 'mongodb'), { recursive: true });
  fs.copyFileSync(path.join(realMongodb, 'package.json'), path.join(nm, 'mongodb', 'package.json'));
  fs.cpSync(path.join(realMongodb, 'lib'), path.join(nm, 'mongodb', 'lib'), { recursive: true });
  const deps = Object.keys(require(path.join(realMongodb, 'package.json')).dependencies).filter((d) => d !== 'bson');
  for (const dep of deps) {
    const target = path.join(nm, dep);
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.symlinkSync(fs.realpathSync(packageDir(dep, realMongodb)), target, 'dir');
  }

  // node_modules/bson = bson-rs (the files npm would install), with js-bson nested under it
  const bsonRs = path.join(nm, 'bson');
  fs.mkdirSync(bsonRs);
  for (const file of ['package.json', 'index.js', 'index.mjs', 'index.d.ts', 'bson_rs.node']) {
    if (fs.existsSync(path.join(ROOT, file))) fs.copyFileSync(path.join(ROOT, file), path.join(bsonRs, file));
  }
  fs.cpSync(path.join(ROOT, 'lib'), path.join(bsonRs, 'lib'), { recursive: true });
  fs.mkdirSync(path.join(bsonRs, 'node_modules'));
  fs.symlinkSync(fs.realpathSync(packageDir('bson', ROOT)), path.join(bsonRs, 'node_modules', 'bson'), 'dir');

  const script = `
    const assert = require('node:assert/strict');
    const path = require('node:path');
    const mongodb = require('mongodb');
    const bsonRsFile = require.resolve('bson', { paths: [path.join(path.dirname(require.resolve('mongodb')))] });
    assert.equal(bsonRsFile, path.join(process.cwd(), 'node_modules', 'bson', 'index.js'), 'the driver resolves bson to bson-rs');
    const bsonRs = require(bsonRsFile);
    const jsBson = require(path.join(process.cwd(), 'node_modules', 'bson', 'node_modules', 'bson'));
    assert.notEqual(bsonRs, jsBson, 'bson-rs did not load itself as bson');
    assert.equal(mongodb.BSON, bsonRs.BSON);
    assert.equal(mongodb.ObjectId, jsBson.ObjectId, 'classes are the nested js-bson classes');
    for (const name of ['serialize', 'deserialize', 'calculateObjectSize']) {
      assert.equal(mongodb.BSON[name], bsonRs[name]);
      assert.equal(typeof bsonRs[name], 'function');
    }
    const doc = { _id: new mongodb.ObjectId(), d: mongodb.Decimal128.fromString('1.5'), l: mongodb.Long.fromNumber(2 ** 40), s: 'x' };
    const bytes = mongodb.BSON.serialize(doc);
    assert.ok(Buffer.from(bytes).equals(Buffer.from(jsBson.serialize(doc))), 'same bytes as js-bson');
    const back = mongodb.BSON.deserialize(bytes, { promoteLongs: false });
    assert.ok(back._id instanceof jsBson.ObjectId && back.d instanceof jsBson.Decimal128 && back.l instanceof jsBson.Long);
    const driver = require(path.join(path.dirname(bsonRsFile), 'lib', 'driver.js'));
    const info = driver.install(mongodb);
    assert.equal(info.viaOverride, true, 'install() sees the override and patches nothing');
    assert.equal(driver.isInstalled(mongodb), true);
    assert.equal(mongodb.BSON, bsonRs.BSON);
    console.log('override layout ok');
  `;
  const r = spawnSync(process.execPath, ['-e', script], { cwd: tmp, encoding: 'utf8', timeout: 60000 });
  assert.equal(r.status, 0, `child failed:\n${r.stdout}\n${r.stderr}`);
  assert.match(r.stdout, /override layout ok/);
});
