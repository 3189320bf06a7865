#!/usr/bin/env bash
# The two live viewers measured in one run on one display: decision-viewer (GLFW and Dear ImGui)
# with `--bench SECONDS`, then the studio's Qt viewer with `decision-studio --bench-gui SECONDS`,
# both playing the shipped DT at real time in a 1280 x 800 window; then decision-viewer with two and
# with four counterfactual forks (--fork) drawn as ghosts beside the main run, every run stepped on
# the same clock. Without a display it runs under a virtual X server (xvfb-run), where OpenGL is
# Mesa's software renderer.
#
#   bash packaging/bench-viewers.sh        # 10 s each
#   bash packaging/bench-viewers.sh 30
set -euo pipefail
cd "$(dirname "$0")/.."
B=${B:-build/release/bin}
SECONDS_EACH=${1:-10}
if [ -z "${DISPLAY:-}" ]; then
  exec xvfb-run -a -s "-screen 0 1600x1000x24" bash "$0" "$@"
fi
echo "== decision-viewer --bench $SECONDS_EACH"
"$B/decision-viewer" resources/checkpoints/hopper-medium-expert-dt.pt --size 1280 800 --bench "$SECONDS_EACH"
CK=resources/checkpoints/hopper-medium-expert-dt.pt
echo "== decision-viewer --bench $SECONDS_EACH, two forks"
"$B/decision-viewer" "$CK" --size 1280 800 --bench "$SECONDS_EACH" \
  --fork 0:target=1800 --fork 0:head:1.1=zero
echo "== decision-viewer --bench $SECONDS_EACH, four forks"
"$B/decision-viewer" "$CK" --size 1280 800 --bench "$SECONDS_EACH" \
  --fork 0:target=1800 --fork 0:head:1.1=zero --fork 0:context:2 --fork 0:mlp:3=zero
echo "== decision-studio --bench-gui $SECONDS_EACH"
QT_QPA_PLATFORM=xcb "$B/decision-studio" --bench-gui "$SECONDS_EACH"
