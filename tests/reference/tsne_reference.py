#!/usr/bin/python3
"""scikit-learn's t-SNE on the points of `dstudio bench tsne`, for the benchmark's reference numbers.

Runs sklearn.manifold.TSNE with the settings the studio uses (perplexity 30, early exaggeration
12, 1000 iterations, PCA initialisation, Barnes-Hut with angle 0.5, learning rate "auto", one
job) on the points that `dstudio bench tsne --write-points` wrote, and prints one JSON object
with the seconds it took and the KL divergence it reports for its final layout.

Usage:
    build/release/bin/dstudio bench tsne --write-points /tmp/points.h5
    /usr/bin/python3 tests/reference/tsne_reference.py /tmp/points.h5 > tests/data/tsne/sklearn_10000.json
"""
import json
import sys
import time

import h5py
import numpy as np
import sklearn
from sklearn.manifold import TSNE


def main() -> None:
    points = h5py.File(sys.argv[1], "r")["points"][:].astype(np.float32)
    start = time.perf_counter()
    tsne = TSNE(n_components=2, perplexity=30.0, early_exaggeration=12.0, n_iter=1000,
                init="pca", method="barnes_hut", angle=0.5, learning_rate="auto",
                random_state=0, n_jobs=1)
    tsne.fit_transform(points)
    seconds = time.perf_counter() - start
    print(json.dumps({
        "reference": "scikit-learn " + sklearn.__version__ + " TSNE (barnes_hut, n_jobs=1)",
        "points": int(points.shape[0]), "dims": int(points.shape[1]),
        "seconds": round(seconds, 2), "kl": float(tsne.kl_divergence_),
    }, indent=2))


if __name__ == "__main__":
    main()
