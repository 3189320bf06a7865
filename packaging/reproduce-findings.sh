#!/usr/bin/env bash
# Runs the analyses behind docs/findings.md on the shipped default checkpoints and copies their
# summaries and PNG figures into docs/findings/. Every number in docs/findings.md comes from here.
#
#   bash packaging/reproduce-findings.sh
set -euo pipefail
cd "$(dirname "$0")/.."
B=${B:-build/release/bin}
C=resources/checkpoints/hopper-medium
OUT=${OUT:-build/findings}
DOCS=docs/findings
EPISODES=${EPISODES:-10}
mkdir -p "$DOCS"

run() {  # name, then the analyze arguments
  local name=$1; shift
  echo "== $name: dstudio analyze $*"
  "$B/dstudio" analyze "$@" --out "$OUT/$name" --threads 2 > /dev/null
  mkdir -p "$DOCS/$name"
  cp "$OUT/$name/summary.json" "$DOCS/$name/"
  find "$OUT/$name" -maxdepth 1 -name '*.png' -exec cp {} "$DOCS/$name/" \;
}

# Attention maps on the same dataset windows: DT, DC, DT with a token merger, DHi, GDT, and the
# difference DT - GDT.
run attention-dc attention --checkpoint $C-dc.pt --layer 0
run attention-dt-merger attention --checkpoint $C-dt-merger.pt --layer 0
run attention-dhi attention --checkpoint $C-dhi.pt --layer 0
# Entropy against reward during rollouts, and per layer and head on dataset windows.
for m in dt dt-merger dhi dc; do run entropy-$m entropy --checkpoint $C-$m.pt --episodes "$EPISODES"; done
# Modality zeroing: DC and DT.
for m in dc dt; do run ablation-$m ablation --checkpoint $C-$m.pt --episodes "$EPISODES" --seeds 3; done
# Out-of-distribution targets: DC against DT.
run rtg-sweep rtg-sweep --checkpoint $C-dt.pt --compare $C-dc.pt --episodes "$EPISODES"
# Merged against unmerged tokens.
for m in dhi dt-merger dt; do run tsne-$m tsne --checkpoint $C-$m.pt --windows 40; done
# GDT last (it takes longest to train).
run attention-dt attention --checkpoint $C-dt.pt --compare $C-gdt.pt --layer 0
run attention-gdt attention --checkpoint $C-gdt.pt --layer 0
run entropy-gdt entropy --checkpoint $C-gdt.pt --episodes "$EPISODES"
