#!/usr/bin/env bash
# Regenerates the layout profile mpidd ships for Debian 12's own, stripped
# libfabric 1.17.0 (libfabric1 1.17.0-3, amd64), keyed by the stock
# libfabric.so.1's build-id, with the release family libfabric 1.17.x: the
# layouts mpihandles' OFI reader asks (an endpoint's provider record, shm's
# receive context, its receive, command and send entries, rxm's receive
# queues, entries and receive buffers).
#
#   write-ofi-profile.sh [OUTPUT]
#
#   MPIDD                  the mpidd binary to run (default: cargo run -p mpidd)
#   MPIDD_LIBFABRIC_GIT    upstream ofiwg/libfabric (scripts/libfabric-release-tree.sh)
#
# libfabric's struct layouts depend on its source and configure options,
# not on which of its objects are linked: the objects that define the
# types the reader asks are compiled in upstream's v1.17.0 configured as
# Debian configures it (scripts/libfabric-release-tree.sh, which says why
# not Debian's own source), and linked into a stand-in libfabric.so.1 for
# their DWARF. No symbol is needed: the endpoint's address comes from its
# caller. The release family (which versions the layouts hold for, and the
# facts behind the claim) is a person's, kept from the file this run
# replaces (scripts/lib/keep-family.py). Each step's time is printed on
# standard error.
set -euo pipefail

[ -z "${1:-}" ] || out="$(realpath -m "$1")"
cd "$(dirname "$0")/.."
out="${out:-mpidd-read/profiles/libfabric-1.17.0-debian12-amd64.json}"
stock="$(readlink -f /usr/lib/x86_64-linux-gnu/libfabric.so.1 || true)"
[ -e "$stock" ] || {
  echo "error: /usr/lib/x86_64-linux-gnu/libfabric.so.1 is missing: install Debian's libfabric (apt-get install libfabric1)" >&2
  exit 1
}
package="$(dpkg-query -W -f='${Version}' libfabric1)"
tag=v1.17.0
start=$SECONDS
tree="$(bash scripts/libfabric-release-tree.sh "$tag" | tail -n 1)"
read -r _ commit options <"$tree/.mpidd-configured"
echo "write-ofi-profile: configured tree: $((SECONDS - start)) s" >&2

# The objects whose DWARF holds the types asked: the utility endpoint,
# shm's endpoint (smr_ep, smr_srx_ctx, smr_rx_entry, smr_pend_fs) and
# progress (smr_cmd_ctx, smr_tx_entry), rxm's endpoint and completion
# handling (rxm_ep, rxm_recv_queue, rxm_recv_entry, rxm_rx_buf, rxm_conn).
objects=(
  prov/util/src/util_ep.lo
  prov/shm/src/smr_ep.lo
  prov/shm/src/smr_progress.lo
  prov/rxm/src/rxm_ep.lo
  prov/rxm/src/rxm_cq.lo
)
start=$SECONDS
(cd "$tree" && nice -n 10 make -s "${objects[@]}" >/dev/null 2>&1)
echo "write-ofi-profile: compile the objects: $((SECONDS - start)) s" >&2
pic=()
for o in "${objects[@]}"; do
  pic+=("$tree/$(dirname "$o")/.libs/$(basename "$o" .lo).o")
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Named as the stock file is loaded, so the profile's object is that name.
standin="$work/$(basename "$stock")"
gcc -shared -nostdlib -o "$standin" "${pic[@]}" -Wl,--unresolved-symbols=ignore-all

# Described whole, beyond the reader's own questions, for a reader that
# reads more of an entry.
types=(fi_peer_rx_entry smr_rx_entry smr_cmd_ctx rxm_recv_entry rxm_unexp_msg)
type_args=()
for t in "${types[@]}"; do type_args+=(--type "$t"); done
start=$SECONDS
if [ -n "${MPIDD:-}" ]; then mpidd=("$MPIDD"); else mpidd=(cargo run -q --locked -p mpidd --); fi
previous="$(mktemp)"
if [ -f "$out" ]; then cp "$out" "$previous"; else rm -f "$previous"; fi
"${mpidd[@]}" profile write \
  --object "$standin" \
  --decoder ofi \
  "${type_args[@]}" \
  --implementation libfabric \
  --impl-version "${tag#v}" \
  --build "Debian 12 libfabric1 $package (amd64); layouts from upstream ofiwg/libfabric $tag ($commit) configured as Debian configures it ($options) (scripts/write-ofi-profile.sh)" \
  --for-build "$stock" \
  --output "$out"
python3 scripts/lib/keep-family.py "$previous" "$out"
rm -f "$previous"
echo "write-ofi-profile: write the profile: $((SECONDS - start)) s" >&2
echo "$out"
