#!/usr/bin/env bash
# CPython's headers of the versions Debian ships beside Debian 12's 3.11:
# 3.9 (Debian 11) and 3.13 (Debian 13), unpacked from Debian's own
# libpython3.X-dev packages into a cache outside the repo. The Python frame
# reader's tables are compared with what a C compiler makes of them
# (mpidd-read/tests/python_offsets.rs). Prints the cache directory last; it
# holds one root per version (3.9/usr/include/python3.9, ...).
set -euo pipefail
cache="${XDG_CACHE_HOME:-$HOME/.cache}/mpidd/python-headers"
mkdir -p "$cache"
# The mirror this machine's apt uses (never written into the repo).
mirror="$(
  { cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null || true; } |
    awk '$1 == "deb" { for (i = 2; i <= NF; i++) if ($i ~ /^https?:/) { print $i; exit } }'
)"
if [ -z "$mirror" ]; then
  mirror="$({ cat /etc/apt/sources.list.d/*.sources 2>/dev/null || true; } |
    awk '$1 == "URIs:" && $2 !~ /security/ { print $2; exit }')"
fi
if [ -z "$mirror" ]; then
  echo "error: no Debian mirror in /etc/apt/sources.list{,.d}: cannot fetch CPython's headers" >&2
  exit 1
fi
mirror="${mirror%/}"
for pair in 3.9:bullseye 3.13:trixie; do
  version="${pair%%:*}"
  suite="${pair#*:}"
  root="$cache/$version"
  if [ -f "$root/usr/include/python$version/Python.h" ]; then
    continue
  fi
  package="libpython$version-dev"
  index="$(mktemp)"
  curl -fsSL "$mirror/dists/$suite/main/binary-amd64/Packages.xz" | xz -dc >"$index"
  file="$(awk -v p="$package" '$1 == "Package:" { hit = ($2 == p) } hit && $1 == "Filename:" { print $2; exit }' "$index")"
  rm -f "$index"
  if [ -z "$file" ]; then
    echo "error: $suite has no $package" >&2
    exit 1
  fi
  deb="$(mktemp --suffix=.deb)"
  curl -fsSL -o "$deb" "$mirror/$file"
  rm -rf "$root.tmp"
  dpkg-deb -x "$deb" "$root.tmp"
  rm -f "$deb"
  mv "$root.tmp" "$root"
done
echo "$cache"
