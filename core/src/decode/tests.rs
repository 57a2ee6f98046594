use super::*;

/// A tiny BSON builder for tests.
fn doc(elems: &[(u8, &str, Vec<u8>)]) -> Vec<u8> {
  let mut body = Vec::new();
  for (t, k, v) in elems {
    body.push(*t);
    body.extend_from_slice(k.as_bytes());
    body.push(0);
    body.extend_from_slice(v);
  }
  let mut out = ((body.len() + 5) as i32).to_le_bytes().to_vec();
  out.extend(body);
  out.push(0);
  out
}

/// A code-with-scope value: total size, code string, scope document.
fn code_w_scope(code: &str, scope: &[u8]) -> Vec<u8> {
  let code = string(code);
  let mut cws = ((4 + code.len() + scope.len()) as i32).to_le_bytes().to_vec();
  cws.extend(&code);
  cws.extend(scope);
  cws
}

fn string(s: &str) -> Vec<u8> {
  let mut v = ((s.len() + 1) as i32).to_le_bytes().to_vec();
  v.extend_from_slice(s.as_bytes());
  v.push(0);
  v
}

const DEFAULT: u32 = flag::PROMOTE_LONGS | flag::PROMOTE_VALUES | flag::UTF8;

fn run_with(cache: &mut DecodeCache, input: &[u8], flags: u32, index: usize) -> (Outcome, Vec<u32>, Vec<u64>) {
  let mut ops = vec![0u32; 4096];
  let mut nums = vec![0u64; 4096];
  let req = Request { input, index, flags, raw_names: None, utf8_names: &[] };
  let out = cache.decode(&req, &mut ops, &mut nums);
  if matches!(out, Outcome::Done(_)) {
    cache.commit();
  }
  (out, ops, nums)
}

fn run(input: &[u8]) -> Outcome {
  run_with(&mut DecodeCache::new(), input, DEFAULT, 0).0
}

fn err(input: &[u8]) -> String {
  match run(input) {
    Outcome::Error(DecodeError::Bson(m)) | Outcome::Error(DecodeError::Range(m)) => m,
    other => panic!("expected an error, got {other:?}"),
  }
}

fn rich() -> Vec<u8> {
  let inner = doc(&[(0x10, "x", 5i32.to_le_bytes().to_vec()), (0x02, "s", string("héllo"))]);
  let arr = doc(&[(0x10, "0", 1i32.to_le_bytes().to_vec()), (0x01, "1", 2.5f64.to_le_bytes().to_vec())]);
  let mut bin = 3i32.to_le_bytes().to_vec();
  bin.push(0);
  bin.extend_from_slice(b"abc");
  let cws = code_w_scope("f()", &doc(&[(0x10, "a", 1i32.to_le_bytes().to_vec())]));
  let mut regex = b"ab+".to_vec();
  regex.push(0);
  regex.extend_from_slice(b"i\0");
  doc(&[
    (0x01, "d", 1.5f64.to_le_bytes().to_vec()),
    (0x02, "s", string("str")),
    (0x03, "o", inner),
    (0x04, "a", arr),
    (0x05, "b", bin),
    (0x06, "u", vec![]),
    (0x07, "id", vec![1; 12]),
    (0x08, "t", vec![1]),
    (0x09, "dt", 1_000i64.to_le_bytes().to_vec()),
    (0x0A, "n", vec![]),
    (0x0B, "re", regex),
    (0x0D, "c", string("code")),
    (0x0E, "sym", string("sym")),
    (0x0F, "cws", cws),
    (0x10, "i", 7i32.to_le_bytes().to_vec()),
    (0x11, "ts", 9i64.to_le_bytes().to_vec()),
    (0x12, "l", (1i64 << 60).to_le_bytes().to_vec()),
    (0x13, "dec", vec![2; 16]),
    (0xFF, "min", vec![]),
    (0x7F, "max", vec![]),
  ])
}

#[test]
fn simple_document_tape() {
  let long = "a string longer than the thirty-two bytes of the value cache";
  let input = doc(&[(0x10, "a", 1i32.to_le_bytes().to_vec()), (0x02, "b", string(long))]);
  let mut cache = DecodeCache::new();
  let (out, ops, nums) = run_with(&mut cache, &input, DEFAULT, 0);
  let Outcome::Done(total) = out else { panic!("{out:?}") };
  let body = ops[0] as usize;
  let defs = ops[1] as usize;
  assert_eq!(total, 2 + body + defs);
  // NUM, STR, OBJ_GENERIC 2 (key a) (key b)
  assert_eq!(&ops[2..2 + body], &[op::NUM | 1 << 8, op::STR, op::OBJ_GENERIC, 2, 1, 2]);
  assert_eq!(&ops[2 + body..total], &[op::DEF_KEY, op::DEF_KEY | 1 << 8]);
  assert_eq!(f64::from_bits(nums[0]), 1.0);
  let spans: Vec<Span> = cache.spans().copied().collect();
  assert_eq!(spans.len(), 3);
  assert_eq!(spans[0].kind, SPAN_KEY);
  assert_eq!(&input[spans[2].start as usize..spans[2].end as usize], long.as_bytes());

  // Second decode: keys are known, the shape becomes a factory.
  let (out, ops, _) = run_with(&mut cache, &input, DEFAULT, 0);
  let Outcome::Done(total) = out else { panic!() };
  let body = ops[0] as usize;
  assert_eq!(&ops[2..2 + body], &[op::NUM | 1 << 8, op::STR, op::OBJ]);
  assert_eq!(&ops[2 + body..total], &[op::DEF_SHAPE, 2, 0, 1]);
  // Third: nothing to define.
  let (out, ops, _) = run_with(&mut cache, &input, DEFAULT, 0);
  assert_eq!(out, Outcome::Done(5));
  assert_eq!(ops[1], 0);
}

#[test]
fn object_id_is_four_ints_in_two_slots() {
  let bytes = [0x65, 0x1f, 0x2a, 0xb3, 0xc4, 0xd5, 0xe6, 0xf7, 0x08, 0x19, 0x2a, 0xff];
  let input = doc(&[(0x01, "d", 2.5f64.to_le_bytes().to_vec()), (0x07, "o", bytes.to_vec())]);
  let (out, ops, nums) = run_with(&mut DecodeCache::new(), &input, DEFAULT, 0);
  assert!(matches!(out, Outcome::Done(_)), "{out:?}");
  assert_eq!(&ops[2..4], &[op::NUM | 1 << 8, op::OID]);
  // Number slots in tape order: the double, then (i0, i1), (i2, i3), low half first.
  assert_eq!(f64::from_bits(nums[0]), 2.5);
  assert_eq!(nums[1], 0x651f2a | 0xb3c4d5 << 32);
  assert_eq!(nums[2], 0xe6f708 | 0x192aff << 32);
}

#[test]
fn object_id_arrays() {
  let oid = |i: u8| vec![i; 12];
  let arr = |n: u8| doc(&(0..n).map(|i| (0x07u8, ["0", "1", "2"][i as usize], oid(i + 1))).collect::<Vec<_>>());
  // { a: oid, b: [oid, oid], c: [], d: [oid, 1], e: [[oid], oid] }
  let mixed = doc(&[(0x07, "0", oid(9)), (0x10, "1", 1i32.to_le_bytes().to_vec())]);
  let nested = doc(&[(0x04, "0", arr(1)), (0x07, "1", oid(8))]);
  let d = doc(&[(0x07, "a", oid(7)), (0x04, "b", arr(2)), (0x04, "c", arr(0)), (0x04, "d", mixed), (0x04, "e", nested)]);
  let (out, ops, nums) = run_with(&mut DecodeCache::new(), &d, DEFAULT, 0);
  assert!(matches!(out, Outcome::Done(_)), "{out:?}");
  // a stays an OID op; b's two OID ops become one ARRAY_OIDS word; c, d and e are plain arrays.
  assert_eq!(&ops[2..14], &[op::OID, op::ARRAY_OIDS | 2 << 8, op::ARRAY, 0, op::OID, op::NUM | 1 << 8, op::ARRAY, 2, op::ARRAY_OIDS | 1 << 8, op::OID, op::ARRAY, 2]);
  // Slots in element order, two per ObjectId: a, b[0], b[1], d[0], 1, e[0][0], e[1].
  let ints01 = |i: u64| (i << 16 | i << 8 | i) | (i << 16 | i << 8 | i) << 32;
  assert_eq!([nums[0], nums[2], nums[4], nums[6]], [ints01(7), ints01(1), ints01(2), ints01(9)]);
  assert_eq!(f64::from_bits(nums[8]), 1.0);
  assert_eq!([nums[9], nums[11]], [ints01(1), ints01(8)]);
  // A tape too small: the size needed counts the collapsed words.
  let (out, big, _) = run_with(&mut DecodeCache::new(), &doc(&[(0x04, "b", arr(3))]), DEFAULT, 0);
  assert!(matches!(out, Outcome::Done(_)));
  assert_eq!(&big[2..4], &[op::ARRAY_OIDS | 3 << 8, op::OBJ_GENERIC]);
  let mut ops = vec![0u32; 3];
  let input = doc(&[(0x04, "b", arr(3))]);
  let req = Request { input: &input, index: 0, flags: DEFAULT, raw_names: None, utf8_names: &[] };
  assert!(matches!(DecodeCache::new().decode(&req, &mut ops, &mut [0u64; 2]), Outcome::NeedSpace { nums: 6, .. }));
}

#[test]
fn date_arrays() {
  let date = |ms: i64| ms.to_le_bytes().to_vec();
  // { d: [date, date], m: [oid, date], n: [date, oid] }
  let dates = doc(&[(0x09, "0", date(1)), (0x09, "1", date(-2))]);
  let m = doc(&[(0x07, "0", vec![1; 12]), (0x09, "1", date(3))]);
  let n = doc(&[(0x09, "0", date(4)), (0x07, "1", vec![2; 12])]);
  let d = doc(&[(0x04, "d", dates), (0x04, "m", m), (0x04, "n", n)]);
  let (out, ops, nums) = run_with(&mut DecodeCache::new(), &d, DEFAULT, 0);
  assert!(matches!(out, Outcome::Done(_)), "{out:?}");
  assert_eq!(&ops[2..12], &[op::ARRAY_DATES | 2 << 8, op::OID, op::DATE, op::ARRAY, 2, op::DATE, op::OID, op::ARRAY, 2, op::OBJ_GENERIC]);
  assert_eq!([f64::from_bits(nums[0]), f64::from_bits(nums[1])], [1.0, -2.0]);
  assert_eq!(f64::from_bits(nums[4]), 3.0);
}

#[test]
fn short_strings_are_cached() {
  let input = doc(&[(0x02, "a", string("x")), (0x02, "b", string("x")), (0x02, "c", string("y"))]);
  let mut cache = DecodeCache::new();
  let (out, ops, _) = run_with(&mut cache, &input, DEFAULT, 0);
  let Outcome::Done(total) = out else { panic!("{out:?}") };
  let body = ops[0] as usize;
  assert_eq!(ops[2] & 0xff, op::STR_CACHED);
  assert_eq!(ops[3], ops[2], "same string, same slot");
  assert_ne!(ops[4], ops[2]);
  let def_strs = ops[2 + body..total].iter().filter(|w| *w & 0xff == op::DEF_STR).count();
  assert_eq!(def_strs, 2);
  // Known after success: no more definitions for the values.
  let (_, ops, _) = run_with(&mut cache, &input, DEFAULT, 0);
  let body = ops[0] as usize;
  let defs = &ops[2 + body..2 + body + ops[1] as usize];
  assert!(defs.iter().all(|w| w & 0xff != op::DEF_STR));
}

#[test]
fn value_cache_collisions_within_one_document() {
  // Many distinct short strings in one document: every STR_CACHED slot must
  // be defined at most once per decode, with the string its ops expect.
  let values: Vec<String> = (0..20_000).map(|i| format!("v{i}")).collect();
  let keys: Vec<String> = (0..20_000).map(|i| format!("{i}")).collect();
  let elems: Vec<(u8, &str, Vec<u8>)> = keys.iter().zip(&values).map(|(k, v)| (0x02u8, k.as_str(), string(v))).collect();
  let arr = doc(&elems);
  let input = doc(&[(0x04, "a", arr)]);
  let mut cache = DecodeCache::new();
  for _ in 0..2 {
    let mut ops = vec![0u32; 200_000];
    let mut nums = vec![0u64; 16];
    let req = Request { input: &input, index: 0, flags: DEFAULT, raw_names: None, utf8_names: &[] };
    let Outcome::Done(total) = cache.decode(&req, &mut ops, &mut nums) else { panic!() };
    cache.commit();
    let body = ops[0] as usize;
    // Simulate JS: run definitions, then check each cached op resolves to its value.
    let spans: Vec<Span> = cache.spans().copied().collect();
    let mut slots: std::collections::HashMap<u32, Vec<u8>> = std::collections::HashMap::new();
    let mut si = 0;
    let mut pc = 2 + body;
    while pc < total {
      let w = ops[pc];
      pc += 1;
      match w & 0xff {
        op::DEF_STR => {
          let s = spans[si];
          si += 1;
          assert!(slots.insert(w >> 8, input[s.start as usize..s.end as usize].to_vec()).is_none(), "slot defined twice");
        }
        op::DEF_KEY => si += 1,
        op::DEF_SHAPE => pc += 1 + ops[pc] as usize,
        _ => panic!("unexpected def"),
      }
    }
    let mut pc = 2;
    let mut vi = 0;
    while pc < 2 + body {
      let w = ops[pc];
      pc += 1;
      match w & 0xff {
        op::STR_CACHED => {
          if let Some(v) = slots.get(&(w >> 8)) {
            assert_eq!(v, values[vi].as_bytes());
          }
          vi += 1;
        }
        op::STR => {
          let s = spans[si];
          si += 1;
          assert_eq!(&input[s.start as usize..s.end as usize], values[vi].as_bytes());
          vi += 1;
        }
        op::ARRAY => pc += 1,
        op::OBJ | op::OBJ_GENERIC => {
          if w & 0xff == op::OBJ_GENERIC {
            pc += 1 + ops[pc] as usize;
          }
        }
        other => panic!("unexpected op {other}"),
      }
    }
    assert_eq!(vi, values.len());
  }
}

#[test]
fn failed_decode_does_not_mark_known() {
  let good = doc(&[(0x10, "zz", 1i32.to_le_bytes().to_vec())]);
  let mut bad = doc(&[(0x10, "zz", 1i32.to_le_bytes().to_vec()), (0x08, "b", vec![7])]);
  let mut cache = DecodeCache::new();
  assert!(matches!(run_with(&mut cache, &bad, DEFAULT, 0).0, Outcome::Error(_)));
  let (out, ops, _) = run_with(&mut cache, &good, DEFAULT, 0);
  assert!(matches!(out, Outcome::Done(_)));
  assert!(ops[1] > 0, "key must be defined again");
  bad.clear();
}

#[test]
fn uncommitted_decode_defines_again() {
  let input = doc(&[(0x02, "k", string("v"))]);
  let mut cache = DecodeCache::new();
  let mut ops = vec![0u32; 64];
  let mut nums = vec![0u64; 8];
  let req = Request { input: &input, index: 0, flags: DEFAULT, raw_names: None, utf8_names: &[] };
  // Not committed (as when delivering the strings failed): definitions come again.
  let defs = |ops: &[u32]| -> Vec<u32> { ops[2 + ops[0] as usize..2 + (ops[0] + ops[1]) as usize].iter().map(|w| w & 0xff).collect() };
  assert!(matches!(cache.decode(&req, &mut ops, &mut nums), Outcome::Done(_)));
  assert_eq!(defs(&ops), vec![op::DEF_STR, op::DEF_KEY]);
  assert!(matches!(cache.decode(&req, &mut ops, &mut nums), Outcome::Done(_)));
  assert!(defs(&ops).contains(&op::DEF_KEY) && defs(&ops).contains(&op::DEF_STR));
  cache.commit();
  assert!(matches!(cache.decode(&req, &mut ops, &mut nums), Outcome::Done(_)));
  assert!(defs(&ops).is_empty());
}

#[test]
fn rich_document_decodes() {
  let input = rich();
  assert!(matches!(run(&input), Outcome::Done(_)), "{:?}", run(&input));
}

#[test]
fn header_errors() {
  assert_eq!(err(&[]), "bson size must be >= 5, is 0");
  assert_eq!(err(&[5, 0]), "buffer length 2 must === bson size 5");
  assert_eq!(err(&[6, 0, 0, 0, 0]), "buffer length 5 must === bson size 6");
  assert_eq!(err(&[5, 0, 0, 0, 1]), "One object, sized correctly, with a spot for an EOO, but the EOO isn't 0x00");
  assert_eq!(err(&[0xff, 0xff, 0xff, 0x7f, 0]), "buffer length 5 must === bson size 2147483647");
  assert_eq!(err(&[0xff, 0xff, 0xff, 0xff, 0]), "bson size must be >= 5, is -1");
  let mut c = DecodeCache::new();
  let input = doc(&[]);
  let mut padded = vec![9u8; 3];
  padded.extend(&input);
  padded.extend([1, 2]);
  let (out, _, _) = run_with(&mut c, &padded, DEFAULT | flag::ALLOW_SMALLER, 3);
  assert!(matches!(out, Outcome::Done(_)));
  let (out, _, _) = run_with(&mut c, &padded, DEFAULT, 3);
  assert_eq!(out, Outcome::Error(DecodeError::Bson("buffer length 10 must === bson size 5".into())));
}

#[test]
fn element_errors() {
  assert_eq!(err(&doc(&[(0x08, "b", vec![2])])), "illegal boolean type value");
  assert_eq!(err(&doc(&[(0x02, "s", vec![0, 0, 0, 0, 0])])), "bad string length in bson");
  assert_eq!(err(&doc(&[(0x02, "s", vec![9, 0, 0, 0, 0])])), "bad string length in bson");
  assert_eq!(err(&doc(&[(0x14, "k", vec![])])), "Detected unknown BSON type 14 for fieldname \"k\"");
  assert_eq!(err(&doc(&[(0x03, "o", vec![4, 0, 0, 0, 0])])), "bad embedded document length in bson");
  assert_eq!(err(&doc(&[(0x04, "o", vec![40, 0, 0, 0, 0])])), "bad embedded array length in bson");
  assert_eq!(err(&doc(&[(0x05, "b", vec![0xff, 0xff, 0xff, 0xff, 0])])), "Negative binary type element size found");
  assert_eq!(err(&doc(&[(0x02, "s", string_bytes(&[0xff]))])), "Invalid UTF-8 string in BSON document");
  // An ObjectId whose 12 bytes run past the end: js-bson reads undefined, then fails on the next key.
  let mut d = doc(&[(0x07, "a", vec![1, 2, 3, 4])]);
  assert_eq!(err(&d), "Bad BSON Document: illegal CString");
  d = doc(&[(0x11, "a", vec![1, 2, 3, 4])]);
  assert_eq!(err(&d), "Timestamp constructed from { t, i } must provide a positive t");
  d = doc(&[(0x12, "a", vec![1, 2, 3, 4])]);
  let out = run_with(&mut DecodeCache::new(), &d, DEFAULT | flag::USE_BIGINT64, 0).0;
  assert!(matches!(out, Outcome::Error(DecodeError::Range(_))));
  // Nested doc whose terminator is not where its length says.
  let inner = vec![6, 0, 0, 0, 0, 0];
  assert_eq!(err(&doc(&[(0x03, "o", inner)])), "Bad BSON Document: object not properly terminated");
  let inner = vec![6, 0, 0, 0, 0, 0];
  assert_eq!(err(&doc(&[(0x04, "o", inner)])), "corrupted array bson");
}

fn string_bytes(b: &[u8]) -> Vec<u8> {
  let mut v = ((b.len() + 1) as i32).to_le_bytes().to_vec();
  v.extend_from_slice(b);
  v.push(0);
  v
}

#[test]
fn lossy_when_validation_off() {
  let d = doc(&[(0x02, "s", string_bytes(&[0xff, b'a']))]);
  let mut c = DecodeCache::new();
  let (out, _, _) = run_with(&mut c, &d, flag::PROMOTE_LONGS | flag::PROMOTE_VALUES, 0);
  assert!(matches!(out, Outcome::Done(_)));
  assert!(c.spans().any(|s| s.kind == utf8::LOSSY));
}

#[test]
fn counting_mode_reports_sizes() {
  let mut elems = Vec::new();
  let keys: Vec<String> = (0..100).map(|i| format!("k{i}")).collect();
  for k in &keys {
    elems.push((0x01u8, k.as_str(), 1.0f64.to_le_bytes().to_vec()));
  }
  let input = doc(&elems);
  let mut c = DecodeCache::new();
  let mut ops = vec![0u32; 8];
  let mut nums = vec![0u64; 4];
  let req = Request { input: &input, index: 0, flags: DEFAULT, raw_names: None, utf8_names: &[] };
  let out = c.decode(&req, &mut ops, &mut nums);
  let Outcome::NeedSpace { ops: need_ops, nums: need_nums } = out else { panic!("{out:?}") };
  assert_eq!(need_nums, 100);
  assert_eq!(ops[0] as usize, need_ops);
  assert_eq!(ops[1] as usize, need_nums);
  // A retry may need a little more (the shape can become a factory), never a panic.
  let mut ops = vec![0u32; need_ops + 200];
  let mut nums = vec![0u64; need_nums];
  assert!(matches!(c.decode(&req, &mut ops, &mut nums), Outcome::Done(_)));
  // Errors win over counting.
  let mut bad = input.clone();
  let n = bad.len();
  bad[n - 10] = 0x08;
  let req = Request { input: &bad, index: 0, flags: DEFAULT, raw_names: None, utf8_names: &[] };
  assert!(matches!(c.decode(&req, &mut [0u32; 4], &mut []), Outcome::Error(_)));
}

#[test]
fn truncations_never_panic() {
  let input = rich();
  let mut c = DecodeCache::new();
  for cut in 0..input.len() {
    let (out, _, _) = run_with(&mut c, &input[..cut], DEFAULT, 0);
    assert!(matches!(out, Outcome::Error(_)), "cut {cut}: {out:?}");
    // Same prefix with a fixed-up length and terminator.
    let mut fixed = input[..cut].to_vec();
    if cut >= 5 {
      let l = fixed.len() as i32;
      fixed[..4].copy_from_slice(&l.to_le_bytes());
      let last = fixed.len() - 1;
      fixed[last] = 0;
      for flags in [DEFAULT, DEFAULT | flag::USE_BIGINT64 | flag::RAW, flag::BSON_REGEXP] {
        let _ = run_with(&mut c, &fixed, flags, 0);
      }
    }
  }
}

#[test]
fn mutations_never_panic() {
  let input = rich();
  let mut c = DecodeCache::new();
  let mut seed = 0x9e3779b97f4a7c15u64;
  for _ in 0..20_000 {
    let mut m = input.clone();
    for _ in 0..3 {
      seed ^= seed << 13;
      seed ^= seed >> 7;
      seed ^= seed << 17;
      let pos = (seed as usize) % m.len();
      m[pos] = (seed >> 32) as u8;
    }
    let _ = run_with(&mut c, &m, DEFAULT, 0);
  }
}

#[test]
fn deep_nesting_is_iterative() {
  let depth = 100_000;
  // {a: {a: {... {} }}}
  let mut d = doc(&[]);
  for _ in 0..depth {
    d = doc(&[(0x03, "a", d)]);
  }
  let mut ops = vec![0u32; depth * 2 + 64];
  let req = Request { input: &d, index: 0, flags: DEFAULT, raw_names: None, utf8_names: &[] };
  assert!(matches!(DecodeCache::new().decode(&req, &mut ops, &mut []), Outcome::Done(_)));
}

#[test]
fn caches_stay_bounded() {
  let mut c = DecodeCache::new();
  // 32 new keys per document, each document decoded four times (so three
  // quarters of the key lookups hit and the key table does not go cold): it
  // fills within RESET_INTERVAL decodes.
  for i in 0..2_200u32 {
    let keys: Vec<String> = (0..32).map(|j| format!("key{i}_{j}")).collect();
    let elems: Vec<(u8, &str, Vec<u8>)> = keys.iter().map(|k| (0x0Au8, k.as_str(), vec![])).collect();
    let d = doc(&elems);
    for _ in 0..4 {
      let (out, _, _) = run_with(&mut c, &d, DEFAULT, 0);
      assert!(matches!(out, Outcome::Done(_)));
    }
    assert!(c.keys.len() <= crate::keys::MAX_KEYS);
    assert!(c.shapes.nodes.len() <= crate::shapes::MAX_NODES);
  }
  assert!(c.keys.is_full() || c.shapes.is_full());
  // Past the bounds keys are inline strings.
  let d = doc(&[(0x0A, "never-seen", vec![])]);
  let (out, ops, _) = run_with(&mut c, &d, DEFAULT, 0);
  assert!(matches!(out, Outcome::Done(_)));
  assert_eq!(&ops[2..2 + ops[0] as usize], &[op::NULL, op::OBJ_GENERIC, 1, 0]);
  // After RESET_INTERVAL decodes in all, the full caches start over.
  for _ in 0..RESET_INTERVAL {
    run_with(&mut c, &d, DEFAULT, 0);
  }
  assert!(c.keys.len() < 10);
  let (_, ops, _) = run_with(&mut c, &d, DEFAULT, 0);
  // The key has an id again and its shape a factory.
  assert_eq!(&ops[2..2 + ops[0] as usize], &[op::NULL, op::OBJ]);
}

#[test]
fn number_runs() {
  let elems: Vec<(u8, String, Vec<u8>)> = (0..5).map(|i| (0x10u8, format!("{i}"), (i as i32).to_le_bytes().to_vec())).collect();
  let elems: Vec<(u8, &str, Vec<u8>)> = elems.iter().map(|(t, k, v)| (*t, k.as_str(), v.clone())).collect();
  let d = doc(&[(0x04, "a", doc(&elems)), (0x01, "b", 1.5f64.to_le_bytes().to_vec()), (0x0A, "c", vec![]), (0x10, "d", 1i32.to_le_bytes().to_vec())]);
  let (out, ops, nums) = run_with(&mut DecodeCache::new(), &d, DEFAULT, 0);
  assert!(matches!(out, Outcome::Done(_)));
  // An array of 5 numbers, then a run of 1 (b), NULL, a run of 1 (d).
  assert_eq!(&ops[2..7], &[op::ARRAY_INTS | 5 << 8, op::NUM | 1 << 8, op::NULL, op::NUM | 1 << 8, op::OBJ_GENERIC]);
  assert_eq!(f64::from_bits(nums[4]), 4.0);
  assert_eq!(f64::from_bits(nums[5]), 1.5);
  // A run that starts before the array is cut: {x: 1, a: [2, 3]} and an array after a string.
  let d = doc(&[(0x10, "x", 1i32.to_le_bytes().to_vec()), (0x04, "a", doc(&[(0x10, "0", 2i32.to_le_bytes().to_vec()), (0x10, "1", 3i32.to_le_bytes().to_vec())])), (0x04, "b", doc(&[(0x02, "0", string("s")), (0x10, "1", 3i32.to_le_bytes().to_vec())])), (0x04, "c", doc(&[]))]);
  let (out, ops, _) = run_with(&mut DecodeCache::new(), &d, DEFAULT, 0);
  assert!(matches!(out, Outcome::Done(_)));
  assert_eq!(&ops[2..11], &[op::NUM | 1 << 8, op::ARRAY_INTS | 2 << 8, op::STR_CACHED | (ops[4] & !0xff), op::NUM | 1 << 8, op::ARRAY, 2, op::ARRAY, 0, op::OBJ_GENERIC]);
  // Mixed ints and doubles: ARRAY_NUMS; ints after a double in the parent: ARRAY_INTS.
  let mixed = doc(&[(0x10, "0", 1i32.to_le_bytes().to_vec()), (0x01, "1", 1.5f64.to_le_bytes().to_vec())]);
  let ints = doc(&[(0x10, "0", 1i32.to_le_bytes().to_vec())]);
  let d2 = doc(&[(0x04, "m", mixed), (0x01, "x", 2.5f64.to_le_bytes().to_vec()), (0x04, "i", ints)]);
  let (_, ops, _) = run_with(&mut DecodeCache::new(), &d2, DEFAULT, 0);
  assert_eq!(&ops[2..6], &[op::ARRAY_NUMS | 2 << 8, op::NUM | 1 << 8, op::ARRAY_INTS | 1 << 8, op::OBJ_GENERIC]);
  // With a tiny tape the run still counts right.
  let mut ops = vec![0u32; 3];
  let req = Request { input: &d, index: 0, flags: DEFAULT, raw_names: None, utf8_names: &[] };
  assert!(matches!(DecodeCache::new().decode(&req, &mut ops, &mut [0u64; 2]), Outcome::NeedSpace { nums: 4, .. }));
}

#[test]
fn dbref_candidates() {
  let d = doc(&[(0x02, "$ref", string("c")), (0x0A, "$id", vec![]), (0x0A, "x", vec![])]);
  let (out, ops, _) = run_with(&mut DecodeCache::new(), &d, DEFAULT, 0);
  assert!(matches!(out, Outcome::Done(_)));
  assert_eq!(ops[2 + 3] & 0xff, op::OBJ_GENERIC_DBREF);
  let d = doc(&[(0x02, "$ref", string("c")), (0x0A, "$idx", vec![])]);
  let (_, ops, _) = run_with(&mut DecodeCache::new(), &d, DEFAULT, 0);
  assert_eq!(ops[2 + 2] & 0xff, op::OBJ_GENERIC);
}

#[test]
fn long_promotion() {
  for (v, expect) in [(1i64 << 53, op::NUM), ((1i64 << 53) + 1, op::LONG_OBJ), (-(1i64 << 53), op::NUM), (-(1i64 << 53) - 1, op::LONG_OBJ), (i64::MIN, op::LONG_OBJ)] {
    let d = doc(&[(0x12, "l", v.to_le_bytes().to_vec())]);
    let (_, ops, nums) = run_with(&mut DecodeCache::new(), &d, DEFAULT, 0);
    assert_eq!(ops[2] & 0xff, expect, "{v}");
    if expect == op::NUM {
      assert_eq!(f64::from_bits(nums[0]), v as f64);
    }
  }
}

/// A NUM op counts at most ARG_MAX numbers (its 24-bit arg): a batch that
/// does not fit the run before starts a run of its own, and a batch stops at
/// ARG_MAX numbers.
#[test]
fn number_runs_split_at_the_op_arg_limit() {
  use super::tape::{Tape, ARG_MAX};
  let mut ops = vec![0u32; 8];
  let mut nums = vec![0u64; 4];
  let mut t = Tape::new(&mut ops, 2, &mut nums);
  t.number(7, true);
  let mut left = ARG_MAX + 3;
  let mut batches = Vec::new();
  while left > 0 {
    batches.push(t.numbers(true, || {
      left = left.checked_sub(1)?;
      Some(1)
    }));
  }
  assert_eq!(batches, [ARG_MAX, 3]);
  assert_eq!((t.w, t.n), (5, 1 + ARG_MAX as usize + 3));
  assert_eq!(&ops[2..5], &[op::NUM | 1 << 8, op::NUM | ARG_MAX << 8, op::NUM | 3 << 8]);
  // (the slots past the scratch are counted, not written)
  assert_eq!(nums, [7, 1, 1, 1]);
}

/// Array element names are not read, only skipped (js-bson): a run of
/// numbers checks each name's end where the element's index would put it
/// (IndexNames) and must find it wherever it is.
#[test]
fn number_runs_skip_any_names() {
  let canonical = |i: usize| format!("{i}");
  let patterns: [(&str, &dyn Fn(usize) -> String); 5] = [
    ("canonical", &canonical),
    ("one past", &|i| format!("{}", i + 1)),
    ("padded", &|i| format!("{i:03}")),
    ("letters", &|i| ["", "x", "yy", "zzzzzzzz", "long name of many bytes"][i % 5].to_string()),
    ("mixed", &|i| if i % 7 == 3 { format!("k{i}") } else { canonical(i) }),
  ];
  for n in [1usize, 9, 10, 11, 99, 100, 101, 1001] {
    // each array starts with a string, so that the run starts at index 1 too
    for lead in [false, true] {
      for et in [0x10u8, 0x01] {
        let value = |i: usize| if et == 0x10 { (i as i32 * 3 - 7).to_le_bytes().to_vec() } else { (i as f64 * 0.25 - 1.0).to_le_bytes().to_vec() };
        let make = |name: &dyn Fn(usize) -> String| {
          let names: Vec<String> = (0..n + lead as usize).map(name).collect();
          let elems: Vec<(u8, &str, Vec<u8>)> = names
            .iter()
            .enumerate()
            .map(|(i, k)| if lead && i == 0 { (0x02u8, k.as_str(), string("s")) } else { (et, k.as_str(), value(i)) })
            .collect();
          doc(&[(0x04, "a", doc(&elems)), (0x10, "after", 5i32.to_le_bytes().to_vec())])
        };
        let (_, want_ops, want_nums) = run_with(&mut DecodeCache::new(), &make(&canonical), DEFAULT, 0);
        for (label, name) in &patterns {
          let (out, ops, nums) = run_with(&mut DecodeCache::new(), &make(name), DEFAULT, 0);
          assert!(matches!(out, Outcome::Done(_)), "{label} n {n} lead {lead} et {et}: {out:?}");
          assert!(ops == want_ops && nums == want_nums, "{label} n {n} lead {lead} et {et}");
        }
      }
    }
  }
}

#[test]
#[ignore]
fn speed_probe() {
  let mut elems = Vec::new();
  let keys: Vec<String> = (0..10).map(|i| format!("field{i}")).collect();
  for (i, k) in keys.iter().enumerate() {
    let v = match i % 3 {
      0 => (0x02u8, k.as_str(), string(&format!("value{i}"))),
      1 => (0x01u8, k.as_str(), (i as f64 * 1.5).to_le_bytes().to_vec()),
      _ => (0x10u8, k.as_str(), (i as i32).to_le_bytes().to_vec()),
    };
    elems.push(v);
  }
  let d = doc(&elems);
  let mut c = DecodeCache::new();
  let mut ops = vec![0u32; 4096];
  let mut nums = vec![0u64; 4096];
  let req = Request { input: &d, index: 0, flags: DEFAULT, raw_names: None, utf8_names: &[] };
  for _ in 0..1000 {
    c.decode(&req, &mut ops, &mut nums);
    c.commit();
  }
  eprintln!("flat10: {:.1} ns/decode", ns_per_decode(&mut c, &req, &mut ops, &mut nums, 2_000_000));
  let e = doc(&[]);
  let req = Request { input: &e, index: 0, flags: DEFAULT, raw_names: None, utf8_names: &[] };
  eprintln!("empty: {:.1} ns/decode", ns_per_decode(&mut c, &req, &mut ops, &mut nums, 2_000_000));
  // (arrays of 1,000 numbers, ObjectIds and dates: speed_ints)
}

#[test]
#[ignore]
fn speed_ints() {
  // An array of 1,000 elements of one type, per kind: ns a decode.
  let keys: Vec<String> = (0..1000).map(|i| format!("{i}")).collect();
  // (name, element type, the value of element i)
  type Kind = (&'static str, u8, fn(usize) -> Vec<u8>);
  let kinds: [Kind; 4] = [
    ("int32x1000", 0x10, |i| (i as i32).to_le_bytes().to_vec()),
    ("doublex1000", 0x01, |i| (i as f64 + 0.5).to_le_bytes().to_vec()),
    ("oidx1000", 0x07, |i| vec![(i % 251) as u8 + 1; 12]),
    ("datex1000", 0x09, |i| vec![(i % 251) as u8 + 1; 8]),
  ];
  let mut c = DecodeCache::new();
  let mut ops = vec![0u32; 4096];
  let mut nums = vec![0u64; 4096];
  for (name, et, value) in kinds {
    let elems: Vec<(u8, &str, Vec<u8>)> = keys.iter().enumerate().map(|(i, k)| (et, k.as_str(), value(i))).collect();
    let a = doc(&[(0x04, "a", doc(&elems))]);
    let req = Request { input: &a, index: 0, flags: DEFAULT, raw_names: None, utf8_names: &[] };
    eprintln!("{name}: {:.1} ns/decode", ns_per_decode(&mut c, &req, &mut ops, &mut nums, 200_000));
  }
}

/// The speed tests' timing: `n` decodes (each committed) of `req`, ns a decode.
fn ns_per_decode(c: &mut DecodeCache, req: &Request, ops: &mut [u32], nums: &mut [u64], n: u32) -> f64 {
  let t = std::time::Instant::now();
  for _ in 0..n {
    c.decode(req, ops, nums);
    c.commit();
  }
  t.elapsed().as_nanos() as f64 / f64::from(n)
}

/// Found by `fuzz/` (decode): the retry after `NeedSpace` counts the document's
/// key sequence once more, so it can get its factory then and need one word
/// more than the first attempt asked for. One retry must always suffice.
#[test]
fn one_retry_after_need_space_suffices() {
  for n in [1usize, 2, 5, 40] {
    let elems: Vec<(u8, String, Vec<u8>)> = (0..n).map(|i| (0x08u8, format!("k{i}"), vec![0u8])).collect();
    let refs: Vec<(u8, &str, Vec<u8>)> = elems.iter().map(|(t, k, v)| (*t, k.as_str(), v.clone())).collect();
    let input = doc(&refs);
    let mut cache = DecodeCache::new();
    for round in 0..4 {
      for flags in [0, DEFAULT] {
        let req = Request { input: &input, index: 0, flags, raw_names: None, utf8_names: &[] };
        let mut ops = vec![0u32; 1];
        let mut nums = vec![0u64; 0];
        let out = cache.decode(&req, &mut ops, &mut nums);
        let Outcome::NeedSpace { ops: o, nums: m } = out else { panic!("{out:?}") };
        let mut ops = vec![0u32; o];
        let mut nums = vec![0u64; m];
        let out = cache.decode(&req, &mut ops, &mut nums);
        assert!(matches!(out, Outcome::Done(_)), "n {n} round {round} flags {flags}: {out:?}");
        if round % 2 == 1 {
          cache.commit();
        }
      }
    }
  }
}

fn err_with(input: &[u8], flags: u32) -> String {
  match run_with(&mut DecodeCache::new(), input, flags, 0).0 {
    Outcome::Error(DecodeError::Bson(m)) => m,
    other => panic!("expected a BSON error, got {other:?}"),
  }
}

#[test]
fn recursive_mode_gives_the_recursive_readers_messages() {
  let recursive = DEFAULT | flag::RECURSIVE;
  // {a: {b: 1}, c: 1} whose inner document claims one byte more than it has
  let mut bytes = doc(&[(0x03, "a", doc(&[(0x10, "b", 1i32.to_le_bytes().to_vec())])), (0x10, "c", 1i32.to_le_bytes().to_vec())]);
  let inner = i32::from_le_bytes([bytes[7], bytes[8], bytes[9], bytes[10]]) + 1;
  bytes[7..11].copy_from_slice(&inner.to_le_bytes());
  assert_eq!(err_with(&bytes, DEFAULT), "Bad BSON Document: object not properly terminated");
  assert_eq!(err_with(&bytes, recursive), "corrupt object bson");
  // the same for an array
  let mut arr = doc(&[(0x04, "a", doc(&[(0x10, "0", 1i32.to_le_bytes().to_vec())])), (0x10, "c", 1i32.to_le_bytes().to_vec())]);
  arr[7..11].copy_from_slice(&inner.to_le_bytes());
  assert_eq!(err_with(&arr, DEFAULT), "corrupted array bson");
  assert_eq!(err_with(&arr, recursive), "corrupt array bson");
  // an embedded document of size 4: the element's check passes, the recursive one does not
  let mut small = doc(&[(0x03, "a", doc(&[])), (0x10, "c", 1i32.to_le_bytes().to_vec())]);
  small[7..11].copy_from_slice(&4i32.to_le_bytes());
  assert_eq!(err_with(&small, DEFAULT), "bad embedded document length in bson");
  assert_eq!(err_with(&small, recursive), "corrupt bson message");
}

#[test]
fn recursive_mode_checks_the_code_w_scope_total_size_after_the_scope() {
  let recursive = DEFAULT | flag::RECURSIVE;
  let scope = doc(&[(0x10, "x", 1i32.to_le_bytes().to_vec())]);
  let code = string("f");
  let mut cws = (((4 + code.len() + scope.len()) as i32) + 1).to_le_bytes().to_vec(); // one byte too long
  cws.extend(&code);
  cws.extend(&scope);
  let bytes = doc(&[(0x0F, "c", cws)]);
  assert_eq!(err_with(&bytes, DEFAULT), "code_w_scope total size is too long, clips outer document");
  assert_eq!(err_with(&bytes, recursive), "code_w_scope total size is too long, clips outer document");
  // a scope that is itself corrupt: 7.3 reports the total size first, the recursive readers the scope
  let mut bad_scope = scope.clone();
  let n = bad_scope.len() as i32 + 1;
  bad_scope[0..4].copy_from_slice(&n.to_le_bytes());
  let mut cws2 = (((4 + code.len() + bad_scope.len()) as i32) + 2).to_le_bytes().to_vec();
  cws2.extend(&code);
  cws2.extend(&bad_scope);
  let bytes2 = doc(&[(0x0F, "c", cws2), (0x10, "z", 1i32.to_le_bytes().to_vec())]);
  assert_eq!(err_with(&bytes2, DEFAULT), "code_w_scope total size is too long, clips outer document");
  assert_eq!(err_with(&bytes2, recursive), "corrupt object bson");
}

#[test]
fn recursive_mode_makes_a_dbref_of_a_scope_that_looks_like_one() {
  let scope = doc(&[(0x02, "$ref", string("c")), (0x10, "$id", 1i32.to_le_bytes().to_vec()), (0x10, "x", 2i32.to_le_bytes().to_vec())]);
  let bytes = doc(&[(0x0F, "c", code_w_scope("f", &scope))]);
  // the op that builds the scope: the first object op (the scope closes
  // before the root; the key words after an op here are ids below 0x20)
  let scope_op = |flags: u32| {
    let (out, ops, _) = run_with(&mut DecodeCache::new(), &bytes, flags, 0);
    assert!(matches!(out, Outcome::Done(_)));
    ops.iter().map(|&w| w & 0xff).find(|w| (op::OBJ..=op::OBJ_GENERIC_DBREF).contains(w)).expect("an object op")
  };
  assert!(matches!(scope_op(DEFAULT), op::OBJ | op::OBJ_GENERIC));
  assert!(matches!(scope_op(DEFAULT | flag::RECURSIVE), op::OBJ_DBREF | op::OBJ_GENERIC_DBREF));
}

#[test]
fn recursive_mode_reads_a_scope_in_a_raw_array_raw() {
  // {arr: [code_w_scope('f', {d: {e: 1}})]} with fieldsAsRaw {arr: 1}
  let scope = doc(&[(0x03, "d", doc(&[(0x10, "e", 1i32.to_le_bytes().to_vec())]))]);
  let bytes = doc(&[(0x04, "arr", doc(&[(0x0F, "0", code_w_scope("f", &scope))]))]);
  let names = [b"arr".to_vec()];
  let has_raw = |flags: u32| {
    let mut ops = vec![0u32; 4096];
    let mut nums = vec![0u64; 4096];
    let req = Request { input: &bytes, index: 0, flags, raw_names: Some(&names), utf8_names: &[] };
    assert!(matches!(DecodeCache::new().decode(&req, &mut ops, &mut nums), Outcome::Done(_)));
    ops.iter().any(|&w| w & 0xff == op::RAW)
  };
  assert!(!has_raw(DEFAULT));
  assert!(has_raw(DEFAULT | flag::RECURSIVE));
}

#[test]
fn few_short_ascii_strings_are_left_to_js() {
  let mut cache = DecodeCache::new();
  // (value strings longer than VCACHE_MAX_LEN: never served from the value cache)
  let xs = "x".repeat(VCACHE_MAX_LEN + 1);
  let zs = "z".repeat(VCACHE_MAX_LEN + 2);
  // first decode: the keys are definitions (key-table strings), so nothing is left to JS
  let input = doc(&[(0x02, "a", string(&xs)), (0x02, "b", string(&zs))]);
  let (out, mut ops, _) = run_with(&mut cache, &input, DEFAULT, 0);
  let Outcome::Done(total) = out else { panic!() };
  assert_eq!(cache.write_js_spans(&mut ops, total), 0);
  // known keys now: two ASCII value strings, as (start, end) pairs after the tape
  let (out, mut ops, _) = run_with(&mut cache, &input, DEFAULT, 0);
  let Outcome::Done(total) = out else { panic!() };
  assert_eq!(cache.write_js_spans(&mut ops, total), 2);
  let pairs: Vec<&[u8]> = ops[total..total + 4].chunks(2).map(|p| &input[p[0] as usize..p[1] as usize]).collect();
  assert_eq!(pairs, [xs.as_bytes(), zs.as_bytes()]);
  // no room after the tape: the usual way
  assert_eq!(cache.write_js_spans(&mut ops[..total + 3], total), 0);
  // a non-ASCII string, more than JS_SPANS_MAX strings, or a long one: the usual way
  let long = "y".repeat(JS_SPAN_MAX_LEN as usize + 1);
  let five: Vec<(u8, &str, Vec<u8>)> = (0..5).map(|_| (0x02, "a", string(&xs))).collect();
  for input in [doc(&[(0x02, "a", string(&format!("é{xs}"))), (0x02, "b", string(&zs))]), doc(&five), doc(&[(0x02, "a", string(&long))])] {
    let (out, mut ops, _) = run_with(&mut cache, &input, DEFAULT, 0);
    let Outcome::Done(total) = out else { panic!() };
    assert_eq!(cache.write_js_spans(&mut ops, total), 0);
  }
}
