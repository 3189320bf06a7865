#!/usr/bin/python3
"""Converts the DAPG expert policies of D4RL's Adroit expert datasets into the studio's format.

D4RL made pen-, door-, hammer- and relocate-expert by rolling out the DAPG-finetuned policies of
aravindr93/hand_dapg (dapg/policies/<task>-v0.pickle, Apache-2.0). Those files are Python pickles
of mjrl's Gaussian `MLP` (mjrl.policies.gaussian_mlp) around an `FCNetwork` (mjrl.utils.fc_network)
holding torch tensors. This script reads them without installing mjrl and writes

  resources/policies/<task>-dapg.json   format dstudio-mlp-policy-1, every number exactly the
                                        float32 the pickle holds (core/src/behaviour/mlp_policy.cpp)
  tests/data/dapg-golden.json           three observations per task and the mean actions mjrl's
                                        own code computes for them (tests/core/mlp_policy_test.cpp)

Usage (Debian's python3 with python3-torch and python3-numpy; the repositories as git clones, bare
or not, that hold the commits below):

  /usr/bin/python3 packaging/convert-dapg-policies.py --hand-dapg <hand_dapg clone> --mjrl <mjrl clone>

The weights are read with stand-in classes for mjrl's: unpickling only needs somewhere to put each
object's attributes. The golden actions are computed by mjrl's own code instead, its
fc_network.py and gaussian_mlp.py at MJRL_COMMIT executed from the clone, so they check the C++
port against mjrl and not against a second port.
"""

import argparse
import base64
import io
import json
import pickle
import sys
import types
from pathlib import Path

import numpy as np
import torch

sys.dont_write_bytecode = True  # nothing left behind in the source tree
sys.path.insert(0, str(Path(__file__).resolve().parent))
from hand_dapg_source import HAND_DAPG, HAND_DAPG_COMMIT, document_text, git_show, write_whole  # noqa: E402

MJRL = "aravindr93/mjrl"
MJRL_COMMIT = "3871d93763d3b49c4741e6daeaebbc605fe140dc"  # master, 2021-06-18 (what D4RL installs)
TASKS = ["pen", "door", "hammer", "relocate"]
# The observation and action sizes of D4RL's Adroit tasks (core/src/env/adroit.cpp).
SIZES = {"pen": (45, 24), "door": (39, 28), "hammer": (46, 26), "relocate": (39, 30)}
GOLDEN_SEED = 20180626  # RSS 2018, where DAPG was presented
FORMAT = "dstudio-mlp-policy-1"


def thnn_backend():
    # torch < 1.0 pickled every module with a `_backend` from torch.nn.backends.thnn, which later
    # torch removed; the attribute is never used, so any value will do.
    return None


class StandIn:
    """Takes an mjrl object's pickled attributes and does nothing else."""


class StandInUnpickler(pickle.Unpickler):
    def find_class(self, module, name):
        if module.startswith("mjrl."):
            return type(name, (StandIn,), {"__module__": module})
        if module == "torch.nn.backends.thnn" and name == "_get_thnn_function_backend":
            return thnn_backend
        return super().find_class(module, name)


def mjrl_modules(clone):
    """mjrl's fc_network and gaussian_mlp modules, executed from MJRL_COMMIT in `clone`."""
    modules = {}
    saved = {k: v for k, v in sys.modules.items() if k == "mjrl" or k.startswith("mjrl.")}
    try:
        for package in ["mjrl", "mjrl.utils", "mjrl.policies"]:
            modules[package] = types.ModuleType(package)
            modules[package].__path__ = []
            sys.modules[package] = modules[package]
        for name in ["mjrl.utils.fc_network", "mjrl.policies.gaussian_mlp"]:
            path = name.replace(".", "/") + ".py"
            module = types.ModuleType(name)
            module.__file__ = f"{MJRL}@{MJRL_COMMIT}:{path}"
            sys.modules[name] = module  # gaussian_mlp imports fc_network by name
            exec(compile(git_show(clone, MJRL_COMMIT, path), module.__file__, "exec"), module.__dict__)
            modules[name] = module
    finally:
        for k in [k for k in sys.modules if k == "mjrl" or k.startswith("mjrl.")]:
            del sys.modules[k]
        sys.modules.update(saved)
    return modules


class MjrlUnpickler(pickle.Unpickler):
    def __init__(self, data, modules):
        super().__init__(io.BytesIO(data))
        self.modules = modules

    def find_class(self, module, name):
        if module in self.modules:
            return getattr(self.modules[module], name)
        if module == "torch.nn.backends.thnn" and name == "_get_thnn_function_backend":
            return thnn_backend
        return super().find_class(module, name)


def float32_list(tensor):
    # Each float32 printed as the double equal to it (Python's shortest repr of that double): read
    # back as a double and narrowed to float, it is the same float32, bit for bit.
    values = tensor.detach().numpy().astype(np.float32).ravel()
    if not np.all(np.isfinite(values)):
        raise ValueError("non-finite value")
    return [float(v) for v in values]


def float32_base64(tensor):
    array = np.ascontiguousarray(tensor.detach().numpy(), dtype="<f4")
    return base64.b64encode(array.tobytes()).decode("ascii")


def convert(task, data):
    policy = StandInUnpickler(io.BytesIO(data)).load()
    model = policy.model
    layers = list(model._modules["fc_layers"])
    obs_dim, act_dim = SIZES[task]
    # What the pickle says about itself must agree with the task and with mjrl's forward pass.
    assert (policy.n, policy.m) == (obs_dim, act_dim), (task, policy.n, policy.m)
    assert (model.obs_dim, model.act_dim) == (obs_dim, act_dim)
    assert model.nonlinearity.__name__ == "tanh", model.nonlinearity
    assert tuple(model.layer_sizes) == (obs_dim,) + tuple(l.out_features for l in layers)
    for k, layer in enumerate(layers):
        assert layer.weight.dtype == torch.float32 and layer.bias.dtype == torch.float32
        assert tuple(layer.weight.shape) == (layer.out_features, layer.in_features), k
    for name in ["in_shift", "in_scale", "out_shift", "out_scale"]:
        assert getattr(model, name).dtype == torch.float32, name
    # get_action samples with log_std_val, a float64 copy of log_std: they must be the same numbers.
    assert np.array_equal(policy.log_std_val, np.float64(policy.log_std.detach().numpy().ravel()))
    path = f"dapg/policies/{task}-v0.pickle"
    return {
        "format": FORMAT,
        "task": task,
        "source": f"github.com/{HAND_DAPG}@{HAND_DAPG_COMMIT}:{path}, Apache-2.0",
        "obs_dim": obs_dim,
        "act_dim": act_dim,
        "nonlinearity": "tanh",
        "in_shift": float32_list(model.in_shift),
        "in_scale": float32_list(model.in_scale),
        "out_shift": float32_list(model.out_shift),
        "out_scale": float32_list(model.out_scale),
        "layers": [{"in": l.in_features, "out": l.out_features,
                    "weight": float32_base64(l.weight), "bias": float32_base64(l.bias)}
                   for l in layers],
        "log_std": float32_list(policy.log_std),
    }


def policy_text(policy):
    return document_text(policy, "layers")


def decoded_layers(policy):
    out = []
    for layer in policy["layers"]:
        w = np.frombuffer(base64.b64decode(layer["weight"]), dtype="<f4")
        b = np.frombuffer(base64.b64decode(layer["bias"]), dtype="<f4")
        out.append((w.reshape(layer["out"], layer["in"]), b))
    return out


def check_exact(policy, data, modules):
    """The written numbers are the pickle's, bit for bit, as mjrl itself reads it."""
    mlp = MjrlUnpickler(data, modules).load()
    fc = list(mlp.model.fc_layers)
    for (w, b), layer in zip(decoded_layers(json.loads(policy_text(policy))), fc, strict=True):
        assert np.array_equal(w, layer.weight.detach().numpy())
        assert np.array_equal(b, layer.bias.detach().numpy())
    reread = json.loads(policy_text(policy))
    for name in ["in_shift", "in_scale", "out_shift", "out_scale"]:
        assert np.array_equal(np.float32(reread[name]), getattr(mlp.model, name).numpy()), name
    assert np.array_equal(np.float32(reread["log_std"]), mlp.log_std.detach().numpy())


def golden(task, data, modules):
    """Three observations and the mean actions of mjrl's MLP.get_action for them."""
    mlp = MjrlUnpickler(data, modules).load()
    obs_dim, _ = SIZES[task]
    rng = np.random.RandomState(GOLDEN_SEED + TASKS.index(task))
    shift = mlp.model.in_shift.numpy().astype(np.float64)
    scale = mlp.model.in_scale.numpy().astype(np.float64)
    # Two observations where the policy was trained (the input statistics' mean and spread) and
    # one plain standard normal, far outside them for the finely scaled inputs.
    observations = [shift + scale * rng.standard_normal(obs_dim),
                    shift + scale * rng.standard_normal(obs_dim),
                    rng.standard_normal(obs_dim)]
    cases = []
    for obs in observations:
        obs = obs.astype(np.float32)  # get_action feeds np.float32(observation) to the network
        action, info = mlp.get_action(obs)
        mean = info["evaluation"]
        assert mean.dtype == np.float32 and np.array_equal(mean, info["mean"])
        assert np.array_equal(mean, mlp.model(torch.from_numpy(obs[None, :])).detach().numpy()[0])
        cases.append({"observation": [float(v) for v in obs], "mean_action": [float(v) for v in mean]})
    return {"task": task, "log_std": [float(v) for v in mlp.log_std.detach().numpy()],
            "cases": cases}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hand-dapg", required=True, type=Path,
                        help=f"a git clone of {HAND_DAPG} holding {HAND_DAPG_COMMIT}")
    parser.add_argument("--mjrl", required=True, type=Path,
                        help=f"a git clone of {MJRL} holding {MJRL_COMMIT}")
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent.parent,
                        help="the studio's source tree (default: this script's)")
    args = parser.parse_args()

    np.random.seed(0)  # get_action also draws its noise; fixed so that a run repeats itself
    modules = mjrl_modules(args.mjrl)
    goldens = []
    written = []
    for task in TASKS:
        data = git_show(args.hand_dapg, HAND_DAPG_COMMIT, f"dapg/policies/{task}-v0.pickle")
        policy = convert(task, data)
        check_exact(policy, data, modules)
        target = args.out / "resources" / "policies" / f"{task}-dapg.json"
        written.append((target, policy_text(policy)))
        goldens.append(golden(task, data, modules))
        sizes = [policy["obs_dim"]] + [l["out"] for l in policy["layers"]]
        print(f"{task}: layers {' -> '.join(map(str, sizes))}, "
              f"log_std {min(policy['log_std']):.3f} .. {max(policy['log_std']):.3f}")
    golden_text = json.dumps({
        "format": "dstudio-mlp-policy-golden-1",
        "source": (f"github.com/{HAND_DAPG}@{HAND_DAPG_COMMIT}:dapg/policies/<task>-v0.pickle; "
                   f"mean actions by github.com/{MJRL}@{MJRL_COMMIT}: MLP.get_action"),
        "tasks": goldens,
    }, indent=1) + "\n"
    written.append((args.out / "tests" / "data" / "dapg-golden.json", golden_text))
    # Everything is computed before anything is written: a failed check leaves no file changed.
    for target, text in written:
        write_whole(target, text)
        print(f"wrote {target}")


if __name__ == "__main__":
    main()
