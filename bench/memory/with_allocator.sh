#!/usr/bin/env bash
# Runs maskd with another malloc preloaded, for comparing allocators on the
# memory reproducers and step benchmarks (docs/operations.md, "Allocator"):
#   MASKD_ALLOCATOR=jemalloc MASKD_BINARY=bench/memory/with_allocator.sh \
#     build/release/tests/e2e/memory_budget_e2e_test
# MASKD_ALLOCATOR: glibc (none preloaded), jemalloc (libjemalloc2) or
# mimalloc (libmimalloc2.0); MASKD_REAL_BINARY: the maskd to run (default:
# build/release/service/maskd next to this script's repository).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
binary="${MASKD_REAL_BINARY:-$root/build/release/service/maskd}"
lib_dir=/usr/lib/x86_64-linux-gnu
case "${MASKD_ALLOCATOR:-glibc}" in
  glibc) exec "$binary" "$@" ;;
  jemalloc) export LD_PRELOAD="$lib_dir/libjemalloc.so.2" ;;
  mimalloc) export LD_PRELOAD="$lib_dir/libmimalloc.so.2" ;;
  *) echo "with_allocator.sh: unknown MASKD_ALLOCATOR '$MASKD_ALLOCATOR'" >&2; exit 2 ;;
esac
if [[ ! -f "$LD_PRELOAD" ]]; then
  echo "with_allocator.sh: $LD_PRELOAD missing (scripts/setup.sh installs it)" >&2
  exit 2
fi
exec "$binary" "$@"
