//! Small raw Node-API helpers shared by the binding halves: status checks,
//! the panic guard, argument reading. The bottom of the binding: it calls
//! only napi, never `state`, `decode` or `encode`.

use std::panic::{catch_unwind, AssertUnwindSafe};

use napi::sys;

pub fn check(status: sys::napi_status) -> napi::Result<()> {
  if status == sys::Status::napi_ok {
    Ok(())
  } else {
    Err(napi::Error::from_reason(format!("Node-API call failed with status {status}")))
  }
}

pub fn check_msg(status: sys::napi_status, what: &str) -> Result<(), String> {
  if status == sys::Status::napi_ok {
    Ok(())
  } else {
    Err(format!("bson-rs: {what} (napi status {status})"))
  }
}

pub fn undefined(env: sys::napi_env) -> sys::napi_value {
  let mut v = std::ptr::null_mut();
  // SAFETY: napi_get_undefined only writes the out pointer.
  unsafe { sys::napi_get_undefined(env, &mut v) };
  v
}

/// Runs a callback body; an `Err` or a panic becomes a thrown JS `Error`
/// (unless a JS exception is already pending, which then propagates as is).
pub fn guard(env: sys::napi_env, body: impl FnOnce() -> Result<sys::napi_value, String>) -> sys::napi_value {
  let message = match catch_unwind(AssertUnwindSafe(body)) {
    Ok(Ok(value)) => return value,
    Ok(Err(message)) => message,
    Err(panic) => {
      let detail = panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_default();
      format!("bson-rs internal error (please report): {detail}")
    }
  };
  let mut pending = false;
  // SAFETY: plain status query.
  unsafe { sys::napi_is_exception_pending(env, &mut pending) };
  if !pending {
    let mut text = message.into_bytes();
    text.retain(|&b| b != 0);
    text.push(0);
    // SAFETY: `text` is NUL-terminated and outlives the call.
    unsafe { sys::napi_throw_error(env, std::ptr::null(), text.as_ptr().cast()) };
  }
  std::ptr::null_mut()
}

/// Up to `N` fixed arguments of a call, plus the callback data (`EnvState`).
pub struct Args<const N: usize> {
  env: sys::napi_env,
  argv: [sys::napi_value; N],
  argc: usize,
  data: *mut std::ffi::c_void,
}

impl<const N: usize> Args<N> {
  pub fn read(env: sys::napi_env, info: sys::napi_callback_info) -> Result<Self, String> {
    let mut argv = [std::ptr::null_mut(); N];
    let mut argc = N;
    let mut data = std::ptr::null_mut();
    // SAFETY: argv has room for argc values; napi writes at most that many.
    check_msg(
      unsafe { sys::napi_get_cb_info(env, info, &mut argc, argv.as_mut_ptr(), std::ptr::null_mut(), &mut data) },
      "napi_get_cb_info failed",
    )?;
    Ok(Args { env, argv, argc: argc.min(N), data })
  }

  /// The callback data the function was registered with (see `state::EnvState::of`).
  pub fn data(&self) -> *mut std::ffi::c_void {
    self.data
  }

  /// How many arguments the call passed (at most `N`).
  pub fn argc(&self) -> usize {
    self.argc
  }

  pub fn get(&self, i: usize) -> sys::napi_value {
    if i < self.argc { self.argv[i] } else { undefined(self.env) }
  }

  pub fn u32(&self, i: usize) -> Result<u32, String> {
    let mut v = 0u32;
    // SAFETY: napi checks the type and fails cleanly.
    check_msg(unsafe { sys::napi_get_value_uint32(self.env, self.get(i), &mut v) }, "expected a number")?;
    Ok(v)
  }
}
