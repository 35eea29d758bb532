#!/usr/bin/env bash
# deploy/prometheus/rules.yml is valid (promtool check rules) and each alert fires
# when it should and stays quiet when it should (promtool test rules with
# rules_test.yml); deploy/grafana/maskd.json is valid JSON with a query per panel.
#   prometheus_rules_test.sh REPO_ROOT
set -euo pipefail
root="$(cd "${1:?usage: prometheus_rules_test.sh REPO_ROOT}" && pwd)"
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v promtool >/dev/null || fail "promtool not found (Debian package prometheus)"

cd "$root/deploy/prometheus"
promtool check rules rules.yml || fail "promtool check rules rules.yml"
promtool test rules rules_test.yml || fail "promtool test rules rules_test.yml"
# Every alert in rules.yml has a unit test.
alerts="$(grep -oE '^ +- alert: [A-Za-z]+' rules.yml | awk '{print $3}' | sort -u)"
tested="$(grep -oE '^ +alertname: [A-Za-z]+' rules_test.yml | awk '{print $2}' | sort -u)"
[[ "$alerts" == "$tested" ]] || fail "alerts without unit tests: $(comm -23 <(echo "$alerts") <(echo "$tested") | tr '\n' ' ')"
echo "ok: $(wc -l <<<"$alerts") alerts checked and unit-tested"

python="${MASKD_SYSTEM_PYTHON:-/usr/bin/python3}"
"$python" - "$root/deploy/grafana/maskd.json" <<'PY' || fail "deploy/grafana/maskd.json"
import json, sys
dash = json.load(open(sys.argv[1]))
panels = [p for p in dash["panels"] if p["type"] != "row"]
empty = [p["title"] for p in panels if not all(t.get("expr") for t in p.get("targets", [None]))]
assert not empty, f"panels without a query: {empty}"
ids = [p["id"] for p in dash["panels"]]
assert len(ids) == len(set(ids)), "duplicate panel ids"
print(f"ok: dashboard has {len(panels)} panels, each with queries")
PY
echo "prometheus_rules_test: 3 passed, 0 failed"
