//! Per-environment state: scratch buffers shared with JS, the string sink and
//! the core codec caches. One instance per Node environment (thread).
//! Calls `napi_util` only (never `decode` or `encode`).

use bson_rs_core::decode::DecodeCache;
use napi::sys;

use crate::napi_util::{check_msg, Args};

pub const SCRATCH_SLOTS: usize = 7;
pub const DEC_OPS: usize = 0;
pub const DEC_NUMS: usize = 1;
// Slots 2..=6 (encOps, encNums, encBytes, encOut, encCtl) are taken apart by position in src/encode.rs.

/// A JS-owned ArrayBuffer that native code reads or writes during a call.
pub struct Scratch {
  ptr: *mut u8,
  len: usize,
  reference: sys::napi_ref,
}

impl Scratch {
  const fn empty() -> Self {
    Scratch { ptr: std::ptr::null_mut(), len: 0, reference: std::ptr::null_mut() }
  }

  pub fn set(&mut self, env: sys::napi_env, value: sys::napi_value) -> Result<(), String> {
    let mut data = std::ptr::null_mut();
    let mut len = 0usize;
    // SAFETY: napi validates `value` and fails cleanly if it is not an ArrayBuffer.
    check_msg(unsafe { sys::napi_get_arraybuffer_info(env, value, &mut data, &mut len) }, "setScratch needs an ArrayBuffer")?;
    let mut reference = std::ptr::null_mut();
    // SAFETY: a strong reference keeps the buffer (and so `data`) alive until replaced.
    check_msg(unsafe { sys::napi_create_reference(env, value, 1, &mut reference) }, "napi_create_reference failed")?;
    if !self.reference.is_null() {
      // SAFETY: the old reference was created by us in this environment and is released once.
      unsafe { sys::napi_delete_reference(env, self.reference) };
    }
    *self = Scratch { ptr: data.cast(), len, reference };
    Ok(())
  }

  /// The buffer's bytes. Only valid during a call from JS (no JS runs
  /// concurrently on this thread, and the buffer is private to `lib/native.js`).
  pub fn bytes(&mut self) -> &mut [u8] {
    if self.ptr.is_null() {
      return &mut [];
    }
    // SAFETY: ptr/len come from napi_get_arraybuffer_info of a buffer we keep
    // alive by a strong reference; it is never detached: private to bson-rs,
    // or serializeWithBufferAndIndex's finalBuffer, registered only for the
    // native calls of one write with no JS between them and replaced at once.
    unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
  }
}

/// Strings per sink call.
pub const CHUNK: usize = 8192;

/// The decoder's per-environment state: core caches plus reusable buffers
/// (used by `decode`).
pub struct DecodeState {
  pub cache: DecodeCache,
  /// Reusable argument vector of sink calls.
  pub args: Vec<sys::napi_value>,
  pub raw_names: NameList,
  pub utf8_names: NameList,
  /// Reusable buffers of a non-ASCII string's characters (decode.rs, make_string).
  pub text: TextScratch,
}

/// A non-ASCII string's characters for V8: as Latin-1 bytes where none is
/// from U+0100, else as UTF-16 code units.
#[derive(Default)]
pub struct TextScratch {
  pub latin1: Vec<u8>,
  pub utf16: Vec<u16>,
}

/// A decoded name list and the text it came from.
#[derive(Default)]
pub struct NameList {
  pub list: Vec<Vec<u8>>,
  pub text: Vec<u8>,
  pub last: Vec<u8>,
}

impl DecodeState {
  pub fn new() -> Self {
    DecodeState { cache: DecodeCache::new(), args: Vec::with_capacity(CHUNK), raw_names: NameList::default(), utf8_names: NameList::default(), text: TextScratch::default() }
  }
}

impl Default for DecodeState {
  fn default() -> Self {
    Self::new()
  }
}

pub struct EnvState {
  pub scratch: [Scratch; SCRATCH_SLOTS],
  pub sink: sys::napi_ref,
  pub decoder: DecodeState,
  pub encoder: bson_rs_core::encode::Encoder,
  /// Reusable argument vector of `encode` calls.
  pub enc_args: Vec<sys::napi_value>,
  /// Code units of a two-byte string: the one `utf8Length` measures,
  /// or an `encode` argument of op STRING_UTF16.
  pub str_units: Vec<u16>,
  /// Latin-1 bytes of a one-byte string: an `encode` argument of op STRING_LATIN1.
  pub str_latin1: Vec<u8>,
}

impl EnvState {
  pub fn new() -> Self {
    EnvState {
      scratch: [const { Scratch::empty() }; SCRATCH_SLOTS],
      sink: std::ptr::null_mut(),
      decoder: DecodeState::new(),
      encoder: bson_rs_core::encode::Encoder::new(),
      enc_args: Vec::new(),
      str_units: Vec::new(),
      str_latin1: Vec::new(),
    }
  }

  /// The environment's state of a call. Callbacks are only ever registered
  /// with it as data (see `init` in lib.rs).
  #[allow(clippy::mut_from_ref)]
  pub fn of<const N: usize>(args: &Args<N>) -> &mut EnvState {
    // SAFETY: see `from_data`; the borrow is tied to the call's `Args`.
    unsafe { &mut *args.data().cast::<EnvState>() }
  }

  /// The state behind a callback's data pointer.
  pub fn from_data(data: *mut std::ffi::c_void) -> &'static mut EnvState {
    // SAFETY: data is the EnvState registered in `init`, alive for the
    // environment's lifetime; JS is single-threaded per environment and no
    // callback re-enters another while holding this borrow.
    unsafe { &mut *data.cast::<EnvState>() }
  }

  pub fn set_sink(&mut self, env: sys::napi_env, value: sys::napi_value) -> Result<(), String> {
    let mut reference = std::ptr::null_mut();
    // SAFETY: plain reference creation on a value napi handed us.
    check_msg(unsafe { sys::napi_create_reference(env, value, 1, &mut reference) }, "setSink needs a function")?;
    if !self.sink.is_null() {
      // SAFETY: our own reference, released once.
      unsafe { sys::napi_delete_reference(env, self.sink) };
    }
    self.sink = reference;
    Ok(())
  }
}
