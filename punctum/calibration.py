"""Decision biases: per-mark offsets added to the log-probabilities before the argmax.

A tagger trained with cross-entropy picks the most probable mark per word, which is not
the choice that maximises F1: rare marks (COMMA, QUESTION) are predicted with high
precision and low recall. A bias b_k per mark moves that balance,

    label = argmax_k (log p_k + b_k),        b_null = 0,

and is fitted on a dev set by coordinate ascent on the overall punctuation F1
(`fit_post_bias`). `punctum calibrate` fits it and stores it in the artifact's punctum.json
("decision": {"post_bias": ...}), where `Punctuator` reads it. The model's probabilities are
left as they are; only the decision changes.
"""

from __future__ import annotations

import datetime
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from punctum.corpora import CHE_LABEL_MAP, CHE_LABELS

DEFAULT_GRID = tuple(round(v, 2) for v in np.arange(-1.0, 2.01, 0.1))


@dataclass(frozen=True)
class BiasFit:
    """A fitted bias and what it did on the dev set.

    Attributes:
        bias: label -> offset added to its log-probability (the null label is 0).
        f1_before, f1_after: overall punctuation F1 on the dev set without / with it.
        words: dev words it was fitted on.
    """

    bias: dict[str, float]
    f1_before: float
    f1_after: float
    words: int


def bias_vector(labels: Sequence[str], bias: Mapping[str, float]) -> np.ndarray:
    """(K,) float32 offsets in `labels` order from a label -> offset mapping.

    Raises:
        ValueError: a label not in `labels`, the null label (index 0) given a non-zero
            offset, or a value that is not a finite number.
    """
    vector = np.zeros(len(labels), dtype=np.float32)
    for label, value in bias.items():
        if label not in labels:
            raise ValueError(f"post_bias: unknown label {label!r} (labels: {', '.join(labels)})")
        if isinstance(value, bool) or not isinstance(value, (int, float)) \
                or not np.isfinite(value):
            raise ValueError(f"post_bias: {label} must be a finite number, got {value!r}")
        if labels.index(label) == 0 and value != 0:
            raise ValueError(f"post_bias: the null label {label} cannot have an offset")
        vector[labels.index(label)] = value
    return vector


def decide(probs: np.ndarray, bias: np.ndarray | None) -> np.ndarray:
    """(n,) label indices: argmax of log(probs) + bias; plain argmax without a bias.

    Args:
        probs: (n, K) probabilities.
        bias: (K,) offsets or None.
    """
    if bias is None or not bias.any():
        return probs.argmax(-1)
    return (np.log(np.maximum(probs, 1e-30)) + bias).argmax(-1)


def micro_f1(hyp: np.ndarray, ref: np.ndarray) -> float:
    """Overall F1 over the non-null labels (index 0 is null), as `metrics.score_labels`
    computes it: a word counts as correct when both give the same non-null label.

    Args:
        hyp, ref: (n,) label indices.
    """
    predicted, relevant = int((hyp != 0).sum()), int((ref != 0).sum())
    correct = int(((hyp == ref) & (ref != 0)).sum())
    if not correct:
        return 0.0
    precision, recall = correct / predicted, correct / relevant
    return 2 * precision * recall / (precision + recall)


def fit_post_bias(probs: np.ndarray, ref: np.ndarray, labels: Sequence[str],
                  scored_as: Sequence[int] | None = None, fixed: Collection[str] = (),
                  grid: Sequence[float] = DEFAULT_GRID, sweeps: int = 3,
                  starts: Sequence[Mapping[str, float]] = ()) -> BiasFit:
    """Fit per-label offsets that maximise overall F1 on a dev set.

    Coordinate ascent: each non-null label in turn takes the grid value that gives the
    best F1 with the others fixed; `sweeps` rounds; an offset changes only when F1 rises.
    It starts from no offsets and from each of `starts` (e.g. the model's offsets before a
    change), and keeps the best end: ascent from one start can stop at a local optimum.
    Labels in `fixed` keep offset 0: pass those the dev set scores as another label
    (EXCLAMATION as PERIOD), since raising them would only trade "." for "!".

    Args:
        probs: (n, K) the model's probabilities over `labels`.
        ref: (n,) reference label indices in the scoring classes.
        labels: (K,) label names; index 0 is the null label.
        scored_as: (K,) the scoring class of each model label (e.g. EXCLAMATION scored as
            PERIOD in the IWSLT convention); identity when None.
        fixed: labels whose offset stays 0.
        grid: candidate offsets.
        sweeps: rounds over the labels.
    """
    if probs.ndim != 2 or probs.shape[1] != len(labels) or len(ref) != len(probs):
        raise ValueError(f"probs {probs.shape} do not fit {len(labels)} labels and "
                         f"{len(ref)} reference labels")
    mapping = np.arange(len(labels)) if scored_as is None else np.asarray(scored_as)
    log_probs = np.log(np.maximum(probs, 1e-30))
    ref = np.asarray(ref)

    def f1_of(bias: np.ndarray) -> float:
        return micro_f1(mapping[(log_probs + bias).argmax(-1)], ref)

    if not (ref != 0).any():
        raise ValueError("the dev set has no marks to fit biases on")
    fitted = [k for k in range(1, len(labels)) if labels[k] not in fixed]
    before = f1_of(np.zeros(len(labels), dtype=np.float32))
    ends = [_ascend(f1_of, start, fitted, grid, sweeps)
            for start in [np.zeros(len(labels), dtype=np.float32)]
            + [bias_vector(labels, {k: v for k, v in s.items() if k not in fixed})
               for s in starts]]
    best, bias = max(ends, key=lambda end: end[0])  # the first on a tie: no offsets
    offsets = {label: round(float(b), 4) for label, b in zip(labels[1:], bias[1:])}
    return BiasFit(offsets, before, best, len(ref))


def _ascend(f1_of, bias: np.ndarray, fitted: list[int], grid: Sequence[float],
            sweeps: int) -> tuple[float, np.ndarray]:
    """(F1, offsets) where coordinate ascent from `bias` stops."""
    best = f1_of(bias)
    for _ in range(sweeps):
        changed = False
        for k in fitted:
            for value in grid:
                trial = bias.copy()
                trial[k] = value
                score = f1_of(trial)
                if score > best + 1e-12:
                    best, bias, changed = score, trial, True
        if not changed:
            break
    return best, bias



def fit_on_dev(punctuator, dev, starts: Sequence[Mapping[str, float]] = ()) -> BiasFit:
    """Fit a model's offsets on a punctuated dev file.

    Args:
        punctuator: a `runtime.Punctuator` loaded without offsets (`post_bias={}`).
        dev: an `evaluation.ScoredFile` (`evaluation.load_scored`). Che's files are scored
            in their own labels (EXCLAMATION as PERIOD, whose offset then stays 0).
        starts: offsets to start the ascent from too (`fit_post_bias`).

    Raises:
        ValueError: the dev file has no words or no marks, or labels the model lacks.
    """
    if not len(dev.labelled):
        raise ValueError("the dev file has no words")
    labels = punctuator.post_labels
    che = dev.che is not None
    scoring = CHE_LABELS if che else labels
    scored_as = [_index(scoring, CHE_LABEL_MAP.get(label, label) if che else label)
                 for label in labels]
    ref = np.asarray([_index(scoring, label) for label in dev.labelled.post])
    probs = _dev_probs(punctuator, dev.labelled.words, dev.is_final)
    return fit_post_bias(probs, ref, labels, scored_as,
                         fixed=set(CHE_LABEL_MAP) if che else set(), starts=starts)


def _dev_probs(punctuator, words: Sequence[str], is_final: np.ndarray) -> np.ndarray:
    """(n_words, n_labels) mark probabilities as `punctum restore` meets them: each line
    (utterance) of the dev file its own text, whose last word can only end a sentence
    (`merging.close_text`). A file without lines (Che's) is one text."""
    ends = (np.flatnonzero(is_final) + 1).tolist()
    if not ends or ends[-1] != len(words):
        ends.append(len(words))
    starts = [0] + ends[:-1]
    predictions = punctuator.predict_batch([list(words[s:e]) for s, e in zip(starts, ends)])
    probs = np.concatenate([p.post_probs for p in predictions]).astype(np.float64)
    if is_final.any():
        final = [label in punctuator.inventory.sentence_final for label in punctuator.post_labels]
        probs[np.asarray(ends) - 1] *= np.asarray(final, dtype=np.float64)
    return probs


def decision_record(fit: BiasFit, dev_name: str) -> dict:
    """The "decision" entry of punctum.json for a fit."""
    return {"post_bias": fit.bias, "fitted_on": dev_name, "words": fit.words,
            "dev_f1_before": round(fit.f1_before * 100, 2),
            "dev_f1_after": round(fit.f1_after * 100, 2),
            "date": datetime.date.today().isoformat()}


def _index(labels: Sequence[str], label: str) -> int:
    if label not in labels:
        raise ValueError(f"label {label!r} is not one of the dev file's ({', '.join(labels)})")
    return list(labels).index(label)
