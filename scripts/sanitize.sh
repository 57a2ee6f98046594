#!/usr/bin/env bash
# Memory checks of the codec:
#   1. the core crate's tests (unit tests + the fuzz corpus/regression replay in
#      core/tests/fuzz_regressions.rs) under AddressSanitizer (needs nightly
#      features: RUSTC_BOOTSTRAP=1 on a stable toolchain);
#   2. a Node smoke test of the release addon (scripts/valgrind-smoke.js) under
#      valgrind memcheck. V8's JIT makes valgrind noisy, so errors are counted
#      separately for stacks that go through bson_rs.node (ours).
# Usage: scripts/sanitize.sh [asan|valgrind]   (default: both)
set -euo pipefail
cd "$(dirname "$0")/.."
what="${1:-all}"
status=0

if [[ "$what" == all || "$what" == asan ]]; then
  echo "== cargo test -p bson-rs-core under AddressSanitizer"
  RUSTC_BOOTSTRAP=1 RUSTFLAGS=-Zsanitizer=address RUSTDOCFLAGS=-Zsanitizer=address \
    CARGO_TARGET_DIR=target/asan \
    cargo test -p bson-rs-core --target x86_64-unknown-linux-gnu --lib --tests || status=1
fi

if [[ "$what" == all || "$what" == valgrind ]]; then
  echo "== node scripts/valgrind-smoke.js under valgrind"
  [[ -f bson_rs.node ]] || node scripts/build.js
  log=target/valgrind-smoke.log
  mkdir -p target
  # --error-exitcode is not used: V8 itself triggers (harmless) reports; ours are judged below.
  SMOKE_MUTATIONS="${SMOKE_MUTATIONS:-300}" valgrind --tool=memcheck --leak-check=no --smc-check=all-non-file \
    --num-callers=40 --log-file="$log" node scripts/valgrind-smoke.js || status=1
  total=$(grep -cE '^==[0-9]+== (Invalid|Conditional|Use of uninitialised|Syscall param|Mismatched|Source and destination)' "$log" || true)
  # An error is ours when one of its stack frames is in bson_rs.node.
  ours=$(awk '/^==[0-9]+== (Invalid|Conditional|Use of uninitialised|Syscall param|Mismatched|Source and destination)/{inerr=1; hit=0; next}
              inerr && /bson_rs/ {hit=1}
              inerr && /^==[0-9]+== $/ {if (hit) n++; inerr=0}
              END {print n+0}' "$log")
  echo "valgrind: $total error reports in total, $ours with a bson_rs.node frame (log: $log)"
  grep -E 'ERROR SUMMARY' "$log" || true
  [[ "$ours" == 0 ]] || status=1
fi
exit $status
