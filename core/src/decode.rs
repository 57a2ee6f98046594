//! BSON reader: validates a document and writes the decode tape.

/// Caches that live as long as the environment: interned keys and shapes.
pub struct DecodeCache {}

impl DecodeCache {
  pub fn new() -> Self {
    DecodeCache {}
  }
}

impl Default for DecodeCache {
  fn default() -> Self {
    Self::new()
  }
}
