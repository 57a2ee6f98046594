//! Binding half of `serialize` / `calculateObjectSize`: see ARCHITECTURE.md "Encode tape".
use std::ffi::c_void;

use napi::sys;

use bson_rs_core::encode::{ArgSource, OwnedArg, Step};
use bson_rs_core::utf8;

use crate::napi_util::{check_msg, guard, Args};
use crate::state::EnvState;

/// Arguments of one `encode` call (after `first` and `opsLen`), read through napi.
struct NapiArgs<'a> {
  env: sys::napi_env,
  values: &'a [sys::napi_value],
  /// Scratch for `units` (EnvState::str_units).
  units: &'a mut Vec<u16>,
  /// Scratch for `latin1` (EnvState::str_latin1).
  latin1: &'a mut Vec<u8>,
}

impl NapiArgs<'_> {
  fn value(&self, i: usize) -> Result<sys::napi_value, String> {
    self.values.get(i).copied().ok_or_else(|| format!("bson-rs: encode argument {i} is missing"))
  }
}

/// Copies the characters of a string into `scratch` (grown as needed) with
/// `copy(buffer, size, &mut read)`, napi's UTF-16 or Latin-1 getter: at most
/// size - 1 of them and a NUL, or with a null buffer the length only. Returns
/// how many. One napi call when they fit the scratch as it is (a length
/// query first cost short strings ~10%, unicode_200).
fn read_chars<T: Copy + Default>(scratch: &mut Vec<T>, copy: impl Fn(*mut T, usize, &mut usize) -> sys::napi_status) -> Result<usize, String> {
  if scratch.len() < MIN_STR_CHARS {
    scratch.resize(MIN_STR_CHARS, T::default());
  }
  let mut read = 0usize;
  check_msg(copy(scratch.as_mut_ptr(), scratch.len(), &mut read), "expected a string")?;
  if read + 1 < scratch.len() {
    return Ok(read);
  }
  // (it may not have fit: ask for the length, grow, copy again)
  let mut n = 0usize;
  check_msg(copy(std::ptr::null_mut(), 0, &mut n), "expected a string")?;
  let room = n.checked_add(1).ok_or("bson-rs: string too long")?;
  if scratch.len() <= room {
    // (one more than it needs: the same string fits in one call next time)
    scratch.resize(room + 1, T::default());
  }
  check_msg(copy(scratch.as_mut_ptr(), room, &mut read), "expected a string")?;
  Ok(read.min(n))
}

/// Copies the UTF-16 code units of string `s` into `units` (read_chars).
fn read_units(env: sys::napi_env, s: sys::napi_value, units: &mut Vec<u16>) -> Result<usize, String> {
  // SAFETY: read_chars passes a buffer valid for `size` units (or null with 0); napi checks the type.
  read_chars(units, |buf, size, read| unsafe { sys::napi_get_value_string_utf16(env, s, buf, size, read) })
}

/// Copies the characters of string `s`, none above U+00FF, one byte each into `latin1` (read_chars).
fn read_latin1(env: sys::napi_env, s: sys::napi_value, latin1: &mut Vec<u8>) -> Result<usize, String> {
  // SAFETY: read_chars passes a buffer valid for `size` bytes (or null with 0); napi checks the type.
  read_chars(latin1, |buf, size, read| unsafe { sys::napi_get_value_string_latin1(env, s, buf.cast(), size, read) })
}

/// The `str_units` and `str_latin1` scratches' least size, in characters.
const MIN_STR_CHARS: usize = 1024;
/// Bytes a string scratch keeps between calls: a string's characters
/// copied into fresh memory on every call cost more than their widening
/// (1 MiB of French text on Node.js 24: 0.70-0.82x js-bson's speed with a
/// 1 MiB limit, 0.94-0.95x with this one).
const KEEP_STR_BYTES: usize = 4 << 20;

/// Drops a string scratch after a call if a huge string grew it past KEEP_STR_BYTES.
fn release_chars<T>(scratch: &mut Vec<T>) {
  if std::mem::size_of_val(scratch.as_slice()) > KEEP_STR_BYTES {
    *scratch = Vec::new();
  }
}

fn utf8_len(env: sys::napi_env, v: sys::napi_value) -> Result<usize, String> {
  let mut len = 0usize;
  // SAFETY: a NULL buffer asks napi for the length only; napi checks the type.
  check_msg(
    unsafe { sys::napi_get_value_string_utf8(env, v, std::ptr::null_mut(), 0, &mut len) },
    "encode expected a string argument",
  )?;
  Ok(len)
}

impl ArgSource for NapiArgs<'_> {
  fn count(&self) -> usize {
    self.values.len()
  }

  fn write_str(&mut self, i: usize, dst: &mut [u8]) -> Result<Option<usize>, String> {
    let v = self.value(i)?;
    if dst.len() < 2 {
      return Ok(None);
    }
    let mut len = 0usize;
    // SAFETY: `dst` is valid for dst.len() bytes; napi writes at most
    // dst.len() - 1 bytes plus a NUL terminator, and checks the type.
    check_msg(
      unsafe { sys::napi_get_value_string_utf8(self.env, v, dst.as_mut_ptr().cast(), dst.len(), &mut len) },
      "encode expected a string argument",
    )?;
    // V8 never writes a partial character, so the string may have been cut
    // short only if fewer than 4 bytes of room were left.
    if len + 5 <= dst.len() {
      return Ok(Some(len));
    }
    let exact = utf8_len(self.env, v)?;
    Ok(if exact == len { Some(len) } else { None })
  }

  fn str_len(&mut self, i: usize) -> Result<usize, String> {
    utf8_len(self.env, self.value(i)?)
  }

  fn latin1(&mut self, i: usize) -> Result<Option<&[u8]>, String> {
    let v = self.value(i)?;
    let n = read_latin1(self.env, v, self.latin1)?;
    Ok(self.latin1.get(..n))
  }

  fn units(&mut self, i: usize) -> Result<Option<&[u16]>, String> {
    let v = self.value(i)?;
    let n = read_units(self.env, v, self.units)?;
    Ok(self.units.get(..n))
  }

  fn bytes(&mut self, i: usize) -> Result<&[u8], String> {
    let v = self.value(i)?;
    let mut length = 0usize;
    let mut data: *mut c_void = std::ptr::null_mut();
    // napi_get_buffer_info takes any ArrayBufferView and reports its byte
    // length: for a typed array, its length times its element size, as
    // napi_get_typedarray_info's type query did (which cost a chain of type
    // checks per binary: ~7% of serializing 100 binaries of 64 bytes).
    // SAFETY: napi fails cleanly if `v` is not an ArrayBufferView; all out pointers are valid.
    check_msg(unsafe { sys::napi_get_buffer_info(self.env, v, &mut data, &mut length) }, "encode expected a Uint8Array argument")?;
    if data.is_null() || length == 0 {
      return Ok(&[]);
    }
    // SAFETY: napi reports `data` (already offset) valid for `length` bytes;
    // the view is an argument of the current call, so it stays alive (and is
    // not detached: no JS runs) until the call returns, and the slice does
    // not outlive the call.
    Ok(unsafe { std::slice::from_raw_parts(data.cast::<u8>(), length) })
  }

  fn to_owned(&mut self, i: usize) -> Result<OwnedArg, String> {
    let v = self.value(i)?;
    let mut t: sys::napi_valuetype = 0;
    // SAFETY: plain type query on a value of the current call.
    check_msg(unsafe { sys::napi_typeof(self.env, v, &mut t) }, "napi_typeof failed")?;
    if t == sys::ValueType::napi_string {
      let n = self.str_len(i)?;
      let mut buf = vec![0u8; n + 1];
      match self.write_str(i, &mut buf)? {
        Some(m) => {
          buf.truncate(m);
          Ok(OwnedArg::Str(buf))
        }
        None => Err("bson-rs: string changed while encoding".to_string()),
      }
    } else {
      Ok(OwnedArg::Bytes(self.bytes(i)?.to_vec()))
    }
  }
}

fn number(env: sys::napi_env, v: f64) -> sys::napi_value {
  let mut out = std::ptr::null_mut();
  // SAFETY: creates a number; only writes the out pointer.
  unsafe { sys::napi_create_double(env, v, &mut out) };
  out
}

fn string(env: sys::napi_env, s: &str) -> sys::napi_value {
  let mut out = std::ptr::null_mut();
  // SAFETY: `s` is valid UTF-8 of the given length.
  unsafe { sys::napi_create_string_utf8(env, s.as_ptr().cast(), s.len() as isize, &mut out) };
  out
}

/// `defineKey(id, key)`: key table entry; returns the key's UTF-8 byte length.
pub unsafe extern "C" fn define_key(env: sys::napi_env, info: sys::napi_callback_info) -> sys::napi_value {
  guard(env, || {
    let args = Args::<2>::read(env, info)?;
    let id = args.u32(0)? as usize;
    let key = args.get(1);
    let n = utf8_len(env, key)?;
    let mut buf = vec![0u8; n + 1];
    let mut len = 0usize;
    // SAFETY: buf has n + 1 bytes: room for the whole string and the NUL.
    check_msg(
      unsafe { sys::napi_get_value_string_utf8(env, key, buf.as_mut_ptr().cast(), buf.len(), &mut len) },
      "defineKey expected a string",
    )?;
    buf.truncate(len.min(n));
    EnvState::of(&args).encoder.define_key(id, &buf)?;
    Ok(number(env, len as f64))
  })
}

/// `utf8Length(s)`: the UTF-8 byte length of string `s`, for a long string
/// that V8 holds as two-byte (lib/calculate-size.js). V8 measures a two-byte
/// string by encoding it; reading its code units (a copy) and counting them
/// here took 0.27-0.40x the time (cjk_1mib, 40k CJK characters). A lone
/// surrogate counts as U+FFFD, as in `Buffer.byteLength`.
pub unsafe extern "C" fn utf8_length(env: sys::napi_env, info: sys::napi_callback_info) -> sys::napi_value {
  guard(env, || {
    let args = Args::<1>::read(env, info)?;
    let units = &mut EnvState::of(&args).str_units;
    let n = read_units(env, args.get(0), units)?;
    let length = utf8::utf16_utf8_len(units.get(..n).unwrap_or(&[]));
    release_chars(units);
    Ok(number(env, length as f64))
  })
}

/// Reads all arguments of the call into `state.enc_args` (reused between
/// calls): one `napi_get_cb_info` for up to 16 arguments, a second for more.
fn read_args_into_state(env: sys::napi_env, info: sys::napi_callback_info) -> Result<&'static mut EnvState, String> {
  const FIRST: usize = 16;
  let mut first = [std::ptr::null_mut(); FIRST];
  let mut argc = FIRST;
  let mut data = std::ptr::null_mut();
  // SAFETY: `first` has room for FIRST values; napi writes at most that many and reports the real count.
  check_msg(
    unsafe { sys::napi_get_cb_info(env, info, &mut argc, first.as_mut_ptr(), std::ptr::null_mut(), &mut data) },
    "napi_get_cb_info failed",
  )?;
  let state = EnvState::from_data(data);
  let values = &mut state.enc_args;
  values.clear();
  if argc <= FIRST {
    values.extend_from_slice(&first[..argc]);
  } else {
    values.resize(argc, std::ptr::null_mut());
    let mut again = argc;
    // SAFETY: `values` has room for all argc values.
    check_msg(
      unsafe { sys::napi_get_cb_info(env, info, &mut again, values.as_mut_ptr(), std::ptr::null_mut(), std::ptr::null_mut()) },
      "napi_get_cb_info failed",
    )?;
    values.truncate(again.min(argc));
  }
  Ok(state)
}

/// `encode(first, opsLen, outOffset, ...args)`: see ARCHITECTURE.md.
pub unsafe extern "C" fn encode(env: sys::napi_env, info: sys::napi_callback_info) -> sys::napi_value {
  guard(env, || {
    let state = read_args_into_state(env, info)?;
    let result = encode_with_args(env, state);
    if state.enc_args.capacity() > 65_536 {
      state.enc_args = Vec::new();
    }
    result
  })
}

fn encode_with_args(env: sys::napi_env, state: &mut EnvState) -> Result<sys::napi_value, String> {
  let EnvState { scratch, encoder, enc_args, str_units, str_latin1, .. } = state;
  let (Some(&first), Some(&ops_len), Some(&offset)) = (enc_args.first(), enc_args.get(1), enc_args.get(2)) else {
    return Err("bson-rs: encode needs (first, opsLen, outOffset, ...args)".to_string());
  };
  let mut first_v = 0u32;
  let mut ops_len_v = 0u32;
  let mut offset_v = 0u32;
  // SAFETY: napi checks the types and fails cleanly.
  check_msg(unsafe { sys::napi_get_value_uint32(env, first, &mut first_v) }, "encode: first must be a number")?;
  // SAFETY: as above.
  check_msg(unsafe { sys::napi_get_value_uint32(env, ops_len, &mut ops_len_v) }, "encode: opsLen must be a number")?;
  // SAFETY: as above.
  check_msg(unsafe { sys::napi_get_value_uint32(env, offset, &mut offset_v) }, "encode: outOffset must be a number")?;
  let [_, _, ops, nums, bytes, out, ctl] = scratch;
  let call = Call { first: first_v, ops_len: ops_len_v, offset: offset_v, end: ctl_param(ctl.bytes(), CTL_OUT_END)? };
  let mut source = NapiArgs { env, values: enc_args.get(3..).unwrap_or(&[]), units: str_units, latin1: str_latin1 };
  let result = run_tape(encoder, &call, ops.bytes(), nums.bytes(), bytes.bytes(), out.bytes(), &mut source);
  release_chars(str_units);
  release_chars(str_latin1);
  put_latin1_widened(ctl.bytes(), encoder);
  Ok(match result {
    Ok(step) => number(env, step_code(step)),
    Err(message) => {
      encoder.reset();
      string(env, &message)
    }
  })
}

/// Puts Encoder::latin1_widened in encCtl[4] for JS (lib/serialize/types.js noteLatin1).
fn put_latin1_widened(ctl: &mut [u8], encoder: &bson_rs_core::encode::Encoder) {
  if let Some(slot) = ctl.get_mut(32..40) {
    slot.copy_from_slice(&(encoder.latin1_widened() as f64).to_ne_bytes());
  }
}

/// `encodeTape()`: `encode` for a tape without string or byte args. Its
/// parameters and result are in encCtl (f64 [first, opsLen, outOffset,
/// result]) instead of napi numbers, which cost more than a small document's
/// whole write. Returns undefined (a null napi_value: no napi call) or an error string.
pub unsafe extern "C" fn encode_tape(env: sys::napi_env, info: sys::napi_callback_info) -> sys::napi_value {
  guard(env, || {
    let args = Args::<0>::read(env, info)?;
    let EnvState { scratch, encoder, str_units, str_latin1, .. } = EnvState::of(&args);
    let [_, _, ops, nums, bytes, out, ctl] = scratch;
    let ctl = ctl.bytes();
    let call = Call { first: ctl_param(ctl, 0)?, ops_len: ctl_param(ctl, 1)?, offset: ctl_param(ctl, 2)?, end: ctl_param(ctl, CTL_OUT_END)? };
    let mut no_args = NapiArgs { env, values: &[], units: str_units, latin1: str_latin1 };
    match run_tape(encoder, &call, ops.bytes(), nums.bytes(), bytes.bytes(), out.bytes(), &mut no_args) {
      Ok(step) => {
        let slot = ctl.get_mut(24..32).ok_or("bson-rs: encCtl too small")?;
        slot.copy_from_slice(&step_code(step).to_ne_bytes());
        Ok(std::ptr::null_mut())
      }
      Err(message) => {
        encoder.reset();
        Ok(string(env, &message))
      }
    }
  })
}

/// encCtl's slot of the end of the output in encOut (0: the buffer's end).
/// Set only while serializeWithBufferAndIndex writes into the caller's
/// buffer (lib/serialize/buffers.js writeInto): there the writer, which may
/// store whole words past a key as scratch, must not touch a byte past the
/// document.
const CTL_OUT_END: usize = 5;

/// encCtl's f64 slot `i` as a u32.
fn ctl_param(ctl: &[u8], i: usize) -> Result<u32, String> {
  let b = ctl.get(i * 8..i * 8 + 8).and_then(|b| <[u8; 8]>::try_from(b).ok()).ok_or("bson-rs: encCtl too small")?;
  let v = f64::from_ne_bytes(b);
  if v >= 0.0 && v <= u32::MAX as f64 && v.fract() == 0.0 { Ok(v as u32) } else { Err("bson-rs: bad encCtl parameter".to_string()) }
}

/// One native write's parameters: start a new document (`first` ≠ 0), the
/// tape length in op words, where in encOut the document goes and where
/// the output ends (0: the buffer's end).
struct Call {
  first: u32,
  ops_len: u32,
  offset: u32,
  end: u32,
}

/// The result as JS sees it: n ≥ 0 done (n bytes), -1 needs the next chunk
/// of args, -(n + 2) the output is too small (n bytes needed).
fn step_code(step: Step) -> f64 {
  match step {
    Step::Done(n) => n as f64,
    Step::NeedMore => -1.0,
    Step::TooSmall(n) => -(n as f64) - 2.0,
  }
}

fn run_tape(
  encoder: &mut bson_rs_core::encode::Encoder,
  call: &Call,
  ops: &[u8],
  nums: &[u8],
  bytes: &[u8],
  out: &mut [u8],
  args: &mut NapiArgs,
) -> Result<Step, String> {
  let n = (call.ops_len as usize).checked_mul(4).ok_or("bson-rs: opsLen too large")?;
  let ops_bytes = ops.get(..n).ok_or("bson-rs: opsLen past encOps")?;
  // SAFETY: u32 has no invalid bit patterns; align_to only reinterprets the aligned middle part.
  let (pre, words, post) = unsafe { ops_bytes.align_to::<u32>() };
  if !pre.is_empty() || !post.is_empty() {
    return Err("bson-rs: encOps is not 4-byte aligned".to_string());
  }
  if call.first != 0 {
    encoder.begin();
  }
  let end = if call.end == 0 { out.len() } else { call.end as usize };
  let out = out.get_mut(call.offset as usize..end).unwrap_or(&mut []);
  encoder.run(words, nums, bytes, out, args)
}
