'use strict';
// A canonical, comparable form of decoded values: canonical Extended JSON for
// BSON values, plus the class of every value and whether that class is the
// driver's own (identity with the given bson module's export of that name).
// JS values EJSON cannot express exactly (RegExp flags such as 'g', Map,
// Buffer vs Uint8Array, -0, undefined, prototypes) get explicit tags.

function ctorName(v) {
  const c = v.constructor;
  return typeof c === 'function' ? c.name : String(c);
}

/**
 * @param value the value to describe
 * @param bson the driver's bson module: BSON values must be instances of its classes
 * @param foreign optional array collecting paths of BSON values of other classes
 */
function canon(value, bson, foreign = [], at = '$') {
  if (value === null) return null;
  switch (typeof value) {
    case 'undefined':
      return { $undefined: true };
    case 'boolean':
    case 'string':
      return value;
    case 'number':
      return { $num: Object.is(value, -0) ? '-0' : String(value) };
    case 'bigint':
      return { $bigint: String(value) };
    case 'function':
      return { $function: String(value) };
    case 'symbol':
      return { $symbol: String(value) };
    default:
      break;
  }
  if (value instanceof Date) return { $date: Number.isNaN(value.getTime()) ? 'invalid' : value.getTime() };
  if (value instanceof RegExp) return { $regex: value.source, flags: value.flags, cls: ctorName(value) };
  if (ArrayBuffer.isView(value)) {
    return { $bytes: Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('hex'), cls: ctorName(value) };
  }
  if (Array.isArray(value)) {
    const out = value.map((v, i) => canon(v, bson, foreign, `${at}[${i}]`));
    return ctorName(value) === 'Array' ? out : { $array: out, cls: ctorName(value) };
  }
  if (value instanceof Map) {
    return {
      $map: [...value].map(([k, v]) => [k, canon(v, bson, foreign, `${at}.${k}`)]),
      cls: ctorName(value)
    };
  }
  if (typeof value._bsontype === 'string') {
    const name = ctorName(value);
    const own = bson[name] !== undefined && value.constructor === bson[name];
    if (!own) foreign.push(`${at}: ${name}`);
    let ejson;
    if (value._bsontype === 'DBRef') {
      ejson = {
        $ref: value.collection,
        $id: canon(value.oid, bson, foreign, `${at}.$id`),
        $db: value.db,
        fields: canon(value.fields, bson, foreign, `${at}.fields`)
      };
    } else if (value._bsontype === 'Code') {
      ejson = { code: value.code, scope: value.scope == null ? value.scope : canon(value.scope, bson, foreign, `${at}.scope`) };
    } else {
      ejson = bson.EJSON.serialize({ v: value }, { relaxed: false }).v; // the driver's copy's EJSON
    }
    return { $bson: value._bsontype, cls: name, own, ejson };
  }
  const proto = Object.getPrototypeOf(value);
  const out = {};
  if (proto !== Object.prototype) out.$proto = proto === null ? null : ctorName(value);
  for (const key of Reflect.ownKeys(value)) {
    if (typeof key === 'symbol') continue;
    const d = Object.getOwnPropertyDescriptor(value, key);
    if (!d.enumerable) continue;
    out[key === '$proto' ? '$$proto' : key] = canon(d.value, bson, foreign, `${at}.${key}`);
  }
  return out;
}

/** JSON text of canon(value); throws if a BSON value is not of the driver's classes. */
function canonText(value, bson) {
  const foreign = [];
  const text = JSON.stringify(canon(value, bson, foreign));
  if (foreign.length > 0) {
    throw new Error(`values not of the driver's bson classes: ${foreign.slice(0, 5).join(', ')}`);
  }
  return text;
}

module.exports = { canon, canonText };
