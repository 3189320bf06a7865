#!/usr/bin/env bash
# The README's second command (and .ci/run): install what is missing, build everything, run every
# test, and build, check and install the Debian package in a throwaway root. GUI tests use Qt's
# offscreen platform, so no display is needed.
set -euo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bash "$top/packaging/setup.sh"
# The code stays as .clang-format says; checked first, as it takes seconds.
bash "$top/packaging/check-format.sh"
bash "$top/packaging/build.sh"
cd "$top"
ctest --preset release --parallel "${DSTUDIO_JOBS:-$(nproc)}"
bash "$top/packaging/fuzz.sh"
# The Debian package: built and checked by lintian, then installed and used in a throwaway root.
bash "$top/packaging/build-deb.sh"
bash "$top/packaging/test-deb.sh"
