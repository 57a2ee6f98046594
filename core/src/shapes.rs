//! Bounded shape trie: a node is a key-id sequence (a prefix of some
//! document's keys). A node whose documents were seen often enough gets a
//! shape id, for which JS compiles an object factory.

use std::collections::HashMap;

pub const NONE: u32 = u32::MAX;
/// Most trie nodes kept.
pub const MAX_NODES: usize = 65_536;
/// Most shapes (factories) kept.
pub const MAX_SHAPES: usize = 16_384;
/// Widest object that gets a factory.
pub const MAX_ARITY: usize = 256;
/// Most keys over all factories (bounds the JS source compiled for them).
pub const MAX_TOTAL_ARITY: usize = 1 << 18;
/// Documents seen with a key sequence before it gets a factory.
pub const FACTORY_AFTER: u32 = 2;

pub const ROOT: u32 = 0;
/// Entries of the recent-transitions table (a power of two).
pub const RECENT_SLOTS: usize = 4096;

pub struct Node {
  pub depth: u32,
  pub hits: u32,
  pub shape: u32,
  /// One-entry transition cache: the last key seen after this prefix, and the node it led to.
  pub last_key: u32,
  pub last_child: u32,
  /// The last key's bytes when at most 16 long (saves a lookup in the key table).
  pub last_bytes: [u8; 16],
  /// Length of `last_bytes` in use, or `u8::MAX` when the key is longer.
  pub last_len: u8,
}

impl Node {
  fn new(depth: u32) -> Self {
    Node { depth, hits: 0, shape: NONE, last_key: NONE, last_child: NONE, last_bytes: [0; 16], last_len: u8::MAX }
  }

  /// Remembers `key` (with its bytes) as the transition to `child`.
  pub fn remember(&mut self, key: u32, bytes: &[u8], child: u32) {
    self.last_key = key;
    self.last_child = child;
    if let Some(dst) = self.last_bytes.get_mut(..bytes.len()) {
      dst.copy_from_slice(bytes);
      self.last_len = bytes.len() as u8;
    } else {
      self.last_len = u8::MAX;
    }
  }
}

pub struct Shape {
  pub node: u32,
  pub known: bool,
  pub epoch: u32,
}

pub struct Shapes {
  pub nodes: Vec<Node>,
  children: HashMap<(u32, u32), u32>,
  pub shapes: Vec<Shape>,
  /// Direct-mapped cache of transitions: (node, key id, child).
  pub recent: Vec<(u32, u32, u32)>,
  total_arity: usize,
}

impl Shapes {
  pub fn new() -> Self {
    Shapes {
      nodes: vec![Node::new(0)],
      children: HashMap::new(),
      shapes: Vec::new(),
      recent: vec![(NONE, NONE, NONE); RECENT_SLOTS],
      total_arity: 0,
    }
  }

  /// The node for `node` + `key`, created if there is room.
  pub fn child(&mut self, node: u32, key: u32) -> Option<u32> {
    if let Some(&c) = self.children.get(&(node, key)) {
      return Some(c);
    }
    if self.nodes.len() >= MAX_NODES {
      return None;
    }
    let depth = self.nodes.get(node as usize)?.depth + 1;
    let id = self.nodes.len() as u32;
    self.nodes.push(Node::new(depth));
    self.children.insert((node, key), id);
    Some(id)
  }

  /// Counts one finished document at `node`; returns its shape id once it has one.
  pub fn hit(&mut self, node: u32) -> Option<u32> {
    let n = self.nodes.get_mut(node as usize)?;
    n.hits = n.hits.saturating_add(1);
    if n.shape == NONE {
      if n.hits < FACTORY_AFTER
        || n.depth as usize > MAX_ARITY
        || self.shapes.len() >= MAX_SHAPES
        || self.total_arity + n.depth as usize > MAX_TOTAL_ARITY
      {
        return None;
      }
      self.total_arity += n.depth as usize;
      n.shape = self.shapes.len() as u32;
      self.shapes.push(Shape { node, known: false, epoch: 0 });
    }
    Some(n.shape)
  }

  pub fn is_full(&self) -> bool {
    self.nodes.len() >= MAX_NODES || self.shapes.len() >= MAX_SHAPES || self.total_arity + MAX_ARITY > MAX_TOTAL_ARITY
  }

  pub fn reset_epochs(&mut self) {
    for s in &mut self.shapes {
      s.epoch = 0;
    }
  }
}

impl Default for Shapes {
  fn default() -> Self {
    Self::new()
  }
}

#[cfg(test)]
mod tests {
  use super::*;

  #[test]
  fn trie_and_factories() {
    let mut s = Shapes::new();
    let a = s.child(ROOT, 1).unwrap();
    assert_eq!(s.child(ROOT, 1), Some(a));
    assert_eq!(s.hit(a), None);
    assert_eq!(s.hit(a), Some(0));
    assert_eq!(s.hit(a), Some(0));
    let mut n = ROOT;
    for k in 0..MAX_NODES as u32 + 5 {
      match s.child(n, k) {
        Some(c) => n = c,
        None => break,
      }
    }
    assert!(s.nodes.len() <= MAX_NODES);
  }
}
