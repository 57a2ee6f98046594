//! Binding half of `serialize` / `calculateObjectSize`: see ARCHITECTURE.md "Encode tape".
use napi::sys;

use crate::napi_util::guard;

pub unsafe extern "C" fn define_key(env: sys::napi_env, _info: sys::napi_callback_info) -> sys::napi_value {
  guard(env, || Err("bson-rs: defineKey not implemented yet".to_string()))
}

pub unsafe extern "C" fn encode(env: sys::napi_env, _info: sys::napi_callback_info) -> sys::napi_value {
  guard(env, || Err("bson-rs: encode not implemented yet".to_string()))
}

pub unsafe extern "C" fn utf8_length(env: sys::napi_env, _info: sys::napi_callback_info) -> sys::napi_value {
  guard(env, || Err("bson-rs: utf8Length not implemented yet".to_string()))
}
