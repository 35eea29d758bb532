#!/usr/bin/env bash
# The deployment files are well-formed: `kubectl kustomize deploy/k8s` renders
# offline into the expected objects, and yamllint passes on deploy/ (Helm
# templates excluded: they are Go templates until rendered) and on the rendering.
#   manifests_test.sh REPO_ROOT
set -euo pipefail
root="$(cd "${1:?usage: manifests_test.sh REPO_ROOT}" && pwd)"
cd "$root"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

command -v kubectl >/dev/null || fail "kubectl not found (it renders deploy/k8s)"
command -v yamllint >/dev/null || fail "yamllint not found (scripts/setup.sh installs it)"

kubectl kustomize deploy/k8s >"$tmp/rendered.yaml" || fail "kubectl kustomize deploy/k8s"
kinds="$(grep -E '^kind: ' "$tmp/rendered.yaml" | sort | tr '\n' ' ')"
want="kind: ConfigMap kind: Deployment kind: HorizontalPodAutoscaler kind: NetworkPolicy kind: PodDisruptionBudget kind: Service kind: Service kind: Service kind: ServiceAccount "
[[ "$kinds" == "$want" ]] || fail "rendered kinds: '$kinds', want '$want'"
echo "ok: kubectl kustomize deploy/k8s renders $(grep -c '^kind: ' "$tmp/rendered.yaml") objects"

yamllint --strict -c deploy/yamllint.yml deploy/ || fail "yamllint deploy/"
# The ignore pattern must skip only the templates: values.yaml and the k8s files
# are linted.
listed="$(yamllint -c deploy/yamllint.yml --list-files deploy/)"
for f in deploy/helm/maskd/values.yaml deploy/helm/maskd/Chart.yaml deploy/k8s/deployment.yaml \
  deploy/k8s/kustomization.yaml deploy/prometheus/rules.yml deploy/prometheus/rules_test.yml; do
  grep -qxF "$f" <<<"$listed" || fail "yamllint does not check $f"
done
if grep -q '/templates/' <<<"$listed"; then fail "yamllint reads Helm templates"; fi
echo "ok: yamllint deploy/ ($(wc -l <<<"$listed") files)"

# kubectl writes sequences unindented; everything else as in the sources.
yamllint --strict -d '{extends: default, rules: {line-length: {max: 120},
  document-start: disable, indentation: {indent-sequences: whatever}}}' "$tmp/rendered.yaml" \
  || fail "yamllint on the rendered manifests"
echo "ok: yamllint on the rendered manifests"
echo "manifests_test: 3 passed, 0 failed"
