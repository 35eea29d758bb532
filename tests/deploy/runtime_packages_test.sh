#!/usr/bin/env bash
# The container's runtime stage installs exactly the Debian packages that own the
# shared libraries maskd (and maskctl, the health probe) load: nothing missing
# (the image would not start), nothing extra (the image should hold only
# runtime libraries).
#   runtime_packages_test.sh REPO_ROOT BINARY...
set -euo pipefail
root="$(cd "${1:?usage: runtime_packages_test.sh REPO_ROOT BINARY...}" && pwd)"
shift
(($#)) || { echo "FAIL: no binaries given" >&2; exit 1; }
list="$root/deploy/container/runtime-packages.txt"
dockerfile="$root/deploy/container/Dockerfile"
fail() { echo "FAIL: $*" >&2; exit 1; }

owner() {  # library path -> Debian package (usrmerge: try the resolved path too)
  local pkg
  pkg="$(dpkg -S "$1" 2>/dev/null || dpkg -S "$(readlink -f "$1")" 2>/dev/null)" ||
    fail "no Debian package owns $1"
  pkg="${pkg%%:*}"
  echo "$pkg"
}

needed=()
for bin in "$@"; do
  [[ -x "$bin" ]] || fail "$bin is not an executable"
  if ldd "$bin" | grep -q 'not found'; then fail "$bin: $(ldd "$bin" | grep 'not found')"; fi
  while read -r lib; do
    pkg="$(owner "$lib")"
    # Sanitizer runtimes appear only in the ASan/TSan test builds, never in the image.
    [[ "$pkg" =~ ^lib(asan|ubsan|tsan|lsan)[0-9]+$ ]] && continue
    needed+=("$pkg")
  done < <(ldd "$bin" | awk '$2 == "=>" && $3 ~ /^\// {print $3}')
  # The dynamic loader itself (ld-linux) is libc6's.
done
needed_sorted="$(printf '%s\n' "${needed[@]}" libc6 | sort -u)"
listed_sorted="$(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$list" | tr -d ' ' | sort -u)"
missing="$(comm -23 <(echo "$needed_sorted") <(echo "$listed_sorted"))"
extra="$(comm -13 <(echo "$needed_sorted") <(echo "$listed_sorted"))"
[[ -z "$missing" ]] || fail "runtime-packages.txt misses: $(echo $missing)"
[[ -z "$extra" ]] || fail "runtime-packages.txt lists packages no binary needs: $(echo $extra)"
echo "ok: runtime-packages.txt = the $(wc -l <<<"$needed_sorted") packages owning the libraries of $*"

# The runtime stage really installs from that list and ships the binaries.
grep -q '^COPY deploy/container/runtime-packages.txt' "$dockerfile" ||
  fail "Dockerfile does not copy runtime-packages.txt"
grep -q "sed -e 's/#.\*//' /tmp/runtime-packages.txt | xargs" "$dockerfile" ||
  fail "Dockerfile does not install runtime-packages.txt"
grep -q '^FROM .* AS runtime$' <(grep '^FROM' "$dockerfile" | tail -n 1) ||
  fail "the runtime stage must be the Dockerfile's last (default) stage"
grep -q '^USER 10001' <(sed -n '/AS runtime$/,$p' "$dockerfile") || fail "runtime stage runs as root"
echo "ok: the Dockerfile's runtime stage installs the list and runs as uid 10001"
echo "runtime_packages_test: 2 passed, 0 failed"
