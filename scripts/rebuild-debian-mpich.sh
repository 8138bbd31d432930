#!/usr/bin/env bash
# Rebuilds Debian's own libmpich.so.12 (bookworm amd64, mpich 4.0.2-3+b1,
# ch4:ucx) from its source package with Debian's rules, as close to the
# buildd's build as this machine allows, and compares it with the installed
# stock library. The rebuild is kept in a cache directory outside the repo
# and made only when missing; the comparison runs every time. The cache
# directory is printed on the last line. See docs/stock-mpich.md for why
# each step is there and what the comparison showed.
#
#   MPIDD_DEBIAN_MPICH_REBUILD   cache dir (default ~/.cache/mpidd/debian-mpich-rebuild)
#
#   rebuild-debian-mpich.sh --configured-tree
#     stops once the tree is configured and MPICH's generated headers are
#     made (about 10 minutes), and prints the tree's directory instead: what
#     scripts/write-stock-mpich-profile.sh compiles its few objects in.
#
# What the cache holds:
#   libmpich.so.12.2.2        the link output, unstripped: .symtab and DWARF
#   .build-id/XX/YYY.debug    its debug file, made as dh_strip makes it
#   libmpich.so.12.2.2.stripped  the library, stripped as dh_strip strips it
#   build.log, build-runs (seconds per run), build-time, recipe
#
# The build-ids will differ: yaksa's generator writes the cases of its
# pack/unpack functions in Python set order, random in every run, and
# Debian's run cannot be replayed (docs/stock-mpich.md). What the rebuild
# is still good for is its DWARF and, if the data sections line up, its
# symbol addresses.
#
# Cost: autogen.sh and configure ~10 minutes, then about 1,400 C files
# compiled once each (the non-PIC copies Debian also builds, for
# libmpich.a, are skipped), most of them large generated yaksa files: hours
# on 2 busy cores. Not for CI. The build happens in the stock build
# directory (/build/mpich-XXXXXX/mpich-4.0.2, read from the stock library),
# which is kept: a run that is stopped is taken up by the next one where it
# stopped. A finished build is copied into the cache and the tree removed.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=lib/debian-source.sh
. "$here/lib/debian-source.sh"

cache="${MPIDD_DEBIAN_MPICH_REBUILD:-$HOME/.cache/mpidd/debian-mpich-rebuild}"
configured_only=false
if [ "${1:-}" = --configured-tree ]; then configured_only=true; fi
stock=/usr/lib/x86_64-linux-gnu/libmpich.so.12.2.2
version=4.0.2-3
# The compiler's identification in .comment is part of what the build-id
# hashes. The stock library was built on 26 Jan 2023 with gcc-12 12.2.0-14;
# bookworm now ships 12.2.0-14+deb12u1, whose only change is an AArch64
# stack-protector fix, so on amd64 the two differ in this string alone.
gcc_ident_now="GCC: (Debian 12.2.0-14+deb12u1) 12.2.0"
gcc_ident_then="GCC: (Debian 12.2.0-14) 12.2.0"
recipe="mpich $version+b1 amd64, Debian rules, build path and binNMU entry of the stock build, .comment as $gcc_ident_then, libmpich.so.12 only"

if [ "$(dpkg --print-architecture)" != amd64 ]; then
  echo "error: the stock build reproduced here is Debian's amd64 one" >&2
  exit 1
fi
ensure_packages libmpich12 binutils python3
if [ ! -e "$stock" ]; then
  echo "error: $stock is missing after installing libmpich12 (not bookworm's $version+b1?)" >&2
  exit 1
fi

if $configured_only || ! { [ -f "$cache/recipe" ] && [ "$(cat "$cache/recipe")" = "$recipe" ] && [ -f "$cache/libmpich.so.12.2.2" ]; }; then
  installed=$(dpkg-query -W -f='${Version}' libmpich12)
  [ "$installed" = "$version+b1" ] || {
    echo "error: installed libmpich12 is $installed; this recipe reproduces $version+b1" >&2
    exit 1
  }
  # Debian builds with -ffile-prefix-map=<build dir>=., and MPICH keeps its
  # compile command lines as strings (MPII_Version_CC ...): the buildd's
  # random build directory is in the library, and its length moves every
  # later byte of .rodata. Build in the same directory.
  srcdir=$(strings -a "$stock" | grep -o -- '-ffile-prefix-map=/build/mpich-[A-Za-z0-9]*/mpich-4\.0\.2=' |
    sed -e 's/^-ffile-prefix-map=//' -e 's/=$//' | sort -u)
  case "$srcdir" in
    /build/mpich-*/mpich-4.0.2) ;;
    *) echo "error: no single build path found in $stock: $srcdir" >&2; exit 1 ;;
  esac
  top=$(dirname "$srcdir")

  ensure_deb_src
  ensure_packages dpkg-dev build-essential
  DEBIAN_FRONTEND=noninteractive "${as_root[@]}" apt-get build-dep -y -q --arch-only "mpich=$version" >/dev/null

  mkdir -p "$cache"
  # The build takes hours: a tree this recipe configured is built on from
  # where it stopped (make's own timestamps) rather than started again.
  goal=mpidd-libmpich
  if $configured_only; then goal=mpidd-headers; fi
  targets=clean,$goal
  if [ -f "$srcdir/debian/mpidd-configured" ] &&
    [ "$(cat "$srcdir/debian/mpidd-configured")" = "$recipe" ]; then
    targets=$goal
    echo "== resuming the build in $srcdir" >&2
  else
    "${as_root[@]}" rm -rf "$top"
    "${as_root[@]}" mkdir -p "$top"
    "${as_root[@]}" chown "$(id -u):$(id -g)" "$top"
    cd "$top"
    apt-get source -q --download-only "mpich=$version" >"$cache/source.log" 2>&1 || {
      cat "$cache/source.log" >&2
      echo "error: apt-get source mpich=$version failed" >&2
      exit 1
    }
    dpkg-source -x -q "mpich_$version.dsc" "$(basename "$srcdir")" >>"$cache/source.log" 2>&1
    # A binNMU is built from the source with one changelog entry added on
    # top (the one the binary package ships); dpkg-buildpackage takes
    # SOURCE_DATE_EPOCH from it.
    { zcat /usr/share/doc/libmpich12/changelog.Debian.amd64.gz; echo; cat "$srcdir/debian/changelog"; } \
      >"$srcdir/debian/changelog.new"
    mv "$srcdir/debian/changelog.new" "$srcdir/debian/changelog"
    rm -f "$cache/build.log" "$cache/build-runs"
  fi
  cd "$srcdir"

  # gcc finds `as` and collect2 finds `ld` through COMPILER_PATH first: these
  # put gcc-12 12.2.0-14's identification where 12.2.0-14+deb12u1 writes its
  # own (see above), in the objects and in gcc's start files.
  fix="$cache/identfix"
  rm -rf "$fix"
  mkdir -p "$fix"
  cp "$here/lib/elf-comment.py" "$fix/"
  for f in crtbeginS.o crtendS.o; do
    python3 "$fix/elf-comment.py" "$gcc_ident_now" "$gcc_ident_then" "/usr/lib/gcc/x86_64-linux-gnu/12/$f" "$fix/$f"
  done
  cat >"$fix/as" <<EOF
#!/bin/bash
for a in "\$@"; do
  case "\$a" in
    *.s) [ -f "\$a" ] && sed -i 's/^\t\.ident\t"$gcc_ident_now"\$/\t.ident\t"$gcc_ident_then"/' "\$a" ;;
  esac
done
exec /usr/bin/as "\$@"
EOF
  cat >"$fix/ld" <<EOF
#!/bin/bash
args=()
for a in "\$@"; do
  case "\$a" in
    /usr/lib/gcc/x86_64-linux-gnu/12/crtbeginS.o|/usr/lib/gcc/x86_64-linux-gnu/12/crtendS.o) args+=("$fix/\${a##*/}") ;;
    *) args+=("\$a") ;;
  esac
done
exec /usr/bin/ld "\${args[@]}"
EOF
  chmod +x "$fix/as" "$fix/ld"

  # dh's own sequence for build-arch up to configure (dh has no --until any
  # more), as in the log of a full dpkg-buildpackage -B: autogen.sh and
  # Debian's configure options. Then only what libmpich.so.12 is linked
  # from, with debhelper's environment. Debian's libtool also compiles every
  # file a second time without -fPIC for libmpich.a; that copy is not in the
  # shared library and is skipped (build_old_libs=no after configure).
  cat >"$cache/libmpich.mk" <<EOF
debian/mpidd-configured:
	dh_testdir
	dh_update_autotools_config -a
	\$(MAKE) -f debian/rules override_dh_autoreconf
	\$(MAKE) -f debian/rules override_dh_auto_configure
	for f in libtool modules/yaksa/libtool modules/json-c/libtool src/mpl/libtool src/mpi/romio/libtool; do \\
	  sed -i '0,/^build_old_libs=yes\$\$/s//build_old_libs=no/' \$\$f; done
	printf '%s\\n' '$recipe' >\$@

mpidd-headers: debian/mpidd-configured
	dh_auto_build -a -- ./src/include/mpio.h src/include/mpir_ext.h

mpidd-libmpich: mpidd-headers
	dh_auto_build -a -D src/mpl
	dh_auto_build -a -D modules/json-c
	dh_auto_build -a -D modules/yaksa
	dh_auto_build -a -D src/mpi/romio
	dh_auto_build -a -- lib/libmpich.la
EOF
  # -T runs only the named targets, in dpkg-buildpackage's environment
  # (SOURCE_DATE_EPOCH from the changelog, the DEB_* variables). -d: -T
  # checks the -indep build dependencies too (TeX, for the manuals), which
  # this build does not need.
  start=$(date +%s)
  env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LC_ALL=C.UTF-8 HOME=/nonexistent \
    COMPILER_PATH="$fix" DEB_BUILD_OPTIONS="nocheck parallel=$(nproc)" \
    nice -n 10 dpkg-buildpackage -B -d -uc -us -R"make -f debian/rules -f $cache/libmpich.mk" -T"$targets" \
    >>"$cache/build.log" 2>&1 || {
    echo "$(($(date +%s) - start))" >>"$cache/build-runs"
    tail -n 40 "$cache/build.log" >&2
    echo "error: the build failed or was stopped; its log is $cache/build.log; run again to go on" >&2
    exit 1
  }
  end=$(date +%s)
  if $configured_only; then
    echo "$srcdir"
    exit 0
  fi
  out="$cache/libmpich.so.12.2.2"
  cp lib/.libs/libmpich.so.12.2.2 "$out"
  # dh_strip's commands for a shared library with a debug package
  # (debhelper 13.11). The debug file goes where gdb and mpidd look for it
  # by build-id, with $cache as the debug root. Debian also runs dwz over
  # the package's three libraries (libmpich, libmpichcxx, libmpichfort)
  # with a shared multifile first; that changes only the debug file, whose
  # CRC32 the stripped library's .gnu_debuglink records: those 4 bytes are
  # the one expected difference of the stripped copy.
  id=$(readelf -n "$out" | sed -n 's/^ *Build ID: //p')
  debug="$cache/.build-id/${id:0:2}/${id:2}.debug"
  rm -rf "$cache/.build-id"
  mkdir -p "$(dirname "$debug")"
  objcopy --only-keep-debug --compress-debug-sections "$out" "$debug"
  cp "$out" "$out.stripped"
  strip --remove-section=.comment --remove-section=.note --strip-unneeded "$out.stripped"
  objcopy --add-gnu-debuglink "$debug" "$out.stripped"
  echo "$((end - start))" >>"$cache/build-runs"
  echo "$(awk '{ s += $1 } END { print s }' "$cache/build-runs") s in $(wc -l <"$cache/build-runs") run(s)" >"$cache/build-time"
  printf '%s\n' "$recipe" >"$cache/recipe"
  cd /
  "${as_root[@]}" rm -rf "$top"
fi

# The comparison: build-ids, then each loaded section's address and size,
# and the bytes that differ where the sizes agree. Matching .data,
# .data.rel.ro and .bss addresses would let the rebuild's .symtab give the
# stock library's globals (docs/stock-mpich.md).
out="$cache/libmpich.so.12.2.2"
bid() { readelf -n "$1" | sed -n 's/^ *Build ID: //p'; }
where() { readelf -S -W "$1" | awk -v s="$2" '$2 == s { print "0x" $4 " size 0x" $6 }'; }
echo "== build-id  stock:   $(bid "$stock")" >&2
echo "== build-id  rebuilt: $(bid "$out")  (built in $(cat "$cache/build-time"))" >&2
tmp=$(mktemp -d)
for s in .text .rodata .eh_frame .data.rel.ro .got .data .bss; do
  line="   $s: stock at $(where "$stock" $s), rebuilt at $(where "$out" $s)"
  if [ "$s" != .bss ] && [ "$(where "$stock" $s)" = "$(where "$out" $s)" ]; then
    objcopy -O binary --only-section="$s" "$stock" "$tmp/a"
    objcopy -O binary --only-section="$s" "$out" "$tmp/b"
    line="$line; bytes that differ: $(cmp -l "$tmp/a" "$tmp/b" 2>/dev/null | wc -l)"
  fi
  echo "$line" >&2
done
if cmp -s "$stock" "$out.stripped"; then
  echo "   the stripped rebuild is the stock file, byte for byte" >&2
else
  echo "   the stripped rebuild differs from the stock file in $(cmp -l "$stock" "$out.stripped" 2>/dev/null | wc -l) bytes (sizes $(stat -c %s "$stock") and $(stat -c %s "$out.stripped"))" >&2
fi
rm -rf "$tmp"
echo "$cache"
