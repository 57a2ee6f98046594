'use strict';
// Shape-compiled serialize (lib/shaped/serialize.js): once a key list has
// recurred, its documents are written by generated code, from the root down
// through documents of known shapes. Everything here serializes the same key
// lists many times, so the compiled frames are the ones writing, and compares
// with js-bson: bytes, errors, getter and trap sequences. (Without code
// generation: test/shaped.test.js.)
const test = require('node:test');
const assert = require('node:assert');
const { js, rs } = require('./support/oracle');
const { Rng } = require('./support/prng');
const gen = require('./support/gen');
const { outcome, canon } = require('./support/compare');
const { traced } = require('./support/traps');
const { warmUntilCompiled, andOf50 } = require('./support/shapes');
const { testing: shapes, MAX_KEYS } = require('../lib/shaped/serialize');
const { COMPILE_AFTER, COMPILE_AFTER_BIG, BIG_DOCUMENT, FEW_KEYS, WALK_FIRST_USES, FEW_ROOTS } = require('../lib/shaped/table');

const WARM = 8; // > COMPILE_AFTER

// Each test starts from empty tables and checks that its warm-up compiled something.
test.beforeEach(() => shapes.reset());
function warmUp(make) {
  const before = shapes.compiled();
  warmUntilCompiled(make, doc => sameBytes(doc, undefined, 'warm-up'), WARM);
  assert.ok(shapes.compiled() > before, 'the warm-up compiled a frame');
}

/** serialize and serializeWithBufferAndIndex give js-bson's bytes, or its error. */
function sameBytes(doc, options, context) {
  const e = outcome(() => js.serialize(doc, options));
  const a = outcome(() => rs.serialize(doc, options));
  assert.deepStrictEqual(a, e, context);
  if (!e.ok) return;
  const into = lib => {
    const out = Buffer.alloc(e.value.length + 7);
    const end = lib.serializeWithBufferAndIndex(doc, out, { ...options, index: 3 });
    return [end, out.toString('hex')];
  };
  assert.deepStrictEqual(into(rs), into(js), `${context} (serializeWithBufferAndIndex)`);
}

const OPTION_SETS = [
  undefined,
  { checkKeys: true },
  { ignoreUndefined: false },
  { ignoreUndefined: true },
  { serializeFunctions: true },
  { checkKeys: true, serializeFunctions: true, ignoreUndefined: false }
];

test('random values under recurring key lists: same bytes and errors as js-bson', () => {
  const rng = new Rng(0x5eed12);
  for (let i = 0; i < 3000; i++) {
    const doc = {
      a: gen.randomValue(rng, js, 2),
      b: { c: gen.randomValue(rng, js, 2), d: gen.randomValue(rng, js, 1) },
      list: [gen.randomValue(rng, js, 1), { e: gen.randomValue(rng, js, 1) }],
      f: gen.randomValue(rng, js, 0)
    };
    sameBytes(doc, OPTION_SETS[i % OPTION_SETS.length], `document ${i}`);
  }
  assert.ok(shapes.compiled() > 0, 'frames were compiled');
});

/**
 * A random key-list template: leaves of `leafKinds` kinds, documents of keys
 * that `pickKey` draws (with the fields `mark` adds: a Map, a Proxy) and
 * arrays of one element template.
 */
function randomTemplate(rng, depth, leafKinds, pickKey, mark) {
  const r = rng.int(0, 9);
  if (depth === 0 || r < 4) return { leaf: rng.int(0, leafKinds - 1) };
  if (r < 8) {
    const keys = [];
    const kids = [];
    for (let i = rng.int(0, 6); i > 0; i--) {
      const key = pickKey(rng);
      if (keys.includes(key)) continue;
      keys.push(key);
      kids.push(randomTemplate(rng, depth - 1, leafKinds, pickKey, mark));
    }
    return { keys, kids, ...mark(rng) };
  }
  return { length: rng.int(0, 4), element: randomTemplate(rng, depth - 1, leafKinds, pickKey, mark) };
}

function leafValue(rng, kind) {
  if (rng.chance(0.2)) return gen.randomValue(rng, js, 1);
  switch (kind) {
    case 0: return rng.int(-5, 1e6);
    case 1: return rng.int(0, 1e9) * 1.5;
    case 2: return 'v' + rng.int(0, 100);
    case 3: return new js.ObjectId(rng.bytes(12));
    case 4: return new Date(rng.int(0, 1e12));
    case 5: return js.Long.fromNumber(rng.int(-1e9, 1e9));
    case 6: return rng.bool();
    case 7: return rng.pick([null, undefined]);
    case 8: return new js.Binary(rng.bytes(rng.int(0, 70)), rng.pick([0, 4, 0x80]));
    default: return 'x'.repeat(rng.int(0, 60)) + 'é'.repeat(rng.int(0, 1));
  }
}

function fill(rng, t) {
  if (t.leaf !== undefined) return leafValue(rng, t.leaf);
  if (t.element !== undefined) {
    const n = rng.chance(0.8) ? t.length : rng.int(0, 5);
    return Array.from({ length: n }, () => fill(rng, t.element));
  }
  if (t.map) return new Map(t.keys.map((k, i) => [k, fill(rng, t.kids[i])]));
  const o = {};
  t.keys.forEach((k, i) => Object.defineProperty(o, k, { value: fill(rng, t.kids[i]), enumerable: true, writable: true, configurable: true }));
  if (rng.chance(0.02)) o.extra = leafValue(rng, rng.int(0, 9));
  return o;
}

// Random key lists that recur (templates), each filled with new values on
// every use: values mostly of one kind per position, so that positions are
// learned and compiled, and now and then anything gen.randomValue makes, so
// that compiled frames hand over; some documents gain a key (a new list).
test('random key lists that recur, filled with random values: bytes, errors, sizes and values as js-bson', () => {
  const rng = new Rng(0x7e3a11);
  const templates = [];
  for (let i = 0; i < 24; i++) {
    const t = randomTemplate(rng, 4, 10, gen.randomKey, r => ({ map: r.chance(0.1) }));
    // a root document: its own first key, then the template's keys, or the template under one key
    templates.push(t.keys !== undefined && !t.map ? { keys: [`t${i}`, ...t.keys], kids: [{ leaf: 0 }, ...t.kids] } : { keys: [`t${i}`, 'body'], kids: [{ leaf: 0 }, t] });
  }
  for (let i = 0; i < 6000; i++) {
    const doc = fill(rng, templates[rng.chance(0.7) ? rng.int(0, 5) : rng.int(0, templates.length - 1)]);
    const options = OPTION_SETS[rng.int(0, OPTION_SETS.length - 1)];
    sameBytes(doc, options, `document ${i}`);
    assert.deepStrictEqual(outcome(() => rs.calculateObjectSize(doc, options)), outcome(() => js.calculateObjectSize(doc, options)), `document ${i} (calculateObjectSize)`);
    const bytes = outcome(() => js.serialize(doc, options));
    if (bytes.ok) assert.deepStrictEqual(canon(rs.deserialize(bytes.value)), canon(js.deserialize(bytes.value)), `document ${i} (deserialize)`);
  }
  assert.ok(shapes.compiled() >= 10, `frames were compiled (${shapes.compiled()})`);
});

// Recurring key lists whose values have side effects: getters that log,
// delete a key of their object or add one, toBSON methods (own and of a
// class), Proxies that log their traps. Each library gets its own copy of a
// document, built twice from one seed; the results and the logs must match.
// (calculateObjectSize's logs leave out its `_bsontype` reads: README,
// Differences from js-bson.)
class WithToBSON {
  constructor(v) {
    this.v = v;
  }
  toBSON() {
    return { wrapped: this.v };
  }
}

/** A document of template `t` from `rng`; what its getters, toBSON methods and Proxies do goes to `log`. */
function hostileDocument(rng, t, log) {
  if (t.leaf !== undefined) {
    switch (t.leaf) {
      case 0: return rng.int(-5, 1e6);
      case 1: return 's' + rng.int(0, 9);
      case 2: return new js.ObjectId(rng.bytes(12));
      case 3: return new Date(rng.int(0, 1e12));
      case 4: return rng.pick([null, undefined, true]);
      case 5: return new WithToBSON(rng.int(0, 9));
      case 6: return js.Long.fromNumber(rng.int(-1e9, 1e9));
      case 7: return { toBSON: () => (log.push('toBSON'), 'tb') };
      case 8: return { getter: 'log', value: rng.int(0, 99) };
      case 9: return { getter: 'delete', key: rng.pick(['a', 'b', 'c', 'x']) };
      case 10: return { getter: 'add', key: rng.pick(['a', 'late', 'x']) };
      default: return gen.randomValue(rng, js, 1);
    }
  }
  if (t.element !== undefined) {
    const n = rng.chance(0.8) ? t.length : rng.int(0, 5);
    return Array.from({ length: n }, () => hostileDocument(rng, t.element, log));
  }
  const o = {};
  t.keys.forEach((k, i) => {
    const v = hostileDocument(rng, t.kids[i], log);
    if (v === null || typeof v !== 'object' || typeof v.getter !== 'string') o[k] = v;
    else if (v.getter === 'log') Object.defineProperty(o, k, { get: () => (log.push(`get ${k}`), v.value), enumerable: true, configurable: true });
    else if (v.getter === 'delete') Object.defineProperty(o, k, { get: () => (log.push(`delete ${v.key}`), delete o[v.key], 1), enumerable: true, configurable: true });
    else Object.defineProperty(o, k, { get: () => (log.push(`add ${v.key}`), (o[v.key] = 'added'), 2), enumerable: true, configurable: true });
  });
  if (!t.proxy) return o;
  return new Proxy(o, {
    get: (target, p, r) => (log.push(`get ${String(p)}`), Reflect.get(target, p, r)),
    has: (target, p) => (log.push(`has ${String(p)}`), Reflect.has(target, p)),
    ownKeys: target => (log.push('ownKeys'), Reflect.ownKeys(target)),
    getPrototypeOf: target => (log.push('getPrototypeOf'), Reflect.getPrototypeOf(target)),
    getOwnPropertyDescriptor: (target, p) => (log.push(`descriptor ${String(p)}`), Reflect.getOwnPropertyDescriptor(target, p))
  });
}

test('recurring key lists with getters that log, delete and add keys, toBSON methods and Proxies: results and logs as js-bson', () => {
  const rng = new Rng(0x40571e);
  const templates = [];
  const pickKey = r => r.pick(['a', 'b', 'c', '_id', 'name', 'x', 'y', 'n']);
  for (let i = 0; i < 24; i++) {
    const body = randomTemplate(rng, 3, 12, pickKey, r => ({ proxy: r.chance(0.1) }));
    templates.push({ keys: [`t${i}`, 'body'], kids: [{ leaf: 0 }, body], proxy: rng.chance(0.2) });
  }
  // the frequent templates' roots compiled first: among 24 root key lists, a root is walked
  // for its first WALK_FIRST_USES uses (table.js FEW_ROOTS), by serialize and calculateObjectSize
  for (let k = 0; k < WALK_FIRST_USES + COMPILE_AFTER; k++) {
    for (const t of templates.slice(0, 5)) {
      const doc = hostileDocument(new Rng(k), t, []);
      outcome(() => rs.serialize(doc));
      outcome(() => rs.calculateObjectSize(doc));
    }
  }
  for (let i = 0; i < 4000; i++) {
    const t = templates[rng.chance(0.7) ? rng.int(0, 5) : rng.int(0, templates.length - 1)];
    const seed = rng.int(0, 2 ** 30);
    const options = OPTION_SETS[rng.int(0, OPTION_SETS.length - 1)];
    const op = rng.chance(0.5) ? 'serialize' : 'calculateObjectSize';
    const run = lib => {
      const log = [];
      const doc = hostileDocument(new Rng(seed), t, log);
      log.length = 0; // (what building it logged)
      const result = outcome(() => lib[op](doc, options));
      return { result, log: op === 'serialize' ? log : log.filter(entry => entry !== 'get _bsontype') };
    };
    assert.deepStrictEqual(run(rs), run(js), `document ${i} (${op})`);
  }
  assert.ok(shapes.compiled() >= 10, `frames were compiled (${shapes.compiled()})`);
});

test('a learned position that later holds something else', () => {
  const { ObjectId, Long, Timestamp, Binary, Code, DBRef, Decimal128, MinKey, MaxKey, BSONRegExp, BSONSymbol, Int32, Double } = js;
  const others = [
    { a: 1, b: 2 },
    {},
    { b: 1, a: 2 },
    [1, 2, { a: 1 }],
    new Map([['a', 1]]),
    { toBSON: () => ({ a: 'replaced' }) },
    { toBSON: () => 5 },
    new Date(3),
    new ObjectId('65494a394033a116319ce2da'),
    Long.fromNumber(5),
    new Timestamp({ t: 1, i: 2 }),
    new Binary(Buffer.from('xyz'), 2),
    new Code('f', { a: 1 }),
    new Code('g'),
    new DBRef('c', new ObjectId('65494a394033a116319ce2da'), 'db', { a: 1 }),
    Decimal128.fromString('1.5'),
    new MinKey(),
    new MaxKey(),
    new BSONRegExp('p', 'i'),
    new BSONSymbol('s'),
    new Int32(4),
    new Double(2.5),
    /re/g,
    Buffer.from('ab'),
    new Uint16Array(3),
    new ArrayBuffer(5),
    Object.assign(Object.create(null), { a: 1 }),
    { _bsontype: 'ObjectId' },
    { _bsontype: 'Unknown', [Symbol.for('@@mdb.bson.version')]: 7 },
    { _bsontype: 'Unknown' },
    { a: 1, [Symbol.toStringTag]: 'Date' },
    'a string',
    'ünïcödé',
    'x'.repeat(300),
    -0,
    2 ** 40,
    NaN,
    undefined,
    null,
    true,
    () => 1,
    Symbol('s'),
    12n
  ];
  for (const other of others) {
    shapes.reset();
    warmUp(i => ({ x: { a: i }, y: [{ a: i }], z: 'z' }));
    const name = String(other?.constructor?.name ?? typeof other);
    for (const options of OPTION_SETS) {
      sameBytes({ x: other, y: [other], z: 'z' }, options, name);
      sameBytes({ x: { a: other }, y: [{ a: other }], z: other }, options, name);
    }
  }
});

test('keys with a flag at compiled positions: js-bson errors under checkKeys, bytes without', () => {
  for (const key of ['$set', 'a.b', 'nul\x00', '$db', '$ref']) {
    shapes.reset();
    const make = i => ({ n: i, [key]: { v: i }, s: 's', inner: { [key]: i } });
    for (let i = 0; i < WARM; i++) sameBytes(make(i), undefined, `${JSON.stringify(key)} warm-up`);
    for (const options of OPTION_SETS) sameBytes(make(1), options, JSON.stringify(key));
  }
  assert.ok(shapes.compiled() > 0, 'frames were compiled');
});

test('key lists that come once a call are compiled COMPILES_PER_WINDOW a window: the 50 of an $and', () => {
  for (let i = 0; i < WARM; i++) sameBytes(andOf50(i), undefined, 'first window');
  const first = shapes.compiled();
  // (and { $gte, $lt }, which comes 50 times a call: compiled when due)
  assert.ok(first > 0 && first <= shapes.COMPILES_PER_WINDOW + 1 && first < 50, `${first} compiled in the first window`);
  for (let i = WARM; i < 16 * shapes.COMPILE_WINDOW; i++) sameBytes(andOf50(i), undefined, 'later windows');
  assert.ok(shapes.compiled() >= 50, `${shapes.compiled()} compiled after 16 windows`);
});

test('Proxies of a learned shape: same bytes and the same trap sequence as js-bson', () => {
  const make = (log, wrap) => {
    const inner = { d: 'x', e: new Date(1), f: new js.ObjectId('65494a394033a116319ce2da'), g: js.Long.fromNumber(3) };
    const withToBSON = { toBSON: () => ({ z: 1 }) };
    const element = { k: 'in an array', m: [1] };
    const mid = {
      a: 1,
      b: [1, 2, wrap ? traced(element, log) : element],
      c: wrap ? traced(inner, log) : inner,
      h: true,
      t: wrap ? traced(withToBSON, log) : withToBSON
    };
    return { p: wrap ? traced(mid, log) : mid, q: { d: 'x', e: new Date(1), f: null, g: undefined } };
  };
  warmUp(() => make([], false));
  for (const options of OPTION_SETS) {
    const jsLog = [];
    const rsLog = [];
    const e = outcome(() => js.serialize(make(jsLog, true), options));
    const a = outcome(() => rs.serialize(make(rsLog, true), options));
    assert.deepStrictEqual(a, e);
    assert.ok(rsLog.length > 10, 'the proxies were read');
    assert.deepStrictEqual(rsLog, jsLog, JSON.stringify(options));
  }
  // a Proxy whose every value is a BSON type (the tag reads)
  const tagged = log =>
    traced(
      {
        o: new js.ObjectId('65494a394033a116319ce2da'),
        d: js.Decimal128.fromString('2'),
        i: new js.Int32(1),
        c: new js.Code('f', { s: 1 }),
        r: new js.DBRef('c', 1)
      },
      log
    );
  warmUp(() => tagged([]));
  const jsLog = [];
  const rsLog = [];
  assert.deepStrictEqual(outcome(() => rs.serialize(tagged(rsLog))), outcome(() => js.serialize(tagged(jsLog))));
  assert.deepStrictEqual(rsLog, jsLog, 'tagged values');
});

test('getters run in js-bson order through compiled frames', () => {
  const make = log => {
    const leaf = n => ({
      get v() {
        log.push('v' + n);
        return n;
      },
      get w() {
        log.push('w' + n);
        return { u: n, t: { toBSON: () => (log.push('toBSON' + n), 'T') } };
      }
    });
    return { a: leaf(1), b: [leaf(2), leaf(3)], c: { d: leaf(4), e: leaf(5) } };
  };
  for (let i = 0; i < WARM; i++) {
    const jsLog = [];
    const rsLog = [];
    assert.strictEqual(rs.serialize(make(rsLog)).toString('hex'), js.serialize(make(jsLog)).toString('hex'));
    assert.deepStrictEqual(rsLog, jsLog, `call ${i}`);
  }
  assert.ok(shapes.compiled() > 0, 'frames were compiled');
});

test('a key list too long to compile is written by the walk, beside compiled frames', () => {
  const make = log => {
    const leaf = n => ({
      get v() {
        log.push('v' + n);
        return n;
      },
      w: { u: n }
    });
    const big = {};
    for (let i = 0; i <= MAX_KEYS; i++) big['k' + i] = [leaf(i), [leaf(i), 'x'], 's' + i, i * 0.5][i % 4];
    big.code = new js.Code('f', { s: leaf(-1) });
    return big;
  };
  warmUp(() => ({ a: { b: 1 }, big: {} }));
  for (let i = 0; i < WARM; i++) {
    const jsLog = [];
    const rsLog = [];
    const wrap = big => ({ a: { b: 1 }, big });
    assert.strictEqual(rs.serialize(wrap(make(rsLog))).toString('hex'), js.serialize(wrap(make(jsLog))).toString('hex'));
    assert.ok(jsLog.length > MAX_KEYS / 2, 'the getters ran');
    assert.deepStrictEqual(rsLog, jsLog, `call ${i}`);
  }
});

test('cycles are found through compiled frames, after the getters js-bson runs first', () => {
  warmUp(() => ({ a: { b: { c: 1 } }, s: 's' }));
  const root = { a: { b: { c: 1 } }, s: 's' };
  root.a.b.c = root;
  sameBytes(root, undefined, 'cycle to the root');
  const again = { a: { b: { c: 1 } }, s: 's' };
  again.a.b.c = again.a;
  sameBytes(again, undefined, 'cycle to a parent');
  const shared = { c: 1 };
  sameBytes({ a: { b: shared }, s: { b: shared } }, undefined, 'a shared object is not a cycle');
  const scoped = { a: { b: { c: 1 } }, s: 's' };
  scoped.a.b.c = new js.Code('f', scoped);
  sameBytes(scoped, undefined, 'cycle through a Code scope');
  const listed = { a: { b: { c: 1 } }, s: 's' };
  listed.a.b.c = [1, listed];
  sameBytes(listed, undefined, 'cycle through an array');

  const make = log => {
    // (s comes first: a walk that missed the cycle would read it again)
    const cyclic = { s: 's', a: { b: { c: 1 } } };
    Object.defineProperty(cyclic, 's', {
      enumerable: true,
      get() {
        log.push('s');
        return 's';
      }
    });
    cyclic.a.b.c = cyclic;
    return cyclic;
  };
  warmUp(() => ({ s: 's', a: { b: { c: 1 } } }));
  const jsLog = [];
  const rsLog = [];
  const e = outcome(() => js.serialize(make(jsLog)));
  assert.strictEqual(e.ok, false);
  assert.deepStrictEqual(outcome(() => rs.serialize(make(rsLog))), e);
  assert.deepStrictEqual(rsLog, jsLog);
});

test('toBSON on the primitive prototypes is called at compiled positions too', () => {
  const doc = () => ({ n: 1.5, i: 3, s: 'str', b: true, list: [1, 'x', false], sub: { n: 2, s: 't' } });
  warmUp(doc);
  const replacements = [
    [Number.prototype, v => 'n' + v],
    [String.prototype, v => v.length],
    [Boolean.prototype, () => null]
  ];
  for (const [proto, replace] of replacements) {
    proto.toBSON = function () {
      return replace(this.valueOf());
    };
    try {
      sameBytes(doc(), undefined, proto.constructor.name);
    } finally {
      delete proto.toBSON;
    }
  }
  sameBytes(doc(), undefined, 'after');
});

test('nesting past the compiled depth, in one repeated shape, with and without a cycle', () => {
  // (i, a getter, comes before n: a walk that missed the cycle would read more of them)
  // (every third level holds its child in an array: documents in arrays are compiled frames too)
  const chain = (depth, log) => {
    let doc = { leaf: true };
    const bottom = doc;
    for (let i = 0; i < depth; i++) {
      const next = doc;
      doc = {
        get i() {
          log.push(i);
          return i;
        },
        n: i % 3 === 2 ? [next] : next
      };
    }
    return { doc, bottom };
  };
  const down = (doc, levels) => {
    for (let i = 0; i < levels; i++) doc = Array.isArray(doc.n) ? doc.n[0] : doc.n;
    return doc;
  };
  const sameReads = (build, context) => {
    const jsLog = [];
    const rsLog = [];
    const e = outcome(() => js.serialize(build(jsLog)));
    assert.deepStrictEqual(outcome(() => rs.serialize(build(rsLog))), e, context);
    assert.deepStrictEqual(rsLog, jsLog, context);
  };
  for (const depth of [60, 61, 62, 63, 64, 65, 66, 70, 500]) {
    shapes.reset();
    warmUp(() => chain(depth, []).doc);
    sameReads(log => chain(depth, log).doc, `depth ${depth}`);
    // (62..65: around where compiled frames hand over to the walk and the path becomes a Set)
    for (const to of [0, 1, 62, 63, 64, 65, depth - 3].filter(d => d < depth)) {
      sameReads(log => {
        const { doc, bottom } = chain(depth, log);
        bottom.leaf = down(doc, to);
        return doc;
      }, `cycle to depth ${to} at depth ${depth}`);
    }
  }
});

test('the tape grows in the middle of a compiled frame', () => {
  // a huge document first: the tape grows, then shrinks back after the call
  sameBytes({ big: Array.from({ length: 200000 }, (_, i) => 'x'.repeat(i % 30)) }, undefined, 'huge');
  // 24,000 elements, a third of them 40-byte strings: more than a fresh tape holds
  const level = (n, make) => {
    const o = {};
    for (let k = 0; k < n; k++) o['f' + k] = make(k);
    return o;
  };
  const make = i =>
    level(20, () => level(20, () => level(60, k => (k % 3 === 0 ? 'v'.repeat(39) + (i % 10) : k % 3 === 1 ? k * 1.5 : new Date(k)))));
  warmUp(make);
  sameBytes({ big: Array.from({ length: 200000 }, (_, i) => i) }, undefined, 'huge again');
  sameBytes(make(9), undefined, 'after the shrink');
});

test('serialize from a toBSON or getter inside a compiled frame (re-entrancy)', () => {
  const make = () => ({
    a: 1,
    inner: {
      get b() {
        return rs.serialize({ a: 2, inner: { b: 3, c: 'c' } }).length;
      },
      c: { toBSON: () => rs.serialize({ x: 1 }).toString('hex') }
    }
  });
  const expected = () => ({
    a: 1,
    inner: { b: js.serialize({ a: 2, inner: { b: 3, c: 'c' } }).length, c: js.serialize({ x: 1 }).toString('hex') }
  });
  for (let i = 0; i < WARM; i++) {
    assert.strictEqual(rs.serialize(make()).toString('hex'), js.serialize(expected()).toString('hex'), `call ${i}`);
  }
  assert.ok(shapes.compiled() > 0, 'frames were compiled');
});

test('ever-new key lists leave the table bounded; a recurring list is still compiled', () => {
  for (let i = 0; i < 5000; i++) {
    const doc = { ['k' + i]: i, ['m' + i]: { x: i } };
    for (let r = 0; r < 5; r++) assert.strictEqual(rs.serialize(doc).toString('hex'), js.serialize(doc).toString('hex'));
  }
  assert.ok(shapes.nodes() <= shapes.MAX_NODES * shapes.tables(), `${shapes.nodes()} nodes`);
  assert.ok(shapes.compiled() <= shapes.MAX_COMPILED * shapes.tables(), `${shapes.compiled()} compiled`);
  for (let i = 0; i < 3000; i++) sameBytes({ ['u' + i]: i }, undefined, 'new keys');
  const before = shapes.compiled();
  for (let i = 0; i < shapes.COLD_CALLS + 2000; i++) {
    const doc = { recurring: i, again: { x: i } };
    assert.strictEqual(rs.serialize(doc).toString('hex'), js.serialize(doc).toString('hex'));
  }
  assert.ok(shapes.compiled() > before, 'a recurring key list is compiled after a cold spell');
});

test('ever-new key lists at one position: the position goes to the walk, the rest stays compiled', () => {
  for (let i = 0; i < 3000; i++) {
    const doc = { _id: i, sensor: 'cpu', m: { ['k' + i]: i, ['t' + i]: { x: i } } };
    assert.strictEqual(rs.serialize(doc).toString('hex'), js.serialize(doc).toString('hex'), `document ${i}`);
  }
  assert.strictEqual(shapes.coldTables(), 0, 'the table stays warm');
  assert.ok(shapes.compiled() > 0, 'the recurring root is compiled');
  assert.ok(shapes.nodes() <= shapes.MAX_SLOT_MISSES + 8, `${shapes.nodes()} nodes`);
});

test("a position of ever-new key lists reads its objects' toBSON and _bsontype through Reflect.get: js-bson's bytes, getter calls and trap sequence", () => {
  // (its objects have hidden classes V8 has not seen: shaped/serialize.js FRESH_READS)
  let n = 0;
  const fresh = (i = n++) => ({ ['k' + i]: i, ['t' + i]: 'x' });
  for (let i = 0; i < 40; i++) sameBytes({ _id: i, m: fresh() }, undefined, `document ${i}`);
  assert.strictEqual(shapes.freshPositions(), 1, 'the position of m is marked');
  // a Proxy with new keys: the same traps, in the same order
  for (const options of OPTION_SETS) {
    const jsLog = [];
    const rsLog = [];
    const i = n++;
    const e = outcome(() => js.serialize({ _id: 1, m: traced(fresh(i), jsLog) }, options));
    const a = outcome(() => rs.serialize({ _id: 1, m: traced(fresh(i), rsLog) }, options));
    assert.deepStrictEqual(a, e);
    assert.ok(rsLog.some(([op, k]) => op === 'get' && k === 'toBSON'), 'toBSON was read through the trap');
    assert.deepStrictEqual(rsLog, jsLog, JSON.stringify(options));
  }
  // getters of toBSON and _bsontype: called as often as by js-bson, with the object as `this`
  const withGetters = (calls, i = n++) => {
    const o = fresh(i);
    Object.defineProperty(o, 'toBSON', { get() { calls.push(['toBSON', this === o]); return undefined; } });
    Object.defineProperty(o, '_bsontype', { get() { calls.push(['_bsontype', this === o]); return undefined; } });
    return { _id: 2, m: o };
  };
  const jsCalls = [];
  const rsCalls = [];
  sameBytes(withGetters([]), undefined, 'getters');
  const i = n++;
  assert.deepStrictEqual(rs.serialize(withGetters(rsCalls, i)), js.serialize(withGetters(jsCalls, i)));
  assert.ok(rsCalls.length > 0);
  assert.deepStrictEqual(rsCalls, jsCalls);
  // a toBSON method, a BSON value, a Date, a key list that recurs after all
  sameBytes({ _id: 3, m: { ...fresh(), toBSON: () => ({ replaced: true }) } }, undefined, 'toBSON');
  sameBytes({ _id: 4, m: new js.ObjectId('65494a394033a116319ce2da') }, undefined, 'ObjectId');
  sameBytes({ _id: 5, m: new Date(5) }, undefined, 'Date');
  for (let i = 0; i < 10; i++) sameBytes({ _id: 6, m: { same: i } }, undefined, 'recurring');
});

test('a first document of many key lists that recur (an aggregate command) keeps the tables warm', () => {
  // (its 30-odd key lists all came new in the first window of look-ups:
  // judged as they came, they sent the tables cold for 65,536 calls)
  const lsid = { id: new js.UUID('00112233-4455-6677-8899-aabbccddeeff') };
  const command = () => ({
    aggregate: 'orders',
    pipeline: [
      { $match: { status: { $in: ['paid', 'shipped'] }, createdAt: { $gte: new Date(1700000000000) } } },
      { $unwind: '$items' },
      { $group: { _id: '$items.sku', qty: { $sum: '$items.qty' }, revenue: { $sum: { $multiply: ['$items.qty', '$items.price'] } } } },
      { $sort: { revenue: -1 } },
      { $lookup: { from: 'skus', localField: '_id', foreignField: 'sku', as: 'sku' } },
      { $unwind: { path: '$sku', preserveNullAndEmptyArrays: true } },
      { $addFields: { name: { $ifNull: ['$sku.name', 'unknown'] }, margin: { $subtract: ['$revenue', { $multiply: ['$qty', '$sku.cost'] }] } } },
      { $project: { _id: 0, sku: '$_id', name: 1, qty: 1, revenue: { $round: ['$revenue', 2] }, margin: 1 } },
      { $facet: { top: [{ $limit: 3 }], count: [{ $count: 'n' }] } },
      { $limit: 10 }
    ],
    cursor: {},
    lsid,
    $db: 'shop'
  });
  for (let i = 0; i < 300; i++) {
    const doc = command();
    assert.deepStrictEqual(outcome(() => rs.serialize(doc)), outcome(() => js.serialize(doc)), `serialize ${i}`);
    assert.strictEqual(rs.calculateObjectSize(doc), js.calculateObjectSize(doc), `calculateObjectSize ${i}`);
  }
  assert.strictEqual(shapes.coldTables(), 0, 'no table went cold');
  assert.ok(shapes.compiled() >= 20, `${shapes.compiled()} key lists compiled`);
});

test("roots of ever-new key lists (a cold table) read toBSON through Reflect.get: js-bson's bytes, getter calls and trap sequence", () => {
  let n = 0;
  // (each serialized once: sameBytes' second write of the same object would be a key list that comes again)
  for (let i = 0; i < 200; i++) {
    const doc = { ['u' + n++]: i };
    assert.deepStrictEqual(outcome(() => rs.serialize(doc)), outcome(() => js.serialize(doc)), `root ${i}`);
  }
  assert.strictEqual(shapes.coldTables(), 1, 'the table went cold');
  for (const options of OPTION_SETS) {
    const i = n++;
    const jsLog = [];
    const rsLog = [];
    const e = outcome(() => js.serialize(traced({ ['u' + i]: i, m: { ['v' + i]: 1 } }, jsLog), options));
    const a = outcome(() => rs.serialize(traced({ ['u' + i]: i, m: { ['v' + i]: 1 } }, rsLog), options));
    assert.deepStrictEqual(a, e);
    assert.ok(rsLog.some(([op, k]) => op === 'get' && k === 'toBSON'), 'toBSON was read through the trap');
    assert.deepStrictEqual(rsLog, jsLog, JSON.stringify(options));
  }
  const withGetter = (calls, i) => {
    const o = { ['u' + i]: i };
    Object.defineProperty(o, 'toBSON', { get() { calls.push(this === o); return i % 2 ? undefined : () => ({ replaced: i }); } });
    return o;
  };
  for (const i of [n++, n++]) {
    const jsCalls = [];
    const rsCalls = [];
    assert.deepStrictEqual(rs.serialize(withGetter(rsCalls, i)), js.serialize(withGetter(jsCalls, i)));
    assert.deepStrictEqual(rsCalls, jsCalls);
    assert.ok(rsCalls.length > 0 && rsCalls.every(Boolean));
  }
});

test('documents of one key list whose objects each have a map of their own (spread, then a property added): js-bson bytes through the compiled frame', () => {
  // ({ ...base, extra }) gives every object a hidden class of its own, so the
  // compiled frame's property reads see thousands of maps (megamorphic); its
  // reads are keyed, by the key list, and must still read each document's own values
  const base = (i) => ({ _id: new js.ObjectId(), n: i, title: 'post ' + i + ' ✓', at: new Date(1700000000000 + i), tags: ['a', 'b' + i], meta: { i, even: i % 2 === 0 } });
  const docs = Array.from({ length: 3000 }, (_, i) => ({ ...base(i), n: i * 3, __v: i % 7 }));
  for (let round = 0; round < 2; round++) {
    for (let i = 0; i < docs.length; i += round === 0 ? 1 : 97) sameBytes(docs[i], undefined, `doc ${i}`);
  }
});

test("the last root's compiled root tries every root first: js-bson's checks, errors and trap sequence", () => {
  // Once { a, b } is a root, the next root goes to its compiled root (walk.js
  // walkDocument), whatever that root is; each root below follows one of { a, b }.
  const learned = () => ({ a: 1, b: 'x' });
  warmUp(learned);
  class Tagged {
    get _bsontype() {
      return 'Nope';
    }
  }
  const roots = [
    () => ({ a: 2, b: 'y' }), // the same keys: the compiled root writes it
    () => ({ b: 'y', a: 2 }), // other keys: the walk, from the keys as read
    () => ({ a: 2 }),
    () => ({ a: 1, b: 'x', toBSON: () => ({ z: 1 }) }),
    () => ({ toBSON: () => 5 }),
    () => new Map([['a', 1], ['b', 'x']]),
    () => ({ a: 1, b: 'x', _bsontype: 'Long' }),
    () => ({ a: 1, b: 'x', _bsontype: 5 }),
    () => new Tagged(),
    () => new Date(1),
    () => /x/,
    () => new Uint8Array(2),
    () => new ArrayBuffer(2),
    () => ({ a: 1, b: 'x', [Symbol.toStringTag]: 'ArrayBuffer' }),
    () => ({ a: 1, b: 'x', [Symbol.toStringTag]: 'Map', entries: () => new Map([['m', 1]]).entries() }),
    () => [1, 2],
    () => 'text',
    () => 5
  ];
  const hits = shapes.rootHits();
  for (const [i, make] of roots.entries()) {
    for (const options of [undefined, { checkKeys: true }]) {
      sameBytes(learned(), undefined, 'the learned root again');
      sameBytes(make(), options, `root ${i}`);
      const value = make();
      if (typeof value !== 'object') continue;
      sameBytes(learned(), undefined, 'the learned root again');
      const jsLog = [];
      const rsLog = [];
      const e = outcome(() => js.serialize(traced(make(), jsLog, { proto: true }), options));
      const a = outcome(() => rs.serialize(traced(make(), rsLog, { proto: true }), options));
      assert.deepStrictEqual(a, e, `root ${i} behind a Proxy`);
      assert.ok(rsLog.length > 0 || Array.isArray(value), 'the proxy was read');
      assert.deepStrictEqual(rsLog, jsLog, `root ${i}: trap sequence`);
    }
  }
  assert.ok(shapes.rootHits() > hits + roots.length, 'roots went through the compiled root');
});

test('a learned position tries its last key list\'s compiled enter first: js-bson\'s bytes, errors and trap sequence', () => {
  // x's last document was { a, b }: whatever comes at x next goes through
  // that node's compiled enter (shaped/serialize.js enterSource) first.
  const learned = () => ({ x: { a: 1, b: 's' }, z: 1 });
  const atX = [
    () => ({ a: 2, b: 't' }), // the same keys: the compiled enter writes it
    () => ({ b: 't', a: 2 }), // other keys: enterKeyed, from the keys as read
    () => ({}),
    () => [1, { a: 1, b: 's' }],
    () => new Map([['a', 1]]),
    () => ({ a: 1, b: 's', [Symbol.toStringTag]: 'Map', entries: () => new Map([['m', 1]]).entries() }),
    () => ({ a: 1, b: 's', toBSON: () => ({ a: 3, b: 'u' }) }),
    () => ({ toBSON: () => 5 }),
    () => new Date(1),
    () => /re/,
    () => Buffer.from('ab'),
    () => ({ a: 1, b: 's', [Symbol.toStringTag]: 'Date' })
  ];
  warmUp(learned);
  for (const [i, make] of atX.entries()) {
    for (const options of [undefined, { checkKeys: true, ignoreUndefined: false }]) {
      sameBytes(learned(), undefined, 'the learned document again');
      sameBytes({ x: make(), z: 1 }, options, `value ${i}`);
      sameBytes(learned(), undefined, 'the learned document again');
      const jsLog = [];
      const rsLog = [];
      const e = outcome(() => js.serialize({ x: traced(make(), jsLog, { proto: true }), z: 1 }, options));
      const a = outcome(() => rs.serialize({ x: traced(make(), rsLog, { proto: true }), z: 1 }, options));
      assert.deepStrictEqual(a, e, `value ${i} behind a Proxy`);
      assert.ok(rsLog.length > 0, 'the proxy was read');
      assert.deepStrictEqual(rsLog, jsLog, `value ${i}: trap sequence`);
    }
  }
  // a cycle through the learned position
  const cyclic = { a: 1, b: 's' };
  cyclic.b = { x: cyclic, z: 1 };
  sameBytes(learned(), undefined, 'the learned document again');
  sameBytes({ x: cyclic, z: 1 }, undefined, 'a cycle');
});

test('after a document of BIG_DOCUMENT bytes a list of FEW_KEYS keys or fewer is compiled at its COMPILE_AFTER_BIG-th use, a longer one and any after a small document at its COMPILE_AFTER-th', () => {
  // (one rs.serialize per use: sameBytes would add serializeWithBufferAndIndex's)
  const same = (doc, context) => assert.deepStrictEqual(rs.serialize(doc), js.serialize(doc), context);
  const big = i => ({ i, blob: new Uint8Array(BIG_DOCUMENT) });
  const before = shapes.compiled();
  for (let i = 1; i < COMPILE_AFTER_BIG; i++) same(big(i), `big document, use ${i}`);
  assert.strictEqual(shapes.compiled(), before, `not compiled in ${COMPILE_AFTER_BIG - 1} uses`);
  same(big(0), 'big document, last use');
  assert.strictEqual(shapes.compiled(), before + 1, `compiled at use ${COMPILE_AFTER_BIG}`);
  for (let i = 0; i < COMPILE_AFTER; i++) same({ small: i, s: 'x' }, `small document, use ${i + 1}`);
  assert.strictEqual(shapes.compiled(), before + 2, `the small one compiled at use ${COMPILE_AFTER}`);
  // a big document of more keys: compiled at use COMPILE_AFTER (the first use follows a big document)
  const wide = i => {
    const o = { blob: new Uint8Array(BIG_DOCUMENT) };
    for (let k = 0; k < FEW_KEYS; k++) o['k' + k] = i + k;
    return o;
  };
  same(big(1), 'big document again');
  for (let i = 0; i < COMPILE_AFTER; i++) same(wide(i), `big document of ${FEW_KEYS + 1} keys, use ${i + 1}`);
  assert.strictEqual(shapes.compiled(), before + 3, `the longer list compiled at use ${COMPILE_AFTER}`);
});

test('a root key list is compiled at its COMPILE_AFTER-th use while at most FEW_ROOTS root key lists are in use, else walked until its WALK_FIRST_USES-th', () => {
  const same = (doc, context) => assert.deepStrictEqual(rs.serialize(doc), js.serialize(doc), context);
  const lists = (name, n) => Array.from({ length: n }, (_, k) => i => ({ [name + k]: i, s: 'x' }));
  for (let i = 0; i < COMPILE_AFTER; i++) for (const make of lists('few', FEW_ROOTS)) same(make(i), `few, use ${i + 1}`);
  assert.strictEqual(shapes.compiled(), FEW_ROOTS, `${FEW_ROOTS} lists compiled at their use ${COMPILE_AFTER}`);
  shapes.reset();
  const many = lists('many', FEW_ROOTS + 1);
  for (let i = 1; i < WALK_FIRST_USES; i++) for (const make of many) same(make(i), `many, use ${i}`);
  assert.strictEqual(shapes.compiled(), 0, `walked for ${WALK_FIRST_USES - 1} uses`);
  for (const make of many) same(make(0), `many, use ${WALK_FIRST_USES}`);
  assert.strictEqual(shapes.compiled(), FEW_ROOTS + 1, `${FEW_ROOTS + 1} lists compiled at their use ${WALK_FIRST_USES}`);
});
