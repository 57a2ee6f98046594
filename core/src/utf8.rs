//! UTF-8 classification for the decoder: ASCII, valid UTF-8, or invalid
//! (decoded lossily, like Node's `buffer.toString('utf8')`).

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
  fn lossy_maximal_subparts() {
    // WHATWG: F0 9F 98 (truncated 4-byte seq) -> one U+FFFD; ED A0 80 -> three.
    assert_eq!(lossy(&[0xf0, 0x9f, 0x98, 0x41]), "\u{fffd}A");
    assert_eq!(lossy(&[0xed, 0xa0, 0x80]), "\u{fffd}\u{fffd}\u{fffd}");
    assert!(lossy_eq(&[0xff], "\u{fffd}".as_bytes()));
    assert!(!lossy_eq(b"a", b"b"));
  }
}
