#!/usr/bin/env bash
# Configures and builds one flavour of maskd with Ninja into build/FLAVOUR.
#   scripts/build.sh release|asan|tsan [cmake --build args...]
#   MASKD_BUILD_DIR=build/mine scripts/build.sh release --target foo
# ccache is keyed relative to the repository so fresh clones reuse it.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
flavour="${1:-release}"
shift || true

case "$flavour" in
  release) flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo) ;;
  asan) flags=(-DCMAKE_BUILD_TYPE=Debug -DMASKD_SANITIZE=ON -DMASKD_BUILD_BENCH=OFF) ;;
  tsan) flags=(-DCMAKE_BUILD_TYPE=Debug -DMASKD_TSAN=ON -DMASKD_BUILD_BENCH=OFF) ;;
  *) echo "build.sh: unknown flavour '$flavour' (release|asan|tsan)" >&2; exit 2 ;;
esac

export CCACHE_BASEDIR="$root"
export CCACHE_NOHASHDIR=1
jobs="${MASKD_JOBS:-$(nproc)}"
# MASKD_BUILD_DIR (relative to the repository) lets parallel work keep separate trees.
dir="$root/${MASKD_BUILD_DIR:-build/$flavour}"
if [[ ! -f "$dir/build.ninja" ]]; then
  cmake -S "$root" -B "$dir" -G Ninja "${flags[@]}" >/dev/null
fi
cmake --build "$dir" -j "$jobs" "$@"
