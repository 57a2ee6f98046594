//! The op table: for each encode-tape op, how its payload is written (its
//! kind), its BSON type byte, and what it takes from the tapes. Calls nothing.

use super::op;

// Op kinds (how the payload is written).
pub(super) const K_BAD: u8 = 0;
pub(super) const K_END: u8 = 1;
pub(super) const K_SKIP: u8 = 2;
pub(super) const K_NUM8: u8 = 3;
pub(super) const K_INT32: u8 = 4;
pub(super) const K_DATE: u8 = 5;
pub(super) const K_FALSE: u8 = 6;
pub(super) const K_TRUE: u8 = 7;
pub(super) const K_NONE: u8 = 8;
pub(super) const K_OID: u8 = 9;
pub(super) const K_DEC: u8 = 10;
pub(super) const K_STR: u8 = 11;
pub(super) const K_REGEX: u8 = 12;
pub(super) const K_BINARY: u8 = 13;
pub(super) const K_DOC: u8 = 14;
pub(super) const K_CWS: u8 = 15;
pub(super) const K_STRB: u8 = 16;
pub(super) const K_OIDI: u8 = 17;
pub(super) const K_BINB: u8 = 18;
pub(super) const K_REGB: u8 = 19;
pub(super) const K_STRW: u8 = 20;
pub(super) const K_STRR: u8 = 21;
pub(super) const K_STRL: u8 = 22;

/// Bytes an element on the fast path may touch: type + key (≤ 5 words) +
/// size + short string (whole words) + NUL.
pub(super) const FAST_ROOM: usize = 128;
/// Byte strings and binaries up to this length take the fast path (a multiple of 8).
pub(super) const SHORT_BYTES: usize = 48;

#[derive(Clone, Copy)]
pub(super) struct OpInfo {
  /// fixed-size payload (fast path candidate)
  pub(super) fast: bool,
  pub(super) kind: u8,
  pub(super) type_byte: u8,
  /// string/bytes arguments of the value (the key's is extra)
  pub(super) strings: u8,
  /// uses one 8-byte number slot
  pub(super) slot: bool,
}

const fn info(kind: u8, type_byte: u8, strings: u8, slot: bool) -> OpInfo {
  // (STRING_ROPE_FIRST reads its argument on the general path)
  let fast = matches!(kind, K_NUM8 | K_INT32 | K_DATE | K_FALSE | K_TRUE | K_NONE | K_OID | K_DEC | K_STRB | K_OIDI | K_BINB | K_REGB)
    || (kind == K_STRR && strings == 0);
  OpInfo { fast, kind, type_byte, strings, slot }
}

pub(super) static OPS: [OpInfo; 256] = {
  let mut t = [info(K_BAD, 0, 0, false); 256];
  t[op::END as usize] = info(K_END, 0, 0, false);
  t[op::SKIP as usize] = info(K_SKIP, 0, 0, false);
  t[op::DOUBLE as usize] = info(K_NUM8, 0x01, 0, true);
  t[op::STRING as usize] = info(K_STR, 0x02, 1, false);
  t[op::STRING_BYTES as usize] = info(K_STRB, 0x02, 0, true);
  t[op::STRING_UTF16 as usize] = info(K_STRW, 0x02, 1, false);
  t[op::STRING_LATIN1 as usize] = info(K_STRL, 0x02, 1, false);
  t[op::STRING_ROPE_FIRST as usize] = info(K_STRR, 0x02, 1, true);
  t[op::STRING_ROPE as usize] = info(K_STRR, 0x02, 0, true);
  t[op::DOC as usize] = info(K_DOC, 0x03, 0, false);
  t[op::ARRAY as usize] = info(K_DOC, 0x04, 0, false);
  t[op::BINARY as usize] = info(K_BINARY, 0x05, 1, true);
  t[op::BINARY_BYTES as usize] = info(K_BINB, 0x05, 0, true);
  t[op::OID as usize] = info(K_OID, 0x07, 0, false);
  t[op::OID_INTS as usize] = info(K_OIDI, 0x07, 0, false);
  t[op::FALSE as usize] = info(K_FALSE, 0x08, 0, false);
  t[op::TRUE as usize] = info(K_TRUE, 0x08, 0, false);
  t[op::DATE as usize] = info(K_DATE, 0x09, 0, true);
  t[op::NULL as usize] = info(K_NONE, 0x0A, 0, false);
  t[op::REGEX as usize] = info(K_REGEX, 0x0B, 2, false);
  t[op::REGEX_BYTES as usize] = info(K_REGB, 0x0B, 0, true);
  t[op::CODE as usize] = info(K_STR, 0x0D, 1, false);
  t[op::CODE_BYTES as usize] = info(K_STRB, 0x0D, 0, true);
  t[op::SYMBOL as usize] = info(K_STR, 0x0E, 1, false);
  t[op::SYMBOL_BYTES as usize] = info(K_STRB, 0x0E, 0, true);
  t[op::CODE_W_SCOPE as usize] = info(K_CWS, 0x0F, 1, false);
  t[op::INT32 as usize] = info(K_INT32, 0x10, 0, true);
  t[op::TIMESTAMP as usize] = info(K_NUM8, 0x11, 0, true);
  t[op::INT64 as usize] = info(K_NUM8, 0x12, 0, true);
  t[op::DECIMAL128 as usize] = info(K_DEC, 0x13, 0, false);
  t[op::MAXKEY as usize] = info(K_NONE, 0x7F, 0, false);
  t[op::MINKEY as usize] = info(K_NONE, 0xFF, 0, false);
  t
};
