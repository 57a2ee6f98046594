'use strict';
// bson-rs/mongoose: a global Mongoose plug-in that routes the BSON codec of
// the MongoDB driver Mongoose uses through bson-rs.
//
//   mongoose.plugin(require('bson-rs/mongoose'));
//
// Mongoose applies global plug-ins to each schema when a model is compiled;
// the first call installs bson-rs into the driver (see ./driver.js), later
// calls only check a WeakSet. `require('bson-rs/mongoose').uninstall()` turns
// it off again (restores js-bson and stops the plug-in from re-installing);
// `.install()` turns it back on.
const path = require('node:path');
const fs = require('node:fs');
const driver = require('./driver');

let enabled = true;
// Mongoose instances (schema.base) or Schema classes already handled.
let seen = new WeakSet();
// Driver modules installed into by this plug-in.
const drivers = new Set();

function packageDirOf(file, name) {
  let dir = path.dirname(file);
  for (;;) {
    try {
      const json = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
      if (json && json.name === name) return dir;
    } catch {
      // keep walking up
    }
    const parent = path.dirname(dir);
    if (parent === dir) return null;
    dir = parent;
  }
}

/** The directory of the mongoose package that owns `schema` (or a mongoose instance). */
function mongooseDirOf(target) {
  const base = target && target.base ? target.base : target;
  const candidates = new Set();
  if (target && typeof target.constructor === 'function') candidates.add(target.constructor);
  if (base && typeof base === 'object') {
    candidates.add(base);
    if (typeof base.Schema === 'function') candidates.add(base.Schema);
    if (typeof base.Mongoose === 'function') candidates.add(base.Mongoose);
  }
  for (const key of Object.keys(require.cache)) {
    const entry = require.cache[key];
    if (entry && candidates.has(entry.exports)) {
      const dir = packageDirOf(entry.filename, 'mongoose');
      if (dir !== null) return dir;
    }
  }
  return null;
}

/** The mongodb driver module that the mongoose owning `target` loaded. */
function mongodbOf(target) {
  const base = target && target.base ? target.base : target;
  // What mongoose's own require('mongodb') returned (mongoose.mongo), when it exposes it.
  const exposed = base && base.mongo && typeof base.mongo.MongoClient === 'function' ? base.mongo : null;
  const dir = mongooseDirOf(target);
  if (dir !== null) {
    // Resolve as mongoose's require('mongodb') does; it is already loaded, so this is its instance.
    const resolved = require(require.resolve('mongodb', { paths: [path.join(dir, 'lib')] }));
    return exposed !== null && exposed !== resolved ? exposed : resolved;
  }
  if (exposed !== null) return exposed;
  throw new Error('bson-rs/mongoose: could not find the mongoose package (and its mongodb driver) for this schema');
}

const isKeyable = (k) => k !== null && (typeof k === 'object' || typeof k === 'function');

function installFor(target) {
  const key = (target && target.base) || (target && target.constructor) || target;
  if (isKeyable(key) && seen.has(key)) return undefined;
  const mongodb = mongodbOf(target);
  const info = driver.install(mongodb);
  drivers.add(mongodb);
  if (isKeyable(key)) seen.add(key);
  return info;
}

/** The plug-in: `mongoose.plugin(bsonRs)`. */
function bsonRs(schema) {
  if (enabled) installFor(schema);
}

/**
 * Turns the plug-in on and installs now. `mongoose` defaults to the mongoose
 * package resolvable from the current working directory. Returns the driver's
 * install() info (`native: false` there: bson-rs runs js-bson's own functions).
 */
bsonRs.install = function install(mongoose) {
  enabled = true;
  let target = mongoose;
  if (target === undefined) {
    target = require(require.resolve('mongoose', { paths: [process.cwd()] }));
  }
  seen = new WeakSet();
  return installFor(target);
};

/** Turns the plug-in off: restores js-bson in every driver it installed into. */
bsonRs.uninstall = function uninstall() {
  enabled = false;
  seen = new WeakSet();
  let restored = false;
  for (const mongodb of drivers) restored = driver.uninstall(mongodb) || restored;
  drivers.clear();
  return restored;
};

/** Whether bson-rs is installed into the driver of the given mongoose (instance or schema). */
bsonRs.isInstalled = function isInstalled(mongoose) {
  return driver.isInstalled(mongodbOf(mongoose));
};

module.exports = bsonRs;
