#!/usr/bin/env bash
# Trains the default checkpoints shipped in resources/checkpoints/, with the project's own command
# line, on the story dataset (`dstudio dataset default --story`: made by the shipped SAC behaviour
# policies, seed 0). Models at the papers' sizes (each variant's defaults: hidden 128, 3 layers,
# K 20, or DC's Table 4 values; the papers' learning-rate schedules), evaluated every EVAL_EVERY
# steps so the learning curve says when the score stops improving. Each model trains for the steps
# its recipe names (below): past the point where its evaluations stopped rising, fewer than the
# papers' 100,000 because a step takes 50-150 ms on two cores. STEPS overrides them all.
#
# Long: run it in chunks. Each call gives every named model at most MINUTES minutes and then stops
# it with a checkpoint (Ctrl-C semantics); the next call continues each run exactly where it
# stopped. A finished run's weights-only copy goes to resources/checkpoints/. The models train one
# after another with THREADS workers each (default 2): on two cores that is faster in total than
# two one-thread runs side by side, and a run's numbers depend on its thread count.
#
#   bash packaging/train-default-checkpoints.sh                 # all seven
#   bash packaging/train-default-checkpoints.sh dt dc           # some of them
#   MINUTES=120 bash packaging/train-default-checkpoints.sh dt           # at most two hours, then stop
#   SEED=1 STEPS=10000 WARMUP=1000 OUT=build/seeds/seed-1 bash packaging/train-default-checkpoints.sh dt dc
#                                   # shorter runs of other seeds for the findings; only OUT's default ships
#   DATA=build/po/hopper-po-medium-expert.hdf5 STEPS=10000 WARMUP=1000 OUT=build/po/positions-only \
#     bash packaging/train-default-checkpoints.sh dt   # the same recipe on another dataset (the velocities hidden)
set -euo pipefail
cd "$(dirname "$0")/.."
B=${B:-build/release/bin}
OUT=${OUT:-build/default-checkpoints}
STEPS=${STEPS:-}
SEED=${SEED:-0}
THREADS=${THREADS:-2}
MINUTES=${MINUTES:-150}
EVAL_EVERY=${EVAL_EVERY:-5000}
WARMUP=${WARMUP:-}  # learning-rate warm-up steps, if not the paper's 10,000
CHECKPOINT_EVERY=${CHECKPOINT_EVERY:-}  # steps between periodic checkpoints, if not every 10,000
DATA=${DATA:-$("$B/dstudio" dataset default --story)}  # another dataset for contrasts; only the story's ship
NAME=$(basename "$DATA" | sed 's/-dstudio-.*//')  # e.g. hopper-medium-expert

# name, then the variant's arguments (each paper's defaults; see `dstudio variants --json`)
recipe() {
  case "$1" in
    dt) echo "--variant dt" ;;
    # The reference architecture CORL's DecisionTransformer (algorithms/offline/dt.py) builds and
    # trains: a GELU MLP and a timestep table of episode_len 1000 + seq_len 20 rows, so
    # `dstudio export --format corl-dt` writes a file CORL's module loads strictly.
    dt-corl) echo "--variant dt --config {\"activation\":\"gelu\",\"max_ep_len\":1020}" ;;
    dc) echo "--variant dc" ;;
    gdt) echo "--variant gdt" ;;
    dhi) echo "--variant dhi" ;;
    dt-merger) echo "--variant hier --merger conv --mixer attention" ;;
    udc) echo "--variant udc" ;;
    *) echo "unknown default checkpoint: $1 (dt, dt-corl, dc, gdt, dhi, dt-merger, udc)" >&2; exit 2 ;;
  esac
}

# training steps of each shipped run. DC's evaluations were flat (95-98) from 10,000 steps on and
# DT's (97-98) from 15,000 on; the others get twice their learning-rate warm-up.
steps() {
  if [ -n "$STEPS" ]; then echo "$STEPS"; return; fi
  case "$1" in
    dc) echo 50000 ;;
    dt|dt-corl) echo 30000 ;;
    *) echo 20000 ;;
  esac
}

# training fields beyond the defaults, as one JSON object
training() {
  local fields=()
  [ "$1" = dhi ] && fields+=('"cosine_decay":true')
  [ -n "$WARMUP" ] && fields+=("\"warmup_steps\":$WARMUP")
  [ -n "$CHECKPOINT_EVERY" ] && fields+=("\"checkpoint_every\":$CHECKPOINT_EVERY")
  local IFS=,
  echo "{${fields[*]}}"
}

names=("$@")
[ ${#names[@]} -eq 0 ] && names=(dt dt-corl dc gdt dhi dt-merger udc)
for name in "${names[@]}"; do
  args=$(recipe "$name")
  n=$(steps "$name")
  # The story's runs keep their folders; another dataset's are named by it (antmaze-umaze-v2-dt).
  run="$OUT/$name"
  [ "$NAME" = "$(basename "$("$B/dstudio" dataset default --story)" | sed 's/-dstudio-.*//')" ] || run="$OUT/$NAME-$name"
  status=0
  # The newest of the periodic checkpoint.pt and the checkpoint-<step>.pt a stop leaves.
  latest=$(ls -t "$run"/checkpoint*.pt 2>/dev/null | head -n 1 || true)
  if [ -n "$latest" ]; then
    echo "== $name: continuing $latest"
    timeout -s INT "${MINUTES}m" "$B/dstudio" train --resume "$latest" --steps "$n" || status=$?
  else
    fields=$(training "$name")
    echo "== $name: dstudio train $args --training $fields --steps $n --seed $SEED"
    # shellcheck disable=SC2086  # the recipe is a list of arguments
    timeout -s INT "${MINUTES}m" "$B/dstudio" train $args --training "$fields" --dataset "$DATA" --steps "$n" \
      --seed "$SEED" --threads "$THREADS" --eval-every "$EVAL_EVERY" --eval-episodes 5 --out "$run" || status=$?
  fi
  if [ "$status" -eq 130 ] || [ "$status" -eq 124 ]; then
    echo "== $name: stopped for now; run this again to continue"
    continue
  fi
  [ "$status" -eq 0 ] || exit "$status"
  if [ "$OUT" = build/default-checkpoints ]; then
    "$B/dstudio" checkpoint slim "$run/checkpoint.pt" --out "resources/checkpoints/$NAME-$name.pt"
  fi
done
