#!/usr/bin/env bash
# The README's first command: install what is missing, build, and start the studio on its
# embedded default dataset. Arguments are passed to decision-studio (e.g. a dataset path).
set -euo pipefail
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bash "$top/packaging/setup.sh"
bash "$top/packaging/build.sh" --target decision-studio dstudio
studio="$top/build/release/bin/decision-studio"
if [[ -z "${DISPLAY:-}" && -z "${WAYLAND_DISPLAY:-}" ]]; then
  # No screen to open a window on: render the window once on a virtual X server (with OpenGL, so
  # the viewer draws too) or, without one, on Qt's offscreen platform, and say where it went.
  shot="$top/build/release/decision-studio.png"
  echo "run: no display found; rendering the studio off screen to $shot"
  if command -v xvfb-run > /dev/null; then
    QT_QPA_PLATFORM=xcb exec xvfb-run -a -s "-screen 0 1600x1000x24" "$studio" --screenshot "$shot" "$@"
  fi
  QT_QPA_PLATFORM=offscreen exec "$studio" --screenshot "$shot" "$@"
fi
exec "$studio" "$@"
