//! BSON reader: validates a document and writes the decode tape
//! (format in ARCHITECTURE.md, "Decode tape").
//!
//! The reader is a port of js-bson 7.3.4's `internalDeserialize` +
//! `deserializeObject`: the same checks, in the same order, with the same
//! messages. Where js-bson reads past the end of the buffer (a typed array
//! read gives `undefined`), the helpers below reproduce what the JS code
//! computes from it (`undefined | 0` is 0, `undefined + n` is NaN), without
//! ever reading out of bounds. It is iterative: nesting depth only costs
//! heap-allocated frames.

use crate::keys::Keys;
use crate::shapes::{Shapes, NONE, ROOT};
use crate::utf8;

/// Tape op codes (low byte of a word).
pub mod op {
  pub const NUM: u32 = 0x01;
  pub const STR: u32 = 0x02;
  pub const TRUE: u32 = 0x03;
  pub const FALSE: u32 = 0x04;
  pub const NULL: u32 = 0x05;
  pub const UNDEFINED: u32 = 0x06;
  pub const INT32_OBJ: u32 = 0x07;
  pub const DOUBLE_OBJ: u32 = 0x08;
  pub const DATE: u32 = 0x09;
  pub const LONG_OBJ: u32 = 0x0A;
  pub const BIGINT: u32 = 0x0B;
  pub const OID: u32 = 0x0C;
  pub const DECIMAL128: u32 = 0x0D;
  pub const BINARY: u32 = 0x0E;
  pub const REGEXP: u32 = 0x0F;
  pub const SYMBOL: u32 = 0x10;
  pub const TIMESTAMP: u32 = 0x11;
  pub const MINKEY: u32 = 0x12;
  pub const MAXKEY: u32 = 0x13;
  pub const CODE: u32 = 0x14;
  pub const DBPOINTER: u32 = 0x15;
  pub const RAW: u32 = 0x16;
  pub const OBJ: u32 = 0x20;
  pub const OBJ_DBREF: u32 = 0x21;
  pub const OBJ_GENERIC: u32 = 0x22;
  pub const OBJ_GENERIC_DBREF: u32 = 0x23;
  pub const ARRAY: u32 = 0x24;
  pub const CODE_W_SCOPE: u32 = 0x25;
  pub const ARRAY_NUMS: u32 = 0x26;
  pub const ARRAY_INTS: u32 = 0x27;
  pub const STR_CACHED: u32 = 0x17;
  pub const DEF_KEY: u32 = 0x30;
  pub const DEF_SHAPE: u32 = 0x31;
  pub const DEF_STR: u32 = 0x32;
}

/// Decode flags (see ARCHITECTURE.md).
pub mod flag {
  pub const PROMOTE_LONGS: u32 = 1;
  pub const PROMOTE_VALUES: u32 = 2;
  pub const PROMOTE_BUFFERS: u32 = 4;
  pub const USE_BIGINT64: u32 = 8;
  pub const BSON_REGEXP: u32 = 16;
  pub const RAW: u32 = 32;
  pub const ALLOW_SMALLER: u32 = 64;
  pub const UTF8: u32 = 128;
  pub const UTF8_MAP: u32 = 256;
}

/// `Span::kind` of a key-table string (`start` is the key id).
pub const SPAN_KEY: u8 = 3;

/// A string for JS: `input[start..end]` decoded per `kind` (utf8::ASCII,
/// UTF8 or LOSSY), or key `start` of the key table when `kind == SPAN_KEY`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Span {
  pub start: u32,
  pub end: u32,
  pub kind: u8,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DecodeError {
  /// JS throws `new BSONError(message)`.
  Bson(String),
  /// JS throws `new RangeError(message)` (js-bson's BigInt(NaN) on a truncated int64).
  Range(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
  /// Tape complete: total words used in `ops` (header + body + definitions).
  Done(usize),
  /// Scratch too small: words and number slots needed (also written to ops[0], ops[1]).
  NeedSpace { ops: usize, nums: usize },
  Error(DecodeError),
}

pub struct Request<'a> {
  pub input: &'a [u8],
  pub index: usize,
  pub flags: u32,
  /// Names with a truthy `fieldsAsRaw[name]`; `None` when `fieldsAsRaw` is null.
  pub raw_names: Option<&'a [Vec<u8>]>,
  /// Keys of the per-key `validation.utf8` map (with `flag::UTF8_MAP`).
  pub utf8_names: &'a [Vec<u8>],
}

const K_ROOT: u8 = 0;
const K_OBJ: u8 = 1;
const K_ARR: u8 = 2;
const K_CWS: u8 = 3;

const DB_NULL: u8 = 0;
const DB_TRUE: u8 = 1;
const DB_FALSE: u8 = 2;

#[derive(Clone, Copy)]
struct Frame {
  kind: u8,
  raw: bool,
  dbref: u8,
  validate: bool,
  last_index: i64,
  array_index: u32,
  node: u32,
  n: u32,
  key_start: u32,
}

impl Frame {
  /// A parsed (not raw) embedded document or code-with-scope scope ending at `last_index`.
  fn document(kind: u8, validate: bool, last_index: i64, key_start: u32) -> Self {
    Frame { kind, raw: false, dbref: DB_NULL, validate, last_index, array_index: 0, node: ROOT, n: 0, key_start }
  }
}

#[derive(Clone, Copy)]
struct KeyRef {
  id: u32,
  start: u32,
  end: u32,
}

/// Slots of the short-string value cache (a power of two).
pub const VCACHE_SLOTS: usize = 4096;
/// Longest string value (bytes) kept in the value cache.
pub const VCACHE_MAX_LEN: usize = 32;

/// One slot of the direct-mapped cache of short string values: repeated
/// values (enum-like strings) are created once and reused by JS.
#[derive(Clone, Copy)]
struct VSlot {
  bytes: [u8; VCACHE_MAX_LEN],
  len: u8,
  used: bool,
  known: bool,
  epoch: u32,
}

#[inline(always)]
fn read8(b: &[u8], i: usize) -> u64 {
  b.get(i..i.wrapping_add(8)).and_then(|s| <[u8; 8]>::try_from(s).ok()).map_or(0, u64::from_le_bytes)
}

#[inline(always)]
fn read4(b: &[u8], i: usize) -> u64 {
  b.get(i..i.wrapping_add(4)).and_then(|s| <[u8; 4]>::try_from(s).ok()).map_or(0, u32::from_le_bytes) as u64
}

/// Slice equality without a `memcmp` call for short keys (overlapping word reads).
#[inline(always)]
fn short_eq(a: &[u8], b: &[u8]) -> bool {
  let n = a.len();
  if n != b.len() {
    return false;
  }
  if n >= 8 {
    if n <= 16 {
      read8(a, 0) == read8(b, 0) && read8(a, n - 8) == read8(b, n - 8)
    } else {
      a == b
    }
  } else if n >= 4 {
    read4(a, 0) == read4(b, 0) && read4(a, n - 4) == read4(b, n - 4)
  } else {
    a == b
  }
}

/// Slot of (node, key) in the recent-transitions table (a cache: collisions only cost a miss).
#[inline(always)]
fn transition_slot(node: u32, kb: &[u8]) -> usize {
  const K: u64 = 0x9e37_79b9_7f4a_7c15;
  let n = kb.len();
  let w = if n >= 8 { read8(kb, 0) ^ read8(kb, n - 8).rotate_left(29) } else if n >= 4 { read4(kb, 0) | read4(kb, n - 4) << 32 } else {
    kb.iter().fold(0u64, |a, &c| a << 8 | c as u64)
  };
  let h = (w ^ (node as u64) << 40 ^ n as u64).wrapping_mul(K);
  ((h ^ (h >> 31)).wrapping_mul(K) >> 52) as usize & (crate::shapes::RECENT_SLOTS - 1)
}

#[inline(always)]
fn short_hash(b: &[u8]) -> usize {
  const K: u64 = 0x9e37_79b9_7f4a_7c15;
  #[inline(always)]
  fn mix(h: u64, w: u64) -> u64 {
    let h = (h ^ w).wrapping_mul(K);
    h ^ (h >> 29)
  }
  let n = b.len();
  let mut h = (n as u64).wrapping_mul(K);
  if n >= 8 {
    let mut i = 0;
    while i + 8 <= n {
      h = mix(h, read8(b, i));
      i += 8;
    }
    if i < n {
      h = mix(h, read8(b, n - 8));
    }
  } else if n >= 4 {
    h = mix(h, read4(b, 0) | read4(b, n - 4) << 32);
  } else if n > 0 {
    let at = |i: usize| b.get(i).copied().unwrap_or(0) as u64;
    let w = at(0) | at(n / 2) << 8 | at(n - 1) << 16;
    h = mix(h, w);
  }
  // Top bits of a final multiply depend on every input bit.
  ((h ^ (h >> 32)).wrapping_mul(K) >> 52) as usize & (VCACHE_SLOTS - 1)
}

/// Caches that live as long as the environment (interned keys and shapes),
/// plus reusable work buffers.
pub struct DecodeCache {
  pub keys: Keys,
  pub shapes: Shapes,
  epoch: u32,
  frames: Vec<Frame>,
  key_stack: Vec<KeyRef>,
  body_spans: Vec<Span>,
  def_spans: Vec<Span>,
  defs: Vec<u32>,
  pending_keys: Vec<u32>,
  pending_shapes: Vec<u32>,
  /// Source/options spans of the regular expressions read so far: after an
  /// error, JS builds these first, because js-bson would have thrown a
  /// RegExp error before reaching the one found here.
  regex_spans: Vec<Span>,
  vcache: Vec<VSlot>,
  pending_strs: Vec<u32>,
  decodes_since_reset: u32,
  /// The last decode returned `NeedSpace`: the next one is its retry.
  retrying: bool,
  /// Objects of the current decode written generically whose key sequence
  /// may get a factory on the next decode (see `decode`, NeedSpace).
  promotable: usize,
}

/// Decodes between two resets of full key/shape caches (so a steady stream
/// of new keys starts over now and then instead of staying on the slow
/// generic path forever, without thrashing hot shapes).
pub const RESET_INTERVAL: u32 = 10_000;

struct Tape<'o> {
  ops: &'o mut [u32],
  w: usize,
  nums: &'o mut [u64],
  n: usize,
  /// Word index of the last NUM op, whose arg counts consecutive numbers.
  run_at: usize,
  run_len: u32,
  /// How many numbers at the end of the run came from int32 elements.
  run_ints: u32,
}

impl Tape<'_> {
  /// Closes an array of `n` values. When its values are the tail of the NUM
  /// run just written, the run is cut and JS builds the array straight from
  /// the numbers (ARRAY_NUMS), without going through its value stack.
  #[inline(always)]
  fn array(&mut self, n: u32) {
    if n > 0 && self.run_at.wrapping_add(1) == self.w && self.run_len >= n {
      let rest = self.run_len - n;
      if rest == 0 {
        self.w -= 1;
      } else if let Some(slot) = self.ops.get_mut(self.run_at) {
        *slot = op::NUM | rest << 8;
      }
      let ints = self.run_ints >= n;
      self.run_at = usize::MAX;
      self.run_len = 0;
      self.run_ints = 0;
      self.op(if ints { op::ARRAY_INTS } else { op::ARRAY_NUMS } | n << 8);
    } else {
      self.op(op::ARRAY);
      self.op(n);
    }
  }

  /// A plain number value: extends the NUM run just before, if any.
  #[inline(always)]
  fn number(&mut self, bits: u64, int32: bool) {
    if self.run_at.wrapping_add(1) == self.w && self.run_len < 0xff_ffff {
      self.run_len += 1;
      if let Some(slot) = self.ops.get_mut(self.run_at) {
        *slot = op::NUM | self.run_len << 8;
      }
    } else {
      self.run_at = self.w;
      self.run_len = 1;
      self.run_ints = 0;
      self.op(op::NUM | 1 << 8);
    }
    self.run_ints = if int32 { self.run_ints + 1 } else { 0 };
    self.num(bits);
  }

  #[inline(always)]
  fn op(&mut self, word: u32) {
    if let Some(slot) = self.ops.get_mut(self.w) {
      *slot = word;
    }
    self.w += 1;
  }

  #[inline(always)]
  fn num(&mut self, bits: u64) {
    if let Some(slot) = self.nums.get_mut(self.n) {
      *slot = bits;
    }
    self.n += 1;
  }
}

#[inline(always)]
fn byte(b: &[u8], i: i64) -> Option<u8> {
  if i >= 0 {
    b.get(i as usize).copied()
  } else {
    None
  }
}

/// js-bson `getInt32LE`: bytes past the end read as 0.
#[inline(always)]
fn i32_at(b: &[u8], i: i64) -> i32 {
  if i >= 0 {
    if let Some(s) = b.get(i as usize..(i as usize).wrapping_add(4)) {
      return i32::from_le_bytes([s[0], s[1], s[2], s[3]]);
    }
  }
  let mut v = [0u8; 4];
  for (k, slot) in v.iter_mut().enumerate() {
    *slot = byte(b, i + k as i64).unwrap_or(0);
  }
  i32::from_le_bytes(v)
}

#[inline(always)]
fn f64_at(b: &[u8], i: i64) -> f64 {
  let mut v = [0u8; 8];
  if i >= 0 {
    if let Some(s) = b.get(i as usize..(i as usize).wrapping_add(8)) {
      v.copy_from_slice(s);
      return f64::from_le_bytes(v);
    }
  }
  for (k, slot) in v.iter_mut().enumerate() {
    *slot = byte(b, i + k as i64).unwrap_or(0);
  }
  f64::from_le_bytes(v)
}

#[inline(always)]
fn all_in(b: &[u8], i: i64, n: i64) -> bool {
  i >= 0 && i + n <= b.len() as i64
}

fn pair(lo: i32, hi: i32) -> u64 {
  let l = lo.to_ne_bytes();
  let h = hi.to_ne_bytes();
  u64::from_ne_bytes([l[0], l[1], l[2], l[3], h[0], h[1], h[2], h[3]])
}

fn bson_err<T>(msg: &str) -> Result<T, DecodeError> {
  Err(DecodeError::Bson(msg.to_string()))
}

/// First zero byte at or after `start`, a word at a time.
#[inline(always)]
fn find_nul(b: &[u8], start: usize) -> Option<usize> {
  let mut i = start;
  while let Some(word) = b.get(i..i.wrapping_add(8)) {
    let v = u64::from_le_bytes(<[u8; 8]>::try_from(word).unwrap_or([1; 8]));
    // The lowest set 0x80 bit marks the first zero byte (borrows only affect higher bytes).
    let z = v.wrapping_sub(0x0101_0101_0101_0101) & !v & 0x8080_8080_8080_8080;
    if z != 0 {
      return Some(i + (z.trailing_zeros() / 8) as usize);
    }
    i += 8;
  }
  b.get(i..)?.iter().position(|&c| c == 0).map(|p| i + p)
}

/// End of the C string starting at `index` (js-bson's loop over `buffer[i] !== 0`).
#[inline(always)]
fn cstring_end(b: &[u8], index: i64) -> Result<i64, DecodeError> {
  if index >= 0 {
    if let Some(p) = find_nul(b, index as usize) {
      return Ok(p as i64);
    }
  }
  bson_err("Bad BSON Document: illegal CString")
}

/// The array index as js-bson's `name` (a number), as decimal text.
fn index_name(i: u32, out: &mut [u8; 10]) -> &[u8] {
  let mut v = i;
  let mut p = out.len();
  loop {
    p -= 1;
    out[p] = b'0' + (v % 10) as u8;
    v /= 10;
    if v == 0 {
      break;
    }
  }
  &out[p..]
}

fn name_text(kb: Option<&[u8]>, array_index: u32) -> String {
  match kb {
    Some(k) => utf8::lossy(k).into_owned(),
    None => array_index.to_string(),
  }
}

impl DecodeCache {
  pub fn new() -> Self {
    DecodeCache {
      keys: Keys::new(),
      shapes: Shapes::new(),
      epoch: 0,
      frames: Vec::new(),
      key_stack: Vec::new(),
      body_spans: Vec::new(),
      def_spans: Vec::new(),
      defs: Vec::new(),
      pending_keys: Vec::new(),
      pending_shapes: Vec::new(),
      regex_spans: Vec::new(),
      vcache: vec![VSlot { bytes: [0; VCACHE_MAX_LEN], len: 0, used: false, known: false, epoch: 0 }; VCACHE_SLOTS],
      pending_strs: Vec::new(),
      decodes_since_reset: 0,
      retrying: false,
      promotable: 0,
    }
  }

  /// After an error: the regular expressions read before it (source, options pairs).
  pub fn error_regex_spans(&self) -> &[Span] {
    &self.regex_spans
  }

  /// Strings of the last successful decode, in consumption order: definitions first.
  pub fn spans(&self) -> impl Iterator<Item = &Span> {
    self.def_spans.iter().chain(self.body_spans.iter())
  }

  pub fn span_count(&self) -> usize {
    self.def_spans.len() + self.body_spans.len()
  }

  pub fn key_bytes(&self, id: u32) -> &[u8] {
    self.keys.bytes(id)
  }

  /// Decodes one document into `ops` / `nums`.
  pub fn decode(&mut self, req: &Request, ops: &mut [u32], nums: &mut [u64]) -> Outcome {
    self.decodes_since_reset = self.decodes_since_reset.saturating_add(1);
    // Never between a NeedSpace and its retry: new ids would change the tape size.
    let retrying = std::mem::take(&mut self.retrying);
    if (self.keys.is_full() || self.shapes.is_full()) && self.decodes_since_reset >= RESET_INTERVAL && !retrying {
      // Ids start over; JS overwrites its tables as they are defined again.
      self.keys = Keys::new();
      self.shapes = Shapes::new();
      self.decodes_since_reset = 0;
    }
    self.epoch = self.epoch.wrapping_add(1);
    if self.epoch == 0 {
      self.keys.reset_epochs();
      self.shapes.reset_epochs();
      for v in &mut self.vcache {
        v.epoch = 0;
      }
      self.epoch = 1;
    }
    // Do not keep huge work buffers alive after one huge document.
    const KEEP: usize = 1 << 16;
    for v in [&mut self.body_spans, &mut self.def_spans] {
      v.clear();
      if v.capacity() > KEEP {
        v.shrink_to(KEEP);
      }
    }
    self.defs.clear();
    if self.defs.capacity() > KEEP {
      self.defs.shrink_to(KEEP);
    }
    self.frames.clear();
    if self.frames.capacity() > KEEP {
      self.frames.shrink_to(KEEP);
    }
    self.key_stack.clear();
    if self.key_stack.capacity() > KEEP {
      self.key_stack.shrink_to(KEEP);
    }
    self.pending_keys.clear();
    self.pending_shapes.clear();
    self.regex_spans.clear();
    self.pending_strs.clear();
    self.promotable = 0;

    let mut tape = Tape { ops, w: 2, nums, n: 0, run_at: usize::MAX, run_len: 0, run_ints: 0 };
    if let Err(e) = self.run(req, &mut tape) {
      return Outcome::Error(e);
    }
    let body = tape.w - 2;
    let total = tape.w + self.defs.len();
    let needed_nums = tape.n;
    let ops = tape.ops;
    if total > ops.len() || needed_nums > tape.nums.len() || total > u32::MAX as usize {
      // The retry counts each object once more, so a key sequence may get its
      // factory then: OBJ_GENERIC (2 + n words) becomes OBJ (1) + DEF_SHAPE
      // (2 + n), one word more. Ask for that too, so that one retry always
      // suffices (found by fuzz/ decode: a second NeedSpace).
      let total = total.saturating_add(self.promotable);
      if ops.len() >= 2 {
        ops[0] = total.min(u32::MAX as usize) as u32;
        ops[1] = needed_nums.min(u32::MAX as usize) as u32;
      }
      self.retrying = true;
      return Outcome::NeedSpace { ops: total, nums: needed_nums };
    }
    ops[tape.w..total].copy_from_slice(&self.defs);
    ops[0] = body as u32;
    ops[1] = self.defs.len() as u32;
    Outcome::Done(total)
  }

  /// Forgets which keys, shapes and strings JS holds (a new JS side took over).
  pub fn forget_js(&mut self) {
    for k in &mut self.keys.list {
      k.known = false;
    }
    for s in &mut self.shapes.shapes {
      s.known = false;
    }
    for v in &mut self.vcache {
      v.known = false;
    }
  }

  /// Marks what the last successful decode defined as known to JS. Call it
  /// once JS has received the strings (JS runs the definitions first thing).
  pub fn commit(&mut self) {
    for &k in &self.pending_keys {
      if let Some(key) = self.keys.list.get_mut(k as usize) {
        key.known = true;
      }
    }
    for &v in &self.pending_strs {
      if let Some(slot) = self.vcache.get_mut(v as usize) {
        slot.known = true;
      }
    }
    for &s in &self.pending_shapes {
      if let Some(shape) = self.shapes.shapes.get_mut(s as usize) {
        shape.known = true;
      }
    }
    self.pending_keys.clear();
    self.pending_strs.clear();
    self.pending_shapes.clear();
  }

  fn run(&mut self, req: &Request, t: &mut Tape) -> Result<(), DecodeError> {
    let DecodeCache {
      keys,
      shapes,
      epoch,
      frames,
      key_stack,
      body_spans,
      def_spans,
      defs,
      pending_keys,
      pending_shapes,
      regex_spans,
      vcache,
      pending_strs,
      promotable,
      ..
    } = self;
    let epoch = *epoch;
    let mut defs = Defs { keys, shapes, epoch, def_spans, defs, pending_keys, pending_shapes, vcache, pending_strs, promotable };

    let buf = req.input;
    let len = buf.len() as i64;
    if buf.len() > u32::MAX as usize {
      return bson_err("bson-rs: input larger than 4 GiB is not supported");
    }
    let flags = req.flags;
    let promote_values = flags & flag::PROMOTE_VALUES != 0;
    let promote_longs = flags & flag::PROMOTE_LONGS != 0 && promote_values;
    let big = flags & flag::USE_BIGINT64 != 0;
    let global_raw = flags & flag::RAW != 0;
    let bson_regexp = flags & flag::BSON_REGEXP != 0;
    let setting = flags & flag::UTF8 != 0;
    let per_key = flags & flag::UTF8_MAP != 0;

    // internalDeserialize
    let index0 = (req.index as i64).min(len);
    let size = i32_at(buf, index0) as i64;
    if size < 5 {
      return Err(DecodeError::Bson(format!("bson size must be >= 5, is {size}")));
    }
    let allow = flags & flag::ALLOW_SMALLER != 0;
    if allow && len < size {
      return Err(DecodeError::Bson(format!("buffer length {len} must be >= bson size {size}")));
    }
    if !allow && len != size {
      return Err(DecodeError::Bson(format!("buffer length {len} must === bson size {size}")));
    }
    if size + index0 > len {
      return Err(DecodeError::Bson(format!(
        "(bson size {size} + options.index {index0} must be <= buffer length {len})"
      )));
    }
    if byte(buf, index0 + size - 1) != Some(0) {
      return bson_err("One object, sized correctly, with a spot for an EOO, but the EOO isn't 0x00");
    }

    // deserializeObject
    let start_index = index0;
    let mut index = index0;
    if len < 5 {
      return bson_err("corrupt bson message < 5 bytes long");
    }
    let size = i32_at(buf, index) as i64;
    index += 4;
    if size < 5 || size > len {
      return bson_err("corrupt bson message");
    }
    // The innermost frame lives here; `frames` holds its ancestors.
    let mut cur = Frame {
      kind: K_ROOT,
      raw: false,
      dbref: DB_NULL,
      validate: false,
      last_index: 0,
      array_index: 0,
      node: ROOT,
      n: 0,
      key_start: 0,
    };
    let mut name_buf = [0u8; 10];

    loop {
      let et = byte(buf, index);
      index += 1;
      if et == Some(0) {
        if let Some(parent) = frames.pop() {
          let done = cur;
          cur = parent;
          if index == done.last_index {
            match done.kind {
              K_ARR => t.array(done.n),
              K_CWS => {
                defs.object(t, key_stack, body_spans, buf, &done, false);
                t.op(op::CODE_W_SCOPE);
              }
              _ => {
                defs.object(t, key_stack, body_spans, buf, &done, done.dbref == DB_TRUE);
              }
            }
            key_stack.truncate(done.key_start as usize);
            continue;
          }
          if done.kind == K_ARR {
            return bson_err("corrupted array bson");
          }
          return bson_err("Bad BSON Document: object not properly terminated");
        }
        break;
      }

      let i = cstring_end(buf, index)?;
      let Some(et) = et else { return bson_err("Bad BSON Document: illegal CString") };
      let at_root = frames.is_empty();
      let top = &mut cur;
      top.n += 1;
      // The key (js-bson's `name`): `None` in arrays, where the name is the index.
      let kb: Option<&[u8]> = if top.kind == K_ARR { None } else { buf.get(index as usize..i as usize) };
      let array_index = top.array_index;
      let validate;
      match kb {
        None => {
          top.array_index = top.array_index.wrapping_add(1);
          validate = top.validate;
        }
        Some(kb) => {
          validate = if !at_root {
            top.validate
          } else if per_key {
            if req.utf8_names.iter().any(|n| utf8::lossy_eq(kb, n)) {
              setting
            } else {
              !setting
            }
          } else {
            setting
          };
          if top.dbref != DB_FALSE && kb.first() == Some(&b'$') {
            top.dbref = if kb == b"$ref" || kb == b"$id" || kb == b"$db" { DB_TRUE } else { DB_FALSE };
          }
          let id = defs.step(&mut top.node, kb);
          key_stack.push(KeyRef { id, start: index as u32, end: i as u32 });
        }
      }
      let top_raw = top.raw;
      index = i + 1;

      match et {
        0x02 => {
          // The hottest case stays inline (as `prefixed_string`, measured faster here).
          let ss = i32_at(buf, index) as i64;
          index += 4;
          if ss <= 0 || ss > len - index || byte(buf, index + ss - 1) != Some(0) {
            return bson_err("bad string length in bson");
          }
          let span = string_span(buf, index, index + ss - 1, validate)?;
          index += ss;
          if ss - 1 <= VCACHE_MAX_LEN as i64 && span.kind != utf8::LOSSY {
            let bytes = buf.get(span.start as usize..span.end as usize).unwrap_or(&[]);
            match defs.cached_string(bytes, span) {
              Some(slot) => t.op(op::STR_CACHED | slot << 8),
              None => {
                body_spans.push(span);
                t.op(op::STR);
              }
            }
          } else {
            body_spans.push(span);
            t.op(op::STR);
          }
        }
        0x0E | 0x0D => {
          // symbol, code
          let (span, _) = prefixed_string(buf, &mut index, len, validate)?;
          body_spans.push(span);
          t.op(if et == 0x0E { op::SYMBOL } else { op::CODE });
        }
        0x07 => {
          t.op(op::OID);
          t.op(index as u32);
          index += 12;
        }
        0x10 | 0x01 if promote_values && cur.kind == K_ARR => {
          // Numbers in an array: stay in a tight loop while the elements are numbers.
          let mut et = et;
          loop {
            if et == 0x10 {
              let v = i32_at(buf, index);
              index += 4;
              t.number((v as f64).to_bits(), true);
            } else {
              let v = f64_at(buf, index);
              index += 8;
              t.number(v.to_bits(), false);
            }
            let next = byte(buf, index);
            if next != Some(0x10) && next != Some(0x01) {
              break;
            }
            // A bad key is left to the main loop, which reports it.
            let Ok(end) = cstring_end(buf, index + 1) else { break };
            cur.n += 1;
            cur.array_index = cur.array_index.wrapping_add(1);
            index = end + 1;
            et = next.unwrap_or(0x10);
          }
        }
        0x10 => {
          let v = i32_at(buf, index);
          index += 4;
          if promote_values {
            t.number((v as f64).to_bits(), true);
          } else {
            t.op(op::INT32_OBJ);
            t.num((v as f64).to_bits());
          }
        }
        0x01 => {
          let v = f64_at(buf, index);
          index += 8;
          if promote_values {
            t.number(v.to_bits(), false);
          } else {
            t.op(op::DOUBLE_OBJ);
            t.num(v.to_bits());
          }
        }
        0x09 => {
          let lo = i32_at(buf, index);
          let hi = i32_at(buf, index + 4);
          index += 8;
          t.op(op::DATE);
          t.num(((hi as f64) * 4294967296.0 + (lo as u32 as f64)).to_bits());
        }
        0x08 => {
          let b = byte(buf, index);
          if b != Some(0) && b != Some(1) {
            return bson_err("illegal boolean type value");
          }
          index += 1;
          t.op(if b == Some(1) { op::TRUE } else { op::FALSE });
        }
        0x03 => {
          let object_size = i32_at(buf, index) as i64;
          if object_size < 5 || object_size > len - index {
            return bson_err("bad embedded document length in bson");
          }
          if global_raw || top_raw {
            t.op(op::RAW);
            t.op(index as u32);
            t.op(object_size as u32);
            index += object_size;
          } else {
            frames.push(cur);
            cur = Frame::document(K_OBJ, validate, index + object_size, key_stack.len() as u32);
            index += 4;
          }
        }
        0x04 => {
          let object_size = i32_at(buf, index) as i64;
          if object_size < 5 || object_size > len - index {
            return bson_err("bad embedded array length in bson");
          }
          let named_raw = match req.raw_names {
            None => false,
            Some(names) => {
              let name: &[u8] = match kb {
                Some(k) => k,
                None => index_name(array_index, &mut name_buf),
              };
              names.iter().any(|n| utf8::lossy_eq(name, n))
            }
          };
          frames.push(cur);
          cur = Frame {
            kind: K_ARR,
            raw: named_raw || top_raw,
            dbref: DB_FALSE,
            validate,
            last_index: index + object_size,
            array_index: 0,
            node: NONE,
            n: 0,
            key_start: key_stack.len() as u32,
          };
          index += 4;
        }
        0x06 => t.op(op::UNDEFINED),
        0x0A => t.op(op::NULL),
        0x12 => {
          if big {
            // getBigInt64LE adds bytes 4..=6 (NaN when one is missing) but
            // shifts byte 7 (`undefined << 24` is 0).
            if !all_in(buf, index + 4, 3) {
              return Err(DecodeError::Range(
                "The number NaN cannot be converted to a BigInt because it is not an integer".to_string(),
              ));
            }
            let lo = i32_at(buf, index);
            let hi = i32_at(buf, index + 4);
            index += 8;
            t.op(op::BIGINT);
            t.num(pair(lo, hi));
          } else {
            let lo = i32_at(buf, index);
            let hi = i32_at(buf, index + 4);
            index += 8;
            let v = ((hi as i64) << 32) | (lo as u32 as i64);
            // js-bson's JS_INT_MIN..=JS_INT_MAX is ±2^53 inclusive.
            const MAX: i64 = 1 << 53;
            if promote_longs && (-MAX..=MAX).contains(&v) {
              t.number(((hi as f64) * 4294967296.0 + (lo as u32 as f64)).to_bits(), false);
            } else {
              t.op(op::LONG_OBJ);
              t.num(pair(lo, hi));
            }
          }
        }
        0x13 => {
          t.op(op::DECIMAL128);
          t.op(index as u32);
          index += 16;
        }
        0x05 => {
          let mut binary_size = i32_at(buf, index) as i64;
          index += 4;
          let total = binary_size;
          let sub = byte(buf, index);
          index += 1;
          if binary_size < 0 {
            return bson_err("Negative binary type element size found");
          }
          if binary_size > len {
            return bson_err("Binary type size larger than document size");
          }
          if sub == Some(2) {
            binary_size = i32_at(buf, index) as i64;
            index += 4;
            if binary_size < 0 {
              return bson_err("Negative binary type element size found for subtype 0x02");
            }
            if binary_size > total - 4 {
              return bson_err("Binary type with subtype 0x02 contains too long binary size");
            }
            if binary_size < total - 4 {
              return bson_err("Binary type with subtype 0x02 contains too short binary size");
            }
          }
          t.op(op::BINARY | (sub.unwrap_or(0) as u32) << 8);
          t.op(index as u32);
          t.op(binary_size as u32);
          index += binary_size;
        }
        0x0B => {
          let e1 = cstring_end(buf, index)?;
          let source = lossy_span(buf, index, e1);
          index = e1 + 1;
          let e2 = cstring_end(buf, index)?;
          let options = lossy_span(buf, index, e2);
          index = e2 + 1;
          body_spans.push(source);
          body_spans.push(options);
          regex_spans.push(source);
          regex_spans.push(options);
          t.op(op::REGEXP | if bson_regexp { 1 << 8 } else { 0 });
        }
        0x11 => {
          if !all_in(buf, index + 4, 4) {
            return bson_err("Timestamp constructed from { t, i } must provide a positive t");
          }
          t.op(op::TIMESTAMP);
          t.op(index as u32);
          index += 8;
        }
        0xFF => t.op(op::MINKEY),
        0x7F => t.op(op::MAXKEY),
        0x0F => {
          let total_size = i32_at(buf, index) as i64;
          index += 4;
          if total_size < 4 + 4 + 4 + 1 {
            return bson_err("code_w_scope total size shorter minimum expected length");
          }
          let (span, ss) = prefixed_string(buf, &mut index, len, validate)?;
          let scope_index = index;
          let object_size = i32_at(buf, index) as i64;
          if object_size < 5 || object_size > len - index {
            return bson_err("bad scope document size in code_w_scope");
          }
          if total_size < 4 + 4 + object_size + ss {
            return bson_err("code_w_scope total size is too short, truncating scope");
          }
          if total_size > 4 + 4 + object_size + ss {
            return bson_err("code_w_scope total size is too long, clips outer document");
          }
          body_spans.push(span);
          t.op(op::STR);
          frames.push(cur);
          cur = Frame::document(K_CWS, validate, scope_index + object_size, key_stack.len() as u32);
          index += 4;
        }
        0x0C => {
          let (span, _) = prefixed_string(buf, &mut index, len, validate)?;
          body_spans.push(span);
          t.op(op::DBPOINTER);
          t.op(index as u32);
          index += 12;
        }
        _ => {
          return Err(DecodeError::Bson(format!(
            "Detected unknown BSON type {:x} for fieldname \"{}\"",
            et,
            name_text(kb, array_index)
          )));
        }
      }
    }

    if !frames.is_empty() {
      return bson_err("corrupted bson, more objects expected based on the current document size");
    }
    if size != index - start_index {
      return bson_err("corrupt object bson");
    }
    let root = cur;
    defs.object(t, key_stack, body_spans, buf, &root, root.dbref == DB_TRUE);
    Ok(())
  }
}

/// A length-prefixed BSON string at `*index` (string, symbol, code, DBPointer
/// namespace): js-bson's size checks, then its span; advances `*index` past it.
/// Returns the span and the size field (bytes including the NUL).
#[inline(always)]
fn prefixed_string(buf: &[u8], index: &mut i64, len: i64, validate: bool) -> Result<(Span, i64), DecodeError> {
  let ss = i32_at(buf, *index) as i64;
  let start = *index + 4;
  if ss <= 0 || ss > len - start || byte(buf, start + ss - 1) != Some(0) {
    return bson_err("bad string length in bson");
  }
  let span = string_span(buf, start, start + ss - 1, validate)?;
  *index = start + ss;
  Ok((span, ss))
}

#[inline(always)]
fn string_span(buf: &[u8], start: i64, end: i64, validate: bool) -> Result<Span, DecodeError> {
  let kind = match buf.get(start as usize..end as usize) {
    Some(s) => utf8::classify(s),
    None => return bson_err("bad string length in bson"),
  };
  if validate && kind == utf8::LOSSY {
    return bson_err("Invalid UTF-8 string in BSON document");
  }
  Ok(Span { start: start as u32, end: end as u32, kind })
}

fn lossy_span(buf: &[u8], start: i64, end: i64) -> Span {
  let kind = buf.get(start as usize..end as usize).map_or(utf8::ASCII, utf8::classify);
  Span { start: start as u32, end: end as u32, kind }
}

/// The key/shape caches plus the definitions being written for this decode.
struct Defs<'c> {
  keys: &'c mut Keys,
  shapes: &'c mut Shapes,
  epoch: u32,
  def_spans: &'c mut Vec<Span>,
  defs: &'c mut Vec<u32>,
  pending_keys: &'c mut Vec<u32>,
  pending_shapes: &'c mut Vec<u32>,
  vcache: &'c mut Vec<VSlot>,
  pending_strs: &'c mut Vec<u32>,
  promotable: &'c mut usize,
}

impl Defs<'_> {
  /// The value-cache slot holding `bytes` (defined for JS in this decode if
  /// needed), or `None` when the slot is taken by another string of this decode.
  #[inline(always)]
  fn cached_string(&mut self, bytes: &[u8], span: Span) -> Option<u32> {
    let h = short_hash(bytes);
    let slot = self.vcache.get_mut(h)?;
    let hit = slot.used && short_eq(slot.bytes.get(..slot.len as usize).unwrap_or(&[]), bytes);
    if !hit {
      if slot.epoch == self.epoch {
        return None;
      }
      slot.bytes.get_mut(..bytes.len())?.copy_from_slice(bytes);
      slot.len = bytes.len() as u8;
      slot.used = true;
      slot.known = false;
    }
    // `epoch` marks a slot used by this decode: it must not be replaced again.
    if !slot.known && slot.epoch != self.epoch {
      self.defs.push(op::DEF_STR | (h as u32) << 8);
      self.def_spans.push(span);
      self.pending_strs.push(h as u32);
    }
    slot.epoch = self.epoch;
    Some(h as u32)
  }

  /// Interns `kb` and moves `node` along the trie; returns the key id or NONE.
  #[inline(always)]
  fn step(&mut self, node: &mut u32, kb: &[u8]) -> u32 {
    let cur = *node;
    if cur != NONE {
      if let Some(nd) = self.shapes.nodes.get(cur as usize) {
        let (lk, lc) = (nd.last_key, nd.last_child);
        if lk != NONE {
          let hit = match nd.last_bytes.get(..nd.last_len as usize) {
            Some(inline) => short_eq(inline, kb),
            None => short_eq(self.keys.bytes(lk), kb),
          };
          if hit {
            self.keys.count_lookup();
            *node = lc;
            return lk;
          }
        }
      }
      // Second chance: a direct-mapped table of recent transitions (nodes
      // such as the empty prefix see many different next keys).
      let slot = transition_slot(cur, kb);
      if let Some(&(tn, tk, tc)) = self.shapes.recent.get(slot) {
        if tn == cur && tk != NONE && short_eq(self.keys.bytes(tk), kb) {
          if let Some(nd) = self.shapes.nodes.get_mut(cur as usize) {
            nd.remember(tk, kb, tc);
          }
          self.keys.count_lookup();
          *node = tc;
          return tk;
        }
      }
      let Some(id) = self.keys.intern(kb) else {
        *node = NONE;
        return NONE;
      };
      match self.shapes.child(cur, id) {
        Some(c) => {
          if let Some(nd) = self.shapes.nodes.get_mut(cur as usize) {
            nd.remember(id, kb, c);
          }
          if let Some(e) = self.shapes.recent.get_mut(slot) {
            *e = (cur, id, c);
          }
          *node = c;
        }
        None => *node = NONE,
      }
      id
    } else {
      self.keys.intern(kb).unwrap_or(NONE)
    }
  }

  fn define_key(&mut self, id: u32) {
    if let Some(k) = self.keys.list.get_mut(id as usize) {
      if !k.known && k.epoch != self.epoch {
        k.epoch = self.epoch;
        self.defs.push(op::DEF_KEY | id << 8);
        self.def_spans.push(Span { start: id, end: 0, kind: SPAN_KEY });
        self.pending_keys.push(id);
      }
    }
  }

  /// Emits the op that builds a finished document from its values on the stack.
  fn object(&mut self, t: &mut Tape, key_stack: &[KeyRef], body_spans: &mut Vec<Span>, buf: &[u8], f: &Frame, dbref: bool) {
    let ks = key_stack.get(f.key_start as usize..).unwrap_or(&[]);
    if f.node != NONE {
      if let Some(sid) = self.shapes.hit(f.node) {
        let needs_def = match self.shapes.shapes.get(sid as usize) {
          Some(s) => !s.known && s.epoch != self.epoch,
          None => false,
        };
        if needs_def {
          for k in ks {
            self.define_key(k.id);
          }
          self.defs.push(op::DEF_SHAPE | sid << 8);
          self.defs.push(ks.len() as u32);
          self.defs.extend(ks.iter().map(|k| k.id));
          if let Some(s) = self.shapes.shapes.get_mut(sid as usize) {
            s.epoch = self.epoch;
          }
          self.pending_shapes.push(sid);
        }
        t.op(if dbref { op::OBJ_DBREF } else { op::OBJ } | sid << 8);
        return;
      }
    }
    if f.node != NONE {
      *self.promotable += 1;
    }
    t.op(if dbref { op::OBJ_GENERIC_DBREF } else { op::OBJ_GENERIC });
    t.op(ks.len() as u32);
    for k in ks {
      if k.id != NONE {
        self.define_key(k.id);
        t.op(k.id + 1);
      } else {
        t.op(0);
        body_spans.push(lossy_span(buf, k.start as i64, k.end as i64));
      }
    }
  }
}

impl Default for DecodeCache {
  fn default() -> Self {
    Self::new()
  }
}

#[cfg(test)]
mod tests;
