#!/bin/sh
# The soak (bench/soak/soak.py): run from the repository root after
# `scripts/build.sh release --target maskd maskd_python_stubs`; flags go to soak.py
# (--duration_s, default 1800; --streams, default 100; --help lists the rest).
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
PYTHONPATH="$root/build/release/python:$root/clients/python${PYTHONPATH:+:$PYTHONPATH}" \
  exec /usr/bin/python3 "$root/bench/soak/soak.py" "$@"
