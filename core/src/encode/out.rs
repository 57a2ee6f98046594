//! The output writer: bounds-checked writes that switch to counting once
//! the buffer is exhausted, key words, array indices. Calls `args` (string
//! arguments are written straight into the output).

use super::args::ArgSource;
use crate::utf8;

/// Output writer that switches to counting once the buffer is exhausted.
pub(super) struct Out<'a> {
  pub(super) buf: &'a mut [u8],
  pub(super) pos: usize,
  pub(super) overflow: bool,
  /// (Encoder::latin1_widened)
  pub(super) latin1_widened: &'a mut u64,
}

impl Out<'_> {
  /// `n` bytes fit at the current position (and we are not counting).
  #[inline(always)]
  pub(super) fn room(&self, n: usize) -> bool {
    !self.overflow && self.buf.len().saturating_sub(self.pos) >= n
  }

  #[inline(always)]
  pub(super) fn put<const N: usize>(&mut self, b: [u8; N]) {
    if !self.overflow {
      match self.buf.get_mut(self.pos..self.pos.saturating_add(N)) {
        Some(d) => d.copy_from_slice(&b),
        None => self.overflow = true,
      }
    }
    self.pos = self.pos.saturating_add(N);
  }

  #[inline(always)]
  pub(super) fn byte(&mut self, b: u8) {
    if !self.overflow {
      match self.buf.get_mut(self.pos) {
        Some(d) => *d = b,
        None => self.overflow = true,
      }
    }
    self.pos = self.pos.saturating_add(1);
  }

  /// Variable-length copy (binary data, long keys).
  pub(super) fn put_slice(&mut self, b: &[u8]) {
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
  pub(super) fn put_words(&mut self, words: &[u64], len: usize) {
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
  pub(super) fn patch_i32(&mut self, at: usize, v: i32) {
    if !self.overflow {
      if let Some(d) = self.buf.get_mut(at..at.saturating_add(4)) {
        d.copy_from_slice(&v.to_le_bytes());
      }
    }
  }

  /// Writes string argument `i` (no terminator); returns its byte length.
  #[inline]
  pub(super) fn string<A: ArgSource + ?Sized>(&mut self, args: &mut A, i: usize) -> Result<usize, String> {
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

  /// Writes string argument `i` from its UTF-16 code units, where the source
  /// has them (a string V8 holds as two-byte: see
  /// `utf8::utf16_to_utf8`); returns its byte length.
  pub(super) fn string_utf16<A: ArgSource + ?Sized>(&mut self, args: &mut A, i: usize) -> Result<usize, String> {
    let Some(units) = args.units(i)? else {
      return self.string(args, i);
    };
    Ok(self.utf16(units))
  }

  /// Writes string argument `i`, none of whose characters is above U+00FF,
  /// from its Latin-1 bytes where the source has them (a string V8 holds as
  /// one-byte: see `utf8::latin1_to_utf8`), else as `string`; returns its
  /// byte length. (The bytes are copied into the source's scratch first,
  /// which stays in cache: copied into the output and widened there in
  /// place, a move of the rest after the first accented letter, and a count
  /// of them where the output had no room to spare, cost serializing 30,000
  /// characters of French on Node.js 24 a third of its time.)
  pub(super) fn string_latin1<A: ArgSource + ?Sized>(&mut self, args: &mut A, i: usize) -> Result<usize, String> {
    let Some(bytes) = args.latin1(i)? else {
      return self.string(args, i);
    };
    if !self.overflow {
      if let Some(n) = self.buf.get_mut(self.pos..).and_then(|dst| utf8::latin1_to_utf8(bytes, dst)) {
        if n != bytes.len() {
          *self.latin1_widened += 1;
        }
        self.pos = self.pos.saturating_add(n);
        return Ok(n);
      }
      self.overflow = true;
    }
    let n = utf8::latin1_utf8_len(bytes);
    self.pos = self.pos.saturating_add(n);
    Ok(n)
  }

  /// Writes UTF-16 text as UTF-8 (`utf8::utf16_to_utf8`); returns its byte length.
  pub(super) fn utf16(&mut self, units: &[u16]) -> usize {
    if !self.overflow {
      if let Some(n) = self.buf.get_mut(self.pos..).and_then(|dst| utf8::utf16_to_utf8(units, dst)) {
        self.pos = self.pos.saturating_add(n);
        return n;
      }
      self.overflow = true;
    }
    let n = utf8::utf16_utf8_len(units);
    self.pos = self.pos.saturating_add(n);
    n
  }

  /// Writes an array index as decimal digits followed by NUL.
  #[inline(always)]
  pub(super) fn index_cstr(&mut self, v: u32) {
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
pub(super) fn index_word(mut v: u32) -> (u64, usize) {
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

/// Array indices below this come from a precomputed table.
const INDEX_TABLE: u32 = 10_000;

/// The fast paths' array indices stop below this: their element head is one
/// 8-byte word of type byte, digits and NUL (fast.rs put_index_head).
const INDEX_HEAD_MAX: u32 = 1_000_000;

/// Decimal digits of the indices below INDEX_TABLE, packed little-endian and
/// NUL-padded (the digit count is the number of non-zero bytes).
pub(super) fn index_table() -> &'static [u64] {
  static TABLE: std::sync::OnceLock<Box<[u64]>> = std::sync::OnceLock::new();
  TABLE.get_or_init(|| (0..INDEX_TABLE).map(|i| index_word(i).0).collect())
}

/// Four zero-padded decimal digits of each number below INDEX_TABLE, packed as in index_table.
fn padded_table() -> &'static [u32] {
  static TABLE: std::sync::OnceLock<Box<[u32]>> = std::sync::OnceLock::new();
  // (the digits of 10_000 + i without their leading 1)
  TABLE.get_or_init(|| (0..INDEX_TABLE).map(|i| (index_word(INDEX_TABLE + i).0 >> 8) as u32).collect())
}

/// The digits word of array index `ix` for the fast paths (`table`: index_table()),
/// or None from INDEX_HEAD_MAX on. Past the table: the table's word of its
/// leading digits, then four from padded_table. (When the fast paths stopped
/// at the table's end, an array of 100,000 int32s took run_inner's path, a
/// fast-path attempt and all, for 90% of its elements: 0.73x js-bson's
/// serialize speed, 3.6x at 10,000; with index_word's divisions there, 1.8x.)
#[inline(always)]
pub(super) fn index_digits(table: &[u64], ix: u32) -> Option<u64> {
  match table.get(ix as usize) {
    Some(&digits) => Some(digits),
    None => long_index_digits(table, ix),
  }
}

/// index_digits past the table, out of line (fast_run's array arm inlines index_digits into run_inner).
#[inline(never)]
fn long_index_digits(table: &[u64], ix: u32) -> Option<u64> {
  if ix >= INDEX_HEAD_MAX {
    return None;
  }
  let (high, low) = (ix / INDEX_TABLE, ix % INDEX_TABLE);
  let lead = *table.get(high as usize)?;
  let low_digits = u64::from(*padded_table().get(low as usize)?);
  Some(lead | low_digits << (if high < 10 { 8 } else { 16 }))
}
