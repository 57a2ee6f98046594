//! Binding half of `deserialize`: see ARCHITECTURE.md "Decode tape".
//!
//! `decode(input[, rawNames, utf8Names])`, with the index in decNums[0] and
//! the flags in decOps[0], runs the core reader
//! over the input bytes, writes the tape into the decOps/decNums scratch
//! buffers, hands the decoded strings to the JS sink in chunks, and returns
//! the tape length (or `-1` / an error message string).
use bson_rs_core::decode::{DecodeCache, DecodeError, Outcome, Request, Span, SPAN_KEY};
use bson_rs_core::utf8;
use napi::sys;

use crate::napi_util::{check_msg, guard, Args};
use crate::state::{DecodeState, EnvState, NameList, TextScratch, CHUNK, DEC_NUMS, DEC_OPS};

/// Reads a name list: a string in which each name is preceded by a NUL (a
/// BSON key never contains NUL), or null. Returns whether a list was given.
fn read_names(env: sys::napi_env, value: sys::napi_value, names: &mut NameList) -> Result<bool, String> {
  let NameList { list: into, text, last } = names;
  let mut ty = 0;
  // SAFETY: plain type query on a value napi handed us.
  check_msg(unsafe { sys::napi_typeof(env, value, &mut ty) }, "napi_typeof failed")?;
  if ty != sys::ValueType::napi_string {
    return Ok(false);
  }
  let mut len = 0usize;
  // SAFETY: a null buffer asks for the UTF-8 length only.
  check_msg(unsafe { sys::napi_get_value_string_utf8(env, value, std::ptr::null_mut(), 0, &mut len) }, "names must be a string")?;
  text.clear();
  text.resize(len + 1, 0);
  let mut written = 0usize;
  // SAFETY: `text` has room for len bytes plus the NUL napi writes.
  check_msg(
    unsafe { sys::napi_get_value_string_utf8(env, value, text.as_mut_ptr().cast(), len + 1, &mut written) },
    "names must be a string",
  )?;
  text.truncate(written.min(len));
  // Callers usually pass the same list every time: split it only when it changed.
  if *text != *last {
    into.clear();
    into.extend(text.split(|&b| b == 0).skip(1).map(|name| name.to_vec()));
    last.clear();
    last.extend_from_slice(text);
  }
  Ok(true)
}

/// The longest string (in UTF-8 bytes) that make_string converts itself:
/// a 1 MiB CJK string took 0.28x the time of V8's decoder (cjk_1mib).
const TEXT_SCRATCH_MAX: usize = 16 * 1024 * 1024;
/// The shortest text (in UTF-8 bytes) that make_string tries as Latin-1.
const LATIN1_MIN: usize = 64;
/// Bytes each text scratch keeps between calls (2 MiB of UTF-16, 2 MiB of Latin-1); a longer string's are freed.
const KEEP_TEXT_BYTES: usize = 2 << 20;

fn make_string(env: sys::napi_env, bytes: &[u8], kind: u8, text: &mut TextScratch) -> Result<sys::napi_value, String> {
  let mut out = std::ptr::null_mut();
  let status = match kind {
    // SAFETY: `bytes` is valid for its length; ASCII is valid latin1.
    utf8::ASCII => unsafe { sys::napi_create_string_latin1(env, bytes.as_ptr().cast(), bytes.len() as isize, &mut out) },
    // Valid UTF-8 (checked by the core), converted here in one pass (V8's
    // UTF-8 decoder behind napi_create_string_utf8 makes two), up to
    // TEXT_SCRATCH_MAX bytes: to Latin-1 bytes where no character is from
    // U+0100 (the one-byte string V8 keeps; from code units it narrows them
    // again: French text 2.1x slower), else to UTF-16 code units. Text from
    // LATIN1_MIN bytes is tried as Latin-1 first (stopping at the first
    // character from U+0100) where the CPU narrows it with SIMD; shorter
    // text goes to UTF-16 (names of a few accented letters were 5-7% slower
    // to read as Latin-1 after a test for it). Where the attempt meets such a
    // character, the characters narrowed before it are widened, not decoded
    // again (utf8::to_utf16_after_latin1).
    utf8::UTF8 if bytes.len() <= TEXT_SCRATCH_MAX => {
      let tried = (bytes.len() >= LATIN1_MIN && utf8::fast_latin1()).then(|| utf8::utf8_to_latin1(bytes, &mut text.latin1));
      if let Some(Ok(())) = tried {
        // SAFETY: `text.latin1` is valid for its length.
        unsafe { sys::napi_create_string_latin1(env, text.latin1.as_ptr().cast(), text.latin1.len() as isize, &mut out) }
      } else {
        // (`text.latin1` holds this text's characters only after an attempt:
        // those before the byte where it stopped)
        match tried.and_then(Result::err).and_then(|at| bytes.get(at..)) {
          Some(rest) => utf8::to_utf16_after_latin1(&text.latin1, rest, &mut text.utf16),
          None => utf8::to_utf16(bytes, &mut text.utf16),
        }
        // SAFETY: `text.utf16` is valid for its length.
        unsafe { sys::napi_create_string_utf16(env, text.utf16.as_ptr(), text.utf16.len() as isize, &mut out) }
      }
    }
    // SAFETY: `bytes` is valid UTF-8 (checked by the core) for its length.
    utf8::UTF8 => unsafe { sys::napi_create_string_utf8(env, bytes.as_ptr().cast(), bytes.len() as isize, &mut out) },
    _ => {
      let text = utf8::lossy(bytes);
      // SAFETY: `text` is valid UTF-8 for its length.
      unsafe { sys::napi_create_string_utf8(env, text.as_ptr().cast(), text.len() as isize, &mut out) }
    }
  };
  if status != sys::Status::napi_ok && bytes.len() > 0x1fff_ffe8 {
    // What Node's Buffer#toString (js-bson's decoder) throws.
    return Err("Cannot create a string longer than 0x1fffffe8 characters".to_string());
  }
  check_msg(status, "string creation failed")?;
  Ok(out)
}

fn span_string(env: sys::napi_env, cache: &DecodeCache, input: &[u8], span: &Span, text: &mut TextScratch) -> Result<sys::napi_value, String> {
  if span.kind == SPAN_KEY {
    let kind = cache.keys.list.get(span.start as usize).map_or(utf8::LOSSY, |k| k.kind);
    return make_string(env, cache.key_bytes(span.start), kind, text);
  }
  let bytes = input.get(span.start as usize..span.end as usize).ok_or("bson-rs: string span out of range")?;
  make_string(env, bytes, span.kind, text)
}

/// Sends all strings of the last decode (or, after an error, its regular
/// expressions) to the sink, `CHUNK` per call.
fn deliver(env: sys::napi_env, sink: sys::napi_ref, dec: &mut DecodeState, input: &[u8], after_error: bool) -> Result<(), String> {
  let DecodeState { cache, args, text, .. } = dec;
  let sent = if after_error {
    let spans = cache.error_regex_spans();
    if spans.is_empty() {
      return Ok(());
    }
    send(env, sink, cache, args, text, input, spans.iter())
  } else {
    if cache.span_count() == 0 {
      return Ok(());
    }
    send(env, sink, cache, args, text, input, cache.spans())
  };
  // (a huge string's scratch is not kept)
  if text.utf16.capacity() * 2 > KEEP_TEXT_BYTES {
    text.utf16 = Vec::new();
  }
  if text.latin1.capacity() > KEEP_TEXT_BYTES {
    text.latin1 = Vec::new();
  }
  sent
}

fn send<'a>(
  env: sys::napi_env,
  sink: sys::napi_ref,
  cache: &DecodeCache,
  args: &mut Vec<sys::napi_value>,
  text: &mut TextScratch,
  input: &[u8],
  spans: impl Iterator<Item = &'a Span>,
) -> Result<(), String> {
  if sink.is_null() {
    return Err("bson-rs: no string sink registered".to_string());
  }
  let mut func = std::ptr::null_mut();
  // SAFETY: `sink` is our strong reference to the sink function.
  check_msg(unsafe { sys::napi_get_reference_value(env, sink, &mut func) }, "sink reference lost")?;
  let mut recv = std::ptr::null_mut();
  // SAFETY: plain value creation.
  check_msg(unsafe { sys::napi_get_undefined(env, &mut recv) }, "napi_get_undefined failed")?;
  let mut spans = spans.peekable();
  while spans.peek().is_some() {
    let mut scope = std::ptr::null_mut();
    // SAFETY: scopes are opened and closed in strict nesting within this call.
    check_msg(unsafe { sys::napi_open_handle_scope(env, &mut scope) }, "napi_open_handle_scope failed")?;
    args.clear();
    let mut result = Ok(());
    for span in spans.by_ref().take(CHUNK) {
      match span_string(env, cache, input, span, text) {
        Ok(v) => args.push(v),
        Err(e) => {
          result = Err(e);
          break;
        }
      }
    }
    if result.is_ok() {
      let mut ret = std::ptr::null_mut();
      // SAFETY: `args` holds `args.len()` live values of this scope.
      let status = unsafe { sys::napi_call_function(env, recv, func, args.len(), args.as_ptr(), &mut ret) };
      result = check_msg(status, "string sink failed");
    }
    args.clear();
    // SAFETY: closes the scope opened above.
    unsafe { sys::napi_close_handle_scope(env, scope) };
    result?;
  }
  Ok(())
}

fn number(env: sys::napi_env, v: f64) -> Result<sys::napi_value, String> {
  let mut out = std::ptr::null_mut();
  // SAFETY: plain value creation.
  check_msg(unsafe { sys::napi_create_double(env, v, &mut out) }, "napi_create_double failed")?;
  Ok(out)
}

fn string(env: sys::napi_env, s: &str) -> Result<sys::napi_value, String> {
  let mut out = std::ptr::null_mut();
  // SAFETY: `s` is valid UTF-8 for its length.
  check_msg(unsafe { sys::napi_create_string_utf8(env, s.as_ptr().cast(), s.len() as isize, &mut out) }, "napi_create_string_utf8 failed")?;
  Ok(out)
}

fn words<T: Copy + bytemuck_free::Pod>(bytes: &mut [u8]) -> &mut [T] {
  // SAFETY: T is a plain integer type (any bit pattern valid); align_to_mut
  // only returns the correctly aligned middle part.
  let (head, mid, _) = unsafe { bytes.align_to_mut::<T>() };
  if head.is_empty() {
    mid
  } else {
    &mut []
  }
}

mod bytemuck_free {
  /// Integer types for which any bit pattern is a valid value.
  pub trait Pod {}
  impl Pod for u32 {}
  impl Pod for u64 {}
}

pub unsafe extern "C" fn decode(env: sys::napi_env, info: sys::napi_callback_info) -> sys::napi_value {
  guard(env, || {
    let args = Args::<3>::read(env, info)?;
    let argc = args.argc();
    let state: &mut EnvState = EnvState::of(&args);
    let mut length = 0usize;
    let mut data = std::ptr::null_mut();
    // napi_get_buffer_info skips napi_get_typedarray_info's element-type
    // queries; JS only ever passes a Buffer (toLocalBufferType's result).
    // SAFETY: napi validates that the value is an ArrayBufferView and fails cleanly otherwise.
    check_msg(unsafe { sys::napi_get_buffer_info(env, args.get(0), &mut data, &mut length) }, "decode needs a Uint8Array")?;
    let input: &[u8] = if length == 0 || data.is_null() {
      &[]
    } else {
      // SAFETY: napi reports `data` (already adjusted by the view's offset) valid
      // for `length` bytes; the view is alive for the duration of this call and
      // no JS runs while the reader uses it (the sink only stores strings).
      unsafe { std::slice::from_raw_parts(data.cast::<u8>(), length) }
    };
    let EnvState { scratch, sink, decoder, .. } = state;
    // The call's index and flags are in the scratch (decNums[0], decOps[0]):
    // cheaper than two napi number conversions. Read before the tape overwrites them.
    let (index, flags) = {
      let (left, right) = scratch.split_at_mut(DEC_NUMS);
      let index = words::<u64>(right[0].bytes()).first().map_or(0.0, |&bits| f64::from_bits(bits));
      let flags = words::<u32>(left[DEC_OPS].bytes()).first().copied().unwrap_or(0);
      (index, flags)
    };
    let index = if index.is_finite() && index > 0.0 { index.min(usize::MAX as f64) as usize } else { 0 };
    // JS passes the two name lists only when one of them is set.
    let (has_raw, _) = if argc > 1 {
      (read_names(env, args.get(1), &mut decoder.raw_names)?, read_names(env, args.get(2), &mut decoder.utf8_names)?)
    } else {
      (false, false)
    };
    let (left, right) = scratch.split_at_mut(DEC_NUMS);
    let ops = words::<u32>(left[DEC_OPS].bytes());
    let nums = words::<u64>(right[0].bytes());
    let req = Request {
      input,
      index,
      flags,
      raw_names: if has_raw { Some(&decoder.raw_names.list) } else { None },
      utf8_names: if flags & bson_rs_core::decode::flag::UTF8_MAP != 0 { &decoder.utf8_names.list } else { &[] },
    };
    let outcome = decoder.cache.decode(&req, ops, nums);
    match outcome {
      Outcome::Done(n) => {
        // A few short ASCII strings: JS reads them from the input (their spans after the tape).
        let js_spans = decoder.cache.write_js_spans(ops, n);
        if js_spans == 0 {
          deliver(env, *sink, decoder, input, false)?;
        }
        decoder.cache.commit();
        // The tape lengths are in decOps[0..2]: success is `undefined` (a null
        // napi_value returned without a pending exception: no napi call), or
        // the number of strings JS reads itself.
        if js_spans == 0 { Ok(std::ptr::null_mut()) } else { number(env, js_spans as f64) }
      }
      Outcome::NeedSpace { .. } => number(env, -1.0),
      Outcome::Error(DecodeError::Bson(m)) => {
        deliver(env, *sink, decoder, input, true)?;
        string(env, &m)
      }
      // A leading \u{1} tells JS to throw a RangeError instead of a BSONError.
      Outcome::Error(DecodeError::Range(m)) => {
        deliver(env, *sink, decoder, input, true)?;
        string(env, &format!("\u{1}{m}"))
      }
    }
  })
}
