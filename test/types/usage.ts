// Compiled by test/types.test.js with `tsc --noEmit`: bson-rs's types are js-bson's.
import { BSON, EJSON, ObjectId, Long, serialize, deserialize, calculateObjectSize, type Document, type SerializeOptions } from 'bson-rs';
import * as jsbson from 'bson';
import { install, uninstall, type InstallInfo } from 'bson-rs/driver';
import bsonRsPlugin = require('bson-rs/mongoose');

const opts: SerializeOptions = { checkKeys: true, ignoreUndefined: false };
const bytes: Uint8Array = serialize({ _id: new ObjectId(), n: Long.fromNumber(1) }, opts);
const doc: Document = deserialize(bytes, { promoteLongs: false });
const size: number = calculateObjectSize(doc);
const same: typeof jsbson.serialize = BSON.serialize;
const oid: jsbson.ObjectId = new ObjectId();
const text: string = EJSON.stringify(doc);
const info: InstallInfo = install({});
const off: boolean = uninstall();
bsonRsPlugin.uninstall();
export { bytes, size, same, oid, text, info, off };
