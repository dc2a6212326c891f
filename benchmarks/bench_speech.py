"""Speech corpus speed: TTS synthesis throughput, gluing time, and TTS prosody facts.

    python benchmarks/bench_speech.py --synth-utterances 40 --glue-utterances 10000 --workers 2
    python benchmarks/bench_speech.py --prosody          # pauses and F0 per mark (needs librosa)

synth: --synth-utterances utterances (sentences of 6-25 words from --text, a text file with
one document per line, or from a small generated grammar) are spoken with `punctum synth`'s
builder, once per engine (espeak-ng, flite, festival voices) and once with every voice, at
the default variation (rate, pitch, 30% noise); the result is hours of audio per minute of
wall time with --workers parallel jobs.

glue: --glue-utterances utterances of 1-4 s (tone bursts with pauses and a little noise, 20
speakers, random loudness) are written as 16 kHz FLAC (timed as "generate"), then glued
(`glue_corpus`, Samsung 3.2 defaults) and concatenated (mode concat); times include reading
and writing every file.

prosody: for one voice per engine and family, three sentence pairs that differ only in a
mark (", " vs ". "; "." vs "?") are spoken; the script reports the longest pause inside the
sentence (silence below 1% of the peak) and, for "." vs "?", the F0 rise over the last
voiced 150 ms (librosa.pyin), which shows what each engine does with each mark.

Prints markdown tables for docs/BENCHMARKS.md, or JSON with --json.
"""

from __future__ import annotations

import argparse
import datetime
import json
import platform
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from common import hardware

from punctum.audio.glue import GlueConfig, glue_corpus, silent_runs
from punctum.audio.io import SAMPLE_RATE, write_audio
from punctum.audio.manifest import ManifestRecord
from punctum.audio.synth import (
    SynthConfig,
    TextUtterance,
    build_corpus,
    choose_texts,
    collect_texts,
)
from punctum.audio.voices import find_voice, synthesize

ENGINE_SETS = {"espeak-ng": ("espeak-ng",), "flite": ("flite",), "festival": ("festival",),
               "all voices": ()}
SUBJECTS = ["the team", "my friend", "our teacher", "the old captain", "everyone here"]
VERBS = ["built", "visited", "remembered", "painted", "wanted to see"]
OBJECTS = ["the house by the river", "a small boat", "the garden", "the new bridge"]
PROSODY_VOICES = ("espeak-ng:en-us+m3", "espeak-ng:en+f2", "flite:kal16", "flite:awb",
                  "flite:rms", "flite:slt", "festival:kal_diphone", "festival:ked_diphone",
                  "festival:cmu_us_slt_arctic_hts")
PAUSE_PAIRS = (("We need the boat, and they see it", "We need the boat. And they see it"),
               ("She came home, then we ate", "She came home. Then we ate"),
               ("It was late, so I left", "It was late. So I left"))
QUESTION_PAIRS = (("You are coming with us.", "You are coming with us?"),
                  ("They like the garden.", "They like the garden?"),
                  ("Is it raining.", "Is it raining?"))


def generated_texts(n: int, seed: int) -> list[TextUtterance]:
    """n sentences from a small grammar (no shared data needed)."""
    rng = np.random.default_rng(seed)
    texts = []
    for _ in range(n):
        parts = [f"{rng.choice(SUBJECTS)} {rng.choice(VERBS)} {rng.choice(OBJECTS)}"
                 for _ in range(rng.integers(1, 4))]
        text = ", and ".join(parts) + str(rng.choice([".", "?", "!"]))
        texts.append(TextUtterance("grammar", text[0].upper() + text[1:], len(text.split())))
    return texts


def bench_synth(n: int, text: str | None, workers: int, seed: int) -> list[dict]:
    """Hours of audio per wall-clock minute, per engine set."""
    config = SynthConfig(min_words=6, max_words=25, n_utterances=n, seed=seed,
                         workers=workers)
    texts = (choose_texts(collect_texts([text], config), config) if text
             else generated_texts(n, seed))
    rows = []
    for name, engines in ENGINE_SETS.items():
        with tempfile.TemporaryDirectory(prefix="bench-synth-") as folder:
            report = build_corpus(texts, folder, SynthConfig(voices=engines, seed=seed,
                                                              workers=workers))
        rows.append({"voices": name, "utterances": report.n_utterances,
                     "audio_s": round(report.seconds_of_audio, 1),
                     "wall_s": round(report.wall_seconds, 2),
                     "hours_per_minute": round(report.seconds_of_audio / 3600
                                               / (report.wall_seconds / 60), 3),
                     "real_time_factor": round(report.seconds_of_audio
                                               / report.wall_seconds, 1)})
    return rows


def fake_utterance(rng: np.random.Generator) -> np.ndarray:
    """1-4 s: silence, tone bursts separated by pauses, silence, plus faint noise."""
    pieces = [np.zeros(int(rng.uniform(0.05, 0.3) * SAMPLE_RATE))]
    amplitude = rng.uniform(0.05, 0.8)
    for _ in range(rng.integers(1, 4)):
        t = np.arange(int(rng.uniform(0.3, 1.0) * SAMPLE_RATE)) / SAMPLE_RATE
        pieces.append(amplitude * np.sin(2 * np.pi * rng.uniform(120, 300) * t))
        pieces.append(np.zeros(int(rng.uniform(0.05, 1.2) * SAMPLE_RATE)))
    signal = np.concatenate(pieces)[: 4 * SAMPLE_RATE]
    return (signal + 1e-4 * rng.standard_normal(signal.size)).astype(np.float32)


def bench_glue(n: int, workers: int, seed: int) -> dict:
    """Seconds to write n utterances, glue them and concatenate them."""
    rng = np.random.default_rng(seed)
    with tempfile.TemporaryDirectory(prefix="bench-glue-") as folder:
        start = time.perf_counter()
        records = []
        for i in range(n):
            path = Path(folder) / "in" / f"u{i:06d}.flac"
            path.parent.mkdir(exist_ok=True)
            signal = fake_utterance(rng)
            write_audio(path, signal)
            records.append(ManifestRecord(f"u{i:06d}", f"Utterance number {i}.",
                                          f"spk{i % 20}", str(path), len(signal) / SAMPLE_RATE))
        generate_s = time.perf_counter() - start
        glued = glue_corpus(records, Path(folder) / "glued", GlueConfig(seed=seed,
                                                                        workers=workers))
        concat = glue_corpus(records, Path(folder) / "concat",
                             GlueConfig(mode="concat", seed=seed, workers=workers))
    return {"utterances": n, "audio_h": round(glued.seconds_in / 3600, 2),
            "generate_s": round(generate_s, 1), "glue_s": round(glued.wall_seconds, 1),
            "glued_recordings": glued.n_recordings,
            "dropped": glued.n_too_short + glued.n_too_quiet,
            "silence_cut_h": round((glued.seconds_in - glued.seconds_out) / 3600, 3),
            "concat_s": round(concat.wall_seconds, 1)}


def inner_pause(samples: np.ndarray) -> float:
    """Longest silence (below 1% of the peak) between the first and last loud sample, s."""
    loud = np.flatnonzero(np.abs(samples) > 0.01 * np.abs(samples).max())
    runs = silent_runs(samples[loud[0]:loud[-1]], 0.01)
    return float((runs[:, 1] - runs[:, 0]).max()) / SAMPLE_RATE if len(runs) else 0.0


def final_rise(samples: np.ndarray) -> float:
    """F0 over the last 150 voiced ms divided by the median F0 before it."""
    import librosa

    f0, voiced, _ = librosa.pyin(samples, fmin=60, fmax=400, sr=SAMPLE_RATE,
                                 frame_length=1024, hop_length=160)
    f0 = f0[voiced]
    if f0.size < 30:
        return float("nan")
    return float(np.median(f0[-15:]) / np.median(f0[:-15]))


def bench_prosody() -> list[dict]:
    """Per voice: mean inner pause for ',' and '.', and mean final F0 rise for '.' and '?'."""
    rows = []
    for voice_id in PROSODY_VOICES:
        voice = find_voice(voice_id)
        comma = [inner_pause(synthesize(voice, a)) for a, _ in PAUSE_PAIRS]
        period = [inner_pause(synthesize(voice, b)) for _, b in PAUSE_PAIRS]
        statement = [final_rise(synthesize(voice, a)) for a, _ in QUESTION_PAIRS]
        question = [final_rise(synthesize(voice, b)) for _, b in QUESTION_PAIRS]
        identical = sum(np.array_equal(synthesize(voice, a), synthesize(voice, b))
                        for a, b in QUESTION_PAIRS)
        rows.append({"voice": voice_id, "pause_comma_s": round(float(np.mean(comma)), 3),
                     "pause_period_s": round(float(np.mean(period)), 3),
                     "rise_period": round(float(np.nanmean(statement)), 3),
                     "rise_question": round(float(np.nanmean(question)), 3),
                     "question_audio_identical": f"{identical}/{len(QUESTION_PAIRS)}"})
    return rows


def markdown(result: dict) -> str:
    lines = [f"hardware: {result['hardware']}; {result['date']}; python {result['python']}"]
    for key in ("synth", "prosody"):
        rows = result.get(key) or []
        if rows:
            lines += ["", "| " + " | ".join(rows[0]) + " |", "|" + "---|" * len(rows[0])]
            lines += ["| " + " | ".join(str(v) for v in row.values()) + " |" for row in rows]
    if result.get("glue"):
        glue = result["glue"]
        lines += ["", "| " + " | ".join(glue) + " |", "|" + "---|" * len(glue),
                  "| " + " | ".join(str(v) for v in glue.values()) + " |"]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmarks selected by the arguments; print markdown or JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--synth-utterances", type=int, default=40,
                        help="utterances per engine set (0: skip)")
    parser.add_argument("--text", help="text file to speak (default: a generated grammar)")
    parser.add_argument("--glue-utterances", type=int, default=10_000,
                        help="utterances to glue (0: skip)")
    parser.add_argument("--prosody", action="store_true", help="measure pauses and F0 per mark")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    result = {"hardware": hardware(), "date": datetime.date.today().isoformat(),
              "python": platform.python_version(), "workers": args.workers}
    if args.synth_utterances:
        result["synth"] = bench_synth(args.synth_utterances, args.text, args.workers, args.seed)
    if args.glue_utterances:
        result["glue"] = bench_glue(args.glue_utterances, args.workers, args.seed)
    if args.prosody:
        result["prosody"] = bench_prosody()
    print(json.dumps(result, indent=2) if args.json else markdown(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
