#!/usr/bin/env bash
# Runs the maskd runtime image with podman and checks what Kubernetes relies on:
# it starts as uid 10001 with the tokenizer volume read-only, answers the gRPC health
# check through the image's own maskctl (the chart's exec probe), compiles a schema and
# steps a sequence from the host's maskctl, serves /metrics, and exits 0 on SIGTERM
# (the drain the chart's terminationGracePeriod waits for).
#
#   scripts/probe_image.sh [IMAGE [FETCHER_IMAGE]]
#
# IMAGE defaults to localhost/maskd:<project version>. With FETCHER_IMAGE, the tokenizer
# fetcher runs first, as the chart's init container does: as uid 10001 it downloads and
# checksums the tokenizers into an empty directory, and the runtime image is probed with
# that directory instead of this host's tokenizer cache.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
image="${1:-localhost/maskd:$(sed -n 's/^project(maskd VERSION \([0-9.]*\).*/\1/p' \
  "$root/CMakeLists.txt")}"
fetcher_image="${2:-}"
tokenizers="${MASKD_TOKENIZER_DIR:-$HOME/.cache/maskd/tokenizers}"
maskctl="$root/${MASKD_BUILD_DIR:-build/release}/clients/cpp/maskctl"
fail() { echo "probe_image: FAIL: $*" >&2; exit 1; }
scratch="$(mktemp -d)"
runtime=(podman --runtime runc)
name="maskd-probe-$$"
cleanup() {
  "${runtime[@]}" rm -f "$name" >/dev/null 2>&1 || true
  rm -rf "$scratch"
}
trap cleanup EXIT

# runc and explicit limits at or under this host's: podman's defaults raise
# RLIMIT_NOFILE/NPROC, which a sandboxed host (like the development VM) refuses, and
# crun refuses its hybrid cgroup layout.
nofile="$(ulimit -Hn)"; [[ "$nofile" == unlimited ]] || ((nofile <= 65536)) || nofile=65536
[[ "$nofile" == unlimited ]] && nofile=65536
nproc="$(ulimit -Hu)"; [[ "$nproc" == unlimited ]] || ((nproc <= 4096)) || nproc=4096
[[ "$nproc" == unlimited ]] && nproc=4096
limits=(--ulimit "nofile=$nofile:$nofile" --ulimit "nproc=$nproc:$nproc")

if [[ -n "$fetcher_image" ]]; then
  tokenizers="$scratch/tokenizers"
  mkdir -p "$tokenizers" && chown 10001:10001 "$tokenizers"
  start=$SECONDS
  # The host's CA bundle: a host behind a TLS-intercepting proxy (this project's VM is
  # one) trusts the proxy's CA there; elsewhere it is Debian's bundle, as in the image.
  "${runtime[@]}" run --rm --network host --read-only --tmpfs /tmp "${limits[@]}" \
    -v /etc/ssl/certs/ca-certificates.crt:/etc/ssl/certs/ca-certificates.crt:ro \
    -e NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt \
    -v "$tokenizers:/var/lib/maskd/tokenizers" "$fetcher_image" >&2 ||
    fail "the tokenizer fetcher failed"
  for name in llama3 qwen3 gptoss; do
    [[ -s "$tokenizers/$name/tokenizer.json" ]] || fail "the fetcher left no $name tokenizer"
  done
  echo "probe_image: the fetcher image downloaded and checked 3 tokenizers in $((SECONDS - start)) s"
fi
[[ -f "$tokenizers/llama3/tokenizer.json" ]] || "$root/scripts/fetch_tokenizers.sh"
[[ -x "$maskctl" ]] || "$root/scripts/build.sh" release --target maskctl >/dev/null

# Free loopback ports (host network: the probe needs no container networking).
read -r grpc_port metrics_port < <(python3 -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*(x.getsockname()[1] for x in s))')

"${runtime[@]}" run -d --name "$name" --network host --read-only --tmpfs /tmp "${limits[@]}" \
  -v "$tokenizers:/var/lib/maskd/tokenizers:ro" "$image" \
  "--listen=127.0.0.1:$grpc_port" "--metrics_listen=127.0.0.1:$metrics_port" \
  --tokenizer=llama3=/var/lib/maskd/tokenizers/llama3 --shutdown_grace=5s >/dev/null

# The image's own probe command, as the chart runs it.
for _ in $(seq 1 120); do
  if "${runtime[@]}" exec "$name" /usr/local/bin/maskctl health "--server=127.0.0.1:$grpc_port" \
    --deadline=2s >/dev/null 2>&1; then ready=1; break; fi
  [[ "$("${runtime[@]}" inspect --format '{{.State.Running}}' "$name")" == true ]] ||
    { "${runtime[@]}" logs "$name" >&2; fail "container exited before it was healthy"; }
  sleep 0.5
done
[[ "${ready:-0}" == 1 ]] || { "${runtime[@]}" logs "$name" >&2; fail "not healthy after 60 s"; }
echo "probe_image: healthy (maskctl health inside the container)"

uid="$("${runtime[@]}" exec "$name" sh -c 'id -u')"
[[ "$uid" == 10001 ]] || fail "runs as uid $uid, expected 10001"
echo "probe_image: runs as uid 10001"

spec="$(mktemp --suffix=.json)"
trap 'cleanup; rm -f "$spec"' EXIT
echo '{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}' >"$spec"
out="$("$maskctl" compile --server="127.0.0.1:$grpc_port" "$spec" 2>&1)" ||
  fail "compile: $out"
handle="$(grep -oE 'handle[:= ]+[^ ,]+' <<<"$out" | head -1 | sed -E 's/handle[:= ]+//')"
[[ -n "$handle" ]] || fail "compile printed no handle: $out"
"$maskctl" check --server="127.0.0.1:$grpc_port" "$handle" '{"ok": true}' >/dev/null ||
  fail "check of a valid instance through the container failed"
if "$maskctl" check --server="127.0.0.1:$grpc_port" "$handle" '{"ok": 1}' >/dev/null 2>&1; then
  fail "check accepted an invalid instance"
fi
echo "probe_image: compiled a schema and stepped sequences from the host (handle $handle)"

metrics="$(python3 -c "
import urllib.request
print(urllib.request.urlopen('http://127.0.0.1:$metrics_port/metrics', timeout=5).read().decode())")"
grep -q '^maskd_build_info' <<<"$metrics" || fail "/metrics has no maskd_build_info"
echo "probe_image: /metrics serves maskd_build_info"

"${runtime[@]}" stop --time 30 "$name" >/dev/null
code="$("${runtime[@]}" inspect --format '{{.State.ExitCode}}' "$name")"
[[ "$code" == 0 ]] || { "${runtime[@]}" logs "$name" >&2; fail "exit code $code after SIGTERM"; }
echo "probe_image: SIGTERM drained, exit 0"
echo "probe_image: PASS $image"
