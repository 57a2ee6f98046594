//! UTF-8 classification for the decoder: ASCII, valid UTF-8, or invalid
//! (decoded lossily, like Node's `buffer.toString('utf8')`).

/// Only bytes < 0x80: the binding can create a one-byte (latin1) string.
pub const ASCII: u8 = 0;
/// Valid UTF-8 with some multi-byte sequence.
pub const UTF8: u8 = 1;
/// Invalid UTF-8: must be decoded with WHATWG replacement (maximal subparts).
pub const LOSSY: u8 = 2;

#[inline]
pub fn classify(bytes: &[u8]) -> u8 {
  if bytes.is_ascii() {
    ASCII
  } else if simdutf8::basic::from_utf8(bytes).is_ok() {
    UTF8
  } else {
    LOSSY
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
