'use strict';
// Shape-compiled calculateObjectSize (lib/shaped/size.js): once a key list has
// recurred, its objects are sized by generated code. Everything here sizes the
// same key lists many times, so the compiled sizers and frames are the ones
// answering, and compares with js-bson: sizes, errors, trap sequences.
const test = require('node:test');
const assert = require('node:assert');
const { spawnSync } = require('node:child_process');
const path = require('node:path');
const vm = require('node:vm');
const { js, rs } = require('./support/oracle');
const { Rng } = require('./support/prng');
const gen = require('./support/gen');
const { outcome } = require('./support/compare');
const { assertFastSizeTraps, traced } = require('./support/traps');
const { warmUntilCompiled, andOf50 } = require('./support/shapes');
const { testing: shapes, counts: sizeCounts } = require('../lib/shaped/size');
const { COMPILE_AFTER, COMPILE_AFTER_BIG, BIG_DOCUMENT, FEW_KEYS, WALK_FIRST_USES, WALK_FIRST_BYTES, FEW_ROOTS } = require('../lib/shaped/table');

const ROOT = path.join(__dirname, '..');
const WARM = 8; // > COMPILE_AFTER

// Each test starts from empty tables (an earlier test's ever-new key lists
// would leave them cold), and checks that its warm-up compiled something.
test.beforeEach(() => shapes.reset());
function warmUp(make) {
  const before = shapes.compiled();
  warmUntilCompiled(make, doc => sameSize(doc, undefined, 'warm-up'), WARM);
  assert.ok(shapes.compiled() > before, 'the warm-up compiled a sizer');
}

function sameSize(doc, options, context) {
  const e = outcome(() => js.calculateObjectSize(doc, options));
  const a = outcome(() => rs.calculateObjectSize(doc, options));
  assert.deepStrictEqual(a, e, context);
}

test('random values under recurring key lists: same sizes and errors as js-bson', () => {
  const rng = new Rng(0x5eed11);
  const optionSets = [undefined, {}, { ignoreUndefined: false }, { ignoreUndefined: true }, { serializeFunctions: true }];
  for (let i = 0; i < 3000; i++) {
    const doc = {
      a: gen.randomValue(rng, js, 2),
      b: { c: gen.randomValue(rng, js, 2), d: gen.randomValue(rng, js, 1) },
      list: [gen.randomValue(rng, js, 1), { e: gen.randomValue(rng, js, 1) }],
      f: gen.randomValue(rng, js, 0)
    };
    sameSize(doc, optionSets[i % optionSets.length], `document ${i}`);
  }
});

test('a learned position that later holds something else', () => {
  const { ObjectId, Long, Binary, Code, DBRef, Decimal128, MinKey, BSONRegExp, BSONSymbol, Int32 } = js;
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
    new Binary(Buffer.from('xyz'), 2),
    new Code('f', { a: 1 }),
    new DBRef('c', new ObjectId('65494a394033a116319ce2da'), 'db', { a: 1 }),
    Decimal128.fromString('1.5'),
    new MinKey(),
    new BSONRegExp('p', 'i'),
    new BSONSymbol('s'),
    new Int32(4),
    /re/g,
    Buffer.from('ab'),
    new Uint16Array(3),
    new ArrayBuffer(5),
    Object.assign(Object.create(null), { a: 1 }),
    { _bsontype: 'ObjectId' },
    { _bsontype: 'Unknown', [Symbol.for('@@mdb.bson.version')]: 7 },
    { a: 1, [Symbol.toStringTag]: 'Date' },
    'a string',
    -0,
    2 ** 40,
    undefined,
    null,
    () => 1,
    Symbol('s'),
    12n
  ];
  for (const other of others) {
    shapes.reset();
    warmUp(i => ({ x: { a: i }, y: [{ a: i }], z: 'z' }));
    for (const options of [undefined, { ignoreUndefined: false }, { serializeFunctions: true }]) {
      sameSize({ x: other, y: [other], z: 'z' }, options, String(other?.constructor?.name ?? typeof other));
      sameSize({ x: { a: other }, y: [{ a: other }], z: other }, options, String(other?.constructor?.name ?? typeof other));
    }
  }
});

test('a compiled array: every kind of element after each class (its reads are made at that class\'s site)', () => {
  const { ObjectId, Long, Timestamp, Binary, UUID, Decimal128, Code, BSONRegExp } = js;
  const oid = new ObjectId('65494a394033a116319ce2da');
  const before = [oid, new Date(2), Long.fromNumber(7), Timestamp.fromNumber(8), new Binary(Buffer.from('ab')), new UUID('0123456789abcdef0123456789abcdef'), Decimal128.fromString('2.5'), { a: 1 }, [1], 'x'];
  const after = (log) => [
    oid,
    new Date(3),
    Long.fromNumber(9),
    new UUID('fedcba9876543210fedcba9876543210'),
    new Binary(Buffer.from('xyz'), 2),
    new Code('f', { a: 1 }),
    new BSONRegExp('p', 'i'),
    { toBSON: () => ({ replaced: true }) },
    { _bsontype: 'ObjectId' },
    { _bsontype: 'ObjectId', [Symbol.for('@@mdb.bson.version')]: 6 },
    { _bsontype: 'Unknown', [Symbol.for('@@mdb.bson.version')]: 7 },
    Buffer.from('ab'),
    /re/g,
    { b: 2 },
    traced({ c: 3 }, log),
    traced(Long.fromNumber(5), log),
    null,
    12n
  ];
  const n = after([]).length;
  for (let k = 0; k < n; k++) {
    shapes.reset();
    // the array's own compiled loop, warmed with arrays of several classes
    warmUp(i => ({ values: [before[i % before.length], before[(i + 3) % before.length], i] }));
    for (const prev of before) {
      const jsLog = [];
      const rsLog = [];
      const e = outcome(() => js.calculateObjectSize({ values: [prev, prev, after(jsLog)[k], prev] }));
      const a = outcome(() => rs.calculateObjectSize({ values: [prev, prev, after(rsLog)[k], prev] }));
      assert.deepStrictEqual(a, e, `element ${k} after ${prev?.constructor?.name}`);
      assertFastSizeTraps(rsLog, jsLog, `element ${k} after ${prev?.constructor?.name}`);
    }
  }
});

test('Proxies of a learned shape: same size and the same trap sequence as js-bson', () => {
  const make = (log, wrap) => {
    const inner = { d: 'x', e: new Date(1), f: new js.ObjectId('65494a394033a116319ce2da') };
    const mid = { a: 1, b: [1, 2], c: wrap ? traced(inner, log) : inner };
    return { p: wrap ? traced(mid, log) : mid, q: { d: 'x', e: new Date(1), f: null } };
  };
  warmUp(() => make([], false));
  const jsLog = [];
  const rsLog = [];
  const e = outcome(() => js.calculateObjectSize(make(jsLog, true)));
  const a = outcome(() => rs.calculateObjectSize(make(rsLog, true)));
  assert.deepStrictEqual(a, e);
  assert.ok(rsLog.length > 10, 'the proxies were read');
  assertFastSizeTraps(rsLog, jsLog, 'compiled frames');
});

test('a tree whose children differ by level: the leaves are sized by their own compiled frame, with js-bson\'s sizes and trap sequence', () => {
  // deep_bson's shape: { right, left } at every level over { rightValue,
  // leftValue } at the last, so one position holds both key lists. The
  // leaves come to their parent's slot, which holds the inner node; the
  // position's other node sizes them (shaped/size.js otherKeys).
  const tree = (depth, leaf) => (depth === 0 ? leaf() : { right: tree(depth - 1, leaf), left: tree(depth - 1, leaf) });
  const plain = () => tree(4, () => ({ rightValue: 'r', leftValue: 'l' }));
  warmUp(plain);
  const before = sizeCounts.altFrames;
  for (let i = 0; i < 4; i++) sameSize(plain(), undefined, `call ${i}`);
  // 16 leaves a call, all but those that came where the slot held the leaf node
  assert.ok(sizeCounts.altFrames - before >= 4 * 8, `leaves sized through the other node: ${sizeCounts.altFrames - before}`);

  // the same reads, in the same order, as js-bson: leaves behind Proxies
  const jsLog = [];
  const rsLog = [];
  const e = outcome(() => js.calculateObjectSize(tree(4, () => traced({ rightValue: 'r', leftValue: new Date(1) }, jsLog))));
  const a = outcome(() => rs.calculateObjectSize(tree(4, () => traced({ rightValue: 'r', leftValue: new Date(1) }, rsLog))));
  assert.deepStrictEqual(a, e);
  assert.ok(rsLog.length > 16 * 3, 'the leaves were read');
  assertFastSizeTraps(rsLog, jsLog, 'leaves through the other node');

  // a third key list at those positions, a leaf that is a Map, an array or has
  // a toBSON: the generic frame, js-bson's sizes
  const odd = [() => ({ v: 1 }), () => new Map([['rightValue', 1]]), () => [1, 2], () => ({ toBSON: () => ({ rightValue: 'x', leftValue: 'y' }) })];
  for (const leaf of odd) sameSize(tree(4, leaf), undefined, String(leaf));
});

test("the last root's compiled frame tries every root first: js-bson's sizes, errors and trap sequence", () => {
  // Once { a, b } is a root, the next root goes to its compiled frame
  // (calculate-size.js internalCalculateObjectSize), whatever that root is.
  const learned = () => ({ a: 1, b: 'x', c: { d: 1 } });
  warmUp(learned);
  const roots = [
    () => ({ a: 2, b: 'y', c: { d: 2 } }), // the same keys: the compiled frame sizes it
    () => ({ b: 'y', a: 2, c: { d: 3 } }), // other keys: the generic frame, from the keys as read
    () => ({ a: 2 }),
    () => ({ a: 1, b: 'x', c: {}, toBSON: () => ({ z: 1 }) }),
    () => new Map([['a', 1], ['b', 'x']]),
    () => ({ a: 1, b: 'x', c: {}, [Symbol.toStringTag]: 'Map' }),
    () => new Date(1),
    () => [1, 'x'],
    () => 'text',
    () => 5,
    () => null
  ];
  const hits = shapes.rootHits();
  for (const [i, make] of roots.entries()) {
    for (const options of [undefined, { ignoreUndefined: false }]) {
      sameSize(learned(), undefined, 'the learned root again');
      sameSize(make(), options, `root ${i}`);
      const value = make();
      if (typeof value !== 'object' || value === null) continue;
      sameSize(learned(), undefined, 'the learned root again');
      const jsLog = [];
      const rsLog = [];
      const e = outcome(() => js.calculateObjectSize(traced(make(), jsLog, { proto: true }), options));
      const a = outcome(() => rs.calculateObjectSize(traced(make(), rsLog, { proto: true }), options));
      assert.deepStrictEqual(a, e, `root ${i} behind a Proxy`);
      assertFastSizeTraps(rsLog, jsLog, `root ${i}: trap sequence`);
    }
  }
  assert.ok(shapes.rootHits() > hits + roots.length, 'roots went through the compiled frame');
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
        return { u: n };
      }
    });
    return { a: leaf(1), b: [leaf(2), leaf(3)], c: { d: leaf(4), e: leaf(5) } };
  };
  for (let i = 0; i < WARM; i++) {
    const jsLog = [];
    const rsLog = [];
    assert.strictEqual(rs.calculateObjectSize(make(rsLog)), js.calculateObjectSize(make(jsLog)));
    assert.deepStrictEqual(rsLog, jsLog, `call ${i}`);
  }
});

test('a key list too long to compile: its subtree is sized by the walk, in js-bson order', () => {
  const { MAX_KEYS } = require('../lib/shaped/size');
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
    big.none = undefined;
    return big;
  };
  const check = (wrap, context) => {
    for (let i = 0; i < WARM; i++) {
      const jsLog = [];
      const rsLog = [];
      assert.strictEqual(rs.calculateObjectSize(wrap(make(rsLog))), js.calculateObjectSize(wrap(make(jsLog))), context);
      assert.ok(jsLog.length > MAX_KEYS / 2, 'the getters ran');
      assert.deepStrictEqual(rsLog, jsLog, `${context}, call ${i}`);
    }
  };
  check(big => big, 'at the root');
  // at a position of a compiled frame, beside a sibling of a compiled shape
  warmUp(() => ({ a: { b: 1 }, big: {} }));
  check(big => ({ a: { b: 1 }, big }), 'under a compiled frame');
  const cyclic = make([]);
  cyclic.k0.w.u = cyclic;
  sameSize(cyclic, undefined, 'a cycle to the long key list');
  sameSize({ a: { b: 1 }, big: cyclic }, undefined, 'the same under a compiled frame');
  const shared = make([]);
  sameSize({ a: { b: 1 }, big: shared, again: shared }, undefined, 'a shared object is not a cycle');
});

test('cycles are found through compiled frames', () => {
  warmUp(() => ({ a: { b: { c: 1 } }, s: 's' }));
  const root = { a: { b: { c: 1 } }, s: 's' };
  root.a.b.c = root;
  sameSize(root, undefined, 'cycle to the root');
  const again = { a: { b: { c: 1 } }, s: 's' };
  again.a.b.c = again.a;
  sameSize(again, undefined, 'cycle to a parent');
  const shared = { c: 1 };
  sameSize({ a: { b: shared }, s: { b: shared } }, undefined, 'a shared object is not a cycle');
  const scoped = { a: { b: { c: 1 } }, s: 's' };
  scoped.a.b.c = new js.Code('f', scoped);
  sameSize(scoped, undefined, 'cycle through a Code scope');
});

test('a cycle stops the walk where js-bson stops it (getters read before the error)', () => {
  const make = log => {
    const root = { a: { b: { c: 1 } }, s: 's' };
    Object.defineProperty(root, 's', {
      enumerable: true,
      get() {
        log.push('s');
        return 's';
      }
    });
    root.a.b.c = root;
    return root;
  };
  warmUp(() => ({ a: { b: { c: 1 } }, s: 's' }));
  const jsLog = [];
  const rsLog = [];
  const e = outcome(() => js.calculateObjectSize(make(jsLog)));
  const a = outcome(() => rs.calculateObjectSize(make(rsLog)));
  assert.deepStrictEqual(a, e);
  assert.strictEqual(e.ok, false);
  assert.deepStrictEqual(rsLog, jsLog);
});

test("values of another realm at compiled positions and in compiled arrays: js-bson's sizes", () => {
  // (instanceof fails for them: the isDate / isRegExp / isAnyArrayBuffer probes size them)
  const other = vm.createContext({});
  const values = [
    vm.runInContext('new Date(7)', other),
    vm.runInContext('/other-realm/gim', other),
    vm.runInContext('new ArrayBuffer(9)', other),
    vm.runInContext('new Uint8Array(5)', other),
    vm.runInContext('({ x: 1 })', other)
  ];
  const doc = v => ({ a: 1, v, list: [v, 2, v], s: 's' });
  warmUp(() => doc({ x: 1 }));
  for (const v of values) {
    for (let i = 0; i < WARM; i++) sameSize(doc(v), undefined, Object.prototype.toString.call(v));
  }
});

test('toBSON on the primitive prototypes is called at compiled positions too', () => {
  const doc = () => ({ n: 1.5, i: 3, s: 'str', b: true, list: [1, 'x', false] });
  warmUp(doc);
  // each returns a value of another primitive type, whose prototype is not patched
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
      sameSize(doc(), undefined, proto.constructor.name);
    } finally {
      delete proto.toBSON;
    }
  }
  sameSize(doc(), undefined, 'after');
});

test('nesting deeper than the recursion limit, in one repeated shape', () => {
  for (const depth of [40, 47, 48, 49, 60, 500]) {
    let doc = { leaf: true };
    for (let i = 0; i < depth; i++) doc = { n: doc, i };
    shapes.reset();
    warmUp(() => doc);
    let cyclic = { leaf: true };
    const bottom = cyclic;
    for (let i = 0; i < depth; i++) cyclic = { n: cyclic, i };
    bottom.leaf = cyclic;
    sameSize(cyclic, undefined, `cycle at depth ${depth}`);
  }
});

test('the shape table stays bounded under ever-new key lists, and still learns a recurring one', () => {
  for (let i = 0; i < 5000; i++) {
    const doc = { ['k' + i]: i, ['m' + i]: { x: i } };
    for (let r = 0; r < 5; r++) assert.strictEqual(rs.calculateObjectSize(doc), js.calculateObjectSize(doc));
  }
  assert.ok(shapes.nodes() <= shapes.MAX_NODES * shapes.tables(), `${shapes.nodes()} nodes`);
  // (the first FEW_ROOTS lists and their { x }, before more root key lists were in use; then walked)
  assert.strictEqual(shapes.compiled(), FEW_ROOTS + 1, 'roots of 5 uses each among many are walked, not compiled');
  // more key lists than a table compiles, each used until compiled
  // (the first COLD_CALLS of these calls while the table is cold from the lists above)
  let peak = 0;
  for (let i = 0; i < shapes.MAX_COMPILED + 128; i++) {
    const doc = { ['k' + i]: i, ['m' + i]: { x: i } };
    const size = js.calculateObjectSize(doc);
    for (let r = 0; r < WALK_FIRST_USES + COMPILE_AFTER; r++) assert.strictEqual(rs.calculateObjectSize(doc), size);
    peak = Math.max(peak, shapes.compiled());
    assert.ok(shapes.compiled() <= shapes.MAX_COMPILED * shapes.tables(), `${shapes.compiled()} compiled`);
  }
  assert.ok(peak >= shapes.MAX_COMPILED / 2, `at most ${peak} compiled at once`);
  // ever-new key lists, one per call: the table goes cold, then warms up again
  for (let i = 0; i < 3000; i++) sameSize({ ['u' + i]: i }, undefined, 'new keys');
  const before = shapes.compiled();
  for (let i = 0; i < shapes.COLD_CALLS + 2000; i++) sameSize({ recurring: i, again: { x: i } }, undefined, 'recurring');
  assert.ok(shapes.compiled() > before, 'a recurring key list is compiled after a cold spell');
});

test("ever-new key lists, at a position or at the root (a cold table): toBSON and _bsontype read through Reflect.get, js-bson's sizes, getter calls and traps", () => {
  // (their objects have hidden classes V8 has not seen: shaped/serialize.js FRESH_READS)
  let n = 0;
  const fresh = (i = n++) => ({ ['k' + i]: i, ['t' + i]: 'x' });
  for (let i = 0; i < 40; i++) sameSize({ _id: i, m: fresh() }, undefined, `document ${i}`);
  assert.strictEqual(shapes.freshPositions(), 1, 'the position of m is marked');
  const withGetters = (calls, i, root) => {
    const o = fresh(i);
    Object.defineProperty(o, 'toBSON', { get() { calls.push(['toBSON', this === o]); return undefined; } });
    Object.defineProperty(o, '_bsontype', { get() { calls.push(['_bsontype', this === o]); return undefined; } });
    return root ? o : { _id: 2, m: o };
  };
  const check = (root) => {
    const i = n++;
    const jsLog = [];
    const rsLog = [];
    const wrap = (log) => (root ? traced(fresh(i), log) : { _id: 1, m: traced(fresh(i), log) });
    assert.deepStrictEqual(outcome(() => rs.calculateObjectSize(wrap(rsLog))), outcome(() => js.calculateObjectSize(wrap(jsLog))));
    assert.ok(rsLog.some(([op, k]) => op === 'get' && k === 'toBSON'), 'toBSON was read through the trap');
    assertFastSizeTraps(rsLog, jsLog, root ? 'root' : 'position');
    const j = n++;
    const jsCalls = [];
    const rsCalls = [];
    assert.strictEqual(rs.calculateObjectSize(withGetters(rsCalls, j, root)), js.calculateObjectSize(withGetters(jsCalls, j, root)));
    assert.ok(rsCalls.some(([k]) => k === 'toBSON') && rsCalls.every(([, self]) => self), JSON.stringify(rsCalls));
    assert.deepStrictEqual(rsCalls.filter(([k]) => k === 'toBSON'), jsCalls.filter(([k]) => k === 'toBSON'));
  };
  check(false);
  sameSize({ _id: 3, m: { ...fresh(), toBSON: () => ({ replaced: true }) } }, undefined, 'toBSON');
  sameSize({ _id: 4, m: new js.ObjectId('65494a394033a116319ce2da') }, undefined, 'ObjectId');
  for (let i = 0; i < 10; i++) sameSize({ _id: 5, m: { same: i } }, undefined, 'recurring');
  // roots of ever-new key lists
  for (let i = 0; i < 200; i++) sameSize(fresh(), undefined, `root ${i}`);
  assert.strictEqual(shapes.coldTables(), 1, 'the table went cold');
  check(true);
  sameSize(null, undefined, 'null root');
  sameSize(Object.assign(() => 1, { ['f' + n++]: 1 }), undefined, 'a function root');
});

test('many key lists with the same first key (_id) are each compiled', () => {
  // (each list 2 * COMPILE_WINDOW calls in a row: one root key list in use, FEW_ROOTS)
  for (let pass = 0; pass < 3; pass++) {
    for (let shape = 0; shape < 24; shape++) {
      const doc = i => {
        const d = { _id: new js.ObjectId('65494a394033a116319ce2da'), n: i };
        for (let k = 0; k <= shape; k++) d['f' + k] = k;
        return d;
      };
      for (let i = 0; i < 2 * shapes.COMPILE_WINDOW; i++) sameSize(doc(i), undefined, `shape ${shape}`);
    }
  }
  assert.ok(shapes.compiled() >= 24, `${shapes.compiled()} compiled`);
});

test('a key list that comes again in the same call is compiled when due, whatever the budget', () => {
  warmUp(i => ({ rows: [{ w: i }] }));
  for (let i = 0; i < WARM; i++) sameSize(andOf50(i), undefined, 'the window\'s budget spent');
  const before = shapes.compiled();
  sameSize({ rows: Array.from({ length: 10 }, (_, i) => ({ r: i, s: 'x' })) }, undefined, 'rows');
  assert.ok(shapes.compiled() > before, "the rows' key list was compiled in its first call");
});

test('key lists that come once a call are compiled COMPILES_PER_WINDOW a window: the 50 of an $and', () => {
  for (let i = 0; i < WARM; i++) sameSize(andOf50(i), undefined, 'first window');
  const first = shapes.compiled();
  // (and { $gte, $lt }, which comes 50 times a call: compiled when due)
  assert.ok(first > 0 && first <= shapes.COMPILES_PER_WINDOW + 1 && first < 50, `${first} compiled in the first window`);
  for (let i = WARM; i < 16 * shapes.COMPILE_WINDOW; i++) sameSize(andOf50(i), undefined, 'later windows');
  assert.ok(shapes.compiled() >= 50, `${shapes.compiled()} compiled after 16 windows`);
});

test('without code generation, calculateObjectSize and serialize still answer like js-bson', () => {
  const script = `
    const js = require('bson');
    const rs = require(${JSON.stringify(ROOT)});
    const { testing } = require(${JSON.stringify(path.join(ROOT, 'lib/shaped/size'))});
    let evalBlocked = false;
    try { new Function('return 1'); } catch { evalBlocked = true; }
    const failures = [];
    for (let i = 0; i < 200; i++) {
      const doc = { i, s: 'k' + i, n: { a: [i, { b: i }], d: new Date(i) }, ['key' + (i % 3)]: null };
      if (rs.calculateObjectSize(doc) !== js.calculateObjectSize(doc)) failures.push(i);
      if (!rs.serialize(doc).equals(js.serialize(doc))) failures.push('serialize ' + i);
    }
    console.log(JSON.stringify({ evalBlocked, failures, tables: testing.tables() }));
  `;
  const r = spawnSync(process.execPath, ['--disallow-code-generation-from-strings', '-e', script], { encoding: 'utf8', timeout: 60000 });
  assert.strictEqual(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout.trim().split('\n').pop());
  assert.ok(out.evalBlocked, 'the flag must block new Function in the child');
  assert.deepStrictEqual(out.failures, []);
  assert.strictEqual(out.tables, 0, 'no shape table without code generation');
});

test('a root key list is compiled at its COMPILE_AFTER-th use while at most FEW_ROOTS root key lists are in use, else walked until its WALK_FIRST_USES-th; its nested lists at their COMPILE_AFTER-th use from then', () => {
  const lists = (name, n) => Array.from({ length: n }, (_, k) => i => ({ [name + k]: i, n: { ['b' + k]: i, c: 'x' } }));
  for (let i = 0; i < COMPILE_AFTER; i++) for (const make of lists('few', FEW_ROOTS)) sameSize(make(i), undefined, `few, use ${i + 1}`);
  assert.strictEqual(shapes.compiled(), FEW_ROOTS, `${FEW_ROOTS} lists compiled at their use ${COMPILE_AFTER}`);
  shapes.reset();
  const many = lists('many', FEW_ROOTS + 1);
  for (let i = 1; i < WALK_FIRST_USES; i++) for (const make of many) sameSize(make(i), undefined, `many, use ${i}`);
  assert.strictEqual(shapes.compiled(), 0, `walked for ${WALK_FIRST_USES - 1} uses`);
  for (const make of many) sameSize(make(0), undefined, `many, use ${WALK_FIRST_USES}`);
  assert.strictEqual(shapes.compiled(), FEW_ROOTS + 1, `${FEW_ROOTS + 1} lists compiled at their use ${WALK_FIRST_USES}`);
  for (let i = 1; i < COMPILE_AFTER; i++) for (const make of many) sameSize(make(i), undefined, `many, nested use ${i + 1}`);
  assert.strictEqual(shapes.compiled(), 2 * (FEW_ROOTS + 1), `the nested lists compiled at their use ${COMPILE_AFTER} below them`);
});

test('among many root key lists, one whose documents amount to WALK_FIRST_BYTES is compiled at its COMPILE_AFTER-th use', () => {
  // (FEW_KEYS + 1 keys: a shorter list after a big document waits for COMPILE_AFTER_BIG)
  const part = Math.ceil(WALK_FIRST_BYTES / (COMPILE_AFTER - 1));
  const big = i => {
    const o = { s: 'x'.repeat(part) };
    for (let k = 0; k < FEW_KEYS; k++) o['k' + k] = i + k;
    return o;
  };
  const others = Array.from({ length: FEW_ROOTS }, (_, k) => ({ ['other' + k]: k }));
  const round = (i, context) => {
    for (const o of others) sameSize(o, undefined, context);
    sameSize(big(i), undefined, context);
  };
  for (let i = 1; i < COMPILE_AFTER; i++) round(i, `use ${i}`);
  assert.strictEqual(shapes.compiled(), 0, `walked for ${COMPILE_AFTER - 1} uses`);
  round(0, `use ${COMPILE_AFTER}`);
  assert.strictEqual(shapes.compiled(), 1, `compiled at use ${COMPILE_AFTER}`);
});

test('after a document of BIG_DOCUMENT bytes a list of FEW_KEYS keys or fewer is compiled at its COMPILE_AFTER_BIG-th use, a longer one and any after a small document at its COMPILE_AFTER-th', () => {
  // (a big document's time is its values': the compile would not be repaid)
  const big = i => ({ i, blob: new Uint8Array(BIG_DOCUMENT) });
  const before = shapes.compiled();
  for (let i = 1; i < COMPILE_AFTER_BIG; i++) sameSize(big(i), undefined, `big document, use ${i}`);
  assert.strictEqual(shapes.compiled(), before, `not compiled in ${COMPILE_AFTER_BIG - 1} uses`);
  sameSize(big(0), undefined, 'big document, last use');
  assert.strictEqual(shapes.compiled(), before + 1, `compiled at use ${COMPILE_AFTER_BIG}`);
  // a small document sets the threshold back (from its second use here)
  for (let i = 0; i < COMPILE_AFTER; i++) sameSize({ small: i, s: 'x' }, undefined, `small document, use ${i + 1}`);
  assert.strictEqual(shapes.compiled(), before + 2, `the small one compiled at use ${COMPILE_AFTER}`);
  // a big document of more keys: compiled at use COMPILE_AFTER (the first use follows a big document)
  const wide = i => {
    const o = { blob: new Uint8Array(BIG_DOCUMENT) };
    for (let k = 0; k < FEW_KEYS; k++) o['k' + k] = i + k;
    return o;
  };
  sameSize(big(1), undefined, 'big document again');
  for (let i = 0; i < COMPILE_AFTER; i++) sameSize(wide(i), undefined, `big document of ${FEW_KEYS + 1} keys, use ${i + 1}`);
  assert.strictEqual(shapes.compiled(), before + 3, `the longer list compiled at use ${COMPILE_AFTER}`);
});
