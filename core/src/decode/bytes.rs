//! Reads of the (untrusted) input: bytes, little-endian numbers, C strings
//! and length-prefixed strings, with js-bson's out-of-bounds semantics.
//!
//! Where js-bson reads past the end of the buffer (a typed array read gives
//! `undefined`), these reproduce what the JS code computes from it
//! (`undefined | 0` is 0, `undefined + n` is NaN), without ever reading out
//! of bounds. Calls nothing of the reader but `utf8`.

use super::{DecodeError, Span};
use crate::utf8;

pub(super) fn bson_err<T>(msg: &str) -> Result<T, DecodeError> {
  Err(DecodeError::Bson(msg.to_string()))
}

/// 8 bytes at `i` as a little-endian word (0 when they are not all there).
#[inline(always)]
pub(super) fn read8(b: &[u8], i: usize) -> u64 {
  b.get(i..i.wrapping_add(8)).and_then(|s| <[u8; 8]>::try_from(s).ok()).map_or(0, u64::from_le_bytes)
}

/// 4 bytes at `i` as a little-endian word (0 when they are not all there).
#[inline(always)]
pub(super) fn read4(b: &[u8], i: usize) -> u64 {
  b.get(i..i.wrapping_add(4)).and_then(|s| <[u8; 4]>::try_from(s).ok()).map_or(0, u32::from_le_bytes) as u64
}

#[inline(always)]
pub(super) fn byte(b: &[u8], i: i64) -> Option<u8> {
  if i >= 0 {
    b.get(i as usize).copied()
  } else {
    None
  }
}

/// js-bson `getInt32LE`: bytes past the end read as 0.
#[inline(always)]
pub(super) fn i32_at(b: &[u8], i: i64) -> i32 {
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

/// js-bson `getFloat64LE`: bytes past the end read as 0.
#[inline(always)]
pub(super) fn f64_at(b: &[u8], i: i64) -> f64 {
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

/// All `n` bytes at `i` are inside the input.
#[inline(always)]
pub(super) fn all_in(b: &[u8], i: i64, n: i64) -> bool {
  i >= 0 && i + n <= b.len() as i64
}

/// Two int32 halves as one 8-byte number slot (low word first in memory).
pub(super) fn pair(lo: i32, hi: i32) -> u64 {
  let l = lo.to_ne_bytes();
  let h = hi.to_ne_bytes();
  u64::from_ne_bytes([l[0], l[1], l[2], l[3], h[0], h[1], h[2], h[3]])
}

/// First zero byte at or after `start`, a word at a time.
#[inline(always)]
fn find_nul(b: &[u8], start: usize) -> Option<usize> {
  let mut i = start;
  while let Some(word) = b.get(i..i.wrapping_add(8)) {
    let z = zero_bytes(word);
    if z != 0 {
      return Some(i + (z.trailing_zeros() / 8) as usize);
    }
    i += 8;
  }
  b.get(i..)?.iter().position(|&c| c == 0).map(|p| i + p)
}

/// Of 8 bytes, a mask whose lowest set bit (0x80 of its byte) marks the first
/// zero byte; 0 when there is none. (Borrows only affect higher bytes.)
#[inline(always)]
fn zero_bytes(word: &[u8]) -> u64 {
  let v = u64::from_le_bytes(<[u8; 8]>::try_from(word).unwrap_or([1; 8]));
  v.wrapping_sub(0x0101_0101_0101_0101) & !v & 0x8080_8080_8080_8080
}

/// The names of an array's elements after a given index ("8", "9", "10",
/// ...): a run of elements checks that the next name ends where its index's
/// digits would (else searches, as cstring_end), so that the next element's
/// position does not wait for the load the search would make (Rust speed
/// test, 1,000 int32s: 4.6 -> 3.5 ns an element; not in the ObjectId and
/// date runs, which do more per element: 4.9 -> 5.2 ns there).
pub(super) struct IndexNames {
  len: i64,
  next: u64,
  longer_at: u64,
}

impl IndexNames {
  /// The names after the element of index `index`.
  #[inline(always)]
  pub(super) fn after(index: u32) -> Self {
    let next = index as u64 + 1;
    let (mut len, mut longer_at) = (1, 10u64);
    while next >= longer_at {
      len += 1;
      longer_at *= 10;
    }
    IndexNames { len, next, longer_at }
  }

  /// End (the NUL) of the next element's name, which starts at `start`.
  #[inline(always)]
  pub(super) fn end(&mut self, b: &[u8], start: i64) -> Result<i64, DecodeError> {
    let len = self.len;
    self.next += 1;
    if self.next == self.longer_at {
      self.len += 1;
      self.longer_at = self.longer_at.saturating_mul(10);
    }
    if let Some(word) = usize::try_from(start).ok().and_then(|s| b.get(s..s.wrapping_add(8))) {
      let z = zero_bytes(word);
      if z != 0 && i64::from(z.trailing_zeros() / 8) == len {
        return Ok(start + len);
      }
    }
    cstring_end(b, start)
  }
}

/// End of the C string starting at `index` (js-bson's loop over `buffer[i] !== 0`).
#[inline(always)]
pub(super) fn cstring_end(b: &[u8], index: i64) -> Result<i64, DecodeError> {
  if index >= 0 {
    if let Some(p) = find_nul(b, index as usize) {
      return Ok(p as i64);
    }
  }
  bson_err("Bad BSON Document: illegal CString")
}

/// A length-prefixed BSON string at `*index` (string, symbol, code, DBPointer
/// namespace): js-bson's size checks, then its span; advances `*index` past it.
/// Returns the span and the size field (bytes including the NUL).
#[inline(always)]
pub(super) fn prefixed_string(buf: &[u8], index: &mut i64, len: i64, validate: bool) -> Result<(Span, i64), DecodeError> {
  let ss = i32_at(buf, *index) as i64;
  let start = *index + 4;
  if ss <= 0 || ss > len - start || byte(buf, start + ss - 1) != Some(0) {
    return bson_err("bad string length in bson");
  }
  let span = string_span(buf, start, start + ss - 1, validate)?;
  *index = start + ss;
  Ok((span, ss))
}

/// The span of string bytes `start..end`, classified; invalid UTF-8 is an
/// error when `validate` is set.
#[inline(always)]
pub(super) fn string_span(buf: &[u8], start: i64, end: i64, validate: bool) -> Result<Span, DecodeError> {
  let kind = match buf.get(start as usize..end as usize) {
    Some(s) => utf8::classify(s),
    None => return bson_err("bad string length in bson"),
  };
  if validate && kind == utf8::LOSSY {
    return bson_err("Invalid UTF-8 string in BSON document");
  }
  Ok(Span { start: start as u32, end: end as u32, kind })
}

/// The span of string bytes `start..end` (keys, regular expressions: never validated).
pub(super) fn lossy_span(buf: &[u8], start: i64, end: i64) -> Span {
  let kind = buf.get(start as usize..end as usize).map_or(utf8::ASCII, utf8::classify);
  Span { start: start as u32, end: end as u32, kind }
}

/// The array index as js-bson's `name` (a number), as decimal text.
pub(super) fn index_name(i: u32, out: &mut [u8; 10]) -> &[u8] {
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

/// The element's name for an error message: the key, or the array index.
pub(super) fn name_text(kb: Option<&[u8]>, array_index: u32) -> String {
  match kb {
    Some(k) => utf8::lossy(k).into_owned(),
    None => array_index.to_string(),
  }
}
