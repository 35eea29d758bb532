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

# Every shared library the binaries load, as ldd resolves it.
libs=()
for bin in "$@"; do
  [[ -x "$bin" ]] || fail "$bin is not an executable"
  if ldd "$bin" | grep -q 'not found'; then fail "$bin: $(ldd "$bin" | grep 'not found')"; fi
  while read -r lib; do libs+=("$lib"); done < <(ldd "$bin" | awk '$2 == "=>" && $3 ~ /^\// {print $3}')
done
mapfile -t libs < <(printf '%s\n' "${libs[@]}" | sort -u)

# Their owning packages, from the file lists dpkg keeps (what `dpkg -S` searches; one
# grep instead of a dpkg query per library, which takes seconds on a loaded machine).
# With usrmerge a library may be registered under /lib or /usr/lib: ask for both.
# (Forks are counted: at a load of 15 on 2 cores each costs ~50 ms.)
mapfile -t real_paths < <(readlink -f "${libs[@]}")
queries=("${libs[@]}" "${real_paths[@]}" "${libs[@]/#\/usr\/lib\//\/lib\/}"
  "${libs[@]/#\/lib\//\/usr\/lib\/}")
# "/var/lib/dpkg/info/PKG[:ARCH].list:/path" -> "PKG /path"
owners="$(grep -xF -f <(printf '%s\n' "${queries[@]}") /var/lib/dpkg/info/*.list |
  sed -E 's#^/var/lib/dpkg/info/([^:]+)(:[^.]+)?\.list:#\1 #')" || true
# One package per library, trying each spelling of its path (a loop of awk calls
# would fork hundreds of times: Abseil alone is ~60 libraries).
resolved=()
for i in "${!libs[@]}"; do resolved+=("${libs[$i]} ${real_paths[$i]}"); done
needed_or_missing="$(awk '
  NR == FNR { owner[$2] = $1; next }
  {
    lib = $1; alt = lib; sub(/^\/usr/, "", alt); usr = "/usr" lib
    pkg = (lib in owner) ? owner[lib] : ($2 in owner) ? owner[$2] : (alt in owner) ? owner[alt] \
        : (usr in owner) ? owner[usr] : ""
    print (pkg == "" ? "UNOWNED " lib : pkg)
  }' <(echo "$owners") <(printf '%s\n' "${resolved[@]}"))"
if grep -q '^UNOWNED ' <<<"$needed_or_missing"; then
  fail "no Debian package owns: $(grep '^UNOWNED ' <<<"$needed_or_missing" | cut -d' ' -f2 | tr '\n' ' ')"
fi
# Sanitizer runtimes appear only in the ASan/TSan test builds, never in the image.
mapfile -t needed < <(grep -vE '^lib(asan|ubsan|tsan|lsan)[0-9]+$' <<<"$needed_or_missing")
# The image holds release binaries, which link jemalloc (MASKD_JEMALLOC); sanitizer
# builds keep the sanitizer's allocator, so there the package counts as needed.
if grep -qE '^lib(asan|tsan)[0-9]+$' <<<"$needed_or_missing"; then needed+=(libjemalloc2); fi
# The dynamic loader itself (ld-linux) is libc6's.
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
