//! Unit tests of the encode-tape writer.

use super::*;

fn w(code: u32, key_ref: u32) -> u32 {
  code | key_ref << 8
}

fn s(x: &str) -> OwnedArg {
  OwnedArg::Str(x.as_bytes().to_vec())
}

/// Runs with a small output (grown on TooSmall, so the end of the buffer
/// is exercised) and with a roomy one (fast paths); both must agree.
fn run_all(enc: &mut Encoder, ops: &[u32], nums: &[u8], bytes: &[u8], args: &[OwnedArg], chunk: usize) -> Result<Vec<u8>, String> {
  let small = run_sized(enc, ops, nums, bytes, args, chunk, 16);
  let roomy = run_sized(enc, ops, nums, bytes, args, chunk, 4096);
  assert_eq!(small, roomy);
  small
}

fn run_sized(enc: &mut Encoder, ops: &[u32], nums: &[u8], bytes: &[u8], args: &[OwnedArg], chunk: usize, mut size: usize) -> Result<Vec<u8>, String> {
  loop {
    let mut out = vec![0xAAu8; size];
    enc.begin();
    let mut chunks: Vec<Vec<OwnedArg>> = args.chunks(chunk.max(1)).map(|c| c.to_vec()).collect();
    if chunks.is_empty() {
      chunks.push(Vec::new());
    }
    let mut result = None;
    let nchunks = chunks.len();
    for (i, c) in chunks.iter_mut().enumerate() {
      match enc.run(ops, nums, bytes, &mut out, c.as_mut_slice())? {
        Step::NeedMore => {
          if i + 1 == nchunks {
            return Err("needs more args than given".into());
          }
        }
        other => {
          result = Some(other);
          break;
        }
      }
    }
    match result {
      Some(Step::Done(n)) => {
        out.truncate(n);
        return Ok(out);
      }
      Some(Step::TooSmall(n)) => {
        assert!(n > size);
        if n > 1 << 20 {
          return Err("too large for a test".into());
        }
        size = n;
      }
      _ => return Err("unfinished".into()),
    }
  }
}

fn f64s(v: &[f64]) -> Vec<u8> {
  v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

#[test]
fn empty_document() {
  let mut e = Encoder::new();
  assert_eq!(run_all(&mut e, &[0], &[], &[], &[], 8).unwrap(), vec![5, 0, 0, 0, 0]);
}

#[test]
fn strings_keys_and_numbers() {
  let mut e = Encoder::new();
  e.define_key(0, b"a").unwrap();
  // {a: "xy", <inline "bb">: 1.5, a: int32 7}
  let ops = [w(op::STRING, 1), w(op::DOUBLE, 0), w(op::INT32, 1), op::END];
  let mut nums = f64s(&[1.5]);
  nums.extend_from_slice(&7i32.to_le_bytes());
  nums.extend_from_slice(&[0; 4]);
  let args = [s("xy"), s("bb")];
  let expect: Vec<u8> = [
    &[0x22, 0, 0, 0][..],
    &[2, b'a', 0, 3, 0, 0, 0, b'x', b'y', 0],
    &[1, b'b', b'b', 0],
    &1.5f64.to_le_bytes(),
    &[0x10, b'a', 0, 7, 0, 0, 0],
    &[0],
  ]
  .concat();
  for chunk in 1..4 {
    assert_eq!(run_all(&mut e, &ops, &nums, &[], &args, chunk).unwrap(), expect, "chunk {chunk}");
  }
}

#[test]
fn keys_on_the_bytes_tape() {
  let mut e = Encoder::new();
  let kb = |n: u32| (KEY_BYTES as u32 | n) << 8;
  // {day.7: int32 1, "": "ab" (string bytes after the key's), u1: 2.5}
  let ops = [op::INT32 | kb(5), op::STRING_BYTES | kb(0), op::DOUBLE | kb(2), op::END];
  let mut nums = Vec::new();
  nums.extend_from_slice(&1i32.to_le_bytes());
  nums.extend_from_slice(&[0; 4]);
  nums.extend_from_slice(&2i32.to_le_bytes());
  nums.extend_from_slice(&[0; 4]);
  nums.extend(f64s(&[2.5]));
  let bytes = b"day.7abu1";
  let expect: Vec<u8> = [
    &[37, 0, 0, 0][..],
    &[0x10, b'd', b'a', b'y', b'.', b'7', 0, 1, 0, 0, 0],
    &[2, 0, 3, 0, 0, 0, b'a', b'b', 0],
    &[1, b'u', b'1', 0],
    &2.5f64.to_le_bytes(),
    &[0],
  ]
  .concat();
  assert_eq!(run_all(&mut e, &ops, &nums, bytes, &[], 8).unwrap(), expect);
  // a NUL in the key, or a key past the end of the bytes tape: an error, not a bad document
  assert!(run_all(&mut e, &[op::NULL | kb(2), op::END], &[], b"a\0", &[], 8).is_err());
  let mut long = [b'k'; 64];
  for at in [0, 31, 63] {
    long[at] = 0;
    assert!(run_all(&mut e, &[op::NULL | kb(64), op::END], &[], &long, &[], 8).is_err(), "NUL at {at}");
    long[at] = b'k';
  }
  assert!(run_all(&mut e, &[op::NULL | kb(64), op::END], &[], &long, &[], 8).is_ok());
  assert!(run_all(&mut e, &[op::NULL | kb(9), op::END], &[], b"abc", &[], 8).is_err());
  // longer than the fast path takes (STAGED_KEY_MAX), before a fast value: the same bytes
  let key = [b'q'; 200];
  let mut tape = key.to_vec();
  tape.extend(b"0123456789ab");
  let doc = run_all(&mut e, &[op::OID | kb(200), op::INT32 | kb(65), op::END], &(7i32.to_le_bytes().repeat(2)), &[tape.clone(), vec![b'r'; 65]].concat(), &[], 8).unwrap();
  assert_eq!(doc.len(), 4 + (1 + 200 + 1 + 12) + (1 + 65 + 1 + 4) + 1);
  assert_eq!(&doc[5..205], &key[..]);
  assert_eq!(&doc[206..218], b"0123456789ab");
}

#[test]
fn staged_keys_of_every_length_read_as_words() {
  // The fast path reads staged keys in whole 8-byte words: the bytes past a
  // key (zeros here, as a fresh tape has) are not a NUL, a NUL inside it is,
  // and a key whose last word runs past the tape is written all the same.
  let mut e = Encoder::new();
  let kb = |n: usize| ((KEY_BYTES | n) as u32) << 8;
  for n in 1..=64usize {
    let key: Vec<u8> = (0..n).map(|j| b'a' + (j % 26) as u8).collect();
    let expect: Vec<u8> = [&((4 + 1 + n + 1 + 4 + 1) as i32).to_le_bytes()[..], &[0x10], &key, &[0], &9i32.to_le_bytes(), &[0]].concat();
    let nums = [9i32.to_le_bytes(), [0; 4]].concat();
    for slack in [0usize, 3, 64] {
      let tape = [key.clone(), vec![0; slack]].concat();
      assert_eq!(run_all(&mut e, &[op::INT32 | kb(n), op::END], &nums, &tape, &[], 8).unwrap(), expect, "n {n} slack {slack}");
      for at in 0..n {
        let mut bad_key = tape.clone();
        bad_key[at] = 0;
        assert!(run_all(&mut e, &[op::INT32 | kb(n), op::END], &nums, &bad_key, &[], 8).is_err(), "n {n} NUL at {at}");
      }
    }
  }
}

#[test]
fn rope_pieces_are_strings_cut_by_length() {
  // {a: piece 0, <inline "k">: piece 1, c: [piece 2, piece 3, piece 4]}: the
  // rope is the first argument (the first piece reserves it), the inline
  // key's the second; chunked, the key arrives in a later call than the rope.
  let mut e = Encoder::new();
  e.define_key(0, b"a").unwrap();
  e.define_key(1, b"c").unwrap();
  let pieces = ["abcdefghijklm", "\u{e9}t\u{e9}", "\u{65e5}\u{672c}", "", "x\u{1F600}y"];
  let rope: String = pieces.concat();
  let units = |p: &str| p.encode_utf16().count() as i32;
  let ops = [w(op::STRING_ROPE_FIRST, 1), op::STRING_ROPE, w(op::ARRAY, 2), op::STRING_ROPE, op::STRING_ROPE, op::STRING_ROPE, op::END, op::END];
  let nums: Vec<u8> = pieces.iter().flat_map(|p| [units(p).to_le_bytes(), [0; 4]].concat()).collect();
  let string = |out: &mut Vec<u8>, key: &[u8], p: &str| {
    out.push(2);
    out.extend_from_slice(key);
    out.push(0);
    out.extend_from_slice(&((p.len() + 1) as i32).to_le_bytes());
    out.extend_from_slice(p.as_bytes());
    out.push(0);
  };
  let sized = |mut d: Vec<u8>| {
    let n = d.len() as i32;
    d[..4].copy_from_slice(&n.to_le_bytes());
    d
  };
  let mut array = vec![0u8; 4];
  for (i, p) in pieces[2..].iter().enumerate() {
    string(&mut array, i.to_string().as_bytes(), p);
  }
  array.push(0);
  let mut expect = vec![0u8; 4];
  string(&mut expect, b"a", pieces[0]);
  string(&mut expect, b"k", pieces[1]);
  expect.extend_from_slice(b"\x04c\0");
  expect.extend(sized(array));
  expect.push(0);
  let expect = sized(expect);
  for chunk in 1..3 {
    assert_eq!(run_all(&mut e, &ops, &nums, &[], &[s(&rope), s("k")], chunk).unwrap(), expect, "chunk {chunk}");
  }
  // the rope of an owned copy (UTF-8, read back as UTF-16): a character of
  // two code units is two units long
  let ops = [op::STRING_ROPE_FIRST | (1 << 8), op::STRING_ROPE | (1 << 8), op::END];
  let nums = [[14i32.to_le_bytes(), [0; 4]].concat(), [3i32.to_le_bytes(), [0; 4]].concat()].concat();
  let doc = run_all(&mut e, &ops, &nums, &[], &[s(&("x".repeat(13) + "\u{FFFD}\u{1F600}y"))], 8).unwrap();
  assert_eq!(&doc[11..11 + 16], ["x".repeat(13).as_bytes(), "\u{FFFD}".as_bytes()].concat().as_slice());
  assert_eq!(&doc[doc.len() - 7..doc.len() - 1], "\u{1F600}y\0".as_bytes());
  // under keys on the bytes tape (with the slack a JS tape has, so the fast
  // path takes them): a piece it leaves to run_inner (not ASCII) leaves its key there too
  let kb = |n: u32| (KEY_BYTES as u32 | n) << 8;
  let ops = [op::STRING_ROPE_FIRST | kb(2), op::STRING_ROPE | kb(3), op::STRING_ROPE | kb(1), op::END];
  let nums = [[1i32.to_le_bytes(), [0; 4]].concat(), [2i32.to_le_bytes(), [0; 4]].concat(), [1i32.to_le_bytes(), [0; 4]].concat()].concat();
  let doc = run_all(&mut e, &ops, &nums, &[&b"k1keyk"[..], &[0; 64]].concat(), &[s("a\u{e9}tb")], 8).unwrap();
  let expect = sized([&[0, 0, 0, 0][..], b"\x02k1\0\x02\0\0\0a\0", b"\x02key\0\x04\0\0\0\xc3\xa9t\0", b"\x02k\0\x02\0\0\0b\0", &[0]].concat());
  assert_eq!(doc, expect);
  // a piece past the rope's end, or a rope piece without the rope: an error
  let past = [20i32.to_le_bytes(), [0; 4]].concat();
  assert!(run_all(&mut e, &[op::STRING_ROPE_FIRST | (1 << 8), op::END], &past, &[], &[s("short")], 8).is_err());
  assert!(run_all(&mut e, &[op::STRING_ROPE | (1 << 8), op::END], &[1, 0, 0, 0, 0, 0, 0, 0], &[], &[], 8).is_err());
}

#[test]
fn arrays_skip_and_nested() {
  let mut e = Encoder::new();
  // {x: [true, <skip>, null, {}]}
  let ops = [w(op::ARRAY, 0), op::TRUE, op::SKIP, op::NULL, op::DOC, op::END, op::END, op::END];
  let got = run_all(&mut e, &ops, &[], &[], &[s("x")], 8).unwrap();
  let inner: Vec<u8> = [&[0x14, 0, 0, 0][..], &[8, b'0', 0, 1], &[10, b'2', 0], &[3, b'3', 0, 5, 0, 0, 0, 0], &[0]].concat();
  assert_eq!(inner.len(), 0x14);
  let expect: Vec<u8> = [&[(4 + 3 + 0x14 + 1) as u8, 0, 0, 0][..], &[4, b'x', 0], &inner, &[0]].concat();
  assert_eq!(got, expect);
}

#[test]
fn big_array_indices() {
  let mut e = Encoder::new();
  let mut ops = vec![w(op::ARRAY, 0)];
  ops.extend(std::iter::repeat(op::NULL).take(1001));
  ops.extend([op::END, op::END]);
  let got = run_all(&mut e, &ops, &[], &[], &[s("a")], 8).unwrap();
  let tail = [10u8, b'1', b'0', b'0', b'0', 0, 0, 0];
  assert_eq!(&got[got.len() - 8..], &tail);
}

#[test]
fn binary_subtypes_and_fixed() {
  let mut e = Encoder::new();
  e.define_key(3, b"k").unwrap();
  let ops = [w(op::BINARY, 4), w(op::BINARY, 4), w(op::OID, 4), op::END];
  let mut nums = Vec::new();
  for (len, sub) in [(2i32, 2i32), (4, 0x180)] {
    nums.extend(len.to_le_bytes());
    nums.extend(sub.to_le_bytes());
  }
  let oid: Vec<u8> = (1..=12).collect();
  let args = [OwnedArg::Bytes(vec![9, 8, 7]), OwnedArg::Bytes(vec![1, 2])];
  let got = run_all(&mut e, &ops, &nums, &oid, &args, 1).unwrap();
  let expect: Vec<u8> = [
    &[0, 0, 0, 0][..],
    &[5, b'k', 0, 6, 0, 0, 0, 2, 2, 0, 0, 0, 9, 8],
    &[5, b'k', 0, 4, 0, 0, 0, 0x80, 1, 2, 0, 0],
    &[7, b'k', 0],
    &oid,
    &[0],
  ]
  .concat();
  assert_eq!(&got[4..], &expect[4..]);
  assert_eq!(got.len(), expect.len());
}

#[test]
fn binaries_from_the_bytes_tape() {
  // lengths around the fast path's limit, the old byte-array subtype, under a key and in an array
  let mut e = Encoder::new();
  e.define_key(0, b"b").unwrap();
  for len in [0usize, 1, 16, 47, 48, 49, 100, 300, 2000, 65536, 65537] {
    for sub in [0x104i32, 2, 0x100] {
      let data: Vec<u8> = (0..len).map(|i| i as u8 ^ 0x5a).collect();
      let ops = [w(op::BINARY_BYTES, 1), w(op::ARRAY, 1), op::BINARY_BYTES, op::BINARY_BYTES, op::END, op::END];
      let mut nums = Vec::new();
      for _ in 0..3 {
        nums.extend((len as i32).to_le_bytes());
        nums.extend(sub.to_le_bytes());
      }
      let bytes = [&data[..], &data, &data].concat();
      let got = run_all(&mut e, &ops, &nums, &bytes, &[], 4).unwrap();
      let head: Vec<u8> = if sub == 2 {
        [&((len + 4) as u32).to_le_bytes()[..], &[2], &(len as u32).to_le_bytes()].concat()
      } else {
        [&(len as u32).to_le_bytes()[..], &[sub as u8]].concat()
      };
      let value: Vec<u8> = [&head[..], &data].concat();
      let inner: Vec<u8> = [&[5u8, b'0', 0][..], &value, &[5, b'1', 0], &value, &[0]].concat();
      let body: Vec<u8> = [&[5u8, b'b', 0][..], &value, &[4, b'b', 0], &((inner.len() + 4) as u32).to_le_bytes(), &inner, &[0]].concat();
      let expect: Vec<u8> = [&((body.len() + 4) as u32).to_le_bytes()[..], &body].concat();
      assert_eq!(got, expect, "len {len} subtype {sub:#x}");
    }
  }
  // a long one as the last element of an output too small for it (but with room for the fast path's window)
  for size in [200usize, 1000, 2010] {
    let data = vec![7u8; 2000];
    let nums = [2000i32.to_le_bytes(), 0x100i32.to_le_bytes()].concat();
    let got = run_sized(&mut e, &[w(op::BINARY_BYTES, 1), op::END], &nums, &data, &[], 4, size).unwrap();
    let expect: Vec<u8> = [&2013u32.to_le_bytes()[..], &[5, b'b', 0], &2000u32.to_le_bytes(), &[0], &data, &[0]].concat();
    assert_eq!(got, expect, "output of {size}");
  }
  // a length the bytes tape does not hold, or a negative one, is an error on both paths
  for (len, bytes) in [(16i32, vec![0u8; 15]), (-1, vec![0u8; 16])] {
    let nums = [len.to_le_bytes(), 0x100i32.to_le_bytes()].concat();
    assert!(run_all(&mut e, &[w(op::ARRAY, 1), op::BINARY_BYTES, op::END, op::END], &nums, &bytes, &[], 4).is_err());
  }
}

#[test]
fn code_with_scope_and_regex() {
  let mut e = Encoder::new();
  let ops = [w(op::CODE_W_SCOPE, 0), w(op::INT32, 0), op::END, w(op::REGEX, 0), op::END];
  let nums = [1, 0, 0, 0, 0, 0, 0, 0];
  let args = [s("c"), s("f"), s("v"), s("r"), s("ab"), s("im")];
  let got = run_all(&mut e, &ops, &nums, &[], &args, 2).unwrap();
  let scope: Vec<u8> = [&[0x0c, 0, 0, 0][..], &[0x10, b'v', 0, 1, 0, 0, 0], &[0]].concat();
  let cws: Vec<u8> = [&((4 + 4 + 2 + scope.len()) as u32).to_le_bytes()[..], &[2, 0, 0, 0, b'f', 0], &scope].concat();
  let body: Vec<u8> = [&[0x0F, b'c', 0][..], &cws, &[0x0B, b'r', 0, b'a', b'b', 0, b'i', b'm', 0], &[0]].concat();
  let expect: Vec<u8> = [&((body.len() + 4) as u32).to_le_bytes()[..], &body].concat();
  assert_eq!(got, expect);
}

#[test]
fn regex_from_the_bytes_tape() {
  // under a key and in an array, empty parts, after an INT32 on the fast path
  let mut e = Encoder::new();
  e.define_key(0, b"r").unwrap();
  let (p45, p47) = (vec![b'p'; 45], vec![b'q'; 47]);
  for (pattern, options) in [(&b"^a1"[..], &b"i"[..]), (b"", b""), (b"x.*y", b"ims"), (&p45[..], b"ims"), (&p47[..], b"im")] {
    let ops = [w(op::REGEX_BYTES, 1), w(op::ARRAY, 1), op::INT32, op::REGEX_BYTES, op::END, op::END];
    let lens = [(pattern.len() as i32).to_le_bytes(), (options.len() as i32).to_le_bytes()].concat();
    let nums = [&lens[..], &[7, 0, 0, 0, 0, 0, 0, 0], &lens].concat();
    let bytes = [pattern, options, pattern, options].concat();
    let got = run_all(&mut e, &ops, &nums, &bytes, &[], 4).unwrap();
    let value: Vec<u8> = [pattern, &[0], options, &[0]].concat();
    let inner: Vec<u8> = [&[0x10u8, b'0', 0, 7, 0, 0, 0][..], &[0x0B, b'1', 0], &value, &[0]].concat();
    let body: Vec<u8> = [&[0x0Bu8, b'r', 0][..], &value, &[4, b'r', 0], &((inner.len() + 4) as u32).to_le_bytes(), &inner, &[0]].concat();
    let expect: Vec<u8> = [&((body.len() + 4) as u32).to_le_bytes()[..], &body].concat();
    assert_eq!(got, expect);
  }
  // a NUL in either part, or lengths the bytes tape does not hold: an error, not a bad document
  let lens = |p: i32, o: i32| [p.to_le_bytes(), o.to_le_bytes()].concat();
  for (nums, bytes) in [(lens(2, 1), &b"a\0i"[..]), (lens(1, 2), b"ai\0"), (lens(3, 2), b"abci"), (lens(-1, 0), b"abc")] {
    assert!(run_all(&mut e, &[w(op::REGEX_BYTES, 1), op::END], &nums, bytes, &[], 4).is_err());
  }
}

#[test]
fn regex_bytes_of_every_length_read_as_words() {
  // The fast path copies pattern and options in whole 8-byte words and moves
  // the options on by one: every split of up to 48 bytes, under a staged key
  // and in an array, with and without tape slack, a NUL at every position.
  let mut e = Encoder::new();
  let kb = |n: usize| ((KEY_BYTES | n) as u32) << 8;
  for total in 0..=48usize {
    for np in 0..=total {
      let no = total - np;
      let src: Vec<u8> = (0..total).map(|j| b'a' + (j % 26) as u8).collect();
      let lens = [(np as i32).to_le_bytes(), (no as i32).to_le_bytes()].concat();
      let nums = [&lens[..], &lens].concat();
      let value: Vec<u8> = [&src[..np], &[0], &src[np..], &[0]].concat();
      let arr: Vec<u8> = [&[0x0Bu8, b'0', 0][..], &value, &[0]].concat();
      let body: Vec<u8> = [&[0x0Bu8, b'k', 0][..], &value, &[4, b'a', 0], &((arr.len() + 4) as u32).to_le_bytes(), &arr, &[0]].concat();
      let expect: Vec<u8> = [&((body.len() + 4) as u32).to_le_bytes()[..], &body].concat();
      let ops = [op::REGEX_BYTES | kb(1), op::ARRAY | kb(1), op::REGEX_BYTES, op::END, op::END];
      for slack in [0usize, 3, 64] {
        let tape = [&b"k"[..], &src, b"a", &src, &vec![0; slack]].concat();
        assert_eq!(run_all(&mut e, &ops, &nums, &tape, &[], 8).unwrap(), expect, "{np}+{no} slack {slack}");
        for at in 0..total {
          for second in [false, true] {
            let mut bad = tape.clone();
            bad[if second { 2 + total + at } else { 1 + at }] = 0;
            assert!(run_all(&mut e, &ops, &nums, &bad, &[], 8).is_err(), "{np}+{no} NUL at {at} second {second}");
          }
        }
      }
    }
  }
}

#[test]
fn string_bytes_short_long_and_without_slack() {
  let mut e = Encoder::new();
  e.define_key(0, b"s").unwrap();
  let long = vec![b'x'; 100];
  for text in [&b"hello"[..], &b""[..], &long[..]] {
    for slack in [0usize, 64] {
      let ops = [w(op::STRING_BYTES, 1), w(op::ARRAY, 1), op::STRING_BYTES, op::END, op::END];
      let mut nums = Vec::new();
      for _ in 0..2 {
        nums.extend((text.len() as u32).to_le_bytes());
        nums.extend([0u8; 4]);
      }
      let mut bytes = [text, text].concat();
      bytes.extend(std::iter::repeat(0xEE).take(slack));
      let got = run_all(&mut e, &ops, &nums, &bytes, &[], 4).unwrap();
      let el: Vec<u8> = [&((text.len() + 1) as u32).to_le_bytes()[..], text, &[0]].concat();
      let inner: Vec<u8> = [&[2u8, b'0', 0][..], &el, &[0]].concat();
      let body: Vec<u8> = [&[2u8, b's', 0][..], &el, &[4, b's', 0], &((inner.len() + 4) as u32).to_le_bytes(), &inner, &[0]].concat();
      let expect: Vec<u8> = [&((body.len() + 4) as u32).to_le_bytes()[..], &body].concat();
      assert_eq!(got, expect);
    }
  }
}

#[test]
fn code_and_symbol_from_the_bytes_tape_match_their_args() {
  // CODE_BYTES / SYMBOL_BYTES: the string payload of CODE / SYMBOL, from the bytes tape
  let mut e = Encoder::new();
  e.define_key(0, b"c").unwrap();
  for (on_tape, as_arg) in [(op::CODE_BYTES, op::CODE), (op::SYMBOL_BYTES, op::SYMBOL)] {
    for text in [&b"x + 1"[..], &b""[..]] {
      let len = [(text.len() as u32).to_le_bytes(), [0; 4]].concat();
      let tape_ops = [w(on_tape, 1), w(op::ARRAY, 1), on_tape, op::END, op::END];
      let got = run_all(&mut e, &tape_ops, &[&len[..], &len].concat(), &[text, text].concat(), &[], 4).unwrap();
      let arg = OwnedArg::Str(text.to_vec());
      let arg_ops = [w(as_arg, 1), w(op::ARRAY, 1), as_arg, op::END, op::END];
      let expect = run_all(&mut e, &arg_ops, &[], &[], &[arg.clone(), arg], 4).unwrap();
      assert_eq!(got, expect);
      assert_eq!(got[4], if on_tape == op::CODE_BYTES { 0x0D } else { 0x0E });
    }
  }
}

#[test]
fn oid_from_ints_matches_bytes() {
  let mut e = Encoder::new();
  e.define_key(0, b"o").unwrap();
  let ints = [0x010203i32, 0x040506, 0x070809, 0x0a0b0c];
  let nums: Vec<u8> = ints.iter().flat_map(|i| i.to_le_bytes()).collect();
  let got = run_all(&mut e, &[w(op::OID_INTS, 1), w(op::ARRAY, 1), op::OID_INTS, op::END, op::END], &[nums.clone(), nums].concat(), &[], &[], 4).unwrap();
  let oid: Vec<u8> = (1..=12).collect();
  assert_eq!(&got[4..7], &[7, b'o', 0]);
  assert_eq!(&got[7..19], &oid[..]);
  assert_eq!(&got[got.len() - 14..got.len() - 2], &oid[..]);
}

/// Runs of every op array_run takes in one array (each kind's loop, switches
/// between them, a NULL between runs, strings, rope pieces and binaries around
/// SHORT_BYTES, rope pieces that are not ASCII, binary subtype 2, indices past
/// the digit table), against a plain writer of the same elements.
#[test]
fn array_runs_match_a_plain_writer() {
  for start in 1..=8u64 {
    array_runs_of_seed(start.wrapping_mul(0x9e37_79b9_7f4a_7c15));
  }
}

fn array_runs_of_seed(mut seed: u64) {
  let mut next = move || {
    seed ^= seed << 13;
    seed ^= seed >> 7;
    seed ^= seed << 17;
    seed
  };
  let kinds = [op::INT32, op::DOUBLE, op::INT64, op::TIMESTAMP, op::DATE, op::OID_INTS, op::NULL, op::TRUE, op::STRING_BYTES, op::STRING_ROPE, op::BINARY_BYTES];
  let (mut ops, mut nums, mut bytes, mut body) = (vec![w(op::ARRAY, 1)], Vec::new(), Vec::new(), Vec::new());
  let mut rope = String::new();
  let mut pieces = 0;
  let mut index = 0u32;
  // indices across the index table's end (10,000), then across 100,000 and
  // the fast paths' end (1,000,000), skipped to by SKIP ops
  let jumps = [(10_050, 99_950), (100_050, 999_900)];
  while index < 1_000_100 {
    if let Some(&(_, to)) = jumps.iter().find(|&&(from, to)| (from..to).contains(&index)) {
      ops.extend(std::iter::repeat(op::SKIP).take((to - index) as usize));
      index = to;
    }
    let run_code = kinds[(next() % kinds.len() as u64) as usize];
    for _ in 0..1 + next() % 40 {
      // (a TRUE run mixes booleans and nulls, as arrays of optional flags do)
      let code = if run_code == op::TRUE { [op::TRUE, op::FALSE, op::NULL][(next() % 3) as usize] } else { run_code };
      let key: Vec<u8> = index.to_string().into_bytes();
      let slot = next().to_le_bytes();
      let (type_byte, value): (u8, Vec<u8>) = match code {
        op::INT32 => (0x10, slot[..4].to_vec()),
        op::DOUBLE => (0x01, slot.to_vec()),
        op::INT64 => (0x12, slot.to_vec()),
        op::TIMESTAMP => (0x11, slot.to_vec()),
        op::DATE => (0x09, long_from_number(f64::from_le_bytes(slot) % 1e18).to_le_bytes().to_vec()),
        op::OID_INTS => (0x07, Vec::new()),
        op::STRING_BYTES | op::STRING_ROPE => (0x02, Vec::new()),
        op::BINARY_BYTES => (0x05, Vec::new()),
        op::TRUE | op::FALSE => (0x08, vec![u8::from(code == op::TRUE)]),
        _ => (0x0A, Vec::new()),
      };
      // (the document's first rope piece reads the rope: run_inner's op)
      ops.push(if code == op::STRING_ROPE && pieces == 0 { op::STRING_ROPE_FIRST } else { code });
      body.push(type_byte);
      body.extend(&key);
      body.push(0);
      match code {
        op::DATE => nums.extend((f64::from_le_bytes(slot) % 1e18).to_le_bytes()),
        op::OID_INTS => {
          let ints: Vec<u32> = (0..4).map(|_| next() as u32 & 0x00FF_FFFF).collect();
          for int in &ints {
            nums.extend(int.to_le_bytes());
            body.extend(&int.to_be_bytes()[1..]);
          }
        }
        op::NULL | op::TRUE | op::FALSE => {}
        op::STRING_BYTES => {
          let n = (next() % 52) as usize;
          let text: Vec<u8> = (0..n).map(|_| b'a' + (next() % 26) as u8).collect();
          nums.extend((n as u64).to_le_bytes());
          body.extend((n as i32 + 1).to_le_bytes());
          body.extend(&text);
          body.push(0);
          bytes.extend(text);
        }
        op::STRING_ROPE => {
          // ASCII, or now and then with a character of two or three UTF-8 bytes
          let n = (next() % 52) as usize;
          let text: String = (0..n)
            .map(|_| match next() % 64 {
              0 => '\u{e9}',
              1 => '\u{65e5}',
              c => char::from(b'a' + (c % 26) as u8),
            })
            .collect();
          nums.extend((text.encode_utf16().count() as u64).to_le_bytes());
          body.extend((text.len() as i32 + 1).to_le_bytes());
          body.extend(text.as_bytes());
          body.push(0);
          rope.push_str(&text);
          pieces += 1;
        }
        op::BINARY_BYTES => {
          // mostly short (at most SHORT_BYTES: one fixed-size copy), now and then up to 2 KB
          let n = if next() % 8 == 0 { (next() % 2048) as usize } else { (next() % 60) as usize };
          let data: Vec<u8> = (0..n).map(|_| next() as u8).collect();
          let subtype = [2, 0x100, 0x104, 0x180][(next() % 4) as usize];
          nums.extend((n as i32).to_le_bytes());
          nums.extend((subtype as i32).to_le_bytes());
          body.extend((n as i32 + if subtype == 2 { 4 } else { 0 }).to_le_bytes());
          body.push(subtype as u8);
          if subtype == 2 {
            body.extend((n as i32).to_le_bytes());
          }
          body.extend(&data);
          bytes.extend(data);
        }
        _ => nums.extend(slot),
      }
      body.extend(value);
      index += 1;
    }
  }
  ops.extend([op::END, op::END]);
  let mut e = Encoder::new();
  e.define_key(0, b"a").unwrap();
  let args = if pieces == 0 { vec![] } else { vec![s(&rope)] };
  let got = run_all(&mut e, &ops, &nums, &bytes, &args, 4).unwrap();
  let array_len = 4 + body.len() + 1;
  let mut expect = ((4 + 3 + array_len + 1) as i32).to_le_bytes().to_vec();
  expect.extend([4, b'a', 0]);
  expect.extend((array_len as i32).to_le_bytes());
  expect.extend(&body);
  expect.extend([0, 0]);
  assert_eq!(got, expect);
}

#[test]
fn dates_follow_long_from_number() {
  assert_eq!(long_from_number(f64::NAN), 0);
  assert_eq!(long_from_number(-1.5), -1);
  assert_eq!(long_from_number(1e300), i64::MAX);
  assert_eq!(long_from_number(-1e300), i64::MIN);
  assert_eq!(long_from_number(8.64e15), 8_640_000_000_000_000);
}

#[test]
fn malformed_tapes_are_errors() {
  let mut e = Encoder::new();
  let cases: Vec<(Vec<u32>, Vec<u8>, Vec<OwnedArg>)> = vec![
    (vec![], vec![], vec![]),
    (vec![op::DOC], vec![], vec![s("a")]),
    (vec![op::END, op::END], vec![], vec![]),
    (vec![w(op::DOUBLE, 0)], vec![], vec![s("a")]),
    (vec![w(op::STRING, 9), op::END], vec![], vec![s("a")]),
    (vec![w(op::OID, 0), op::END], vec![], vec![s("a")]),
    (vec![0x42, op::END], vec![], vec![]),
    (vec![op::SKIP, op::END], vec![], vec![]),
    (vec![w(op::BINARY, 0), op::END], vec![0xff; 8], vec![s("a"), OwnedArg::Bytes(vec![])]),
    (vec![w(op::BINARY, 0), op::END], vec![0; 8], vec![s("a"), s("b")]),
    (vec![w(op::STRING, 0), op::END], vec![], vec![s("a"), OwnedArg::Bytes(vec![])]),
  ];
  for (ops, nums, args) in cases {
    assert!(run_all(&mut e, &ops, &nums, &[], &args, 8).is_err(), "{ops:?}");
  }
  // Running without begin() is an error too.
  let mut out = [0u8; 8];
  assert!(e.run(&[0], &[], &[], &mut out, &mut [][..]).is_err());
}

#[test]
fn too_small_reports_size_and_counting_matches() {
  let mut e = Encoder::new();
  let ops = [w(op::STRING, 0), op::END];
  let long = "é".repeat(100);
  let args = [s("k"), s(&long)];
  let mut out = [0u8; 10];
  e.begin();
  let step = e.run(&ops, &[], &[], &mut out, &mut args.clone()[..]).unwrap();
  assert_eq!(step, Step::TooSmall(4 + 1 + 2 + 4 + 200 + 1 + 1));
}

#[test]
fn documents_past_the_int32_limit_are_refused() {
  let mut e = Encoder::new();
  let mut nums = Vec::new();
  nums.extend(i32::MAX.to_le_bytes());
  nums.extend(0i32.to_le_bytes());
  let ops = [w(op::BINARY, 0), op::END];
  let mut out = [0u8; 64];
  e.begin();
  let r = e.run(&ops, &nums, &[], &mut out, &mut [s("k"), OwnedArg::Bytes(vec![1])][..]);
  assert_eq!(r, Err(too_large()));
  // just under the limit is fine (in counting mode)
  let mut nums = Vec::new();
  nums.extend((i32::MAX - 100).to_le_bytes());
  nums.extend(0i32.to_le_bytes());
  e.begin();
  let r = e.run(&ops, &nums, &[], &mut out, &mut [s("k"), OwnedArg::Bytes(vec![1])][..]);
  assert_eq!(r, Ok(Step::TooSmall(4 + 1 + 2 + 4 + 1 + (i32::MAX as usize - 100) + 1)));
}

#[test]
fn key_ids_are_bounded() {
  let mut e = Encoder::new();
  assert!(e.define_key(MAX_KEYS, b"x").is_err());
  assert!(e.define_key(MAX_KEYS - 1, b"x").is_ok());
}

/// Random tapes never panic (a poor man's fuzz target).
#[test]
fn random_tapes_do_not_panic() {
  let mut seed = 0x2545F4914F6CDD1Du64;
  let mut next = move || {
    seed ^= seed << 13;
    seed ^= seed >> 7;
    seed ^= seed << 17;
    seed
  };
  let mut e = Encoder::new();
  e.define_key(0, b"k").unwrap();
  let codes = [0u32, 0x22, 0x23, 0x24, 1, 2, 3, 4, 5, 7, 8, 9, 0x0A, 0x0B, 0x0D, 0x0E, 0x0F, 0x10, 0x11, 0x12, 0x13, 0x18, 0x20, 0x7F, 0xFF, 0x55];
  for _ in 0..5_000 {
    let n = (next() % 12) as usize;
    let ops: Vec<u32> = (0..n).map(|_| codes[(next() % codes.len() as u64) as usize] | ((next() % 3) as u32) << 8).collect();
    let nums: Vec<u8> = (0..(next() % 40)).map(|_| next() as u8).collect();
    let bytes: Vec<u8> = (0..(next() % 40)).map(|_| next() as u8).collect();
    let args: Vec<OwnedArg> = (0..(next() % 5))
      .map(|_| if next() % 2 == 0 { s("ab") } else { OwnedArg::Bytes(vec![1, 2, 3]) })
      .collect();
    let _ = run_all(&mut e, &ops, &nums, &bytes, &args, 1 + (next() % 3) as usize);
  }
}

mod speed {
  use super::*;

  /// `cargo test --release -p bson-rs-core speed -- --ignored --nocapture`
  #[test]
  #[ignore]
  fn int_array_speed() {
    // SPEED_OP: oid, mix (int32 and double alternating), pairs (arrays of two int32s),
    // str (strings of 4-16 ASCII characters, those of 13 or more rope pieces, as string_1000's),
    // doc (documents of 20 mixed elements), uuid (16-byte binaries), else int32
    let codes: &[u32] = match std::env::var("SPEED_OP").as_deref() {
      Ok("oid") => &[op::OID_INTS],
      Ok("mix") => &[op::INT32, op::DOUBLE],
      _ => &[op::INT32],
    };
    let mut e = Encoder::new();
    e.define_key(0, b"a").unwrap();
    let mut ops = vec![op::ARRAY | 1 << 8];
    let mut nums = vec![7u8; 16 * 1000];
    let mut bytes = Vec::new();
    let mut rope = String::new();
    if std::env::var("SPEED_OP").as_deref() == Ok("str") {
      nums.clear();
      for i in 0..1000u32 {
        let n = 4 + (i * 7919 % 13) as usize;
        let text: String = (0..n).map(|j| char::from(b'a' + ((i as usize + j) % 26) as u8)).collect();
        if n >= 13 {
          ops.push(if rope.is_empty() { op::STRING_ROPE_FIRST } else { op::STRING_ROPE });
          rope.push_str(&text);
        } else {
          ops.push(op::STRING_BYTES);
          bytes.extend(text.as_bytes());
        }
        nums.extend((n as u64).to_le_bytes());
      }
      bytes.extend([0; 64]);
    } else if std::env::var("SPEED_OP").as_deref() == Ok("uuid") {
      // 1,000 binaries of 16 bytes, subtype 4
      nums.clear();
      for i in 0..1000u32 {
        ops.push(op::BINARY_BYTES);
        nums.extend(16i32.to_le_bytes());
        nums.extend(0x104i32.to_le_bytes());
        bytes.extend([i as u8; 16]);
      }
      bytes.extend([0; 64]);
    } else if std::env::var("SPEED_OP").as_deref() == Ok("bin") {
      // 1,000 binaries of SPEED_LEN bytes (256 unless set), subtype 0, on the bytes tape
      let len: usize = std::env::var("SPEED_LEN").ok().and_then(|v| v.parse().ok()).unwrap_or(256);
      nums.clear();
      for i in 0..1000u32 {
        ops.push(op::BINARY_BYTES);
        nums.extend((len as i32).to_le_bytes());
        nums.extend(0x100i32.to_le_bytes());
        bytes.extend(std::iter::repeat_n(i as u8, len));
      }
      bytes.extend([0; 64]);
    } else if std::env::var("SPEED_OP").as_deref() == Ok("doc") {
      // 50 documents of 20 elements under defined keys (ints, doubles, short strings, booleans, nulls), as tweet's
      nums.clear();
      for k in 1..=20u32 {
        e.define_key(k as usize, format!("key_{k}").as_bytes()).unwrap();
      }
      for d in 0..50u32 {
        ops.push(op::DOC);
        for k in 1..=20u32 {
          let code = [op::INT32, op::STRING_BYTES, op::TRUE, op::NULL, op::DOUBLE][((k + d) % 5) as usize];
          ops.push(code | (k + 1) << 8);
          match code {
            op::STRING_BYTES => {
              nums.extend(10u64.to_le_bytes());
              bytes.extend(b"0123456789");
            }
            op::INT32 | op::DOUBLE => nums.extend(7u64.to_le_bytes()),
            _ => {}
          }
        }
        ops.push(op::END);
      }
      bytes.extend([0; 64]);
    } else if std::env::var("SPEED_OP").as_deref() == Ok("pairs") {
      // 1,000 int32s in arrays of two
      for _ in 0..500 {
        ops.extend([op::ARRAY, op::INT32, op::INT32, op::END]);
      }
    } else {
      ops.extend(codes.iter().cycle().take(1000));
    }
    ops.extend([op::END, op::END]);
    let args = if rope.is_empty() { vec![] } else { vec![s(&rope)] };
    let mut out = vec![0u8; (1 << 16) + bytes.len() * 2];
    let t = std::time::Instant::now();
    let n: u32 = std::env::var("SPEED_N").ok().and_then(|v| v.parse().ok()).unwrap_or(20_000);
    for _ in 0..n {
      e.begin();
      let r = e.run(&ops, &nums, &bytes, &mut out, &mut args.clone()[..]).unwrap();
      assert!(matches!(r, Step::Done(_)));
    }
    println!("ns per element: {:.2}", t.elapsed().as_nanos() as f64 / f64::from(n) / 1000.0);
  }
}

/// String arguments as UTF-16 code units, as V8 hands them over (src/encode.rs).
/// String arguments as UTF-16 code units.
/// String args by their UTF-16 code units (and a scratch for their Latin-1 bytes).
struct Utf16Args(Vec<Vec<u16>>, Vec<u8>);

impl ArgSource for Utf16Args {
  fn count(&self) -> usize {
    self.0.len()
  }
  fn write_str(&mut self, i: usize, dst: &mut [u8]) -> Result<Option<usize>, String> {
    let s = String::from_utf16_lossy(&self.0[i]);
    Ok(dst.get_mut(..s.len()).map(|d| {
      d.copy_from_slice(s.as_bytes());
      s.len()
    }))
  }
  fn str_len(&mut self, i: usize) -> Result<usize, String> {
    Ok(String::from_utf16_lossy(&self.0[i]).len())
  }
  fn units(&mut self, i: usize) -> Result<Option<&[u16]>, String> {
    Ok(Some(&self.0[i]))
  }
  fn latin1(&mut self, i: usize) -> Result<Option<&[u8]>, String> {
    self.1 = self.0[i].iter().map(|&u| u as u8).collect();
    Ok(Some(&self.1))
  }
  fn bytes(&mut self, _: usize) -> Result<&[u8], String> {
    Err("not bytes".into())
  }
  fn to_owned(&mut self, i: usize) -> Result<OwnedArg, String> {
    Ok(OwnedArg::Str(String::from_utf16_lossy(&self.0[i]).into_bytes()))
  }
}

#[test]
fn utf16_and_latin1_strings_written_counted_and_owned_alike() {
  let texts = ["東京都渋谷区の天気".repeat(40), "Привет, 東京 😀 café ".repeat(30), "a\u{7ff}".repeat(9)];
  let mut lone: Vec<u16> = "日本語".repeat(20).encode_utf16().collect();
  lone[17] = 0xd800;
  let mut cases: Vec<Vec<u16>> = texts.iter().map(|t| t.encode_utf16().collect()).collect();
  cases.push(lone);
  let mut cases: Vec<(u32, Vec<u16>)> = cases.into_iter().map(|u| (op::STRING_UTF16, u)).collect();
  // one-byte text (op STRING_LATIN1): every Latin-1 character, French, ASCII
  for text in [(0..=255u8).map(char::from).collect::<String>().repeat(3), "Crème brûlée à la française. ".repeat(20), "plain ASCII text ".repeat(20)] {
    cases.push((op::STRING_LATIN1, text.encode_utf16().collect()));
  }
  for (string_op, units) in cases {
    let ops = [w(string_op, 0), op::END];
    let text = String::from_utf16_lossy(&units);
    let mut expected = Vec::new();
    expected.extend((4 + 1 + 2 + 4 + text.len() as i32 + 1 + 1).to_le_bytes());
    expected.extend(b"\x02k\0");
    expected.extend((text.len() as i32 + 1).to_le_bytes());
    expected.extend(text.as_bytes());
    expected.extend([0, 0]);
    let mut e = Encoder::new();
    let mut out = vec![0u8; 8192];
    // room to spare, and exactly the room it needs
    for room in [out.len(), expected.len()] {
      e.begin();
      let widened = e.latin1_widened();
      let step = e.run(&ops, &[], &[], &mut out[..room], &mut Utf16Args(vec!["k".encode_utf16().collect(), units.clone()], Vec::new())).unwrap();
      assert_eq!(step, Step::Done(expected.len()));
      assert_eq!(&out[..expected.len()], &expected[..]);
      // (Latin-1 text with a character above U+007F is counted for JS)
      let counted = u64::from(string_op == op::STRING_LATIN1 && !text.is_ascii());
      assert_eq!(e.latin1_widened() - widened, counted, "room {room}");
    }
    // too small: the exact size needed
    for room in [10, expected.len() - 2] {
      e.begin();
      let step = e.run(&ops, &[], &[], &mut out[..room], &mut Utf16Args(vec!["k".encode_utf16().collect(), units.clone()], Vec::new())).unwrap();
      assert_eq!(step, Step::TooSmall(expected.len()), "room {room}");
    }
    // owned copies (carried between chunks) have UTF-8 only: the same bytes
    assert_eq!(run_all(&mut e, &ops, &[], &[], &[s("k"), s(&text)], 8).unwrap(), expected);
  }
}
