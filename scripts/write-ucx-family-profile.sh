#!/usr/bin/env bash
# Regenerates a layout profile mpidd ships for a UCX release family, from
# upstream UCX's source at a release tag configured as Debian configures
# UCX (scripts/ucx-release-tree.sh): the layouts mpihandles' UCX readers
# ask (a UCP worker's tag matching and request pool, UCX's request, the
# headers of unexpected messages, the endpoints' requests awaiting an
# answer).
#
#   write-ucx-family-profile.sh 1.18   Debian 13's libucx0 (1.18.1+ds-2+b1,
#       amd64), named by its build-id, and the family UCX 1.18.x built as
#       Debian builds it (assertions on)
#   write-ucx-family-profile.sh 1.18-release   the family UCX 1.18.x built
#       as UCX's contrib/configure-release builds it (assertions off): the
#       UCX 1.18.1 pip's Open MPI 4.1.7, 4.1.8, 5.0.8, 5.0.9 and MPICH
#       4.3.2 wheels bundle without a build-id, placed in it by the
#       version their libucp states
#   write-ucx-family-profile.sh 1.20-release   the family UCX 1.20.x, the
#       same way (pip's Open MPI 5.0.10 and 5.0.11 and MPICH 5.0.2 wheels)
#
#   MPIDD                  the mpidd binary to run (default: cargo run -p mpidd)
#   MPIDD_UCX_GIT          upstream openucx/ucx (scripts/ucx-release-tree.sh)
#   MPIDD_DEBIAN13_ROOT    the Debian 13 root, for 1.18's build-id
#   MPIDD_UCX_TAG          another release of the family to measure instead
#                          (v1.18.0, v1.20.0), written to OUTPUT to compare
#                          with the shipped profile: the family's evidence
#
# The objects that define the types asked are compiled in the configured
# tree and linked into a stand-in libucp.so.0 for their DWARF, as
# scripts/write-ucx-profile.sh does for Debian 12's UCX. The profile's
# `build` names the tag and the commit it resolved to. The release family
# (which versions the layouts hold for, and the facts behind the claim) is
# a person's, kept from the file this run replaces (scripts/lib/keep-family.py).
# Each step's time is printed on standard error.
set -euo pipefail

line="${1:?usage: write-ucx-family-profile.sh 1.18|1.20 [OUTPUT]}"
[ -z "${2:-}" ] || out="$(realpath -m "$2")"
cd "$(dirname "$0")/.."
root="${MPIDD_DEBIAN13_ROOT:-${XDG_CACHE_HOME:-$HOME/.cache}/mpidd/debian13}"
for_builds=()
flavour=debian
case "$line" in
1.18)
  tag=v1.18.1
  stock="$root/usr/lib/x86_64-linux-gnu/libucp.so.0.0.0"
  [ -e "$stock" ] || {
    echo "error: $stock is missing: run bash scripts/python-envs.sh debian13" >&2
    exit 1
  }
  package="$(chroot "$root" dpkg-query -W -f='${Version}' libucx0)"
  for_builds=(--for-build "$stock")
  out="${out:-$(pwd)/mpidd-read/profiles/ucx-1.18.1-debian13-amd64.json}"
  described="Debian 13 libucx0 $package (amd64), by its build-id, and the family UCX 1.18.x as Debian builds it"
  ;;
1.18-release | 1.20-release)
  flavour=release
  tag="v${line%-release}.1"
  out="${out:-$(pwd)/mpidd-read/profiles/ucx-${tag#v}-release-x86_64.json}"
  described="the family UCX ${line%-release}.x as contrib/configure-release builds it (pip's wheels bundle it without a build-id)"
  ;;
*)
  echo "error: no UCX family $line: 1.18, 1.18-release or 1.20-release" >&2
  exit 1
  ;;
esac

tag="${MPIDD_UCX_TAG:-$tag}"
start=$SECONDS
tree="$(bash scripts/ucx-release-tree.sh "$tag" "$flavour" | tail -n 1)"
read -r _ commit options <"$tree/.mpidd-configured"
echo "write-ucx-family-profile: configured tree: $((SECONDS - start)) s" >&2

# The objects whose DWARF holds the types asked: the worker (ucp_worker_t,
# its ucp_tag_match_t and ucs_mpool_t, ucp_ep_ext_t), the request, the
# eager and rendezvous headers, and the memory pool's own types.
ucp_objects=(
  core/libucp_la-ucp_worker.lo
  core/libucp_la-ucp_request.lo
  tag/libucp_la-tag_match.lo
  tag/libucp_la-eager_rcv.lo
  tag/libucp_la-tag_rndv.lo
)
ucs_objects=(datastruct/libucs_la-mpool.lo)
start=$SECONDS
(cd "$tree/src/ucp" && nice -n 10 make -s "${ucp_objects[@]}" >/dev/null)
(cd "$tree/src/ucs" && nice -n 10 make -s "${ucs_objects[@]}" >/dev/null)
echo "write-ucx-family-profile: compile the objects: $((SECONDS - start)) s" >&2
pic=()
for o in "${ucp_objects[@]}"; do
  pic+=("$tree/src/ucp/$(dirname "$o")/.libs/$(basename "$o" .lo).o")
done
for o in "${ucs_objects[@]}"; do
  pic+=("$tree/src/ucs/$(dirname "$o")/.libs/$(basename "$o" .lo).o")
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Named as the stock file is loaded, so the profile's object is that name.
standin="$work/libucp.so.0.0.0"
gcc -shared -nostdlib -o "$standin" "${pic[@]}" -Wl,--unresolved-symbols=ignore-all

# Described whole, beyond the readers' own questions, as for Debian 12's.
types=(
  ucp_request_t ucp_recv_desc_t ucp_request_queue_t
  ucp_tag_hdr_t ucp_eager_first_hdr_t ucp_eager_sync_hdr_t ucp_eager_sync_first_hdr_t
  ucp_rndv_rts_hdr_t ucp_request_hdr_t
  ucs_mpool_t ucs_mpool_data_t ucs_mpool_chunk_t
)
type_args=()
for t in "${types[@]}"; do type_args+=(--type "$t"); done
start=$SECONDS
if [ -n "${MPIDD:-}" ]; then mpidd=("$MPIDD"); else mpidd=(cargo run -q --locked -p mpidd --); fi
previous="$(mktemp)"
if [ -f "$out" ]; then cp "$out" "$previous"; else rm -f "$previous"; fi
"${mpidd[@]}" profile write \
  --object "$standin" \
  --decoder ucx \
  "${type_args[@]}" \
  --implementation UCX \
  --impl-version "${tag#v}" \
  --build "$described; layouts from upstream openucx/ucx $tag ($commit) configured with $flavour options ($options) (scripts/write-ucx-family-profile.sh $line)" \
  "${for_builds[@]}" \
  --output "$out"
python3 scripts/lib/keep-family.py "$previous" "$out"
rm -f "$previous"
echo "write-ucx-family-profile: write the profile: $((SECONDS - start)) s" >&2
echo "$out"
