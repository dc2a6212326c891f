"""Time word alignment, aligned label scoring and CER on a long synthetic transcript.

    python benchmarks/bench_alignment.py --words 100000 --error-rate 0.1 --seed 0

The reference has Zipf-distributed words (frequency proportional to 1 / rank over a fixed
vocabulary) with random punctuation labels. The hypothesis copies it with word errors injected
at the given rate, in equal parts substitutions, insertions and deletions, and has its own random
labels. The script times punctum.metrics.align_words, score_aligned and char_error_rate
separately and prints one markdown table row (header included) for docs/BENCHMARKS.md, or a JSON
object with --json.
"""

from __future__ import annotations

import argparse
import datetime
import json
import platform
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from common import hardware

from punctum.metrics import align_words, char_error_rate, score_aligned

PUNCT_LABELS = ("O", "COMMA", "PERIOD", "QUESTION", "EXCLAMATION")
LABEL_WEIGHTS = (0.80, 0.10, 0.07, 0.02, 0.01)
N_VOCAB = 20_000


@dataclass(frozen=True)
class Workload:
    """A synthetic reference/hypothesis pair with per-word labels."""

    ref_words: list[str]
    ref_labels: list[str]
    hyp_words: list[str]
    hyp_labels: list[str]
    n_injected: int


def zipf_ranks(rng: np.random.Generator, n_words: int, n_vocab: int) -> np.ndarray:
    """(n_words,) int64 word ranks with probability proportional to 1 / (rank + 1)."""
    weights = 1.0 / np.arange(1, n_vocab + 1)
    return rng.choice(n_vocab, size=n_words, p=weights / weights.sum())


def random_labels(rng: np.random.Generator, n_words: int) -> list[str]:
    """(n_words,) punctuation labels drawn with LABEL_WEIGHTS."""
    return rng.choice(PUNCT_LABELS, size=n_words, p=LABEL_WEIGHTS).tolist()


def inject_errors(
    rng: np.random.Generator, ref_ranks: np.ndarray, n_errors: int, n_vocab: int
) -> list[int]:
    """Copy of ref_ranks with n_errors substitutions, insertions and deletions in equal parts.

    Substituted words always differ from the original; an insertion goes before its position.
    """
    positions = rng.choice(ref_ranks.size, size=n_errors, replace=False)
    kinds = np.zeros(ref_ranks.size, dtype=np.int8)  # 0 keep, 1 substitute, 2 insert, 3 delete
    kinds[positions] = rng.permutation(np.arange(n_errors) % 3 + 1)
    fillers = zipf_ranks(rng, ref_ranks.size, n_vocab)
    fillers = np.where(fillers == ref_ranks, (fillers + 1) % n_vocab, fillers)
    hyp: list[int] = []
    for rank, kind, filler in zip(
        ref_ranks.tolist(), kinds.tolist(), fillers.tolist(), strict=True
    ):
        if kind == 0:
            hyp.append(rank)
        elif kind == 1:
            hyp.append(filler)
        elif kind == 2:
            hyp.extend((filler, rank))
    return hyp


def make_workload(n_words: int, error_rate: float, seed: int, n_vocab: int = N_VOCAB) -> Workload:
    """Build the reference, the hypothesis with injected errors, and random labels for both."""
    if n_words < 1:
        raise ValueError(f"n_words must be >= 1, got {n_words}")
    if not 0.0 <= error_rate <= 1.0:
        raise ValueError(f"error_rate must be in [0, 1], got {error_rate}")
    rng = np.random.default_rng(seed)
    ref_ranks = zipf_ranks(rng, n_words, n_vocab)
    n_injected = round(error_rate * n_words)
    hyp_ranks = inject_errors(rng, ref_ranks, n_injected, n_vocab)
    return Workload(
        ref_words=[f"w{rank}" for rank in ref_ranks.tolist()],
        ref_labels=random_labels(rng, n_words),
        hyp_words=[f"w{rank}" for rank in hyp_ranks],
        hyp_labels=random_labels(rng, len(hyp_ranks)),
        n_injected=n_injected,
    )


def timed(function: Callable, *args) -> tuple[object, float]:
    """Call function(*args) once; return its result and the wall time in seconds."""
    start = time.perf_counter()
    result = function(*args)
    return result, time.perf_counter() - start


def run_benchmark(n_words: int, error_rate: float, seed: int) -> dict[str, object]:
    """Time the three steps on one workload; return timings, rates and the environment."""
    work = make_workload(n_words, error_rate, seed)
    alignment, align_s = timed(align_words, work.ref_words, work.hyp_words)
    scored, score_s = timed(
        score_aligned,
        work.ref_words,
        work.ref_labels,
        work.hyp_words,
        work.hyp_labels,
        PUNCT_LABELS,
        "O",
    )
    cer, cer_s = timed(char_error_rate, work.ref_words, work.hyp_words)
    return {
        "words": n_words,
        "error_rate": error_rate,
        "seed": seed,
        "injected_edits": work.n_injected,
        "aligned_edits": alignment.n_errors,
        "wer": alignment.wer,
        "cer": cer,
        "punct_f1": scored.scores.overall.f1,
        "align_s": align_s,
        "score_aligned_s": score_s,
        "cer_s": cer_s,
        "total_s": align_s + score_s + cer_s,
        "hardware": hardware(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "date": datetime.date.today().isoformat(),
    }


def format_markdown(result: dict[str, object]) -> str:
    """A markdown header, separator and one row for the result."""
    columns = [
        ("words", "{:,}"),
        ("error_rate", "{:.0%}"),
        ("injected_edits", "{:,}"),
        ("aligned_edits", "{:,}"),
        ("wer", "{:.4f}"),
        ("cer", "{:.4f}"),
        ("align_s", "{:.3f}"),
        ("score_aligned_s", "{:.3f}"),
        ("cer_s", "{:.3f}"),
        ("total_s", "{:.3f}"),
        ("hardware", "{}"),
        ("date", "{}"),
    ]
    header = "| " + " | ".join(name for name, _ in columns) + " |"
    separator = "|" + "|".join("---" for _ in columns) + "|"
    row = "| " + " | ".join(fmt.format(result[name]) for name, fmt in columns) + " |"
    return "\n".join([header, separator, row])


def main(argv: Sequence[str] | None = None) -> int:
    """Parse arguments, run the benchmark and print the result."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--words", type=int, default=100_000, help="reference length in words")
    parser.add_argument("--error-rate", type=float, default=0.1, help="injected word errors")
    parser.add_argument("--seed", type=int, default=0, help="random seed")
    parser.add_argument("--json", action="store_true", help="print JSON instead of markdown")
    args = parser.parse_args(argv)
    result = run_benchmark(args.words, args.error_rate, args.seed)
    print(json.dumps(result, indent=2) if args.json else format_markdown(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
