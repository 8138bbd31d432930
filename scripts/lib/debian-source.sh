# Sourced by the scripts that build reference MPIs from Debian source
# packages (scripts/build-ref-*.sh). Defines:
#
#   as_root                 the command prefix that runs as root (empty or sudo)
#   ensure_deb_src          adds a deb-src entry for every deb entry of the
#                           machine's own apt configuration, once
#   ensure_packages P...    installs the Debian packages P... that are missing
#
# The source then comes from the same mirror the binaries come from.

if [ "$(id -u)" -eq 0 ]; then as_root=(); else as_root=(sudo); fi

ensure_deb_src() {
  local src_list=/etc/apt/sources.list.d/mpidd-deb-src.sources
  if apt-get indextargets --format '$(CREATED_BY)' 2>/dev/null | grep -q '^Sources$'; then
    return 0
  fi
  local tmp f
  tmp=$(mktemp)
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -e "$f" ] || continue
    [ "$f" = "$src_list" ] && continue
    # Keep deb822 stanzas whose Types include deb, retyped as deb-src
    # (perl-base is essential on Debian; mawk lacks word boundaries).
    perl -0777 -ne 'for (split /\n\s*\n/) { next unless /^Types:.*\bdeb\b/m; s/^Types:.*$/Types: deb-src/m; print "$_\n\n" }' "$f" >>"$tmp"
  done
  if [ -f /etc/apt/sources.list ]; then
    grep -E '^[[:space:]]*deb[[:space:]]' /etc/apt/sources.list |
      sed -E 's/^([[:space:]]*)deb([[:space:]])/\1deb-src\2/' >"$tmp.list" || true
    if [ -s "$tmp.list" ]; then
      "${as_root[@]}" cp "$tmp.list" /etc/apt/sources.list.d/mpidd-deb-src.list
    fi
    rm -f "$tmp.list"
  fi
  if [ -s "$tmp" ]; then
    "${as_root[@]}" cp "$tmp" "$src_list"
  fi
  rm -f "$tmp"
  "${as_root[@]}" apt-get update -q
}

ensure_packages() {
  local missing=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if ((${#missing[@]})); then
    DEBIAN_FRONTEND=noninteractive "${as_root[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
  fi
}
