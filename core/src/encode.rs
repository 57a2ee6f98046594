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
//!
//! Rooms, and what each may call (a DAG, top to bottom):
//! - this file: the public API (`Encoder`, `Step`, `op`), the tape loop
//!   (`run_inner`: element headers, chunking, dispatch on the payload kind);
//!   calls all of the below.
//! - `values`: one writer per payload kind on the general path
//!   (`values::num8` writes an int64); calls `out`, `args`.
//! - `fast`: the fast path for runs of fixed-size elements (numbers, dates,
//!   booleans, ObjectIds, short strings) written into a window; calls `ops`, `out`.
//! - `ops`: the op table (per op: payload kind, BSON type byte, arguments); calls nothing.
//! - `out`: the output writer (counting mode, key words, array indices); calls `args`.
//! - `args`: the string / byte arguments of a call and their carry-over; calls nothing.
//!
//! Where a BSON type is written: find its op in `ops::OPS`; its kind's writer
//! in `values` writes it, and for fixed-size kinds the kind's arm in
//! `fast::fast_run` too (the hand-inlined copy that keeps the fast path fast).
//! The submodules use this file's types and error constructors, never its loop.

mod args;
mod fast;
mod ops;
mod out;
mod values;

pub use self::args::{ArgSource, OwnedArg};
use self::args::Chained;
use self::fast::fast_run;
use self::ops::*;
use self::out::Out;
use self::values::StrRead;

/// Largest document size bson-rs produces (the int32 size prefix).
pub const MAX_DOCUMENT_SIZE: usize = i32::MAX as usize;
/// Bound of the key table (ids `0..MAX_KEYS`).
pub const MAX_KEYS: usize = 1 << 16;

/// Key part of a tape word (`word >> 8`) with this bit set: the key's bytes
/// (no NUL) are on the bytes tape, `key_ref & KEY_BYTES_LEN` of them.
pub const KEY_BYTES: usize = 1 << 22;
pub const KEY_BYTES_LEN: usize = 0xFF;

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
  pub const REGEX_BYTES: u32 = 0x25;
  pub const STRING_UTF16: u32 = 0x26;
  pub const CODE_BYTES: u32 = 0x27;
  pub const SYMBOL_BYTES: u32 = 0x28;
  /// A string that is the next piece of the document's rope (see
  /// `Encoder::rope`); the slot holds its length in UTF-16 code units.
  /// ROPE_FIRST is the first piece and takes the rope itself as its string argument.
  pub const STRING_ROPE_FIRST: u32 = 0x29;
  pub const STRING_ROPE: u32 = 0x2A;
  /// A string argument none of whose characters is above U+00FF (JS checked),
  /// read as Latin-1 bytes.
  pub const STRING_LATIN1: u32 = 0x2B;
  pub const MAXKEY: u32 = 0x7F;
  pub const MINKEY: u32 = 0xFF;
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

/// Rope units kept allocated between documents (256 KiB).
const KEEP_ROPE_UNITS: usize = 1 << 17;

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
  /// next unit of `Encoder::rope`
  rope_pos: usize,
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
  /// The document's rope: its short strings concatenated by the walk into
  /// one string argument, read once (op STRING_ROPE_FIRST) and cut into
  /// pieces by length (op STRING_ROPE) instead of copied character by
  /// character in JS.
  rope: Vec<u16>,
  /// (scratch for a rope carried over as UTF-8)
  rope_utf8: Vec<u8>,
  /// Strings of op STRING_LATIN1 that held a character above U+007F, ever
  /// (JS pauses its search for such strings while none do: types.js).
  latin1_widened: u64,
}

impl Default for Encoder {
  fn default() -> Self {
    Self::new()
  }
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
      cur: Cursor { active: false, op: 0, num: 0, byte: 0, arg: 0, pos: 0, overflow: false, rope_pos: 0, frames: Vec::new() },
      carry: Vec::new(),
      rope: Vec::new(),
      rope_utf8: Vec::new(),
      latin1_widened: 0,
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
    c.rope_pos = 0;
    c.frames.clear();
    self.rope.clear();
    c.frames.push(Frame { start: 0, cws: NO_CWS, array: false, index: 0 });
    self.carry.clear();
  }

  /// Abandons the document in progress and frees oversized internal buffers.
  /// Strings of op STRING_LATIN1 that held a character above U+007F, ever.
  pub fn latin1_widened(&self) -> u64 {
    self.latin1_widened
  }

  pub fn reset(&mut self) {
    self.cur.active = false;
    self.cur.frames.clear();
    if self.cur.frames.capacity() > 4096 {
      self.cur.frames.shrink_to(64);
    }
    self.carry.clear();
    self.carry.shrink_to(8);
    self.rope.clear();
    self.rope.shrink_to(KEEP_ROPE_UNITS);
    self.rope_utf8 = Vec::new();
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
    let rope = &mut self.rope;
    let rope_utf8 = &mut self.rope_utf8;
    let c = &mut self.cur;
    let nargs = args.count();
    let mut out = Out { buf, pos: c.pos, overflow: c.overflow, latin1_widened: &mut self.latin1_widened };
    let mut ai = c.arg;
    let mut ni = c.num;
    let mut bi = c.byte;
    let mut oi = c.op;
    let mut rope_pos = c.rope_pos;
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
        values::end(&mut out, frame)?;
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
        fast_run(&mut out, ops, &mut oi, nums, &mut ni, bytes, &mut bi, (rope, &mut rope_pos), frame, keys)?;
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
        c.rope_pos = rope_pos;
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
      } else if key_ref & KEY_BYTES != 0 {
        values::key_bytes(&mut out, bytes, &mut bi, key_ref & KEY_BYTES_LEN)?;
      } else {
        let (words, len) = keys.get(key_ref - 1).and_then(|k| k.as_ref()).ok_or_else(|| bad("undefined key id"))?;
        out.put_words(words, *len);
      }

      match info.kind {
        K_NUM8 => values::num8(&mut out, num),
        K_INT32 => values::int32(&mut out, num),
        K_DATE => values::date(&mut out, num),
        K_FALSE => values::boolean(&mut out, false),
        K_TRUE => values::boolean(&mut out, true),
        K_NONE => {}
        K_OID => values::object_id(&mut out, bytes, &mut bi)?,
        K_OIDI => values::object_id_ints(&mut out, nums, &mut ni)?,
        K_DEC => values::decimal128(&mut out, bytes, &mut bi)?,
        K_STRB => values::string_bytes(&mut out, num, bytes, &mut bi)?,
        K_STR => values::string(&mut out, args, &mut ai, StrRead::Utf8)?,
        K_STRW => values::string(&mut out, args, &mut ai, StrRead::Utf16)?,
        K_STRL => values::string(&mut out, args, &mut ai, StrRead::Latin1)?,
        K_STRR => {
          if code as u32 == op::STRING_ROPE_FIRST {
            values::read_rope(rope, rope_utf8, args, ai)?;
            ai += 1;
          }
          values::rope_piece(&mut out, num, rope, &mut rope_pos)?
        }
        K_REGEX => values::regex(&mut out, args, &mut ai)?,
        K_REGB => values::regex_bytes(&mut out, num, bytes, &mut bi)?,
        K_BINARY => values::binary(&mut out, num, args, &mut ai)?,
        K_BINB => values::binary_bytes(&mut out, num, bytes, &mut bi)?,
        K_DOC => values::document(&mut out, frames, code as u32 == op::ARRAY),
        K_CWS => values::code_w_scope(&mut out, args, &mut ai, frames)?,
        _ => return Err(bad("unknown op")),
      }
      oi += 1;
    }
  }
}

#[cfg(test)]
mod tests;
