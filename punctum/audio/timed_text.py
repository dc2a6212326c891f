"""Timed text: punctuated utterances with the pause after every word, measured on speech
synthesized by espeak-ng (`punctum timings`), for training and testing PauseAware models.

    punctum timings ../shared/data/text/ted_talks/ted_talks.txt.gz --split train \\
        --utterances 8000 --hold-out en-gb-scotland --out corpora/pauses/train.jsonl.gz

Each output line is one utterance::

    {"id": "ted_talks:12#3", "text": "Well, I went home. Did you?",
     "pauses": [0.14, 0.0, 0.0, 0.31, 0.0, null], "voice": "en-us+f3", "wpm": 181}

`pauses[i]` is the silence in seconds after word i of `text` (whitespace-separated), null
where unknown (after the last word). Utterances are whole sentences cut as by `punctum
synth` (same text split by hash, so a sentence of the test split never reaches train); each
draws a voice, speed and pitch from ``default_rng([seed, index])``. No audio is kept.
"""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from tqdm import tqdm

from punctum.audio.manifest import iter_texts
from punctum.audio.synth import SynthConfig, TextUtterance, choose_texts, split_utterances
from punctum.audio.voices import ESPEAK_WORDS_PER_MINUTE, Voice, select_voices
from punctum.fileio import atomic_writer

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class TimedConfig:
    """What `punctum timings` builds.

    Args:
        texts: utterance cutting, text split, n_utterances, seed and hold_out as for
            `punctum synth` (its audio settings are unused).
        max_documents: documents read per source (0 = all).
        pitch_range: espeak-ng pitch (0..99), uniform.
        jobs: synthesis processes.
    """

    texts: SynthConfig
    max_documents: int = 0
    pitch_range: tuple[int, int] = (30, 70)
    jobs: int = 1

    def __post_init__(self) -> None:
        low, high = self.pitch_range
        checks = {"max_documents": (self.max_documents >= 0, ">= 0 (0: all)"),
                  "pitch_range": (0 <= low <= high <= 99, "two values, 0 <= low <= high <= 99"),
                  "jobs": (self.jobs >= 1, ">= 1")}
        for name, (ok, allowed) in checks.items():
            if not ok:
                raise ValueError(f"TimedConfig.{name} must be {allowed}, got "
                                 f"{getattr(self, name)!r}")


def espeak_voices(include: tuple[str, ...] = (),
                  hold_out: tuple[str, ...] = ()) -> tuple[Voice, ...]:
    """The espeak-ng voices of `punctum synth` named by `include` (all when empty), minus
    held-out names or families."""
    chosen = select_voices(include or ("espeak-ng",), hold_out)
    voices = tuple(v for v in chosen if v.engine == "espeak-ng")
    if not voices:
        raise ValueError("no espeak-ng voice left: timings come from espeak-ng only")
    return voices


def collect_utterances(paths: Iterable[str | Path], config: TimedConfig) -> list[TextUtterance]:
    """Utterances of the configured text split from the first max_documents of each source."""
    utterances: list[TextUtterance] = []
    for path in paths:
        for number, (doc_id, document) in enumerate(iter_texts(path)):
            if config.max_documents and number >= config.max_documents:
                break
            utterances.extend(split_utterances(doc_id, document, config.texts))
    return choose_texts(utterances, config.texts)


def time_utterance(index: int, text: str, voices: tuple[Voice, ...], config: TimedConfig,
                   utterance_id: str = "") -> dict | None:
    """One timed record (see the module doc), or None when espeak-ng gave no timings."""
    from punctum.audio.timings import speak_with_timings

    rng = np.random.default_rng([config.texts.seed, index])
    voice = voices[int(rng.integers(len(voices)))]
    wpm = int(round(ESPEAK_WORDS_PER_MINUTE * rng.uniform(*config.texts.rate_range)))
    pitch = int(rng.integers(config.pitch_range[0], config.pitch_range[1] + 1))
    try:
        speech = speak_with_timings(text, voice.name, wpm, pitch)
    except ValueError as error:
        log.debug("skipped %s: %s", utterance_id, error)
        return None
    pauses = [None if math.isnan(p) else round(float(p), 3) for p in speech.pauses_after]
    return {"id": utterance_id or str(index), "text": text, "pauses": pauses,
            "voice": voice.name, "wpm": wpm}


def _time_chunk(args) -> list[dict | None]:
    start, texts, ids, voices, config = args
    return [time_utterance(start + k, t, voices, config, i)
            for k, (t, i) in enumerate(zip(texts, ids))]


def iter_timed(texts: list[str], ids: list[str], voices: tuple[Voice, ...],
               config: TimedConfig, chunk: int = 64) -> Iterator[dict]:
    """Timed records in input order (skipped utterances left out), on config.jobs processes."""
    jobs = [(s, texts[s:s + chunk], ids[s:s + chunk], voices, config)
            for s in range(0, len(texts), chunk)]
    if config.jobs <= 1:
        results = map(_time_chunk, jobs)
        for records in results:
            yield from (r for r in records if r is not None)
        return
    with ProcessPoolExecutor(config.jobs) as pool:
        for records in pool.map(_time_chunk, jobs):
            yield from (r for r in records if r is not None)


def build_timed(paths: list[str], out: str | Path, config: TimedConfig,
                progress: bool = True) -> dict:
    """Write the timed utterances of `paths` to `out` (.jsonl or .jsonl.gz, atomically).

    Returns:
        {"utterances": written, "skipped": n, "words": n} for the summary line.
    """
    utterances = collect_utterances(paths, config)
    if not utterances:
        raise ValueError("no utterances: check the sources, the split and min/max_words")
    voices = espeak_voices(config.texts.voices, config.texts.hold_out)
    texts = [u.text for u in utterances]
    ids = _numbered([u.source for u in utterances])
    written = words = 0
    with atomic_writer(out) as handle:
        bar = tqdm(total=len(texts), unit="utt", disable=not progress, desc="timing")
        for record in iter_timed(texts, ids, voices, config):
            handle.write(json.dumps(record) + "\n")
            written += 1
            words += len(record["pauses"])
            bar.update(1)
        bar.close()
    return {"utterances": written, "skipped": len(texts) - written, "words": words}


def _numbered(sources: list[str]) -> list[str]:
    """Unique ids: the k-th utterance cut from a source line is "source#k" (from 1)."""
    seen: dict[str, int] = {}
    ids = []
    for source in sources:
        seen[source] = seen.get(source, 0) + 1
        ids.append(f"{source}#{seen[source]}")
    return ids


def read_timed(path: str | Path) -> Iterator[tuple[str, np.ndarray]]:
    """(text, (n_words,) float64 pauses with NaN unknown) of each record of a timed file.

    Raises:
        ValueError: a malformed line (named by file and line number).
    """
    from punctum.corpora import iter_lines

    for number, line in enumerate(iter_lines(path, keep_blank=True), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            text, pauses = record["text"], record["pauses"]
            values = np.asarray([np.nan if p is None else float(p) for p in pauses])
        except (ValueError, KeyError, TypeError) as error:
            raise ValueError(f"{path}:{number}: not a timed record ({error})") from None
        if len(values) != len(text.split()):
            raise ValueError(f"{path}:{number}: {len(values)} pauses for "
                             f"{len(text.split())} words")
        yield text, values
