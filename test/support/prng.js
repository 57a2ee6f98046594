'use strict';
// A small seeded PRNG (mulberry32) with helpers. No side effects on load.

function mulberry32(seed) {
  let a = seed >>> 0;
  return function next() {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

class Rng {
  constructor(seed) {
    this.seed = seed >>> 0;
    this.next = mulberry32(this.seed);
  }
  /** float in [0, 1) */
  float() {
    return this.next();
  }
  /** integer in [min, max] (inclusive) */
  int(min, max) {
    return min + Math.floor(this.next() * (max - min + 1));
  }
  bool() {
    return this.next() < 0.5;
  }
  chance(p) {
    return this.next() < p;
  }
  pick(array) {
    return array[Math.floor(this.next() * array.length)];
  }
  /** a uint32 */
  u32() {
    return (this.next() * 4294967296) >>> 0;
  }
  bytes(n) {
    const out = Buffer.alloc(n);
    for (let i = 0; i < n; i++) out[i] = this.int(0, 255);
    return out;
  }
  /** a new independent generator derived from this one */
  fork() {
    return new Rng(this.u32());
  }
}

/** The seed to use: FUZZ_SEED from the environment if set, else `fallback`. */
function seedFromEnv(fallback) {
  const s = process.env.FUZZ_SEED;
  if (s === undefined || s === '') return fallback >>> 0;
  const n = Number(s);
  if (!Number.isInteger(n)) throw new Error(`FUZZ_SEED must be an integer, got ${s}`);
  return n >>> 0;
}

/** The number of cases: FUZZ_CASES from the environment if set, else `fallback`. */
function casesFromEnv(fallback) {
  const s = process.env.FUZZ_CASES;
  if (s === undefined || s === '') return fallback;
  const n = Number(s);
  if (!Number.isInteger(n) || n < 0) throw new Error(`FUZZ_CASES must be a non-negative integer, got ${s}`);
  return n;
}

module.exports = { Rng, mulberry32, seedFromEnv, casesFromEnv };
