#!/usr/bin/env bash
# Generates the default datasets of every environment and kind, with the SAC and the ARS behaviour
# policies, and prints one Markdown table of what `dstudio dataset info --json` says of each:
# size, episodes, returns (quantiles and normalised mean) and how much of the action variance a
# linear function of the state explains. The table in docs/environments.md comes from here.
#
#   bash packaging/dataset-report.sh                     # every environment
#   bash packaging/dataset-report.sh hopper              # some of them
set -euo pipefail
cd "$(dirname "$0")/.."
B=${B:-build/release/bin}
envs=("$@")
[ ${#envs[@]} -eq 0 ] && envs=(hopper walker2d halfcheetah)

echo "| env | policies | kind | transitions | episodes | return p10 / median / p90 | mean (normalised) | state->action R^2 |"
echo "|---|---|---|---|---|---|---|---|"
for env in "${envs[@]}"; do
  for algorithm in sac ars; do
    for kind in medium medium-replay expert medium-expert; do
      path=$("$B/dstudio" dataset default --env "$env" --kind "$kind" --algorithm "$algorithm" 2>/dev/null)
      "$B/dstudio" dataset info --json "$path" | python3 -c '
import json, sys
j = json.load(sys.stdin)
q = j["return_quantiles"]
r2 = j["linear_action_r2"]
print("| %s | %s | %s | {:,} | %d | %.0f / %.0f / %.0f | %.0f (%.1f) | %s |".format(j["transitions"]) % (
    sys.argv[1], sys.argv[2], sys.argv[3], j["episodes"], q["p10"], q["median"], q["p90"],
    j["return_mean"], j["normalized_return_mean"], "n/a" if r2 is None else "%.3f" % r2))
' "$env" "$algorithm" "$kind"
    done
  done
done
