#!/usr/bin/env bash
# Builds the browser playground (docs/playground.md) into target/playground: the simulator
# compiled to WebAssembly (crates/wasm, for wasm32-unknown-unknown; no wasm-bindgen, the
# glue is web/glue.js) beside the static page of web/. `schedlab serve` serves that
# directory; any static web server does. Called by scripts/setup-test-deps.sh, so CI's
# browser test (crates/cli/tests/playground.rs) finds it built.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
target="${CARGO_TARGET_DIR:-$root/target}"
out="$target/playground"
say() { printf 'build-playground: %s\n' "$*"; }

if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
    say "adding the Rust target wasm32-unknown-unknown (rustup)…"
    rustup target add wasm32-unknown-unknown
fi
say "building crates/wasm for wasm32-unknown-unknown (release)…"
# Without debug info: the module the page downloads is then about 2 MB.
(cd "$root" && CARGO_PROFILE_RELEASE_DEBUG=0 cargo build --quiet --release --target wasm32-unknown-unknown -p schedlab-wasm)
# Written beside, then swapped in, so a server never serves half a playground.
rm -rf "$out.new"
mkdir -p "$out.new"
cp "$root"/web/*.html "$root"/web/*.js "$root"/web/*.css "$out.new/"
cp "$target/wasm32-unknown-unknown/release/schedlab_wasm.wasm" "$out.new/schedlab.wasm"
rm -rf "$out"
mv "$out.new" "$out"
say "built $out ($(du -sh "$out" | cut -f1)); serve it with: schedlab serve"
