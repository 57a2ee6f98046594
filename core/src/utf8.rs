//! UTF-8 classification for the decoder: ASCII, valid UTF-8, or invalid
//! (decoded lossily, like Node's `buffer.toString('utf8')`); and the UTF-8
//! length of UTF-16 text for calculateObjectSize.

use std::mem::MaybeUninit;

/// Only bytes < 0x80: the binding can create a one-byte (latin1) string.
pub const ASCII: u8 = 0;
/// Valid UTF-8 with some multi-byte sequence.
pub const UTF8: u8 = 1;
/// Invalid UTF-8: must be decoded with WHATWG replacement (maximal subparts).
pub const LOSSY: u8 = 2;

#[inline(always)]
pub fn classify(bytes: &[u8]) -> u8 {
  if is_ascii(bytes) {
    ASCII
  } else if is_valid(bytes) {
    UTF8
  } else {
    LOSSY
  }
}

/// Whether `bytes` is valid UTF-8 (RFC 3629: no overlong forms, surrogates
/// or code points past U+10FFFF, as `std::str::from_utf8`). simdutf8 hands
/// inputs under 64 bytes to the standard library's validator, which took a
/// fifth of deserializing 200 short strings of mixed scripts (unicode_200);
/// those go through a shift-based DFA instead (one shift and mask a byte).
#[inline(always)]
pub fn is_valid(bytes: &[u8]) -> bool {
  if bytes.len() < 64 { dfa_valid(bytes) } else { simdutf8::basic::from_utf8(bytes).is_ok() }
}

// The validator's states, each the offset of its 6-bit field in a row of
// DFA_ROWS: the next state after byte b in state s is
// (DFA_ROWS[b] >> s) & 63. REJECT leads to itself on every byte.
const ACCEPT: u32 = 0;
const REJECT: u32 = 6;
const TAIL1: u32 = 12; // one continuation byte (80-BF) left
const TAIL2: u32 = 18;
const TAIL3: u32 = 24;
const AFTER_E0: u32 = 30; // A0-BF next (no overlong three-byte form)
const AFTER_ED: u32 = 36; // 80-9F next (no surrogate)
const AFTER_F0: u32 = 42; // 90-BF next (no overlong four-byte form)
const AFTER_F4: u32 = 48; // 80-8F next (nothing past U+10FFFF)
const STATES: [u32; 9] = [ACCEPT, REJECT, TAIL1, TAIL2, TAIL3, AFTER_E0, AFTER_ED, AFTER_F0, AFTER_F4];

/// The state after byte `b` in `state` (RFC 3629's UTF8-octets grammar).
const fn dfa_next(state: u32, b: u8) -> u32 {
  let tail = b >= 0x80 && b <= 0xbf;
  match state {
    ACCEPT => match b {
      0x00..=0x7f => ACCEPT,
      0xc2..=0xdf => TAIL1,
      0xe0 => AFTER_E0,
      0xe1..=0xec | 0xee..=0xef => TAIL2,
      0xed => AFTER_ED,
      0xf0 => AFTER_F0,
      0xf1..=0xf3 => TAIL3,
      0xf4 => AFTER_F4,
      _ => REJECT,
    },
    TAIL1 if tail => ACCEPT,
    TAIL2 if tail => TAIL1,
    TAIL3 if tail => TAIL2,
    AFTER_E0 if b >= 0xa0 && b <= 0xbf => TAIL1,
    AFTER_ED if b >= 0x80 && b <= 0x9f => TAIL1,
    AFTER_F0 if b >= 0x90 && b <= 0xbf => TAIL2,
    AFTER_F4 if b >= 0x80 && b <= 0x8f => TAIL2,
    _ => REJECT,
  }
}

static DFA_ROWS: [u64; 256] = {
  let mut rows = [0u64; 256];
  let mut b = 0usize;
  while b < 256 {
    let mut k = 0usize;
    while k < STATES.len() {
      rows[b] |= (dfa_next(STATES[k], b as u8) as u64) << STATES[k];
      k += 1;
    }
    b += 1;
  }
  rows
};

fn dfa_valid(bytes: &[u8]) -> bool {
  let mut state = u64::from(ACCEPT);
  for &b in bytes {
    state = (DFA_ROWS[usize::from(b)] >> state) & 63;
  }
  state == u64::from(ACCEPT)
}

/// `is_ascii` with an inline path for short strings (most keys and values).
#[inline(always)]
pub fn is_ascii(b: &[u8]) -> bool {
  let n = b.len();
  let word = |i: usize| -> u64 {
    b.get(i..i.wrapping_add(8)).and_then(|s| <[u8; 8]>::try_from(s).ok()).map_or(0, u64::from_le_bytes)
  };
  let half = |i: usize| -> u64 {
    b.get(i..i.wrapping_add(4)).and_then(|s| <[u8; 4]>::try_from(s).ok()).map_or(0, u32::from_le_bytes) as u64
  };
  const HIGH: u64 = 0x8080_8080_8080_8080;
  if n >= 8 {
    if n <= 16 {
      (word(0) | word(n - 8)) & HIGH == 0
    } else {
      b.is_ascii()
    }
  } else if n >= 4 {
    (half(0) | half(n - 4)) & HIGH == 0
  } else {
    b.iter().all(|&c| c < 0x80)
  }
}

/// Lossy decoding with U+FFFD per maximal subpart, which is what both the
/// WHATWG decoder (Node's `toString('utf8')`, `TextDecoder`) and Rust's
/// `String::from_utf8_lossy` do.
pub fn lossy(bytes: &[u8]) -> std::borrow::Cow<'_, str> {
  String::from_utf8_lossy(bytes)
}

/// Compares `key` (raw bytes, decoded lossily) with an already valid UTF-8 name.
pub fn lossy_eq(key: &[u8], name: &[u8]) -> bool {
  if key == name {
    return true;
  }
  if key.is_ascii() || is_valid(key) {
    return false;
  }
  lossy(key).as_bytes() == name
}

/// Valid UTF-8 (`classify` said UTF8) as UTF-16 code units, into `out`
/// (cleared first). One pass where V8's own UTF-8 decoder makes two (it
/// measures, then decodes). With SSSE3, 16 bytes at a time (see
/// `ssse3::to_utf16`); the last 16 or 17 bytes go through the scalar loop.
/// Invalid input never comes here; it would give wrong code units, never a
/// panic.
pub fn to_utf16(bytes: &[u8], out: &mut Vec<u16>) {
  out.clear();
  append_utf16(bytes, out);
}

/// `to_utf16` of text whose first characters `utf8_to_latin1` has narrowed
/// (`latin1`, of the bytes before `rest`) before it met one from U+0100:
/// those widened (one unit each), then `rest` decoded. (Decoding the whole
/// text again instead made French text with a typographic quote near its end
/// 8% slower to read than without the Latin-1 attempt.)
pub fn to_utf16_after_latin1(latin1: &[u8], rest: &[u8], out: &mut Vec<u16>) {
  out.clear();
  out.reserve(latin1.len() + rest.len());
  out.extend(latin1.iter().map(|&b| u16::from(b)));
  append_utf16(rest, out);
}

/// `to_utf16` after the units already in `out`.
fn append_utf16(bytes: &[u8], out: &mut Vec<u16>) {
  let start = out.len();
  // (at most one code unit per byte: no sequence gives more units than bytes)
  out.reserve(bytes.len());
  let dst = out.spare_capacity_mut();
  let (mut i, mut o) = (0, 0);
  #[cfg(target_arch = "x86_64")]
  if bytes.len() >= SIMD_MIN && simd() {
    // SAFETY: the CPU has SSSE3 (simd checks).
    (i, o) = unsafe { ssse3::to_utf16(bytes, dst) };
  }
  let o = to_utf16_scalar(bytes, dst, i, o, bytes.len()).1;
  // SAFETY: the units below start were there, and every unit of the o after
  // them was written (o only grows by units written).
  unsafe { out.set_len(start + o) };
}

/// Writes valid UTF-8 text whose characters are all below U+0100 (Latin-1:
/// ASCII, and two-byte sequences led by 0xC2 or 0xC3) as one byte a
/// character into `out` (cleared first). At the first character from U+0100,
/// `Err(i)`: its byte, `out` holding the Latin-1 of the bytes before it (see
/// `to_utf16_after_latin1`). V8 keeps such text as a one-byte string: made
/// from these bytes it is one copy, where from `to_utf16`'s code units V8
/// scans them and narrows them again (French text on Node.js 24: 0.59 ns a
/// character for to_utf16 and V8, 30,000 characters). 64 bytes at a time
/// with AVX-512 VBMI2 where the CPU has it. Invalid input never comes here;
/// it would give wrong bytes or an `Err`, never a panic.
pub fn utf8_to_latin1(bytes: &[u8], out: &mut Vec<u8>) -> Result<(), usize> {
  out.clear();
  // (at most one byte per byte)
  out.reserve(bytes.len());
  let dst = out.spare_capacity_mut();
  let (mut i, mut o) = (0, 0);
  #[cfg(target_arch = "x86_64")]
  if avx512::available() {
    // SAFETY: the CPU has AVX-512 F, BW and VBMI2 and POPCNT (checked).
    // (at a block with a character from U+0100 the scalar loop finds it)
    (i, o) = unsafe { avx512::utf8_to_latin1(bytes, dst) };
  }
  let (end, o) = match utf8_to_latin1_scalar(bytes, dst, i, o) {
    Ok(o) => (Ok(()), o),
    Err((i, o)) => (Err(i), o),
  };
  // SAFETY: every byte below o was written (o only grows by bytes written).
  unsafe { out.set_len(o) };
  end
}

/// Whether `utf8_to_latin1` takes 64-byte blocks on this CPU (x86_64 with
/// AVX-512 VBMI2). Its scalar loop alone is slower than `to_utf16` and V8's
/// narrowing together (French text: 1.4-1.5x the time), so the binding uses
/// it only then.
pub fn fast_latin1() -> bool {
  #[cfg(target_arch = "x86_64")]
  return avx512::available();
  #[cfg(not(target_arch = "x86_64"))]
  false
}

/// `utf8_to_latin1` from byte `i` of `bytes`, byte `o` of `dst`: the next
/// `o`, or `Err((i, o))` where it stopped, at a character from U+0100.
fn utf8_to_latin1_scalar(bytes: &[u8], dst: &mut [MaybeUninit<u8>], mut i: usize, mut o: usize) -> Result<usize, (usize, usize)> {
  while let Some(&b) = bytes.get(i) {
    // (eight ASCII characters at a time)
    if let (Some(x), Some(d)) = (bytes.get(i..i + 8).and_then(|s| <[u8; 8]>::try_from(s).ok()), dst.get_mut(o..o + 8)) {
      if u64::from_le_bytes(x) & HIGH_BITS == 0 {
        for (d, &b) in d.iter_mut().zip(&x) {
          d.write(b);
        }
        i += 8;
        o += 8;
        continue;
      }
    }
    let (Some(d), true) = (dst.get_mut(o), b < 0x80 || ((b == 0xc2 || b == 0xc3) && i + 1 < bytes.len())) else {
      return Err((i, o));
    };
    if b < 0x80 {
      d.write(b);
      i += 1;
    } else {
      d.write((bytes[i + 1] & 0x3f) | ((b & 0x03) << 6));
      i += 2;
    }
    o += 1;
  }
  Ok(o)
}

/// Text from this many bytes (one block) takes `ssse3::to_utf16`'s blocks.
/// (From 64 bytes until the blocks took any mix of one-, two- and three-byte
/// characters: unicode_200, whose strings are mostly 20-60 bytes, then
/// deserialized in 17.5 us where it took 23.6.)
const SIMD_MIN: usize = 16;

/// `to_utf16` from byte `i` / unit `o` (a character's start) to byte `end`
/// or a little past it (a run in progress is finished): ASCII 8 bytes at a
/// time, runs of two- and three-byte sequences in loops of their own (CJK:
/// ~1.0 ns a character, where one loop over every kind took ~2.5), the rest
/// one at a time. Returns the next (byte, unit), at a character's start.
fn to_utf16_scalar(bytes: &[u8], dst: &mut [MaybeUninit<u16>], mut i: usize, mut o: usize, end: usize) -> (usize, usize) {
  while i < end {
    let Some(&b0) = bytes.get(i) else { break };
    if b0 < 0x80 {
      while let Some(Ok(w)) = bytes.get(i..i + 8).map(<[u8; 8]>::try_from) {
        let Some(d) = dst.get_mut(o..o + 8) else { break };
        if u64::from_le_bytes(w) & 0x8080_8080_8080_8080 != 0 {
          break;
        }
        for (d, &b) in d.iter_mut().zip(&w) {
          d.write(u16::from(b));
        }
        i += 8;
        o += 8;
      }
      while let (Some(&b), Some(d)) = (bytes.get(i), dst.get_mut(o)) {
        if b >= 0x80 {
          break;
        }
        d.write(u16::from(b));
        i += 1;
        o += 1;
      }
      continue;
    }
    let start = i;
    if b0 & 0xe0 == 0xc0 {
      while let Some(&[a, b]) = bytes.get(i..i + 2).and_then(|s| <&[u8; 2]>::try_from(s).ok()) {
        let Some(d) = dst.get_mut(o) else { break };
        if a & 0xe0 != 0xc0 {
          break;
        }
        d.write((u16::from(a & 0x1f) << 6) | u16::from(b & 0x3f));
        i += 2;
        o += 1;
      }
    } else if b0 & 0xf0 == 0xe0 {
      while let Some(&[a, b, c]) = bytes.get(i..i + 3).and_then(|s| <&[u8; 3]>::try_from(s).ok()) {
        let Some(d) = dst.get_mut(o) else { break };
        if a & 0xf0 != 0xe0 {
          break;
        }
        d.write((u16::from(a & 0x0f) << 12) | (u16::from(b & 0x3f) << 6) | u16::from(c & 0x3f));
        i += 3;
        o += 1;
      }
    }
    if i != start {
      continue;
    }
    // a four-byte sequence (a surrogate pair), or one cut short at the end
    let Some((next_i, next_o)) = one_char(bytes, dst, i, o) else { break };
    (i, o) = (next_i, next_o);
  }
  (i, o)
}

/// Writes the character at byte `i` (any length; bytes past the input count
/// as zeros) at unit `o`; returns the next (byte, unit), None without room.
fn one_char(bytes: &[u8], dst: &mut [MaybeUninit<u16>], i: usize, o: usize) -> Option<(usize, usize)> {
  let at = |k: usize| -> u32 { bytes.get(i + k).map_or(0, |&b| u32::from(b) & 0x3f) };
  let b0 = u32::from(*bytes.get(i)?);
  let (cp, len) = if b0 < 0x80 {
    (b0, 1)
  } else if b0 < 0xe0 {
    (((b0 & 0x1f) << 6) | at(1), 2)
  } else if b0 < 0xf0 {
    (((b0 & 0x0f) << 12) | (at(1) << 6) | at(2), 3)
  } else {
    (((b0 & 0x07) << 18) | (at(1) << 12) | (at(2) << 6) | at(3), 4)
  };
  if cp < 0x1_0000 {
    dst.get_mut(o)?.write(cp as u16);
    Some((i + len, o + 1))
  } else {
    let c = cp.wrapping_sub(0x1_0000);
    let [hi, lo] = dst.get_mut(o..o + 2)? else { return None };
    hi.write(0xd800 | ((c >> 10) & 0x3ff) as u16);
    lo.write(0xdc00 | (c & 0x3ff) as u16);
    Some((i + len, o + 2))
  }
}

/// UTF-8 byte length of UTF-16 text, each lone surrogate counted as U+FFFD
/// (3 bytes), which is what `Buffer.byteLength` counts. One byte per unit,
/// one more from U+0080 and one more from U+0800; a surrogate pair, counted
/// 3 + 3 so, is 4 bytes. Summed in u16 per block: LLVM vectorises a u16 sum
/// into 16-bit compares and adds, ~0.13 ns a unit, where one u32 counter took
/// ~0.42 ns (60% of measuring a long two-byte string).
pub fn utf16_utf8_len(src: &[u16]) -> usize {
  // a unit adds at most 2: a block's sum fits a u16
  const BLOCK: usize = 16 * 1024;
  let mut n = src.len();
  let mut surrogates = 0usize;
  for block in src.chunks(BLOCK) {
    let extra = block.iter().fold(0u16, |a, &c| a + u16::from(c >= 0x80) + u16::from(c >= 0x800));
    n += usize::from(extra);
    // (a sum, not an or: LLVM vectorises it the same way, twice as fast)
    surrogates += usize::from(block.iter().fold(0u16, |a, &c| a + u16::from((c & 0xf800) == 0xd800)));
  }
  if surrogates != 0 {
    let pairs = src.windows(2).filter(|w| (0xd800..0xdc00).contains(&w[0]) && (0xdc00..0xe000).contains(&w[1])).count();
    n -= 2 * pairs;
  }
  n
}

/// Whether `utf16_to_utf8` and `to_utf16` run their SIMD blocks on this CPU
/// (x86_64 with SSSE3). `utf16_to_utf8`'s scalar loop alone is no faster
/// than V8's own (~3 ns per character of mixed text), so the binding tells
/// JS to use it only then.
#[cfg(target_arch = "x86_64")]
pub fn simd() -> bool {
  std::arch::is_x86_feature_detected!("ssse3")
}

/// (No SIMD blocks off x86_64.)
#[cfg(not(target_arch = "x86_64"))]
pub fn simd() -> bool {
  false
}

/// Writes UTF-16 text as UTF-8 into `dst`, each lone surrogate as U+FFFD
/// (what `Buffer.write` and V8's `WriteUtf8` write). `Some(n)`: all `n` bytes
/// were written; `None`: they do not fit (`dst` holds a prefix). V8 encodes a
/// two-byte string one character at a time (~1.7 ns per CJK character here);
/// with SSSE3 this takes ~0.3 ns per CJK character and ~0.45 ns per character
/// of mixed ASCII / Cyrillic / CJK text, surrogate pairs (emoji) included
/// (100,000 units of emoji: 99 us, V8 ~230 us; a lone surrogate's block goes
/// through the scalar loop).
pub fn utf16_to_utf8(src: &[u16], dst: &mut [u8]) -> Option<usize> {
  #[cfg(target_arch = "x86_64")]
  if simd() {
    // SAFETY: the CPU has SSSE3 (simd checks).
    return unsafe { ssse3::utf16_to_utf8(src, dst) };
  }
  utf16_to_utf8_scalar(src, dst, 0, 0, src.len()).map(|(_, o)| o)
}

const HIGH_BITS: u64 = 0x8080_8080_8080_8080;

/// Writes Latin-1 text (one byte a character, U+0000 to U+00FF: a string
/// V8 holds as one-byte) as UTF-8 into `dst`. `Some(n)`: all `n` bytes were
/// written; `None`: they do not fit (`dst` holds a prefix). V8's `WriteUtf8`
/// writes such a string a character at a time once it holds one above
/// U+007F (~0.4-0.55 ns each); here it is widened 32 characters at a time
/// with AVX-512 or AVX2 (16 with SSSE3).
pub fn latin1_to_utf8(src: &[u8], dst: &mut [u8]) -> Option<usize> {
  #[cfg(target_arch = "x86_64")]
  if simd() {
    if avx512::available() {
      // SAFETY: the CPU has AVX-512 F, BW and VBMI2, AVX2 and POPCNT (checked) and SSSE3 (simd checks).
      return unsafe { avx512::latin1_to_utf8(src, dst, 0, 0) };
    }
    if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("popcnt") {
      // SAFETY: the CPU has AVX2 and POPCNT (checked) and SSSE3 (simd checks).
      return unsafe { avx2::latin1_to_utf8(src, dst, 0, 0) };
    }
    // SAFETY: the CPU has SSSE3 (simd checks).
    return unsafe { ssse3::latin1_to_utf8(src, dst, 0, 0) };
  }
  latin1_to_utf8_scalar(src, dst, 0, 0)
}

/// The UTF-8 length of Latin-1 text: a byte for each character, and one
/// more for each above U+007F (eight at a time, their top bits summed in
/// byte lanes).
pub fn latin1_utf8_len(text: &[u8]) -> usize {
  const LOW: u64 = 0x0101_0101_0101_0101;
  const PAIRS: u64 = 0x00ff_00ff_00ff_00ff;
  let mut words = text.chunks_exact(8);
  let mut count = 0;
  loop {
    // (at most 255 words, so that no byte lane overflows)
    let mut lanes = 0u64;
    let mut taken = 0;
    for w in words.by_ref().take(255) {
      lanes += (u64::from_le_bytes(<[u8; 8]>::try_from(w).unwrap_or([0; 8])) >> 7) & LOW;
      taken += 1;
    }
    let sums = (lanes & PAIRS) + ((lanes >> 8) & PAIRS);
    count += (sums.wrapping_mul(0x0001_0001_0001_0001) >> 48) as usize;
    if taken < 255 {
      break;
    }
  }
  text.len() + count + words.remainder().iter().filter(|&&b| b >= 0x80).count()
}

/// `latin1_to_utf8` from byte `r` of `src`, byte `w` of `dst`.
fn latin1_to_utf8_scalar(src: &[u8], dst: &mut [u8], mut r: usize, mut w: usize) -> Option<usize> {
  while r < src.len() {
    // (eight ASCII characters at a time)
    if let Some(x) = src.get(r..r + 8).and_then(|b| <[u8; 8]>::try_from(b).ok()) {
      if u64::from_le_bytes(x) & HIGH_BITS == 0 {
        dst.get_mut(w..w + 8)?.copy_from_slice(&x);
        r += 8;
        w += 8;
        continue;
      }
    }
    let Some(&b) = src.get(r) else { break };
    if b < 0x80 {
      *dst.get_mut(w)? = b;
      w += 1;
    } else {
      dst.get_mut(w..w + 2)?.copy_from_slice(&[0xc0 | (b >> 6), b & 0xbf]);
      w += 2;
    }
    r += 1;
  }
  Some(w)
}

/// `utf16_to_utf8` from unit `i` / byte `o` until unit `end` (or one past it,
/// to finish a surrogate pair); returns the next (unit, byte).
fn utf16_to_utf8_scalar(src: &[u16], dst: &mut [u8], mut i: usize, mut o: usize, end: usize) -> Option<(usize, usize)> {
  let three_byte = |u: u16| u >= 0x800 && (u & 0xf800) != 0xd800;
  while i < end {
    // Four three-byte (most CJK) or ASCII characters at a time: one at a
    // time ran at ~4 ns each.
    if let (Some(&[a, b, c, d]), Some(out)) = (src.get(i..i + 4).and_then(|w| <&[u16; 4]>::try_from(w).ok()), dst.get_mut(o..o + 12)) {
      if three_byte(a) && three_byte(b) && three_byte(c) && three_byte(d) {
        for (k, u) in [a, b, c, d].into_iter().enumerate() {
          out[k * 3] = 0xe0 | (u >> 12) as u8;
          out[k * 3 + 1] = 0x80 | ((u >> 6) & 0x3f) as u8;
          out[k * 3 + 2] = 0x80 | (u & 0x3f) as u8;
        }
        i += 4;
        o += 12;
        continue;
      }
      if (a | b | c | d) < 0x80 {
        out[..4].copy_from_slice(&[a as u8, b as u8, c as u8, d as u8]);
        i += 4;
        o += 4;
        continue;
      }
    }
    (i, o) = utf16_chars_to_utf8(src, dst, i, o, i + 1)?;
  }
  Some((i, o))
}

/// `utf16_to_utf8_scalar` one character at a time, without its wider
/// attempts (the SIMD loop's blocks that hold a surrogate: with them, text
/// with emoji ran at ~2 ns a unit, slower than V8).
#[inline]
fn utf16_chars_to_utf8(src: &[u16], dst: &mut [u8], mut i: usize, mut o: usize, end: usize) -> Option<(usize, usize)> {
  while i < end {
    let (bytes, n, units) = utf8_of_char(src, i)?;
    // (four bytes at once where there is room; the first n are the character's)
    match dst.get_mut(o..o + 4) {
      Some(out) => out.copy_from_slice(&bytes.to_le_bytes()),
      None => dst.get_mut(o..o + n)?.copy_from_slice(bytes.to_le_bytes().get(..n)?),
    }
    i += units;
    o += n;
  }
  Some((i, o))
}

/// The UTF-8 of the character at unit `i` (a lone surrogate: U+FFFD) as
/// little-endian bytes, its byte count and its unit count.
#[inline(always)]
fn utf8_of_char(src: &[u16], i: usize) -> Option<(u32, usize, usize)> {
  let c = u32::from(*src.get(i)?);
  Some(if c < 0x80 {
    (c, 1, 1)
  } else if c < 0x800 {
    (0x80c0 | (c >> 6) | (c & 0x3f) << 8, 2, 1)
  } else if (c & 0xf800) != 0xd800 {
    (0x80_80e0 | (c >> 12) | ((c >> 6) & 0x3f) << 8 | (c & 0x3f) << 16, 3, 1)
  } else {
    match src.get(i + 1).map(|&lo| u32::from(lo)) {
      Some(lo) if c < 0xdc00 && (0xdc00..0xe000).contains(&lo) => {
        let cp = 0x1_0000 + ((c - 0xd800) << 10) + (lo - 0xdc00);
        (0x8080_80f0 | (cp >> 18) | ((cp >> 12) & 0x3f) << 8 | ((cp >> 6) & 0x3f) << 16 | (cp & 0x3f) << 24, 4, 2)
      }
      _ => (0xbd_bfef, 3, 1),
    }
  })
}

#[cfg(target_arch = "x86_64")]
mod ssse3 {
  use std::arch::x86_64::*;
  use std::mem::MaybeUninit;

  /// Byte shuffles packing four characters' UTF-8, each spread over a 32-bit
  /// lane as [one-byte form, last byte, three-byte lead, two-byte lead or
  /// three-byte middle], into their 1-3 bytes each (simdutf's scheme). Index:
  /// bit 2k = character k is ASCII, bit 2k+1 = it is below U+0800; entry:
  /// [byte count, 16 shuffle indices] (0x80: zero).
  const PACK_1_2_3: [[u8; 17]; 256] = {
    let mut table = [[0x80u8; 17]; 256];
    let mut m = 0;
    while m < 256 {
      let mut n = 1;
      let mut k = 0;
      while k < 4 {
        let lane = 4 * k as u8;
        if (m >> (2 * k)) & 1 != 0 {
          table[m][n] = lane;
          n += 1;
        } else if (m >> (2 * k + 1)) & 1 != 0 {
          table[m][n] = lane + 3;
          table[m][n + 1] = lane + 1;
          n += 2;
        } else {
          table[m][n] = lane + 2;
          table[m][n + 1] = lane + 3;
          table[m][n + 2] = lane + 1;
          n += 3;
        }
        k += 1;
      }
      table[m][0] = (n - 1) as u8;
      m += 1;
    }
    table
  };

  /// Byte shuffles keeping the u16 lanes whose bit is set in the index, in
  /// order, at the start (0x80: zero).
  const KEEP_LANES: [[u8; 16]; 256] = {
    let mut table = [[0x80u8; 16]; 256];
    let mut m = 0;
    while m < 256 {
      let (mut n, mut k) = (0, 0);
      while k < 8 {
        if (m >> k) & 1 != 0 {
          table[m][n] = 2 * k as u8;
          table[m][n + 1] = 2 * k as u8 + 1;
          n += 2;
        }
        k += 1;
      }
      m += 1;
    }
    table
  };

  /// `to_utf16` 16 bytes at a time while 16 are left (18 for a block that is
  /// not all ASCII or all three-byte characters): 16 ASCII bytes, 5
  /// three-byte characters (most CJK; valid UTF-8: a lead byte at a
  /// character's start says where the next one starts, so the leads at the
  /// expected offsets are enough), any mix of one-, two- and three-byte
  /// characters (Latin-1 accents, Cyrillic, Greek, Arabic, Hebrew, ... with
  /// spaces and punctuation, typographic quotes, CJK with ASCII; Rust speed
  /// test, Russian text: 1.2 -> 0.73 ns a character), or a mix with
  /// four-byte characters too (emoji; such a block went to the scalar loop:
  /// mixed text 1.43 -> 0.80 ns a character, emoji between words 1.69 ->
  /// 1.20).
  /// Returns where it stopped (byte, unit), at a character's start.
  #[target_feature(enable = "ssse3")]
  pub(super) unsafe fn to_utf16(bytes: &[u8], dst: &mut [MaybeUninit<u16>]) -> (usize, usize) {
    // Per three-byte character k (bytes 3k..3k+2 = a, b, c): u16 lanes [b, a] and [c, 0].
    const AB: [i8; 16] = [1, 0, 4, 3, 7, 6, 10, 9, 13, 12, -1, -1, -1, -1, -1, -1];
    const C: [i8; 16] = [2, -1, 5, -1, 8, -1, 11, -1, 14, -1, -1, -1, -1, -1, -1, -1];
    // Byte offsets of the leads of five three-byte characters: 0, 3, .., 12.
    const LEADS_3: u32 = 0x1249;
    // SAFETY (this block): SSSE3 is enabled by the caller's check; every load
    // reads 16 bytes inside `bytes` (i + 16 <= len, and i + 18 <= len for the
    // loads at i + 1 and i + 2), every store writes 8 or 16 units from at most
    // o + 8 inside `dst` (o + 16 <= len checked), and KEEP_LANES rows are 16 bytes.
    let (ab, c) = (_mm_loadu_si128(AB.as_ptr().cast()), _mm_loadu_si128(C.as_ptr().cast()));
    let byte = |x: u8| _mm_set1_epi8(x as i8);
    let word = |x: u16| _mm_set1_epi16(x as i16);
    let zero = _mm_setzero_si128();
    let (mut i, mut o) = (0usize, 0usize);
    while i + 16 <= bytes.len() && o + 16 <= dst.len() {
      let v = _mm_loadu_si128(bytes.as_ptr().add(i).cast());
      let out = dst.as_mut_ptr().add(o).cast::<__m128i>();
      let high = _mm_movemask_epi8(v) as u32;
      if high == 0 {
        _mm_storeu_si128(out, _mm_unpacklo_epi8(v, zero));
        _mm_storeu_si128(out.add(1), _mm_unpackhi_epi8(v, zero));
        i += 16;
        o += 16;
        continue;
      }
      let leads_3 = _mm_movemask_epi8(_mm_cmpeq_epi8(_mm_and_si128(v, byte(0xf0)), byte(0xe0))) as u32;
      if leads_3 & LEADS_3 == LEADS_3 {
        // [b, a] -> (a & 0x0f) << 12 | (b & 0x3f) << 6; [c, 0] -> c & 0x3f
        let pair = _mm_shuffle_epi8(v, ab);
        let units = _mm_or_si128(
          _mm_or_si128(_mm_and_si128(_mm_slli_epi16(pair, 4), word(0xf000)), _mm_and_si128(_mm_slli_epi16(pair, 6), word(0x0fc0))),
          _mm_and_si128(_mm_shuffle_epi8(v, c), word(0x003f)),
        );
        _mm_storeu_si128(out, units); // (5 units; the 3 past them are overwritten next)
        i += 15;
        o += 5;
        continue;
      }
      // Any mix of one-, two- and three-byte characters (words between
      // spaces, punctuation, CJK with ASCII): each byte's unit as if a
      // character started there (ASCII as it is, a two-byte lead with the
      // byte after it, a three-byte lead with the two after it, from w1 and
      // w2), the continuations' lanes then dropped by a shuffle per 8 lanes.
      // Without three-byte leads the units take fewer steps (Russian text:
      // 0.73 ns a character, 0.92 with them).
      let wide = _mm_movemask_epi8(_mm_cmpeq_epi8(_mm_and_si128(v, byte(0xe0)), byte(0xe0))) as u32;
      let four = _mm_movemask_epi8(_mm_cmpeq_epi8(_mm_and_si128(v, byte(0xf8)), byte(0xf0)));
      if four == 0 && i + 18 <= bytes.len() {
        let w1 = _mm_loadu_si128(bytes.as_ptr().add(i + 1).cast());
        let starts = !(_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_and_si128(v, byte(0xc0)), byte(0x80))) as u32) & 0xffff;
        let units = |b: __m128i, n1: __m128i, n2: Option<__m128i>| {
          let ascii = _mm_cmpgt_epi16(word(0x80), b);
          let low = _mm_and_si128(n1, word(0x3f));
          let mut multi = _mm_or_si128(_mm_slli_epi16(_mm_and_si128(b, word(0x1f)), 6), low);
          if let Some(n2) = n2 {
            let three = _mm_cmpgt_epi16(b, word(0xdf));
            let thr = _mm_or_si128(_mm_or_si128(_mm_slli_epi16(b, 12), _mm_slli_epi16(low, 6)), _mm_and_si128(n2, word(0x3f)));
            multi = _mm_or_si128(_mm_and_si128(three, thr), _mm_andnot_si128(three, multi));
          }
          _mm_or_si128(_mm_and_si128(ascii, b), _mm_andnot_si128(ascii, multi))
        };
        // (the bytes past the block: a two-byte lead in byte 15 takes one, a
        // three-byte lead in byte 15 two, in byte 14 one)
        let (lo, hi, past) = if wide == 0 {
          let past = (high & starts) >> 15;
          (units(_mm_unpacklo_epi8(v, zero), _mm_unpacklo_epi8(w1, zero), None), units(_mm_unpackhi_epi8(v, zero), _mm_unpackhi_epi8(w1, zero), None), past)
        } else {
          let w2 = _mm_loadu_si128(bytes.as_ptr().add(i + 2).cast());
          let past = ((high & starts & !leads_3) >> 15) + ((leads_3 >> 15) & 1) * 2 + ((leads_3 >> 14) & 1);
          (
            units(_mm_unpacklo_epi8(v, zero), _mm_unpacklo_epi8(w1, zero), Some(_mm_unpacklo_epi8(w2, zero))),
            units(_mm_unpackhi_epi8(v, zero), _mm_unpackhi_epi8(w1, zero), Some(_mm_unpackhi_epi8(w2, zero))),
            past,
          )
        };
        let (m0, m1) = ((starts & 0xff) as usize, (starts >> 8) as usize);
        let n0 = m0.count_ones() as usize;
        _mm_storeu_si128(out, _mm_shuffle_epi8(lo, _mm_loadu_si128(KEEP_LANES[m0].as_ptr().cast())));
        _mm_storeu_si128(dst.as_mut_ptr().add(o + n0).cast(), _mm_shuffle_epi8(hi, _mm_loadu_si128(KEEP_LANES[m1].as_ptr().cast())));
        i += 16 + past as usize;
        o += n0 + m1.count_ones() as usize;
        continue;
      }
      if i + 18 <= bytes.len() {
        // A block with four-byte characters (emoji, rarer CJK): each one's
        // surrogate pair in its lead's lane and the next (a continuation's,
        // dropped otherwise); one led in byte 15, whose low surrogate's lane
        // would be past the block, is left for the next.
        let w1 = _mm_loadu_si128(bytes.as_ptr().add(i + 1).cast());
        let w2 = _mm_loadu_si128(bytes.as_ptr().add(i + 2).cast());
        let four = four as u32;
        let leads = high & !(_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_and_si128(v, byte(0xc0)), byte(0x80))) as u32);
        let cut = four >> 15;
        let starts = ((!high | leads | (four << 1)) & 0xffff) & !(cut << 15);
        let after = _mm_slli_si128(_mm_cmpeq_epi8(_mm_and_si128(v, byte(0xf8)), byte(0xf0)), 1);
        let units = |b: __m128i, n1: __m128i, n2: __m128i, after: __m128i| {
          let low = _mm_and_si128(n1, word(0x3f));
          let last = _mm_and_si128(n2, word(0x3f));
          let two = _mm_or_si128(_mm_slli_epi16(_mm_and_si128(b, word(0x1f)), 6), low);
          let three = _mm_or_si128(_mm_or_si128(_mm_slli_epi16(b, 12), _mm_slli_epi16(low, 6)), last);
          // (U+10000 and up: high 0xd800 + (code point >> 10) - 0x40, low 0xdc00 + its last 10 bits)
          let high4 = _mm_add_epi16(word(0xd7c0), _mm_or_si128(_mm_or_si128(_mm_slli_epi16(_mm_and_si128(b, word(0x07)), 8), _mm_slli_epi16(low, 2)), _mm_srli_epi16(last, 4)));
          let low4 = _mm_or_si128(word(0xdc00), _mm_or_si128(_mm_slli_epi16(_mm_and_si128(n1, word(0x0f)), 6), last));
          let pick = |m: __m128i, a: __m128i, b: __m128i| _mm_or_si128(_mm_and_si128(m, a), _mm_andnot_si128(m, b));
          let mut u = pick(_mm_cmpgt_epi16(b, word(0xdf)), three, two);
          u = pick(_mm_cmpgt_epi16(b, word(0xef)), high4, u);
          u = pick(after, low4, u);
          pick(_mm_cmpgt_epi16(word(0x80), b), b, u)
        };
        let lo = units(_mm_unpacklo_epi8(v, zero), _mm_unpacklo_epi8(w1, zero), _mm_unpacklo_epi8(w2, zero), _mm_unpacklo_epi8(after, after));
        let hi = units(_mm_unpackhi_epi8(v, zero), _mm_unpackhi_epi8(w1, zero), _mm_unpackhi_epi8(w2, zero), _mm_unpackhi_epi8(after, after));
        // (the bytes past the block: a two-byte lead in byte 15 takes one, a
        // three-byte lead in byte 15 two, in byte 14 one, a four-byte lead in
        // byte 14 two, in byte 13 one)
        let past = ((leads & !leads_3 & !four) >> 15) + ((leads_3 >> 15) & 1) * 2 + ((leads_3 >> 14) & 1) + ((four >> 14) & 1) * 2 + ((four >> 13) & 1);
        let (m0, m1) = ((starts & 0xff) as usize, (starts >> 8) as usize);
        let n0 = m0.count_ones() as usize;
        _mm_storeu_si128(out, _mm_shuffle_epi8(lo, _mm_loadu_si128(KEEP_LANES[m0].as_ptr().cast())));
        _mm_storeu_si128(dst.as_mut_ptr().add(o + n0).cast(), _mm_shuffle_epi8(hi, _mm_loadu_si128(KEEP_LANES[m1].as_ptr().cast())));
        i += 16 + past as usize - cut as usize;
        o += n0 + m1.count_ones() as usize;
        continue;
      }
      break;
    }
    (i, o)
  }

  /// Eight units at a time: all ASCII, all three-byte characters (most CJK),
  /// or any mix of one, two and three bytes and surrogate pairs (a high
  /// surrogate in the last unit waits for the next block). Blocks with a
  /// lone surrogate, and the tail, go through the scalar loop.
  #[target_feature(enable = "ssse3")]
  pub(super) unsafe fn utf16_to_utf8(src: &[u16], dst: &mut [u8]) -> Option<usize> {
    // Byte shuffles interleaving x = (lead, middle byte) pairs and y = last
    // bytes into the 24 output bytes of eight three-byte characters (-1: zero).
    const LO_X: [i8; 16] = [0, 1, -1, 2, 3, -1, 4, 5, -1, 6, 7, -1, 8, 9, -1, 10];
    const LO_Y: [i8; 16] = [-1, -1, 0, -1, -1, 1, -1, -1, 2, -1, -1, 3, -1, -1, 4, -1];
    const HI_X: [i8; 16] = [11, -1, 12, 13, -1, 14, 15, -1, -1, -1, -1, -1, -1, -1, -1, -1];
    const HI_Y: [i8; 16] = [-1, 5, -1, -1, 6, -1, -1, 7, -1, -1, -1, -1, -1, -1, -1, -1];
    // Each unit's low byte twice.
    const DUP_LOW: [i8; 16] = [0, 0, 2, 2, 4, 4, 6, 6, 8, 8, 10, 10, 12, 12, 14, 14];
    // SAFETY (this block): SSSE3 is enabled by the caller's check; every load
    // reads 8 units inside `src` (i + 8 <= len), every store writes inside
    // `dst` (at most o + 28 <= o + 32 <= len), and the PACK_1_2_3 loads read
    // 16 bytes from offset 1 of a 17-byte row.
    let (lo_x, lo_y) = (_mm_loadu_si128(LO_X.as_ptr().cast()), _mm_loadu_si128(LO_Y.as_ptr().cast()));
    let (hi_x, hi_y) = (_mm_loadu_si128(HI_X.as_ptr().cast()), _mm_loadu_si128(HI_Y.as_ptr().cast()));
    let dup_low = _mm_loadu_si128(DUP_LOW.as_ptr().cast());
    let word = |x: u16| _mm_set1_epi16(x as i16);
    let zero = _mm_setzero_si128();
    let mut i = 0usize;
    let mut o = 0usize;
    while i + 8 <= src.len() && o + 32 <= dst.len() {
      let v = _mm_loadu_si128(src.as_ptr().add(i).cast());
      let top = _mm_and_si128(v, word(0xf800));
      let one_or_two = _mm_cmpeq_epi16(top, zero);
      let surrogate = _mm_cmpeq_epi16(top, word(0xd800));
      if _mm_movemask_epi8(_mm_or_si128(one_or_two, surrogate)) == 0 {
        // all three-byte
        let lead = _mm_or_si128(_mm_srli_epi16(v, 12), word(0xe0));
        let middle = _mm_or_si128(_mm_and_si128(_mm_srli_epi16(v, 6), word(0x3f)), word(0x80));
        let last = _mm_or_si128(_mm_and_si128(v, word(0x3f)), word(0x80));
        let x = _mm_or_si128(lead, _mm_slli_epi16(middle, 8));
        let y = _mm_packus_epi16(last, last);
        let lo = _mm_or_si128(_mm_shuffle_epi8(x, lo_x), _mm_shuffle_epi8(y, lo_y));
        let hi = _mm_or_si128(_mm_shuffle_epi8(x, hi_x), _mm_shuffle_epi8(y, hi_y));
        let out = dst.as_mut_ptr().add(o);
        _mm_storeu_si128(out.cast(), lo);
        _mm_storel_epi64(out.add(16).cast(), hi);
        i += 8;
        o += 24;
        continue;
      }
      let ascii = _mm_cmpeq_epi16(_mm_and_si128(v, word(0xff80)), zero);
      let ascii_bits = _mm_movemask_epi8(ascii);
      if ascii_bits == 0xffff {
        _mm_storel_epi64(dst.as_mut_ptr().add(o).cast(), _mm_packus_epi16(v, v));
        i += 8;
        o += 8;
        continue;
      }
      // A mix: each unit [aaaa|bbbb|bbcc|cccc] spread to a 32-bit lane (see PACK_1_2_3).
      // (high) 10cccccc (low) 0bcccccc: the last byte, and the ASCII byte
      let mut last = _mm_or_si128(_mm_and_si128(_mm_shuffle_epi8(v, dup_low), word(0x3f7f)), word(0x8000));
      // (high) 11bbbbbb (low) 1110aaaa, bit 14 cleared for three-byte characters
      let ab = _mm_maddubs_epi16(_mm_and_si128(_mm_srli_epi16(v, 4), word(0x0ffc)), word(0x0140));
      let mut leads = _mm_xor_si128(_mm_or_si128(ab, word(0xc0e0)), _mm_andnot_si128(one_or_two, word(0x4000)));
      let surrogates = _mm_movemask_epi8(surrogate) as u32;
      // a high surrogate in the last lane, left for the next block (its 2 bytes here are overwritten)
      let mut cut = 0;
      if surrogates != 0 {
        // A surrogate pair as two two-byte lanes: the high one's lane [11110www, 10xxxxxx],
        // the low one's [10xxyyyy, 10zzzzzz] (the code point's 4 bytes). A lone
        // surrogate (U+FFFD) takes the scalar loop.
        let highs = _mm_movemask_epi8(_mm_cmpeq_epi16(_mm_and_si128(v, word(0xfc00)), word(0xd800))) as u32;
        if (highs << 2) & 0xffff != surrogates & !highs {
          (i, o) = super::utf16_chars_to_utf8(src, dst, i, o, i + 8)?;
          continue;
        }
        cut = (highs >> 15) as usize;
        // (the code point >> 10: the high surrogate's 10 bits + 0x40)
        let top = _mm_add_epi16(_mm_and_si128(v, word(0x03ff)), word(0x0040));
        let high_lead = _mm_or_si128(_mm_slli_epi16(_mm_srli_epi16(top, 8), 8), word(0xf000));
        let high_next = _mm_or_si128(_mm_slli_epi16(_mm_and_si128(_mm_srli_epi16(top, 2), word(0x3f)), 8), word(0x8000));
        // (the low surrogate's third byte: 2 bits of the unit before it, 4 of its own)
        let before = _mm_slli_si128(v, 2);
        let low_third = _mm_or_si128(
          _mm_slli_epi16(_mm_or_si128(_mm_slli_epi16(_mm_and_si128(before, word(0x0003)), 4), _mm_and_si128(_mm_srli_epi16(v, 6), word(0x000f))), 8),
          word(0x8000),
        );
        let is_high = _mm_cmpeq_epi16(_mm_and_si128(v, word(0xfc00)), word(0xd800));
        let is_low = _mm_andnot_si128(is_high, surrogate);
        let pick = |m: __m128i, a: __m128i, b: __m128i| _mm_or_si128(_mm_and_si128(m, a), _mm_andnot_si128(m, b));
        leads = pick(is_high, high_lead, pick(is_low, low_third, leads));
        last = pick(is_high, high_next, last);
      }
      let mask = (ascii_bits & 0x5555) | ((_mm_movemask_epi8(one_or_two) as u32 | surrogates) as i32 & 0xaaaa);
      let row0 = &PACK_1_2_3[(mask & 0xff) as usize];
      let row1 = &PACK_1_2_3[(mask >> 8) as usize];
      let out = dst.as_mut_ptr().add(o);
      let first = _mm_shuffle_epi8(_mm_unpacklo_epi16(last, leads), _mm_loadu_si128(row0.as_ptr().add(1).cast()));
      _mm_storeu_si128(out.cast(), first);
      let second = _mm_shuffle_epi8(_mm_unpackhi_epi16(last, leads), _mm_loadu_si128(row1.as_ptr().add(1).cast()));
      _mm_storeu_si128(out.add(usize::from(row0[0])).cast(), second);
      i += 8 - cut;
      o += usize::from(row0[0]) + usize::from(row1[0]) - 2 * cut;
    }
    super::utf16_to_utf8_scalar(src, dst, i, o, src.len()).map(|(_, o)| o)
  }

  /// Byte shuffles keeping, of eight [lead, continuation] byte pairs, both
  /// bytes of the pairs whose bit is set in the index and the lead of the
  /// others, in order, at the start (0x80: zero); entry 16 is the byte count.
  pub(super) const EXPAND_PAIRS: [[u8; 17]; 256] = {
    let mut table = [[0x80u8; 17]; 256];
    let mut m = 0;
    while m < 256 {
      let (mut n, mut k) = (0, 0);
      while k < 8 {
        table[m][n] = 2 * k as u8;
        n += 1;
        if (m >> k) & 1 != 0 {
          table[m][n] = 2 * k as u8 + 1;
          n += 1;
        }
        k += 1;
      }
      table[m][16] = n as u8;
      m += 1;
    }
    table
  };

  /// latin1_to_utf8_scalar 16 characters at a time: stored as they are when
  /// all are ASCII, else each one above U+007F as its two bytes (0xC2/0xC3
  /// and the byte with bit 6 cleared), packed with EXPAND_PAIRS. The tail
  /// goes through the scalar loop.
  #[target_feature(enable = "ssse3")]
  pub(super) unsafe fn latin1_to_utf8(src: &[u8], dst: &mut [u8], mut r: usize, mut w: usize) -> Option<usize> {
    let byte = |x: u8| _mm_set1_epi8(x as i8);
    let zero = _mm_setzero_si128();
    while r + 16 <= src.len() && w + 32 <= dst.len() {
      // SAFETY: r + 16 <= src.len(); the two 16-byte stores (at w and at
      // most w + 16) end at or below w + 32 <= dst.len(); the EXPAND_PAIRS
      // loads read the first 16 bytes of a 17-byte row.
      let v = _mm_loadu_si128(src.as_ptr().add(r).cast());
      let out = dst.as_mut_ptr().add(w);
      let high = _mm_movemask_epi8(v) as usize;
      if high == 0 {
        _mm_storeu_si128(out.cast(), v);
        r += 16;
        w += 16;
        continue;
      }
      let above = _mm_cmplt_epi8(v, zero);
      // lead: the byte itself for ASCII, 0xC0 | (b >> 6) above it
      let two_byte_lead = _mm_or_si128(_mm_and_si128(_mm_srli_epi16(v, 6), byte(0x03)), byte(0xc0));
      let lead = _mm_or_si128(_mm_andnot_si128(above, v), _mm_and_si128(above, two_byte_lead));
      let cont = _mm_and_si128(v, byte(0xbf));
      let (row0, row1) = (&EXPAND_PAIRS[high & 0xff], &EXPAND_PAIRS[high >> 8]);
      let first = _mm_shuffle_epi8(_mm_unpacklo_epi8(lead, cont), _mm_loadu_si128(row0.as_ptr().cast()));
      let second = _mm_shuffle_epi8(_mm_unpackhi_epi8(lead, cont), _mm_loadu_si128(row1.as_ptr().cast()));
      _mm_storeu_si128(out.cast(), first);
      _mm_storeu_si128(out.add(usize::from(row0[16])).cast(), second);
      r += 16;
      w += usize::from(row0[16]) + usize::from(row1[16]);
    }
    super::latin1_to_utf8_scalar(src, dst, r, w)
  }
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
  use super::ssse3::EXPAND_PAIRS;
  use std::arch::x86_64::*;

  /// ssse3::latin1_to_utf8 32 characters at a time: a block's leads and
  /// continuation bytes are made in one register, each 128-bit lane packs
  /// two runs of eight characters with EXPAND_PAIRS, and the four runs are
  /// stored one after the other (their lengths from the mask). The rest
  /// goes to the 16-character blocks and the scalar loop. On French text
  /// (~10% accented letters) 0.088-0.112 ns a character against
  /// 0.102-0.128 with SSSE3 alone (1,000 to 100,000 characters, a
  /// release-build loop, measured when the text was still widened in place
  /// in the output).
  #[target_feature(enable = "avx2,popcnt")]
  pub(super) unsafe fn latin1_to_utf8(src: &[u8], dst: &mut [u8], mut r: usize, mut w: usize) -> Option<usize> {
    let byte = |x: u8| _mm256_set1_epi8(x as i8);
    // the shuffle of eight characters whose bits (above U+007F) are the low 8 of `m`
    let row = |m: u32| _mm_loadu_si128(EXPAND_PAIRS[(m & 0xff) as usize].as_ptr().cast());
    while r + 32 <= src.len() && w + 64 <= dst.len() {
      // SAFETY: r + 32 <= src.len(). The four 16-byte stores start at most
      // 48 bytes past w (three runs of at most 16), so they end at or below
      // w + 64 <= dst.len(). The EXPAND_PAIRS loads read the first 16 bytes
      // of a 17-byte row.
      let v = _mm256_loadu_si256(src.as_ptr().add(r).cast());
      let out = dst.as_mut_ptr().add(w);
      let high = _mm256_movemask_epi8(v) as u32;
      if high == 0 {
        _mm256_storeu_si256(out.cast(), v);
        r += 32;
        w += 32;
        continue;
      }
      // lead: the byte itself for ASCII, 0xC0 | (b >> 6) above it (blended on the byte's own top bit)
      let two_byte_lead = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(v, 6), byte(0x03)), byte(0xc0));
      let lead = _mm256_blendv_epi8(v, two_byte_lead, v);
      let cont = _mm256_and_si256(v, byte(0xbf));
      // (lanes: characters 0-7 and 16-23, then 8-15 and 24-31)
      let lo = _mm256_shuffle_epi8(_mm256_unpacklo_epi8(lead, cont), _mm256_set_m128i(row(high >> 16), row(high)));
      let hi = _mm256_shuffle_epi8(_mm256_unpackhi_epi8(lead, cont), _mm256_set_m128i(row(high >> 24), row(high >> 8)));
      let n0 = 8 + (high & 0xff).count_ones() as usize;
      let n1 = 8 + ((high >> 8) & 0xff).count_ones() as usize;
      let n2 = 8 + ((high >> 16) & 0xff).count_ones() as usize;
      _mm_storeu_si128(out.cast(), _mm256_castsi256_si128(lo));
      _mm_storeu_si128(out.add(n0).cast(), _mm256_castsi256_si128(hi));
      _mm_storeu_si128(out.add(n0 + n1).cast(), _mm256_extracti128_si256(lo, 1));
      _mm_storeu_si128(out.add(n0 + n1 + n2).cast(), _mm256_extracti128_si256(hi, 1));
      r += 32;
      w += 32 + high.count_ones() as usize;
    }
    // (a CPU with AVX2 has SSSE3)
    super::ssse3::latin1_to_utf8(src, dst, r, w)
  }
}

#[cfg(target_arch = "x86_64")]
mod avx512 {
  use std::arch::x86_64::*;
  use std::mem::MaybeUninit;

  /// Whether this CPU runs `latin1_to_utf8` and `utf8_to_latin1` (AVX-512 F, BW and VBMI2, with AVX2 and POPCNT).
  pub(super) fn available() -> bool {
    std::arch::is_x86_feature_detected!("avx512f")
      && std::arch::is_x86_feature_detected!("avx512bw")
      && std::arch::is_x86_feature_detected!("avx512vbmi2")
      && std::arch::is_x86_feature_detected!("avx2")
      && std::arch::is_x86_feature_detected!("popcnt")
  }

  /// utf8_to_latin1_scalar 64 bytes at a time: stored as they are when all
  /// are ASCII; else, with no byte from 0xC4 (a lead of a character from
  /// U+0100), each continuation byte after a 0xC3 lead gets 0x40 (0xC2's
  /// characters are their continuation bytes), one VBMI2 compress drops the
  /// leads, and the 64-byte store is cut to the characters' count. A block
  /// that ends with a lead leaves it to the next. Returns where the scalar
  /// loop goes on (byte, output byte): at the end, or at a block with a
  /// byte from 0xC4 (where the scalar loop stops at its character).
  #[target_feature(enable = "avx512f,avx512bw,avx512vbmi2,popcnt")]
  pub(super) unsafe fn utf8_to_latin1(bytes: &[u8], dst: &mut [MaybeUninit<u8>]) -> (usize, usize) {
    let (mut i, mut o) = (0, 0);
    while i + 64 <= bytes.len() && o + 64 <= dst.len() {
      // SAFETY: i + 64 <= bytes.len(); the stores write at most 64 bytes from o, o + 64 <= dst.len().
      let v = _mm512_loadu_si512(bytes.as_ptr().add(i).cast());
      let out = dst.as_mut_ptr().add(o);
      let high = _mm512_movepi8_mask(v);
      if high == 0 {
        _mm512_storeu_si512(out.cast(), v);
        i += 64;
        o += 64;
        continue;
      }
      if _mm512_cmpge_epu8_mask(v, _mm512_set1_epi8(0xc4_u8 as i8)) != 0 {
        break;
      }
      let leads = _mm512_cmpge_epu8_mask(v, _mm512_set1_epi8(0xc0_u8 as i8));
      // (a lead in the last byte: its character is the next block's)
      let taken: u64 = if leads >> 63 != 0 { u64::MAX >> 1 } else { u64::MAX };
      let after_c3 = _mm512_cmpeq_epi8_mask(v, _mm512_set1_epi8(0xc3_u8 as i8)) << 1;
      let chars = _mm512_mask_add_epi8(v, after_c3, v, _mm512_set1_epi8(0x40));
      let keep = !leads & taken;
      let n = keep.count_ones() as usize;
      _mm512_mask_storeu_epi8(out.cast(), if n == 64 { u64::MAX } else { (1u64 << n) - 1 }, _mm512_maskz_compress_epi8(keep, chars));
      i += taken.count_ones() as usize;
      o += n;
    }
    (i, o)
  }

  /// ssse3::latin1_to_utf8 32 characters at a time without shuffle tables:
  /// each character is widened to a 16-bit lane holding its UTF-8 (the byte
  /// itself, or the lead 0xC0 | (b >> 6) then the continuation b & 0xBF),
  /// one VBMI2 compress drops the lanes' unused high bytes, and a byte-masked
  /// store writes exactly the block's UTF-8. The rest goes to the
  /// 16-character blocks and the scalar loop. On French text (~10% accented
  /// letters) ~0.055 ns a character against ~0.075 with AVX2 (the loop in a
  /// profile of speed_latin1).
  #[target_feature(enable = "avx512f,avx512bw,avx512vbmi2,avx2,popcnt")]
  pub(super) unsafe fn latin1_to_utf8(src: &[u8], dst: &mut [u8], mut r: usize, mut w: usize) -> Option<usize> {
    let low_six = _mm512_set1_epi16(0x3f);
    let lead_and_continuation_bits = _mm512_set1_epi16(0x80c0_u16 as i16);
    let high_bytes = _mm512_set1_epi16(0xff00_u16 as i16);
    while r + 32 <= src.len() && w + 64 <= dst.len() {
      // SAFETY: r + 32 <= src.len(); the stores write at most 64 bytes from w (exactly the block's UTF-8), w + 64 <= dst.len().
      let v = _mm256_loadu_si256(src.as_ptr().add(r).cast());
      let out = dst.as_mut_ptr().add(w);
      let high = _mm256_movemask_epi8(v) as u32;
      if high == 0 {
        _mm256_storeu_si256(out.cast(), v);
        r += 32;
        w += 32;
        continue;
      }
      let chars = _mm512_cvtepu8_epi16(v);
      // (b & 0x3F | 0x80) << 8 | (b >> 6 | 0xC0): lead in the low byte, continuation in the high one
      let two_bytes = _mm512_or_si512(
        _mm512_or_si512(_mm512_slli_epi16(_mm512_and_si512(chars, low_six), 8), _mm512_srli_epi16(chars, 6)),
        lead_and_continuation_bits,
      );
      let lanes = _mm512_mask_blend_epi16(high, chars, two_bytes);
      // every lane's low byte, and the high byte where it is a continuation (never 0)
      let keep = _mm512_test_epi8_mask(lanes, high_bytes) | 0x5555_5555_5555_5555;
      let n = 32 + high.count_ones() as usize;
      let exact = if n == 64 { u64::MAX } else { (1u64 << n) - 1 };
      _mm512_mask_storeu_epi8(out.cast(), exact, _mm512_maskz_compress_epi8(keep, lanes));
      r += 32;
      w += n;
    }
    // (a CPU with AVX2 has SSSE3)
    super::ssse3::latin1_to_utf8(src, dst, r, w)
  }
}

#[cfg(test)]
mod tests {
  use super::*;

  #[test]
  fn short_ascii() {
    for n in 0..40 {
      let mut v = vec![b'a'; n];
      assert!(is_ascii(&v));
      for i in 0..n {
        v[i] = 0x80;
        assert!(!is_ascii(&v), "{n} {i}");
        v[i] = b'a';
      }
    }
  }

  #[test]
  fn classify_kinds() {
    assert_eq!(classify(b"abc"), ASCII);
    assert_eq!(classify("é".as_bytes()), UTF8);
    assert_eq!(classify(&[0xff]), LOSSY);
    assert_eq!(classify(&[0xed, 0xa0, 0x80]), LOSSY);
  }

  #[test]
  fn utf16_of_valid_utf8() {
    let mut out = Vec::new();
    for text in ["", "abc", "é", "naïve café", "日本語のテキスト", "😀 emoji 🚀", "\u{7f}\u{80}\u{7ff}\u{800}\u{ffff}\u{10000}\u{10ffff}", "Ā"] {
      to_utf16(text.as_bytes(), &mut out);
      let expected: Vec<u16> = text.encode_utf16().collect();
      assert_eq!(out, expected, "{text:?}");
    }
    // every scalar value, one at a time and all in one string
    let all: String = (0..=0x10ffffu32).filter_map(char::from_u32).collect();
    to_utf16(all.as_bytes(), &mut out);
    assert!(out.iter().copied().eq(all.encode_utf16()));
    // invalid input (never given): no panic
    for bad in [&[0xff][..], &[0xe6, 0x97], &[0xf0], &[0xc3]] {
      to_utf16(bad, &mut out);
    }
  }

  #[test]
  fn utf16_of_runs_of_every_kind() {
    // to_utf16 reads ASCII in 8-byte words and two- and three-byte sequences
    // in runs: every length of run of each kind (0-19 characters) after and
    // before each kind of character, at every offset from the words' edges.
    let kinds = ["a", "é", "日", "😀"];
    let mut out = Vec::new();
    for pad in 0..8usize {
      for &run in &kinds {
        for len in 0..20usize {
          for &before in &kinds {
            for &after in &kinds {
              let text = ["x".repeat(pad), before.to_string(), run.repeat(len), after.to_string(), run.repeat(len % 3)].concat();
              to_utf16(text.as_bytes(), &mut out);
              assert!(out.iter().copied().eq(text.encode_utf16()), "{text:?}");
            }
          }
        }
      }
    }
    // invalid input cut short inside each run kind (never given): no panic, valid prefix intact
    for cut in [&[0xc3][..], &[0xe6, 0x97], &[0xf0, 0x9f, 0x98]] {
      let bytes = ["éé日日abcdefgh".as_bytes(), cut].concat();
      to_utf16(&bytes, &mut out);
      assert!(out.len() >= 12 && out[..12].iter().copied().eq("éé日日abcdefgh".encode_utf16()));
    }
  }

  #[test]
  fn utf16_of_random_mixes_in_blocks_and_scalar() {
    // Text from a few kinds of characters in random runs, 0-400 characters:
    // to_utf16 (16-byte blocks on x86_64 with SSSE3) and the scalar loop
    // alone must both give what std gives. The kinds' runs cross the blocks'
    // edges at every offset (a block takes 5 three-byte characters, or any
    // mix of ASCII and two-byte ones; runs of 1-20 of each are drawn).
    let kinds: [&[char]; 5] = [&['a', ' ', '7', '~'], &['é', 'Ж', 'ß', '\u{7ff}', '\u{80}'], &['日', '本', '\u{800}', '\u{ffff}', '\u{e000}'], &['😀', '\u{10000}', '\u{10ffff}'], &['\u{0}']];
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut next = |n: usize| {
      seed ^= seed << 13;
      seed ^= seed >> 7;
      seed ^= seed << 17;
      (seed % n as u64) as usize
    };
    let mut out = Vec::new();
    for _ in 0..20_000 {
      let mut text = String::new();
      let chars = next(400);
      while text.chars().count() < chars {
        let kind = kinds[next(kinds.len())];
        for _ in 0..1 + next(20) {
          text.push(kind[next(kind.len())]);
        }
      }
      let expected: Vec<u16> = text.encode_utf16().collect();
      to_utf16(text.as_bytes(), &mut out);
      assert_eq!(out, expected, "{text:?}");
      let mut scalar = Vec::with_capacity(text.len());
      let (_, o) = to_utf16_scalar(text.as_bytes(), scalar.spare_capacity_mut(), 0, 0, text.len());
      // SAFETY: the scalar loop wrote the first o units.
      unsafe { scalar.set_len(o) };
      assert_eq!(scalar, expected, "{text:?}");
    }
    // invalid input in blocks (never given): no panic
    for len in 0..80 {
      let bytes: Vec<u8> = (0..len).map(|_| [0xe6, 0x97, 0xc3, 0xf0, 0x80, 0xbf, b'a'][next(7)]).collect();
      to_utf16(&bytes, &mut out);
      assert!(out.len() <= bytes.len());
    }
  }

  /// `cargo test --release -q speed_latin1 -- --ignored --nocapture`:
  /// latin1_to_utf8 on French text (~10% accented letters).
  #[test]
  #[ignore]
  fn speed_latin1() {
    let text: Vec<u8> = "Le coeur a ses raisons que la raison ne connaît point. Élève, où êtes-vous allé ? Déjà vu, façade, naïve crème brûlée à la française. "
      .chars()
      .map(|c| c as u32 as u8)
      .collect();
    for len in [200usize, 1000, 3000, 10_000, 100_000] {
      let src: Vec<u8> = text.iter().cycle().take(len).copied().collect();
      let mut dst = vec![0u8; 2 * len + 64];
      let n = (100_000_000 / len).max(1);
      let mut best = f64::MAX;
      for _ in 0..5 {
        let t = std::time::Instant::now();
        for _ in 0..n {
          std::hint::black_box(latin1_to_utf8(std::hint::black_box(&src), &mut dst));
        }
        best = best.min(t.elapsed().as_nanos() as f64 / (n * len) as f64);
      }
      eprintln!("french {len}: {best:.3} ns a character");
    }
  }

  /// `cargo test --release -q speed_to_utf16 -- --ignored --nocapture`:
  /// ns a character of to_utf16 and of its scalar loop alone, per kind of text.
  #[test]
  #[ignore]
  fn speed_to_utf16() {
    let texts = [
      ("cjk", "日本語のテキストと漢字".repeat(30_000)),
      ("cyrillic", "Съешь же ещё этих мягких французских булок ".repeat(20_000)),
      ("french", "Le cœur déçu mais l’âme plutôt naïve, rêva au-delà des îles. ".repeat(20_000)),
      ("japanese", "日本語の文章は、漢字と平仮名と片仮名で書かれます。ASCIIも混ざる 123。".repeat(20_000)),
      ("mixed", "naïve café 日本 Ж text 😀 ".repeat(20_000)),
      ("emoji", "👍 ok 😀🎉 great 🚀 ".repeat(20_000)),
      ("short_mixed", "Grüße 世界 1234".to_string()),
    ];
    let mut out = Vec::new();
    for (name, text) in texts {
      let chars = text.chars().count();
      let n = (20_000_000 / chars).max(1);
      let t = std::time::Instant::now();
      for _ in 0..n {
        to_utf16(std::hint::black_box(text.as_bytes()), &mut out);
      }
      let blocks = t.elapsed().as_nanos() as f64 / (n * chars) as f64;
      let t = std::time::Instant::now();
      for _ in 0..n {
        out.clear();
        out.reserve(text.len());
        let o = to_utf16_scalar(std::hint::black_box(text.as_bytes()), out.spare_capacity_mut(), 0, 0, text.len());
        std::hint::black_box(o);
      }
      let scalar = t.elapsed().as_nanos() as f64 / (n * chars) as f64;
      eprintln!("{name}: {blocks:.2} ns a character ({scalar:.2} scalar)");
    }
  }

  #[test]
  fn dfa_agrees_with_std_on_every_short_sequence() {
    // every sequence of one and two bytes, alone and after ASCII / a two-byte character
    let mut buf = Vec::with_capacity(8);
    let agree = |buf: &[u8]| assert_eq!(dfa_valid(buf), std::str::from_utf8(buf).is_ok(), "{buf:02x?}");
    for prefix in [&b""[..], b"a", "\u{e9}".as_bytes()] {
      for a in 0..=255u8 {
        buf.clear();
        buf.extend_from_slice(prefix);
        buf.push(a);
        agree(&buf);
        for b in 0..=255u8 {
          buf.truncate(prefix.len() + 1);
          buf.push(b);
          agree(&buf);
        }
      }
    }
    // every sequence of three bytes
    for a in 0..=255u8 {
      for b in 0..=255u8 {
        for c in 0..=255u8 {
          agree(&[a, b, c]);
        }
      }
    }
    // four-byte sequences around every boundary of the grammar
    let edges = [0x00, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xc1, 0xc2, 0xdf, 0xe0, 0xed, 0xef, 0xf0, 0xf4, 0xf5, 0xff];
    for &a in &edges {
      for &b in &edges {
        for &c in &edges {
          for &d in &edges {
            let s = [a, b, c, d];
            assert_eq!(dfa_valid(&s), std::str::from_utf8(&s).is_ok(), "{s:02x?}");
          }
        }
      }
    }
  }

  #[test]
  fn is_valid_agrees_with_std_on_random_text() {
    // mixed scripts and random bytes, every length up to 200 (both sides of the 64-byte switch)
    let mut seed = 0x1234_5678_u32;
    let mut next = || {
      seed ^= seed << 13;
      seed ^= seed >> 17;
      seed ^= seed << 5;
      seed
    };
    let pieces = ["a", "Z9 ", "\u{e9}", "\u{416}", "\u{65e5}", "\u{1f600}", "\u{7ff}", "\u{800}", "\u{ffff}", "\u{10000}", "\u{10ffff}"];
    for round in 0..20_000 {
      let mut bytes = Vec::new();
      let target = (next() % 200) as usize;
      while bytes.len() < target {
        bytes.extend_from_slice(pieces[(next() % pieces.len() as u32) as usize].as_bytes());
      }
      if round % 2 == 1 && !bytes.is_empty() {
        // one random byte changed, or the text cut short
        let at = (next() as usize) % bytes.len();
        if round % 4 == 1 { bytes[at] = next() as u8 } else { bytes.truncate(at) }
      }
      assert_eq!(is_valid(&bytes), std::str::from_utf8(&bytes).is_ok(), "{bytes:02x?}");
      assert_eq!(classify(&bytes) != LOSSY, std::str::from_utf8(&bytes).is_ok());
    }
  }

  #[test]
  fn lossy_maximal_subparts() {
    // WHATWG: F0 9F 98 (truncated 4-byte seq) -> one U+FFFD; ED A0 80 -> three.
    assert_eq!(lossy(&[0xf0, 0x9f, 0x98, 0x41]), "\u{fffd}A");
    assert_eq!(lossy(&[0xed, 0xa0, 0x80]), "\u{fffd}\u{fffd}\u{fffd}");
    assert!(lossy_eq(&[0xff], "\u{fffd}".as_bytes()));
    assert!(!lossy_eq(b"a", b"b"));
  }
  /// UTF-16 texts for the converters' tests: every UTF-8 length, lone
  /// surrogates (high at the end, high before a non-low, low alone, reversed,
  /// high high low) and one past a 4,096-unit chunk.
  fn utf16_cases() -> Vec<Vec<u16>> {
    let mut cases: Vec<Vec<u16>> = vec![
      vec![],
      "abc".encode_utf16().collect(),
      "abcdefgh\u{7f}ijk".encode_utf16().collect(),
      "naïve café".encode_utf16().collect(),
      "日本語のテキスト".encode_utf16().collect(),
      "😀 emoji 🚀 👩‍💻".encode_utf16().collect(),
      "\u{7f}\u{80}\u{7ff}\u{800}\u{d7ff}\u{e000}\u{ffff}\u{10000}\u{10ffff}".encode_utf16().collect(),
      vec![0x61, 0xd800],
      vec![0xd800, 0x61],
      vec![0xdc00],
      vec![0xde00, 0xd83d],
      vec![0xd83d, 0xd83d, 0xde00],
      vec![0x61, 0x62, 0x63, 0xd800],
    ];
    cases.push("日本😀abcde".encode_utf16().cycle().take(10_000).collect());
    cases
  }

  #[test]
  fn latin1_to_utf8_like_std() {
    // every byte at every offset of a 16-byte SIMD block and of the tail,
    // and of each 8-character run of a 32-byte block (then all of them
    // above U+007F but that one), random mixes; into exactly the room it
    // needs, one byte less, and room for the SIMD blocks to run to the end
    let mut cases: Vec<Vec<u8>> = Vec::new();
    for b in 0..=255u8 {
      for at in [0, 7, 8, 15, 16, 20, 33] {
        let mut v = vec![b'a'; 35];
        v[at] = b;
        cases.push(v);
      }
      for at in [0, 7, 8, 15, 16, 23, 24, 31, 32, 40, 47, 48, 63, 64, 69] {
        let mut v = vec![b'a'; 70];
        v[at] = b;
        cases.push(v);
        let mut v = vec![0xe9; 70];
        v[at] = b;
        cases.push(v);
      }
    }
    let mut x = 11u32;
    for _ in 0..5_000 {
      x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
      let len = (x >> 16) as usize % 200;
      let dense = x % 4;
      let v: Vec<u8> = (0..len)
        .map(|k| {
          let r = x.rotate_left(k as u32 * 7) ^ (k as u32).wrapping_mul(2_654_435_761);
          if r % 8 < dense { (r >> 8) as u8 | 0x80 } else { (r >> 8) as u8 & 0x7f }
        })
        .collect();
      cases.push(v);
    }
    // accented text with one ASCII letter near its end, at every offset: the
    // last blocks then end within a byte or two of the exact room
    for len in [47, 48, 49, 64, 80, 95, 96, 97] {
      for at in len - 33..len {
        let mut v = vec![0xe9; len];
        v[at] = b'a';
        cases.push(v);
      }
    }
    // long enough for latin1_utf8_len's batches of 255 words
    cases.push((0..5_000u32).map(|k| if k % 3 == 0 { 0xe9 } else { b'e' }).collect());
    cases.push(vec![0xff; 4_100]);
    // every block width alone, and the widest this CPU has (latin1_to_utf8)
    type Widen = unsafe fn(&[u8], &mut [u8], usize, usize) -> Option<usize>;
    let mut kernels: Vec<(&str, Widen)> = vec![("scalar", latin1_to_utf8_scalar)];
    #[cfg(target_arch = "x86_64")]
    if simd() {
      kernels.push(("ssse3", ssse3::latin1_to_utf8));
      if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("popcnt") {
        kernels.push(("avx2", avx2::latin1_to_utf8));
      }
      if avx512::available() {
        kernels.push(("avx512", avx512::latin1_to_utf8));
      }
    }
    for src in &cases {
      let expected: String = src.iter().map(|&b| char::from(b)).collect();
      assert_eq!(latin1_utf8_len(src), expected.len());
      for room in [expected.len(), expected.len().saturating_sub(1), expected.len() + 1, expected.len() + 64] {
        let fits = room >= expected.len();
        let mut dst = vec![0xee; room];
        assert_eq!(latin1_to_utf8(src, &mut dst).is_some(), fits, "{src:x?}");
        if fits {
          assert_eq!(&dst[..expected.len()], expected.as_bytes(), "{src:x?}");
        }
        for &(name, widen) in &kernels {
          // (followed by 64 guard bytes that no store may reach)
          let mut buf = vec![0xee; room + 64];
          let (dst, guard) = buf.split_at_mut(room);
          // SAFETY: each kernel is listed only where the CPU has its features (checked above).
          let got = unsafe { widen(src, dst, 0, 0) };
          assert_eq!(got, fits.then_some(expected.len()), "{name} {src:x?}");
          if fits {
            assert_eq!(&dst[..expected.len()], expected.as_bytes(), "{name} {src:x?}");
          }
          assert!(guard.iter().all(|&b| b == 0xee), "{name} wrote past the end {src:x?}");
        }
      }
    }
  }

  #[test]
  fn utf8_to_latin1_like_std() {
    // every character below U+0100 at every offset around the ends of
    // 64-byte blocks (its lead the last byte of one, its continuation the
    // first of the next), among ASCII and among accented letters; random
    // mixes; each also with a character from U+0100 somewhere (false)
    let mut texts: Vec<String> = Vec::new();
    for c in (0..=255u8).map(char::from) {
      for at in [0, 1, 31, 62, 63, 64, 65, 126, 127, 128, 140] {
        for fill in ['a', 'é'] {
          let mut t: Vec<char> = vec![fill; 150];
          t[at] = c;
          texts.push(t.into_iter().collect());
        }
      }
    }
    let mut x = 7u32;
    for _ in 0..3_000 {
      x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
      let len = (x >> 16) as usize % 300;
      let dense = x % 4;
      texts.push(
        (0..len)
          .map(|k| {
            let r = x.rotate_left(k as u32 * 5) ^ (k as u32).wrapping_mul(2_654_435_761);
            char::from(if r % 8 < dense { (r >> 8) as u8 | 0x80 } else { (r >> 8) as u8 & 0x7f })
          })
          .collect(),
      );
    }
    let mut out = Vec::new();
    let mut units = Vec::new();
    for t in &texts {
      let expected: Vec<u8> = t.chars().map(|c| c as u32 as u8).collect();
      assert_eq!(utf8_to_latin1(t.as_bytes(), &mut out), Ok(()), "{t:?}");
      assert_eq!(out, expected, "{t:?}");
      // the scalar loop alone
      let mut alone = Vec::with_capacity(t.len());
      let n = utf8_to_latin1_scalar(t.as_bytes(), alone.spare_capacity_mut(), 0, 0);
      assert_eq!(n, Ok(expected.len()), "{t:?}");
      // SAFETY: the scalar loop wrote every byte below n.
      unsafe { alone.set_len(expected.len()) };
      assert_eq!(alone, expected, "{t:?}");
      // a character from U+0100: Err at its byte, the Latin-1 of the text
      // before it in `out`, and to_utf16_after_latin1 from there as std
      for bad in ['Ā', 'ő', '€', '日', '😀'] {
        for at in [0, t.chars().count() / 2, t.chars().count()] {
          let mut chars: Vec<char> = t.chars().collect();
          chars.insert(at, bad);
          let s: String = chars.iter().collect();
          let byte: usize = chars[..at].iter().map(|c| c.len_utf8()).sum();
          assert_eq!(utf8_to_latin1(s.as_bytes(), &mut out), Err(byte), "{s:?}");
          assert!(out.iter().map(|&b| char::from(b)).eq(chars[..at].iter().copied()), "{s:?}");
          to_utf16_after_latin1(&out, &s.as_bytes()[byte..], &mut units);
          assert!(units.iter().copied().eq(s.encode_utf16()), "{s:?}");
          let mut alone = Vec::with_capacity(s.len());
          assert_eq!(utf8_to_latin1_scalar(s.as_bytes(), alone.spare_capacity_mut(), 0, 0).map_err(|(i, _)| i), Err(byte), "{s:?}");
        }
      }
    }
  }

  #[test]
  fn utf16_to_utf8_like_buffer_write() {
    let mut cases = utf16_cases();
    cases.push("Привет, 東京 café ".encode_utf16().cycle().take(10_000).collect());
    // mixed blocks of eight: ASCII, three-byte, two-byte, pairs split at every offset
    for pad in 0..9 {
      let mut v: Vec<u16> = "a".repeat(pad).encode_utf16().collect();
      v.extend("日本語のテキスト😀日本語のテキストabcdefghé日本語のテキスト".encode_utf16());
      cases.push(v);
    }
    let mut dst = vec![0u8; 40_000];
    for units in &cases {
      let expected = String::from_utf16_lossy(units);
      let scalar = utf16_to_utf8_scalar(units, &mut dst, 0, 0, units.len()).map(|(_, o)| o);
      assert_eq!(scalar, Some(expected.len()), "{units:x?}");
      assert_eq!(&dst[..expected.len()], expected.as_bytes(), "{units:x?}");
      assert_eq!(utf16_to_utf8(units, &mut dst), Some(expected.len()), "{units:x?}");
      assert_eq!(&dst[..expected.len()], expected.as_bytes(), "{units:x?}");
      // exactly the room it needs, and one byte less
      let mut exact = vec![0u8; expected.len()];
      assert_eq!(utf16_to_utf8(units, &mut exact), Some(expected.len()));
      assert_eq!(exact, expected.as_bytes());
      if !expected.is_empty() {
        let mut short = vec![0u8; expected.len() - 1];
        assert_eq!(utf16_to_utf8(units, &mut short), None, "{units:x?}");
      }
    }
    // every unit inside a block of eight three-byte / ASCII characters (the SIMD blocks)
    for u in 0..=0xffffu16 {
      for fill in [0x65e5u16, 0x61] {
        for at in [0, 5, 7, 8] {
          let mut units = vec![fill; 17];
          units[at] = u;
          let expected = String::from_utf16_lossy(&units);
          assert_eq!(utf16_to_utf8(&units, &mut dst), Some(expected.len()), "{units:x?}");
          assert_eq!(&dst[..expected.len()], expected.as_bytes(), "{units:x?}");
        }
      }
    }
    // random strings of boundary units, and random mixes of one-, two- and
    // three-byte characters (the SIMD mixed blocks)
    const EDGES: [u16; 14] = [0, 0x41, 0x7f, 0x80, 0x7ff, 0x800, 0x65e5, 0xd7ff, 0xd800, 0xdbff, 0xdc00, 0xdfff, 0xe000, 0xffff];
    const RANGES: [(u32, u32); 4] = [(0, 0x80), (0x80, 0x800), (0x800, 0xd800), (0xe000, 0x1_0000)];
    let mut x = 7u32;
    let mut next = || {
      x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
      x
    };
    for mixes in [false, true] {
      for _ in 0..20_000 {
        let len = (next() >> 16) as usize % if mixes { 70 } else { 40 };
        let units: Vec<u16> = (0..len)
          .map(|_| {
            if mixes {
              let (lo, hi) = RANGES[(next() >> 16) as usize % RANGES.len()];
              (lo + (next() >> 8) % (hi - lo)) as u16
            } else {
              EDGES[(next() >> 16) as usize % EDGES.len()]
            }
          })
          .collect();
        let expected = String::from_utf16_lossy(&units);
        assert_eq!(utf16_to_utf8(&units, &mut dst), Some(expected.len()), "{units:x?}");
        assert_eq!(&dst[..expected.len()], expected.as_bytes(), "{units:x?}");
      }
    }
    // random mixes with surrogate pairs (the SIMD mixed blocks take them as
    // two two-byte lanes, a high one in a block's last lane waiting for the
    // next block) and now and then a lone surrogate (those blocks: scalar)
    for _ in 0..40_000 {
      let len = (next() >> 16) as usize % 60;
      let mut units: Vec<u16> = Vec::with_capacity(len + 1);
      while units.len() < len {
        let r = (next() >> 16) % 16;
        if r == 0 {
          units.push(0xd800 + ((next() >> 8) % 0x800) as u16);
        } else if r < 8 {
          let c = char::from_u32(0x1_0000 + (next() >> 8) % 0x10_0000).unwrap_or('😀');
          units.extend(c.encode_utf16(&mut [0; 2]).iter());
        } else {
          let (lo, hi) = RANGES[(next() >> 16) as usize % RANGES.len()];
          units.push((lo + (next() >> 8) % (hi - lo)) as u16);
        }
      }
      let expected = String::from_utf16_lossy(&units);
      assert_eq!(utf16_to_utf8(&units, &mut dst), Some(expected.len()), "{units:x?}");
      assert_eq!(&dst[..expected.len()], expected.as_bytes(), "{units:x?}");
    }
    for u in 0..=0xffffu16 {
      for units in [vec![u], vec![0x61, u, 0xdc00], vec![0xd800, u], vec![u, 0x61, 0x62, 0x63, 0x64]] {
        let expected = String::from_utf16_lossy(&units);
        assert_eq!(utf16_to_utf8(&units, &mut dst), Some(expected.len()), "{units:x?}");
        assert_eq!(&dst[..expected.len()], expected.as_bytes(), "{units:x?}");
      }
    }
  }

  #[test]
  fn utf8_length_in_lanes_and_blocks() {
    // every length around the 16 lanes, and text past several 16,384-unit
    // blocks of the widest units (2 extra bytes each: a lane's most), with
    // surrogate pairs and lone surrogates across lane and block edges
    let pattern = [0x61u16, 0xe9, 0x65e5, 0xd83d, 0xde00, 0xdc00, 0x800, 0x7ff, 0xffff, 0xd800];
    for len in 0..=80usize {
      for shift in 0..pattern.len() {
        let units: Vec<u16> = (0..len).map(|i| pattern[(i + shift) % pattern.len()]).collect();
        assert_eq!(utf16_utf8_len(&units), String::from_utf16_lossy(&units).len(), "len {len} shift {shift}");
      }
    }
    for edge in [16_383usize, 16_384, 16_385, 3 * 16_384 + 7] {
      let mut units = vec![0x65e5u16; edge + 40];
      for (k, at) in [edge - 1, edge + 15, edge + 31].into_iter().enumerate() {
        if k == 1 {
          units[at] = 0xdc00;
        } else {
          units[at] = 0xd83d;
          units[at + 1] = 0xde00;
        }
      }
      assert_eq!(utf16_utf8_len(&units), String::from_utf16_lossy(&units).len(), "edge {edge}");
    }
  }

  #[test]
  fn utf8_length_of_utf16_like_buffer_byte_length() {
    let cases = utf16_cases();
    for units in cases {
      assert_eq!(utf16_utf8_len(&units), String::from_utf16_lossy(&units).len(), "{units:x?}");
    }
    for u in 0..=0xffffu16 {
      for units in [vec![u], vec![0x61, u, 0xdc00], vec![0xd800, u]] {
        assert_eq!(utf16_utf8_len(&units), String::from_utf16_lossy(&units).len(), "{units:x?}");
      }
    }
  }

}
