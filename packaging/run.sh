#!/usr/bin/env bash
# The README's first command: install what is missing, build, and start the studio on its
# embedded default dataset. Arguments are passed to decision-studio (e.g. a dataset path).
set -euo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bash "$top/packaging/setup.sh"
bash "$top/packaging/build.sh" --target decision-studio dstudio
studio="$top/build/release/bin/decision-studio"
if [[ -z "${DISPLAY:-}" && -z "${WAYLAND_DISPLAY:-}" ]]; then
  # No screen to open a window on: render the window offscreen once and say where it went.
  shot="$top/build/release/decision-studio.png"
  echo "run: no display found; rendering the studio offscreen to $shot"
  QT_QPA_PLATFORM=offscreen exec "$studio" --screenshot "$shot" "$@"
fi
exec "$studio" "$@"
