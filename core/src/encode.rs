//! BSON writer: turns the encode tape into BSON bytes.

/// Encoder state that lives as long as the environment: the key table and a
/// resumable cursor for documents whose strings arrive in several chunks.
pub struct Encoder {}

impl Encoder {
  pub fn new() -> Self {
    Encoder {}
  }
}

impl Default for Encoder {
  fn default() -> Self {
    Self::new()
  }
}
