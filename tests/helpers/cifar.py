"""CIFAR-10 archives in the real format (pickled dicts in cifar-10-batches-py/), tiny: for the
loader's tests and the mlp workload's."""

from __future__ import annotations

import io
import pickle
import tarfile
from pathlib import Path

import numpy as np

from siliconbench.core import cifar

PER_BATCH = 40      # 5 training batches: 200 images


def batch_bytes(rng, name: str, count: int = PER_BATCH) -> tuple[bytes, np.ndarray]:
    labels = rng.integers(0, 10, count)
    batch = {b"batch_label": name.encode(), b"labels": [int(v) for v in labels],
             b"data": rng.integers(0, 256, (count, cifar.PIXELS), dtype=np.uint8),
             b"filenames": [f"{name}_{i}.png".encode() for i in range(count)]}
    return pickle.dumps(batch, protocol=2), labels


def make_archive(path: Path, seed: int = 0, replace: dict[str, bytes] | None = None) -> Path:
    """A CIFAR-10 python archive of 200 training images, in the real layout."""
    rng = np.random.default_rng(seed)
    with tarfile.open(path, "w:gz") as tar:
        for name in (*cifar.TRAIN_BATCHES, cifar.TEST_BATCH):
            raw = (replace or {}).get(name) or batch_bytes(rng, name)[0]
            info = tarfile.TarInfo(f"{cifar.FOLDER}/{name}")
            info.size = len(raw)
            tar.addfile(info, io.BytesIO(raw))
    return path
