//! UTF-8 classification for the decoder: ASCII, valid UTF-8, or invalid
//! (decoded lossily, like Node's `buffer.toString('utf8')`); and the UTF-8
//! length of UTF-16 text for calculateObjectSize.

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
  } else if simdutf8::basic::from_utf8(bytes).is_ok() {
    UTF8
  } else {
    LOSSY
  }
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
  if key.is_ascii() || simdutf8::basic::from_utf8(key).is_ok() {
    return false;
  }
  lossy(key).as_bytes() == name
}

/// Valid UTF-8 (`classify` said UTF8) as UTF-16 code units, into `out`
/// (cleared first). One pass where V8's own UTF-8 decoder makes two (it
/// measures, then decodes). Invalid input never comes here; it would give
/// wrong code units, never a panic.
pub fn to_utf16(bytes: &[u8], out: &mut Vec<u16>) {
  out.clear();
  out.reserve(bytes.len());
  let at = |i: usize| -> u32 { bytes.get(i).map_or(0, |&b| u32::from(b) & 0x3f) };
  let mut i = 0;
  while let Some(&b0) = bytes.get(i) {
    let b0 = u32::from(b0);
    let (cp, len) = if b0 < 0x80 {
      (b0, 1)
    } else if b0 < 0xe0 {
      (((b0 & 0x1f) << 6) | at(i + 1), 2)
    } else if b0 < 0xf0 {
      (((b0 & 0x0f) << 12) | (at(i + 1) << 6) | at(i + 2), 3)
    } else {
      (((b0 & 0x07) << 18) | (at(i + 1) << 12) | (at(i + 2) << 6) | at(i + 3), 4)
    };
    i += len;
    if cp < 0x1_0000 {
      out.push(cp as u16);
    } else {
      let c = cp.wrapping_sub(0x1_0000);
      out.push(0xd800 | ((c >> 10) & 0x3ff) as u16);
      out.push(0xdc00 | (c & 0x3ff) as u16);
    }
  }
}

/// UTF-8 byte length of UTF-16 text, each lone surrogate counted as U+FFFD
/// (3 bytes), which is what `Buffer.byteLength` counts. One byte per unit,
/// one more from U+0080 and one more from U+0800; a surrogate pair, counted
/// 3 + 3 so, is 4 bytes. (A loop the compiler vectorises.)
pub fn utf16_utf8_len(src: &[u16]) -> usize {
  let mut n = src.len();
  let mut surrogates = 0u16;
  for chunk in src.chunks(4096) {
    let mut extra = 0u32;
    for &c in chunk {
      extra += u32::from(c >= 0x80) + u32::from(c >= 0x800);
      surrogates |= u16::from((c & 0xf800) == 0xd800);
    }
    n += extra as usize;
  }
  if surrogates != 0 {
    let pairs = src.windows(2).filter(|w| (0xd800..0xdc00).contains(&w[0]) && (0xdc00..0xe000).contains(&w[1])).count();
    n -= 2 * pairs;
  }
  n
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
  fn lossy_maximal_subparts() {
    // WHATWG: F0 9F 98 (truncated 4-byte seq) -> one U+FFFD; ED A0 80 -> three.
    assert_eq!(lossy(&[0xf0, 0x9f, 0x98, 0x41]), "\u{fffd}A");
    assert_eq!(lossy(&[0xed, 0xa0, 0x80]), "\u{fffd}\u{fffd}\u{fffd}");
    assert!(lossy_eq(&[0xff], "\u{fffd}".as_bytes()));
    assert!(!lossy_eq(b"a", b"b"));
  }
  #[test]
  fn utf8_length_of_utf16_like_buffer_byte_length() {
    let mut cases: Vec<Vec<u16>> = vec![
      vec![],
      "abc".encode_utf16().collect(),
      "naïve café".encode_utf16().collect(),
      "日本語のテキスト".encode_utf16().collect(),
      "😀 emoji 🚀 👩‍💻".encode_utf16().collect(),
      "\u{7f}\u{80}\u{7ff}\u{800}\u{d7ff}\u{e000}\u{ffff}\u{10000}\u{10ffff}".encode_utf16().collect(),
      // lone surrogates: high at the end, high before a non-low, low alone, reversed, high high low
      vec![0x61, 0xd800],
      vec![0xd800, 0x61],
      vec![0xdc00],
      vec![0xde00, 0xd83d],
      vec![0xd83d, 0xd83d, 0xde00],
    ];
    // past one 4096-unit chunk
    cases.push("日本😀a".encode_utf16().cycle().take(10_000).collect());
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
