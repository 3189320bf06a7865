#!/usr/bin/env bash
# Runs the analyses behind docs/findings.md on the shipped checkpoints and copies their summaries
# and PNG figures into docs/findings/. Every number in docs/findings.md comes from here.
#
# The story: the checkpoints trained on the story dataset (resources/checkpoints/<story>-*.pt, made
# by packaging/train-default-checkpoints.sh). The contrast: the earlier checkpoints trained on the
# ARS hopper medium (resources/checkpoints/hopper-medium-*.pt), where return conditioning vanishes.
# The seeds: DT and DC trained with seeds 0, 1 and 2 in shorter runs (SEEDS, made by
# `SEED=s STEPS=10000 WARMUP=1000 OUT=build/seeds/seed-s bash packaging/train-default-checkpoints.sh dt dc`),
# each scored at its best target of the sweep, then mean and standard deviation over the seeds.
# Adroit: DT, DC and DHi trained on the door's and the pen's expert data (ADROIT, made by
# `DATA=$(dstudio dataset default --env door) STEPS=10000 WARMUP=1000 OUT=build/adroit/door
#  bash packaging/train-default-checkpoints.sh dt dc dhi`, and the same for pen), each knocked out
# over 20 episodes; a model not trained yet is skipped and said so.
#
#   bash packaging/reproduce-findings.sh                  # all eight (story, contrast, seeds, locality, causal, efficiency, adroit, antmaze)
#   bash packaging/reproduce-findings.sh story seeds      # some of them
#   ONLY=rtg-sweep,attention-dt bash packaging/reproduce-findings.sh story   # just these folders
#   ONLY=antmaze/seeds bash packaging/reproduce-findings.sh antmaze   # the maze seeds' table alone
set -euo pipefail
cd "$(dirname "$0")/.."
B=${B:-build/release/bin}
OUT=${OUT:-build/findings}
DOCS=docs/findings
EPISODES=${EPISODES:-10}
STORY=resources/checkpoints/$(basename "$("$B/dstudio" dataset default --story)" | sed 's/-dstudio-.*//')
ARS=resources/checkpoints/hopper-medium
SEEDS=${SEEDS:-build/seeds}
PO=${PO:-build/po}
ADROIT=${ADROIT:-build/adroit}
ANTMAZE_SEEDS=${ANTMAZE_SEEDS:-build/antmaze/seeds}
ANTMAZE_EPISODES=${ANTMAZE_EPISODES:-100}
ANTMAZE_COMPARE_EPISODES=${ANTMAZE_COMPARE_EPISODES:-20}

run() {  # folder, then the analyze arguments
  local name=$1; shift
  local missing
  if [[ -n ${ONLY:-} && ,$ONLY, != *,$name,* ]]; then return 0; fi
  for missing in "$@"; do
    if [[ $missing == *.pt && ! -f $missing ]]; then
      echo "== $name: skipped, $missing is not trained yet" >&2
      return 0
    fi
  done
  echo "== $name: dstudio analyze $*"
  "$B/dstudio" analyze "$@" --out "$OUT/$name" --threads 2 > /dev/null
  rm -rf "${DOCS:?}/$name"
  mkdir -p "$DOCS/$name"
  cp "$OUT/$name/summary.json" "$DOCS/$name/"
  find "$OUT/$name" -maxdepth 1 -name '*.png' -exec cp {} "$DOCS/$name/" \;
}

# The analyses of one set of checkpoints: prefix C (…/<dataset>), output folders under P.
analyses() {
  local C=$1 P=$2 m
  # Modality zeroing (DC fig. 5), over 3 evaluation seeds, and out-of-distribution targets (fig. 6).
  for m in dc dt; do run ${P}ablation-$m ablation --checkpoint $C-$m.pt --episodes "$EPISODES" --seeds 3; done
  run ${P}rtg-sweep rtg-sweep --checkpoint $C-dt.pt --compare $C-dc.pt --episodes "$EPISODES"
  # Attention maps on the same dataset windows (DC fig. 3), and DT - GDT (GDT fig. 4).
  run ${P}attention-dt attention --checkpoint $C-dt.pt --compare $C-gdt.pt --layer 1
  for m in gdt dc dt-merger dhi; do run ${P}attention-$m attention --checkpoint $C-$m.pt --layer 1; done
  # Entropy against reward during rollouts, per layer and head, intra- and inter-step (DHi fig. 2).
  for m in dt gdt dt-merger dhi dc; do run ${P}entropy-$m entropy --checkpoint $C-$m.pt --episodes "$EPISODES"; done
  # Merged against unmerged tokens (DHi fig. 5).
  for m in dhi dt-merger dt; do run ${P}tsne-$m tsne --checkpoint $C-$m.pt --windows 40; done
}

story() {
  local m
  analyses "$STORY" ""
  # Learning curves of the shipped runs, where their folders are here (training leaves them in
  # build/default-checkpoints; the figures in docs/findings/training-* stay otherwise).
  local folder
  for folder in "${RUNS:-build/default-checkpoints}"/*/; do
    if [ -f "$folder/metrics.jsonl" ]; then run "training-$(basename "$folder")" training --run "$folder"; fi
  done
  # Table 1's ordering: every model at its best of the sweep's targets.
  for m in dc dt gdt dhi dt-merger udc; do run rtg-sweep-$m rtg-sweep --checkpoint $STORY-$m.pt --episodes "$EPISODES"; done
}

contrast() {
  analyses "$ARS" ars/
}

seeds() {
  local m s
  for m in dc dt; do
    for s in 0 1 2; do
      run seeds/$m-seed-$s rtg-sweep --checkpoint "$SEEDS/seed-$s/$m/checkpoint.pt" --episodes "$EPISODES"
      run seeds/$m-seed-$s-ablation ablation --checkpoint "$SEEDS/seed-$s/$m/checkpoint.pt" --episodes "$EPISODES"
    done
  done
  mkdir -p "$DOCS/seeds"
  python3 - "$DOCS/seeds" <<'PY' | tee "$DOCS/seeds/summary.md"
import json, statistics, sys
from pathlib import Path
root = Path(sys.argv[1])
def per_seed(m, suffix, value):
    """value(summary) of each seed's folder <m>-seed-<s><suffix>, None where it is not trained."""
    out = []
    for s in (0, 1, 2):
        f = root / f"{m}-seed-{s}{suffix}" / "summary.json"
        out.append(value(json.loads(f.read_text())) if f.exists() else None)
    return out

def mean_std(values, fmt, std_fmt):
    done = [v for v in values if v is not None]
    return (fmt % statistics.mean(done) if done else "-", std_fmt % statistics.stdev(done) if len(done) > 1 else "-")

def best_of(summary):
    top = max(summary["points"], key=lambda p: p["mean"])
    return (top["mean"], top["target"])

print("| model | seed 0 | seed 1 | seed 2 | mean | std |")
print("|---|---|---|---|---|---|")
for m in ("dc", "dt"):
    best = per_seed(m, "", best_of)
    cells = ["%.1f (at %.0f)" % b if b else "not trained" for b in best]
    mean, std = mean_std([b[0] if b else None for b in best], "%.1f", "%.1f")
    print("| %s | %s | %s | %s |" % (m.upper(), " | ".join(cells), mean, std))
print()
print("Modality zeroing at the default target (10 episodes for each of 3 evaluation seeds): the change")
print("from zeroing nothing, per training seed, then mean and standard deviation over the training seeds.")
print()
print("| model | zeroed | seed 0 | seed 1 | seed 2 | mean | std |")
print("|---|---|---|---|---|---|---|")
for m in ("dc", "dt"):
    for key, label in (("rtg", "return-to-go"), ("states", "past states"), ("actions", "actions")):
        changes = per_seed(m, "-ablation", lambda d: 100.0 * (d[key]["mean"] / d["none"]["mean"] - 1.0))
        cells = ["%+.0f%%" % c if c is not None else "not trained" for c in changes]
        mean, std = mean_std(changes, "%+.0f%%", "%.0f")
        print("| %s | %s | %s | %s | %s |" % (m.upper(), label, " | ".join(cells), mean, std))
PY
}

# Locality (the Markov argument of DC, GDT and HiFormer): the mixing weight by lag on the shipped
# checkpoints, and DT trained on the story data with the velocities hidden against DT trained on the
# full data with the same recipe and steps (PO, made by:
#   dstudio dataset hide-velocities $(dstudio dataset default --story) --out build/po/hopper-po-medium-expert.hdf5
#   DATA=build/po/hopper-po-medium-expert.hdf5 STEPS=10000 WARMUP=1000 OUT=build/po/positions-only bash packaging/train-default-checkpoints.sh dt
#   STEPS=10000 WARMUP=1000 OUT=build/po/full-state bash packaging/train-default-checkpoints.sh dt).
locality() {
  local m
  run locality-dt locality --checkpoint $STORY-dt.pt --compare $STORY-gdt.pt
  for m in gdt dc dhi dt-merger udc; do run locality-$m locality --checkpoint $STORY-$m.pt; done
  # Named copies, so that legends and titles tell the two runs apart.
  local r
  for r in positions-only full-state; do
    if [ -f "$PO/$r/dt/checkpoint.pt" ]; then "$B/dstudio" checkpoint slim "$PO/$r/dt/checkpoint.pt" --out "$PO/dt-$r.pt" > /dev/null; fi
  done
  run locality-positions-only locality --checkpoint "$PO/dt-positions-only.pt" --compare "$PO/dt-full-state.pt"
  run attention-positions-only attention --checkpoint "$PO/dt-positions-only.pt" --layer 1
  run attention-full-state attention --checkpoint "$PO/dt-full-state.pt" --layer 1
  run rtg-sweep-positions-only rtg-sweep --checkpoint "$PO/dt-positions-only.pt" --compare "$PO/dt-full-state.pt" --episodes "$EPISODES"
}

# The causal analyses (interventions inside the forward pass, docs/analyses.md): how much of the
# past each model uses (knockout: DT against GDT, DC against DHi, and DT over the training seeds
# in SEEDS), which heads and tokens carry the return-to-go (patching the data's best return against
# its median), each part's share of the action, probes of the stream, and steering along the
# return-to-go direction against changing the target; the positions-only DT against the full-state
# one (PO) where they are trained.
causal() {
  local m s
  run knockout-dt knockout --checkpoint $STORY-dt.pt --compare $STORY-gdt.pt --episodes "$EPISODES"
  run knockout-dc knockout --checkpoint $STORY-dc.pt --compare $STORY-dhi.pt --episodes "$EPISODES"
  for m in dt gdt dc dhi; do run patching-$m patching --checkpoint $STORY-$m.pt; done
  run patching-dt-zero-r patching --checkpoint $STORY-dt.pt --contrast modality --zero R
  run heads-dt heads --checkpoint $STORY-dt.pt --episodes 5
  for m in dt dc; do run attribution-$m attribution --checkpoint $STORY-$m.pt; done
  for m in dt dc; do run probes-$m probes --checkpoint $STORY-$m.pt; done
  run steering-dt steering --checkpoint $STORY-dt.pt --episodes "$EPISODES"
  for s in 0 1 2; do
    run seeds/knockout-dt-seed-$s knockout --checkpoint "$SEEDS/seed-$s/dt/checkpoint.pt" --episodes "$EPISODES"
  done
  # The full-state run is seed 0's (the same recipe, seed and steps) where PO has none of its own.
  local full=$PO/full-state/dt/checkpoint.pt
  [ -f "$full" ] || full=$SEEDS/seed-0/dt/checkpoint.pt
  if [ -f "$PO/positions-only/dt/checkpoint.pt" ]; then "$B/dstudio" checkpoint slim "$PO/positions-only/dt/checkpoint.pt" --out "$PO/dt-positions-only.pt" > /dev/null; fi
  if [ -f "$full" ]; then "$B/dstudio" checkpoint slim "$full" --out "$PO/dt-full-state.pt" > /dev/null; fi
  run knockout-positions-only knockout --checkpoint "$PO/dt-positions-only.pt" --compare "$PO/dt-full-state.pt" --episodes "$EPISODES"
  [[ -n ${ONLY:-} ]] && return 0
  python3 - "$DOCS" <<'PY' | tee "$DOCS/causal.md"
import json, os, statistics, sys
docs = sys.argv[1]
def load(name):
    path = os.path.join(docs, name, "summary.json")
    return json.load(open(path)) if os.path.exists(path) else None
print("| model | K | score, whole window | smallest context keeping 95% | action error at context 1 |")
print("|---|---|---|---|---|")
for name in ["knockout-dt", "knockout-dc", "knockout-positions-only"]:
    k = load(name)
    for m in (k or {}).get("models", []):
        print("| %s | %d | %.1f | %s | %.3f |" % (m["label"], m["contexts"][-1], m["score"][-1],
              m.get("smallest_context_keeping_95_percent", "none"), m["action_error"][0]))
seeds = [load("seeds/knockout-dt-seed-%d" % s) for s in range(3)]
smallest = [k["models"][0].get("smallest_context_keeping_95_percent") for k in seeds if k]
if smallest:
    print()
    print("DT over training seeds 0, 1, 2 (shorter runs): smallest context keeping 95%% of the return: %s"
          % ", ".join(str(v) for v in smallest))
    at1 = [k["models"][0]["score"][0] / k["models"][0]["score"][-1] for k in seeds if k]
    print("score at context 1 as a share of the whole window's: %s (mean %.2f, std %.2f)"
          % (", ".join("%.2f" % v for v in at1), statistics.mean(at1),
             statistics.stdev(at1) if len(at1) > 1 else float("nan")))
print()
print("| model | windows whose action moves with the target | largest fractions recovered |")
print("|---|---|---|")
for m in ["dt", "gdt", "dc", "dhi"]:
    p = load("patching-" + m)
    if p:
        top = ", ".join("%s %.2f" % (x["site"], x["fraction"]) for x in p["largest"][:4])
        print("| %s | %d of %d (mean change %.3f) | %s |" % (m.upper(), p["windows_used"], p["windows"],
              p["mean_action_change"], top))
PY
}

# The UTR paper's efficiency claims (its Table 2): milliseconds and GFLOPs of a training step
# (batch 64) and of one action, parameters, for DT, UDT, DC (at its K of 8 and at UTR's 20), UDC
# and DHi, at the shipped sizes, one thread each, in one run so that they compare as ratios.
efficiency() {
  [[ -n ${ONLY:-} && ,$ONLY, != *,efficiency,* ]] && return 0
  local out=$DOCS/efficiency
  mkdir -p "$out"
  echo "== efficiency: dstudio bench train|act"
  {
    for v in dt udt dc dc-k20 udc dhi; do
      local args=(--variant "$v")
      [ "$v" = dc-k20 ] && args=(--variant dc --config '{"context_length":20}')
      "$B/dstudio" bench train "${args[@]}" --repeats 15 --threads 1 --json | python3 -c "import json,sys; d=json.load(sys.stdin); d['name']='$v'; print(json.dumps(d))"
      "$B/dstudio" bench act "${args[@]}" --repeats 50 --threads 1 --json | python3 -c "import json,sys; d=json.load(sys.stdin); d['name']='$v'; print(json.dumps(d))"
    done
  } > "$out/bench.jsonl"
  python3 - "$out/bench.jsonl" <<'PY' | tee "$out/summary.md"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
train = {r["name"]: r for r in rows if r["benchmark"] == "train"}
act = {r["name"]: r for r in rows if r["benchmark"] != "train"}
print("| model | K | parameters | training step (ms) | GFLOP a step | one action (ms) |")
print("|---|---|---|---|---|---|")
for name, t in train.items():
    a = act[name]
    print("| %s | %d | %s | %.0f | %.2f | %.2f |" % (name, t["context_length"], format(t["parameters"], ","), t["median_ms"], t["gflop"], a["median_ms"]))
t = train["dt"]
print()
print("Medians of 15 training steps (batch 64) and 50 actions, one thread, BLAS %s." % t["blas"])
PY
}

# The papers' Adroit tasks: how much of the past each model trained on a task's expert data uses
# (knockout), its score over 20 episodes at each context with a 95% interval, against the hopper's.
adroit() {
  local task m data ck
  for task in door pen; do
    if ! ls "$ADROIT/$task"/*/checkpoint.pt > /dev/null 2>&1; then
      echo "== adroit/$task: skipped, no model is trained on it in $ADROIT/$task yet" >&2
      continue
    fi
    data=$("$B/dstudio" dataset default --env "$task")
    for m in dt dc dhi; do
      ck=$ADROIT/$task/$task-expert-$m/checkpoint.pt
      # A periodic checkpoint of a run still training is not the model: only a finished run's.
      if [ -f "$ck" ] && ! "$B/dstudio" checkpoint info "$ck" | grep -Eq 'step ([0-9]+) of \1,'; then
        echo "== adroit/knockout-$task-$m: skipped, $ck has not finished training" >&2
        continue
      fi
      run adroit/knockout-$task-$m knockout --checkpoint "$ck" --dataset "$data" --episodes 20
    done
  done
}

# AntMaze: the DT and DC trained on the studio's antmaze-umaze-v2 and antmaze-medium-play-v2 data
# (`bash packaging/make-antmaze.sh checkpoints`, shipped as resources/checkpoints/<task>-<m>.pt),
# each knocked out over ANTMAZE_EPISODES episodes a context (the whole window's point is its
# success rate x 100 with a 95% interval), the umaze DT's knockout beside the story DT's on the
# hopper in one figure (ANTMAZE_COMPARE_EPISODES each), and beside the medium-play DT's (open
# loop). Over training seeds: DT and DC trained with seeds 0, 1 and 2 in shorter runs
# (ANTMAZE_SEEDS/seed-<s>/<task>-<m>, made by `bash packaging/make-antmaze.sh seeds`: 10,000
# steps, 1,000 warm-up), each evaluated over ANTMAZE_EPISODES episodes.
antmaze() {
  local task m s data ck out
  for task in antmaze-umaze-v2 antmaze-medium-play-v2; do
    if ! ls resources/checkpoints/$task-*.pt > /dev/null 2>&1; then
      echo "== antmaze/$task: skipped, no model is trained on it yet" >&2
      continue
    fi
    data=$("$B/dstudio" dataset default --env "$task")
    for m in dt dc; do
      run antmaze/knockout-$task-$m knockout --checkpoint "resources/checkpoints/$task-$m.pt" \
        --dataset "$data" --episodes "$ANTMAZE_EPISODES"
    done
  done
  run antmaze/knockout-umaze-dt-and-hopper-dt knockout \
    --checkpoint resources/checkpoints/antmaze-umaze-v2-dt.pt --compare $STORY-dt.pt --episodes "$ANTMAZE_COMPARE_EPISODES"
  # The medium-play DC scores more with one step of context than with its whole window: the same
  # knockout on another 100 episodes (seeds 100 to 199) says whether that holds beyond the first.
  run antmaze/knockout-antmaze-medium-play-v2-dc-episodes-100-199 knockout \
    --checkpoint resources/checkpoints/antmaze-medium-play-v2-dc.pt \
    --dataset "$("$B/dstudio" dataset default --env antmaze-medium-play-v2)" \
    --episodes "$ANTMAZE_EPISODES" --seed 100
  # The longer route's DT beside the umaze's, open loop only (each on its own data's windows).
  run antmaze/knockout-umaze-dt-and-medium-dt knockout \
    --checkpoint resources/checkpoints/antmaze-umaze-v2-dt.pt \
    --compare resources/checkpoints/antmaze-medium-play-v2-dt.pt --episodes 0
  # ONLY=antmaze/seeds: the seeds' evaluations and the summary without the knockouts.
  [[ -n ${ONLY:-} && ,$ONLY, != *,antmaze/seeds,* ]] && return 0
  for task in antmaze-umaze-v2 antmaze-medium-play-v2; do
    for m in dt dc; do
      for s in 0 1 2; do
        ck=$ANTMAZE_SEEDS/seed-$s/$task-$m/checkpoint.pt
        out=antmaze/seeds/$task-$m-seed-$s
        if [ ! -f "$ck" ] || ! "$B/dstudio" checkpoint info "$ck" | grep -Eq 'step ([0-9]+) of \1,'; then
          echo "== $out: skipped, $ck has not finished training" >&2
          continue
        fi
        echo "== $out: dstudio eval --checkpoint $ck --episodes $ANTMAZE_EPISODES"
        "$B/dstudio" eval --checkpoint "$ck" --episodes "$ANTMAZE_EPISODES" --out "$OUT/$out" > /dev/null
        mkdir -p "$DOCS/$out"
        cp "$OUT/$out/summary.json" "$DOCS/$out/"
      done
    done
  done
  python3 - "$DOCS/antmaze" <<'PY' | tee "$DOCS/antmaze/summary.md"
import json, statistics, sys
from pathlib import Path
root = Path(sys.argv[1])
def load(path):
    return json.loads(path.read_text()) if path.exists() else None
print("| model | trained on | success, whole window (95% interval) | context 1 | 2 | 5 | 10 | action error at context 1, 2, 3 | smallest context keeping 95% |")
print("|---|---|---|---|---|---|---|---|---|")
for task in ("antmaze-umaze-v2", "antmaze-medium-play-v2"):
    for m in ("dt", "dc"):
        k = load(root / f"knockout-{task}-{m}" / "summary.json")
        if not k:
            continue
        r = k["models"][0]
        score = dict(zip(r["contexts"], r["score"]))
        cell = lambda c: "%.0f" % score[c] if c in score else ""
        last = len(r["contexts"]) - 1
        print("| %s (K %d) | %s | %.0f (%.0f-%.0f) | %s | %s | %s | %s | %s | %s |" % (
            m.upper(), r["contexts"][-1], task, r["score"][last], r["score_low"][last],
            r["score_high"][last], cell(1), cell(2), cell(5), cell(10),
            ", ".join("%.3g" % e for e in r["action_error"][:3]),
            r.get("smallest_context_keeping_95_percent", "-")))
rows = []
for task in ("antmaze-umaze-v2", "antmaze-medium-play-v2"):
    for m in ("dt", "dc"):
        scores = []
        for s in (0, 1, 2):
            e = load(root / "seeds" / f"{task}-{m}-seed-{s}" / "summary.json")
            scores.append(e["targets"][0]["mean"] if e else None)
        if all(v is None for v in scores):
            continue
        done = [v for v in scores if v is not None]
        rows.append("| %s | %s | %s | %.1f | %s |" % (
            m.upper(), task, " | ".join("%.0f" % v if v is not None else "not trained" for v in scores),
            statistics.mean(done), "%.1f" % statistics.stdev(done) if len(done) > 1 else "-"))
if rows:
    print()
    print("Over training seeds (the shorter runs), success x 100 at the task's target:")
    print()
    print("| model | trained on | seed 0 | seed 1 | seed 2 | mean | std |")
    print("|---|---|---|---|---|---|---|")
    print("\n".join(rows))
PY
}

parts=("$@")
[ ${#parts[@]} -eq 0 ] && parts=(story contrast seeds locality causal efficiency adroit antmaze)
for part in "${parts[@]}"; do
  case "$part" in
    story) story ;;
    contrast) contrast ;;
    seeds) seeds ;;
    locality) locality ;;
    causal) causal ;;
    efficiency) efficiency ;;
    adroit) adroit ;;
    antmaze) antmaze ;;
    *) echo "unknown part: $part (story, contrast, seeds, locality, causal, efficiency, adroit, antmaze)" >&2; exit 2 ;;
  esac
done
