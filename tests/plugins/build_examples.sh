#!/usr/bin/env bash
# Installs the plugin SDK from a build tree (cmake --install), builds the example plugins of plugins/
# against it out of tree, as a plugin author would, and puts them in <out>/plugins.
#   build_examples.sh <build tree> <out>
set -euo pipefail
build=$1
out=$2
source=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
rm -rf "$out"
mkdir -p "$out/plugins"
cmake --install "$build" --prefix "$out/sdk" >"$out/install.log"
launcher=()
if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
for plugin in diagonal-ssm token-distance inverted-pendulum; do
  cmake -S "$source/plugins/$plugin" -B "$out/build-$plugin" -G Ninja -DCMAKE_BUILD_TYPE=Release \
        -DCMAKE_PREFIX_PATH="$out/sdk" "${launcher[@]}" >"$out/$plugin.log"
  cmake --build "$out/build-$plugin" >>"$out/$plugin.log"
  cp "$out/build-$plugin/$plugin.so" "$out/plugins/"
done
ls "$out/plugins"
