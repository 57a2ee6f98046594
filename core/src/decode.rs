//! BSON reader: validates a document and writes the decode tape
//! (format in ARCHITECTURE.md, "Decode tape").
//!
//! The reader is a port of js-bson 7.3.4's `internalDeserialize` +
//! `deserializeObject`: the same checks, in the same order, with the same
//! messages. It is iterative: nesting depth only costs heap-allocated frames.
//!
//! Rooms, and what each may call (a DAG, top to bottom):
//! - this file: the public API (`DecodeCache::decode`, `commit`), the
//!   document header, the element loop (names, nesting) and the dispatch on
//!   the type byte; calls all of the below.
//! - `values`: one reader per BSON type (`values::int64` reads an int64);
//!   calls `defs`, `tape`, `bytes`.
//! - `defs`: key / shape / short-string caches and the definitions section;
//!   calls `tape`, `bytes`.
//! - `tape`: the ops / nums writer; calls nothing.
//! - `bytes`: bounds-checked reads of the input with js-bson's semantics;
//!   calls `utf8` only.
//!
//! The submodules use this file's types (`Frame`, `Span`, `op`, errors), never its functions.

mod bytes;
mod defs;
mod tape;
mod values;

use self::bytes::{bson_err, byte, cstring_end, i32_at, name_text};
use self::defs::{Defs, KeyRef, VSlot};
use self::tape::Tape;
use crate::keys::Keys;
use crate::shapes::{Shapes, ROOT};
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
  pub const ARRAY_OIDS: u32 = 0x28;
  pub const ARRAY_DATES: u32 = 0x29;
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
  /// Check nested documents as bson 6.x and 7.0-7.2 do: their deserializer
  /// recurses into each one (`values::document` / `array` / `code_w_scope`
  /// and `close` say where that changes a check or a message).
  pub const RECURSIVE: u32 = 512;
}

/// `Span::kind` of a key-table string (`start` is the key id).
pub const SPAN_KEY: u8 = 3;
/// At most this many strings of one decode are read by JS from the input (`write_js_spans`).
pub const JS_SPANS_MAX: usize = 4;
/// ... each at most this many bytes.
pub const JS_SPAN_MAX_LEN: u32 = 64;

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

/// An open document, array or code-with-scope scope.
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
  /// A code-with-scope's total-size check, due when its scope closes (the
  /// recursive readers make it after reading the scope): `SCOPE_*`.
  scope_check: u8,
  /// This frame's keys are looked up in `validation.utf8`'s names: the root,
  /// and (recursive readers: they pass the options on unchanged) a
  /// code-with-scope scope directly in such a frame. Elsewhere a key
  /// inherits its parent element's setting.
  utf8_by_name: bool,
}

const SCOPE_OK: u8 = 0;
const SCOPE_TOO_SHORT: u8 = 1;
const SCOPE_TOO_LONG: u8 = 2;

impl Frame {
  /// A parsed (not raw) embedded document or code-with-scope scope ending at `last_index`.
  fn document(kind: u8, validate: bool, last_index: i64, key_start: u32) -> Self {
    Frame {
      kind,
      raw: false,
      dbref: DB_NULL,
      validate,
      last_index,
      array_index: 0,
      node: ROOT,
      n: 0,
      key_start,
      scope_check: SCOPE_OK,
      utf8_by_name: false,
    }
  }
}

/// Slots of the short-string value cache (a power of two).
pub const VCACHE_SLOTS: usize = 4096;
/// Longest string value (bytes) kept in the value cache.
pub const VCACHE_MAX_LEN: usize = 32;

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
      vcache: vec![VSlot::EMPTY; VCACHE_SLOTS],
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

  /// When the last decode's strings are few, short ASCII runs of the input,
  /// JS reads them from the input itself (latin1Slice, ~60 ns each), which is
  /// cheaper than the binding's call into JS with them (~300 ns a call):
  /// writes them as (start, end) pairs into `ops` at `used` (past the tape)
  /// and returns how many; 0 when they go the usual way.
  pub fn write_js_spans(&self, ops: &mut [u32], used: usize) -> usize {
    let n = self.span_count();
    if n == 0 || n > JS_SPANS_MAX {
      return 0;
    }
    let Some(dst) = used.checked_add(2 * n).and_then(|end| ops.get_mut(used..end)) else {
      return 0;
    };
    for (pair, span) in dst.chunks_exact_mut(2).zip(self.spans()) {
      if span.kind != utf8::ASCII || span.end.saturating_sub(span.start) > JS_SPAN_MAX_LEN {
        return 0;
      }
      pair[0] = span.start;
      pair[1] = span.end;
    }
    n
  }

  pub fn key_bytes(&self, id: u32) -> &[u8] {
    self.keys.bytes(id)
  }

  /// Decodes one document into `ops` / `nums`.
  pub fn decode(&mut self, req: &Request, ops: &mut [u32], nums: &mut [u64]) -> Outcome {
    self.decodes_since_reset = self.decodes_since_reset.saturating_add(1);
    self.keys.count_document();
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

    let mut tape = Tape::new(ops, 2, nums);
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

  // Never inlined into `decode` (and so into the binding): the element loop
  // keeps its own register allocation, as before the split.
  #[inline(never)]
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
    if buf.len() > u32::MAX as usize {
      return bson_err("bson-rs: input larger than 4 GiB is not supported");
    }
    let flags = req.flags;
    let promote_values = flags & flag::PROMOTE_VALUES != 0;
    let promote_longs = flags & flag::PROMOTE_LONGS != 0 && promote_values;
    let big = flags & flag::USE_BIGINT64 != 0;
    let global_raw = flags & flag::RAW != 0;
    let recursive = flags & flag::RECURSIVE != 0;
    let bson_regexp = flags & flag::BSON_REGEXP != 0;

    let (start_index, size) = root_header(buf, req.index, flags)?;
    let mut index = start_index + 4;
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
      scope_check: SCOPE_OK,
      utf8_by_name: true,
    };

    loop {
      let et = byte(buf, index);
      index += 1;
      if et == Some(0) {
        let Some(parent) = frames.pop() else { break };
        let done = std::mem::replace(&mut cur, parent);
        close(&done, index, recursive, t, &mut defs, key_stack, body_spans, buf)?;
        continue;
      }

      let i = cstring_end(buf, index)?;
      let Some(et) = et else { return bson_err("Bad BSON Document: illegal CString") };
      // The key (js-bson's `name`): `None` in arrays, where the name is the index.
      let (kb, array_index, validate) = element_name(buf, index, i, &mut cur, req, &mut defs, key_stack);
      let top_raw = cur.raw;
      let key_start = key_stack.len() as u32;
      let at = i + 1;

      index = match et {
        0x02 => values::string(buf, at, t, &mut defs, body_spans, validate)?,
        0x0E => values::symbol(buf, at, t, body_spans, validate)?,
        0x0D => values::code(buf, at, t, body_spans, validate)?,
        0x07 | 0x09 if cur.kind == K_ARR => {
          let (next, extra) = values::same_type_run(buf, at, et, t);
          cur.n = cur.n.wrapping_add(extra);
          cur.array_index = cur.array_index.wrapping_add(extra);
          next
        }
        0x07 => values::object_id(buf, at, t),
        0x10 | 0x01 | 0x12 if promote_values && cur.kind == K_ARR && !(big && et == 0x12) => {
          let (next, extra) = values::number_run(buf, at, et, array_index, t, big, promote_longs);
          cur.n = cur.n.wrapping_add(extra);
          cur.array_index = cur.array_index.wrapping_add(extra);
          next
        }
        0x10 => values::int32(buf, at, t, promote_values),
        0x01 => values::double(buf, at, t, promote_values),
        0x09 => values::date(buf, at, t),
        0x08 => values::boolean(buf, at, t)?,
        0x03 => values::document(buf, at, t, global_raw || top_raw, validate, recursive, frames, &mut cur, key_start)?,
        0x04 => values::array(buf, at, req.raw_names, kb, array_index, top_raw, validate, recursive, frames, &mut cur, key_start)?,
        0x06 => values::undefined(at, t),
        0x0A => values::null(at, t),
        0x12 => values::int64(buf, at, t, big, promote_longs)?,
        0x13 => values::decimal128(at, t),
        0x05 => values::binary(buf, at, t)?,
        0x0B => values::regexp(buf, at, t, body_spans, regex_spans, bson_regexp)?,
        0x11 => values::timestamp(buf, at, t)?,
        0xFF => values::min_key(at, t),
        0x7F => values::max_key(at, t),
        0x0F => values::code_w_scope(buf, at, t, body_spans, validate, recursive, frames, &mut cur, key_start)?,
        0x0C => values::db_pointer(buf, at, t, body_spans, validate)?,
        _ => {
          return Err(DecodeError::Bson(format!(
            "Detected unknown BSON type {:x} for fieldname \"{}\"",
            et,
            name_text(kb, array_index)
          )));
        }
      };
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

/// js-bson's `internalDeserialize` checks and the start of `deserializeObject`:
/// returns the root document's start index and size.
fn root_header(buf: &[u8], index: usize, flags: u32) -> Result<(i64, i64), DecodeError> {
  let len = buf.len() as i64;
  // internalDeserialize
  let index0 = (index as i64).min(len);
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
  if len < 5 {
    return bson_err("corrupt bson message < 5 bytes long");
  }
  let size = i32_at(buf, index0) as i64;
  if size < 5 || size > len {
    return bson_err("corrupt bson message");
  }
  Ok((index0, size))
}

/// The element name between `start` and its NUL at `end`, in the innermost
/// frame `top`: counts the element, interns the key (moving the frame along
/// the shape trie), tracks `$ref`/`$id`/`$db` and decides UTF-8 validation.
/// Returns the key (`None` in an array), the array index and `validate`.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn element_name<'b>(
  buf: &'b [u8],
  start: i64,
  end: i64,
  top: &mut Frame,
  req: &Request,
  defs: &mut Defs,
  key_stack: &mut Vec<KeyRef>,
) -> (Option<&'b [u8]>, u32, bool) {
  top.n += 1;
  let kb: Option<&[u8]> = if top.kind == K_ARR { None } else { buf.get(start as usize..end as usize) };
  let array_index = top.array_index;
  let validate;
  match kb {
    None => {
      top.array_index = top.array_index.wrapping_add(1);
      validate = top.validate;
    }
    Some(kb) => {
      let setting = req.flags & flag::UTF8 != 0;
      validate = if !top.utf8_by_name {
        top.validate
      } else if req.flags & flag::UTF8_MAP != 0 {
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
      key_stack.push(KeyRef { id, start: start as u32, end: end as u32 });
    }
  }
  (kb, array_index, validate)
}

/// The end of a nested frame `done` (its 0x00 byte was just read; `index` is
/// past it): checks its size and emits the op that builds it.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn close(
  done: &Frame,
  index: i64,
  recursive: bool,
  t: &mut Tape,
  defs: &mut Defs,
  key_stack: &mut Vec<KeyRef>,
  body_spans: &mut Vec<Span>,
  buf: &[u8],
) -> Result<(), DecodeError> {
  if index != done.last_index {
    // The recursive readers' size check at the end of `deserializeObject`.
    return match (recursive, done.kind == K_ARR) {
      (false, true) => bson_err("corrupted array bson"),
      (false, false) => bson_err("Bad BSON Document: object not properly terminated"),
      (true, true) => bson_err("corrupt array bson"),
      (true, false) => bson_err("corrupt object bson"),
    };
  }
  match done.scope_check {
    SCOPE_TOO_SHORT => return bson_err("code_w_scope total size is too short, truncating scope"),
    SCOPE_TOO_LONG => return bson_err("code_w_scope total size is too long, clips outer document"),
    _ => {}
  }
  match done.kind {
    K_ARR => t.array(done.n),
    K_CWS => {
      // (the recursive readers read a scope with deserializeObject, which
      // makes a DBRef of one that looks like it; 7.3 keeps it an object)
      defs.object(t, key_stack, body_spans, buf, done, recursive && done.dbref == DB_TRUE);
      t.op(op::CODE_W_SCOPE);
    }
    _ => defs.object(t, key_stack, body_spans, buf, done, done.dbref == DB_TRUE),
  }
  key_stack.truncate(done.key_start as usize);
  Ok(())
}

impl Default for DecodeCache {
  fn default() -> Self {
    Self::new()
  }
}

#[cfg(test)]
mod tests;
