#!/usr/bin/env bash
# Builds the maskd container images with no registry: the base file systems come from
# Debian's own archive through debootstrap, and podman imports them as images.
#
#   scripts/build_image.sh [--tag TAG] [--no-fetcher] [--probe]
#
#   localhost/maskd:TAG                    the runtime image: bookworm minbase, exactly the
#                                          packages of deploy/container/runtime-packages.txt,
#                                          stripped maskd and maskctl, user 10001.
#   localhost/maskd-tokenizer-fetcher:TAG  the chart's init container: bookworm minbase with
#                                          nodejs and npm, scripts/fetch_tokenizers.sh.
#   --probe                                runs the fetcher image into an empty directory, then
#                                          the runtime image with podman on those tokenizers
#                                          (read-only) and checks health, a compile, /metrics
#                                          and a clean SIGTERM exit (scripts/probe_image.sh).
#
# deploy/container/Dockerfile describes the same images for a machine with a registry and a
# Docker engine; this script is the path that works on a bare Debian host. The binaries are
# built on this host (Debian bookworm), so the image's libraries are the same sonames they
# were linked against. Base file systems are cached under $MASKD_CACHE/image, keyed by the
# package list, so a rebuild after a code change only re-imports (seconds).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cache="${MASKD_CACHE:-$HOME/.cache/maskd}/image"
mirror="${MASKD_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
suite=bookworm
tag="$(sed -n 's/^project(maskd VERSION \([0-9.]*\).*/\1/p' "$root/CMakeLists.txt")"
fetcher=1
probe=0
while (($#)); do
  case "$1" in
    --tag) tag="$2"; shift 2 ;;
    --no-fetcher) fetcher=0; shift ;;
    --probe) probe=1; shift ;;
    *) echo "build_image.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
[[ -n "$tag" ]] || { echo "build_image.sh: no version in CMakeLists.txt; pass --tag" >&2; exit 2; }

need=()
for tool in podman debootstrap runc; do command -v "$tool" >/dev/null || need+=("$tool"); done
if ((${#need[@]})); then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi

# A debootstrap'd minbase file system with PACKAGES, cached by the list's hash.
# Prints the directory.
base_rootfs() {
  local name="$1"; shift
  local key dir
  key="$(printf '%s\n' apt-in-chroot "$suite" "$mirror" "$@" | sha256sum | cut -c1-16)"
  dir="$cache/$name-$suite-$key"
  if [[ ! -f "$dir/.complete" ]]; then
    rm -rf "$dir"
    mkdir -p "$cache"
    echo "build_image: debootstrap $suite ($name, $# packages) into $dir" >&2
    # minbase first, then the packages through apt inside it: debootstrap's own
    # resolver gives up on large dependency trees such as npm's.
    debootstrap --variant=minbase "$suite" "$dir" "$mirror" >"$cache/$name-debootstrap.log" 2>&1 ||
      { tail -20 "$cache/$name-debootstrap.log" >&2; exit 1; }
    { chroot "$dir" apt-get update &&
      DEBIAN_FRONTEND=noninteractive chroot "$dir" apt-get install -y --no-install-recommends "$@" &&
      chroot "$dir" apt-get clean; } >>"$cache/$name-debootstrap.log" 2>&1 ||
      { tail -20 "$cache/$name-debootstrap.log" >&2; exit 1; }
    # The image's user: uid/gid 10001 as the chart's securityContext expects.
    chroot "$dir" groupadd --gid 10001 maskd
    chroot "$dir" useradd --uid 10001 --gid 10001 --no-create-home \
      --home-dir /nonexistent --shell /usr/sbin/nologin maskd
    # What a container never uses: package caches, documentation, locales.
    rm -rf "$dir"/var/cache/apt/archives/*.deb "$dir"/var/lib/apt/lists/* \
      "$dir"/usr/share/doc/* "$dir"/usr/share/man/* "$dir"/usr/share/info/* \
      "$dir"/usr/share/locale/*
    touch "$dir/.complete"
  fi
  echo "$dir"
}

# Imports DIR plus the files given as SRC:DEST pairs as IMAGE with the podman --change
# instructions that follow "--".
import_image() {
  local image="$1" dir="$2"; shift 2
  local stage hash
  # Same base, same files, same settings: the image is already there (a podman import
  # of a few hundred MiB takes minutes on a busy 2-core machine).
  # (Sources are hashed by content and destination: the binaries sit in a fresh temp dir.)
  hash="$( { echo "$dir"; local after=0; for arg in "$@"; do
    if ((after)) || [[ "$arg" == -- ]]; then after=1; echo "$arg"; continue; fi
    echo "${arg#*:} $(sha256sum <"${arg%%:*}")"; done; } | sha256sum | cut -c1-16)"
  if [[ "$(podman image inspect --format '{{index .Labels "maskd.build-hash"}}' "$image" \
    2>/dev/null)" == "$hash" ]]; then
    echo "build_image: $image is up to date"
    return
  fi
  set -- "$@" "LABEL=maskd.build-hash=$hash"
  stage="$(mktemp -d "$cache/stage.XXXXXX")"
  trap 'rm -rf "$stage"' RETURN
  cp -a "$dir/." "$stage/"
  rm -f "$stage/.complete"
  while (($#)) && [[ "$1" != "--" ]]; do
    install -D -m 0755 "${1%%:*}" "$stage/${1#*:}"
    shift
  done
  shift
  local changes=()
  for change in "$@"; do changes+=(--change "$change"); done
  tar --numeric-owner -C "$stage" -c . |
    podman import --quiet "${changes[@]}" --message "maskd scripts/build_image.sh" - "$image" >/dev/null
  echo "build_image: $image $(podman image inspect --format '{{.Size}}' "$image" |
    awk '{printf "%.1f MiB", $1 / 1048576}')"
}

# --- runtime image --------------------------------------------------------------------
MASKD_BUILD_DIR="${MASKD_BUILD_DIR:-build/release}" "$root/scripts/build.sh" release \
  --target maskd maskctl >/dev/null
build="$root/${MASKD_BUILD_DIR:-build/release}"
bin="$(mktemp -d)"
trap 'rm -rf "$bin"' EXIT
strip -o "$bin/maskd" "$build/service/maskd"
strip -o "$bin/maskctl" "$build/clients/cpp/maskctl"

mapfile -t runtime_packages < <(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' \
  "$root/deploy/container/runtime-packages.txt")
runtime_dir="$(base_rootfs runtime "${runtime_packages[@]}")"
mkdir -p "$runtime_dir/var/lib/maskd/tokenizers"
import_image "localhost/maskd:$tag" "$runtime_dir" \
  "$bin/maskd:usr/local/bin/maskd" "$bin/maskctl:usr/local/bin/maskctl" -- \
  "USER=10001:10001" \
  "EXPOSE=50051" "EXPOSE=9464" \
  "VOLUME=/var/lib/maskd/tokenizers" \
  'ENTRYPOINT=["/usr/local/bin/maskd"]' \
  'CMD=["--listen=0.0.0.0:50051","--metrics_listen=0.0.0.0:9464","--tokenizer=llama3=/var/lib/maskd/tokenizers/llama3","--shutdown_grace=20s"]' \
  "LABEL=org.opencontainers.image.version=$tag"

# --- tokenizer-fetcher image ------------------------------------------------------------
if ((fetcher)); then
  fetcher_dir="$(base_rootfs fetcher ca-certificates nodejs npm)"
  import_image "localhost/maskd-tokenizer-fetcher:$tag" "$fetcher_dir" \
    "$root/scripts/fetch_tokenizers.sh:usr/local/bin/fetch_tokenizers.sh" -- \
    "USER=10001:10001" \
    "ENV=HOME=/tmp" "ENV=MASKD_TOKENIZER_DIR=/var/lib/maskd/tokenizers" \
    'ENTRYPOINT=["/usr/local/bin/fetch_tokenizers.sh"]' \
    "LABEL=org.opencontainers.image.version=$tag"
fi

if ((probe)); then
  if ((fetcher)); then
    "$root/scripts/probe_image.sh" "localhost/maskd:$tag" "localhost/maskd-tokenizer-fetcher:$tag"
  else
    "$root/scripts/probe_image.sh" "localhost/maskd:$tag"
  fi
fi
