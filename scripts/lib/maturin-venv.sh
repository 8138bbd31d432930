# Sourced by scripts/build-wheel.sh and scripts/build-python-module.sh:
# maturin and zig from the Python package index, pinned here, in a private
# virtual environment outside the repository, made once and made again
# only when a pin changes; its bin directory is put first on PATH (maturin
# finds zig as `python -m ziglang` of the first python on PATH).
# Needs a `die` function from the sourcing script.

MATURIN_VERSION=1.16.0
ZIGLANG_VERSION=0.17.1

maturin_venv() {
  command -v python3 >/dev/null ||
    die "python3 is missing: apt-get install python3 python3-venv"
  local venv="${MPIDD_MATURIN_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/mpidd/maturin-venv}"
  local pins="maturin==$MATURIN_VERSION ziglang==$ZIGLANG_VERSION"
  if [ "$(cat "$venv/.mpidd-pins" 2>/dev/null)" != "$pins" ]; then
    echo "== installing $pins into $venv" >&2
    rm -rf "$venv"
    mkdir -p "$(dirname "$venv")"
    python3 -m venv "$venv" ||
      die "python3 -m venv failed: apt-get install python3-venv (Debian's python3 needs it)"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
      "maturin==$MATURIN_VERSION" "ziglang==$ZIGLANG_VERSION" ||
      die "could not install $pins into $venv"
    # Written last: a half-made environment is made again next time.
    echo "$pins" >"$venv/.mpidd-pins"
  fi
  export PATH="$venv/bin:$PATH"
}
