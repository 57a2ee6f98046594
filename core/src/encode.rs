//! BSON writer: turns the encode tape (ARCHITECTURE.md, "Encode tape") into
//! BSON bytes.
//!
//! The tape is produced by the JS walk (`lib/serialize.js`), which has already
//! decided every type and performed every check whose outcome JS can observe.
//! This writer only lays out bytes, but it still treats the tape as untrusted:
//! a malformed tape gives an `Err`, never a panic or an out-of-bounds access.
//!
//! The writer is resumable: string and byte arguments arrive in chunks (a JS
//! call can carry only so many arguments), so [`Encoder::run`] returns
//! [`Step::NeedMore`] when the next element needs an argument of the next
//! chunk; the arguments of the current chunk that were not consumed yet are
//! copied into the encoder ("carry") and come first in the next call.
//!
//! When the output buffer is too small the writer keeps going in counting mode
//! and finally reports the size needed ([`Step::TooSmall`]).

/// Largest document size bson-rs produces (the int32 size prefix).
pub const MAX_DOCUMENT_SIZE: usize = i32::MAX as usize;
/// Bound of the key table (ids `0..MAX_KEYS`).
pub const MAX_KEYS: usize = 1 << 16;

/// Tape op codes (low byte of a tape word).
pub mod op {
  pub const END: u32 = 0x00;
  pub const DOUBLE: u32 = 0x01;
  pub const STRING: u32 = 0x02;
  pub const DOC: u32 = 0x03;
  pub const ARRAY: u32 = 0x04;
  pub const BINARY: u32 = 0x05;
  pub const OID: u32 = 0x07;
  pub const FALSE: u32 = 0x08;
  pub const DATE: u32 = 0x09;
  pub const NULL: u32 = 0x0A;
  pub const REGEX: u32 = 0x0B;
  pub const CODE: u32 = 0x0D;
  pub const SYMBOL: u32 = 0x0E;
  pub const CODE_W_SCOPE: u32 = 0x0F;
  pub const INT32: u32 = 0x10;
  pub const TIMESTAMP: u32 = 0x11;
  pub const INT64: u32 = 0x12;
  pub const DECIMAL128: u32 = 0x13;
  pub const TRUE: u32 = 0x18;
  pub const SKIP: u32 = 0x20;
  pub const STRING_BYTES: u32 = 0x22;
  pub const OID_INTS: u32 = 0x23;
  pub const BINARY_BYTES: u32 = 0x24;
  pub const MAXKEY: u32 = 0x7F;
  pub const MINKEY: u32 = 0xFF;
}

/// The string / byte arguments of one `encode` call.
pub trait ArgSource {
  /// Number of arguments available.
  fn count(&self) -> usize;
  /// Writes string argument `i` as UTF-8 into `dst`. `Some(n)`: all `n` bytes
  /// were written. `None`: it does not fit. `dst` may be changed either way.
  fn write_str(&mut self, i: usize, dst: &mut [u8]) -> Result<Option<usize>, String>;
  /// UTF-8 byte length of string argument `i`.
  fn str_len(&mut self, i: usize) -> Result<usize, String>;
  /// The bytes of byte-array argument `i` (valid until the next call on `self`).
  fn bytes(&mut self, i: usize) -> Result<&[u8], String>;
  /// An owned copy of argument `i` (string or bytes), for carrying it over to the next chunk.
  fn to_owned(&mut self, i: usize) -> Result<OwnedArg, String>;
}

/// An argument copied out of its chunk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OwnedArg {
  Str(Vec<u8>),
  Bytes(Vec<u8>),
}

impl ArgSource for [OwnedArg] {
  fn count(&self) -> usize {
    self.len()
  }
  fn write_str(&mut self, i: usize, dst: &mut [u8]) -> Result<Option<usize>, String> {
    match self.get(i) {
      Some(OwnedArg::Str(s)) => match dst.get_mut(..s.len()) {
        Some(d) => {
          d.copy_from_slice(s);
          Ok(Some(s.len()))
        }
        None => Ok(None),
      },
      _ => Err(format!("bson-rs: encode argument {i} is not a string")),
    }
  }
  fn str_len(&mut self, i: usize) -> Result<usize, String> {
    match self.get(i) {
      Some(OwnedArg::Str(s)) => Ok(s.len()),
      _ => Err(format!("bson-rs: encode argument {i} is not a string")),
    }
  }
  fn bytes(&mut self, i: usize) -> Result<&[u8], String> {
    match self.get(i) {
      Some(OwnedArg::Bytes(b)) => Ok(b),
      _ => Err(format!("bson-rs: encode argument {i} is not a byte array")),
    }
  }
  fn to_owned(&mut self, i: usize) -> Result<OwnedArg, String> {
    self.get(i).cloned().ok_or_else(|| format!("bson-rs: encode argument {i} is missing"))
  }
}

/// The carried-over arguments followed by the current chunk's.
struct Chained<'a, A: ArgSource + ?Sized> {
  carry: &'a mut [OwnedArg],
  rest: &'a mut A,
}

impl<A: ArgSource + ?Sized> ArgSource for Chained<'_, A> {
  fn count(&self) -> usize {
    self.carry.len() + self.rest.count()
  }
  fn write_str(&mut self, i: usize, dst: &mut [u8]) -> Result<Option<usize>, String> {
    let c = self.carry.len();
    if i < c { self.carry.write_str(i, dst) } else { self.rest.write_str(i - c, dst) }
  }
  fn str_len(&mut self, i: usize) -> Result<usize, String> {
    let c = self.carry.len();
    if i < c { self.carry.str_len(i) } else { self.rest.str_len(i - c) }
  }
  fn bytes(&mut self, i: usize) -> Result<&[u8], String> {
    let c = self.carry.len();
    if i < c { self.carry.bytes(i) } else { self.rest.bytes(i - c) }
  }
  fn to_owned(&mut self, i: usize) -> Result<OwnedArg, String> {
    let c = self.carry.len();
    if i < c { self.carry.to_owned(i) } else { self.rest.to_owned(i - c) }
  }
}

/// Result of one [`Encoder::run`] call.
#[derive(Debug, PartialEq, Eq)]
pub enum Step {
  /// The document is complete: `n` bytes at the start of the output.
  Done(usize),
  /// Call again with the next chunk of arguments.
  NeedMore,
  /// The output was too small; `n` bytes are needed. Start over with a larger output.
  TooSmall(usize),
}

const NO_CWS: usize = usize::MAX;

#[derive(Clone, Copy)]
struct Frame {
  /// Output offset of this document's size prefix.
  start: usize,
  /// Output offset of the enclosing code-with-scope's total size, or `NO_CWS`.
  cws: usize,
  /// Keys are array indices written by the encoder.
  array: bool,
  index: u32,
}

/// Where a document in progress stands; survives between chunk calls.
struct Cursor {
  active: bool,
  op: usize,
  num: usize,
  byte: usize,
  arg: usize,
  pos: usize,
  overflow: bool,
  frames: Vec<Frame>,
}

/// A key table entry: key bytes + NUL, zero-padded to whole words; length with the NUL.
type KeyEntry = Option<(Box<[u64]>, usize)>;

/// Encoder state that lives as long as the environment: the key table and a
/// resumable cursor for documents whose strings arrive in several chunks.
pub struct Encoder {
  /// id → (key bytes + NUL, zero-padded to whole words; length with the NUL).
  keys: Vec<KeyEntry>,
  cur: Cursor,
  carry: Vec<OwnedArg>,
}

impl Default for Encoder {
  fn default() -> Self {
    Self::new()
  }
}

/// Output writer that switches to counting once the buffer is exhausted.
struct Out<'a> {
  buf: &'a mut [u8],
  pos: usize,
  overflow: bool,
}

impl Out<'_> {
  /// `n` bytes fit at the current position (and we are not counting).
  #[inline(always)]
  fn room(&self, n: usize) -> bool {
    !self.overflow && self.buf.len().saturating_sub(self.pos) >= n
  }

  #[inline(always)]
  fn put<const N: usize>(&mut self, b: [u8; N]) {
    if !self.overflow {
      match self.buf.get_mut(self.pos..self.pos.saturating_add(N)) {
        Some(d) => d.copy_from_slice(&b),
        None => self.overflow = true,
      }
    }
    self.pos = self.pos.saturating_add(N);
  }

  #[inline(always)]
  fn byte(&mut self, b: u8) {
    if !self.overflow {
      match self.buf.get_mut(self.pos) {
        Some(d) => *d = b,
        None => self.overflow = true,
      }
    }
    self.pos = self.pos.saturating_add(1);
  }

  /// Variable-length copy (binary data, long keys).
  fn put_slice(&mut self, b: &[u8]) {
    if !self.overflow {
      match self.buf.get_mut(self.pos..self.pos.saturating_add(b.len())) {
        Some(d) => d.copy_from_slice(b),
        None => self.overflow = true,
      }
    }
    self.pos = self.pos.saturating_add(b.len());
  }

  /// Writes the first `len` bytes of `words` (little-endian byte order). With
  /// room for all the words it stores whole words: the bytes past `len` are
  /// scratch that the following writes overwrite.
  #[inline(always)]
  fn put_words(&mut self, words: &[u64], len: usize) {
    let whole = words.len() * 8;
    if self.room(whole) {
      let mut p = self.pos;
      for w in words {
        if let Some(d) = self.buf.get_mut(p..p + 8) {
          d.copy_from_slice(&w.to_le_bytes());
        }
        p += 8;
      }
      self.pos += len;
    } else {
      for (i, w) in words.iter().enumerate() {
        for (j, b) in w.to_le_bytes().iter().enumerate() {
          if i * 8 + j < len {
            self.byte(*b);
          }
        }
      }
    }
  }

  /// Writes `v` at an earlier offset (a size prefix); no-op in counting mode.
  #[inline(always)]
  fn patch_i32(&mut self, at: usize, v: i32) {
    if !self.overflow {
      if let Some(d) = self.buf.get_mut(at..at.saturating_add(4)) {
        d.copy_from_slice(&v.to_le_bytes());
      }
    }
  }

  /// Writes string argument `i` (no terminator); returns its byte length.
  #[inline]
  fn string<A: ArgSource + ?Sized>(&mut self, args: &mut A, i: usize) -> Result<usize, String> {
    if !self.overflow {
      if let Some(dst) = self.buf.get_mut(self.pos..) {
        if let Some(n) = args.write_str(i, dst)? {
          self.pos = self.pos.saturating_add(n);
          return Ok(n);
        }
      }
      self.overflow = true;
    }
    let n = args.str_len(i)?;
    self.pos = self.pos.saturating_add(n);
    Ok(n)
  }

  /// Writes an array index as decimal digits followed by NUL.
  #[inline(always)]
  fn index_cstr(&mut self, v: u32) {
    if v < 10_000_000 {
      let (word, len) = index_word(v);
      self.put_words(&[word], len + 1);
    } else {
      let mut digits = [0u8; 11];
      let mut i = 10;
      let mut v = v;
      loop {
        i -= 1;
        digits[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
          break;
        }
      }
      self.put_slice(&digits[i..]);
    }
  }
}

/// Decimal digits of `v` (< 10^7) packed little-endian in a word, NUL-padded; and the digit count.
#[inline(always)]
fn index_word(mut v: u32) -> (u64, usize) {
  let len = if v < 10 {
    1
  } else if v < 100 {
    2
  } else if v < 1000 {
    3
  } else if v < 10_000 {
    4
  } else if v < 100_000 {
    5
  } else if v < 1_000_000 {
    6
  } else {
    7
  };
  let mut word = 0u64;
  for _ in 0..len {
    word = (word << 8) | u64::from(b'0' + (v % 10) as u8);
    v /= 10;
  }
  (word, len)
}

fn bad(what: &str) -> String {
  format!("bson-rs: malformed encode tape ({what})")
}

fn too_large() -> String {
  format!("Document exceeds the maximum BSON document size of {MAX_DOCUMENT_SIZE} bytes")
}

/// `Long.fromNumber(x)` of js-bson (what `serialize` does with `Date#getTime()`).
pub fn long_from_number(x: f64) -> i64 {
  // js-bson: NaN → 0, ≤ −2^63 → MIN, x + 1 ≥ 2^63 → MAX, else truncation
  // toward zero; `as` does exactly this (saturating, NaN → 0).
  x as i64
}

impl Encoder {
  pub fn new() -> Self {
    Encoder {
      keys: Vec::new(),
      cur: Cursor { active: false, op: 0, num: 0, byte: 0, arg: 0, pos: 0, overflow: false, frames: Vec::new() },
      carry: Vec::new(),
    }
  }

  /// Key table entry `id` ← UTF-8 bytes of the key.
  pub fn define_key(&mut self, id: usize, key: &[u8]) -> Result<(), String> {
    if id >= MAX_KEYS {
      return Err(format!("bson-rs: key id {id} out of range"));
    }
    if self.keys.len() <= id {
      self.keys.resize(id + 1, None);
    }
    let len = key.len() + 1;
    let mut words = vec![0u64; len.div_ceil(8)];
    for (i, b) in key.iter().enumerate() {
      words[i / 8] |= u64::from(*b) << ((i % 8) * 8);
    }
    self.keys[id] = Some((words.into_boxed_slice(), len));
    Ok(())
  }

  /// Starts a new document (drops any document in progress).
  pub fn begin(&mut self) {
    let c = &mut self.cur;
    c.active = true;
    c.op = 0;
    c.num = 0;
    c.byte = 0;
    c.arg = 0;
    c.pos = 4;
    c.overflow = false;
    c.frames.clear();
    c.frames.push(Frame { start: 0, cws: NO_CWS, array: false, index: 0 });
    self.carry.clear();
  }

  /// Abandons the document in progress and frees oversized internal buffers.
  pub fn reset(&mut self) {
    self.cur.active = false;
    self.cur.frames.clear();
    if self.cur.frames.capacity() > 4096 {
      self.cur.frames.shrink_to(64);
    }
    self.carry.clear();
    self.carry.shrink_to(8);
  }

  /// Runs the tape as far as the given arguments allow.
  ///
  /// `ops`: the whole tape; `nums`: 8-byte number slots; `bytes`: fixed-size
  /// bytes; `out`: output; `args`: this chunk's arguments (after any carried ones).
  pub fn run<A: ArgSource + ?Sized>(
    &mut self,
    ops: &[u32],
    nums: &[u8],
    bytes: &[u8],
    out: &mut [u8],
    args: &mut A,
  ) -> Result<Step, String> {
    if !self.cur.active {
      return Err(bad("no document in progress"));
    }
    let mut carry = std::mem::take(&mut self.carry);
    let result = self.run_inner(ops, nums, bytes, out, &mut Chained { carry: &mut carry, rest: args });
    match result {
      Ok(Step::NeedMore) => {
        // The arguments not consumed yet move into the new carry.
        let mut chained = Chained { carry: &mut carry, rest: args };
        let mut next = Vec::new();
        for i in self.cur.arg..chained.count() {
          next.push(chained.to_owned(i)?);
        }
        self.carry = next;
        self.cur.arg = 0;
        Ok(Step::NeedMore)
      }
      other => {
        self.reset();
        other
      }
    }
  }

  fn run_inner<A: ArgSource + ?Sized>(
    &mut self,
    ops: &[u32],
    nums: &[u8],
    bytes: &[u8],
    buf: &mut [u8],
    args: &mut A,
  ) -> Result<Step, String> {
    let keys = &self.keys;
    let c = &mut self.cur;
    let nargs = args.count();
    let mut out = Out { buf, pos: c.pos, overflow: c.overflow };
    let mut ai = c.arg;
    let mut ni = c.num;
    let mut bi = c.byte;
    let mut oi = c.op;
    let frames = &mut c.frames;
    loop {
      let Some(&word) = ops.get(oi) else {
        return Err(bad("ended inside a document"));
      };
      let code = (word & 0xFF) as usize;
      let key_ref = (word >> 8) as usize;
      let Some(frame) = frames.last_mut() else {
        return Err(bad("no open document"));
      };
      let info = OPS[code];
      if info.kind == K_END {
        out.byte(0);
        let size = out.pos - frame.start;
        if size > MAX_DOCUMENT_SIZE {
          return Err(too_large());
        }
        out.patch_i32(frame.start, size as i32);
        if frame.cws != NO_CWS {
          let total = out.pos - frame.cws;
          if total > MAX_DOCUMENT_SIZE {
            return Err(too_large());
          }
          out.patch_i32(frame.cws, total as i32);
        }
        frames.pop();
        oi += 1;
        if frames.is_empty() {
          if oi != ops.len() {
            return Err(bad("ops after the root document"));
          }
          return Ok(if out.overflow { Step::TooSmall(out.pos) } else { Step::Done(out.pos) });
        }
        continue;
      }
      if info.kind == K_SKIP {
        if !frame.array {
          return Err(bad("skip outside an array"));
        }
        frame.index = frame.index.wrapping_add(1);
        oi += 1;
        continue;
      }
      if info.kind == K_BAD {
        return Err(bad("unknown op"));
      }
      // Fast path: a run of fixed-size values whose keys come from the table
      // or are array indices, while there is room for whole elements.
      if info.fast && out.room(FAST_ROOM) {
        let before = oi;
        fast_run(&mut out, ops, &mut oi, nums, &mut ni, bytes, &mut bi, frame, keys)?;
        if oi != before {
          continue;
        }
      }
      let inline_key = !frame.array && key_ref == 0;
      if ai + usize::from(inline_key) + info.strings as usize > nargs {
        // Needs arguments of the next chunk: stop before this element.
        c.op = oi;
        c.num = ni;
        c.byte = bi;
        c.arg = ai;
        c.pos = out.pos;
        c.overflow = out.overflow;
        return Ok(Step::NeedMore);
      }
      let num: [u8; 8] = if info.slot {
        let s = ni.checked_mul(8).and_then(|s| nums.get(s..s.checked_add(8)?)).ok_or_else(|| bad("number slot past the end"))?;
        ni += 1;
        s.try_into().map_err(|_| bad("number slot"))?
      } else {
        [0u8; 8]
      };

      // Element header: type, key, NUL.
      out.byte(info.type_byte);
      if frame.array {
        out.index_cstr(frame.index);
        frame.index = frame.index.wrapping_add(1);
      } else if inline_key {
        out.string(args, ai)?;
        ai += 1;
        out.byte(0);
      } else {
        let (words, len) = keys.get(key_ref - 1).and_then(|k| k.as_ref()).ok_or_else(|| bad("undefined key id"))?;
        out.put_words(words, *len);
      }

      match info.kind {
        K_NUM8 => out.put(num),
        K_INT32 => out.put([num[0], num[1], num[2], num[3]]),
        K_DATE => out.put(long_from_number(f64::from_le_bytes(num)).to_le_bytes()),
        K_FALSE => out.byte(0),
        K_TRUE => out.byte(1),
        K_NONE => {}
        K_OID => {
          let b: [u8; 12] = bytes.get(bi..bi + 12).and_then(|b| b.try_into().ok()).ok_or_else(|| bad("fixed bytes past the end"))?;
          bi += 12;
          out.put(b);
        }
        K_OIDI => {
          let b = oid_from_ints(nums, ni)?;
          ni += 2;
          out.put(b);
        }
        K_DEC => {
          let b: [u8; 16] = bytes.get(bi..bi + 16).and_then(|b| b.try_into().ok()).ok_or_else(|| bad("fixed bytes past the end"))?;
          bi += 16;
          out.put(b);
        }
        K_STRB => {
          let n = u32::from_le_bytes([num[0], num[1], num[2], num[3]]) as usize;
          let src = bytes.get(bi..bi.saturating_add(n)).ok_or_else(|| bad("string bytes past the end"))?;
          bi += n;
          let size = n.checked_add(1).filter(|&s| s <= MAX_DOCUMENT_SIZE).ok_or_else(too_large)?;
          out.put((size as i32).to_le_bytes());
          out.put_slice(src);
          out.byte(0);
        }
        K_STR => {
          let at = out.pos;
          out.put([0; 4]);
          let n = out.string(args, ai)?;
          ai += 1;
          out.byte(0);
          let size = n.checked_add(1).filter(|&s| s <= MAX_DOCUMENT_SIZE).ok_or_else(too_large)?;
          out.patch_i32(at, size as i32);
        }
        K_REGEX => {
          out.string(args, ai)?;
          out.byte(0);
          out.string(args, ai + 1)?;
          out.byte(0);
          ai += 2;
        }
        K_BINARY => {
          let len = i32::from_le_bytes([num[0], num[1], num[2], num[3]]);
          let subtype = i32::from_le_bytes([num[4], num[5], num[6], num[7]]);
          let len = usize::try_from(len).map_err(|_| bad("negative binary length"))?;
          let size = if subtype == 2 { len + 4 } else { len };
          if size > MAX_DOCUMENT_SIZE {
            return Err(too_large());
          }
          out.put((size as i32).to_le_bytes());
          out.byte(subtype as u8);
          if subtype == 2 {
            out.put((len as i32).to_le_bytes());
          }
          let data = args.bytes(ai)?;
          ai += 1;
          let copied = data.len().min(len);
          out.put_slice(&data[..copied]);
          // Like js-bson, bytes past the data (position > buffer length) are zeros.
          let mut rest = len - copied;
          while rest > 0 {
            if out.overflow {
              // counting only (also once the zeros ran past the output): no need to walk them
              out.pos = out.pos.saturating_add(rest);
              break;
            }
            let n = rest.min(64);
            out.put_slice(&[0u8; 64][..n]);
            rest -= n;
          }
        }
        K_BINB => {
          // as K_BINARY, with all `len` data bytes in the bytes tape
          let len = i32::from_le_bytes([num[0], num[1], num[2], num[3]]);
          let subtype = i32::from_le_bytes([num[4], num[5], num[6], num[7]]);
          let len = usize::try_from(len).map_err(|_| bad("negative binary length"))?;
          let size = if subtype == 2 { len + 4 } else { len };
          if size > MAX_DOCUMENT_SIZE {
            return Err(too_large());
          }
          let src = bytes.get(bi..bi.saturating_add(len)).ok_or_else(|| bad("binary bytes past the end"))?;
          bi += len;
          out.put((size as i32).to_le_bytes());
          out.byte(subtype as u8);
          if subtype == 2 {
            out.put((len as i32).to_le_bytes());
          }
          out.put_slice(src);
        }
        K_DOC => {
          let start = out.pos;
          out.put([0; 4]);
          frames.push(Frame { start, cws: NO_CWS, array: code as u32 == op::ARRAY, index: 0 });
        }
        K_CWS => {
          let cws = out.pos;
          out.put([0; 4]);
          let at = out.pos;
          out.put([0; 4]);
          let n = out.string(args, ai)?;
          ai += 1;
          out.byte(0);
          let size = n.checked_add(1).filter(|&s| s <= MAX_DOCUMENT_SIZE).ok_or_else(too_large)?;
          out.patch_i32(at, size as i32);
          let start = out.pos;
          out.put([0; 4]);
          frames.push(Frame { start, cws, array: false, index: 0 });
        }
        _ => return Err(bad("unknown op")),
      }
      oi += 1;
    }
  }
}

/// Writes consecutive fast-path elements of the current frame (see `run_inner`).
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn fast_run(
  out: &mut Out<'_>,
  ops: &[u32],
  oi: &mut usize,
  nums: &[u8],
  ni: &mut usize,
  bytes: &[u8],
  bi: &mut usize,
  frame: &mut Frame,
  keys: &[KeyEntry],
) -> Result<(), String> {
  let buf = &mut *out.buf;
  let mut pos = out.pos;
  let array = frame.array;
  let mut index = frame.index;
  let table = index_table();
  // cursors in locals (written back at the end, also on error: the caller resets then)
  let (mut o, mut n_i, mut b_i) = (*oi, *ni, *bi);
  let result = loop {
    let Some(&word) = ops.get(o) else { break Ok(()) };
    // Tightest path: numbers in arrays (type + index + NUL in one store, then the value).
    if array && (word == op::INT32 || word == op::DOUBLE) {
      let Some(&digits) = table.get(index as usize) else { break Ok(()) };
      let s = n_i * 8;
      let Some(Ok(num)) = nums.get(s..s + 8).map(<[u8; 8]>::try_from) else {
        break Err(bad("number slot past the end"));
      };
      let Some(Ok(w)) = buf.get_mut(pos..pos + 16).map(<&mut [u8; 16]>::try_from) else { break Ok(()) };
      let len = 8 - (digits.leading_zeros() / 8) as usize;
      let type_byte = if word == op::INT32 { 0x10u64 } else { 0x01 };
      w[0..8].copy_from_slice(&((digits << 8) | type_byte).to_le_bytes());
      let p = len + 2;
      w[p..p + 8].copy_from_slice(&num);
      pos += p + if word == op::INT32 { 4 } else { 8 };
      o += 1;
      n_i += 1;
      index += 1;
      continue;
    }
    if array && word == op::OID_INTS {
      let Some(&digits) = table.get(index as usize) else { break Ok(()) };
      let s = n_i * 8;
      let Some(Ok(src)) = nums.get(s..s + 16).map(<&[u8; 16]>::try_from) else {
        break Err(bad("number slot past the end"));
      };
      let Some(Ok(w)) = buf.get_mut(pos..pos + 32).map(<&mut [u8; 32]>::try_from) else { break Ok(()) };
      let len = 8 - (digits.leading_zeros() / 8) as usize;
      w[0..8].copy_from_slice(&((digits << 8) | 0x07).to_le_bytes());
      let p = len + 2;
      let x = u128::from_le_bytes(*src);
      let int = |k: u32| (x >> (32 * k)) & 0x00FF_FFFF;
      let v = (int(0) << 72) | (int(1) << 48) | (int(2) << 24) | int(3);
      w[p..p + 12].copy_from_slice(&v.to_be_bytes()[4..16]);
      pos += p + 12;
      o += 1;
      n_i += 2;
      index += 1;
      continue;
    }
    let info = OPS[(word & 0xFF) as usize];
    if !info.fast {
      break Ok(());
    }
    let Some(w) = buf.get_mut(pos..pos + FAST_ROOM) else { break Ok(()) };
    let w: &mut [u8; FAST_ROOM] = match w.try_into() {
      Ok(w) => w,
      Err(_) => break Ok(()),
    };
    let mut p;
    if array {
      let Some(&digits) = table.get(index as usize) else { break Ok(()) };
      let len = 8 - (digits.leading_zeros() / 8) as usize;
      // type byte + digits + NUL in one store (indices here have at most 4 digits)
      w[0..8].copy_from_slice(&((digits << 8) | u64::from(info.type_byte)).to_le_bytes());
      p = 1 + len + 1;
    } else {
      let key_ref = (word >> 8) as usize;
      let Some(Some((words, len))) = keys.get(key_ref.wrapping_sub(1)) else { break Ok(()) };
      if words.len() > 5 {
        break Ok(());
      }
      for (i, k) in words.iter().enumerate() {
        w[1 + i * 8..9 + i * 8].copy_from_slice(&k.to_le_bytes());
      }
      p = 1 + *len;
      w[0] = info.type_byte;
    }
    let num: [u8; 8] = if info.slot {
      let s = n_i * 8;
      let Some(Ok(n)) = nums.get(s..s + 8).map(<[u8; 8]>::try_from) else {
        break Err(bad("number slot past the end"));
      };
      n
    } else {
      [0u8; 8]
    };
    match info.kind {
      K_STRB => {
        let n = u32::from_le_bytes([num[0], num[1], num[2], num[3]]) as usize;
        // whole words from the bytes tape (the tail past n is overwritten later)
        let Some(src) = (if n <= SHORT_BYTES { bytes.get(b_i..b_i + SHORT_BYTES) } else { None }) else { break Ok(()) };
        w[p..p + 4].copy_from_slice(&((n + 1) as u32).to_le_bytes());
        p += 4;
        for (i, chunk) in src.chunks_exact(8).enumerate() {
          w[p + i * 8..p + i * 8 + 8].copy_from_slice(chunk);
        }
        w[p + n] = 0;
        p += n + 1;
        b_i += n;
      }
      K_NUM8 => {
        w[p..p + 8].copy_from_slice(&num);
        p += 8;
      }
      K_INT32 => {
        w[p..p + 4].copy_from_slice(&num[..4]);
        p += 4;
      }
      K_DATE => {
        w[p..p + 8].copy_from_slice(&long_from_number(f64::from_le_bytes(num)).to_le_bytes());
        p += 8;
      }
      K_FALSE => {
        w[p] = 0;
        p += 1;
      }
      K_TRUE => {
        w[p] = 1;
        p += 1;
      }
      K_OID => {
        let Some(b) = bytes.get(b_i..b_i + 12) else { break Err(bad("fixed bytes past the end")) };
        w[p..p + 12].copy_from_slice(b);
        b_i += 12;
        p += 12;
      }
      K_DEC => {
        let Some(b) = bytes.get(b_i..b_i + 16) else { break Err(bad("fixed bytes past the end")) };
        w[p..p + 16].copy_from_slice(b);
        b_i += 16;
        p += 16;
      }
      K_OIDI => {
        // n_i only ever passes checked slots, so n_i * 8 does not overflow
        let s = n_i * 8;
        let Some(Ok(src)) = nums.get(s..s + 16).map(<&[u8; 16]>::try_from) else {
          break Err(bad("number slot past the end"));
        };
        let x = u128::from_le_bytes(*src);
        let int = |k: u32| (x >> (32 * k)) & 0x00FF_FFFF;
        let v = (int(0) << 72) | (int(1) << 48) | (int(2) << 24) | int(3);
        let be = v.to_be_bytes();
        w[p..p + 12].copy_from_slice(&be[4..16]);
        n_i += 2;
        p += 12;
      }
      _ => {}
    }
    pos += p;
    o += 1;
    if info.slot {
      n_i += 1;
    }
    if array {
      index += 1;
    }
  };
  out.pos = pos;
  frame.index = index;
  *oi = o;
  *ni = n_i;
  *bi = b_i;
  result
}

/// The 12 ObjectId bytes from its four 24-bit ints (js-bson's i0..i3), two number slots.
#[inline(always)]
fn oid_from_ints(nums: &[u8], ni: usize) -> Result<[u8; 12], String> {
  let s = ni.checked_mul(8).ok_or_else(|| bad("number slot"))?;
  let Some(Ok(src)) = nums.get(s..s.saturating_add(16)).map(<&[u8; 16]>::try_from) else {
    return Err(bad("number slot past the end"));
  };
  let [a0, a1, a2, _, b0, b1, b2, _, c0, c1, c2, _, d0, d1, d2, _] = *src;
  Ok([a2, a1, a0, b2, b1, b0, c2, c1, c0, d2, d1, d0])
}

/// Array indices below this come from a precomputed table.
const INDEX_TABLE: u32 = 10_000;

/// Decimal digits of the indices below INDEX_TABLE, packed little-endian and
/// NUL-padded (the digit count is the number of non-zero bytes).
fn index_table() -> &'static [u64] {
  static TABLE: std::sync::OnceLock<Box<[u64]>> = std::sync::OnceLock::new();
  TABLE.get_or_init(|| (0..INDEX_TABLE).map(|i| index_word(i).0).collect())
}

// Op kinds (how the payload is written).
const K_BAD: u8 = 0;
const K_END: u8 = 1;
const K_SKIP: u8 = 2;
const K_NUM8: u8 = 3;
const K_INT32: u8 = 4;
const K_DATE: u8 = 5;
const K_FALSE: u8 = 6;
const K_TRUE: u8 = 7;
const K_NONE: u8 = 8;
const K_OID: u8 = 9;
const K_DEC: u8 = 10;
const K_STR: u8 = 11;
const K_REGEX: u8 = 12;
const K_BINARY: u8 = 13;
const K_DOC: u8 = 14;
const K_CWS: u8 = 15;
const K_STRB: u8 = 16;
const K_OIDI: u8 = 17;
const K_BINB: u8 = 18;

/// Bytes an element on the fast path may touch: type + key (≤ 5 words) +
/// size + short string (whole words) + NUL.
const FAST_ROOM: usize = 128;
/// Byte strings up to this length take the fast path (a multiple of 8).
const SHORT_BYTES: usize = 48;

#[derive(Clone, Copy)]
struct OpInfo {
  /// fixed-size payload (fast path candidate)
  fast: bool,
  kind: u8,
  type_byte: u8,
  /// string/bytes arguments of the value (the key's is extra)
  strings: u8,
  /// uses one 8-byte number slot
  slot: bool,
}

const fn info(kind: u8, type_byte: u8, strings: u8, slot: bool) -> OpInfo {
  let fast = matches!(kind, K_NUM8 | K_INT32 | K_DATE | K_FALSE | K_TRUE | K_NONE | K_OID | K_DEC | K_STRB | K_OIDI);
  OpInfo { fast, kind, type_byte, strings, slot }
}

static OPS: [OpInfo; 256] = {
  let mut t = [info(K_BAD, 0, 0, false); 256];
  t[op::END as usize] = info(K_END, 0, 0, false);
  t[op::SKIP as usize] = info(K_SKIP, 0, 0, false);
  t[op::DOUBLE as usize] = info(K_NUM8, 0x01, 0, true);
  t[op::STRING as usize] = info(K_STR, 0x02, 1, false);
  t[op::STRING_BYTES as usize] = info(K_STRB, 0x02, 0, true);
  t[op::DOC as usize] = info(K_DOC, 0x03, 0, false);
  t[op::ARRAY as usize] = info(K_DOC, 0x04, 0, false);
  t[op::BINARY as usize] = info(K_BINARY, 0x05, 1, true);
  t[op::BINARY_BYTES as usize] = info(K_BINB, 0x05, 0, true);
  t[op::OID as usize] = info(K_OID, 0x07, 0, false);
  t[op::OID_INTS as usize] = info(K_OIDI, 0x07, 0, false);
  t[op::FALSE as usize] = info(K_FALSE, 0x08, 0, false);
  t[op::TRUE as usize] = info(K_TRUE, 0x08, 0, false);
  t[op::DATE as usize] = info(K_DATE, 0x09, 0, true);
  t[op::NULL as usize] = info(K_NONE, 0x0A, 0, false);
  t[op::REGEX as usize] = info(K_REGEX, 0x0B, 2, false);
  t[op::CODE as usize] = info(K_STR, 0x0D, 1, false);
  t[op::SYMBOL as usize] = info(K_STR, 0x0E, 1, false);
  t[op::CODE_W_SCOPE as usize] = info(K_CWS, 0x0F, 1, false);
  t[op::INT32 as usize] = info(K_INT32, 0x10, 0, true);
  t[op::TIMESTAMP as usize] = info(K_NUM8, 0x11, 0, true);
  t[op::INT64 as usize] = info(K_NUM8, 0x12, 0, true);
  t[op::DECIMAL128 as usize] = info(K_DEC, 0x13, 0, false);
  t[op::MAXKEY as usize] = info(K_NONE, 0x7F, 0, false);
  t[op::MINKEY as usize] = info(K_NONE, 0xFF, 0, false);
  t
};

#[cfg(test)]
mod tests {
  use super::*;

  fn w(code: u32, key_ref: u32) -> u32 {
    code | key_ref << 8
  }

  fn s(x: &str) -> OwnedArg {
    OwnedArg::Str(x.as_bytes().to_vec())
  }

  /// Runs with a small output (grown on TooSmall, so the end of the buffer
  /// is exercised) and with a roomy one (fast paths); both must agree.
  fn run_all(enc: &mut Encoder, ops: &[u32], nums: &[u8], bytes: &[u8], args: &[OwnedArg], chunk: usize) -> Result<Vec<u8>, String> {
    let small = run_sized(enc, ops, nums, bytes, args, chunk, 16);
    let roomy = run_sized(enc, ops, nums, bytes, args, chunk, 4096);
    assert_eq!(small, roomy);
    small
  }

  fn run_sized(enc: &mut Encoder, ops: &[u32], nums: &[u8], bytes: &[u8], args: &[OwnedArg], chunk: usize, mut size: usize) -> Result<Vec<u8>, String> {
    loop {
      let mut out = vec![0xAAu8; size];
      enc.begin();
      let mut chunks: Vec<Vec<OwnedArg>> = args.chunks(chunk.max(1)).map(|c| c.to_vec()).collect();
      if chunks.is_empty() {
        chunks.push(Vec::new());
      }
      let mut result = None;
      let nchunks = chunks.len();
      for (i, c) in chunks.iter_mut().enumerate() {
        match enc.run(ops, nums, bytes, &mut out, c.as_mut_slice())? {
          Step::NeedMore => {
            if i + 1 == nchunks {
              return Err("needs more args than given".into());
            }
          }
          other => {
            result = Some(other);
            break;
          }
        }
      }
      match result {
        Some(Step::Done(n)) => {
          out.truncate(n);
          return Ok(out);
        }
        Some(Step::TooSmall(n)) => {
          assert!(n > size);
          if n > 1 << 20 {
            return Err("too large for a test".into());
          }
          size = n;
        }
        _ => return Err("unfinished".into()),
      }
    }
  }

  fn f64s(v: &[f64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
  }

  #[test]
  fn empty_document() {
    let mut e = Encoder::new();
    assert_eq!(run_all(&mut e, &[0], &[], &[], &[], 8).unwrap(), vec![5, 0, 0, 0, 0]);
  }

  #[test]
  fn strings_keys_and_numbers() {
    let mut e = Encoder::new();
    e.define_key(0, b"a").unwrap();
    // {a: "xy", <inline "bb">: 1.5, a: int32 7}
    let ops = [w(op::STRING, 1), w(op::DOUBLE, 0), w(op::INT32, 1), op::END];
    let mut nums = f64s(&[1.5]);
    nums.extend_from_slice(&7i32.to_le_bytes());
    nums.extend_from_slice(&[0; 4]);
    let args = [s("xy"), s("bb")];
    let expect: Vec<u8> = [
      &[0x22, 0, 0, 0][..],
      &[2, b'a', 0, 3, 0, 0, 0, b'x', b'y', 0],
      &[1, b'b', b'b', 0],
      &1.5f64.to_le_bytes(),
      &[0x10, b'a', 0, 7, 0, 0, 0],
      &[0],
    ]
    .concat();
    for chunk in 1..4 {
      assert_eq!(run_all(&mut e, &ops, &nums, &[], &args, chunk).unwrap(), expect, "chunk {chunk}");
    }
  }

  #[test]
  fn arrays_skip_and_nested() {
    let mut e = Encoder::new();
    // {x: [true, <skip>, null, {}]}
    let ops = [w(op::ARRAY, 0), op::TRUE, op::SKIP, op::NULL, op::DOC, op::END, op::END, op::END];
    let got = run_all(&mut e, &ops, &[], &[], &[s("x")], 8).unwrap();
    let inner: Vec<u8> = [&[0x14, 0, 0, 0][..], &[8, b'0', 0, 1], &[10, b'2', 0], &[3, b'3', 0, 5, 0, 0, 0, 0], &[0]].concat();
    assert_eq!(inner.len(), 0x14);
    let expect: Vec<u8> = [&[(4 + 3 + 0x14 + 1) as u8, 0, 0, 0][..], &[4, b'x', 0], &inner, &[0]].concat();
    assert_eq!(got, expect);
  }

  #[test]
  fn big_array_indices() {
    let mut e = Encoder::new();
    let mut ops = vec![w(op::ARRAY, 0)];
    ops.extend(std::iter::repeat(op::NULL).take(1001));
    ops.extend([op::END, op::END]);
    let got = run_all(&mut e, &ops, &[], &[], &[s("a")], 8).unwrap();
    let tail = [10u8, b'1', b'0', b'0', b'0', 0, 0, 0];
    assert_eq!(&got[got.len() - 8..], &tail);
  }

  #[test]
  fn binary_subtypes_and_fixed() {
    let mut e = Encoder::new();
    e.define_key(3, b"k").unwrap();
    let ops = [w(op::BINARY, 4), w(op::BINARY, 4), w(op::OID, 4), op::END];
    let mut nums = Vec::new();
    for (len, sub) in [(2i32, 2i32), (4, 0x180)] {
      nums.extend(len.to_le_bytes());
      nums.extend(sub.to_le_bytes());
    }
    let oid: Vec<u8> = (1..=12).collect();
    let args = [OwnedArg::Bytes(vec![9, 8, 7]), OwnedArg::Bytes(vec![1, 2])];
    let got = run_all(&mut e, &ops, &nums, &oid, &args, 1).unwrap();
    let expect: Vec<u8> = [
      &[0, 0, 0, 0][..],
      &[5, b'k', 0, 6, 0, 0, 0, 2, 2, 0, 0, 0, 9, 8],
      &[5, b'k', 0, 4, 0, 0, 0, 0x80, 1, 2, 0, 0],
      &[7, b'k', 0],
      &oid,
      &[0],
    ]
    .concat();
    assert_eq!(&got[4..], &expect[4..]);
    assert_eq!(got.len(), expect.len());
  }

  #[test]
  fn code_with_scope_and_regex() {
    let mut e = Encoder::new();
    let ops = [w(op::CODE_W_SCOPE, 0), w(op::INT32, 0), op::END, w(op::REGEX, 0), op::END];
    let nums = [1, 0, 0, 0, 0, 0, 0, 0];
    let args = [s("c"), s("f"), s("v"), s("r"), s("ab"), s("im")];
    let got = run_all(&mut e, &ops, &nums, &[], &args, 2).unwrap();
    let scope: Vec<u8> = [&[0x0c, 0, 0, 0][..], &[0x10, b'v', 0, 1, 0, 0, 0], &[0]].concat();
    let cws: Vec<u8> = [&((4 + 4 + 2 + scope.len()) as u32).to_le_bytes()[..], &[2, 0, 0, 0, b'f', 0], &scope].concat();
    let body: Vec<u8> = [&[0x0F, b'c', 0][..], &cws, &[0x0B, b'r', 0, b'a', b'b', 0, b'i', b'm', 0], &[0]].concat();
    let expect: Vec<u8> = [&((body.len() + 4) as u32).to_le_bytes()[..], &body].concat();
    assert_eq!(got, expect);
  }

  #[test]
  fn string_bytes_short_long_and_without_slack() {
    let mut e = Encoder::new();
    e.define_key(0, b"s").unwrap();
    let long = vec![b'x'; 100];
    for text in [&b"hello"[..], &b""[..], &long[..]] {
      for slack in [0usize, 64] {
        let ops = [w(op::STRING_BYTES, 1), w(op::ARRAY, 1), op::STRING_BYTES, op::END, op::END];
        let mut nums = Vec::new();
        for _ in 0..2 {
          nums.extend((text.len() as u32).to_le_bytes());
          nums.extend([0u8; 4]);
        }
        let mut bytes = [text, text].concat();
        bytes.extend(std::iter::repeat(0xEE).take(slack));
        let got = run_all(&mut e, &ops, &nums, &bytes, &[], 4).unwrap();
        let el: Vec<u8> = [&((text.len() + 1) as u32).to_le_bytes()[..], text, &[0]].concat();
        let inner: Vec<u8> = [&[2u8, b'0', 0][..], &el, &[0]].concat();
        let body: Vec<u8> = [&[2u8, b's', 0][..], &el, &[4, b's', 0], &((inner.len() + 4) as u32).to_le_bytes(), &inner, &[0]].concat();
        let expect: Vec<u8> = [&((body.len() + 4) as u32).to_le_bytes()[..], &body].concat();
        assert_eq!(got, expect);
      }
    }
  }

  #[test]
  fn oid_from_ints_matches_bytes() {
    let mut e = Encoder::new();
    e.define_key(0, b"o").unwrap();
    let ints = [0x010203i32, 0x040506, 0x070809, 0x0a0b0c];
    let nums: Vec<u8> = ints.iter().flat_map(|i| i.to_le_bytes()).collect();
    let got = run_all(&mut e, &[w(op::OID_INTS, 1), w(op::ARRAY, 1), op::OID_INTS, op::END, op::END], &[nums.clone(), nums].concat(), &[], &[], 4).unwrap();
    let oid: Vec<u8> = (1..=12).collect();
    assert_eq!(&got[4..7], &[7, b'o', 0]);
    assert_eq!(&got[7..19], &oid[..]);
    assert_eq!(&got[got.len() - 14..got.len() - 2], &oid[..]);
  }

  #[test]
  fn dates_follow_long_from_number() {
    assert_eq!(long_from_number(f64::NAN), 0);
    assert_eq!(long_from_number(-1.5), -1);
    assert_eq!(long_from_number(1e300), i64::MAX);
    assert_eq!(long_from_number(-1e300), i64::MIN);
    assert_eq!(long_from_number(8.64e15), 8_640_000_000_000_000);
  }

  #[test]
  fn malformed_tapes_are_errors() {
    let mut e = Encoder::new();
    let cases: Vec<(Vec<u32>, Vec<u8>, Vec<OwnedArg>)> = vec![
      (vec![], vec![], vec![]),
      (vec![op::DOC], vec![], vec![s("a")]),
      (vec![op::END, op::END], vec![], vec![]),
      (vec![w(op::DOUBLE, 0)], vec![], vec![s("a")]),
      (vec![w(op::STRING, 9), op::END], vec![], vec![s("a")]),
      (vec![w(op::OID, 0), op::END], vec![], vec![s("a")]),
      (vec![0x42, op::END], vec![], vec![]),
      (vec![op::SKIP, op::END], vec![], vec![]),
      (vec![w(op::BINARY, 0), op::END], vec![0xff; 8], vec![s("a"), OwnedArg::Bytes(vec![])]),
      (vec![w(op::BINARY, 0), op::END], vec![0; 8], vec![s("a"), s("b")]),
      (vec![w(op::STRING, 0), op::END], vec![], vec![s("a"), OwnedArg::Bytes(vec![])]),
    ];
    for (ops, nums, args) in cases {
      assert!(run_all(&mut e, &ops, &nums, &[], &args, 8).is_err(), "{ops:?}");
    }
    // Running without begin() is an error too.
    let mut out = [0u8; 8];
    assert!(e.run(&[0], &[], &[], &mut out, &mut [][..]).is_err());
  }

  #[test]
  fn too_small_reports_size_and_counting_matches() {
    let mut e = Encoder::new();
    let ops = [w(op::STRING, 0), op::END];
    let long = "é".repeat(100);
    let args = [s("k"), s(&long)];
    let mut out = [0u8; 10];
    e.begin();
    let step = e.run(&ops, &[], &[], &mut out, &mut args.clone()[..]).unwrap();
    assert_eq!(step, Step::TooSmall(4 + 1 + 2 + 4 + 200 + 1 + 1));
  }

  #[test]
  fn documents_past_the_int32_limit_are_refused() {
    let mut e = Encoder::new();
    let mut nums = Vec::new();
    nums.extend(i32::MAX.to_le_bytes());
    nums.extend(0i32.to_le_bytes());
    let ops = [w(op::BINARY, 0), op::END];
    let mut out = [0u8; 64];
    e.begin();
    let r = e.run(&ops, &nums, &[], &mut out, &mut [s("k"), OwnedArg::Bytes(vec![1])][..]);
    assert_eq!(r, Err(too_large()));
    // just under the limit is fine (in counting mode)
    let mut nums = Vec::new();
    nums.extend((i32::MAX - 100).to_le_bytes());
    nums.extend(0i32.to_le_bytes());
    e.begin();
    let r = e.run(&ops, &nums, &[], &mut out, &mut [s("k"), OwnedArg::Bytes(vec![1])][..]);
    assert_eq!(r, Ok(Step::TooSmall(4 + 1 + 2 + 4 + 1 + (i32::MAX as usize - 100) + 1)));
  }

  #[test]
  fn key_ids_are_bounded() {
    let mut e = Encoder::new();
    assert!(e.define_key(MAX_KEYS, b"x").is_err());
    assert!(e.define_key(MAX_KEYS - 1, b"x").is_ok());
  }

  /// Random tapes never panic (a poor man's fuzz target).
  #[test]
  fn random_tapes_do_not_panic() {
    let mut seed = 0x2545F4914F6CDD1Du64;
    let mut next = move || {
      seed ^= seed << 13;
      seed ^= seed >> 7;
      seed ^= seed << 17;
      seed
    };
    let mut e = Encoder::new();
    e.define_key(0, b"k").unwrap();
    let codes = [0u32, 0x22, 0x23, 0x24, 1, 2, 3, 4, 5, 7, 8, 9, 0x0A, 0x0B, 0x0D, 0x0E, 0x0F, 0x10, 0x11, 0x12, 0x13, 0x18, 0x20, 0x7F, 0xFF, 0x55];
    for _ in 0..5_000 {
      let n = (next() % 12) as usize;
      let ops: Vec<u32> = (0..n).map(|_| codes[(next() % codes.len() as u64) as usize] | ((next() % 3) as u32) << 8).collect();
      let nums: Vec<u8> = (0..(next() % 40)).map(|_| next() as u8).collect();
      let bytes: Vec<u8> = (0..(next() % 40)).map(|_| next() as u8).collect();
      let args: Vec<OwnedArg> = (0..(next() % 5))
        .map(|_| if next() % 2 == 0 { s("ab") } else { OwnedArg::Bytes(vec![1, 2, 3]) })
        .collect();
      let _ = run_all(&mut e, &ops, &nums, &bytes, &args, 1 + (next() % 3) as usize);
    }
  }
}

#[cfg(test)]
mod speed {
  use super::*;

  /// `cargo test --release -p bson-rs-core speed -- --ignored --nocapture`
  #[test]
  #[ignore]
  fn int_array_speed() {
    let code = if std::env::var("SPEED_OP").as_deref() == Ok("oid") { op::OID_INTS } else { op::INT32 };
    let mut e = Encoder::new();
    e.define_key(0, b"a").unwrap();
    let mut ops = vec![op::ARRAY | 1 << 8];
    ops.extend(std::iter::repeat(code).take(1000));
    ops.extend([op::END, op::END]);
    let nums = vec![7u8; 16 * 1000];
    let mut out = vec![0u8; 1 << 16];
    let t = std::time::Instant::now();
    let n: u32 = std::env::var("SPEED_N").ok().and_then(|v| v.parse().ok()).unwrap_or(20_000);
    for _ in 0..n {
      e.begin();
      let r = e.run(&ops, &nums, &[], &mut out, &mut [][..]).unwrap();
      assert!(matches!(r, Step::Done(_)));
    }
    println!("ns per element: {:.2}", t.elapsed().as_nanos() as f64 / f64::from(n) / 1000.0);
  }
}
