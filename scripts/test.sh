#!/usr/bin/env bash
# The whole test suite, from a bare machine: installs what is missing, checks
# formatting, then builds and runs every test three ways:
#   release     all tests
#   asan        all tests under AddressSanitizer + UndefinedBehaviorSanitizer
#   tsan        the concurrent parts (tests labelled "concurrency") under ThreadSanitizer
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

start=$SECONDS
"$root/scripts/setup.sh"
"$root/scripts/check_format.sh"

export MASKD_TOKENIZER_DIR="${MASKD_TOKENIZER_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/maskd/tokenizers}"
export MASKD_MASKBENCH="${MASKD_MASKBENCH:-$root/../shared/maskbench/dev.jsonl.gz}"
jobs="${MASKD_JOBS:-$(nproc)}"

# The concurrent parts are built alone under ThreadSanitizer (a full TSan build
# would double CI time for nothing): the target maskd_concurrency_tests, every
# test declared `maskd_cc_test(... CONCURRENCY ...)`, whose tests carry the
# label "concurrency" (tests/CMakeLists.txt keeps the one list).

run_suite() {  # flavour [ctest args...]
  local flavour="$1"; shift
  echo "== $flavour: build" >&2
  if [[ "$flavour" == tsan ]]; then
    "$root/scripts/build.sh" "$flavour" --target maskd_concurrency_tests
  else
    "$root/scripts/build.sh" "$flavour"
  fi
  echo "== $flavour: test" >&2
  (cd "$root/build/$flavour" && ctest --output-on-failure -j "$jobs" "$@")
}

run_suite release
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  run_suite asan
TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 run_suite tsan -L concurrency

echo "test.sh: all suites passed in $((SECONDS - start)) s" >&2
