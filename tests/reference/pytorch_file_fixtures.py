#!/usr/bin/python3
"""Small torch.save files whose contents are known exactly, for the studio's PyTorch file reader.

Each file exercises one part of the format: strided (non-contiguous) tensors, every storage
dtype the reader converts, numpy arrays in both byte orders and in Fortran order, numbers,
nesting, and the files it must refuse (legacy format, TorchScript).

Usage:
    /usr/bin/python3 tests/reference/pytorch_file_fixtures.py --out tests/data/pytorch_file
"""
import argparse
import collections
import os

import numpy as np
import torch


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    out = parser.parse_args().out
    os.makedirs(out, exist_ok=True)

    # Values the C++ test states independently: arange-based, so element (i, j) is known.
    contents = collections.OrderedDict()
    contents["transposed"] = torch.arange(6, dtype=torch.float32).reshape(2, 3).t()  # (3, 2), strides (1, 3)
    contents["sliced"] = torch.arange(10, dtype=torch.float64)[2:8:2]  # offset 2, stride 2: 2, 4, 6
    contents["half"] = torch.tensor([1.5, -0.25, 65504.0], dtype=torch.float16)
    contents["bfloat"] = torch.tensor([1.5, -2.0], dtype=torch.bfloat16)
    contents["long"] = torch.tensor([[-3, 7]], dtype=torch.int64)
    contents["mask"] = ~torch.tril(torch.ones(3, 3)).to(bool)
    contents["nested"] = {"inner": {"w": torch.full((2,), 0.5)}, "items": [torch.tensor([1.0]), 3]}
    contents["big_endian"] = np.arange(4, dtype=">f8")
    contents["fortran"] = np.asfortranarray(np.arange(6, dtype=np.float32).reshape(2, 3))
    contents["count"] = 42
    contents["rate"] = 0.125
    contents["name"] = "not a tensor"
    torch.save(contents, os.path.join(out, "known_values.pt"))

    torch.save({"w": torch.ones(2)}, os.path.join(out, "legacy.pt"), _use_new_zipfile_serialization=False)
    torch.jit.save(torch.jit.script(torch.nn.Linear(2, 2)), os.path.join(out, "torchscript.pt"))


if __name__ == "__main__":
    torch.manual_seed(0)
    main()
