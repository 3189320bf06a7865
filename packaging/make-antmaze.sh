#!/usr/bin/env bash
# Makes what AntMaze ships, in stages that each resume where they stopped (a long stage is given at
# most MINUTES minutes per call; run the same command again to continue):
#
#   goal-reacher   SAC on D4RL's ant in the open plane (dstudio behaviour sac --env
#                  ant-goal-reaching), STEPS environment steps in chunks of CHUNK, in RUN; after
#                  each chunk the run's checkpoint and curve (not its replay buffer) are copied to
#                  CARRY, in the source tree, while they stay under CARRY_MB (8) megabytes, and a
#                  RUN that is missing starts from CARRY
#   refine         the goal-reacher refined on the goal sequence (--env ant-goal-sequence: a new goal
#                  every 25 to 100 steps), starting from the goal-reacher's checkpoint and replay
#                  buffer, REFINE_STEPS steps in REFINED; carried like the first to REFINED_CARRY
#   ship           the refined goal-reacher's policies, the candidates ranked by how often the
#                  navigator gets through each maze, to resources/policies/ant-goal-reaching-sac.json,
#                  and the controller's success rate on each maze (dstudio behaviour navigate)
#   data           the default datasets of TASKS (dstudio dataset default --env ...), timed
#   checkpoints    DT and DC on each of TASKS (packaging/train-default-checkpoints.sh with DATA),
#                  each at its recipe's steps; the finished ones ship to resources/checkpoints/
#   seeds          DT and DC on each of TASKS with seeds 0, 1 and 2 in the findings' shorter runs
#                  (10,000 steps, 1,000 warm-up), in SEEDS_OUT/seed-<s>/<task>-<model>
#
#   bash packaging/make-antmaze.sh goal-reacher refine     # SAC for at most MINUTES minutes
#   bash packaging/make-antmaze.sh ship data checkpoints seeds
set -euo pipefail
cd "$(dirname "$0")/.."
B=${B:-build/release/bin}
RUN=${RUN:-build/antmaze/sac-ant-goal-reaching}
STEPS=${STEPS:-3000000}
CHUNK=${CHUNK:-50000}
MINUTES=${MINUTES:-150}
THREADS=${THREADS:-1}
TASKS=${TASKS:-"antmaze-umaze-v2 antmaze-medium-play-v2"}
EVAL_EVERY=${EVAL_EVERY:-50000}
UPTURN_PENALTY=${UPTURN_PENALTY:-10}
CARRY=${CARRY:-resources/training/ant-goal-reaching-sac}
REFINED=${REFINED:-build/antmaze/sac-ant-goal-sequence}
REFINE_STEPS=${REFINE_STEPS:-350000}
REFINE_EVAL_EVERY=${REFINE_EVAL_EVERY:-25000}
REFINED_CARRY=${REFINED_CARRY:-resources/training/ant-goal-sequence-sac}
POLICIES=resources/policies/ant-goal-reaching-sac.json
SEEDS_OUT=${SEEDS_OUT:-build/antmaze/seeds}

# The run's checkpoint and state, without the replay buffer (hundreds of megabytes): enough to
# continue on another machine, from a buffer the actor refills. The state holds every snapshot's
# policy and grows by about 200 KB a snapshot: past CARRY_MB it stays in RUN, on this machine only,
# and the carry is removed rather than left behind at an earlier step.
CARRY_MB=${CARRY_MB:-8}
carry_out() {  # RUN CARRY
  local size
  size=$(stat -c %s "$1/state.json")
  if (( size > CARRY_MB * 1024 * 1024 )); then
    echo "== $1: state.json is $(( size / 1024 / 1024 )) MB, over the ${CARRY_MB} MB carried in the source tree; the run continues from $1 only"
    rm -rf "$2"
    return 0
  fi
  mkdir -p "$2"
  for f in checkpoint.pt state.json; do
    cp "$1/$f" "$2/.$f.tmp" && mv "$2/.$f.tmp" "$2/$f"
  done
}

carry_in() {  # RUN CARRY
  if [ ! -f "$1/state.json" ] && [ -f "$2/state.json" ]; then
    mkdir -p "$1"
    cp "$2/checkpoint.pt" "$2/state.json" "$1/"
    echo "== $1: continuing from $2 (the replay buffer refills first)"
  fi
}

done_steps() {  # RUN STEPS: whether the run in RUN has taken STEPS steps
  [ -f "$1/state.json" ] && python3 -c "import json,sys; sys.exit(0 if json.load(open('$1/state.json'))['steps'] >= $2 else 1)"
}

stage_goal_reacher() {
  local until
  until=$(( $(date +%s) + MINUTES * 60 ))
  carry_in "$RUN" "$CARRY"
  while [ "$(date +%s)" -lt "$until" ]; do
    if done_steps "$RUN" "$STEPS"; then
      echo "== goal-reacher: $STEPS steps done"
      return 0
    fi
    nice -n 10 "$B/dstudio" behaviour sac --env ant-goal-reaching --out "$RUN" --steps "$STEPS" \
      --chunk "$CHUNK" --threads "$THREADS" --seed 0 --eval-every "$EVAL_EVERY" \
      --upturn-penalty "$UPTURN_PENALTY"
    carry_out "$RUN" "$CARRY"
  done
  echo "== goal-reacher: stopped for now; run this again to continue"
}

stage_refine() {
  local until
  until=$(( $(date +%s) + MINUTES * 60 ))
  carry_in "$REFINED" "$REFINED_CARRY"
  if [ ! -f "$REFINED/state.json" ] && ! done_steps "$RUN" "$STEPS"; then
    echo "== refine: the goal-reacher has not taken its $STEPS steps yet (stage goal-reacher)" >&2
    return 1
  fi
  while [ "$(date +%s)" -lt "$until" ]; do
    if done_steps "$REFINED" "$REFINE_STEPS"; then
      echo "== refine: $REFINE_STEPS steps done"
      return 0
    fi
    nice -n 10 "$B/dstudio" behaviour sac --env ant-goal-sequence --out "$REFINED" \
      --start-from "$RUN" --random-steps 0 --steps "$REFINE_STEPS" --chunk "$CHUNK" \
      --threads "$THREADS" --seed 0 --eval-every "$REFINE_EVAL_EVERY" \
      --upturn-penalty "$UPTURN_PENALTY"
    carry_out "$REFINED" "$REFINED_CARRY"
  done
  echo "== refine: stopped for now; run this again to continue"
}

stage_ship() {
  # The 12 snapshots of the best return are candidates, not ship's 8: the goal sequence's returns
  # say little of how the ant gets through a maze.
  "$B/dstudio" behaviour ship --run "$REFINED" --out "$POLICIES" \
    --candidates "${SHIP_CANDIDATES:-12}" --navigation-episodes "${SHIP_EPISODES:-50}"
  for task in antmaze-umaze-v2 antmaze-medium-play-v2 antmaze-large-play-v2; do
    "$B/dstudio" behaviour navigate --env "$task" --policies "$POLICIES" --episodes 100
  done
  echo "== ship: rebuild (bash packaging/build.sh) so that the library embeds the new policies"
}

stage_data() {
  for task in $TASKS; do
    local start
    start=$(date +%s)
    "$B/dstudio" dataset default --env "$task"
    echo "== data: $task in $(( $(date +%s) - start )) s"
  done
}

# STEPS here is the SAC run's: the trainings get their own (empty: each model's recipe).
stage_checkpoints() {
  for task in $TASKS; do
    STEPS='' DATA=$("$B/dstudio" dataset default --env "$task") MINUTES="$MINUTES" \
      bash packaging/train-default-checkpoints.sh dt dc
  done
}

stage_seeds() {
  local task s
  for task in $TASKS; do
    for s in 0 1 2; do
      # A checkpoint every 2,500 steps: a run killed outright loses at most that much.
      SEED=$s STEPS=10000 WARMUP=1000 CHECKPOINT_EVERY=2500 OUT="$SEEDS_OUT/seed-$s" MINUTES="$MINUTES" \
        DATA=$("$B/dstudio" dataset default --env "$task") \
        bash packaging/train-default-checkpoints.sh dt dc
    done
  done
}

[ $# -gt 0 ] || { sed -n '2,23p' "$0"; exit 2; }
for stage in "$@"; do
  case "$stage" in
    goal-reacher) stage_goal_reacher ;;
    refine) stage_refine ;;
    ship) stage_ship ;;
    data) stage_data ;;
    checkpoints) stage_checkpoints ;;
    seeds) stage_seeds ;;
    *) echo "unknown stage: $stage (goal-reacher, refine, ship, data, checkpoints, seeds)" >&2; exit 2 ;;
  esac
done
