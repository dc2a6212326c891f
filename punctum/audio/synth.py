"""Build a speech corpus from punctuated text with the Debian TTS voices (`punctum synth`).

    punctum synth ../shared/data/text/wikitext2_test/wikitext2_test_detok.txt.gz \\
        --out corpora/wiki-synth --utterances 200 --hold-out slt --seed 0

Steps: read documents (text lines, tables or manifests) -> cut them into utterances of whole
sentences (`min_words`..`max_words` words, written in punctum's canonical form so that the
audio says exactly the words of the label text) -> keep the utterances of one text split
(a hash of the words decides train/dev/test, so a sentence never lands in two splits) ->
draw a seeded sample -> per utterance draw a voice, a speaking rate, a pitch, a peak level
and optionally noise at an SNR -> synthesize in parallel -> 16 kHz FLAC + a JSONL manifest.

Every random choice of utterance i comes from ``default_rng([seed, i])``, so a corpus is
reproducible from its seed, and a run that stopped (Ctrl-C, a crash) continues where it
stopped when the same command is run again: finished utterances are read back from the
manifest and skipped. The settings are stored in ``synth.json``; resuming with different
settings is an error.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import hashlib
import json
import logging
import os
import time
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from punctum.audio.augment import NOISE_KINDS, add_noise, make_noise
from punctum.audio.io import SAMPLE_RATE, write_audio
from punctum.audio.manifest import (
    AUDIO_FOLDER,
    MANIFEST,
    ManifestRecord,
    as_tuple,
    iter_texts,
    manifest_line,
    write_manifest,
)
from punctum.audio.voices import Voice, missing_voices, select_voices, synthesize
from punctum.config import changed_keys
from punctum.text import Labelled, parse, render, sentence_spans

logger = logging.getLogger(__name__)

SPLITS = ("train", "dev", "test")
SETTINGS = "synth.json"



@dataclass(frozen=True)
class SynthConfig:
    """What `punctum synth` builds (TOML tables and CLI flags map onto these fields).

    Args:
        voices: voice ids, names, families or engines to use (empty: every voice).
        hold_out: voice ids, names, families or engines never used (e.g. test voices).
        n_utterances: utterances to synthesize (0: every utterance of the split).
        min_words, max_words: words per utterance; utterances are whole sentences, and
            sentences longer than max_words are skipped.
        max_sentences: sentences per utterance at most.
        split: "" (all text) or one of train/dev/test: keep only utterances whose text hash
            falls in that split.
        split_fractions: shares of train, dev and test (sum 1).
        skip_digits: drop utterances with digits (engines read them aloud in their own way).
        rate_range: speaking-rate factor, uniform.
        pitch_range: F0 factor, uniform (voices without pitch control keep 1.0).
        peak_range: peak amplitude of the clean utterance, uniform (loudness variety).
        noise_probability: share of utterances with additive noise.
        noise_kinds: generated noise colours to choose from (white, pink, brown).
        snr_db_range: signal-to-noise ratio in dB, uniform.
        seed: the seed of every random choice.
        workers: parallel synthesis jobs (0: one per CPU core).
    """

    voices: tuple[str, ...] = ()
    hold_out: tuple[str, ...] = ()
    n_utterances: int = 0
    min_words: int = 3
    max_words: int = 30
    max_sentences: int = 3
    split: str = ""
    split_fractions: tuple[float, ...] = (0.96, 0.02, 0.02)
    skip_digits: bool = False
    rate_range: tuple[float, ...] = (0.85, 1.15)
    pitch_range: tuple[float, ...] = (0.9, 1.1)
    peak_range: tuple[float, ...] = (0.3, 0.9)
    noise_probability: float = 0.3
    noise_kinds: tuple[str, ...] = ("white", "pink", "brown")
    snr_db_range: tuple[float, ...] = (10.0, 30.0)
    seed: int = 0
    workers: int = 0

    def __post_init__(self) -> None:
        for name in ("voices", "hold_out", "split_fractions", "rate_range", "pitch_range",
                     "peak_range", "noise_kinds", "snr_db_range"):
            object.__setattr__(self, name, as_tuple(getattr(self, name)))
        self._check_ranges()
        checks = {
            "n_utterances": (self.n_utterances >= 0, ">= 0 (0: all)"),
            "min_words": (self.min_words >= 1, ">= 1"),
            "max_words": (self.max_words >= self.min_words, f">= min_words ({self.min_words})"),
            "max_sentences": (self.max_sentences >= 1, ">= 1"),
            "split": (self.split in ("", *SPLITS), f"'' or one of {', '.join(SPLITS)}"),
            "split_fractions": (len(self.split_fractions) == 3
                                and min(self.split_fractions) >= 0
                                and abs(sum(self.split_fractions) - 1) < 1e-6,
                                "three shares >= 0 that sum to 1"),
            "noise_probability": (0.0 <= self.noise_probability <= 1.0, "in [0, 1]"),
            "noise_kinds": (bool(self.noise_kinds) and set(self.noise_kinds) <= set(NOISE_KINDS),
                            f"one or more of {', '.join(NOISE_KINDS)}"),
            "workers": (self.workers >= 0, ">= 0 (0: one per core)"),
            "seed": (self.seed >= 0, ">= 0"),
        }
        for name, (ok, allowed) in checks.items():
            if not ok:
                raise ValueError(f"SynthConfig.{name} must be {allowed}, got "
                                 f"{getattr(self, name)!r}")

    def _check_ranges(self) -> None:
        limits = {"rate_range": (0.25, 4.0), "pitch_range": (0.5, 2.0),
                  "peak_range": (0.001, 1.0), "snr_db_range": (-20.0, 80.0)}
        for name, (low, high) in limits.items():
            value = getattr(self, name)
            if len(value) != 2 or not low <= value[0] <= value[1] <= high:
                raise ValueError(f"SynthConfig.{name} must be [low, high] within "
                                 f"[{low}, {high}], got {list(value)}")

    def to_dict(self) -> dict:
        return {key: list(v) if isinstance(v, tuple) else v
                for key, v in dataclasses.asdict(self).items()}


@dataclass(frozen=True)
class TextUtterance:
    """One utterance to speak: its source, canonical punctuated text, word count and the
    text split its words hash to."""

    source: str
    text: str
    n_words: int
    split: str = "train"


@dataclass(frozen=True)
class UtterancePlan:
    """Every random choice for one utterance (a pure function of seed and index)."""

    id: str
    text: TextUtterance
    voice: Voice
    rate: float
    pitch: float
    peak: float
    noise: str | None
    snr_db: float | None


@dataclass(frozen=True)
class SynthReport:
    """What a `build_corpus` call did."""

    out_dir: str
    n_utterances: int
    n_resumed: int
    seconds_of_audio: float
    wall_seconds: float
    voices: dict[str, int]


# ----------------------------------------------------------------------------- texts

def _slice(labelled: Labelled, span: range) -> Labelled:
    part = slice(span.start, span.stop)
    return Labelled(labelled.words[part], labelled.post[part], labelled.case[part],
                    labelled.pre[part], labelled.forms[part], labelled.abbreviated[part])


def _sentence_groups(sentences: list[range], config: SynthConfig,
                     dropped: Callable[[range], bool] | None = None) -> list[list[range]]:
    """Consecutive sentences grouped within max_words and max_sentences; sentences longer
    than max_words, or `dropped`, end the current group and are left out."""
    groups: list[list[range]] = []
    current: list[range] = []
    for sentence in sentences:
        too_long = len(sentence) > config.max_words or bool(dropped and dropped(sentence))
        full = bool(current) and (
            sum(len(span) for span in current) + len(sentence) > config.max_words
            or len(current) == config.max_sentences)
        if (too_long or full) and current:
            groups.append(current)
            current = []
        if not too_long:
            current.append(sentence)
    if current:
        groups.append(current)
    return groups


def split_utterances(source: str, document: str, config: SynthConfig,
                     unsaid: list[int] | None = None) -> list[TextUtterance]:
    """Cut a document into utterances of 1..max_sentences whole sentences.

    Sentences are added to an utterance while it stays within max_words; utterances with
    fewer than min_words words, and sentences longer than max_words, are dropped, as are
    sentences with a word the English voices cannot say (`_speakable`: emoji, Chinese),
    whose label would name words the audio does not hold (counted in `unsaid[0]` when
    given). The text is punctum's canonical form (`punctum.text.render`), sentence-initial
    words capitalised.
    """
    labelled = parse(document)
    utterances = []

    def unspeakable(sentence: range) -> bool:
        dropped = not all(map(_speakable, labelled.words[sentence.start:sentence.stop]))
        if dropped and unsaid is not None:
            unsaid[0] += 1
        return dropped

    for group in _sentence_groups(sentence_spans(labelled), config, unspeakable):
        span = range(group[0].start, group[-1].stop)
        if len(span) < config.min_words:
            continue
        text = render(_slice(labelled, span), sentence_case=True)
        if not (config.skip_digits and any(char.isdigit() for char in text)):
            split = text_split(labelled.words[span.start:span.stop], config.split_fractions)
            utterances.append(TextUtterance(source, text, len(span), split))
    return utterances


def _speakable(word: str) -> bool:
    """Whether an English voice says something for the word: it holds a Latin letter
    (full-width too), a digit or number sign ("3rd", "½", "Ⅻ"), or a symbol the voices read
    ("&", "%", "$", "+", "/", "=", "@", "#", "°"); "😀" and "你好" do not."""
    for char in word:
        category = unicodedata.category(char)
        if char.isdigit() or category in ("Nl", "No", "Sc", "Sm") or char in _SPOKEN_SIGNS:
            return True
        if char.isalpha() and "LATIN" in unicodedata.name(char, ""):
            return True
    return False


_SPOKEN_SIGNS = frozenset("&%/@#°")


def text_split(words: Sequence[str], fractions: tuple[float, ...]) -> str:
    """train/dev/test from a stable hash of normalised words (case and marks ignored), so
    that the same sentence always lands in the same split."""
    key = " ".join(words).encode("utf-8")
    position = int.from_bytes(hashlib.blake2b(key, digest_size=8).digest(), "big") / 2 ** 64
    bound = 0.0
    for name, fraction in zip(SPLITS, fractions):
        bound += fraction
        if position < bound:
            return name
    return SPLITS[-1]


def collect_texts(paths: Iterable[str | Path], config: SynthConfig,
                  exclude_prefixes: tuple[str, ...] = (),
                  text_column: str = "text") -> list[TextUtterance]:
    """Every utterance of the sources, in source order, with its text split.

    Args:
        paths: text files (one document per line), tables or manifests (.gz read).
        config: utterance sizes and split fractions.
        exclude_prefixes: documents whose id starts with one of these are skipped (e.g.
            "LJ001-": keep the text of a real-speech test set out of synthetic training).
    """
    utterances, unsaid = [], [0]  # (sentences left out: a counter split_utterances adds to)
    for path in paths:
        for doc_id, document in iter_texts(path, text_column):
            if not doc_id.startswith(exclude_prefixes):
                utterances.extend(split_utterances(doc_id, document, config, unsaid))
    if unsaid[0]:
        logger.info("left out %d sentences with words the voices cannot say (emoji, other "
                    "scripts)", unsaid[0])
    return utterances


def choose_texts(utterances: list[TextUtterance], config: SynthConfig) -> list[TextUtterance]:
    """The utterances of the configured split in a seeded random order, at most
    n_utterances of them (all when 0)."""
    pool = [u for u in utterances if not config.split or u.split == config.split]
    order = np.random.default_rng([config.seed, 1]).permutation(len(pool))
    chosen = [pool[i] for i in order]
    return chosen[:config.n_utterances] if config.n_utterances else chosen


# ----------------------------------------------------------------------------- plans

def plan_utterance(index: int, text: TextUtterance, voices: tuple[Voice, ...],
                   config: SynthConfig) -> UtterancePlan:
    """Draw voice, rate, pitch, peak level and noise for utterance `index`."""
    rng = np.random.default_rng([config.seed, 0, index])
    voice = voices[int(rng.integers(len(voices)))]
    rate = float(rng.uniform(*config.rate_range))
    pitch = float(rng.uniform(*config.pitch_range))
    peak = float(rng.uniform(*config.peak_range))
    noisy = rng.random() < config.noise_probability
    kind = config.noise_kinds[int(rng.integers(len(config.noise_kinds)))]
    snr_db = float(rng.uniform(*config.snr_db_range))
    return UtterancePlan(
        id=f"{index:07d}", text=text, voice=voice, rate=round(rate, 3),
        pitch=round(pitch, 3) if voice.pitch_control else 1.0, peak=round(peak, 3),
        noise=kind if noisy else None, snr_db=round(snr_db, 1) if noisy else None)


def render_utterance(plan: UtterancePlan, seed: int) -> np.ndarray:
    """Synthesize a plan: speak, scale to the peak level, add noise.

    Returns:
        (n,) float32 at 16 kHz.
    """
    samples = synthesize(plan.voice, plan.text.text, plan.rate, plan.pitch)
    peak = float(np.max(np.abs(samples))) if samples.size else 0.0
    if peak > 0:
        samples = samples * (plan.peak / peak)
    if plan.noise is not None:
        rng = np.random.default_rng([seed, 2, int(plan.id)])
        samples = add_noise(samples, make_noise(samples.size, plan.noise, rng), plan.snr_db)
    return samples.astype(np.float32)


def _record(plan: UtterancePlan, audio_path: Path, n_samples: int) -> ManifestRecord:
    extra = {"engine": plan.voice.engine, "voice_family": plan.voice.family,
             "rate": plan.rate, "pitch": plan.pitch, "peak": plan.peak, "noise": plan.noise,
             "snr_db": plan.snr_db, "source": plan.text.source}
    return ManifestRecord(id=plan.id, text=plan.text.text, speaker=plan.voice.id,
                          audio_path=str(audio_path),
                          duration=round(n_samples / SAMPLE_RATE, 4), extra=extra)


def _run_plan(plan: UtterancePlan, out_dir: Path, seed: int) -> ManifestRecord:
    samples = render_utterance(plan, seed)
    path = out_dir / AUDIO_FOLDER / f"{plan.id}.flac"
    write_audio(path, samples)  # atomic: a file under its final name is always complete
    return _record(plan, path.resolve(), samples.size)


# ----------------------------------------------------------------------------- corpus

def _check_settings(out_dir: Path, settings: dict) -> None:
    """Store the settings, or check them against those of the run being resumed."""
    path = out_dir / SETTINGS
    if not path.exists() and (out_dir / MANIFEST).exists():
        raise ValueError(f"{out_dir} holds a {MANIFEST} that synth did not write (no "
                         f"{SETTINGS}); use a new folder")
    if path.exists():
        try:
            stored = json.loads(path.read_text(encoding="utf-8"))
        except (ValueError, OSError) as error:
            raise ValueError(f"{path}: cannot be read ({error}); use a new folder") from None
        if not isinstance(stored, dict):
            raise ValueError(f"{path}: expected the settings of a synth run (a JSON object); "
                             f"use a new folder")
        if stored != settings:
            changed = changed_keys(_flatten(stored), _flatten(settings))
            raise ValueError(f"{out_dir} holds a corpus built with other settings "
                             f"({', '.join(changed)} differ); use a new folder")
        return
    path.write_text(json.dumps(settings, indent=1) + "\n", encoding="utf-8")


def _flatten(settings: dict) -> dict:
    """{"config": {"seed": 1}} -> {"seed": 1}: the names a user knows."""
    flat = {key: value for key, value in settings.items() if key != "config"}
    return {**flat, **settings.get("config", {})}


def _finished(out_dir: Path) -> dict[str, ManifestRecord]:
    """Records already written (a torn last line from an interrupted run is ignored)."""
    path = out_dir / MANIFEST
    done: dict[str, ManifestRecord] = {}
    if not path.exists():
        return done
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            record = ManifestRecord.from_dict(json.loads(line), out_dir)
        except (json.JSONDecodeError, ValueError, KeyError, TypeError):
            continue
        if record.audio_path and os.path.isfile(record.audio_path):
            done[record.id] = record
    return done


def build_corpus(texts: list[TextUtterance], out_dir: str | Path, config: SynthConfig,
                 progress: bool = False, sources: tuple[str, ...] = ()) -> SynthReport:
    """Synthesize `texts` into OUT/audio/*.flac and OUT/manifest.jsonl (sorted by id).

    Args:
        texts: the utterances (e.g. from `collect_texts`), in order; utterance i gets id
            ``f"{i:07d}"``.
        out_dir: corpus folder (created; an interrupted run in it is resumed).
        config: voices, variation and workers.
        progress: show a tqdm progress bar on stderr.
        sources: the text source names, stored with the settings.

    Raises:
        ValueError: the folder holds a corpus built with other settings, or no voice left.
        SynthesisError: an engine is missing or failed.
    """
    start = time.perf_counter()
    voices = select_voices(config.voices, config.hold_out)
    missing = missing_voices(voices)
    if missing:
        raise ValueError(f"voices not installed: {', '.join(missing)} (Debian: run "
                         f"scripts/system-deps.sh, or hold them out)")
    out_dir = Path(out_dir)
    (out_dir / AUDIO_FOLDER).mkdir(parents=True, exist_ok=True)
    settings = {"config": {**config.to_dict(), "workers": None},
                "sources": [os.path.basename(source) for source in sources],
                "texts": hashlib.sha256("\n".join(t.text for t in texts).encode()).hexdigest(),
                "voices": [voice.id for voice in voices]}
    _check_settings(out_dir, settings)
    done = _finished(out_dir)
    plans = [plan_utterance(i, text, voices, config) for i, text in enumerate(texts)]
    todo = [plan for plan in plans if plan.id not in done]
    write_manifest(out_dir / MANIFEST, sorted(done.values(), key=lambda r: r.id))
    records = dict(done)
    records.update(_synthesize_all(todo, out_dir, config, progress, len(done), len(plans)))
    ordered = [records[plan.id] for plan in plans]
    write_manifest(out_dir / MANIFEST, ordered)
    return SynthReport(str(out_dir), len(ordered), len(done),
                       sum(r.duration or 0.0 for r in ordered), time.perf_counter() - start,
                       dict(Counter(r.speaker for r in ordered)))


def _synthesize_all(plans: list[UtterancePlan], out_dir: Path, config: SynthConfig,
                    progress: bool, n_done: int, n_total: int) -> dict[str, ManifestRecord]:
    """Run the plans on a thread pool (the engines are subprocesses), appending each
    finished record to the manifest so that an interruption loses nothing finished."""
    from tqdm import tqdm

    workers = config.workers or os.cpu_count() or 1
    results: dict[str, ManifestRecord] = {}
    base_dir = out_dir.resolve()
    with open(out_dir / MANIFEST, "a", encoding="utf-8") as manifest, \
            tqdm(total=n_total, initial=n_done, disable=not progress, unit="utt",
                 desc="synth") as bar, \
            concurrent.futures.ThreadPoolExecutor(max_workers=workers) as pool:
        futures = [pool.submit(_run_plan, plan, out_dir, config.seed) for plan in plans]
        try:
            for future in concurrent.futures.as_completed(futures):
                record = future.result()
                manifest.write(manifest_line(record, base_dir) + "\n")
                manifest.flush()
                results[record.id] = record
                bar.update(1)
        except BaseException:
            for future in futures:
                future.cancel()
            raise
    return results


# ----------------------------------------------------------------------------- recipes

@dataclass(frozen=True)
class SynthRecipe:
    """A corpus recipe: text sources and one SynthConfig per split (TOML, see
    recipes/speech-synth.toml)."""

    sources: tuple[str, ...]
    exclude_ids: tuple[str, ...]
    text_column: str
    splits: dict[str, SynthConfig]


def parse_synth_recipe(raw: dict, data_root: str | Path | None = None) -> SynthRecipe:
    """Build a SynthRecipe from parsed TOML: [text], [synth] (shared SynthConfig fields) and
    [splits.NAME] (per-split fields; NAME is the text split unless `split` is given)."""
    from punctum.config import build_dataclass

    unknown = set(raw) - {"text", "synth", "splits"}
    if unknown:
        raise ValueError(f"unknown recipe table(s): {', '.join(sorted(unknown))}")
    text = dict(raw.get("text", {}))
    unknown = set(text) - {"sources", "exclude_ids", "text_column"}
    if unknown:
        raise ValueError(f"unknown key(s) in [text]: {', '.join(sorted(unknown))}")
    root = Path(data_root) if data_root else Path(".")
    sources = tuple(str(root / source) for source in as_tuple(text.get("sources", ())))
    if not sources:
        raise ValueError("[text] sources is empty: name at least one text file")
    for source in sources:
        if not Path(source).is_file():
            raise FileNotFoundError(f"text.sources: {source}: no such file")
    shared = dict(raw.get("synth", {}))
    splits = {}
    for name, values in dict(raw.get("splits", {})).items():
        if not isinstance(values, dict):
            raise ValueError(f"splits.{name} must be a table")
        merged = {"split": name if name in SPLITS else "", **shared, **values}
        splits[name] = build_dataclass(SynthConfig, merged, f"splits.{name}")
    if not splits:
        raise ValueError("the recipe has no [splits.NAME] tables")
    return SynthRecipe(sources, as_tuple(text.get("exclude_ids", ())),
                       str(text.get("text_column", "text")), splits)


def load_synth_recipe(path: str | Path, data_root: str | Path | None = None) -> SynthRecipe:
    """Read and validate a TOML corpus recipe."""
    import tomllib

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such recipe file")
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise ValueError(f"{path}: not valid TOML ({error})") from None
    return parse_synth_recipe(raw, data_root)


def build_from_recipe(recipe: SynthRecipe, out_dir: str | Path, overrides: dict | None = None,
                      only: tuple[str, ...] = (), progress: bool = False) -> list[SynthReport]:
    """Build every split of a recipe (or those in `only`) into OUT/<split>/.

    Args:
        overrides: SynthConfig fields that replace the recipe's in every split (CLI flags).
    """
    if "split" in (overrides or {}):
        raise ValueError("a recipe names the text split of each corpus; use --only SPLIT "
                         "instead of --split")
    for name in only:
        if name not in recipe.splits:
            raise ValueError(f"the recipe has no split {name!r} (it has "
                             f"{', '.join(recipe.splits)})")
    configs = {name: dataclasses.replace(config, **(overrides or {}))
               for name, config in recipe.splits.items() if not only or name in only}
    cut: dict[tuple, list[TextUtterance]] = {}  # texts are read once per way of cutting them
    reports = []
    for name, config in configs.items():
        key = (config.min_words, config.max_words, config.max_sentences, config.skip_digits,
               config.split_fractions)
        if key not in cut:
            cut[key] = collect_texts(recipe.sources, config, recipe.exclude_ids,
                                     recipe.text_column)
        chosen = choose_texts(cut[key], config)
        logger.info("split %s: %d utterances", name, len(chosen))
        reports.append(build_corpus(chosen, Path(out_dir) / name, config, progress,
                                    recipe.sources))
    return reports


def build_from_files(paths: list[str], out_dir: str | Path, config: SynthConfig,
                     exclude_ids: tuple[str, ...] = (), text_column: str = "text",
                     progress: bool = False) -> SynthReport:
    """Build one corpus from text files, tables or manifests."""
    if not paths:
        raise ValueError("give text files to speak, or --recipe")
    texts = choose_texts(collect_texts(paths, config, exclude_ids, text_column), config)
    if not texts:
        raise ValueError(f"no utterances of {config.min_words}-{config.max_words} words in "
                         f"{', '.join(paths)}" + (f" (split {config.split})"
                                                  if config.split else ""))
    return build_corpus(texts, out_dir, config, progress, tuple(paths))
