"""Do pauses help? A PauseAware model against the same model fine-tuned on the same text
without pauses, on speech whose word timings are measured, not assumed.

    python benchmarks/bench_pauses.py \\
        --pause-model runs/en-tiny-pauses/artifact --text-model runs/en-tiny-pauses-text/artifact \\
        --timed corpora/pauses/test.jsonl.gz --iwslt ../shared/data/iwslt2011 \\
        --lj ../shared/data/speech/ljspeech_LJ001 --threads 2

Test sets (all words of a set go to the models as one transcript):
- timed: `punctum timings` test split (held-out texts, held-out espeak-ng accent); pauses
  unknown where two utterances meet.
- iwslt: IWSLT2011 test2011 spoken by a held-out espeak-ng voice (en-gb-scotland+m5), in
  pieces of whole sentences; scored on Che's tokens like bench_iwslt.py.
- lj: real speech, LJSpeech chapter LJ001 (one reader, 186 clips); word timings from
  pocketsphinx forced alignment of the reference words; pauses unknown between clips and
  in clips that pocketsphinx cannot align (words outside its dictionary).
Systems: the text model; the pause model given no pauses; the pause model given pauses.
Prints markdown rows (punctuation P/R/F1 overall and per mark, x100) and paired-bootstrap
p-values of "pauses" against the other two.
"""

from __future__ import annotations

import argparse
import csv
import datetime
import json
import re
from pathlib import Path

import numpy as np
from common import hardware

from punctum.audio.timed_text import read_timed
from punctum.corpora import read_che
from punctum.evaluation import ScoredFile, compare, join_texts, load_scored, score
from punctum.merging import merge_labels
from punctum.runtime import Punctuator, RestoreOptions
from punctum.text import get_inventory, render, sentence_spans

HELD_OUT_VOICE = "en-gb-scotland+m5"
SYSTEMS = ("text model", "pause model, no pauses", "pause model, pauses")


def timed_set(path: Path) -> tuple[ScoredFile, np.ndarray]:
    """Reference and (n_words,) pauses of a timed test file."""
    texts, pauses = [], []
    for text, values in read_timed(path):
        texts.append(text)
        pauses.append(values)  # each record ends in NaN: unknown between utterances
    return join_texts(texts), np.concatenate(pauses)


def iwslt_set(folder: Path, max_words: int = 60) -> tuple[ScoredFile, np.ndarray]:
    """test2011 (Che) and the pauses of its words spoken by a held-out voice."""
    from punctum.audio.timings import speak_with_timings

    reference = load_scored(folder / "test2011", "che")
    labelled = read_che(folder / "test2011").labelled()
    pauses = np.full(len(labelled), np.nan)
    start = 0
    for piece in _pieces(sentence_spans(labelled), max_words):
        part = labelled.slice(piece.start, piece.stop)
        text = render(part, sentence_case=True)
        if len(text.split()) == len(part):
            pauses[piece.start:piece.stop] = speak_with_timings(text, HELD_OUT_VOICE).pauses_after
        start = piece.stop
    assert start == len(labelled)
    return reference, pauses


def _pieces(sentences: list[range], max_words: int) -> list[range]:
    pieces, begin = [], 0
    for sentence in sentences:
        if sentence.stop - begin > max_words and sentence.start > begin:
            pieces.append(range(begin, sentence.start))
            begin = sentence.start
    if sentences:
        pieces.append(range(begin, sentences[-1].stop))
    return pieces


def lj_set(folder: Path) -> tuple[ScoredFile, np.ndarray, dict]:
    """LJ001 references and pocketsphinx-aligned pauses (NaN where alignment failed)."""
    from pocketsphinx import Decoder

    from punctum.audio.io import load_audio

    with open(folder / "transcripts.tsv", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t"))
    decoder = Decoder(samprate=16000, loglevel="FATAL")
    texts, pauses, failed = [], [], 0
    for row in rows:
        text = row["normalized_text"]
        n_words = len(join_texts([text]).labelled)
        audio = load_audio(folder / "flac" / f"{row['utt_id']}.flac")
        values = _aligned_pauses(decoder, text, audio, n_words)
        failed += values is None
        texts.append(text)
        pauses.append(np.full(n_words, np.nan) if values is None else values)
    return join_texts(texts), np.concatenate(pauses), {"clips": len(rows), "unaligned": failed}


def _aligned_pauses(decoder, text: str, audio: np.ndarray, n_words: int) -> np.ndarray | None:
    words = join_texts([text]).labelled.words
    spoken = [re.sub(r"[^a-z']", "", w.lower()) for w in words]
    if len(words) != n_words or not all(spoken):
        return None
    try:
        decoder.set_align_text(" ".join(spoken))
    except RuntimeError:  # a word outside the dictionary
        return None
    decoder.start_utt()
    decoder.process_raw((np.clip(audio, -1, 1) * 32767).astype(np.int16).tobytes(),
                        full_utt=True)
    decoder.end_utt()
    segments = [s for s in decoder.seg() if not s.word.startswith(("<", "["))]
    if len(segments) != n_words:
        return None
    out = np.full(n_words, np.nan)
    for k in range(n_words - 1):
        out[k] = max(segments[k + 1].start_frame - segments[k].end_frame - 1, 0) / 100
    return out


def predict(punctuator: Punctuator, reference: ScoredFile, pauses) -> ScoredFile:
    words = reference.labelled.words
    prediction = punctuator.predict_batch([words], pauses=None if pauses is None else [pauses])[0]
    labelled = merge_labels(reference.labelled, prediction, RestoreOptions())
    return ScoredFile(labelled, is_final=reference.is_final, has_case=True)


def evaluate_set(name: str, reference: ScoredFile, pauses: np.ndarray, text_model, pause_model):
    inventory = get_inventory("en")
    hyps = [predict(text_model, reference, None), predict(pause_model, reference, None),
            predict(pause_model, reference, pauses)]
    scores = [score(reference, hyp, inventory).punct for hyp in hyps]
    p_values = [compare(reference, other, hyps[2], inventory).p_value for other in hyps[:2]]
    known = float(np.mean(~np.isnan(pauses)))
    return {"set": name, "words": len(reference.labelled), "timed_share": known,
            "scores": [s.to_dict() for s in scores], "p_vs_text": p_values[0],
            "p_vs_no_pauses": p_values[1]}


def markdown(result: dict) -> str:
    lines = []
    for system, scores in zip(SYSTEMS, result["scores"]):
        per = {k: v["f1"] * 100 for k, v in scores["per_label"].items()}
        overall = scores["overall"]
        lines.append(f"| {result['set']} | {system} | {overall['precision'] * 100:.1f} | "
                     f"{overall['recall'] * 100:.1f} | {overall['f1'] * 100:.1f} | "
                     + " | ".join(f"{per.get(k, float('nan')):.1f}"
                                  for k in ("COMMA", "PERIOD", "QUESTION")) + " |")
    lines.append(f"| {result['set']} | p (pauses vs text model; vs no pauses) | "
                 f"{result['p_vs_text']:.4f} | {result['p_vs_no_pauses']:.4f} | | | | |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pause-model", required=True)
    parser.add_argument("--text-model", required=True)
    parser.add_argument("--timed", type=Path)
    parser.add_argument("--iwslt", type=Path)
    parser.add_argument("--lj", type=Path)
    parser.add_argument("--threads", type=int, default=0)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    pause_model = Punctuator.load(args.pause_model, threads=args.threads)
    text_model = Punctuator.load(args.text_model, threads=args.threads)
    if not pause_model.pause_aware:
        parser.error(f"{args.pause_model} is not a pause-aware model")
    results = []
    if args.timed:
        results.append(evaluate_set("synthetic (held-out voices)", *timed_set(args.timed),
                                    text_model, pause_model))
    if args.iwslt:
        results.append(evaluate_set("IWSLT test2011, synthetic voice", *iwslt_set(args.iwslt),
                                    text_model, pause_model))
    if args.lj:
        reference, pauses, facts = lj_set(args.lj)
        result = evaluate_set("LJ001 real speech", reference, pauses, text_model, pause_model)
        results.append({**result, **facts})
    if args.json:
        print(json.dumps(results, indent=2))
        return
    print(f"<!-- {datetime.date.today()} | {hardware()} -->")
    print("| test set | system | P | R | F1 | COMMA F1 | PERIOD F1 | QUESTION F1 |")
    print("|---|---|---|---|---|---|---|---|")
    for result in results:
        print(markdown(result))
    for result in results:
        extra = (f"; {result['unaligned']} of {result['clips']} clips unaligned"
                 if "clips" in result else "")
        print(f"\n{result['set']}: {result['words']} words, pauses known after "
              f"{result['timed_share'] * 100:.0f}% of them{extra}")


if __name__ == "__main__":
    main()
