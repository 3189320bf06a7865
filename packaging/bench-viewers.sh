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
#
# The Adroit hand and the kitchen are measured when HAND_KITCHEN=1: both viewers replay the first
# episode of a small dataset of each task (pen, door, hammer, relocate: DAPG's expert, 2 episodes;
# kitchen-complete-v0: random actions, 280 steps), made here with `dstudio dataset generate`, from
# the task's camera with its goals or its elements drawn. The studio trains on the dataset meanwhile.
#
#   HAND_KITCHEN=1 bash packaging/bench-viewers.sh 10
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
if [ "${HAND_KITCHEN:-0}" = 1 ]; then
  TASKS_DIR=$(mktemp -d)
  trap 'rm -rf "$TASKS_DIR"' EXIT
  for task in pen door hammer relocate; do
    "$B/dstudio" dataset generate --env "$task" --episodes 2 --threads 1 --out "$TASKS_DIR/$task-expert.hdf5" >/dev/null
  done
  "$B/dstudio" dataset generate --env kitchen-complete-v0 --kind random --transitions 280 \
    --threads 1 --out "$TASKS_DIR/kitchen-complete-v0.hdf5" >/dev/null
  for file in "$TASKS_DIR"/*.hdf5; do
    echo "== decision-viewer --bench $SECONDS_EACH, replaying $(basename "$file")"
    "$B/decision-viewer" --dataset "$file" --episode 0 --size 1280 800 --bench "$SECONDS_EACH"
    echo "== decision-studio --bench-gui $SECONDS_EACH, replaying $(basename "$file")"
    QT_QPA_PLATFORM=xcb "$B/decision-studio" --bench-gui "$SECONDS_EACH" "$file"
  done
fi
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
