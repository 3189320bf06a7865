#!/usr/bin/env bash
# The two live viewers measured in one run on one display: decision-viewer (GLFW and Dear ImGui)
# with `--bench SECONDS`, then the studio's Qt viewer with `decision-studio --bench-gui SECONDS`,
# both playing the shipped DT at real time in a 1280 x 800 window; then decision-viewer with two and
# with four counterfactual forks (--fork) drawn as ghosts beside the main run, every run stepped on
# the same clock. Without a display it runs under a virtual X server (xvfb-run), where OpenGL is
# Mesa's software renderer.
#
# AntMaze is measured too when there is a checkpoint trained on an antmaze task (ANTMAZE_CHECKPOINT,
# by default resources/checkpoints/antmaze-umaze-v2-dt.pt) and, for the studio, which trains beside
# the viewer, a dataset of it (ANTMAZE_DATASET): both viewers play the checkpoint over the whole
# maze, the walls, the goal and the path drawn.
#
#   bash packaging/bench-viewers.sh        # 10 s each
#   bash packaging/bench-viewers.sh 30
#   ANTMAZE_CHECKPOINT=runs/dt-umaze/checkpoint.pt ANTMAZE_DATASET=umaze.hdf5 \
#     bash packaging/bench-viewers.sh 10
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
ANTMAZE_CHECKPOINT=${ANTMAZE_CHECKPOINT:-resources/checkpoints/antmaze-umaze-v2-dt.pt}
if [ ! -f "$ANTMAZE_CHECKPOINT" ]; then
  echo "== AntMaze not measured: no $ANTMAZE_CHECKPOINT; give ANTMAZE_CHECKPOINT (a checkpoint of"
  echo "   an antmaze task) and ANTMAZE_DATASET (a dataset of it)"
  exit 0
fi
echo "== decision-viewer --bench $SECONDS_EACH, AntMaze: $ANTMAZE_CHECKPOINT"
"$B/decision-viewer" "$ANTMAZE_CHECKPOINT" --size 1280 800 --bench "$SECONDS_EACH"
if [ -z "${ANTMAZE_DATASET:-}" ]; then
  echo "== the studio on AntMaze not measured: give ANTMAZE_DATASET (a dataset of the checkpoint's"
  echo "   task, which the studio trains on beside the viewer)"
  exit 0
fi
echo "== decision-studio --bench-gui $SECONDS_EACH, AntMaze: $ANTMAZE_DATASET and $ANTMAZE_CHECKPOINT"
QT_QPA_PLATFORM=xcb "$B/decision-studio" --bench-gui "$SECONDS_EACH" "$ANTMAZE_DATASET" "$ANTMAZE_CHECKPOINT"
