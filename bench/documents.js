'use strict';
// The benchmark documents, built deterministically (seeded PRNG, fixed epoch)
// with js-bson's classes. bson-rs re-exports the same classes, so both
// libraries see the very same objects.
//
// buildDocuments(bson, { only }) -> [{ name, description, doc, pool? }], in report
// order. A document with `pool` (the "newkeys_*" regime) is a pool of
// documents cycled call after call; `doc` is its first member.
const fs = require('node:fs');
const path = require('node:path');

const SPEC_DOCS = ['flat_bson', 'deep_bson', 'full_bson', 'tweet', 'mixed_small', 'mixed_medium', 'nested_4'];
const SPEC_DIR = path.join(__dirname, 'documents');
const EPOCH = Date.UTC(2024, 0, 1); // fixed, so Dates do not depend on the clock
const MIB = 1024 * 1024;
// The pool documents (ever-new keys), built only when selected; run.js times them after the others.
const POOL_NAMES = ['newkeys_userid', 'newkeys_set', 'newkeys_buckets'];

// mulberry32, the same seeded generator the tests use.
const { mulberry32: prng } = require('../test/support/prng');

let buildingOwn = false; // a BENCH_DOCUMENTS module is being called

function buildDocuments(bson, { only = null } = {}) {
  // only: a predicate on document names; the costly pools are built only for the selected names.
  const wanted = (name) => !only || only(name);
  const { EJSON, ObjectId, Decimal128, Long, Binary } = bson;
  const rand = prng(0x5eed);
  const int = (lo, hi) => lo + Math.floor(rand() * (hi - lo + 1)); // inclusive
  const pick = (list) => list[Math.floor(rand() * list.length)];
  const ALNUM = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
  const word = (lo, hi) => {
    let s = '';
    for (let i = int(lo, hi); i > 0; i--) s += ALNUM[Math.floor(rand() * ALNUM.length)];
    return s;
  };
  const hex = (bytes) => {
    let s = '';
    for (let i = 0; i < bytes; i++) s += int(0, 255).toString(16).padStart(2, '0');
    return s;
  };
  const oid = () => new ObjectId(hex(12));
  const date = () => new Date(EPOCH + int(0, 365 * 24 * 3600) * 1000 + int(0, 999));
  const price = () => Decimal128.fromString(`${int(1, 999)}.${String(int(0, 99)).padStart(2, '0')}`);
  const array = (n, make) => Array.from({ length: n }, make);

  const docs = [];
  const add = (name, description, doc) => docs.push({ name, description, doc });

  for (const name of SPEC_DOCS) {
    const text = fs.readFileSync(path.join(SPEC_DIR, `${name}.json`), 'utf8');
    add(name, `bench/documents/${name}.json (Extended JSON)`, EJSON.parse(text));
  }

  add('small_10_fields', 'one 10-field document of mixed types', {
    _id: oid(),
    name: 'Ada Lovelace',
    email: 'ada@example.com',
    age: 36,
    score: 97.25,
    active: true,
    createdAt: date(),
    visits: Long.fromNumber(1234567890123),
    tags: ['math', 'engines', 'poetry'],
    address: { city: 'London', zip: 'W1' }
  });

  const CITIES = ['Paris', 'Berlin', 'Madrid', 'Rome', 'Lisbon', 'Vienna', 'Prague', 'Dublin'];
  const STATUS = ['new', 'paid', 'shipped', 'delivered', 'cancelled'];
  const TAGS = ['gift', 'express', 'fragile', 'bulk', 'promo', 'b2b', 'repeat', 'priority'];
  add('orders_1000', '{ orders: [1,000 order documents] } (ObjectId, nested address, items with Decimal128 prices, Date, Long, tags)', {
    orders: array(1000, (_, i) => ({
      _id: oid(),
      orderNo: Long.fromNumber(9_000_000_000 + i),
      status: pick(STATUS),
      createdAt: date(),
      customer: {
        customerId: oid(),
        name: `${word(4, 9)} ${word(5, 12)}`,
        email: `${word(5, 10).toLowerCase()}@example.com`,
        address: { street: `${int(1, 200)} ${word(5, 12)} Street`, city: pick(CITIES), zip: String(int(10000, 99999)), country: 'EU' }
      },
      items: array(int(1, 5), () => ({ sku: `SKU-${word(6, 6).toUpperCase()}`, qty: int(1, 10), price: price() })),
      total: price(),
      paid: rand() < 0.8,
      tags: array(int(0, 3), () => pick(TAGS))
    }))
  });

  add('int32_1000', '{ values: [1,000 int32] }', { values: array(1000, () => int(-2147483648, 2147483647)) });
  add('double_1000', '{ values: [1,000 doubles] }', { values: array(1000, () => (rand() - 0.5) * 1e6 + 0.5) });
  add('string_1000', '{ values: [1,000 short ASCII strings] }', { values: array(1000, () => word(4, 16)) });
  add('objectid_1000', '{ values: [1,000 ObjectIds] }', { values: array(1000, oid) });
  add('date_1000', '{ values: [1,000 Dates] }', { values: array(1000, date) });
  // Safe-range int64s (counters, ids): deserialize promotes them to numbers by default.
  add('long_1000', '{ values: [1,000 Longs] } (safe-integer range: deserialize returns numbers by default)', { values: array(1000, () => Long.fromNumber(int(0, 2 ** 40) * 1024 + int(0, 1023))) });

  const UNICODE = [
    'café crème brûlée', 'Ærøskøbing Ålborg', 'naïve façade déjà vu', 'Zürich Straße Größe', 'ĉiuĵaŭde Łódź Kraków',
    '東京都渋谷区', '北京市朝阳区建国路', '서울특별시 강남구', 'こんにちは世界', 'Привет, мир', 'Γειά σου Κόσμε', 'مرحبا بالعالم',
    '🎉🚀✨', '👩‍💻 coding ☕', '🇫🇷🇯🇵🇧🇷', 'mixed ASCII and emoji 😀 ok'
  ];
  add('unicode_200', '{ values: [200 non-ASCII strings: accents, CJK, emoji] }', {
    values: array(200, () => `${pick(UNICODE)} ${pick(UNICODE)} ${int(0, 9999)}`)
  });

  let ascii = '';
  {
    const chunk = array(4096, () => ALNUM[Math.floor(rand() * ALNUM.length)]).join('');
    while (ascii.length < MIB) ascii += chunk;
    ascii = ascii.slice(0, MIB);
  }
  add('string_1mib', '{ data: one 1 MiB ASCII string }', { data: ascii });

  // 1 MiB of UTF-8 in three-byte characters (CJK text); its own PRNG, so the
  // documents after it stay exactly as they were.
  {
    const rand3 = prng(0x636a6b);
    const CJK = '東京都渋谷区新宿北京市上海天気晴曇雨雪春夏秋冬日月火水木金土山川海空人口大小中国語本学生先会社時間年今何私見行来食飲話読書買売電車駅道店、。';
    let text = '';
    for (let i = 0; i < MIB / 3; i++) text += CJK[Math.floor(rand3() * CJK.length)];
    add('cjk_1mib', '{ data: one string of 349,525 CJK characters (1 MiB of UTF-8) }', { data: text });
  }

  const bytes = new Uint8Array(MIB);
  for (let i = 0; i < MIB; i++) bytes[i] = Math.floor(rand() * 256);
  add('binary_1mib', '{ data: one 1 MiB Binary (subtype 0) }', { data: new Binary(bytes, 0) });

  let deep = { leaf: true, value: 50 };
  for (let level = 49; level >= 0; level--) deep = { level, name: `level${level}`, child: deep };
  add('deep_50', 'a document nested 50 levels deep', deep);

  // ---------- regimes where caches cannot help or fixed costs dominate ----------
  // Their own PRNG, so the documents above stay exactly as they were.
  const rand2 = prng(0x6e6b);
  const int2 = (lo, hi) => lo + Math.floor(rand2() * (hi - lo + 1));
  const hex2 = (n) => {
    let s = '';
    for (let i = 0; i < n; i++) s += int2(0, 255).toString(16).padStart(2, '0');
    return s;
  };

  // Tiny replies: every write acknowledgement and many command replies.
  add('ok_1', '{ ok: 1 } (the smallest command reply)', { ok: 1 });
  add('write_ack', '{ n: 1, ok: 1 } (a typical write acknowledgement)', { n: 1, ok: 1 });

  // A 1 MiB binary under a one-letter key: the fixed cost of a call plus one copy.
  add('binary_1mib_k1', '{ b: one 1 MiB Binary (subtype 0) } (one-letter key)', { b: new Binary(bytes, 0) });

  // Many small binaries: 16 bytes each, where the per-value work is the cost (own PRNG).
  {
    const rand4 = prng(0x75756964);
    const uuidHex = () => Array.from({ length: 32 }, () => Math.floor(rand4() * 16).toString(16)).join('');
    add('uuid_1000', '{ values: [1,000 UUIDs] } (Binary subtype 4, 16 bytes each)', { values: array(1000, () => new bson.UUID(uuidHex())) });
  }

  // Keys never seen before: a pool of documents cycled through call after call,
  // each key distinct across the pool (100k+ keys, far more than any key cache
  // of a few thousand entries holds), built before timing; deserialize cycles
  // through their BSON bytes. Built only when selected (wanted(name)).
  const pool = (name, description, count, make) => {
    if (!POOL_NAMES.includes(name)) throw new Error(`${name}: not in POOL_NAMES`);
    if (!wanted(name)) return;
    const docsOfPool = Array.from({ length: count }, (_, i) => make(i));
    docs.push({ name, description: `${description}; a pool of ${count.toLocaleString('en-US')} documents, cycled`, doc: docsOfPool[0], pool: docsOfPool });
  };
  const userIds = (count) => {
    // ObjectId-like hex strings: 4-byte time, 5 random bytes, 3-byte counter (distinct).
    const t = Math.floor(EPOCH / 1000);
    return Array.from({ length: count }, (_, i) => (t + (i >> 8)).toString(16).padStart(8, '0') + hex2(5) + i.toString(16).padStart(6, '0'));
  };
  const NEW_KEYS = 1 << 17; // 131,072
  {
    const ids = wanted('newkeys_userid') ? userIds(NEW_KEYS) : [];
    pool('newkeys_userid', '{ [userId]: n } (a 24-hex-digit id as the key, int32 value)', NEW_KEYS, (i) => ({ [ids[i]]: int2(1, 1000) }));
  }
  {
    // 'day.YYYY-MM-DD' for 131,072 consecutive days (1700-01-01 onward).
    const DAY0 = Date.UTC(1700, 0, 1);
    pool('newkeys_set', "{ $set: { ['day.' + d]: v } } (d: an ISO date, a different day in every document)", NEW_KEYS, (i) => ({
      $set: { [`day.${new Date(DAY0 + i * 86400000).toISOString().slice(0, 10)}`]: int2(0, 100000) }
    }));
  }
  {
    // Time buckets: 12 per-minute keys ('2024-01-01T00:00', ...) per document,
    // 16,384 documents = 196,608 distinct keys, plus fixed _id and sensor.
    const PER = 12;
    const COUNT = 1 << 14;
    pool('newkeys_buckets', `{ _id, sensor, m: { [minute]: double x ${PER} } } (ISO-minute keys, ${(PER * COUNT).toLocaleString('en-US')} distinct)`, COUNT, (i) => {
      const m = {};
      for (let k = 0; k < PER; k++) m[new Date(EPOCH + (i * PER + k) * 60000).toISOString().slice(0, 16)] = int2(0, 10000) / 100;
      return { _id: new ObjectId(hex2(12)), sensor: 'cpu', m };
    });
  }

  // BENCH_DOCUMENTS: a module of your own documents, `(bson) => ({ name: document })`,
  // timed after these (run.js counts such a run as partial: results.partial.json).
  // (not again for a buildDocuments call inside that module)
  if (process.env.BENCH_DOCUMENTS && !buildingOwn) {
    buildingOwn = true;
    try {
      const own = require(path.resolve(process.env.BENCH_DOCUMENTS))(bson);
      for (const [name, doc] of Object.entries(own)) add(name, `${name} (BENCH_DOCUMENTS)`, doc);
    } finally {
      buildingOwn = false;
    }
  }

  return docs;
}

module.exports = { buildDocuments, SPEC_DOCS, POOL_NAMES };
