//! The string / byte arguments of one `encode` call ([`ArgSource`]), owned
//! copies of them ([`OwnedArg`]) and the carried-over ones chained before
//! the next chunk's ([`Chained`]). Calls nothing.

/// The string / byte arguments of one `encode` call.
pub trait ArgSource {
  /// Number of arguments available.
  fn count(&self) -> usize;
  /// Writes string argument `i` as UTF-8 into `dst`. `Some(n)`: all `n` bytes
  /// were written. `None`: it does not fit. `dst` may be changed either way.
  fn write_str(&mut self, i: usize, dst: &mut [u8]) -> Result<Option<usize>, String>;
  /// UTF-8 byte length of string argument `i`.
  fn str_len(&mut self, i: usize) -> Result<usize, String>;
  /// The UTF-16 code units of string argument `i` (valid until the next call
  /// on `self`), or `None` where only its UTF-8 is at hand (an owned copy).
  fn units(&mut self, i: usize) -> Result<Option<&[u16]>, String>;
  /// The Latin-1 bytes (one a character) of string argument `i`, none of
  /// whose characters is above U+00FF (the caller's check), valid until the
  /// next call on `self`; `None` where only its UTF-8 is at hand (an owned copy).
  fn latin1(&mut self, i: usize) -> Result<Option<&[u8]>, String>;
  /// The bytes of byte-array argument `i` (valid until the next call on `self`).
  fn bytes(&mut self, i: usize) -> Result<&[u8], String>;
  /// An owned copy of argument `i` (string or bytes), for carrying it over to the next chunk.
  fn to_owned(&mut self, i: usize) -> Result<OwnedArg, String>;
}

/// An argument copied out of its chunk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OwnedArg {
  Str(Vec<u8>),
  Bytes(Vec<u8>),
}

impl ArgSource for [OwnedArg] {
  fn count(&self) -> usize {
    self.len()
  }
  fn write_str(&mut self, i: usize, dst: &mut [u8]) -> Result<Option<usize>, String> {
    match self.get(i) {
      Some(OwnedArg::Str(s)) => match dst.get_mut(..s.len()) {
        Some(d) => {
          d.copy_from_slice(s);
          Ok(Some(s.len()))
        }
        None => Ok(None),
      },
      _ => Err(format!("bson-rs: encode argument {i} is not a string")),
    }
  }
  fn str_len(&mut self, i: usize) -> Result<usize, String> {
    match self.get(i) {
      Some(OwnedArg::Str(s)) => Ok(s.len()),
      _ => Err(format!("bson-rs: encode argument {i} is not a string")),
    }
  }
  fn units(&mut self, i: usize) -> Result<Option<&[u16]>, String> {
    match self.get(i) {
      Some(OwnedArg::Str(_)) => Ok(None),
      _ => Err(format!("bson-rs: encode argument {i} is not a string")),
    }
  }
  fn latin1(&mut self, i: usize) -> Result<Option<&[u8]>, String> {
    match self.get(i) {
      Some(OwnedArg::Str(_)) => Ok(None),
      _ => Err(format!("bson-rs: encode argument {i} is not a string")),
    }
  }
  fn bytes(&mut self, i: usize) -> Result<&[u8], String> {
    match self.get(i) {
      Some(OwnedArg::Bytes(b)) => Ok(b),
      _ => Err(format!("bson-rs: encode argument {i} is not a byte array")),
    }
  }
  fn to_owned(&mut self, i: usize) -> Result<OwnedArg, String> {
    self.get(i).cloned().ok_or_else(|| format!("bson-rs: encode argument {i} is missing"))
  }
}

/// The carried-over arguments followed by the current chunk's.
pub(super) struct Chained<'a, A: ArgSource + ?Sized> {
  pub(super) carry: &'a mut [OwnedArg],
  pub(super) rest: &'a mut A,
}

impl<A: ArgSource + ?Sized> ArgSource for Chained<'_, A> {
  fn count(&self) -> usize {
    self.carry.len() + self.rest.count()
  }
  fn write_str(&mut self, i: usize, dst: &mut [u8]) -> Result<Option<usize>, String> {
    let c = self.carry.len();
    if i < c { self.carry.write_str(i, dst) } else { self.rest.write_str(i - c, dst) }
  }
  fn str_len(&mut self, i: usize) -> Result<usize, String> {
    let c = self.carry.len();
    if i < c { self.carry.str_len(i) } else { self.rest.str_len(i - c) }
  }
  fn units(&mut self, i: usize) -> Result<Option<&[u16]>, String> {
    let c = self.carry.len();
    if i < c { self.carry.units(i) } else { self.rest.units(i - c) }
  }
  fn latin1(&mut self, i: usize) -> Result<Option<&[u8]>, String> {
    let c = self.carry.len();
    if i < c { self.carry.latin1(i) } else { self.rest.latin1(i - c) }
  }
  fn bytes(&mut self, i: usize) -> Result<&[u8], String> {
    let c = self.carry.len();
    if i < c { self.carry.bytes(i) } else { self.rest.bytes(i - c) }
  }
  fn to_owned(&mut self, i: usize) -> Result<OwnedArg, String> {
    let c = self.carry.len();
    if i < c { self.carry.to_owned(i) } else { self.rest.to_owned(i - c) }
  }
}
