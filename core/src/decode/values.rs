//! One reader per BSON element type: the answer to "where is an int64
//! read?" is `int64` here. Each is js-bson 7.3.4's `deserializeObject` case
//! for that type (same checks, in the same order, same messages): it reads
//! the value at `at` (just past the element's name), writes its tape ops and
//! returns the index after the value. Embedded documents, arrays and
//! code-with-scope open a frame instead; the main loop (`DecodeCache::run`)
//! closes it. Calls `bytes`, `tape`, `defs`.

use super::bytes::{all_in, bson_err, byte, cstring_end, f64_at, i32_at, index_name, IndexNames, lossy_span, pair, prefixed_string, string_span};
use super::defs::Defs;
use super::tape::Tape;
use super::{op, DecodeError, Frame, Span, DB_FALSE, K_ARR, K_CWS, K_OBJ, SCOPE_OK, SCOPE_TOO_LONG, SCOPE_TOO_SHORT, VCACHE_MAX_LEN};
use crate::shapes::NONE;
use crate::utf8;

/// Makes `child` the innermost frame (`cur`), its parent goes on `frames`.
#[inline(always)]
fn open(frames: &mut Vec<Frame>, cur: &mut Frame, child: Frame) {
  frames.push(std::mem::replace(cur, child));
}

/// 0x01 double: a number (promoteValues) or `Double`.
#[inline(always)]
pub(super) fn double(buf: &[u8], at: i64, t: &mut Tape, promote_values: bool) -> i64 {
  let v = f64_at(buf, at);
  if promote_values {
    t.number(v.to_bits(), false);
  } else {
    t.op(op::DOUBLE_OBJ);
    t.num(v.to_bits());
  }
  at + 8
}

/// 0x02 string. The hottest case: it does not use `prefixed_string` (measured
/// faster this way), and short valid values go through the value cache.
#[inline(always)]
pub(super) fn string(
  buf: &[u8],
  at: i64,
  t: &mut Tape,
  defs: &mut Defs,
  body_spans: &mut Vec<Span>,
  validate: bool,
) -> Result<i64, DecodeError> {
  let len = buf.len() as i64;
  let ss = i32_at(buf, at) as i64;
  let index = at + 4;
  if ss <= 0 || ss > len - index || byte(buf, index + ss - 1) != Some(0) {
    return bson_err("bad string length in bson");
  }
  let span = string_span(buf, index, index + ss - 1, validate)?;
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
  Ok(index + ss)
}

/// 0x03 embedded document: a RAW view (raw option, or inside a raw array),
/// else a new document frame.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(super) fn document(
  buf: &[u8],
  at: i64,
  t: &mut Tape,
  raw: bool,
  validate: bool,
  recursive: bool,
  frames: &mut Vec<Frame>,
  cur: &mut Frame,
  key_start: u32,
) -> Result<i64, DecodeError> {
  let object_size = i32_at(buf, at) as i64;
  if recursive {
    // bson 6.x / 7.0-7.2: the element's check, then (parsed, not raw) the
    // recursive deserializeObject's own size check.
    if object_size <= 0 || object_size > buf.len() as i64 - at {
      return bson_err("bad embedded document length in bson");
    }
    if !raw && object_size < 5 {
      return bson_err("corrupt bson message");
    }
  } else if object_size < 5 || object_size > buf.len() as i64 - at {
    return bson_err("bad embedded document length in bson");
  }
  if raw {
    t.op(op::RAW);
    t.op(at as u32);
    t.op(object_size as u32);
    Ok(at + object_size)
  } else {
    open(frames, cur, Frame::document(K_OBJ, validate, at + object_size, key_start));
    Ok(at + 4)
  }
}

/// 0x04 array: a new array frame, raw when its name is in `fieldsAsRaw`
/// (`raw_names`) or it is inside a raw array. `kb` is the key (`None` in an
/// array, where the name is `array_index`).
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(super) fn array(
  buf: &[u8],
  at: i64,
  raw_names: Option<&[Vec<u8>]>,
  kb: Option<&[u8]>,
  array_index: u32,
  top_raw: bool,
  validate: bool,
  recursive: bool,
  frames: &mut Vec<Frame>,
  cur: &mut Frame,
  key_start: u32,
) -> Result<i64, DecodeError> {
  let object_size = i32_at(buf, at) as i64;
  if recursive {
    // bson 6.x / 7.0-7.2 check an array only in the recursive deserializeObject,
    // against the whole input.
    if object_size < 5 || object_size > buf.len() as i64 {
      return bson_err("corrupt bson message");
    }
  } else if object_size < 5 || object_size > buf.len() as i64 - at {
    return bson_err("bad embedded array length in bson");
  }
  let named_raw = match raw_names {
    None => false,
    Some(names) => {
      let mut name_buf = [0u8; 10];
      let name: &[u8] = match kb {
        Some(k) => k,
        None => index_name(array_index, &mut name_buf),
      };
      names.iter().any(|n| utf8::lossy_eq(name, n))
    }
  };
  let child = Frame {
    kind: K_ARR,
    raw: named_raw || top_raw,
    dbref: DB_FALSE,
    validate,
    last_index: at + object_size,
    array_index: 0,
    node: NONE,
    n: 0,
    key_start,
    scope_check: SCOPE_OK,
    utf8_by_name: false,
  };
  open(frames, cur, child);
  Ok(at + 4)
}

/// 0x05 binary (subtype 2 has a second, inner length). The rare readers are
/// out of line: inlined, they cost `run`'s hot arms registers (callgrind,
/// flat_bson run: 38.9k -> 37.6k instructions, tweet 18.0k -> 16.7k).
#[inline(never)]
pub(super) fn binary(buf: &[u8], at: i64, t: &mut Tape) -> Result<i64, DecodeError> {
  let len = buf.len() as i64;
  let mut index = at;
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
  Ok(index + binary_size)
}

/// 0x06 undefined.
#[inline(always)]
pub(super) fn undefined(at: i64, t: &mut Tape) -> i64 {
  t.op(op::UNDEFINED);
  at
}

/// 0x07 ObjectId: its 12 bytes as the four big-endian 24-bit ints js-bson
/// (7.3.2+) keeps in `i0`..`i3`, two to a number slot (low half first); JS
/// builds the ObjectId from them.
#[inline(always)]
pub(super) fn object_id(buf: &[u8], at: i64, t: &mut Tape) -> i64 {
  t.object_id(object_id_slots(buf, at));
  at + 12
}

/// The two number slots of the ObjectId at `at` (`object_id`). Bytes past
/// the end read as 0, as in JS.
#[inline(always)]
fn object_id_slots(buf: &[u8], at: i64) -> [u64; 2] {
  match usize::try_from(at).ok().and_then(|i| buf.get(i..)).and_then(|s| s.first_chunk::<12>()) {
    Some(b) => object_id_ints(b),
    None => object_id_past_end(buf, at),
  }
}

/// An ObjectId some of whose bytes are past the end of the input.
#[cold]
#[inline(never)]
fn object_id_past_end(buf: &[u8], at: i64) -> [u64; 2] {
  let mut b = [0u8; 12];
  for (k, slot) in b.iter_mut().enumerate() {
    *slot = byte(buf, at + k as i64).unwrap_or(0);
  }
  object_id_ints(&b)
}

/// ObjectId bytes `b` as `object_id`'s two slots. (Two big-endian loads:
/// built from twelve byte loads, as before, they spilled in a loop.)
#[inline(always)]
fn object_id_ints(b: &[u8; 12]) -> [u64; 2] {
  let [b0, b1, b2, b3, b4, b5, b6, b7, b8, b9, b10, b11] = *b;
  let head = u64::from_be_bytes([b0, b1, b2, b3, b4, b5, b6, b7]);
  let tail = u64::from(u32::from_be_bytes([b8, b9, b10, b11]));
  let i0 = head >> 40;
  let i1 = (head >> 16) & 0xff_ffff;
  let i2 = (head & 0xffff) << 8 | tail >> 24;
  let i3 = tail & 0xff_ffff;
  [i0 | i1 << 32, i2 | i3 << 32]
}

/// 0x08 boolean.
#[inline(always)]
pub(super) fn boolean(buf: &[u8], at: i64, t: &mut Tape) -> Result<i64, DecodeError> {
  let b = byte(buf, at);
  if b != Some(0) && b != Some(1) {
    return bson_err("illegal boolean type value");
  }
  t.op(if b == Some(1) { op::TRUE } else { op::FALSE });
  Ok(at + 1)
}

/// 0x09 UTC datetime: JS gets the milliseconds as a double.
#[inline(always)]
pub(super) fn date(buf: &[u8], at: i64, t: &mut Tape) -> i64 {
  t.date(date_slot(buf, at));
  at + 8
}

/// The number slot of the date at `at`: its milliseconds as a double.
#[inline(always)]
fn date_slot(buf: &[u8], at: i64) -> [u64; 1] {
  let lo = i32_at(buf, at);
  let hi = i32_at(buf, at + 4);
  [((hi as f64) * 4294967296.0 + (lo as u32 as f64)).to_bits()]
}

/// 0x0A null.
#[inline(always)]
pub(super) fn null(at: i64, t: &mut Tape) -> i64 {
  t.op(op::NULL);
  at
}

/// 0x0B regular expression: two C strings (source, options), never validated.
/// They are also kept in `regex_spans` (JS builds them first after an error).
#[inline(never)]
pub(super) fn regexp(
  buf: &[u8],
  at: i64,
  t: &mut Tape,
  body_spans: &mut Vec<Span>,
  regex_spans: &mut Vec<Span>,
  bson_regexp: bool,
) -> Result<i64, DecodeError> {
  let e1 = cstring_end(buf, at)?;
  let source = lossy_span(buf, at, e1);
  let index = e1 + 1;
  let e2 = cstring_end(buf, index)?;
  let options = lossy_span(buf, index, e2);
  body_spans.push(source);
  body_spans.push(options);
  regex_spans.push(source);
  regex_spans.push(options);
  t.op(op::REGEXP | if bson_regexp { 1 << 8 } else { 0 });
  Ok(e2 + 1)
}

/// 0x0C DBPointer: a namespace string, then 12 ObjectId bytes.
#[inline(never)]
pub(super) fn db_pointer(buf: &[u8], at: i64, t: &mut Tape, body_spans: &mut Vec<Span>, validate: bool) -> Result<i64, DecodeError> {
  let mut index = at;
  let (span, _) = prefixed_string(buf, &mut index, buf.len() as i64, validate)?;
  body_spans.push(span);
  t.op(op::DBPOINTER);
  t.op(index as u32);
  Ok(index + 12)
}

/// 0x0D code (without scope).
#[inline(never)]
pub(super) fn code(buf: &[u8], at: i64, t: &mut Tape, body_spans: &mut Vec<Span>, validate: bool) -> Result<i64, DecodeError> {
  let mut index = at;
  let (span, _) = prefixed_string(buf, &mut index, buf.len() as i64, validate)?;
  body_spans.push(span);
  t.op(op::CODE);
  Ok(index)
}

/// 0x0E symbol.
#[inline(never)]
pub(super) fn symbol(buf: &[u8], at: i64, t: &mut Tape, body_spans: &mut Vec<Span>, validate: bool) -> Result<i64, DecodeError> {
  let mut index = at;
  let (span, _) = prefixed_string(buf, &mut index, buf.len() as i64, validate)?;
  body_spans.push(span);
  t.op(op::SYMBOL);
  Ok(index)
}

/// 0x0F code with scope: total size, code string, then the scope document,
/// which opens a frame (closed by the main loop with CODE_W_SCOPE).
#[allow(clippy::too_many_arguments)]
#[inline(never)]
pub(super) fn code_w_scope(
  buf: &[u8],
  at: i64,
  t: &mut Tape,
  body_spans: &mut Vec<Span>,
  validate: bool,
  recursive: bool,
  frames: &mut Vec<Frame>,
  cur: &mut Frame,
  key_start: u32,
) -> Result<i64, DecodeError> {
  let len = buf.len() as i64;
  let mut index = at;
  let total_size = i32_at(buf, index) as i64;
  index += 4;
  if total_size < 4 + 4 + 4 + 1 {
    return bson_err("code_w_scope total size shorter minimum expected length");
  }
  let (span, ss) = prefixed_string(buf, &mut index, len, validate)?;
  let scope_index = index;
  let object_size = i32_at(buf, index) as i64;
  let mut scope = Frame::document(K_CWS, validate, scope_index + object_size, key_start);
  if recursive {
    // bson 6.x / 7.0-7.2 read the scope first (recursively: its own size
    // check), then compare the total size: `close` makes that check.
    if object_size < 5 || object_size > len {
      return bson_err("corrupt bson message");
    }
    scope.utf8_by_name = cur.utf8_by_name;
    // (read with the options of the frame it is in: inside an array named
    // in fieldsAsRaw, those say raw, so its documents are raw too)
    scope.raw = cur.raw;
    scope.scope_check = if total_size < 4 + 4 + object_size + ss {
      SCOPE_TOO_SHORT
    } else if total_size > 4 + 4 + object_size + ss {
      SCOPE_TOO_LONG
    } else {
      SCOPE_OK
    };
  } else {
    if object_size < 5 || object_size > len - index {
      return bson_err("bad scope document size in code_w_scope");
    }
    if total_size < 4 + 4 + object_size + ss {
      return bson_err("code_w_scope total size is too short, truncating scope");
    }
    if total_size > 4 + 4 + object_size + ss {
      return bson_err("code_w_scope total size is too long, clips outer document");
    }
  }
  body_spans.push(span);
  t.op(op::STR);
  open(frames, cur, scope);
  Ok(index + 4)
}

/// 0x10 int32: a number (promoteValues) or `Int32`.
#[inline(always)]
pub(super) fn int32(buf: &[u8], at: i64, t: &mut Tape, promote_values: bool) -> i64 {
  let v = i32_at(buf, at);
  if promote_values {
    t.number((v as f64).to_bits(), true);
  } else {
    t.op(op::INT32_OBJ);
    t.num((v as f64).to_bits());
  }
  at + 4
}

/// Consecutive number elements of an array with promoteValues: int32,
/// double and, unless `big` (useBigInt64), int64; `et` is the first one's
/// type. A tight loop while the next elements are numbers too; returns the
/// index after the run and how many elements it read after the first.
/// Out of line so its loop gets registers of its own: inlined into `run` it
/// spilled (callgrind per element: int32 82 -> 76, base 72; int64, now in the
/// run, 148 -> 97, base 128).
#[inline(never)]
pub(super) fn number_run(buf: &[u8], at: i64, et: u8, array_index: u32, t: &mut Tape, big: bool, promote_longs: bool) -> (i64, u32) {
  let mut names = IndexNames::after(array_index);
  let mut index = at;
  let mut et = et;
  let mut extra = 0u32;
  loop {
    index = match et {
      0x10 => {
        let (next, more) = same_number_run::<4>(buf, index, &mut names, t);
        extra = extra.wrapping_add(more);
        next
      }
      0x01 => {
        let (next, more) = same_number_run::<8>(buf, index, &mut names, t);
        extra = extra.wrapping_add(more);
        next
      }
      _ => long_or_number(buf, index, t, promote_longs),
    };
    let next = byte(buf, index);
    match next {
      Some(0x10 | 0x01) => {}
      Some(0x12) if !big => {}
      _ => break,
    }
    // A bad key is left to the main loop, which reports it.
    let Ok(end) = names.end(buf, index + 1) else { break };
    extra = extra.wrapping_add(1);
    index = end + 1;
    et = next.unwrap_or(0x10);
  }
  (index, extra)
}

/// Consecutive int32s (W = 4) or doubles (W = 8) of a number run, from the
/// value at `at`, while the next element is of the same type: the NUM run's
/// bookkeeping once for them all (Rust speed test, 1,000 int32s: 3.5 -> 2.5
/// ns an element, doubles 3.4 -> 2.3); returns the index after the last
/// value and how many it read after the first.
#[inline(always)]
fn same_number_run<const W: i64>(buf: &[u8], at: i64, names: &mut IndexNames, t: &mut Tape) -> (i64, u32) {
  let et = if W == 4 { 0x10 } else { 0x01 };
  let mut index = at;
  let mut first = true;
  let count = t.numbers(W == 4, || {
    if !first {
      if byte(buf, index) != Some(et) {
        return None;
      }
      // A bad key is left to the main loop, which reports it.
      index = names.end(buf, index + 1).ok()? + 1;
    }
    first = false;
    let bits = if W == 4 { (i32_at(buf, index) as f64).to_bits() } else { f64_at(buf, index).to_bits() };
    index += W;
    Some(bits)
  });
  (index, count.saturating_sub(1))
}

/// ObjectIds (0x07) or dates (0x09) in an array, `et` being the first one's
/// type: as `number_run`, a tight loop while the next elements are of the
/// same type; returns the index after the run and how many elements it read
/// after the first. (1,000 ObjectIds: ~10 ns an element through the main
/// loop, the element-name and dispatch work included; ~4 ns here.)
#[inline(never)]
pub(super) fn same_type_run(buf: &[u8], at: i64, et: u8, t: &mut Tape) -> (i64, u32) {
  let mut index = at;
  let mut first = true;
  // Moves `index` past the next element's name when it is of type `et`.
  let mut next = |width: i64| -> Option<i64> {
    if !first {
      if byte(buf, index) != Some(et) {
        return None;
      }
      // A bad key is left to the main loop, which reports it.
      index = cstring_end(buf, index + 1).ok()? + 1;
    }
    first = false;
    let at = index;
    index += width;
    Some(at)
  };
  let count = if et == 0x07 {
    t.same_run(op::OID, || next(12).map(|at| object_id_slots(buf, at)))
  } else {
    t.same_run(op::DATE, || next(8).map(|at| date_slot(buf, at)))
  };
  (index, count.saturating_sub(1))
}

/// 0x11 timestamp: JS reads the two uint32 halves at `at`.
#[inline(never)]
pub(super) fn timestamp(buf: &[u8], at: i64, t: &mut Tape) -> Result<i64, DecodeError> {
  if !all_in(buf, at + 4, 4) {
    return bson_err("Timestamp constructed from { t, i } must provide a positive t");
  }
  t.op(op::TIMESTAMP);
  t.op(at as u32);
  Ok(at + 8)
}

/// 0x12 int64: a bigint (useBigInt64), a number (promoteLongs and within
/// ±2^53), or a `Long`.
#[inline(always)]
pub(super) fn int64(buf: &[u8], at: i64, t: &mut Tape, big: bool, promote_longs: bool) -> Result<i64, DecodeError> {
  if big {
    // getBigInt64LE adds bytes 4..=6 (NaN when one is missing) but
    // shifts byte 7 (`undefined << 24` is 0).
    if !all_in(buf, at + 4, 3) {
      return Err(DecodeError::Range(
        "The number NaN cannot be converted to a BigInt because it is not an integer".to_string(),
      ));
    }
    let lo = i32_at(buf, at);
    let hi = i32_at(buf, at + 4);
    t.op(op::BIGINT);
    t.num(pair(lo, hi));
    return Ok(at + 8);
  }
  Ok(long_or_number(buf, at, t, promote_longs))
}

/// An int64 without useBigInt64: a number when promoteLongs and within
/// ±2^53, else a `Long`. Infallible, so the hot case returns a plain index.
#[inline(always)]
fn long_or_number(buf: &[u8], at: i64, t: &mut Tape, promote_longs: bool) -> i64 {
  let lo = i32_at(buf, at);
  let hi = i32_at(buf, at + 4);
  let v = ((hi as i64) << 32) | (lo as u32 as i64);
  // js-bson's JS_INT_MIN..=JS_INT_MAX is ±2^53 inclusive.
  const MAX: i64 = 1 << 53;
  if promote_longs && (-MAX..=MAX).contains(&v) {
    t.number(((hi as f64) * 4294967296.0 + (lo as u32 as f64)).to_bits(), false);
  } else {
    t.op(op::LONG_OBJ);
    t.num(pair(lo, hi));
  }
  at + 8
}

/// 0x13 Decimal128: JS copies the 16 input bytes at `at`.
#[inline(always)]
pub(super) fn decimal128(at: i64, t: &mut Tape) -> i64 {
  t.op(op::DECIMAL128);
  t.op(at as u32);
  at + 16
}

/// 0xFF MinKey.
#[inline(always)]
pub(super) fn min_key(at: i64, t: &mut Tape) -> i64 {
  t.op(op::MINKEY);
  at
}

/// 0x7F MaxKey.
#[inline(always)]
pub(super) fn max_key(at: i64, t: &mut Tape) -> i64 {
  t.op(op::MAXKEY);
  at
}
