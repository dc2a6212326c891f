"""Atomic checkpoints: a run killed at any moment leaves the previous checkpoint intact."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import torch

from punctum.fileio import atomic_writer, remove_stale


def save_atomic(obj: dict, path: str | Path) -> None:
    """torch.save to a temporary file in the same folder, then rename over `path`."""
    with atomic_writer(path, binary=True, compress=False) as handle:
        torch.save(obj, handle)
    remove_stale(path)  # what a run killed while saving left behind


def load_checkpoint(path: str | Path) -> dict:
    """Load a checkpoint written by `save_atomic`; ValueError names a corrupt file."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such checkpoint")
    try:
        return torch.load(path, map_location="cpu", weights_only=False)
    except Exception as error:  # torch raises several types for truncated/garbled files
        raise ValueError(f"{path}: not a readable checkpoint ({error})") from None


def rng_state() -> dict:
    """The state of python's, numpy's and torch's global generators."""
    return {"python": random.getstate(), "numpy": np.random.get_state(),
            "torch": torch.get_rng_state()}


def set_rng_state(state: dict) -> None:
    random.setstate(state["python"])
    np.random.set_state(state["numpy"])
    torch.set_rng_state(state["torch"])


def seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
