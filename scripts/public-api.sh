#!/usr/bin/env bash
# Lists the public items of each library crate (all features on), one per
# line, into docs/public-api/CRATE.txt, or into DIR when given:
#
#   bash scripts/public-api.sh [DIR]
#
# A diff of two such listings is the change to the public API that users
# see. rustdoc's JSON output is unstable, so RUSTC_BOOTSTRAP lets the
# stable toolchain write it.
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-docs/public-api}"
mkdir -p "$out"
doc_dir="${CARGO_TARGET_DIR:-target}/doc"
for crate in mpidd-types mpidd-read mpihandles mpiq-core mpidd-job; do
  RUSTC_BOOTSTRAP=1 cargo rustdoc --quiet -p "$crate" --all-features -- \
    -Z unstable-options --output-format json
  python3 scripts/lib/public-api.py "$doc_dir/${crate//-/_}.json" >"$out/$crate.txt"
  echo "$crate: $(wc -l <"$out/$crate.txt") public items -> $out/$crate.txt" >&2
done
