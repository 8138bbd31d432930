#!/usr/bin/env bash
# Builds the wheel of the Python module `mpidd` (mpidd-python/pyproject.toml:
# mpidd._native with PyO3 on the stable ABI, and the gdb commands of
# python/mpidd) with maturin, as manylinux_2_17 for x86_64 (zig links it, as
# scripts/build-wheel.sh links the command-line tool), then installs it with
# pip into a fresh directory, as a user's `pip install --target` would, for
# gdb's own Python to import from. Prints the wheel, then, as its last line,
# that directory:
#
#   bash scripts/build-python-module.sh | tail -n 1    # put it on gdb's sys.path
#
# Release build of the module's crates: about 3 minutes from a cold target
# directory on 2 cores, seconds warm.
set -euo pipefail
cd "$(dirname "$0")/.."

# shellcheck source=lib/maturin-venv.sh
. scripts/lib/maturin-venv.sh

die() {
  echo "build-python-module: error: $*" >&2
  exit 1
}

command -v cargo >/dev/null || die "cargo is missing: install a Rust toolchain (rustup)"
maturin_venv

target_dir="${CARGO_TARGET_DIR:-$PWD/target}"
out="$target_dir/python-module/wheels"
site="$target_dir/python-module/site"
version="$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n 1)"
[ -n "$version" ] || die "no version in the workspace's Cargo.toml"
# Only this build's wheel, and only this build installed.
rm -rf "$out" "$site"
mkdir -p "$out"

echo "== build-python-module: x86_64-unknown-linux-gnu" >&2
# maturin prints cargo's progress and its own on stderr; stdout is kept
# for the result.
maturin build --release --zig --target x86_64-unknown-linux-gnu \
  --compatibility manylinux2014 --auditwheel check \
  --manifest-path mpidd-python/Cargo.toml --out "$out" >&2 ||
  die "maturin failed (see above)"

shopt -s nullglob
wheels=("$out"/mpidd_python-"$version"-cp39-abi3-*manylinux_2_17_x86_64*.whl)
shopt -u nullglob
((${#wheels[@]} == 1)) ||
  die "expected one abi3 manylinux_2_17 x86_64 wheel of mpidd-python $version in $out, found: $(ls "$out")"

python -m pip install --quiet --disable-pip-version-check --no-index --no-deps \
  --target "$site" "${wheels[0]}" >&2 ||
  die "pip could not install ${wheels[0]} into $site"
[ -f "$site/mpidd/gdb.py" ] || die "the wheel has no mpidd/gdb.py"
ls "$site"/mpidd/_native*.so >/dev/null 2>&1 || die "the wheel has no mpidd/_native*.so"

echo "${wheels[0]}"
echo "$site"
