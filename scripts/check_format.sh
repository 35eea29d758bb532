#!/usr/bin/env bash
# Fails when any C++ or proto source differs from clang-format's output.
#   scripts/check_format.sh          # check
#   scripts/check_format.sh --fix    # rewrite in place
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
mapfile -t files < <(git ls-files --cached --others --exclude-standard \
  '*.cc' '*.h' '*.proto' | grep -v '^build/' || true)
((${#files[@]})) || exit 0
if [[ "${1:-}" == "--fix" ]]; then
  clang-format -i "${files[@]}"
  exit 0
fi
if ! clang-format --dry-run --Werror "${files[@]}" 2>/tmp/maskd-format.$$; then
  grep -E '^[^ ].*: (error|warning):' /tmp/maskd-format.$$ | cut -d: -f1 | sort -u | sed 's/^/needs clang-format: /' >&2
  rm -f /tmp/maskd-format.$$
  echo "check_format: run scripts/check_format.sh --fix" >&2
  exit 1
fi
rm -f /tmp/maskd-format.$$
echo "check_format: ${#files[@]} files clean" >&2
