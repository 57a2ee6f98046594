//! The tape writer: ops words and number slots (ARCHITECTURE.md, "Decode tape").
//!
//! Writes past the end of the scratch buffers are dropped but still counted,
//! so a decode that runs out of room reports the size it needs. Calls nothing.

use super::op;

/// The largest arg of an op word (24 bits): the most values one run op counts.
pub(super) const ARG_MAX: u32 = 0xff_ffff;

pub(super) struct Tape<'o> {
  pub(super) ops: &'o mut [u32],
  /// Words written (or needed) in `ops`.
  pub(super) w: usize,
  pub(super) nums: &'o mut [u64],
  /// Slots written (or needed) in `nums`.
  pub(super) n: usize,
  /// Word index of the last NUM op, whose arg counts consecutive numbers.
  run_at: usize,
  run_len: u32,
  /// How many numbers at the end of the run came from int32 elements.
  run_ints: u32,
  /// The run of OID (or DATE) ops just written: its op, the word index of its first op, its length.
  same_op: u32,
  same_at: usize,
  same_len: u32,
}

impl<'o> Tape<'o> {
  /// An empty tape whose body starts at word `w` (after the header words).
  pub(super) fn new(ops: &'o mut [u32], w: usize, nums: &'o mut [u64]) -> Self {
    Tape { ops, w, nums, n: 0, run_at: usize::MAX, run_len: 0, run_ints: 0, same_op: 0, same_at: usize::MAX, same_len: 0 }
  }

  /// Closes an array of `n` values. When its values are the tail of the NUM
  /// run just written, the run is cut and JS builds the array straight from
  /// the numbers (ARRAY_NUMS), without going through its value stack; when
  /// they are the last `n` OID (DATE) ops, those become one ARRAY_OIDS
  /// (ARRAY_DATES) word (their slots stay where they are).
  #[inline(always)]
  pub(super) fn array(&mut self, n: u32) {
    if n > 0 && n <= ARG_MAX && self.same_at.wrapping_add(self.same_len as usize) == self.w && self.same_len >= n {
      self.w -= n as usize;
      self.same_at = usize::MAX;
      self.same_len = 0;
      self.op(if self.same_op == op::OID { op::ARRAY_OIDS } else { op::ARRAY_DATES } | n << 8);
    } else if n > 0 && self.run_at.wrapping_add(1) == self.w && self.run_len >= n {
      let rest = self.run_len - n;
      if rest == 0 {
        self.w -= 1;
      } else if let Some(slot) = self.ops.get_mut(self.run_at) {
        *slot = op::NUM | rest << 8;
      }
      let ints = self.run_ints >= n;
      self.run_at = usize::MAX;
      self.run_len = 0;
      self.run_ints = 0;
      self.op(if ints { op::ARRAY_INTS } else { op::ARRAY_NUMS } | n << 8);
    } else {
      self.op(op::ARRAY);
      self.op(n);
    }
  }

  /// A plain number value: extends the NUM run just before, if any.
  #[inline(always)]
  pub(super) fn number(&mut self, bits: u64, int32: bool) {
    self.join_numbers(1, int32);
    self.num(bits);
  }

  /// Plain number values of one kind (all int32, or none), each from `next`
  /// until it returns None or a run is full: as `number` for each, with the
  /// slot counter in a local and the NUM run's op word written once. Returns
  /// how many it wrote.
  #[inline(always)]
  pub(super) fn numbers(&mut self, int32: bool, mut next: impl FnMut() -> Option<u64>) -> u32 {
    let (mut n, mut count) = (self.n, 0u32);
    while count < ARG_MAX {
      let Some(bits) = next() else { break };
      if let Some(slot) = self.nums.get_mut(n) {
        *slot = bits;
      }
      n += 1;
      count += 1;
    }
    self.n = n;
    if count > 0 {
      self.join_numbers(count, int32);
    }
    count
  }

  /// Counts `count` (1..=ARG_MAX) numbers, int32 or not, in the NUM run just
  /// before, or starts one.
  #[inline(always)]
  fn join_numbers(&mut self, count: u32, int32: bool) {
    if self.run_at.wrapping_add(1) == self.w && self.run_len + count <= ARG_MAX {
      self.run_len += count;
      if let Some(slot) = self.ops.get_mut(self.run_at) {
        *slot = op::NUM | self.run_len << 8;
      }
    } else {
      self.run_at = self.w;
      self.run_len = count;
      self.run_ints = 0;
      self.op(op::NUM | count << 8);
    }
    self.run_ints = if int32 { self.run_ints + count } else { 0 };
  }

  /// An ObjectId (its four 24-bit ints, two to a slot): one OID op, counted
  /// in the run of OID ops just before, if any.
  #[inline(always)]
  pub(super) fn object_id(&mut self, slots: [u64; 2]) {
    self.same(op::OID);
    self.num(slots[0]);
    self.num(slots[1]);
  }

  /// A date (its milliseconds as a double): one DATE op, counted in the run
  /// of DATE ops just before, if any.
  #[inline(always)]
  pub(super) fn date(&mut self, slots: [u64; 1]) {
    self.same(op::DATE);
    self.num(slots[0]);
  }

  /// Values of one run op (OID, DATE), each from `next` until it returns
  /// None: as `object_id` / `date` for each, with the tape's counters in
  /// locals (through `self` they were stored back at every value). Returns
  /// how many it wrote.
  #[inline(always)]
  pub(super) fn same_run<const S: usize>(&mut self, word: u32, mut next: impl FnMut() -> Option<[u64; S]>) -> u32 {
    let (mut w, mut n, mut count) = (self.w, self.n, 0u32);
    while let Some(slots) = next() {
      if let Some(slot) = self.ops.get_mut(w) {
        *slot = word;
      }
      w += 1;
      for bits in slots {
        if let Some(slot) = self.nums.get_mut(n) {
          *slot = bits;
        }
        n += 1;
      }
      count += 1;
    }
    if count > 0 {
      self.join_same(word, count);
    }
    self.w = w;
    self.n = n;
    count
  }

  /// Writes `word`, an op that may make a run (OID, DATE) of its kind.
  #[inline(always)]
  fn same(&mut self, word: u32) {
    self.join_same(word, 1);
    self.op(word);
  }

  /// Counts `count` ops of `word` about to be written at `self.w` in the run
  /// of such ops just before, or starts a run with them.
  #[inline(always)]
  fn join_same(&mut self, word: u32, count: u32) {
    if self.same_op != word || self.same_at.wrapping_add(self.same_len as usize) != self.w {
      self.same_op = word;
      self.same_at = self.w;
      self.same_len = 0;
    }
    self.same_len += count;
  }

  #[inline(always)]
  pub(super) fn op(&mut self, word: u32) {
    if let Some(slot) = self.ops.get_mut(self.w) {
      *slot = word;
    }
    self.w += 1;
  }

  #[inline(always)]
  pub(super) fn num(&mut self, bits: u64) {
    if let Some(slot) = self.nums.get_mut(self.n) {
      *slot = bits;
    }
    self.n += 1;
  }
}
