//! The fast path: runs of fixed-size elements (numbers, dates, booleans,
//! null/MinKey/MaxKey, ObjectIds, Decimal128, short strings, regular
//! expressions and binaries from the bytes tape, ASCII pieces of the rope)
//! whose keys come from the key table or are array indices, written into a
//! window of `FAST_ROOM` bytes while the output has room for it.
//! Each arm writes the same bytes as the kind's arm in `run_inner`
//! (the tests run every tape with a small and a roomy output and compare).
//! Calls `ops`, `out`, `values` (`oid_from_ints`).

use super::ops::*;
use super::out::{index_digits, index_table, Out};
use super::values::oid_from_ints;
use super::{bad, long_from_number, op, Frame, KeyEntry, KEY_BYTES, KEY_BYTES_LEN};

/// Binaries on the bytes tape up to this length take the fast path (the
/// walk copies whole arrays of up to 1,023 bytes there; a longer length is left
/// to run_inner).
const LONG_BYTES_MAX: usize = 64 * 1024;

/// A binary's header in an array (run_binaries): type, index of up to four
/// digits and NUL in an 8-byte store, then size and subtype.
const BINARY_HEAD: usize = 8 + 5;

/// An array element's type byte, its index's digits (an index_table word)
/// and their NUL, in one 8-byte store at the start of `w`; returns the offset
/// of its value (indices from the table have at most 4 digits: 6 bytes).
#[inline(always)]
fn put_index_head<const N: usize>(w: &mut [u8; N], digits: u64, type_byte: u8) -> usize {
  w[0..8].copy_from_slice(&((digits << 8) | u64::from(type_byte)).to_le_bytes());
  8 - (digits.leading_zeros() / 8) as usize + 2
}

/// Room array_run gives a value after its index (a string or binary of
/// SHORT_BYTES and its header).
const VALUE_ROOM: usize = 56;

/// Staged keys up to this length take the fast path (type, key, NUL and the
/// largest fast value fit FAST_ROOM; the walk stages keys of up to 64 bytes).
const STAGED_KEY_MAX: usize = 64;

/// Copies the `n` bytes at `bi` of the bytes tape to `w[at..]` in whole
/// 8-byte words (so up to 7 bytes past them are written too, to be
/// overwritten), checking for a NUL as `values::staged_key` and
/// `values::regex_bytes` do; false (nothing to rely on written) for a NUL, or
/// bytes too near the end of the tape for whole words, which run_inner then
/// takes. (Words, not a memchr and a memcpy: those calls were 7% of
/// serializing newkeys_buckets, twelve 16-byte staged keys per document, and
/// 5% of serializing arrays of 200 RegExps.)
#[inline(always)]
fn copy_words_checked(w: &mut [u8; FAST_ROOM], at: usize, bytes: &[u8], bi: usize, n: usize) -> bool {
  const ONES: u64 = 0x0101_0101_0101_0101;
  const HIGHS: u64 = 0x8080_8080_8080_8080;
  let words = n.div_ceil(8);
  let Some(src) = bytes.get(bi..bi + words * 8) else { return false };
  for (i, chunk) in src.chunks_exact(8).enumerate() {
    let Ok(chunk) = <[u8; 8]>::try_from(chunk) else { return false };
    let word = u64::from_le_bytes(chunk);
    // the bytes past the key's end (in its last word) count as non-zero
    let past = n - i * 8;
    let word_or_past = if past >= 8 { word } else { word | (!0u64 << (past * 8)) };
    if word_or_past.wrapping_sub(ONES) & !word_or_past & HIGHS != 0 {
      return false;
    }
    let Some(d) = w.get_mut(at + i * 8..at + i * 8 + 8) else { return false };
    d.copy_from_slice(&chunk);
  }
  true
}

/// Array elements of a fixed size (int32, double, int64, timestamp, date,
/// ObjectId as four ints, boolean, null), with at most SHORT_BYTES bytes on the bytes tape
/// (short strings and binaries) or ASCII rope pieces of at most SHORT_BYTES
/// units, each kind's run in a loop of its own.
/// Ok(false) when it wrote none (another op, no room, an index past the
/// table, an element that needs run_inner's checks: the caller takes it).
/// Rope pieces only with ROPE, which array_run_apart sets: in the copy
/// inlined into fast_run, their arm made documents of 20 mixed elements 15%
/// slower (Rust speed test, SPEED_OP=doc: 5.1 -> 5.9 ns an element).
/// Indices' digits from index_table only, unless COUNTED (index_digits: the
/// copy array_run_counted makes for elements past the table).
#[inline(always)]
fn array_run<const ROPE: bool, const COUNTED: bool>(c: &mut ArrayCursor, buf: &mut [u8], ops: &[u32], nums: &[u8], bytes: &[u8], rope: &[u16]) -> Result<bool, &'static str> {
  let start = c.oi;
  let result = loop {
    let Some(&word) = ops.get(c.oi) else { break Ok(()) };
    let run = match word {
      // (int32s and doubles mixed in one array stay in one run; int64s and
      // timestamps have a loop of their own: one loop for all four took
      // alternating int32s and doubles from 2.0 to 2.3 ns an element)
      op::INT32 | op::DOUBLE => c.run::<COUNTED>(
        buf,
        ops,
        nums,
        bytes,
        rope,
        1,
        |word| match word {
          op::INT32 => Some(0x10),
          op::DOUBLE => Some(0x01),
          _ => None,
        },
        |word, w, src, _, _| {
          w[..8].copy_from_slice(src);
          Some((if word == op::INT32 { 4 } else { 8 }, 0, 0))
        },
      ),
      op::INT64 | op::TIMESTAMP => c.run::<COUNTED>(
        buf,
        ops,
        nums,
        bytes,
        rope,
        1,
        |word| match word {
          op::INT64 => Some(0x12),
          op::TIMESTAMP => Some(0x11),
          _ => None,
        },
        |_, w, src, _, _| {
          w[..8].copy_from_slice(src);
          Some((8, 0, 0))
        },
      ),
      op::DATE => c.run::<COUNTED>(buf, ops, nums, bytes, rope, 1, |word| (word == op::DATE).then_some(0x09), |_, w, src, _, _| {
        let num = <[u8; 8]>::try_from(src).ok()?;
        w[..8].copy_from_slice(&long_from_number(f64::from_le_bytes(num)).to_le_bytes());
        Some((8, 0, 0))
      }),
      op::OID_INTS => c.run::<COUNTED>(buf, ops, nums, bytes, rope, 2, |word| (word == op::OID_INTS).then_some(0x07), |_, w, src, _, _| {
        w[..12].copy_from_slice(&oid_from_ints(<&[u8; 16]>::try_from(src).ok()?));
        Some((12, 0, 0))
      }),
      // Short strings, from the bytes tape (as the K_STRB arm of fast_run: the
      // bytes in whole words, the tail past n overwritten) or ASCII pieces of
      // the rope (as its K_STRR arm), in one run: an array of strings has both
      // (string_1000: those of 13 characters or more are rope pieces).
      op::STRING_BYTES | op::STRING_ROPE if ROPE || word == op::STRING_BYTES => c.run::<COUNTED>(
        buf,
        ops,
        nums,
        bytes,
        rope,
        1,
        |word| (word == op::STRING_BYTES || (ROPE && word == op::STRING_ROPE)).then_some(0x02),
        |word, w, src, data, rope| {
          let n = u32::from_le_bytes([src[0], src[1], src[2], src[3]]) as usize;
          if n > SHORT_BYTES {
            return None;
          }
          w[..4].copy_from_slice(&((n + 1) as u32).to_le_bytes());
          if !ROPE || word == op::STRING_BYTES {
            w[4..4 + SHORT_BYTES].copy_from_slice(data?);
            w[4 + n] = 0;
            return Some((4 + n + 1, n, 0));
          }
          let units = rope.get(..n)?;
          if units.iter().fold(0, |a, &u| a | u) >= 0x80 {
            return None;
          }
          for (d, &u) in w[4..4 + n].iter_mut().zip(units) {
            *d = u as u8;
          }
          w[4 + n] = 0;
          Some((4 + n + 1, 0, n))
        },
      ),
      op::BINARY_BYTES => c.run_binaries::<COUNTED>(buf, ops, nums, bytes),
      // booleans and nulls mixed in one run (no number slot; a null has no value bytes)
      op::TRUE | op::FALSE | op::NULL => c.run::<COUNTED>(
        buf,
        ops,
        nums,
        bytes,
        rope,
        0,
        |word| match word {
          op::TRUE | op::FALSE => Some(0x08),
          op::NULL => Some(0x0A),
          _ => None,
        },
        |word, w, _, _, _| {
          w[0] = u8::from(word == op::TRUE);
          Some((usize::from(word != op::NULL), 0, 0))
        },
      ),
      _ => break Ok(()),
    };
    match run {
      Ok(true) => {}
      Ok(false) => break Ok(()),
      Err(e) => break Err(e),
    }
  };
  result.map(|()| c.oi != start)
}

/// The op that stands for `word` in fast_run's test for a long run (rope
/// pieces run with bytes-tape strings, nulls with booleans).
#[inline(always)]
fn run_kind(word: u32) -> u32 {
  match word {
    op::STRING_ROPE => op::STRING_BYTES,
    op::FALSE | op::NULL => op::TRUE,
    _ => word,
  }
}

/// array_run in a function of its own, for long runs: inlined into
/// run_inner, its cursors lived on the stack (1,000 int32s: 2.7 ns an
/// element there, 1.9 here), while for a short array the call cost more
/// than the loop gained (arrays of two doubles: 12 ns an element against 10).
#[inline(never)]
fn array_run_apart(c: &mut ArrayCursor, buf: &mut [u8], ops: &[u32], nums: &[u8], bytes: &[u8], rope: &[u16]) -> Result<bool, &'static str> {
  array_run::<true, false>(c, buf, ops, nums, bytes, rope)
}

/// array_run for the elements past index_table's end, their index digits
/// counted out (index_digits): a copy of its own, as the branch for them in
/// the loops above made arrays of 1,000 int32s, doubles and dates 2-9% slower.
#[inline(never)]
fn array_run_counted(c: &mut ArrayCursor, buf: &mut [u8], ops: &[u32], nums: &[u8], bytes: &[u8], rope: &[u16]) -> Result<bool, &'static str> {
  array_run::<true, true>(c, buf, ops, nums, bytes, rope)
}

/// array_run's cursors: output position, op, number slot, bytes tape, rope, array index.
struct ArrayCursor {
  at: usize,
  oi: usize,
  ni: usize,
  bi: usize,
  ri: usize,
  ix: u32,
}

impl ArrayCursor {
  /// Writes elements while `type_of` gives the op a type byte. `value` writes
  /// a value from its `slots` number slots (and the next SHORT_BYTES bytes of
  /// the bytes tape, None past its end, and the rope from its cursor) into the
  /// window after the index and returns its length and the tape bytes and rope
  /// units it used, or None to leave the element to the caller. Ok(true) when
  /// it reached another op.
  #[allow(clippy::too_many_arguments)]
  #[inline(always)]
  fn run<const COUNTED: bool>(
    &mut self,
    buf: &mut [u8],
    ops: &[u32],
    nums: &[u8],
    bytes: &[u8],
    rope: &[u16],
    slots: usize,
    type_of: impl Fn(u32) -> Option<u8>,
    value: impl Fn(u32, &mut [u8; VALUE_ROOM], &[u8], Option<&[u8; SHORT_BYTES]>, &[u16]) -> Option<(usize, usize, usize)>,
  ) -> Result<bool, &'static str> {
    let table = index_table();
    let (mut at, mut oi, mut ni, mut bi, mut ri, mut ix) = (self.at, self.oi, self.ni, self.bi, self.ri, self.ix);
    let result = loop {
      let Some(&word) = ops.get(oi) else { break Ok(true) };
      let Some(type_byte) = type_of(word) else { break Ok(true) };
      let Some(digits) = (if COUNTED { index_digits(table, ix) } else { table.get(ix as usize).copied() }) else { break Ok(false) };
      let s = ni * 8;
      let Some(src) = nums.get(s..s + slots * 8) else { break Err("number slot past the end") };
      let Some(Ok(w)) = buf.get_mut(at..at + 8 + VALUE_ROOM).map(<&mut [u8; 8 + VALUE_ROOM]>::try_from) else { break Ok(false) };
      let p = put_index_head(w, digits, type_byte);
      let Some(Ok(v)) = w.get_mut(p..p + VALUE_ROOM).map(<&mut [u8; VALUE_ROOM]>::try_from) else { break Ok(false) };
      let data = bytes.get(bi..bi + SHORT_BYTES).and_then(|d| <&[u8; SHORT_BYTES]>::try_from(d).ok());
      let Some((len, used, units)) = value(word, v, src, data, rope.get(ri..).unwrap_or_default()) else { break Ok(false) };
      at += p + len;
      bi += used;
      ri += units;
      oi += 1;
      ni += slots;
      ix += 1;
    };
    (self.at, self.oi, self.ni, self.bi, self.ri, self.ix) = (at, oi, ni, bi, ri, ix);
    result
  }

  /// Binaries on the bytes tape (as values::binary_bytes; subtype 2's inner
  /// length, and data past LONG_BYTES_MAX, are left to run_inner): data of
  /// at most SHORT_BYTES in one fixed-size copy, longer data straight from
  /// the tape to the output. (Through `run`, whose window holds SHORT_BYTES,
  /// each longer binary of an array left it for fast_run's general arm, and
  /// the next one came back to it: 200 binaries of 256 bytes took 23 ns an
  /// element in the Rust speed test, SPEED_OP=bin.) Ok(true) when it reached
  /// another op.
  #[inline(always)]
  fn run_binaries<const COUNTED: bool>(&mut self, buf: &mut [u8], ops: &[u32], nums: &[u8], bytes: &[u8]) -> Result<bool, &'static str> {
    let table = index_table();
    let (mut at, mut oi, mut ni, mut bi, mut ix) = (self.at, self.oi, self.ni, self.bi, self.ix);
    let result = loop {
      let Some(&word) = ops.get(oi) else { break Ok(true) };
      if word != op::BINARY_BYTES {
        break Ok(true);
      }
      let Some(digits) = (if COUNTED { index_digits(table, ix) } else { table.get(ix as usize).copied() }) else { break Ok(false) };
      let s = ni * 8;
      let Some(Ok(src)) = nums.get(s..s + 8).map(<[u8; 8]>::try_from) else { break Err("number slot past the end") };
      let len = i32::from_le_bytes([src[0], src[1], src[2], src[3]]);
      let subtype = i32::from_le_bytes([src[4], src[5], src[6], src[7]]);
      let Some(n) = usize::try_from(len).ok().filter(|&n| n <= LONG_BYTES_MAX && subtype != 2) else { break Ok(false) };
      // type byte, index digits and NUL, then size and subtype
      let Some(Ok(w)) = buf.get_mut(at..at + BINARY_HEAD).map(<&mut [u8; BINARY_HEAD]>::try_from) else { break Ok(false) };
      let p = put_index_head(w, digits, 0x05);
      w[p..p + 4].copy_from_slice(&len.to_le_bytes());
      w[p + 4] = subtype as u8;
      let d = at + p + 5;
      if n <= SHORT_BYTES {
        // whole SHORT_BYTES words from the tape, which has room past its last element (the bytes past n are overwritten next)
        let Some(Ok(data)) = bytes.get(bi..bi + SHORT_BYTES).map(<&[u8; SHORT_BYTES]>::try_from) else { break Ok(false) };
        let Some(Ok(dst)) = buf.get_mut(d..d + SHORT_BYTES).map(<&mut [u8; SHORT_BYTES]>::try_from) else { break Ok(false) };
        dst.copy_from_slice(data);
      } else {
        let (Some(data), Some(dst)) = (bytes.get(bi..bi + n), buf.get_mut(d..d + n)) else { break Ok(false) };
        dst.copy_from_slice(data);
      }
      at = d + n;
      bi += n;
      oi += 1;
      ni += 1;
      ix += 1;
    };
    (self.at, self.oi, self.ni, self.bi, self.ix) = (at, oi, ni, bi, ix);
    result
  }
}

/// Writes consecutive fast-path elements of the current frame (see `run_inner`).
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(super) fn fast_run(
  out: &mut Out<'_>,
  ops: &[u32],
  oi: &mut usize,
  nums: &[u8],
  ni: &mut usize,
  bytes: &[u8],
  bi: &mut usize,
  (rope, rope_pos): (&[u16], &mut usize),
  frame: &mut Frame,
  keys: &[KeyEntry],
) -> Result<(), String> {
  let buf = &mut *out.buf;
  let mut pos = out.pos;
  let array = frame.array;
  let mut index = frame.index;
  let table = index_table();
  // cursors in locals (written back at the end, also on error: the caller resets then)
  let (mut o, mut n_i, mut b_i, mut r_i) = (*oi, *ni, *bi, *rope_pos);
  let result = loop {
    let Some(&word) = ops.get(o) else { break Ok(()) };
    // Tightest path: array elements of the kinds array_run takes, in a loop
    // of their own (a run of 8 or more of one op through a call, see array_run_apart).
    if array && matches!(word, op::INT32 | op::DOUBLE | op::INT64 | op::TIMESTAMP | op::DATE | op::OID_INTS | op::STRING_BYTES | op::STRING_ROPE | op::BINARY_BYTES | op::TRUE | op::FALSE | op::NULL) {
      let mut c = ArrayCursor { at: pos, oi: o, ni: n_i, bi: b_i, ri: r_i, ix: index };
      let run = if ops.get(o + 7).map(|&x| run_kind(x)) == Some(run_kind(word)) {
        array_run_apart(&mut c, buf, ops, nums, bytes, rope)
      } else {
        array_run::<false, false>(&mut c, buf, ops, nums, bytes, rope)
      };
      // (past index_table's end: the counted copy)
      let run = if matches!(run, Ok(false)) && table.get(c.ix as usize).is_none() { array_run_counted(&mut c, buf, ops, nums, bytes, rope) } else { run };
      (pos, o, n_i, b_i, r_i, index) = (c.at, c.oi, c.ni, c.bi, c.ri, c.ix);
      match run {
        Ok(true) => continue,
        Ok(false) => {}
        Err(e) => break Err(bad(e)),
      }
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
    // (this element's bytes-tape cursor, committed with it: an arm that
    // leaves the element to run_inner must leave the key's bytes too)
    let mut vb = b_i;
    if array {
      let Some(digits) = index_digits(table, index) else { break Ok(()) };
      p = put_index_head(w, digits, info.type_byte);
    } else {
      let key_ref = (word >> 8) as usize;
      if key_ref & KEY_BYTES != 0 {
        // a key staged on the bytes tape (keys new on every call: 12 of the
        // 14 elements of newkeys_buckets); a bad one is left to run_inner
        let n = key_ref & KEY_BYTES_LEN;
        if n > STAGED_KEY_MAX || !copy_words_checked(w, 1, bytes, vb, n) {
          break Ok(());
        }
        w[1 + n] = 0;
        p = 2 + n;
        vb += n;
      } else {
        let Some(Some((words, len))) = keys.get(key_ref.wrapping_sub(1)) else { break Ok(()) };
        if words.len() > 5 {
          break Ok(());
        }
        for (i, k) in words.iter().enumerate() {
          w[1 + i * 8..9 + i * 8].copy_from_slice(&k.to_le_bytes());
        }
        p = 1 + *len;
      }
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
        let Some(src) = (if n <= SHORT_BYTES { bytes.get(vb..vb + SHORT_BYTES) } else { None }) else { break Ok(()) };
        w[p..p + 4].copy_from_slice(&((n + 1) as u32).to_le_bytes());
        p += 4;
        for (i, chunk) in src.chunks_exact(8).enumerate() {
          w[p + i * 8..p + i * 8 + 8].copy_from_slice(chunk);
        }
        w[p + n] = 0;
        p += n + 1;
        vb += n;
      }
      K_STRR => {
        // (as values::rope_piece, for a short ASCII piece; others go to run_inner)
        let n = u32::from_le_bytes([num[0], num[1], num[2], num[3]]) as usize;
        let Some(src) = (if n <= SHORT_BYTES { rope.get(r_i..r_i + n) } else { None }) else { break Ok(()) };
        if src.iter().fold(0, |a, &u| a | u) >= 0x80 {
          break Ok(());
        }
        w[p..p + 4].copy_from_slice(&((n + 1) as u32).to_le_bytes());
        p += 4;
        for (d, &u) in w[p..p + n].iter_mut().zip(src) {
          *d = u as u8;
        }
        w[p + n] = 0;
        p += n + 1;
        r_i += n;
      }
      K_REGB => {
        // (as values::regex_bytes; a longer one, or one with a NUL, goes to run_inner)
        let np = u32::from_le_bytes([num[0], num[1], num[2], num[3]]) as usize;
        let no = u32::from_le_bytes([num[4], num[5], num[6], num[7]]) as usize;
        if np > SHORT_BYTES || no > SHORT_BYTES - np {
          break Ok(());
        }
        // pattern and options in words, then the options moved one byte on for
        // the pattern's NUL (options are a few letters)
        if !copy_words_checked(w, p, bytes, vb, np + no) {
          break Ok(());
        }
        for k in (0..no).rev() {
          w[p + np + 1 + k] = w[p + np + k];
        }
        w[p + np] = 0;
        w[p + np + 1 + no] = 0;
        p += np + no + 2;
        vb += np + no;
      }
      K_BINB => {
        // (as values::binary_bytes; a longer or malformed one goes to run_inner)
        let len = i32::from_le_bytes([num[0], num[1], num[2], num[3]]);
        let subtype = i32::from_le_bytes([num[4], num[5], num[6], num[7]]);
        let Ok(n) = usize::try_from(len) else { break Ok(()) };
        if n > LONG_BYTES_MAX {
          break Ok(());
        }
        let Some(src) = bytes.get(vb..vb + n) else { break Ok(()) };
        let old_byte_array = subtype == 2;
        w[p..p + 4].copy_from_slice(&(len + if old_byte_array { 4 } else { 0 }).to_le_bytes());
        w[p + 4] = subtype as u8;
        p += 5;
        if old_byte_array {
          w[p..p + 4].copy_from_slice(&len.to_le_bytes());
          p += 4;
        }
        if n <= SHORT_BYTES {
          w[p..p + n].copy_from_slice(src);
        } else if let Some(d) = buf.get_mut(pos + p..pos + p + n) {
          // (data past the window goes straight to the output; where the output
          // is too short, pos still counts it and the document's END overflows,
          // so the pass ends TooSmall as on the general path)
          d.copy_from_slice(src);
        }
        p += n;
        vb += n;
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
        let Some(b) = bytes.get(vb..vb + 12) else { break Err(bad("fixed bytes past the end")) };
        w[p..p + 12].copy_from_slice(b);
        vb += 12;
        p += 12;
      }
      K_DEC => {
        let Some(b) = bytes.get(vb..vb + 16) else { break Err(bad("fixed bytes past the end")) };
        w[p..p + 16].copy_from_slice(b);
        vb += 16;
        p += 16;
      }
      K_OIDI => {
        // n_i only ever passes checked slots, so n_i * 8 does not overflow
        let s = n_i * 8;
        let Some(Ok(src)) = nums.get(s..s + 16).map(<&[u8; 16]>::try_from) else {
          break Err(bad("number slot past the end"));
        };
        w[p..p + 12].copy_from_slice(&oid_from_ints(src));
        n_i += 2;
        p += 12;
      }
      _ => {}
    }
    pos += p;
    o += 1;
    b_i = vb;
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
  *rope_pos = r_i;
  result
}
