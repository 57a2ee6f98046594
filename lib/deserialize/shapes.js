'use strict';
// The decoder's tables mirroring the Rust reader's caches (one set per
// environment): key strings by key id, short-string value cache slots, and
// per-shape object factories. Filled by the tape's definitions section
// (DEF_KEY, DEF_SHAPE, DEF_STR) before the body is built.

// Dense arrays (never holey past their length): a sparse write would turn
// them into hash-table ("dictionary") elements, slow to read.
const keys = []; // key id -> key string
const cachedStrings = new Array(4096).fill(''); // value-cache slot -> string
const factories = []; // shape id -> (stack, base) => object
const arities = []; // shape id -> key count

const DEF_KEY = 0x30;
const DEF_SHAPE = 0x31;
// (0x32 DEF_STR: any other definition op)

const codegen = require('../shaped/codegen');

// js-bson's assignValue: never let a "__proto__" key set the prototype.
function assignValue(dest, name, value) {
  if (name === '__proto__') {
    Object.defineProperty(dest, name, { value, writable: true, enumerable: true, configurable: true });
  } else {
    dest[name] = value;
  }
}

/**
 * An empty plain object that V8 keeps in dictionary mode (an object made
 * with a null prototype starts in it, and keeps it when given
 * Object.prototype). Objects of ever-new keys are built in it: a new key
 * then costs a hash-table insert instead of a new hidden class and a
 * transition from the empty object's map, which measured 3x on 12 new keys
 * (7.4 against 22 µs). It is an ordinary object: same prototype, same
 * property order.
 */
function dictionaryObject() {
  return Object.setPrototypeOf(Object.create(null), Object.prototype);
}

function setDense(array, index, value) {
  while (array.length < index) array.push(undefined);
  array[index] = value;
}

// A shape's factory builds its first objects with a loop; its code is
// generated (`new Function`) only once it has built COMPILE_AFTER objects, so
// key sequences that recur only a few times (dynamic keys) never pay for a
// compilation.
const COMPILE_AFTER = 8;

// V8 makes an object literal of this many properties or more a dictionary-
// mode boilerplate, copied in its runtime at every call (flat_bson's 145 keys:
// 9% of its deserialize). Stores to `this` in a constructor give a fast
// object instead, its properties in-object (145 keys: 320 against 870 ns a
// call); below this size the literal is faster (100 keys: 115 against 205 ns).
const LITERAL_KEYS_MAX = 127;

/**
 * `(s, b) => ({ [names[0]]: s[b], ... })` as an object literal (a plain
 * object built by a constructor past LITERAL_KEYS_MAX keys), or null without
 * code generation.
 */
function compileFactory(names) {
  const n = names.length;
  if (n > LITERAL_KEYS_MAX && !names.includes('__proto__')) return compileConstructor(names);
  let src = 'return {';
  for (let k = 0; k < n; k++) {
    const quoted = JSON.stringify(names[k]);
    // A computed key defines an own property, even for "__proto__".
    src += (names[k] === '__proto__' ? '[' + quoted + ']' : quoted) + ':s[b' + (k === 0 ? '' : '+' + k) + '],';
  }
  src += '};';
  return codegen.compile(['s', 'b'], src);
}

/**
 * compileFactory's factory for a long key list: `new O(s, b)`, where O
 * stores each value to `this` and O.prototype is Object.prototype, so the
 * object is an ordinary one (same prototype, constructor and key order as
 * the literal's). (No `__proto__` key: a store to it would set the prototype.)
 */
function compileConstructor(names) {
  let src = 'function O(s, b) {';
  for (let k = 0; k < names.length; k++) src += 'this[' + JSON.stringify(names[k]) + '] = s[b + ' + k + '];';
  src += '}\nO.prototype = prototype;\nreturn function (s, b) { return new O(s, b); };';
  const make = codegen.compile(['prototype'], src);
  return make === null ? null : make(Object.prototype);
}

// The factory for shape `id` (stored in factories[id] by the caller).
function makeFactory(id, names) {
  const n = names.length;
  let uses = 0;
  const loop = function (s, b) {
    if (++uses === COMPILE_AFTER && codegen.available && factories[id] === loop) {
      const compiled = compileFactory(names);
      if (compiled !== null) {
        factories[id] = compiled;
        return compiled(s, b);
      }
    }
    const o = {};
    for (let k = 0; k < n; k++) assignValue(o, names[k], s[b + k]);
    return o;
  };
  return loop;
}

/** Runs the definitions section ops[pc..end) with strings S from index 0; returns the next string index. */
function runDefinitions(ops, pc, end, S) {
  let si = 0;
  while (pc < end) {
    const w = ops[pc++];
    const op = w & 0xff;
    if (op === DEF_KEY) {
      setDense(keys, w >>> 8, S[si++]);
    } else if (op !== DEF_SHAPE) {
      cachedStrings[w >>> 8] = S[si++];
    } else {
      const id = w >>> 8;
      const n = ops[pc++];
      const names = new Array(n);
      for (let k = 0; k < n; k++) names[k] = keys[ops[pc++]];
      setDense(factories, id, makeFactory(id, names));
      setDense(arities, id, n);
    }
  }
  return si;
}

module.exports = { keys, cachedStrings, factories, arities, assignValue, dictionaryObject, compileFactory, COMPILE_AFTER, runDefinitions };
