'use strict';
// @deepkit/bson needs its own representation of a document, and (schema mode)
// a runtime type of @deepkit/type. Both are built here from a js-bson
// document's value, without deepkit's compiler plugin: the Type objects are
// constructed by hand (objectLiteral / propertySignature / array / union /
// class Date / class Uint8Array / string with the MongoId annotation, ...).
//
// convert(doc) -> { reduced, schemaValue, genericValue, type, skipped }
//   reduced      the js-bson document without the values deepkit cannot
//                represent (all libraries are timed on it, so they all get the
//                same document)
//   schemaValue  deepkit's value for schema mode: ObjectId -> 24-hex string
//                (type MongoId), Long -> bigint, Binary (subtype 0) -> Uint8Array,
//                Int32 / Double -> number
//   genericValue the same for the generic (schema-less) mode, with ObjectIds
//                wrapped by wrapObjectId() so it writes them as ObjectIds
//   type         the runtime type of schemaValue
//   skipped      { 'Decimal128': count, ... }: what was left out
const dkType = require('@deepkit/type');
const dkBson = require('@deepkit/bson');

const K = dkType.ReflectionKind;
// No deepkit representation (its BSON types are JS/TS types): these fields are left out for every library.
const UNSUPPORTED = new Set(['Decimal128', 'MinKey', 'MaxKey', 'Code', 'Timestamp', 'BSONRegExp', 'BSONSymbol', 'DBRef']);

const prim = (kind) => ({ kind });
const mongoId = () => dkType.mongoIdAnnotation.registerType({ kind: K.string }, true);
const classType = (cls) => ({ kind: K.class, classType: cls, types: [] });

function objectLiteral(props) {
  const o = { kind: K.objectLiteral, types: [] };
  for (const [name, type] of props) {
    const p = { kind: K.propertySignature, name, type, parent: o };
    type.parent = p;
    o.types.push(p);
  }
  return o;
}

/** Record<string, T>: an object literal with an index signature (for keys that differ per document). */
function record(type) {
  const o = { kind: K.objectLiteral, types: [] };
  const sig = { kind: K.indexSignature, index: { kind: K.string }, type, parent: o };
  type.parent = sig;
  o.types.push(sig);
  return o;
}

/** A stable text of a type, to tell array element types apart. */
function signature(t) {
  switch (t.kind) {
    case K.objectLiteral:
      return `{${t.types.map((p) => (p.kind === K.indexSignature ? `[s]:${signature(p.type)}` : `${JSON.stringify(p.name)}:${signature(p.type)}`)).join(',')}}`;
    case K.array:
      return `${signature(t.type)}[]`;
    case K.union:
      return `(${t.types.map(signature).join('|')})`;
    case K.class:
      return t.classType.name;
    case K.string:
      return dkType.isMongoIdType(t) ? 'MongoId' : 'string';
    default:
      return String(t.kind);
  }
}

const SKIP = Symbol('skip');

function convertValue(v, skipped) {
  switch (typeof v) {
    case 'number':
      return { reduced: v, schema: v, generic: v, type: prim(K.number) };
    case 'string':
      return { reduced: v, schema: v, generic: v, type: prim(K.string) };
    case 'boolean':
      return { reduced: v, schema: v, generic: v, type: prim(K.boolean) };
    case 'bigint':
      return { reduced: v, schema: v, generic: v, type: prim(K.bigint) };
    case 'undefined':
      return { reduced: v, schema: v, generic: v, type: prim(K.undefined) };
    case 'object':
      break;
    default:
      skipped[typeof v] = (skipped[typeof v] || 0) + 1;
      return SKIP;
  }
  if (v === null) return { reduced: null, schema: null, generic: null, type: prim(K.null) };
  const bt = v._bsontype;
  if (typeof bt === 'string') {
    if (UNSUPPORTED.has(bt) || (bt === 'Binary' && v.sub_type !== 0)) {
      const label = bt === 'Binary' ? `Binary subtype ${v.sub_type}` : bt;
      skipped[label] = (skipped[label] || 0) + 1;
      return SKIP;
    }
    switch (bt) {
      case 'ObjectId': {
        const hex = v.toHexString();
        return { reduced: v, schema: hex, generic: dkBson.wrapObjectId(hex), type: mongoId() };
      }
      case 'Long': {
        const b = BigInt(v.toString());
        return { reduced: v, schema: b, generic: b, type: prim(K.bigint) };
      }
      case 'Int32':
      case 'Double':
        return { reduced: v, schema: v.value, generic: v.value, type: prim(K.number) };
      case 'Binary': {
        const bytes = Uint8Array.prototype.slice.call(v.buffer, 0, v.position);
        return { reduced: v, schema: bytes, generic: bytes, type: classType(Uint8Array) };
      }
      default:
        skipped[bt] = (skipped[bt] || 0) + 1;
        return SKIP;
    }
  }
  if (v instanceof Date) return { reduced: v, schema: v, generic: v, type: classType(Date) };
  if (v instanceof RegExp) return { reduced: v, schema: v, generic: v, type: prim(K.regexp) };
  if (ArrayBuffer.isView(v)) return { reduced: v, schema: v, generic: v, type: classType(Uint8Array) };
  if (Array.isArray(v)) {
    const items = [];
    for (const x of v) {
      const c = convertValue(x, skipped);
      if (c !== SKIP) items.push(c);
    }
    const distinct = new Map();
    for (const c of items) if (!distinct.has(signature(c.type))) distinct.set(signature(c.type), c.type);
    const types = [...distinct.values()];
    const element = types.length === 0 ? prim(K.any) : types.length === 1 ? types[0] : { kind: K.union, types };
    return { reduced: items.map((c) => c.reduced), schema: items.map((c) => c.schema), generic: items.map((c) => c.generic), type: { kind: K.array, type: element } };
  }
  const props = [];
  const reduced = {};
  const schema = {};
  const generic = {};
  for (const key of Object.keys(v)) {
    const c = convertValue(v[key], skipped);
    if (c === SKIP) continue;
    reduced[key] = c.reduced;
    schema[key] = c.schema;
    generic[key] = c.generic;
    props.push([key, c.type]);
  }
  return { reduced, schema, generic, type: objectLiteral(props) };
}

function convert(doc) {
  const skipped = {};
  const c = convertValue(doc, skipped);
  return { reduced: c.reduced, schemaValue: c.schema, genericValue: c.generic, type: c.type, skipped };
}

/** Hand-written types for the pool documents (keys that differ per document: Record<string, number>). */
const POOL_TYPES = {
  newkeys_userid: () => record(prim(K.number)),
  newkeys_set: () => objectLiteral([['$set', record(prim(K.number))]]),
  newkeys_buckets: () =>
    objectLiteral([
      ['_id', mongoId()],
      ['sensor', prim(K.string)],
      ['m', record(prim(K.number))]
    ])
};

module.exports = { convert, POOL_TYPES, UNSUPPORTED };
