//! The definitions section of the tape and the caches behind it: interned
//! keys and the shape trie (`Keys`, `Shapes`), the short-string value cache,
//! and the op that builds a finished object (OBJ with a factory, or
//! OBJ_GENERIC). Calls `bytes`, `tape`, `keys`, `shapes`.

use super::bytes::{lossy_span, read4, read8};
use super::tape::Tape;
use super::{op, Frame, Span, SPAN_KEY, VCACHE_MAX_LEN, VCACHE_SLOTS};
use crate::keys::Keys;
use crate::shapes::{Shapes, NONE};

/// One slot of the direct-mapped cache of short string values: repeated
/// values (enum-like strings) are created once and reused by JS.
#[derive(Clone, Copy)]
pub(super) struct VSlot {
  bytes: [u8; VCACHE_MAX_LEN],
  len: u8,
  used: bool,
  /// JS holds this slot's string (set by `DecodeCache::commit`).
  pub(super) known: bool,
  /// The decode that last used this slot.
  pub(super) epoch: u32,
}

impl VSlot {
  pub(super) const EMPTY: VSlot = VSlot { bytes: [0; VCACHE_MAX_LEN], len: 0, used: false, known: false, epoch: 0 };
}

/// A key of an open document: its interned id (or NONE) and its bytes in the input.
#[derive(Clone, Copy)]
pub(super) struct KeyRef {
  pub(super) id: u32,
  pub(super) start: u32,
  pub(super) end: u32,
}

/// Slice equality without a `memcmp` call for short keys (overlapping word reads).
#[inline(always)]
fn short_eq(a: &[u8], b: &[u8]) -> bool {
  let n = a.len();
  if n != b.len() {
    return false;
  }
  if n >= 8 {
    if n <= 16 {
      read8(a, 0) == read8(b, 0) && read8(a, n - 8) == read8(b, n - 8)
    } else {
      a == b
    }
  } else if n >= 4 {
    read4(a, 0) == read4(b, 0) && read4(a, n - 4) == read4(b, n - 4)
  } else {
    a == b
  }
}

/// Slot of (node, key) in the recent-transitions table (a cache: collisions only cost a miss).
#[inline(always)]
fn transition_slot(node: u32, kb: &[u8]) -> usize {
  const K: u64 = 0x9e37_79b9_7f4a_7c15;
  let n = kb.len();
  let w = if n >= 8 { read8(kb, 0) ^ read8(kb, n - 8).rotate_left(29) } else if n >= 4 { read4(kb, 0) | read4(kb, n - 4) << 32 } else {
    kb.iter().fold(0u64, |a, &c| a << 8 | c as u64)
  };
  let h = (w ^ (node as u64) << 40 ^ n as u64).wrapping_mul(K);
  ((h ^ (h >> 31)).wrapping_mul(K) >> 52) as usize & (crate::shapes::RECENT_SLOTS - 1)
}

/// Slot of a short string value in the value cache.
#[inline(always)]
fn short_hash(b: &[u8]) -> usize {
  const K: u64 = 0x9e37_79b9_7f4a_7c15;
  #[inline(always)]
  fn mix(h: u64, w: u64) -> u64 {
    let h = (h ^ w).wrapping_mul(K);
    h ^ (h >> 29)
  }
  let n = b.len();
  let mut h = (n as u64).wrapping_mul(K);
  if n >= 8 {
    let mut i = 0;
    while i + 8 <= n {
      h = mix(h, read8(b, i));
      i += 8;
    }
    if i < n {
      h = mix(h, read8(b, n - 8));
    }
  } else if n >= 4 {
    h = mix(h, read4(b, 0) | read4(b, n - 4) << 32);
  } else if n > 0 {
    let at = |i: usize| b.get(i).copied().unwrap_or(0) as u64;
    let w = at(0) | at(n / 2) << 8 | at(n - 1) << 16;
    h = mix(h, w);
  }
  // Top bits of a final multiply depend on every input bit.
  ((h ^ (h >> 32)).wrapping_mul(K) >> 52) as usize & (VCACHE_SLOTS - 1)
}

/// The key/shape caches plus the definitions being written for this decode.
pub(super) struct Defs<'c> {
  pub(super) keys: &'c mut Keys,
  pub(super) shapes: &'c mut Shapes,
  pub(super) epoch: u32,
  pub(super) def_spans: &'c mut Vec<Span>,
  pub(super) defs: &'c mut Vec<u32>,
  pub(super) pending_keys: &'c mut Vec<u32>,
  pub(super) pending_shapes: &'c mut Vec<u32>,
  pub(super) vcache: &'c mut Vec<VSlot>,
  pub(super) pending_strs: &'c mut Vec<u32>,
  pub(super) promotable: &'c mut usize,
}

impl Defs<'_> {
  /// The value-cache slot holding `bytes` (defined for JS in this decode if
  /// needed), or `None` when the slot is taken by another string of this decode.
  #[inline(always)]
  pub(super) fn cached_string(&mut self, bytes: &[u8], span: Span) -> Option<u32> {
    let h = short_hash(bytes);
    let slot = self.vcache.get_mut(h)?;
    let hit = slot.used && short_eq(slot.bytes.get(..slot.len as usize).unwrap_or(&[]), bytes);
    if !hit {
      if slot.epoch == self.epoch {
        return None;
      }
      slot.bytes.get_mut(..bytes.len())?.copy_from_slice(bytes);
      slot.len = bytes.len() as u8;
      slot.used = true;
      slot.known = false;
    }
    // `epoch` marks a slot used by this decode: it must not be replaced again.
    if !slot.known && slot.epoch != self.epoch {
      self.defs.push(op::DEF_STR | (h as u32) << 8);
      self.def_spans.push(span);
      self.pending_strs.push(h as u32);
    }
    slot.epoch = self.epoch;
    Some(h as u32)
  }

  /// Interns `kb` and moves `node` along the trie; returns the key id or NONE.
  #[inline(always)]
  pub(super) fn step(&mut self, node: &mut u32, kb: &[u8]) -> u32 {
    let cur = *node;
    if cur != NONE {
      if let Some(nd) = self.shapes.nodes.get(cur as usize) {
        let (lk, lc) = (nd.last_key, nd.last_child);
        if lk != NONE {
          let hit = match nd.last_bytes.get(..nd.last_len as usize) {
            Some(inline) => short_eq(inline, kb),
            None => short_eq(self.keys.bytes(lk), kb),
          };
          if hit {
            self.keys.count_lookup();
            *node = lc;
            return lk;
          }
        }
      }
      // Second chance: a direct-mapped table of recent transitions (nodes
      // such as the empty prefix see many different next keys).
      let slot = transition_slot(cur, kb);
      if let Some(&(tn, tk, tc)) = self.shapes.recent.get(slot) {
        if tn == cur && tk != NONE && short_eq(self.keys.bytes(tk), kb) {
          if let Some(nd) = self.shapes.nodes.get_mut(cur as usize) {
            nd.remember(tk, kb, tc);
          }
          self.keys.count_lookup();
          *node = tc;
          return tk;
        }
      }
      let Some(id) = self.keys.intern(kb) else {
        *node = NONE;
        return NONE;
      };
      match self.shapes.child(cur, id) {
        Some(c) => {
          if let Some(nd) = self.shapes.nodes.get_mut(cur as usize) {
            nd.remember(id, kb, c);
          }
          if let Some(e) = self.shapes.recent.get_mut(slot) {
            *e = (cur, id, c);
          }
          *node = c;
        }
        None => *node = NONE,
      }
      id
    } else {
      self.keys.intern(kb).unwrap_or(NONE)
    }
  }

  fn define_key(&mut self, id: u32) {
    if let Some(k) = self.keys.list.get_mut(id as usize) {
      if !k.known && k.epoch != self.epoch {
        k.epoch = self.epoch;
        self.defs.push(op::DEF_KEY | id << 8);
        self.def_spans.push(Span { start: id, end: 0, kind: SPAN_KEY });
        self.pending_keys.push(id);
      }
    }
  }

  /// Emits the op that builds a finished document from its values on the stack.
  pub(super) fn object(&mut self, t: &mut Tape, key_stack: &[KeyRef], body_spans: &mut Vec<Span>, buf: &[u8], f: &Frame, dbref: bool) {
    let ks = key_stack.get(f.key_start as usize..).unwrap_or(&[]);
    if f.node != NONE {
      if let Some(sid) = self.shapes.hit(f.node) {
        let needs_def = match self.shapes.shapes.get(sid as usize) {
          Some(s) => !s.known && s.epoch != self.epoch,
          None => false,
        };
        if needs_def {
          for k in ks {
            self.define_key(k.id);
          }
          self.defs.push(op::DEF_SHAPE | sid << 8);
          self.defs.push(ks.len() as u32);
          self.defs.extend(ks.iter().map(|k| k.id));
          if let Some(s) = self.shapes.shapes.get_mut(sid as usize) {
            s.epoch = self.epoch;
          }
          self.pending_shapes.push(sid);
        }
        t.op(if dbref { op::OBJ_DBREF } else { op::OBJ } | sid << 8);
        return;
      }
    }
    if f.node != NONE {
      *self.promotable += 1;
    }
    t.op(if dbref { op::OBJ_GENERIC_DBREF } else { op::OBJ_GENERIC });
    t.op(ks.len() as u32);
    for k in ks {
      if k.id != NONE {
        self.define_key(k.id);
        t.op(k.id + 1);
      } else {
        t.op(0);
        body_spans.push(lossy_span(buf, k.start as i64, k.end as i64));
      }
    }
  }
}
