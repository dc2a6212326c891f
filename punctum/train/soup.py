"""Weight averaging ("model soup", Wortsman et al. 2022) of runs of one model.

Models fine-tuned from the same starting weights can be averaged parameter by parameter; the
average often scores at least as well as the best of them. Sources are training checkpoints or
artifacts (their weights read back by `punctum.train.recover`). scripts/average_weights.py is
the command line.
"""

from __future__ import annotations

import torch

from punctum.train.checkpoint import load_checkpoint
from punctum.train.recover import is_artifact, recover_state_dict

# Checkpoint entries that belong to one run's optimisation, not to its model.
RUN_STATE = ("optimizer", "scheduler", "sampler", "rng")


def source_weights(source: str) -> tuple[dict[str, torch.Tensor], dict | None]:
    """(state dict, the checkpoint itself or None for an artifact) of one source."""
    if is_artifact(source):
        from punctum import artifact

        return recover_state_dict(artifact.resolve(source))[2], None
    checkpoint = load_checkpoint(source)
    if not isinstance(checkpoint, dict) or not isinstance(checkpoint.get("model"), dict) \
            or not all(isinstance(v, torch.Tensor) for v in checkpoint["model"].values()):
        raise ValueError(f"{source}: not a punctum training checkpoint (no model weights)")
    return checkpoint["model"], checkpoint


def average(states: list[dict[str, torch.Tensor]]) -> dict[str, torch.Tensor]:
    """The parameter-wise mean (float32) of state dicts with the same keys and shapes.

    Raises:
        ValueError: no state dict, or they differ in their keys or shapes.
    """
    if not states:
        raise ValueError("nothing to average")
    first = states[0]
    for state in states[1:]:
        check_same_shapes(first, state)
    return {key: sum(s[key].float() for s in states) / len(states) for key in first}


def check_same_shapes(first: dict[str, torch.Tensor], other: dict[str, torch.Tensor]) -> None:
    """Raises ValueError naming a weight when two state dicts differ in keys or shapes."""
    if set(other) != set(first):
        differ = sorted(set(other) ^ set(first))[:3]
        raise ValueError(f"the sources differ in their weights ({', '.join(differ)})")
    for key, value in other.items():
        if value.shape != first[key].shape:
            raise ValueError(f"{key}: shapes {tuple(first[key].shape)} and "
                             f"{tuple(value.shape)}")


def soup(sources: list[str], base: str | None = None) -> tuple[dict, int]:
    """(checkpoint, index of the source it was built on, -1 for `base`): the first checkpoint
    among the sources, or the checkpoint `base` (whose own weights are not averaged), with the
    mean of all sources' weights, without its run state (not resumable; for `punctum export`).
    A source named twice counts twice (a 3:1 soup: `[a, a, a, b]`).

    Raises:
        ValueError: no checkpoint among the sources and no `base`, or the weights do not fit
            together.
    """
    read = {source: source_weights(source) for source in dict.fromkeys(sources)}  # (once)
    loaded = [read[source] for source in sources]
    if base is not None:
        index, built_on = -1, read.get(base) or source_weights(base)
        if built_on[1] is None:
            raise ValueError(f"{base}: the base must be a training checkpoint (.pt), not a "
                             "model folder")
    else:
        index = next((i for i, (_, ckpt) in enumerate(loaded) if ckpt is not None), None)
        if index is None:
            raise ValueError("at least one source must be a training checkpoint (its recipe "
                             "and labels go with the output), or give a base checkpoint")
        built_on = loaded[index]
    checkpoint = {k: v for k, v in built_on[1].items() if k not in RUN_STATE}
    checkpoint["model"] = average([state for state, _ in loaded])
    check_same_shapes(checkpoint["model"], built_on[0])  # the base must be the same model
    return checkpoint, index
