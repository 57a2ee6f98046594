//! Replays the fuzz corpora and the saved crash inputs (`fuzz/corpus/<target>/`,
//! `fuzz/regressions/<target>/`) through the fuzz targets' checks, so that
//! `cargo test` covers them without cargo-fuzz. The checks live in
//! `fuzz/src/checks.rs` and are included here by path.

#[path = "../../fuzz/src/checks.rs"]
mod checks;

use std::path::PathBuf;

fn inputs(target: &str) -> Vec<(PathBuf, Vec<u8>)> {
  let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../fuzz");
  let mut files = Vec::new();
  for dir in ["regressions", "corpus"] {
    let Ok(entries) = std::fs::read_dir(root.join(dir).join(target)) else { continue };
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.is_file()).collect();
    paths.sort();
    for p in paths {
      let data = std::fs::read(&p).expect("read fuzz input");
      files.push((p, data));
    }
  }
  files
}

fn replay(target: &str, check: impl Fn(&[u8])) {
  let files = inputs(target);
  for (path, data) in &files {
    if std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| check(data))).is_err() {
      panic!("fuzz input {} fails", path.display());
    }
  }
  eprintln!("{target}: {} inputs replayed", files.len());
}

#[test]
fn decode_inputs() {
  replay("decode", |d| checks::decode(d, false));
}

#[test]
fn decode_tape_walk_inputs() {
  // The decode inputs too: same format, stricter checks.
  replay("decode", |d| checks::decode(d, true));
  replay("decode_tape_walk", |d| checks::decode(d, true)); // regressions only: the corpus is shared
}

#[test]
fn encode_roundtrip_inputs() {
  replay("encode_roundtrip", checks::encode_roundtrip);
}
