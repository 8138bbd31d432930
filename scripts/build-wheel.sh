#!/usr/bin/env bash
# Builds the Python wheel of the `mpidd` command-line tool (pyproject.toml at
# the repository root; maturin's "bin" bindings: the wheel holds the binary
# and `pip install` puts it on the environment's PATH). Prints the wheels it
# built, then, as its last line, the directory that holds them:
#
#   bash scripts/build-wheel.sh          # wheels in $CARGO_TARGET_DIR/wheels
#
# The wheels are manylinux_2_17 (manylinux2014): zig links the binary against
# glibc 2.17's symbols, so the wheel installs on any glibc from 2.17 on, not
# only on this machine's; maturin's own audit fails the build if the binary
# needs anything newer or a shared library outside the manylinux set.
#
# One wheel for x86_64, and one for aarch64 when the Rust standard library of
# aarch64-unknown-linux-gnu is installed (`rustup target add
# aarch64-unknown-linux-gnu`); without it the script says so and builds
# x86_64 alone. zig links the aarch64 binary too: no cross gcc is used.
#
# maturin and zig come from the Python package index, pinned in
# scripts/lib/maturin-venv.sh, into a private virtual environment outside
# the repository, made once and made again only when a pin changes.
set -euo pipefail
cd "$(dirname "$0")/.."

# shellcheck source=lib/maturin-venv.sh
. scripts/lib/maturin-venv.sh

die() {
  echo "build-wheel: error: $*" >&2
  exit 1
}

command -v cargo >/dev/null || die "cargo is missing: install a Rust toolchain (rustup)"
maturin_venv

out="${CARGO_TARGET_DIR:-$PWD/target}/wheels"
mkdir -p "$out"
version="$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n 1)"
[ -n "$version" ] || die "no version in the workspace's Cargo.toml"
# Only this build's wheels in the directory, so that a reader of it cannot
# pick up a stale one.
rm -f "$out"/mpidd-"$version"-*.whl

targets=(x86_64-unknown-linux-gnu)
if [ -d "$(rustc --print sysroot)/lib/rustlib/aarch64-unknown-linux-gnu/lib" ]; then
  targets+=(aarch64-unknown-linux-gnu)
else
  echo "build-wheel: no aarch64 wheel: the Rust target aarch64-unknown-linux-gnu is not installed (rustup target add aarch64-unknown-linux-gnu)" >&2
fi

for target in "${targets[@]}"; do
  echo "== build-wheel: $target" >&2
  # maturin prints cargo's progress and its own on stderr; stdout is kept
  # for the result.
  maturin build --release --zig --target "$target" \
    --compatibility manylinux2014 --auditwheel check --out "$out" >&2 ||
    die "maturin failed for $target (see above)"
done

ls -1 "$out"/mpidd-"$version"-*.whl
echo "$out"
