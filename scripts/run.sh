#!/usr/bin/env bash
# From a bare machine: installs what is missing, builds maskd, and starts it on
# localhost with the Llama-3 tokenizer preloaded. It prints its gRPC and metrics
# addresses, then a ready example to try from another terminal (maskctl on
# scripts/examples/person.schema.json). Ctrl-C stops it.
#   scripts/run.sh [extra maskd flags...]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$root/scripts/setup.sh"
"$root/scripts/build.sh" release --target maskd maskctl >&2

listen="${MASKD_LISTEN:-127.0.0.1:50051}"
metrics="${MASKD_METRICS_LISTEN:-127.0.0.1:9464}"
cat <<MSG
maskd is starting with the Llama-3 tokenizer; the lines starting "maskd:" below say
where it listens (defaults: gRPC ${listen}, metrics http://${metrics}/metrics).
Try, from another terminal (a JSON Schema compiled, then random constrained
generation through the server's masks):
  build/release/clients/cpp/maskctl compile scripts/examples/person.schema.json
  build/release/clients/cpp/maskctl generate scripts/examples/person.schema.json --random --seed 1 --whitespace compact
  curl -s http://${metrics}/metrics | grep maskd_
MSG
exec "$root/build/release/service/maskd" --listen "$listen" --metrics_listen "$metrics" \
  --tokenizer llama3 "$@"
