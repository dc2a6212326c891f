"""Paired bootstrap resampling of F1 differences, by word or by sentence units."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import asdict, dataclass

import numpy as np

from punctum.metrics.classes import _check_labels, _encode_pair, _f1

# Bootstrap draws are made in chunks of about this many (sample, unit) cells to bound memory.
_BOOTSTRAP_CHUNK_CELLS = 2_000_000


@dataclass(frozen=True)
class BootstrapResult:
    """Paired bootstrap comparison of system b against system a (Koehn 2004).

    Attributes:
        f1_a, f1_b: overall (micro) F1 of each system on the full set.
        ci_a, ci_b: percentile confidence intervals of each F1 over the resamples.
        delta: f1_b - f1_a.
        p_value: fraction of resamples in which b is NOT better than a (F1_b <= F1_a): a
            one-sided test of "b beats a". Identical systems give exactly 1.0.
        n_samples, n_units, confidence: the settings used.
    """

    f1_a: float
    f1_b: float
    ci_a: tuple[float, float]
    ci_b: tuple[float, float]
    delta: float
    p_value: float
    n_samples: int
    n_units: int
    confidence: float

    def to_dict(self) -> dict[str, object]:
        """JSON-ready dict of all fields (intervals as two-element lists)."""
        data = asdict(self)
        data["ci_a"], data["ci_b"] = list(self.ci_a), list(self.ci_b)
        return data


def paired_bootstrap(
    ref: Sequence[str],
    hyp_a: Sequence[str],
    hyp_b: Sequence[str],
    labels: Sequence[str],
    negative: str,
    units: Sequence[int],
    n_samples: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> BootstrapResult:
    """Paired bootstrap resampling over units (e.g. sentences) of overall F1 for two systems.

    Each resample draws n_units units with replacement and sums their tp/fp/fn counts; both
    systems see the same draw. Deterministic for a given seed.

    Args:
        ref: (N,) reference labels.
        hyp_a, hyp_b: (N,) labels from systems a and b at the same positions.
        labels: (L,) label inventory, including `negative`.
        negative: the null label.
        units: (N,) int unit id per position; positions sharing an id are resampled together.
        n_samples: number of resamples, >= 1.
        seed: seed for numpy's default_rng.
        confidence: width of the percentile intervals, in (0, 1).

    Returns:
        BootstrapResult.
    """
    _check_bootstrap_options(n_samples, confidence)
    labels = _check_labels(labels, negative)
    ref_ids, a_ids = _encode_pair(ref, hyp_a, labels, "hyp_a")
    _, b_ids = _encode_pair(ref, hyp_b, labels, "hyp_b")
    unit_ids, n_units = _compact_units(units, ref_ids.size)
    negative_id = labels.index(negative)
    counts_a = _unit_counts(ref_ids, a_ids, negative_id, unit_ids, n_units)
    counts_b = _unit_counts(ref_ids, b_ids, negative_id, unit_ids, n_units)
    return bootstrap_unit_counts(counts_a, counts_b, n_samples, seed, confidence)


def unit_counts(
    ref: Sequence[str], hyp: Sequence[str], labels: Sequence[str], negative: str,
    units: Sequence[int], n_units: int,
) -> np.ndarray:
    """Overall tp, fp, fn per unit, for `bootstrap_unit_counts`.

    Args:
        ref, hyp: (N,) labels at the same positions (e.g. from project_labels).
        units: (N,) int unit id per position, each in [0, n_units).

    Returns:
        (n_units, 3) int64.
    """
    labels = _check_labels(labels, negative)
    ref_ids, hyp_ids = _encode_pair(ref, hyp, labels)
    unit_ids = np.asarray(units, dtype=np.int64)
    if unit_ids.shape != ref_ids.shape or (unit_ids.size and (
            unit_ids.min() < 0 or unit_ids.max() >= n_units)):
        raise ValueError(f"units must be {ref_ids.size} ids in [0, {n_units})")
    return _unit_counts(ref_ids, hyp_ids, labels.index(negative), unit_ids, n_units)


def bootstrap_unit_counts(
    counts_a: np.ndarray, counts_b: np.ndarray, n_samples: int = 1000, seed: int = 0,
    confidence: float = 0.95,
) -> BootstrapResult:
    """Paired bootstrap from per-unit (tp, fp, fn) counts of two systems.

    This is `paired_bootstrap` for systems whose positions differ (ASR hypotheses aligned to
    the reference separately): only the units (e.g. reference sentences) must be shared.

    Args:
        counts_a, counts_b: (U, 3) int tp, fp, fn per unit.
    """
    _check_bootstrap_options(n_samples, confidence)
    if counts_a.shape != counts_b.shape or counts_a.ndim != 2 or counts_a.shape[1] != 3:
        raise ValueError(f"counts must both have shape (U, 3), got {counts_a.shape} and "
                         f"{counts_b.shape}")
    n_units = counts_a.shape[0]
    samples_a, samples_b = _resample_f1(counts_a, counts_b, n_samples, seed)
    f1_a, f1_b = _f1(*counts_a.sum(axis=0).tolist()), _f1(*counts_b.sum(axis=0).tolist())
    return BootstrapResult(
        f1_a=f1_a,
        f1_b=f1_b,
        ci_a=_percentile_interval(samples_a, confidence),
        ci_b=_percentile_interval(samples_b, confidence),
        delta=f1_b - f1_a,
        p_value=float(np.mean(samples_b <= samples_a)),
        n_samples=n_samples,
        n_units=n_units,
        confidence=confidence,
    )


def sentence_units(ref_labels: Sequence[str], final_labels: Collection[str]) -> np.ndarray:
    """Number positions by sentence: a new unit starts after each sentence-final label.

    Args:
        ref_labels: (N,) reference labels.
        final_labels: labels that end a sentence, e.g. {"PERIOD", "QUESTION", "EXCLAMATION"};
            a single string is taken as one label.

    Returns:
        (N,) int64 unit ids 0, 0, ..., 1, 1, ... for paired_bootstrap.
    """
    if isinstance(ref_labels, str):
        raise TypeError("ref_labels must be a sequence of labels, not a string")
    finals = {final_labels} if isinstance(final_labels, str) else set(final_labels)
    ends = np.fromiter((label in finals for label in ref_labels), bool, count=len(ref_labels))
    return np.concatenate([[0], np.cumsum(ends[:-1], dtype=np.int64)])[: ends.size]


def _check_bootstrap_options(n_samples: int, confidence: float) -> None:
    """ValueError for n_samples < 1 or confidence outside (0, 1)."""
    if not isinstance(n_samples, (int, np.integer)) or n_samples < 1:
        raise ValueError(f"n_samples must be an integer >= 1, got {n_samples!r}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")


def _compact_units(units: Sequence[int], size: int) -> tuple[np.ndarray, int]:
    """(N,) integer unit ids -> (N,) ids renumbered 0..U-1 in sorted order, and U."""
    unit_array = np.asarray(units)
    if unit_array.shape != (size,):
        raise ValueError(f"units must have shape ({size},), got {unit_array.shape}")
    if size and unit_array.dtype.kind not in "iu":
        raise ValueError(f"units must be integers, got dtype {unit_array.dtype}")
    values, inverse = np.unique(unit_array, return_inverse=True)
    return inverse.reshape(-1).astype(np.int64), int(values.size)


def _unit_counts(
    ref_ids: np.ndarray, hyp_ids: np.ndarray, negative_id: int, unit_ids: np.ndarray, n_units: int
) -> np.ndarray:
    """(n_units, 3) int64 overall tp, fp, fn per unit (the same counts as ClassScores.overall)."""
    wrong = ref_ids != hyp_ids
    flags = (
        ~wrong & (ref_ids != negative_id),  # tp
        wrong & (hyp_ids != negative_id),  # fp
        wrong & (ref_ids != negative_id),  # fn
    )
    return np.stack([np.bincount(unit_ids[f], minlength=n_units) for f in flags], axis=1)


def _resample_f1(
    counts_a: np.ndarray, counts_b: np.ndarray, n_samples: int, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """(U, 3) unit counts of two systems -> two (n_samples,) F1 arrays over shared resamples.

    Each resample is a row of unit multiplicities (drawn as U indices, then counted), so the
    summed counts of all resamples in a chunk are one (chunk, U) @ (U, 6) product; float64 is
    exact for these integer sums.
    """
    n_units = counts_a.shape[0]
    if n_units == 0:
        return np.zeros(n_samples), np.zeros(n_samples)
    rng = np.random.default_rng(seed)
    unit_counts = np.hstack([counts_a, counts_b]).astype(np.float64)  # (U, 6)
    chunk = max(1, _BOOTSTRAP_CHUNK_CELLS // n_units)
    totals = []
    for start in range(0, n_samples, chunk):
        size = min(chunk, n_samples - start)
        draw = rng.integers(0, n_units, size=(size, n_units))
        draw += np.arange(size)[:, None] * n_units
        weights = np.bincount(draw.ravel(), minlength=size * n_units).reshape(size, n_units)
        totals.append(weights.astype(np.float64) @ unit_counts)
    totals = np.concatenate(totals)  # (n_samples, 6)
    return _f1_array(totals[:, :3]), _f1_array(totals[:, 3:])


def _f1_array(totals: np.ndarray) -> np.ndarray:
    """(S, 3) tp, fp, fn -> (S,) F1, 0.0 where tp is 0."""
    tp, fp, fn = totals[:, 0], totals[:, 1], totals[:, 2]
    denominator = np.maximum(2 * tp + fp + fn, 1)
    return np.where(tp > 0, 2 * tp / denominator, 0.0)


def _percentile_interval(samples: np.ndarray, confidence: float) -> tuple[float, float]:
    """Central percentile interval holding `confidence` of the samples."""
    tail = (1.0 - confidence) / 2
    low, high = np.quantile(samples, [tail, 1.0 - tail])
    return float(low), float(high)
