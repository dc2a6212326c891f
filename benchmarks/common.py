"""Helpers shared by the benchmark scripts."""

from __future__ import annotations

import os
import platform
import sys
from pathlib import Path

# The corpora sit beside the checkout (../shared/data from the repository root); defaults are
# resolved from this file, so the scripts work from any working directory.
SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def hardware() -> str:
    """Processor name (from /proc/cpuinfo, else platform) and core count."""
    name = ""
    if os.path.exists("/proc/cpuinfo"):
        with open("/proc/cpuinfo", encoding="utf-8") as cpuinfo:
            models = [line.split(":", 1)[1].strip() for line in cpuinfo if "model name" in line]
        name = models[0] if models else ""
    name = name or platform.processor() or platform.machine() or "unknown CPU"
    return f"{name}, {os.cpu_count()} cores"


def print_result(result: dict, model: str) -> None:
    """Print a benchmark's result as JSON, with the model, this machine and today's date."""
    import datetime
    import json

    result |= {"model": model, "hardware": hardware(),
               "date": datetime.date.today().isoformat()}
    print(json.dumps(result, indent=2))


def existing_data(path: Path | str, *needed: str) -> Path:
    """`path` if it and each file `needed` inside it exist; otherwise exit with one line."""
    path = Path(path)
    for missing in [path] + [path / name for name in needed]:
        if not missing.exists():
            sys.exit(f"error: {missing}: no such file or folder (pass --data)")
    return path


def restore_and_score(punctuator, refs: list[str]) -> tuple[float, float]:
    """(overall punctuation F1, casing F1) of a model restoring cased, punctuated texts
    (`restore_batch` normalises their marks and case away first), scored against them."""
    from punctum.evaluation import join_texts, score
    from punctum.text import get_inventory

    hyps = punctuator.restore_batch(refs)
    evaluation = score(join_texts(refs), join_texts(hyps), get_inventory("en"))
    return evaluation.punct.overall.f1, evaluation.case.overall.f1
