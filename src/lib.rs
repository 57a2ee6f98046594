//! Node-API binding of bson-rs: a thin layer over `bson-rs-core`.
//!
//! Every exported function is a raw napi callback whose callback data is the
//! environment's `EnvState`, so nothing is shared between the main thread and
//! workers. Bodies run under `guard`, so a panic becomes a JS error instead of
//! aborting the process.
//!
//! Module dependencies form a DAG: a module may use only the modules to its
//! right (and the core crate), never one to its left or beside it.
//!
//! ```text
//! lib.rs → { decode.rs, encode.rs } → state.rs → napi_util.rs
//! ```
//!
//! (lib.rs also uses `state` and `napi_util` directly.) `decode` and `encode`
//! never use each other; `state` holds their per-environment state but calls
//! neither; `napi_util` knows nothing of `EnvState`.

mod decode;
mod encode;
mod napi_util;
mod state;

use napi::{sys, JsValue};
use napi_derive::napi;

use crate::napi_util::{guard, Args};
use crate::state::{EnvState, SCRATCH_SLOTS};

type Callback = unsafe extern "C" fn(sys::napi_env, sys::napi_callback_info) -> sys::napi_value;

#[napi(module_exports)]
pub fn init(exports: napi::bindgen_prelude::Object, env: napi::Env) -> napi::Result<()> {
  let raw_env = env.raw();
  let state = Box::into_raw(Box::new(EnvState::new()));
  // SAFETY: `state` stays valid until the environment's cleanup hook frees it;
  // every function below only runs while the environment is alive.
  unsafe {
    napi_util::check(sys::napi_add_env_cleanup_hook(raw_env, Some(free_state), state.cast()))?;
    let functions: [(&str, Callback); 7] = [
      ("setScratch", set_scratch),
      ("setSink", set_sink),
      ("decode", decode::decode),
      ("defineKey", encode::define_key),
      ("encode", encode::encode),
      ("encodeTape", encode::encode_tape),
      ("utf8Length", encode::utf8_length),
    ];
    for (name, cb) in functions {
      let mut f = std::ptr::null_mut();
      napi_util::check(sys::napi_create_function(
        raw_env,
        name.as_ptr().cast(),
        name.len() as isize,
        Some(cb),
        state.cast(),
        &mut f,
      ))?;
      let mut key = std::ptr::null_mut();
      napi_util::check(sys::napi_create_string_utf8(raw_env, name.as_ptr().cast(), name.len() as isize, &mut key))?;
      napi_util::check(sys::napi_set_property(raw_env, exports.raw(), key, f))?;
    }
    // `utf16Simd`: whether two-byte strings are best written from their code
    // units here (lib/serialize/types.js, op STRING_UTF16).
    let mut simd = std::ptr::null_mut();
    napi_util::check(sys::napi_get_boolean(raw_env, bson_rs_core::utf8::simd(), &mut simd))?;
    napi_util::check(sys::napi_set_named_property(raw_env, exports.raw(), c"utf16Simd".as_ptr(), simd))?;
  }
  Ok(())
}

unsafe extern "C" fn free_state(data: *mut std::ffi::c_void) {
  // SAFETY: `data` is the Box leaked in `init`, freed exactly once here.
  drop(unsafe { Box::from_raw(data.cast::<EnvState>()) });
}

/// `setScratch(slot, arrayBuffer)`: keeps a strong reference and the raw pointer.
unsafe extern "C" fn set_scratch(env: sys::napi_env, info: sys::napi_callback_info) -> sys::napi_value {
  guard(env, || {
    let args = Args::<2>::read(env, info)?;
    let state = EnvState::of(&args);
    let slot = args.u32(0)? as usize;
    if slot >= SCRATCH_SLOTS {
      return Err(format!("bson-rs: scratch slot {slot} out of range"));
    }
    state.scratch[slot].set(env, args.get(1))?;
    Ok(napi_util::undefined(env))
  })
}

/// `setSink(fn)`: the function that receives decoded strings.
unsafe extern "C" fn set_sink(env: sys::napi_env, info: sys::napi_callback_info) -> sys::napi_value {
  guard(env, || {
    let args = Args::<1>::read(env, info)?;
    let state = EnvState::of(&args);
    state.set_sink(env, args.get(0))?;
    // A new sink is a new JS decoder (e.g. a reloaded module): it holds none of our keys, shapes or strings.
    state.decoder.cache.forget_js();
    Ok(napi_util::undefined(env))
  })
}
