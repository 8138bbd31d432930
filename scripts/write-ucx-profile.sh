#!/usr/bin/env bash
# Regenerates the layout profile mpidd ships for Debian 12's own, stripped
# UCX 1.13.1 (libucx0 1.13.1-1, amd64), keyed by the stock
# libucp.so.0.0.0's build-id: the layouts mpihandles' UCX readers ask (a
# UCP worker's tag matching and request pool, UCX's request, the headers
# of unexpected messages).
#
#   write-ucx-profile.sh [OUTPUT]
#
#   MPIDD                  the mpidd binary to run (default: cargo run -p mpidd)
#   MPIDD_DEBIAN_UCX_TREE  see scripts/debian-ucx-tree.sh
#
# UCX's struct layouts depend on its source and configure options, not on
# which of its objects are linked: the objects that define the types the
# readers ask are compiled in Debian's UCX source, configured with
# debian/rules' options (scripts/debian-ucx-tree.sh), and linked into a
# stand-in libucp.so.0.0.0 for its DWARF. No symbol is needed: the worker's
# address comes from the MPI library that created it.
#
# examples/tests/ucx_profile.rs fails when the shipped profile no longer
# equals what this script writes, or when the installed libucp is another
# build; rerun this script then, and review the diff.
set -euo pipefail

cd "$(dirname "$0")/.."
out="${1:-mpidd-read/profiles/ucx-1.13.1-debian12-amd64.json}"
stock_ucp=/usr/lib/x86_64-linux-gnu/libucp.so.0.0.0
ucx_tree="$(bash scripts/debian-ucx-tree.sh | tail -n 1)"
[ -e "$stock_ucp" ] || {
  echo "error: $stock_ucp is missing: install Debian's UCX (apt-get install libucx0)" >&2
  exit 1
}
package="$(dpkg-query -W -f='${Version}' libucx0)"

# The objects whose DWARF holds the types asked: the worker (ucp_worker_t,
# its ucp_tag_match_t and ucs_mpool_t), the request, the eager and
# rendezvous headers, and the memory pool's own types.
ucp_objects=(
  core/libucp_la-ucp_worker.lo
  core/libucp_la-ucp_request.lo
  tag/libucp_la-tag_match.lo
  tag/libucp_la-eager_rcv.lo
  tag/libucp_la-tag_rndv.lo
)
ucs_objects=(datastruct/libucs_la-mpool.lo)
(cd "$ucx_tree/src/ucp" && nice -n 10 make -s "${ucp_objects[@]}" >/dev/null)
(cd "$ucx_tree/src/ucs" && nice -n 10 make -s "${ucs_objects[@]}" >/dev/null)
pic=()
for o in "${ucp_objects[@]}"; do
  pic+=("$ucx_tree/src/ucp/$(dirname "$o")/.libs/$(basename "$o" .lo).o")
done
for o in "${ucs_objects[@]}"; do
  pic+=("$ucx_tree/src/ucs/$(dirname "$o")/.libs/$(basename "$o" .lo).o")
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Named as the stock file is loaded, so the profile's object is that name.
standin="$work/libucp.so.0.0.0"
gcc -shared -nostdlib -o "$standin" "${pic[@]}" -Wl,--unresolved-symbols=ignore-all

# Described whole, beyond the readers' own questions, for decoders that
# read more of UCX's request or of a message's descriptor and headers.
types=(
  ucp_request_t ucp_recv_desc_t ucp_request_queue_t
  ucp_tag_hdr_t ucp_eager_first_hdr_t ucp_eager_sync_hdr_t ucp_eager_sync_first_hdr_t
  ucp_rndv_rts_hdr_t ucp_request_hdr_t
  ucs_mpool_t ucs_mpool_data_t ucs_mpool_chunk_t
)
type_args=()
for t in "${types[@]}"; do type_args+=(--type "$t"); done
if [ -n "${MPIDD:-}" ]; then mpidd=("$MPIDD"); else mpidd=(cargo run -q --locked -p mpidd --); fi
"${mpidd[@]}" profile write \
  --object "$standin" \
  --decoder ucx \
  "${type_args[@]}" \
  --implementation UCX \
  --impl-version 1.13.1 \
  --build "Debian 12 libucx0 $package (amd64); layouts from Debian's configuration of its source (scripts/write-ucx-profile.sh)" \
  --for-build "$stock_ucp" \
  --output "$out"
echo "$out"
