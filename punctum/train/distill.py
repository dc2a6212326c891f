"""Knowledge distillation: a stronger exported model (the teacher) labels the training text
with probabilities, and the student learns from them beside the human labels.

    [data.distill]
    model = "en-accurate"    # a bundled model name or an artifact folder
    weight = 1.0             # L = L_human + weight * L_teacher
    threads = 2              # ONNX Runtime threads of the teacher while encoding

`model` may also be a list: an ensemble teacher whose per-word distributions are the mean
of its members' (`punctum.ensemble`; e.g. ``["en-accurate", "runs/en-tiny-drop8/artifact"]``,
members with the same labels;
`benchmarks/bench_ensemble.py` scores such a mean on a dev set before a run is started).

The teacher runs once, when a source is encoded (after ASR-style noise, so it sees the
words the student sees); its per-word mark and case distributions are cached with the
encoded corpus at each word's label position. L_teacher is the joint loss of the student
against those distributions (`punctum.models.losses.distill_loss`: soft cross-entropy,
L_case + punct_loss_weight * L_punct), over the positions that have them; sources with
`distill = false` have none. This module needs no torch.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from punctum.runtime import MAX_THREADS
from punctum.text import CASES


@dataclass(frozen=True)
class DistillConfig:
    """The [data.distill] table.

    Args:
        model: the teacher: a bundled model name or an artifact folder ("" = no teacher),
            or a list of them (an ensemble: their probabilities are averaged).
        weight: weight of the teacher term in the loss (0 = human labels only).
        threads: ONNX Runtime threads of the teacher (0 = the machine's cores).
    """

    model: str | tuple[str, ...] = ""
    weight: float = 1.0
    threads: int = 0

    def __post_init__(self) -> None:
        if isinstance(self.model, (list, tuple)):
            if not self.model or not all(isinstance(m, str) and m for m in self.model):
                raise ValueError("data.distill.model must be a model name or a non-empty "
                                 f"list of them, got {list(self.model)!r}")
            object.__setattr__(self, "model", tuple(self.model))
        if self.weight < 0:
            raise ValueError(f"data.distill.weight must be >= 0, got {self.weight}")
        if not 0 <= self.threads <= MAX_THREADS:
            raise ValueError(f"data.distill.threads must be from 0 to {MAX_THREADS}, got "
                             f"{self.threads}")

    @property
    def enabled(self) -> bool:
        return bool(self.model)

    @property
    def members(self) -> tuple[str, ...]:
        """The teacher's models (one unless it is an ensemble)."""
        return self.model if isinstance(self.model, tuple) else (self.model,)


class Teacher:
    """Per-word probabilities of an exported model (or the mean over an ensemble's), in the
    student's label order.

    Args:
        config: the distillation settings (each of config.members is loaded with
            `Punctuator.load`).
        post_labels: the student's mark labels (its inventory's order).
        language: the student's language; a teacher of another is refused.
    """

    def __init__(self, config: DistillConfig, post_labels: Sequence[str],
                 language: str | None = None) -> None:
        from punctum.ensemble import ensemble_of
        from punctum.runtime import Punctuator

        members = config.members
        self.punctuator = (Punctuator.load(members[0], threads=config.threads)
                           if len(members) == 1 else ensemble_of(members, config.threads))
        theirs = self.punctuator.inventory.language
        if language is not None and theirs != language:  # (its words and marks another's)
            raise ValueError(f"data.distill.model: {', '.join(map(str, members))} is a "
                             f"{theirs!r} model; the recipe trains a {language!r} one")
        self.post_columns = _columns(self.punctuator.post_labels, post_labels, "mark")
        self.case_columns = _columns(self.punctuator.case_labels, CASES, "case")

    @cached_property
    def key(self) -> str:
        """Identifies the teacher's weights (for cache keys): the digest of its ONNX file,
        or of an ensemble's member files in order."""
        digest = hashlib.md5()
        for model_file in self.punctuator.model_files:
            with open(model_file, "rb") as handle:
                for block in iter(lambda: handle.read(1 << 20), b""):
                    digest.update(block)
        return digest.hexdigest()[:16]

    def __call__(self, documents: Sequence[Sequence[str]]) -> list[np.ndarray]:
        """(n_words, n_post + n_case) float16 probabilities for each word list."""
        predictions = self.punctuator.predict_batch(documents)
        out = []
        for words, prediction in zip(documents, predictions):
            if len(prediction.words) != len(words):
                raise ValueError(f"teacher returned {len(prediction.words)} words for "
                                 f"{len(words)}")
            post = _renormalise(prediction.post_probs[:, self.post_columns])
            case = _renormalise(prediction.case_probs[:, self.case_columns])
            out.append(np.concatenate([post, case], axis=1).astype(np.float16))
        return out


def _columns(teacher: Sequence[str], student: Sequence[str], what: str) -> np.ndarray:
    """Index of each student label among the teacher's columns; a label the teacher lacks
    is an error (its probability would be unknown)."""
    missing = [label for label in student if label not in teacher]
    if missing:
        raise ValueError(f"the teacher has no {what} label(s) {', '.join(missing)}")
    return np.asarray([list(teacher).index(label) for label in student])


def _renormalise(probs: np.ndarray) -> np.ndarray:
    """Rows summing to 1 (labels the student lacks are dropped)."""
    return probs / np.maximum(probs.sum(axis=1, keepdims=True), 1e-12)
