//! One writer per payload kind on the general path (`Encoder::run_inner`):
//! each writes the value of one element after its header (type byte, key)
//! and advances the tape cursors it consumes (`ai` string/byte arguments,
//! `bi` bytes tape, `ni` number slots). "Where is an int64 written?" →
//! `num8` here, and the K_NUM8 arm of `fast::fast_run` on the fast path.
//! Calls `out`, `args`.

use super::args::ArgSource;
use crate::utf8;
use super::out::Out;
use super::{bad, long_from_number, too_large, Frame, MAX_DOCUMENT_SIZE, NO_CWS};

/// 0x01 double, 0x11 timestamp, 0x12 int64: the 8 bytes of the number slot.
#[inline(always)]
pub(super) fn num8(out: &mut Out, num: [u8; 8]) {
  out.put(num);
}

/// 0x10 int32: the low 4 bytes of the number slot.
#[inline(always)]
pub(super) fn int32(out: &mut Out, num: [u8; 8]) {
  out.put([num[0], num[1], num[2], num[3]]);
}

/// 0x09 UTC datetime: the slot holds `Date#getTime()` as a double.
#[inline(always)]
pub(super) fn date(out: &mut Out, num: [u8; 8]) {
  out.put(long_from_number(f64::from_le_bytes(num)).to_le_bytes());
}

/// 0x08 boolean (ops FALSE / TRUE).
#[inline(always)]
pub(super) fn boolean(out: &mut Out, value: bool) {
  out.byte(u8::from(value));
}

/// 0x07 ObjectId from 12 bytes of the bytes tape.
#[inline(always)]
pub(super) fn object_id(out: &mut Out, bytes: &[u8], bi: &mut usize) -> Result<(), String> {
  let b: [u8; 12] = bytes.get(*bi..*bi + 12).and_then(|b| b.try_into().ok()).ok_or_else(|| bad("fixed bytes past the end"))?;
  *bi += 12;
  out.put(b);
  Ok(())
}

/// 0x07 ObjectId from its four 24-bit ints in two number slots (op OID_INTS).
#[inline(always)]
pub(super) fn object_id_ints(out: &mut Out, nums: &[u8], ni: &mut usize) -> Result<(), String> {
  let s = ni.checked_mul(8).ok_or_else(|| bad("number slot"))?;
  let Some(Ok(src)) = nums.get(s..s.saturating_add(16)).map(<&[u8; 16]>::try_from) else {
    return Err(bad("number slot past the end"));
  };
  *ni += 2;
  out.put(oid_from_ints(src));
  Ok(())
}

/// The 12 ObjectId bytes from its four 24-bit ints (js-bson's i0..i3, two
/// number slots): each int's three bytes big-endian. (Shifted in one u128:
/// byte by byte took 3.6 ns an element of an array of ObjectIds, this 3.1.)
#[inline(always)]
pub(super) fn oid_from_ints(src: &[u8; 16]) -> [u8; 12] {
  let x = u128::from_le_bytes(*src);
  let int = |k: u32| (x >> (32 * k)) & 0x00FF_FFFF;
  let v = (int(0) << 72) | (int(1) << 48) | (int(2) << 24) | int(3);
  let be = v.to_be_bytes();
  let mut b = [0u8; 12];
  b.copy_from_slice(&be[4..16]);
  b
}

/// 0x13 Decimal128: 16 bytes of the bytes tape.
#[inline(always)]
pub(super) fn decimal128(out: &mut Out, bytes: &[u8], bi: &mut usize) -> Result<(), String> {
  let b: [u8; 16] = bytes.get(*bi..*bi + 16).and_then(|b| b.try_into().ok()).ok_or_else(|| bad("fixed bytes past the end"))?;
  *bi += 16;
  out.put(b);
  Ok(())
}

/// 0x02 string whose UTF-8 bytes JS put in the bytes tape (op STRING_BYTES;
/// the slot holds the byte length).
#[inline(always)]
pub(super) fn string_bytes(out: &mut Out, num: [u8; 8], bytes: &[u8], bi: &mut usize) -> Result<(), String> {
  let n = u32::from_le_bytes([num[0], num[1], num[2], num[3]]) as usize;
  let src = bytes.get(*bi..bi.saturating_add(n)).ok_or_else(|| bad("string bytes past the end"))?;
  *bi += n;
  let size = n.checked_add(1).filter(|&s| s <= MAX_DOCUMENT_SIZE).ok_or_else(too_large)?;
  out.put((size as i32).to_le_bytes());
  out.put_slice(src);
  out.byte(0);
  Ok(())
}

/// The `n` bytes of a key sent on the bytes tape at `bi`: ASCII without NUL,
/// checked again here (the fast path's and `key_bytes`' one check).
#[inline(always)]
pub(super) fn staged_key(bytes: &[u8], bi: usize, n: usize) -> Result<&[u8], String> {
  let src = bytes.get(bi..bi.saturating_add(n)).ok_or_else(|| bad("key bytes past the end"))?;
  if src.contains(&0) {
    return Err(bad("key bytes with a NUL"));
  }
  Ok(src)
}

/// A key sent on the bytes tape: bytes, NUL.
#[inline(always)]
pub(super) fn key_bytes(out: &mut Out, bytes: &[u8], bi: &mut usize, n: usize) -> Result<(), String> {
  let src = staged_key(bytes, *bi, n)?;
  *bi += n;
  out.put_slice(src);
  out.byte(0);
  Ok(())
}

/// How a string argument is read: as UTF-8 from the source (op STRING), as
/// UTF-16 code units (STRING_UTF16) or as Latin-1 bytes (STRING_LATIN1).
#[derive(Clone, Copy)]
pub(super) enum StrRead {
  Utf8,
  Utf16,
  Latin1,
}

/// 0x02 string, 0x0D code, 0x0E symbol from a string argument: size, bytes, NUL.
#[inline(always)]
pub(super) fn string<A: ArgSource + ?Sized>(out: &mut Out, args: &mut A, ai: &mut usize, read: StrRead) -> Result<(), String> {
  let at = out.pos;
  out.put([0; 4]);
  let n = match read {
    StrRead::Utf8 => out.string(args, *ai)?,
    StrRead::Utf16 => out.string_utf16(args, *ai)?,
    StrRead::Latin1 => out.string_latin1(args, *ai)?,
  };
  *ai += 1;
  out.byte(0);
  let size = n.checked_add(1).filter(|&s| s <= MAX_DOCUMENT_SIZE).ok_or_else(too_large)?;
  out.patch_i32(at, size as i32);
  Ok(())
}

/// Reads the document's rope, string argument `i` (op STRING_ROPE_FIRST), into `rope`.
pub(super) fn read_rope<A: ArgSource + ?Sized>(rope: &mut Vec<u16>, rope_utf8: &mut Vec<u8>, args: &mut A, i: usize) -> Result<(), String> {
  if let Some(units) = args.units(i)? {
    rope.clear();
    rope.extend_from_slice(units);
    return Ok(());
  }
  // (an owned copy, carried over from an earlier chunk: UTF-8, in which a
  // lone surrogate is already U+FFFD, one unit as before)
  let n = args.str_len(i)?;
  rope_utf8.clear();
  rope_utf8.resize(n, 0);
  if args.write_str(i, rope_utf8)? != Some(n) {
    return Err(bad("rope changed while encoding"));
  }
  utf8::to_utf16(rope_utf8, rope);
  Ok(())
}

/// 0x02 string, the next piece of the rope (ops STRING_ROPE_FIRST,
/// STRING_ROPE; the slot holds its length in code units): size, UTF-8, NUL.
#[inline(always)]
pub(super) fn rope_piece(out: &mut Out, num: [u8; 8], rope: &[u16], rope_pos: &mut usize) -> Result<(), String> {
  let n = u32::from_le_bytes([num[0], num[1], num[2], num[3]]) as usize;
  let units = rope.get(*rope_pos..rope_pos.saturating_add(n)).ok_or_else(|| bad("rope piece past the end"))?;
  *rope_pos += n;
  let at = out.pos;
  out.put([0; 4]);
  let len = out.utf16(units);
  out.byte(0);
  let size = len.checked_add(1).filter(|&s| s <= MAX_DOCUMENT_SIZE).ok_or_else(too_large)?;
  out.patch_i32(at, size as i32);
  Ok(())
}

/// 0x0B regular expression: two string arguments (source, options) as C strings.
#[inline(always)]
pub(super) fn regex<A: ArgSource + ?Sized>(out: &mut Out, args: &mut A, ai: &mut usize) -> Result<(), String> {
  out.string(args, *ai)?;
  out.byte(0);
  out.string(args, *ai + 1)?;
  out.byte(0);
  *ai += 2;
  Ok(())
}

/// 0x0B regular expression whose pattern and options JS put in the bytes
/// tape (op REGEX_BYTES; the slot holds their byte lengths as two int32):
/// pattern, NUL, options, NUL. (Out of line: inlined, its code made
/// run_inner's loop 4% slower on flat_bson.)
#[inline(never)]
pub(super) fn regex_bytes(out: &mut Out, num: [u8; 8], bytes: &[u8], bi: &mut usize) -> Result<(), String> {
  let pattern_len = u32::from_le_bytes([num[0], num[1], num[2], num[3]]) as usize;
  let options_len = u32::from_le_bytes([num[4], num[5], num[6], num[7]]) as usize;
  let src = bytes
    .get(*bi..bi.saturating_add(pattern_len).saturating_add(options_len))
    .ok_or_else(|| bad("regex bytes past the end"))?;
  // (cstrings: a NUL would end them early; JS sends such a regex as string args)
  if src.contains(&0) {
    return Err(bad("regex bytes with a NUL"));
  }
  *bi += src.len();
  let (pattern, options) = src.split_at_checked(pattern_len).ok_or_else(|| bad("regex bytes past the end"))?;
  out.put_slice(pattern);
  out.byte(0);
  out.put_slice(options);
  out.byte(0);
  Ok(())
}

/// The size, subtype and (subtype 2) inner length of a binary of `len` data
/// bytes; the slot holds (length, subtype) as two int32.
#[inline(always)]
fn binary_header(num: [u8; 8]) -> Result<usize, String> {
  let len = i32::from_le_bytes([num[0], num[1], num[2], num[3]]);
  let subtype = i32::from_le_bytes([num[4], num[5], num[6], num[7]]);
  let len = usize::try_from(len).map_err(|_| bad("negative binary length"))?;
  let size = if subtype == 2 { len + 4 } else { len };
  if size > MAX_DOCUMENT_SIZE {
    return Err(too_large());
  }
  Ok(len)
}

/// Writes the header checked by `binary_header`.
#[inline(always)]
fn put_binary_header(out: &mut Out, num: [u8; 8], len: usize) {
  let subtype = i32::from_le_bytes([num[4], num[5], num[6], num[7]]);
  let size = if subtype == 2 { len + 4 } else { len };
  out.put((size as i32).to_le_bytes());
  out.byte(subtype as u8);
  if subtype == 2 {
    out.put((len as i32).to_le_bytes());
  }
}

/// 0x05 binary whose data is a typed-array argument (op BINARY). Like
/// js-bson, bytes past the data (position > buffer length) are zeros.
#[inline(always)]
pub(super) fn binary<A: ArgSource + ?Sized>(out: &mut Out, num: [u8; 8], args: &mut A, ai: &mut usize) -> Result<(), String> {
  let len = binary_header(num)?;
  put_binary_header(out, num, len);
  let data = args.bytes(*ai)?;
  *ai += 1;
  let copied = data.len().min(len);
  out.put_slice(data.get(..copied).unwrap_or(&[]));
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
  Ok(())
}

/// 0x05 binary with all its data bytes in the bytes tape (op BINARY_BYTES).
#[inline(always)]
pub(super) fn binary_bytes(out: &mut Out, num: [u8; 8], bytes: &[u8], bi: &mut usize) -> Result<(), String> {
  let len = binary_header(num)?;
  let src = bytes.get(*bi..bi.saturating_add(len)).ok_or_else(|| bad("binary bytes past the end"))?;
  *bi += len;
  put_binary_header(out, num, len);
  out.put_slice(src);
  Ok(())
}

/// 0x03 document, 0x04 array: a size placeholder and a new frame (closed by `end`).
#[inline(always)]
pub(super) fn document(out: &mut Out, frames: &mut Vec<Frame>, array: bool) {
  let start = out.pos;
  out.put([0; 4]);
  frames.push(Frame { start, cws: NO_CWS, array, index: 0 });
}

/// 0x0F code with scope: total size placeholder, the code string argument,
/// then the scope document's frame (`end` patches both sizes).
#[inline(always)]
pub(super) fn code_w_scope<A: ArgSource + ?Sized>(out: &mut Out, args: &mut A, ai: &mut usize, frames: &mut Vec<Frame>) -> Result<(), String> {
  let cws = out.pos;
  out.put([0; 4]);
  string(out, args, ai, StrRead::Utf8)?;
  let start = out.pos;
  out.put([0; 4]);
  frames.push(Frame { start, cws, array: false, index: 0 });
  Ok(())
}

/// The END op: the NUL of the innermost document, then its size (and that of
/// a code-with-scope around it); pops its frame.
#[inline(always)]
pub(super) fn end(out: &mut Out, frame: &Frame) -> Result<(), String> {
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
  Ok(())
}
