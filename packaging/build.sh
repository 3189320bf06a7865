#!/usr/bin/env bash
# Configures (once) and builds the Release tree in build/release. Extra arguments are passed to
# `cmake --build`, e.g. `--target decision-studio`.
set -euo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$top"
if [[ ! -f build/release/CMakeCache.txt ]]; then
  cmake --preset release >/dev/null
fi
jobs=${DSTUDIO_JOBS:-$(nproc)}
cmake --build --preset release --parallel "$jobs" "$@"
