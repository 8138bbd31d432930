#!/usr/bin/env bash
# seed.sh [OUT]: regenerates the seed corpora of every fuzz target in OUT
# (default fuzz/seeds, which git ignores), one folder per target. Nothing
# binary is committed: every seed is made here, from
#   - the synthetic job builder and hand-laid synthetic targets, checked to
#     decode as intended (examples/make_seeds/);
#   - real cores: qemu-user guest cores of foreign CPUs
#     (tests/qemu/make-cores.sh) and a gcore core of a live MPIR starter
#     (tests/live/mpir_table.c), shrunk to their headers, notes and small
#     segments, each with its executable;
#   - objects built with gcc -g: the type-oracle fixture for several CPUs,
#     DWARF versions and name indexes, and pieces of the reference MPICH
#     (two members of its libmpi.a linked alone, and libtvmpich.so);
#   - the reference MPICH's real offsets for the queue decoder's layout
#     and for the handle objects;
#   - the reference Open MPI's real offsets for ob1's structures and for its
#     handle objects.
#
# Needs what scripts/test.sh installs (gcc and the cross compilers,
# qemu-user, gdb), the reference MPICH (scripts/build-ref-mpich.sh, found
# through MPIDD_REF_MPICH or in ~/.cache/mpidd) and the reference Open MPI
# (scripts/build-ref-ompi.sh, MPIDD_REF_OMPI or ~/.cache/mpidd). A missing
# tool is an error, not a smaller corpus.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
out=${1:-$here/seeds}
mpich=${MPIDD_REF_MPICH:-$HOME/.cache/mpidd/mpich-4.0.2}
ompi=${MPIDD_REF_OMPI:-$HOME/.cache/mpidd/openmpi-4.1.4}

die() { echo "seed.sh: error: $*" >&2; exit 1; }

cross=(i686-linux-gnu-gcc aarch64-linux-gnu-gcc arm-linux-gnueabihf-gcc
       s390x-linux-gnu-gcc powerpc-linux-gnu-gcc mips-linux-gnu-gcc)
for tool in gcc "${cross[@]}" gcore gdb-add-index objcopy strip ar cargo; do
  command -v "$tool" >/dev/null ||
    die "$tool not found (bash scripts/test.sh installs what the seeds need)"
done
for f in lib/libmpi.so lib/libmpi.a lib/libtvmpich.so; do
  [ -e "$mpich/$f" ] ||
    die "$mpich/$f not found: build the reference MPICH with scripts/build-ref-mpich.sh"
done
ompi_objects=("$ompi/lib/libmpi.so.40" "$ompi/lib/libopen-pal.so.40"
              "$ompi/lib/openmpi/mca_io_ompio.so" "$ompi/lib/openmpi/mca_pml_ob1.so")
for f in "${ompi_objects[@]}"; do
  [ -e "$f" ] ||
    die "$f not found: build the reference Open MPI with scripts/build-ref-ompi.sh"
done

rm -rf "$out"
mkdir -p "$out"/{records,core_file,mpir,mpi2dd,gdb_remote_reply,type_oracle,mpich_queues,mpich_ch4_queues,ompi_ob1_queues,handles,ompi_handles,ucx_worker,python_frames,derived_layouts,layout_check,hidden_globals}
work=$(mktemp -d)
pid=
cleanup() {
  [ -z "$pid" ] || kill "$pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

cargo build --release --quiet --manifest-path "$here/Cargo.toml" --example make_seeds
# Where cargo put it: CARGO_TARGET_DIR when set (relative to here, as
# cargo reads it), else the fuzz workspace's own target directory.
target_dir="${CARGO_TARGET_DIR:-$here/target}"
case "$target_dir" in /*) ;; *) target_dir="$PWD/$target_dir" ;; esac
gen="$target_dir/release/examples/make_seeds"

echo "== synthetic seeds"
"$gen" synthetic "$out"
"$gen" mpich-real "$out" "$mpich/lib/libmpi.so"
"$gen" ompi-real "$out" "$ompi"
# derived_layouts reads what handles reads first (a process, then a layout
# of MPICH's handle objects) and ignores the rest, so the handle seeds,
# synthetic and laid out at the reference MPICH's offsets, are its seeds.
cp "$out"/handles/* "$out/derived_layouts/"

# hidden_globals reads an object file: a small stripped shared library made
# as MPICH's are (hidden globals, an allocator record whose relocated
# pointer names its direct array, exported functions that reference a
# global, the version strings beside a configure line), and the same
# library unstripped.
echo "== hidden_globals seeds"
cat >"$work/hidden.c" <<'C'
typedef struct { void *avail; int initialized; void **indirect; int indirect_size;
  int indirect_block_size; int num_allocated; int num_avail; int kind; int size;
  void *direct; int direct_size; void *lock; char pad[64]; } alloc_t;
typedef struct { int handle; int ref; char rest[1904]; } comm_t;
__attribute__((visibility("hidden"))) comm_t MPIR_Comm_direct[8];
__attribute__((visibility("hidden"))) alloc_t MPIR_Comm_mem = { 0, 0, 0, 0, 0, 0, 0, 1, sizeof(comm_t), MPIR_Comm_direct, 8, 0, {0} };
__attribute__((visibility("hidden"))) struct { int state; int rank; int size; } MPIR_Process;
const char MPII_Version_string[] __attribute__((visibility("hidden"))) = "4.3.2";
const char MPII_Version_configure[] __attribute__((visibility("hidden"))) = "--with-device=ch4:ucx,ofi";
const char MPII_Version_device[] __attribute__((visibility("hidden"))) = "ch4:ucx ofi";
const char *MPI_Get_library_version(void) { return MPIR_Process.rank ? MPII_Version_string : MPII_Version_device; }
int PMPI_Comm_rank(int c, int *r) { *r = MPIR_Process.rank + MPIR_Comm_direct[c & 7].ref; return MPIR_Comm_mem.size + MPII_Version_configure[0]; }
int PMPI_Initialized(int *f) { *f = MPIR_Process.state; return 0; }
C
gcc -O2 -g -shared -fPIC -Wl,--build-id=none -o "$out/hidden_globals/unstripped.so" "$work/hidden.c"
strip -o "$out/hidden_globals/stripped.so" "$out/hidden_globals/unstripped.so"
# layout_check reads one byte that picks Open MPI (even) or MPICH (odd),
# then what ompi_handles or handles reads: their seeds behind that byte.
for f in "$out"/ompi_handles/*; do
  { printf '\x00'; cat "$f"; } >"$out/layout_check/ompi-${f##*/}"
done
for f in "$out"/handles/*; do
  { printf '\x01'; cat "$f"; } >"$out/layout_check/mpich-${f##*/}"
done

echo "== objects with debug info"
src="$root/mpidd-read/tests/c"
oracle() {
  local name=$1 cc=$2
  shift 2
  "$cc" -g -O0 -shared -fPIC -nostdlib "$@" -o "$out/type_oracle/$name" \
    "$src/oracle_layout.c" "$src/oracle_layout_def.c"
}
oracle gcc-dwarf5 gcc
oracle gcc-dwarf4 gcc -gdwarf-4
oracle gcc-dwarf2 gcc -gdwarf-2 -gstrict-dwarf
oracle gcc-dwarf4-types gcc -gdwarf-4 -fdebug-types-section
oracle gcc-dwarf5-types gcc -gdwarf-5 -fdebug-types-section
oracle gcc-gz gcc -gz
oracle gcc-gdb-index gcc
gdb-add-index "$out/type_oracle/gcc-gdb-index"
oracle gcc-debug-names gcc
gdb-add-index -dwarf-5 "$out/type_oracle/gcc-debug-names"
objcopy --only-keep-debug "$out/type_oracle/gcc-dwarf5" "$out/type_oracle/gcc-debug-file"
strip --strip-debug -o "$out/type_oracle/gcc-stripped" "$out/type_oracle/gcc-dwarf5"
for cc in "${cross[@]}"; do
  oracle "${cc%-gcc}" "$cc"
done
# The queue decoder's types as MPICH compiles them: the debugger-support
# unit and the CH3 receive queues, each linked alone from libmpi.a (the
# whole libmpi.so is 21 MB), and MPICH's own message-queue library.
(cd "$work" && ar x "$mpich/lib/libmpi.a" \
  src_mpi_debugger_libdbginitdummy_la-dbginit.o lib_libmpi_la-ch3u_recvq.o)
gcc -shared -nostdlib -o "$out/type_oracle/mpich-dbginit.so" \
  "$work/src_mpi_debugger_libdbginitdummy_la-dbginit.o"
# Not built as PIC: linked as an executable whose undefined symbols stay
# undefined, which is all the DWARF needs.
gcc -nostdlib -static -Wl,--unresolved-symbols=ignore-all -Wl,-e,0 \
  -o "$out/type_oracle/mpich-ch3u-recvq" "$work/lib_libmpi_la-ch3u_recvq.o"
cp "$mpich/lib/libtvmpich.so" "$out/type_oracle/libtvmpich.so"

echo "== gdbserver replies"
# A split byte, a length byte, then replies in the shapes gdbserver 13
# sends: a run-length compressed memory read, an error, a library list.
frame() { python3 -c 'import sys; b=sys.argv[1].encode(); sys.stdout.write("$%s#%02x" % (sys.argv[1], sum(b) % 256))' "$1"; }
{ printf '\x07\x01+'; frame '0* 1122ff'; frame 'E14'; frame 'OK'; } >"$out/gdb_remote_reply/memory"
{ printf '\x40\x10'; frame 'l<library-list-svr4 version="1.0" main-lm="0x7f"><library name="/lib/libc.so.6" lm="0x7f1" l_addr="0x7f0000000000" l_ld="0x7f2" lmid="0x0"/></library-list-svr4>'; } >"$out/gdb_remote_reply/libraries"

echo "== real cores"
bash "$root/tests/qemu/make-cores.sh" "$work/qemu" >/dev/null
for arch in s390x powerpc armhf i686; do
  "$gen" core-input "$out/core_file/qemu-$arch" \
    "$work/qemu/mpir_target-$arch.core" "$work/qemu/mpir_target-$arch"
done
gcc -g -O0 -o "$work/mpir_table" "$root/tests/live/mpir_table.c"
"$work/mpir_table" 4 >"$work/mpir_table.out" &
pid=$!
for _ in $(seq 100); do
  grep -q '^ready$' "$work/mpir_table.out" && break
  sleep 0.1
done
grep -q '^ready$' "$work/mpir_table.out" || die "mpir_table did not get ready"
gcore -o "$work/gcore" "$pid" >/dev/null 2>&1 || die "gcore failed"
core="$work/gcore.$pid"
kill "$pid"
wait "$pid" 2>/dev/null || true
pid=
"$gen" core-input "$out/core_file/gcore-mpir-table" "$core" "$work/mpir_table"

for t in "$out"/*/; do
  printf '   %-14s %3d seeds %6d KiB\n' "$(basename "$t")" \
    "$(find "$t" -type f | wc -l)" "$(du -sk "$t" | cut -f1)"
done
