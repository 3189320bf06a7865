#!/usr/bin/env bash
# Trains the default checkpoints shipped in resources/checkpoints/, with the project's own command
# line, on the default hopper-medium dataset (made by the shipped behaviour policies, seed 0).
# Small models (hidden 64) so that all five train within an hour on two cores and ship in a few
# megabytes; the recipe is otherwise the papers' (AdamW, clip 0.25, dropout 0.1, batch 64).
#
#   bash packaging/train-default-checkpoints.sh            # all five
#   bash packaging/train-default-checkpoints.sh dt gdt     # some of them
set -euo pipefail
cd "$(dirname "$0")/.."
B=${B:-build/release/bin}
OUT=${OUT:-build/default-checkpoints}
STEPS=${STEPS:-10000}
THREADS=${THREADS:-1}
DATA=$("$B/dstudio" dataset default --env hopper --kind medium --algorithm ars)
TRAINING='{"learning_rate": 3e-4, "warmup_steps": 1000, "cosine_decay": true, "checkpoint_every": 0}'

# name, then the variant's arguments
recipe() {
  case "$1" in
    dt) echo "--variant dt --config {\"hidden\":64}" ;;
    dc) echo "--variant dc --config {\"hidden\":64}" ;;
    gdt) echo "--variant gdt --config {\"hidden\":64}" ;;
    dhi) echo "--variant dhi --config {\"hidden\":64}" ;;
    dt-merger) echo "--variant hier --merger conv --mixer attention --config {\"hidden\":64}" ;;
    *) echo "unknown default checkpoint: $1 (dt, dc, gdt, dhi, dt-merger)" >&2; exit 2 ;;
  esac
}

names=("$@")
[ ${#names[@]} -eq 0 ] && names=(dt dc gdt dhi dt-merger)
for name in "${names[@]}"; do
  args=$(recipe "$name")
  echo "== $name: dstudio train $args --steps $STEPS"
  # shellcheck disable=SC2086  # the recipe is a list of arguments
  "$B/dstudio" train $args --dataset "$DATA" --steps "$STEPS" --seed 0 --threads "$THREADS" \
    --training "$TRAINING" --out "$OUT/$name"
  "$B/dstudio" checkpoint slim "$OUT/$name/checkpoint.pt" --out "resources/checkpoints/hopper-medium-$name.pt"
done
