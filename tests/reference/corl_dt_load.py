#!/usr/bin/python3
"""Loads a state_dict that `dstudio export --format corl-dt` wrote into CORL's DecisionTransformer
(the re-implementation in corl_dt_reference.py, with CORL's names) with
``load_state_dict(strict=True)``, the file read by ``torch.load(..., weights_only=True)``, and
prints the model's actions on the windows of a JSON file as JSON.

Usage: corl_dt_load.py STATE_DICT.pt SIDECAR.json WINDOWS.json
WINDOWS.json holds states (B,K,S), actions (B,K,A), returns_to_go (B,K), timesteps (B,K) and
mask (B,K) as nested lists; the output is {"actions": (B,K,A)}.
"""
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from corl_dt_reference import DecisionTransformer  # noqa: E402


def main():
    state_dict_path, sidecar_path, windows_path = sys.argv[1:4]
    with open(sidecar_path) as f:
        sidecar = json.load(f)
    model = DecisionTransformer(**sidecar["constructor"])
    model.load_state_dict(torch.load(state_dict_path, weights_only=True), strict=True)
    model.eval()
    with open(windows_path) as f:
        w = json.load(f)
    mask = torch.tensor(w["mask"], dtype=torch.float32)
    with torch.no_grad():
        actions = model(
            states=torch.tensor(w["states"], dtype=torch.float32),
            actions=torch.tensor(w["actions"], dtype=torch.float32),
            returns_to_go=torch.tensor(w["returns_to_go"], dtype=torch.float32),
            time_steps=torch.tensor(w["timesteps"], dtype=torch.long),
            padding_mask=~mask.to(torch.bool),
        )
    json.dump({"actions": actions.tolist()}, sys.stdout)


if __name__ == "__main__":
    main()
