// Compiled by test/types.test.js from an app that has bson-rs in node_modules,
// under --module commonjs (node10 resolution, which ignores `exports` and uses
// typesVersions) and under node16 and nodenext.
import driver = require('bson-rs/driver');
import bsonRsPlugin = require('bson-rs/mongoose');
import native = require('bson-rs/native');
import bson = require('bson-rs');

const info: driver.InstallInfo = driver.install({});
const onNative: boolean = info.native;
const again: driver.InstallInfo = bsonRsPlugin.install();
const loaded: boolean = native.loaded;
const binary: string | null = native.binary;
const reason: string | null = native.reason;
const bytes: Uint8Array = bson.serialize({ _id: new bson.ObjectId() });
export = { onNative, again, loaded, binary, reason, bytes };
