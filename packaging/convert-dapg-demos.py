#!/usr/bin/python3
"""Converts DAPG's human demonstrations of the door task into the studio's format.

D4RL made door-human by replaying the 25 teleoperated demonstrations of aravindr93/hand_dapg
(dapg/demonstrations/door-v0_demos.pickle, Apache-2.0) in its door environment
(scripts/generation/hand_dapg_demos.py): each from its `init_state_dict` (qpos, qvel and the door
frame's position), with its actions clipped to [-1, 1]. The pickle is a list of dicts of numpy
arrays, read here with the standard library's pickle and numpy alone, and written as

  resources/demonstrations/door-human.json   format dstudio-demonstrations-1

holding, per demonstration, the initial state in float64 (exactly the pickle's numbers), the
actions as float32 (what a D4RL file stores, and what the studio steps: rounding to float32 and
clipping to [-1, 1] commute, so the clipped float32 action is D4RL's stored one), and, to check a
replay against the recording, every reward the demonstration recorded. (Its recorded observations
are left out: their first is not the initial state's, the arm has already moved, so they cannot
be lined up with a replay's.)

Usage (Debian's python3 with python3-numpy; the repository as a git clone, bare or not, that holds
the commit below):

  /usr/bin/python3 packaging/convert-dapg-demos.py --hand-dapg <hand_dapg clone>
"""

import argparse
import base64
import json
import pickle
import sys
from pathlib import Path

import numpy as np

sys.dont_write_bytecode = True  # nothing left behind in the source tree
sys.path.insert(0, str(Path(__file__).resolve().parent))
from hand_dapg_source import HAND_DAPG, HAND_DAPG_COMMIT, document_text, git_show, write_whole  # noqa: E402

PATH = "dapg/demonstrations/door-v0_demos.pickle"
FORMAT = "dstudio-demonstrations-1"
OBS_DIM, ACT_DIM, NQ = 39, 28, 30  # D4RL's door (core/src/env/adroit.cpp)


def encoded(array, dtype):
    values = np.ascontiguousarray(array, dtype=dtype)
    if not np.all(np.isfinite(values)):
        raise ValueError("non-finite value")
    return base64.b64encode(values.tobytes()).decode("ascii")


def convert(demos):
    episodes = []
    for i, demo in enumerate(demos):
        actions = np.asarray(demo["actions"])
        steps = actions.shape[0]
        init = demo["init_state_dict"]
        assert actions.shape == (steps, ACT_DIM) and actions.dtype == np.float64, (i, actions.shape)
        assert np.asarray(demo["observations"]).shape == (steps, OBS_DIM), i
        assert np.asarray(demo["rewards"]).shape == (steps,), i
        assert sorted(init) == ["door_body_pos", "qpos", "qvel"], (i, sorted(init))
        assert init["qpos"].shape == (NQ,) and init["qvel"].shape == (NQ,), i
        assert init["door_body_pos"].shape == (3,), i
        episodes.append({
            "steps": steps,
            "qpos": encoded(init["qpos"], "<f8"),
            "qvel": encoded(init["qvel"], "<f8"),
            "door_body_pos": encoded(init["door_body_pos"], "<f8"),
            "actions": encoded(actions, "<f4"),
            "recorded_rewards": encoded(demo["rewards"], "<f4"),
        })
    return {
        "format": FORMAT,
        "task": "door",
        "source": f"github.com/{HAND_DAPG}@{HAND_DAPG_COMMIT}:{PATH}, Apache-2.0",
        "obs_dim": OBS_DIM,
        "act_dim": ACT_DIM,
        "episodes": episodes,
    }


def check_exact(text, demos):
    """What is written reads back as the pickle's numbers (the actions as their float32)."""
    document = json.loads(text)
    for episode, demo in zip(document["episodes"], demos, strict=True):
        def decode(key, dtype):
            return np.frombuffer(base64.b64decode(episode[key]), dtype=dtype)
        for key in ["qpos", "qvel", "door_body_pos"]:
            assert np.array_equal(decode(key, "<f8"), demo["init_state_dict"][key]), key
        assert np.array_equal(decode("actions", "<f4"),
                              np.float32(demo["actions"]).ravel())
        assert np.array_equal(np.clip(decode("actions", "<f4"), -1, 1),
                              np.float32(np.clip(demo["actions"], -1, 1)).ravel())


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hand-dapg", required=True, type=Path,
                        help=f"a git clone of {HAND_DAPG} holding {HAND_DAPG_COMMIT}")
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent.parent,
                        help="the studio's source tree (default: this script's)")
    args = parser.parse_args()

    demos = pickle.loads(git_show(args.hand_dapg, HAND_DAPG_COMMIT, PATH))
    text = document_text(convert(demos), "episodes")
    check_exact(text, demos)
    target = args.out / "resources" / "demonstrations" / "door-human.json"
    write_whole(target, text)
    steps = sum(len(d["actions"]) for d in demos)
    print(f"wrote {target}: {len(demos)} demonstrations, {steps} steps")


if __name__ == "__main__":
    main()
