//! Binding half of `deserialize`: see ARCHITECTURE.md "Decode tape".
use napi::sys;

use crate::napi_util::guard;

pub unsafe extern "C" fn decode(env: sys::napi_env, _info: sys::napi_callback_info) -> sys::napi_value {
  guard(env, || Err("bson-rs: decode not implemented yet".to_string()))
}
