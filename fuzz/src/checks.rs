//! The checks behind the fuzz targets, shared with `core/tests/fuzz_regressions.rs`
//! (which includes this file by path, so `cargo test` replays the corpus and the
//! regressions without cargo-fuzz). Depends only on `bson-rs-core`.
//!
//! * [`decode`]: arbitrary bytes (a 3-byte header picks flags, index, name lists
//!   and scratch sizes) through one long-lived `DecodeCache`; `NeedSpace` must be
//!   followed by `Done`/`Error` once the scratch has the requested size.
//! * [`decode_tape_walk`]: the same, then the tape is followed the way
//!   `lib/deserialize.js` does, against a model of the JS tables (keys, shape
//!   factories, cached strings) that lives as long as the cache.
//! * [`encode_roundtrip`]: a generated document → encode tape (random choices of
//!   key refs, string forms, argument chunks, output sizes) → `Encoder` → bytes,
//!   compared with an independent reference serializer, then decoded and compared
//!   value by value. Modes 3+ feed malformed or raw tapes: `Err`, never a panic.
#![allow(dead_code)]

use std::cell::RefCell;

use bson_rs_core::decode::{self, flag, op as dop, DecodeCache, Outcome, Request, SPAN_KEY};
use bson_rs_core::utf8;
use bson_rs_core::encode::{self, op as eop, Encoder, OwnedArg, Step};

// ---------------------------------------------------------------------------
// Input reader

pub struct Input<'a> {
  d: &'a [u8],
  i: usize,
}

impl<'a> Input<'a> {
  pub fn new(d: &'a [u8]) -> Self {
    Input { d, i: 0 }
  }
  pub fn u8(&mut self) -> u8 {
    let v = self.d.get(self.i).copied().unwrap_or(0);
    self.i = self.i.saturating_add(1);
    v
  }
  pub fn bool(&mut self) -> bool {
    self.u8() & 1 == 1
  }
  pub fn u32(&mut self) -> u32 {
    u32::from_le_bytes([self.u8(), self.u8(), self.u8(), self.u8()])
  }
  pub fn u64(&mut self) -> u64 {
    (self.u32() as u64) | (self.u32() as u64) << 32
  }
  pub fn take(&mut self, n: usize) -> &'a [u8] {
    let start = self.i.min(self.d.len());
    let end = start.saturating_add(n).min(self.d.len());
    self.i = self.i.saturating_add(n);
    &self.d[start..end]
  }
  pub fn arr<const N: usize>(&mut self) -> [u8; N] {
    let mut a = [0u8; N];
    for b in a.iter_mut() {
      *b = self.u8();
    }
    a
  }
  pub fn rest(&mut self) -> &'a [u8] {
    let start = self.i.min(self.d.len());
    self.i = self.d.len();
    &self.d[start..]
  }
  pub fn done(&self) -> bool {
    self.i >= self.d.len()
  }
}

// ---------------------------------------------------------------------------
// The JS side of the decode tape: a model of lib/deserialize.js

/// A value as `lib/deserialize.js` builds it (promotion decided by the tape).
#[derive(Debug, Clone, PartialEq)]
pub enum V {
  Num(u64),
  Str(Vec<u8>),
  Bool(bool),
  Null,
  Undefined,
  Int32(u64),
  Double(u64),
  Date(u64),
  Long(u64),
  BigInt(u64),
  Oid([u8; 12]),
  Dec([u8; 16]),
  Bin(u8, Vec<u8>),
  Regex(u32, Vec<u8>, Vec<u8>),
  Symbol(Vec<u8>),
  Ts([u8; 8]),
  Min,
  Max,
  Code(Vec<u8>),
  Cws(Vec<u8>, Box<V>),
  DbPtr(Vec<u8>, [u8; 12]),
  Raw(Vec<u8>),
  Doc(Vec<(Vec<u8>, V)>),
  Arr(Vec<V>),
}

/// What JS keeps between decodes: `keys`, `factories` (as key lists), `cachedStrings`.
#[derive(Default)]
pub struct JsSide {
  keys: Vec<Option<Vec<u8>>>,
  shapes: Vec<Option<Vec<Vec<u8>>>>,
  strs: Vec<Option<Vec<u8>>>,
}

fn set<T>(v: &mut Vec<Option<T>>, i: usize, x: T) {
  if v.len() <= i {
    v.resize_with(i + 1, || None);
  }
  v[i] = Some(x);
}

fn lossy(b: &[u8]) -> Vec<u8> {
  String::from_utf8_lossy(b).into_owned().into_bytes()
}

fn slice(input: &[u8], off: u32, n: usize, what: &str) -> Result<Vec<u8>, String> {
  let off = off as usize;
  input.get(off..off.checked_add(n).ok_or("overflow")?).map(|s| s.to_vec()).ok_or_else(|| format!("{what}: bytes {off}+{n} past the input ({})", input.len()))
}

/// Follows a `Done` tape like `build()` in lib/deserialize.js; every check that
/// JS does not make (bounds, defined ids, stack depth) is made here.
pub fn walk(cache: &DecodeCache, js: &mut JsSide, input: &[u8], ops: &[u32], nums: &[u64], total: usize) -> Result<V, String> {
  let word = |pc: usize| ops.get(pc).copied().ok_or_else(|| format!("tape word {pc} past the scratch"));
  let body = word(0)? as usize;
  let defs = word(1)? as usize;
  if 2 + body + defs != total || total > ops.len() {
    return Err(format!("tape lengths {body} + {defs} do not match Done({total})"));
  }
  // The strings in consumption order, as the binding creates them.
  let mut strings = Vec::with_capacity(cache.span_count());
  for s in cache.spans() {
    if s.kind == SPAN_KEY {
      if s.start as usize >= cache.keys.len() {
        return Err(format!("key span of undefined key {}", s.start));
      }
      strings.push(lossy(cache.key_bytes(s.start)));
    } else {
      if s.start > s.end {
        return Err("span start after end".into());
      }
      strings.push(lossy(&slice(input, s.start, (s.end - s.start) as usize, "span")?));
    }
  }
  let mut si = 0usize;
  let mut next_str = || -> Result<Vec<u8>, String> {
    let s = strings.get(si).cloned().ok_or("more strings consumed than delivered")?;
    si += 1;
    Ok(s)
  };

  // Definitions.
  let end_defs = total;
  let mut pc = 2 + body;
  while pc < end_defs {
    let w = word(pc)?;
    pc += 1;
    let arg = (w >> 8) as usize;
    match w & 0xff {
      dop::DEF_KEY => {
        if arg >= bson_rs_core::keys::MAX_KEYS {
          return Err(format!("DEF_KEY id {arg} out of range"));
        }
        let s = next_str()?;
        set(&mut js.keys, arg, s);
      }
      dop::DEF_STR => {
        if arg >= decode::VCACHE_SLOTS {
          return Err(format!("DEF_STR slot {arg} out of range"));
        }
        let s = next_str()?;
        set(&mut js.strs, arg, s);
      }
      dop::DEF_SHAPE => {
        let n = word(pc)? as usize;
        pc += 1;
        if pc + n > end_defs || n > bson_rs_core::shapes::MAX_ARITY {
          return Err(format!("DEF_SHAPE of {n} keys past the definitions"));
        }
        let mut names = Vec::with_capacity(n);
        for _ in 0..n {
          let k = word(pc)? as usize;
          pc += 1;
          names.push(js.keys.get(k).cloned().flatten().ok_or_else(|| format!("DEF_SHAPE uses undefined key {k}"))?);
        }
        set(&mut js.shapes, arg, names);
      }
      other => return Err(format!("op {other:#x} in the definitions")),
    }
  }

  // Body.
  let mut st: Vec<V> = Vec::new();
  let mut ni = 0usize;
  let mut num = || -> Result<u64, String> {
    let v = nums.get(ni).copied().ok_or_else(|| format!("number {ni} past the scratch"))?;
    ni += 1;
    Ok(v)
  };
  /// An ObjectId from the next two slots: four 24-bit ints (i0..i3), two to a slot, low half first.
  fn oid(num: &mut impl FnMut() -> Result<u64, String>) -> Result<V, String> {
    let mut b = [0u8; 12];
    for half in 0..2 {
      let slot = num()?;
      for (k, int) in [slot as u32, (slot >> 32) as u32].into_iter().enumerate() {
        if int > 0xff_ffff {
          return Err(format!("OID int {int:#x} wider than 24 bits"));
        }
        b[6 * half + 3 * k..6 * half + 3 * k + 3].copy_from_slice(&int.to_be_bytes()[1..]);
      }
    }
    Ok(V::Oid(b))
  }
  fn pop(st: &mut Vec<V>, n: usize) -> Result<Vec<V>, String> {
    if n > st.len() {
      return Err(format!("pops {n} values from a stack of {}", st.len()));
    }
    Ok(st.split_off(st.len() - n))
  }
  let end = 2 + body;
  pc = 2;
  while pc < end {
    let w = word(pc)?;
    pc += 1;
    let arg = w >> 8;
    let mut next = || -> Result<u32, String> {
      if pc >= end {
        return Err("extra word past the body".into());
      }
      let v = word(pc)?;
      pc += 1;
      Ok(v)
    };
    let v = match w & 0xff {
      dop::NUM => {
        if arg == 0 {
          return Err("NUM run of 0".into());
        }
        for _ in 0..arg - 1 {
          st.push(V::Num(num()?));
        }
        V::Num(num()?)
      }
      dop::STR => V::Str(next_str()?),
      dop::STR_CACHED => V::Str(js.strs.get(arg as usize).cloned().flatten().ok_or_else(|| format!("STR_CACHED of undefined slot {arg}"))?),
      dop::TRUE => V::Bool(true),
      dop::FALSE => V::Bool(false),
      dop::NULL => V::Null,
      dop::UNDEFINED => V::Undefined,
      dop::INT32_OBJ => {
        let x = num()?;
        let f = f64::from_bits(x);
        if f != f as i32 as f64 {
          return Err(format!("INT32_OBJ of {f}"));
        }
        V::Int32(x)
      }
      dop::DOUBLE_OBJ => V::Double(num()?),
      dop::DATE => V::Date(num()?),
      dop::LONG_OBJ => V::Long(num()?),
      dop::BIGINT => V::BigInt(num()?),
      dop::OID => oid(&mut num)?,
      dop::DECIMAL128 => {
        let o = next()?;
        V::Dec(slice(input, o, 16, "DECIMAL128")?.try_into().map_err(|_| "dec")?)
      }
      dop::BINARY => {
        let o = next()?;
        let n = next()?;
        if arg > 0xff {
          return Err(format!("BINARY subtype {arg}"));
        }
        V::Bin(arg as u8, slice(input, o, n as usize, "BINARY")?)
      }
      dop::REGEXP => {
        if arg > 1 {
          return Err(format!("REGEXP arg {arg}"));
        }
        let s = next_str()?;
        V::Regex(arg, s, next_str()?)
      }
      dop::SYMBOL => V::Symbol(next_str()?),
      dop::TIMESTAMP => {
        let o = next()?;
        V::Ts(slice(input, o, 8, "TIMESTAMP")?.try_into().map_err(|_| "ts")?)
      }
      dop::MINKEY => V::Min,
      dop::MAXKEY => V::Max,
      dop::CODE => V::Code(next_str()?),
      dop::DBPOINTER => {
        let ns = next_str()?;
        let o = next()?;
        V::DbPtr(ns, slice(input, o, 12, "DBPOINTER")?.try_into().map_err(|_| "dbp")?)
      }
      dop::RAW => {
        let o = next()?;
        let n = next()?;
        V::Raw(slice(input, o, n as usize, "RAW")?)
      }
      dop::OBJ | dop::OBJ_DBREF => {
        let names = js.shapes.get(arg as usize).cloned().flatten().ok_or_else(|| format!("OBJ of undefined shape {arg}"))?;
        let vals = pop(&mut st, names.len())?;
        V::Doc(names.into_iter().zip(vals).collect())
      }
      dop::OBJ_GENERIC | dop::OBJ_GENERIC_DBREF => {
        let n = next()? as usize;
        let mut names = Vec::new();
        for _ in 0..n {
          let kw = next()? as usize;
          names.push(if kw == 0 {
            next_str()?
          } else {
            js.keys.get(kw - 1).cloned().flatten().ok_or_else(|| format!("OBJ_GENERIC uses undefined key {}", kw - 1))?
          });
        }
        let vals = pop(&mut st, n)?;
        V::Doc(names.into_iter().zip(vals).collect())
      }
      dop::ARRAY => {
        let n = next()? as usize;
        V::Arr(pop(&mut st, n)?)
      }
      dop::ARRAY_OIDS => {
        let mut a = Vec::new();
        for _ in 0..arg {
          a.push(oid(&mut num)?);
        }
        V::Arr(a)
      }
      dop::ARRAY_DATES => {
        let mut a = Vec::new();
        for _ in 0..arg {
          a.push(V::Date(num()?));
        }
        V::Arr(a)
      }
      dop::ARRAY_NUMS | dop::ARRAY_INTS => {
        let mut a = Vec::new();
        for _ in 0..arg {
          let x = num()?;
          if w & 0xff == dop::ARRAY_INTS {
            let f = f64::from_bits(x);
            if f != f as i32 as f64 || (f == 0.0 && f.is_sign_negative()) {
              return Err(format!("ARRAY_INTS element {f} is not an int32 (`| 0` would change it)"));
            }
          }
          a.push(V::Num(x));
        }
        V::Arr(a)
      }
      dop::CODE_W_SCOPE => {
        let scope = st.pop().ok_or("CODE_W_SCOPE on an empty stack")?;
        let code = st.pop().ok_or("CODE_W_SCOPE without its code")?;
        match (code, &scope) {
          (V::Str(c), V::Doc(_)) => V::Cws(c, Box::new(scope)),
          (c, s) => return Err(format!("CODE_W_SCOPE of {c:?} / {s:?}")),
        }
      }
      other => return Err(format!("unknown body op {other:#x} at word {}", pc - 1)),
    };
    st.push(v);
  }
  if si != strings.len() {
    return Err(format!("{} strings delivered, {si} consumed", strings.len()));
  }
  if st.len() != 1 {
    return Err(format!("stack ends with {} values", st.len()));
  }
  match st.pop() {
    Some(v @ V::Doc(_)) => Ok(v),
    other => Err(format!("root is {other:?}")),
  }
}

// ---------------------------------------------------------------------------
// Decode

pub struct DecodeState {
  cache: DecodeCache,
  js: JsSide,
}

thread_local! {
  static DECODE: RefCell<DecodeState> = RefCell::new(DecodeState { cache: DecodeCache::new(), js: JsSide::default() });
  static ROUNDTRIP: RefCell<(DecodeState, Encoder)> =
    RefCell::new((DecodeState { cache: DecodeCache::new(), js: JsSide::default() }, Encoder::new()));
}

const NAMES: [&[u8]; 8] = [b"a", b"b", b"0", b"1", b"x", b"$ref", b"\xc3\xa9", b""];

fn pick_names(mask: u8) -> Vec<Vec<u8>> {
  NAMES.iter().enumerate().filter(|(i, _)| mask & (1 << i) != 0).map(|(_, n)| n.to_vec()).collect()
}

/// Upper bounds on the scratch a document of `len` bytes may ask for: the JS
/// side allocates what Rust asks for, so this must stay linear and small.
fn scratch_bound(len: usize) -> (usize, usize) {
  (4 * len + 16, len / 4 + 2)
}

/// One decode as the binding does it, with the retry on `NeedSpace`.
/// Returns the final outcome and the scratch it was written to.
pub fn decode_with_retry(st: &mut DecodeState, req: &Request, ops_len: usize, nums_len: usize) -> (Outcome, Vec<u32>, Vec<u64>) {
  let mut ops = vec![0u32; ops_len];
  let mut nums = vec![0u64; nums_len];
  let mut out = st.cache.decode(req, &mut ops, &mut nums);
  if let Outcome::NeedSpace { ops: o, nums: n } = out {
    if ops.len() >= 2 {
      assert_eq!((ops[0] as usize, ops[1] as usize), (o, n), "NeedSpace sizes not written to the scratch");
    }
    let (bo, bn) = scratch_bound(req.input.len());
    assert!(o <= bo && n <= bn, "NeedSpace asks for {o} words / {n} numbers for {} input bytes", req.input.len());
    assert!(o > ops.len() || n > nums.len(), "NeedSpace although the scratch is big enough");
    // JS grows each scratch to at least what was asked (it never shrinks here).
    ops = vec![0u32; o.max(ops.len())];
    nums = vec![0u64; n.max(nums.len())];
    out = st.cache.decode(req, &mut ops, &mut nums);
    assert!(!matches!(out, Outcome::NeedSpace { .. }), "second NeedSpace after growing the scratch: {out:?} (first asked for {o}/{n})");
  }
  (out, ops, nums)
}

fn check_spans(cache: &DecodeCache, input: &[u8], spans: &[decode::Span]) {
  let mut units = Vec::new();
  for s in spans {
    if s.kind == SPAN_KEY {
      assert!((s.start as usize) < cache.keys.len(), "key span {s:?} of an undefined key");
    } else {
      assert!(s.start <= s.end && s.end as usize <= input.len(), "span {s:?} outside the input ({})", input.len());
      // a valid UTF-8 string becomes the binding's UTF-16 (src/decode.rs make_string) as std makes it
      let bytes = &input[s.start as usize..s.end as usize];
      if s.kind == utf8::UTF8 {
        let text = std::str::from_utf8(bytes).expect("a UTF8 span holds valid UTF-8");
        utf8::to_utf16(bytes, &mut units);
        assert!(units.iter().copied().eq(text.encode_utf16()), "to_utf16 of {text:?}");
      }
    }
  }
}

/// The `decode` target (`walk`: also the `decode_tape_walk` checks).
pub fn decode(data: &[u8], walk_tape: bool) {
  let mut r = Input::new(data);
  let f0 = r.u8();
  let f1 = r.u8();
  let f2 = r.u8();
  // (bit 7 of the second byte: the recursive readers' checks, bson 6.x / 7.0-7.2)
  let flags = f0 as u32 | ((f1 & 1) as u32) << 8 | if f1 & 0x80 != 0 { flag::RECURSIVE } else { 0 };
  let raw_names = if f1 & 2 != 0 { Some(pick_names(f2)) } else { None };
  let utf8_names = if f1 & 1 != 0 { pick_names(f2.rotate_left(4)) } else { Vec::new() };
  let index = if f1 & 4 != 0 { ((f1 >> 3) & 7) as usize } else { 0 };
  let input = r.rest();
  let (ops_len, nums_len) = if f1 & 0x40 != 0 { ((f2 & 15) as usize, (f2 >> 4) as usize) } else { (64 + 4 * input.len(), 16 + input.len() / 4) };
  let req = Request { input, index, flags, raw_names: raw_names.as_deref(), utf8_names: &utf8_names };
  DECODE.with(|st| {
    let st = &mut *st.borrow_mut();
    let (out, ops, nums) = decode_with_retry(st, &req, ops_len, nums_len);
    match out {
      Outcome::Done(total) => {
        let spans: Vec<_> = st.cache.spans().copied().collect();
        check_spans(&st.cache, input, &spans);
        if walk_tape {
          if let Err(e) = walk(&st.cache, &mut st.js, input, &ops, &nums, total) {
            panic!("tape walk failed: {e}\nflags {flags:#x}, index {index}\ntape {:?}", &ops[..total.min(ops.len()).min(200)]);
          }
        }
        st.cache.commit();
      }
      Outcome::Error(_) => {
        let spans = st.cache.error_regex_spans().to_vec();
        assert!(spans.len() % 2 == 0, "odd number of regex spans");
        check_spans(&st.cache, input, &spans);
      }
      Outcome::NeedSpace { .. } => unreachable!(),
    }
  });
}

// ---------------------------------------------------------------------------
// Encode: generated documents

/// A generated element value (what the JS walk would have seen).
#[derive(Debug, Clone)]
pub enum G {
  Double(u64),
  Str(Vec<u8>),
  Doc(Vec<(Vec<u8>, G)>),
  /// `None`: an element the walk skipped (SKIP op; the index still advances).
  Arr(Vec<Option<G>>),
  Bin(u8, Vec<u8>),
  Oid([u8; 12]),
  Bool(bool),
  Date(u64),
  Null,
  Regex(Vec<u8>, Vec<u8>),
  Code(Vec<u8>),
  Symbol(Vec<u8>),
  Cws(Vec<u8>, Vec<(Vec<u8>, G)>),
  Int32(i32),
  Ts([u8; 8]),
  Int64(i64),
  Dec([u8; 16]),
  Max,
  Min,
}

struct Gen<'a, 'b> {
  r: &'b mut Input<'a>,
  nodes: usize,
}

const KEYS: [&str; 10] = ["a", "_id", "name", "0", "$ref", "$id", "__proto__", "é", "a.b", "a_rather_long_key_name_that_is_longer_than_forty_bytes"];

impl Gen<'_, '_> {
  fn text(&mut self, no_nul: bool) -> Vec<u8> {
    let n = match self.r.u8() {
      x if x < 200 => (x % 12) as usize,
      x if x < 250 => (x % 50) as usize,
      _ => 100 + self.r.u8() as usize * 2,
    };
    let raw = self.r.take(n);
    let mut s = lossy(raw);
    if no_nul {
      s.retain(|&c| c != 0);
    }
    s
  }

  fn key(&mut self) -> Vec<u8> {
    let x = self.r.u8();
    if x < 160 {
      KEYS[(x % 10) as usize].as_bytes().to_vec()
    } else {
      self.text(true)
    }
  }

  fn fields(&mut self, depth: usize) -> Vec<(Vec<u8>, G)> {
    let n = (self.r.u8() % 8) as usize;
    let mut v = Vec::new();
    for _ in 0..n {
      if self.r.done() || self.nodes > 400 {
        break;
      }
      let k = self.key();
      let val = self.value(depth);
      v.push((k, val));
    }
    v
  }

  fn value(&mut self, depth: usize) -> G {
    self.nodes += 1;
    let deep_ok = depth < 64 && self.nodes < 400;
    match self.r.u8() % 22 {
      0 => G::Double(self.r.u64()),
      1 | 2 => G::Str(self.text(false)),
      3 if deep_ok => G::Doc(self.fields(depth + 1)),
      4 if deep_ok => {
        let n = (self.r.u8() % 12) as usize;
        let mut a = Vec::new();
        for _ in 0..n {
          if self.r.done() {
            break;
          }
          a.push(if self.r.u8() < 20 { None } else { Some(self.value(depth + 1)) });
        }
        G::Arr(a)
      }
      5 => {
        let sub = self.r.u8();
        let n = (self.r.u8() % 40) as usize;
        G::Bin(sub, self.r.take(n).to_vec())
      }
      6 => G::Oid(self.r.arr()),
      7 => G::Bool(self.r.bool()),
      8 => G::Date(match self.r.u8() % 4 {
        0 => self.r.u64(),
        1 => ((self.r.u64() as i64 >> 20) as f64).to_bits(),
        2 => [f64::NAN, f64::INFINITY, -1e300, 9.3e18, -9.3e18, -0.5, 8.64e15][(self.r.u8() % 7) as usize].to_bits(),
        _ => (self.r.u32() as f64 * 1000.0).to_bits(),
      }),
      9 => G::Null,
      10 => {
        let p = self.text(true);
        let o = self.text(true);
        G::Regex(p, o)
      }
      11 => G::Code(self.text(false)),
      12 => G::Symbol(self.text(false)),
      13 if deep_ok => {
        let c = self.text(false);
        G::Cws(c, self.fields(depth + 1))
      }
      14 => G::Int32(self.r.u32() as i32),
      15 => G::Ts(self.r.arr()),
      16 => G::Int64(self.r.u64() as i64),
      17 => G::Dec(self.r.arr()),
      18 => G::Max,
      19 => G::Min,
      _ => G::Int32((self.r.u8() as i8) as i32),
    }
  }
}

/// An encode tape with its arguments.
#[derive(Default, Debug, Clone)]
pub struct Tape {
  pub ops: Vec<u32>,
  pub nums: Vec<u8>,
  pub bytes: Vec<u8>,
  pub args: Vec<OwnedArg>,
  /// key id → key bytes, given to `define_key` before the run
  pub defined: Vec<(usize, Vec<u8>)>,
}

struct TapeWriter<'a, 'b> {
  r: &'b mut Input<'a>,
  t: Tape,
}

impl TapeWriter<'_, '_> {
  fn key_ref(&mut self, key: &[u8], in_array: bool) -> u32 {
    if in_array {
      // ignored by the encoder; JS sends 0, but any value must do
      return if self.r.u8() < 240 { 0 } else { 1 + (self.r.u8() as u32 % 40) };
    }
    let x = self.r.u8();
    if x < 80 {
      self.t.args.push(OwnedArg::Str(key.to_vec()));
      return 0;
    }
    let id = if x > 250 { encode::MAX_KEYS - 1 - (x as usize - 250) } else { (x % 48) as usize };
    match self.t.defined.iter().find(|(i, _)| *i == id) {
      Some((_, k)) if k == key => {}
      Some(_) => {
        self.t.args.push(OwnedArg::Str(key.to_vec()));
        return 0;
      }
      None => self.t.defined.push((id, key.to_vec())),
    }
    id as u32 + 1
  }

  fn slot(&mut self, b: [u8; 8]) {
    self.t.nums.extend_from_slice(&b);
  }

  fn fields(&mut self, fields: &[(Vec<u8>, G)]) {
    for (k, v) in fields {
      let kr = self.key_ref(k, false);
      self.value(kr, v);
    }
    self.t.ops.push(eop::END);
  }

  fn value(&mut self, kr: u32, v: &G) {
    let w = |code: u32| code | kr << 8;
    match v {
      G::Double(x) => {
        self.t.ops.push(w(eop::DOUBLE));
        self.slot(x.to_le_bytes());
      }
      G::Str(s) => {
        if self.r.bool() {
          self.t.ops.push(w(eop::STRING));
          self.t.args.push(OwnedArg::Str(s.clone()));
        } else {
          self.t.ops.push(w(eop::STRING_BYTES));
          let mut b = [0u8; 8];
          b[..4].copy_from_slice(&(s.len() as u32).to_le_bytes());
          b[4..].copy_from_slice(&self.r.arr::<4>());
          self.slot(b);
          self.t.bytes.extend_from_slice(s);
        }
      }
      G::Doc(f) => {
        self.t.ops.push(w(eop::DOC));
        self.fields(f);
      }
      G::Arr(a) => {
        self.t.ops.push(w(eop::ARRAY));
        for e in a {
          match e {
            None => self.t.ops.push(eop::SKIP),
            Some(e) => {
              let kr = self.key_ref(b"", true);
              self.value(kr, e);
            }
          }
        }
        self.t.ops.push(eop::END);
      }
      G::Bin(sub, data) => {
        self.t.ops.push(w(eop::BINARY));
        let mut b = [0u8; 8];
        b[..4].copy_from_slice(&(data.len() as i32).to_le_bytes());
        b[4..].copy_from_slice(&(*sub as i32).to_le_bytes());
        self.slot(b);
        // The argument may be longer than the length to write (the rest is
        // ignored) or shorter when the tail is zeros (written as zeros).
        let x = self.r.u8();
        let mut arg = data.clone();
        if x < 40 {
          arg.extend_from_slice(self.r.take((x % 8) as usize));
        } else if x < 80 {
          while arg.last() == Some(&0) {
            arg.pop();
          }
        }
        self.t.args.push(OwnedArg::Bytes(arg));
      }
      G::Oid(o) => {
        if self.r.bool() {
          self.t.ops.push(w(eop::OID));
          self.t.bytes.extend_from_slice(o);
        } else {
          self.t.ops.push(w(eop::OID_INTS));
          for c in o.chunks(3) {
            // 24-bit int, big-endian bytes; the top byte of the i32 is ignored
            let hi = self.r.u8() & if self.r.bool() { 0xff } else { 0 };
            self.t.nums.extend_from_slice(&[c[2], c[1], c[0], hi]);
          }
        }
      }
      G::Bool(b) => self.t.ops.push(w(if *b { eop::TRUE } else { eop::FALSE })),
      G::Date(x) => {
        self.t.ops.push(w(eop::DATE));
        self.slot(x.to_le_bytes());
      }
      G::Null => self.t.ops.push(w(eop::NULL)),
      G::Regex(p, o) => {
        self.t.ops.push(w(eop::REGEX));
        self.t.args.push(OwnedArg::Str(p.clone()));
        self.t.args.push(OwnedArg::Str(o.clone()));
      }
      G::Code(s) | G::Symbol(s) => {
        self.t.ops.push(w(if matches!(v, G::Code(_)) { eop::CODE } else { eop::SYMBOL }));
        self.t.args.push(OwnedArg::Str(s.clone()));
      }
      G::Cws(c, f) => {
        self.t.ops.push(w(eop::CODE_W_SCOPE));
        self.t.args.push(OwnedArg::Str(c.clone()));
        self.fields(f);
      }
      G::Int32(i) => {
        self.t.ops.push(w(eop::INT32));
        let mut b = [0u8; 8];
        b[..4].copy_from_slice(&i.to_le_bytes());
        b[4..].copy_from_slice(&self.r.arr::<4>());
        self.slot(b);
      }
      G::Ts(b) => {
        self.t.ops.push(w(eop::TIMESTAMP));
        self.slot(*b);
      }
      G::Int64(i) => {
        self.t.ops.push(w(eop::INT64));
        self.slot(i.to_le_bytes());
      }
      G::Dec(d) => {
        self.t.ops.push(w(eop::DECIMAL128));
        self.t.bytes.extend_from_slice(d);
      }
      G::Max => self.t.ops.push(w(eop::MAXKEY)),
      G::Min => self.t.ops.push(w(eop::MINKEY)),
    }
  }
}

/// Independent reference serializer (the bytes the encoder must produce).
fn reference(fields: &[(Vec<u8>, G)]) -> Vec<u8> {
  fn doc(out: &mut Vec<u8>, elems: &mut dyn Iterator<Item = (Vec<u8>, &G)>) {
    let start = out.len();
    out.extend_from_slice(&[0; 4]);
    for (k, v) in elems {
      elem(out, &k, v);
    }
    out.push(0);
    let n = (out.len() - start) as i32;
    out[start..start + 4].copy_from_slice(&n.to_le_bytes());
  }
  fn string(out: &mut Vec<u8>, s: &[u8]) {
    out.extend_from_slice(&((s.len() + 1) as i32).to_le_bytes());
    out.extend_from_slice(s);
    out.push(0);
  }
  fn elem(out: &mut Vec<u8>, k: &[u8], v: &G) {
    let t: u8 = match v {
      G::Double(_) => 1,
      G::Str(_) => 2,
      G::Doc(_) => 3,
      G::Arr(_) => 4,
      G::Bin(..) => 5,
      G::Oid(_) => 7,
      G::Bool(_) => 8,
      G::Date(_) => 9,
      G::Null => 10,
      G::Regex(..) => 11,
      G::Code(_) => 13,
      G::Symbol(_) => 14,
      G::Cws(..) => 15,
      G::Int32(_) => 16,
      G::Ts(_) => 17,
      G::Int64(_) => 18,
      G::Dec(_) => 19,
      G::Max => 0x7f,
      G::Min => 0xff,
    };
    out.push(t);
    out.extend_from_slice(k);
    out.push(0);
    match v {
      G::Double(x) => out.extend_from_slice(&x.to_le_bytes()),
      G::Str(s) | G::Code(s) | G::Symbol(s) => string(out, s),
      G::Doc(f) => doc(out, &mut f.iter().map(|(k, v)| (k.clone(), v))),
      G::Arr(a) => doc(out, &mut a.iter().enumerate().filter_map(|(i, v)| v.as_ref().map(|v| (i.to_string().into_bytes(), v)))),
      G::Bin(sub, d) => {
        if *sub == 2 {
          out.extend_from_slice(&((d.len() + 4) as i32).to_le_bytes());
          out.push(2);
          out.extend_from_slice(&(d.len() as i32).to_le_bytes());
        } else {
          out.extend_from_slice(&(d.len() as i32).to_le_bytes());
          out.push(*sub);
        }
        out.extend_from_slice(d);
      }
      G::Oid(o) => out.extend_from_slice(o),
      G::Bool(b) => out.push(*b as u8),
      G::Date(x) => out.extend_from_slice(&encode::long_from_number(f64::from_bits(*x)).to_le_bytes()),
      G::Null | G::Max | G::Min => {}
      G::Regex(p, o) => {
        out.extend_from_slice(p);
        out.push(0);
        out.extend_from_slice(o);
        out.push(0);
      }
      G::Cws(c, f) => {
        let start = out.len();
        out.extend_from_slice(&[0; 4]);
        string(out, c);
        doc(out, &mut f.iter().map(|(k, v)| (k.clone(), v)));
        let n = (out.len() - start) as i32;
        out[start..start + 4].copy_from_slice(&n.to_le_bytes());
      }
      G::Int32(i) => out.extend_from_slice(&i.to_le_bytes()),
      G::Ts(b) => out.extend_from_slice(b),
      G::Int64(i) => out.extend_from_slice(&i.to_le_bytes()),
      G::Dec(d) => out.extend_from_slice(d),
    }
  }
  let mut out = Vec::new();
  doc(&mut out, &mut fields.iter().map(|(k, v)| (k.clone(), v)));
  out
}

/// What the decoder must give back with promoteValues off (flags 0).
fn expected(v: &G) -> V {
  match v {
    G::Double(x) => V::Double(*x),
    G::Str(s) => V::Str(s.clone()),
    G::Doc(f) => expected_doc(f),
    G::Arr(a) => V::Arr(a.iter().flatten().map(expected).collect()),
    G::Bin(sub, d) => V::Bin(*sub, d.clone()),
    G::Oid(o) => V::Oid(*o),
    G::Bool(b) => V::Bool(*b),
    G::Date(x) => {
      let l = encode::long_from_number(f64::from_bits(*x));
      V::Date((((l >> 32) as i32 as f64) * 4294967296.0 + (l as u32 as f64)).to_bits())
    }
    G::Null => V::Null,
    G::Regex(p, o) => V::Regex(0, p.clone(), o.clone()),
    G::Code(s) => V::Code(s.clone()),
    G::Symbol(s) => V::Symbol(s.clone()),
    G::Cws(c, f) => V::Cws(c.clone(), Box::new(expected_doc(f))),
    G::Int32(i) => V::Int32((*i as f64).to_bits()),
    G::Ts(b) => V::Ts(*b),
    G::Int64(i) => V::Long(*i as u64),
    G::Dec(d) => V::Dec(*d),
    G::Max => V::Max,
    G::Min => V::Min,
  }
}

fn expected_doc(f: &[(Vec<u8>, G)]) -> V {
  V::Doc(f.iter().map(|(k, v)| (k.clone(), expected(v))).collect())
}

/// Runs the encoder over `chunks` of arguments into an output of `size` bytes.
/// `Ok((step, chunks_used))`.
fn run_chunks(enc: &mut Encoder, t: &Tape, chunks: &[Vec<OwnedArg>], size: usize) -> Result<(Step, usize, Vec<u8>), String> {
  let mut out = vec![0xAAu8; size];
  enc.begin();
  for (i, c) in chunks.iter().enumerate() {
    let mut c = c.clone();
    match enc.run(&t.ops, &t.nums, &t.bytes, &mut out, c.as_mut_slice())? {
      Step::NeedMore => continue,
      step => return Ok((step, i + 1, out)),
    }
  }
  Ok((Step::NeedMore, chunks.len(), out))
}

fn split(r: &mut Input, args: &[OwnedArg]) -> Vec<Vec<OwnedArg>> {
  let mut chunks = Vec::new();
  let mut i = 0;
  let mode = r.u8();
  loop {
    let n = match mode % 4 {
      _ if chunks.len() >= 32 || r.done() => args.len(),
      0 => args.len(),
      1 => 1,
      // empty chunks too (they must just give NeedMore again)
      _ => (r.u8() % 6) as usize,
    };
    let end = (i + n).min(args.len());
    chunks.push(args[i..end].to_vec());
    i = end;
    if i >= args.len() {
      break;
    }
  }
  chunks
}

/// Bound on the output the fuzzer allocates after `TooSmall`.
const MAX_OUT: usize = 1 << 22;

/// Runs a malformed tape: any `Result`, no panic; a document it produces is decoded too.
fn run_malformed(enc: &mut Encoder, dec: &mut DecodeState, t: &Tape, chunks: &[Vec<OwnedArg>], size: usize) {
  for (id, k) in &t.defined {
    let _ = enc.define_key(*id, k);
  }
  let mut size = size;
  for _ in 0..2 {
    match run_chunks(enc, t, chunks, size) {
      Ok((Step::TooSmall(n), _, _)) if n <= MAX_OUT => size = n,
      Ok((Step::Done(n), _, out)) => {
        assert!(n <= out.len());
        let input = &out[..n];
        let req = Request { input, index: 0, flags: 0, raw_names: None, utf8_names: &[] };
        let (o, ops, nums) = decode_with_retry(dec, &req, 64, 16);
        if let Outcome::Done(total) = o {
          if let Err(e) = walk(&dec.cache, &mut dec.js, input, &ops, &nums, total) {
            panic!("tape walk failed on an encoder output: {e}");
          }
          dec.cache.commit();
        }
        return;
      }
      _ => return,
    }
  }
}

fn mutate(r: &mut Input, t: &mut Tape) {
  for _ in 0..1 + r.u8() % 3 {
    let x = r.u8();
    let pick = |n: usize, r: &mut Input| if n == 0 { 0 } else { r.u32() as usize % n };
    match x % 9 {
      0 if !t.ops.is_empty() => {
        let i = pick(t.ops.len(), r);
        t.ops[i] = r.u32() & 0xffff_ffff;
      }
      1 if !t.ops.is_empty() => {
        let i = pick(t.ops.len(), r);
        t.ops[i] = (t.ops[i] & 0xff) | (r.u8() as u32 % 64) << 8;
      }
      2 => {
        let i = pick(t.ops.len() + 1, r);
        t.ops.truncate(i);
      }
      3 => {
        let i = pick(t.nums.len() + 1, r);
        t.nums.truncate(i);
      }
      4 => {
        let i = pick(t.bytes.len() + 1, r);
        t.bytes.truncate(i);
      }
      5 if !t.args.is_empty() => {
        let i = pick(t.args.len(), r);
        t.args.remove(i);
      }
      6 if !t.args.is_empty() => {
        let i = pick(t.args.len(), r);
        t.args[i] = match &t.args[i] {
          OwnedArg::Str(s) => OwnedArg::Bytes(s.clone()),
          OwnedArg::Bytes(b) => OwnedArg::Str(b.clone()),
        };
      }
      7 if !t.nums.is_empty() => {
        let i = pick(t.nums.len(), r);
        t.nums[i] = r.u8();
      }
      _ => {
        let i = pick(t.ops.len() + 1, r);
        let codes = [0u32, 1, 2, 3, 4, 5, 7, 8, 9, 0x0a, 0x0b, 0x0d, 0x0e, 0x0f, 0x10, 0x11, 0x12, 0x13, 0x18, 0x20, 0x22, 0x23, 0x7f, 0xff];
        let c = codes[(r.u8() as usize) % codes.len()];
        t.ops.insert(i, c | (r.u8() as u32 % 4) << 8);
      }
    }
  }
}

/// A tape read straight from the input (no structure at all).
fn raw_tape(r: &mut Input) -> Tape {
  let mut t = Tape::default();
  let nops = (r.u8() % 64) as usize;
  let codes = [0u32, 1, 2, 3, 4, 5, 7, 8, 9, 0x0a, 0x0b, 0x0d, 0x0e, 0x0f, 0x10, 0x11, 0x12, 0x13, 0x18, 0x20, 0x22, 0x23, 0x7f, 0xff];
  for _ in 0..nops {
    let x = r.u8();
    let code = if x < 200 { codes[(x as usize) % codes.len()] } else { x as u32 };
    let kr = match r.u8() % 4 {
      0 => 0,
      1 => 1,
      2 => r.u8() as u32,
      _ => r.u32() >> 8,
    };
    t.ops.push(code | kr << 8);
  }
  let nn = (r.u8() % 96) as usize;
  t.nums = r.take(nn).to_vec();
  let nb = (r.u8() % 96) as usize;
  t.bytes = r.take(nb).to_vec();
  for _ in 0..r.u8() % 8 {
    let n = (r.u8() % 16) as usize;
    let b = r.take(n).to_vec();
    t.args.push(if r.bool() { OwnedArg::Str(b) } else { OwnedArg::Bytes(b) });
  }
  t.defined.push((0, b"k".to_vec()));
  t.defined.push((1, r.take(12).to_vec()));
  t
}

/// The `encode_roundtrip` target.
pub fn encode_roundtrip(data: &[u8]) {
  let mut r = Input::new(data);
  let mode = r.u8() % 8;
  ROUNDTRIP.with(|cell| {
    let (dec, enc) = &mut *cell.borrow_mut();
    if mode == 7 {
      let t = raw_tape(&mut r);
      let chunks = split(&mut r, &t.args);
      let size = r.u8() as usize * 2;
      run_malformed(enc, dec, &t, &chunks, size);
      return;
    }
    let root = {
      let mut g = Gen { r: &mut r, nodes: 0 };
      g.fields(0)
    };
    let mut tw = TapeWriter { r: &mut r, t: Tape::default() };
    tw.fields(&root);
    let mut t = tw.t;
    // Slack at the end of the number/byte tapes (the scratch is reused: junk).
    let pad = r.u8();
    if pad & 1 != 0 {
      t.bytes.extend(std::iter::repeat(0xEE).take((pad >> 1) as usize));
    }
    if pad & 0x80 != 0 {
      t.nums.extend_from_slice(&[0x55; 24]);
    }
    let size_mode = r.u8();
    let chunks_r = r.u8();
    if mode >= 5 {
      mutate(&mut r, &mut t);
      let chunks = split(&mut Input::new(&[chunks_r, r.u8(), r.u8(), r.u8()]), &t.args);
      run_malformed(enc, dec, &t, &chunks, if size_mode & 1 != 0 { 1 << 16 } else { size_mode as usize });
      return;
    }
    let chunks = split(&mut r, &t.args);
    let want = reference(&root);
    for (id, k) in &t.defined {
      enc.define_key(*id, k).expect("define_key");
    }
    let size = match size_mode % 4 {
      0 => 1 << 16,
      1 => size_mode as usize / 4,
      2 => want.len().saturating_sub(1 + (size_mode as usize >> 2) % 8),
      _ => want.len() + (size_mode as usize >> 2),
    };
    let last = chunks.iter().rposition(|c| !c.is_empty()).map_or(1, |i| i + 1);
    let finish = |enc: &mut Encoder, size: usize| -> (Step, Vec<u8>) {
      let (step, used, out) = match run_chunks(enc, &t, &chunks, size) {
        Ok(x) => x,
        Err(e) => panic!("encoder refused a well-formed tape: {e}\nroot {root:?}\ntape {t:?}"),
      };
      assert!(step != Step::NeedMore, "NeedMore after the last chunk");
      assert!(used >= last, "finished after {used} of {last} argument chunks (arguments left over)");
      (step, out)
    };
    let (mut step, mut out) = finish(enc, size);
    if let Step::TooSmall(n) = step {
      assert!(n > size, "TooSmall({n}) for an output of {size}");
      assert_eq!(n, want.len(), "TooSmall size differs from the document size");
      (step, out) = finish(enc, n);
      assert_eq!(step, Step::Done(n), "retry with the size TooSmall asked for");
    }
    let Step::Done(n) = step else { panic!("{step:?}") };
    let got = &out[..n];
    if got != want.as_slice() {
      let at = got.iter().zip(&want).position(|(a, b)| a != b).unwrap_or(n.min(want.len()));
      panic!("encoder output differs from the reference at byte {at} (len {n} vs {})\nroot {root:?}\ngot  {got:?}\nwant {want:?}", want.len());
    }
    // Decode it back (promoteValues off: every type visible).
    let small = r.bool();
    let req = Request { input: got, index: 0, flags: 0, raw_names: None, utf8_names: &[] };
    let (o, ops, nums) = decode_with_retry(dec, &req, if small { 8 } else { 4 * n + 64 }, if small { 2 } else { n });
    let Outcome::Done(total) = o else { panic!("encoder output does not decode: {o:?}\nroot {root:?}\nbytes {got:?}") };
    let v = walk(&dec.cache, &mut dec.js, got, &ops, &nums, total).unwrap_or_else(|e| panic!("tape walk failed: {e}"));
    dec.cache.commit();
    let exp = expected_doc(&root);
    assert_eq!(v, exp, "decoded value differs\nbytes {got:?}");
    // And with other options: the tape must still be consistent.
    let flags = (r.u8() as u32) & !flag::RAW | if r.u8() < 16 { flag::RAW } else { 0 };
    let req = Request { input: got, index: 0, flags, raw_names: None, utf8_names: &[] };
    let (o, ops, nums) = decode_with_retry(dec, &req, 16, 4);
    match o {
      Outcome::Done(total) => {
        walk(&dec.cache, &mut dec.js, got, &ops, &nums, total).unwrap_or_else(|e| panic!("tape walk failed (flags {flags:#x}): {e}"));
        dec.cache.commit();
      }
      // utf8 validation of a lossy-replaced string cannot fail; the only
      // errors here come from options js-bson also rejects on this input.
      Outcome::Error(e) => {
        if flags & flag::USE_BIGINT64 == 0 || !matches!(e, decode::DecodeError::Range(_)) {
          panic!("valid document fails with flags {flags:#x}: {e:?}\nbytes {got:?}");
        }
      }
      Outcome::NeedSpace { .. } => unreachable!(),
    }
  });
}
