#!/usr/bin/env bash
# The long run of tests/json_schema/differential_fuzz.py (the ctest versions
# are bounded): builds json_schema_verdicts_cli (release) and runs each mode
# with its own seed, niced (shared machine), one after the other:
#   scripts/differential_fuzz.sh [SCHEMAS per mode, default 3000] [FIRST SEED, default 40]
# Every disagreement, minimized, goes to build/differential_fuzz/MODE.jsonl;
# exit 1 if there is any.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
schemas="${1:-3000}"
seed="${2:-40}"
"$root/scripts/build.sh" release --target json_schema_verdicts_cli >/dev/null
# A copy, so that rebuilding during the run does not change the engine under test.
out="$root/build/differential_fuzz"
mkdir -p "$out"
cp "$root/build/release/tests/json_schema/json_schema_verdicts_cli" "$out/cli"
status=0
run() {
  local mode="$1"
  shift
  echo "== $mode (seed $seed, $schemas schemas)"
  nice -n 10 /usr/bin/python3 "$root/tests/json_schema/differential_fuzz.py" --cli "$out/cli" \
    --seed "$seed" --schemas "$schemas" --show 10 --minimize 30 \
    --failures "$out/$mode.jsonl" "$@" 2>/dev/null || status=1
  seed=$((seed + 1))
}
run depth3 --depth 3
run depth4 --depth 4
run patterns --patterns
run draft7 --dialect draft7
run schema_order --depth 4 --order schema
exit $status
