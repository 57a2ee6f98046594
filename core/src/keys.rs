//! Bounded key interner: key bytes -> key id, with per-id bookkeeping about
//! whether the JS side already holds the key's string.

use std::collections::HashMap;

use crate::utf8;

/// Most keys kept (ids are 0..MAX_KEYS).
pub const MAX_KEYS: usize = 65_536;
/// Most key bytes kept in total.
pub const MAX_KEY_BYTES: usize = 1 << 20;
/// Longer keys are never interned (always sent inline).
pub const MAX_KEY_LEN: usize = 1024;

pub struct Key {
  pub bytes: Box<[u8]>,
  /// utf8::ASCII / UTF8 / LOSSY
  pub kind: u8,
  /// The JS `keys[id]` slot holds this key's string.
  pub known: bool,
  /// Decode epoch in which a DEF_KEY was last emitted for it.
  pub epoch: u32,
}

pub struct Keys {
  pub list: Vec<Key>,
  map: HashMap<Box<[u8]>, u32>,
  total_bytes: usize,
  /// Direct-mapped cache in front of `map` (key bytes hash -> id; a miss only costs the map lookup).
  recent: Vec<u32>,
  /// Lookups, misses (new keys) and documents in the current window of `WINDOW` lookups.
  window_seen: u32,
  window_new: u32,
  window_docs: u32,
  /// The last window was mostly new keys (dynamic keys): intern only one
  /// miss in `COLD_SAMPLE`, the others are sent inline (see `intern`).
  cold: bool,
  cold_skip: u32,
}

/// Lookups per hit-rate window.
const WINDOW: u32 = 4096;
/// In cold mode, one miss in this many is still interned, so keys that do
/// recur get interned and the hit rate can recover.
const COLD_SAMPLE: u32 = 16;

const RECENT: usize = 4096;

#[inline(always)]
fn recent_slot(b: &[u8]) -> usize {
  const K: u64 = 0x9e37_79b9_7f4a_7c15;
  let n = b.len();
  let word = |i: usize| -> u64 { b.get(i..i.wrapping_add(8)).and_then(|s| <[u8; 8]>::try_from(s).ok()).map_or(0, u64::from_le_bytes) };
  let w = if n >= 8 { word(0) ^ word(n - 8).rotate_left(29) } else { b.iter().fold(0u64, |a, &c| a << 8 | c as u64) };
  let h = (w ^ n as u64).wrapping_mul(K);
  ((h ^ (h >> 31)).wrapping_mul(K) >> 52) as usize & (RECENT - 1)
}

impl Keys {
  pub fn new() -> Self {
    Keys { list: Vec::new(), map: HashMap::new(), total_bytes: 0, recent: vec![u32::MAX; RECENT], window_seen: 0, window_new: 0, window_docs: 0, cold: false, cold_skip: 0 }
  }

  #[inline]
  pub fn bytes(&self, id: u32) -> &[u8] {
    match self.list.get(id as usize) {
      Some(k) => &k.bytes,
      None => &[],
    }
  }

  /// Counts one key lookup (a hit found without `intern`, e.g. by a shape
  /// transition, or an `intern` call) for the hit-rate window.
  #[inline(always)]
  pub fn count_lookup(&mut self) {
    self.window_seen += 1;
    if self.window_seen >= WINDOW {
      self.end_window();
    }
  }

  /// Counts one decoded document for the window.
  pub fn count_document(&mut self) {
    self.window_docs = self.window_docs.saturating_add(1);
  }

  fn end_window(&mut self) {
    // Cold when more than a quarter of the window's lookups were new keys and
    // they came at more than one per two documents: ever-new keys, also when
    // each document mixes them with fixed ones (`{ $set: { ['day.' + d]: v } }`).
    // (A warming-up application, new keys at first but mostly hits, stays warm.)
    self.cold = self.window_new * 4 > self.window_seen && self.window_new * 2 > self.window_docs;
    self.window_seen = 0;
    self.window_new = 0;
    self.window_docs = 0;
  }

  /// The id of `bytes`, interning it if there is room; `None` past the bounds.
  pub fn intern(&mut self, bytes: &[u8]) -> Option<u32> {
    self.count_lookup();
    let slot = recent_slot(bytes);
    if let Some(&id) = self.recent.get(slot) {
      if self.list.get(id as usize).is_some_and(|k| *k.bytes == *bytes) {
        return Some(id);
      }
    }
    if let Some(&id) = self.map.get(bytes) {
      if let Some(r) = self.recent.get_mut(slot) {
        *r = id;
      }
      return Some(id);
    }
    self.window_new += 1;
    if self.cold {
      self.cold_skip += 1;
      if self.cold_skip < COLD_SAMPLE {
        return None;
      }
      self.cold_skip = 0;
    }
    if bytes.len() > MAX_KEY_LEN || self.list.len() >= MAX_KEYS || self.total_bytes + bytes.len() > MAX_KEY_BYTES {
      return None;
    }
    let id = self.list.len() as u32;
    let boxed: Box<[u8]> = bytes.into();
    self.total_bytes += bytes.len();
    self.map.insert(boxed.clone(), id);
    self.list.push(Key { bytes: boxed, kind: utf8::classify(bytes), known: false, epoch: 0 });
    if let Some(r) = self.recent.get_mut(slot) {
      *r = id;
    }
    Some(id)
  }

  pub fn len(&self) -> usize {
    self.list.len()
  }

  /// No room for another key of a typical length.
  pub fn is_full(&self) -> bool {
    self.list.len() >= MAX_KEYS || self.total_bytes + 64 > MAX_KEY_BYTES
  }

  pub fn is_empty(&self) -> bool {
    self.list.is_empty()
  }

  pub fn reset_epochs(&mut self) {
    for k in &mut self.list {
      k.epoch = 0;
    }
  }
}

impl Default for Keys {
  fn default() -> Self {
    Self::new()
  }
}

#[cfg(test)]
mod tests {
  use super::*;

  #[test]
  fn interns_and_bounds() {
    let mut k = Keys::new();
    let a = k.intern(b"a").unwrap();
    assert_eq!(k.intern(b"a"), Some(a));
    assert_ne!(k.intern(b"b"), Some(a));
    assert_eq!(k.intern(&vec![b'x'; MAX_KEY_LEN + 1]), None);
    for i in 0..MAX_KEYS + 10 {
      k.intern(format!("k{i}").as_bytes());
    }
    assert!(k.len() <= MAX_KEYS);
    assert!(k.total_bytes <= MAX_KEY_BYTES);
  }

  #[test]
  fn cold_when_each_document_brings_a_new_key_among_fixed_ones() {
    // `{ $set: { ['day.' + d]: v } }`: half the lookups hit, one new key per document
    let mut k = Keys::new();
    for i in 0..2 * WINDOW {
      k.count_document();
      k.intern(b"$set");
      k.intern(format!("day.{i}").as_bytes());
    }
    assert!(k.cold);
    // an application warming up: 200 keys, new at first, then hits (10 per document)
    let mut k = Keys::new();
    for d in 0..4 * WINDOW {
      k.count_document();
      for j in 0..10 {
        k.intern(format!("field{}", (d * 10 + j) % 200).as_bytes());
      }
    }
    assert!(!k.cold);
  }

  #[test]
  fn cold_when_keys_never_recur() {
    let mut k = Keys::new();
    // Ever-new keys: after the first window only one miss in COLD_SAMPLE is interned.
    for i in 0..8 * WINDOW {
      k.intern(format!("new{i}").as_bytes());
    }
    assert!(k.cold);
    assert!(k.len() < (2 * WINDOW) as usize);
    // Keys that recur are still interned (one miss in COLD_SAMPLE), and the
    // hit rate brings it back.
    for _ in 0..2 * COLD_SAMPLE {
      for i in 0..WINDOW / 8 {
        k.intern(format!("again{i}").as_bytes());
      }
    }
    assert!(!k.cold);
    for i in 0..WINDOW / 8 {
      assert!(k.intern(format!("again{i}").as_bytes()).is_some());
    }
  }
}
