#![no_main]
use libfuzzer_sys::fuzz_target;

#[path = "../src/checks.rs"]
mod checks;

fuzz_target!(|data: &[u8]| {
  checks::decode(data, false);
});
