"""Speed and peak memory of `punctum restore` on transcript files of each kind.

    python benchmarks/bench_formats.py --words 200000 --threads 2

Generates files of about --words words (a sentence written for this script, repeated, in short
utterances) as plain text (restored a line a text, and with --paragraphs: the file one text),
a CSV table, SRT, Whisper JSON with word timings, a Vosk result
list, an ASS script, sherpa-onnx streaming results (JSON lines), a TTML document, an ELAN
document of two speakers' tiers, and a Deepgram, an AssemblyAI (both diarised, with utterances
that copy the words) and a Google Speech-to-Text response, restores each with `punctum restore
-i FILE -o OUT` in a child process, and prints wall time, words per second and the child's
peak RSS as a markdown table.
Plain text and tables are restored as streams; subtitle and JSON files are read whole.
"""

from __future__ import annotations

import argparse
import csv
import datetime
import io
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import hardware

SENTENCE = ("so what do you think about the new plan i think it is great and we should start "
            "next week if the team agrees").split()

# Runs its arguments as a command and prints that command's peak RSS in KB.
_PEAK_OF_CHILD = ("import resource, subprocess, sys; subprocess.run(sys.argv[1:], check=True); "
                  "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")


def utterances(n_words: int, size: int) -> list[list[str]]:
    """About n_words words in utterances of `size` words."""
    words = (SENTENCE * (n_words // len(SENTENCE) + 1))[:n_words]
    return [words[i:i + size] for i in range(0, len(words), size)]


def write_text(path: Path, parts: list[list[str]]) -> None:
    path.write_text("".join(" ".join(p) + "\n" for p in parts), encoding="utf-8")


def write_csv(path: Path, parts: list[list[str]]) -> None:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["call_id", "speaker", "start", "text"])
    for i, part in enumerate(parts):
        writer.writerow([i // 20, "agent" if i % 2 else "customer", f"{i * 3.0:.2f}",
                         " ".join(part)])
    path.write_text(buffer.getvalue(), encoding="utf-8")


def _srt_time(seconds: float) -> str:
    ms = round(seconds * 1000)
    return f"{ms // 3600000:02d}:{ms // 60000 % 60:02d}:{ms // 1000 % 60:02d},{ms % 1000:03d}"


def write_srt(path: Path, parts: list[list[str]]) -> None:
    blocks = [f"{i + 1}\n{_srt_time(i * 3.0)} --> {_srt_time(i * 3.0 + 2.9)}\n"
              f"{' '.join(p[:len(p) // 2])}\n{' '.join(p[len(p) // 2:])}\n"
              for i, p in enumerate(parts)]
    path.write_text("\n".join(blocks), encoding="utf-8")


def _timed_words(part: list[str], start: float) -> list[tuple[str, float, float]]:
    return [(w, round(start + 0.25 * k, 2), round(start + 0.25 * k + 0.2, 2))
            for k, w in enumerate(part)]


def write_whisper(path: Path, parts: list[list[str]]) -> None:
    segments = []
    for i, part in enumerate(parts):
        words = [{"word": " " + w, "start": s, "end": e, "probability": 0.9}
                 for w, s, e in _timed_words(part, i * 4.0)]
        segments.append({"id": i, "start": i * 4.0, "end": words[-1]["end"],
                         "text": "".join(w["word"] for w in words), "words": words})
    root = {"text": "".join(s["text"] for s in segments), "segments": segments,
            "language": "en"}
    path.write_text(json.dumps(root, indent=2) + "\n", encoding="utf-8")


def write_vosk(path: Path, parts: list[list[str]]) -> None:
    results = [{"result": [{"conf": 1.0, "end": e, "start": s, "word": w}
                           for w, s, e in _timed_words(part, i * 4.0)],
                "text": " ".join(part)} for i, part in enumerate(parts)]
    path.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")


def _ass_time(seconds: float) -> str:
    cs = round(seconds * 100)
    return f"{cs // 360000}:{cs // 6000 % 60:02d}:{cs // 100 % 60:02d}.{cs % 100:02d}"


def write_ass(path: Path, parts: list[list[str]]) -> None:
    head = ("[Script Info]\nScriptType: v4.00+\n\n[Events]\nFormat: Layer, Start, End, Style, "
            "Name, MarginL, MarginR, MarginV, Effect, Text\n")
    lines = [f"Dialogue: 0,{_ass_time(i * 3.0)},{_ass_time(i * 3.0 + 2.9)},Default,"
             f"{'Ann' if i % 4 < 2 else 'Bob'},0,0,0,,{' '.join(p[:len(p) // 2])}\\N"
             f"{' '.join(p[len(p) // 2:])}\n" for i, p in enumerate(parts)]
    path.write_text(head + "".join(lines), encoding="utf-8")


def write_sherpa(path: Path, parts: list[list[str]]) -> None:
    records = [{"text": " ".join(part), "tokens": [" " + w for w in part],
                "timestamps": [s for _, s, _ in _timed_words(part, 0.0)], "segment": i,
                "start_time": i * 4.0} for i, part in enumerate(parts)]
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")


def write_ttml(path: Path, parts: list[list[str]]) -> None:
    paragraphs = "".join(
        f'      <p begin="{i * 3.0:.2f}s" end="{i * 3.0 + 2.9:.2f}s">{" ".join(p[:len(p) // 2])}'
        f'<br/>{" ".join(p[len(p) // 2:])}</p>\n' for i, p in enumerate(parts))
    path.write_text('<?xml version="1.0" encoding="UTF-8"?>\n<tt xmlns="http://www.w3.org/ns/'
                    'ttml">\n  <body>\n    <div>\n' + paragraphs + "    </div>\n  </body>\n"
                    "</tt>\n", encoding="utf-8")


def write_eaf(path: Path, parts: list[list[str]]) -> None:
    slots = "".join(f'<TIME_SLOT TIME_SLOT_ID="ts{2 * i}" TIME_VALUE="{i * 3000}"/>'
                    f'<TIME_SLOT TIME_SLOT_ID="ts{2 * i + 1}" TIME_VALUE="{i * 3000 + 2900}"/>\n'
                    for i in range(len(parts)))
    tiers = "".join(
        f'<TIER LINGUISTIC_TYPE_REF="lt" TIER_ID="{speaker}">\n' + "".join(
            f'<ANNOTATION><ALIGNABLE_ANNOTATION ANNOTATION_ID="a{i}" TIME_SLOT_REF1="ts{2 * i}" '
            f'TIME_SLOT_REF2="ts{2 * i + 1}"><ANNOTATION_VALUE>{" ".join(p)}</ANNOTATION_VALUE>'
            f"</ALIGNABLE_ANNOTATION></ANNOTATION>\n"
            for i, p in enumerate(parts) if i % 2 == turn) + "</TIER>\n"
        for turn, speaker in enumerate(("agent", "customer")))
    path.write_text('<?xml version="1.0" encoding="UTF-8"?>\n<ANNOTATION_DOCUMENT FORMAT="3.0">'
                    f"\n<TIME_ORDER>\n{slots}</TIME_ORDER>\n{tiers}"
                    '<LINGUISTIC_TYPE LINGUISTIC_TYPE_ID="lt" TIME_ALIGNABLE="true"/>\n'
                    "</ANNOTATION_DOCUMENT>\n", encoding="utf-8")


def _speaker_words(parts: list[list[str]], scale: float = 1.0) -> list[list[tuple]]:
    """Each part's (word, start, end, speaker) in `scale` units of seconds, two speakers taking
    turns by two utterances."""
    return [[(w, round(s * scale, 3), round(e * scale, 3), i // 2 % 2)
             for w, s, e in _timed_words(part, i * 4.0)] for i, part in enumerate(parts)]


def write_deepgram(path: Path, parts: list[list[str]]) -> None:
    said = [[{"word": w, "start": s, "end": e, "confidence": 0.99, "speaker": speaker}
             for w, s, e, speaker in part] for part in _speaker_words(parts)]
    words = [w for part in said for w in part]
    utterances = [{"start": p[0]["start"], "end": p[-1]["end"], "confidence": 0.98,
                   "channel": 0, "transcript": " ".join(w["word"] for w in p), "words": p,
                   "speaker": p[0]["speaker"], "id": str(i)} for i, p in enumerate(said)]
    root = {"metadata": {"request_id": "0", "channels": 1}, "results": {
        "channels": [{"alternatives": [{"transcript": " ".join(w["word"] for w in words),
                                        "confidence": 0.98, "words": words}]}],
        "utterances": utterances}}
    path.write_text(json.dumps(root) + "\n", encoding="utf-8")


def write_assemblyai(path: Path, parts: list[list[str]]) -> None:
    said = [[{"text": w, "start": int(s), "end": int(e), "confidence": 0.99,
              "speaker": "AB"[speaker]} for w, s, e, speaker in part]
            for part in _speaker_words(parts, 1000)]
    words = [w for part in said for w in part]
    utterances = [{"confidence": 0.98, "end": p[-1]["end"], "speaker": p[0]["speaker"],
                   "start": p[0]["start"], "text": " ".join(w["text"] for w in p), "words": p}
                  for p in said]
    root = {"id": "0", "status": "completed", "audio_url": "https://example.com/a.mp3",
            "text": " ".join(w["text"] for w in words), "words": words,
            "utterances": utterances, "punctuate": False, "format_text": False}
    path.write_text(json.dumps(root, indent=2) + "\n", encoding="utf-8")


def write_google(path: Path, parts: list[list[str]]) -> None:
    results = [{"alternatives": [{"transcript": (" " if i else "") + " ".join(part),
                                  "confidence": 0.93, "words": [
                                      {"startTime": f"{s:.3f}s", "endTime": f"{e:.3f}s",
                                       "word": w} for w, s, e in _timed_words(part, i * 4.0)]}],
                "resultEndTime": f"{i * 4.0 + 3.5:.3f}s", "languageCode": "en-us"}
               for i, part in enumerate(parts)]
    path.write_text(json.dumps({"results": results, "totalBilledTime": "1s"}, indent=2) + "\n",
                    encoding="utf-8")


KINDS = {"text": (".txt", 12, write_text), "csv": (".csv", 12, write_csv),
         "srt": (".srt", 8, write_srt), "whisper": (".json", 12, write_whisper),
         "vosk": (".json", 12, write_vosk), "ass": (".ass", 8, write_ass),
         "sherpa": (".jsonl", 12, write_sherpa), "ttml": (".ttml", 8, write_ttml),
         "eaf": (".eaf", 12, write_eaf), "deepgram": (".json", 12, write_deepgram),
         "assemblyai": (".json", 12, write_assemblyai), "google": (".json", 12, write_google),
         "text-paragraphs": (".txt", 12, write_text)}
FLAGS = {"text-paragraphs": ["--paragraphs"]}  # `punctum restore` flags of a kind


def run(kind: str, n_words: int, threads: int, folder: Path) -> dict:
    suffix, size, write = KINDS[kind]
    source = folder / f"{kind}{suffix}"
    write(source, utterances(n_words, size))
    command = [sys.executable, "-m", "punctum", "restore", "-i", str(source), "-o",
               str(folder / f"out-{kind}{suffix}"), "--threads", str(threads),
               *FLAGS.get(kind, [])]
    start = time.perf_counter()
    peak_kb = int(subprocess.run([sys.executable, "-c", _PEAK_OF_CHILD, *command],
                                 check=True, capture_output=True, text=True).stdout)
    seconds = time.perf_counter() - start
    return {"kind": kind, "words": n_words, "megabytes": source.stat().st_size / 1e6,
            "seconds": seconds, "words_per_s": n_words / seconds, "peak_rss_mb": peak_kb / 1024}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--words", type=int, default=200_000)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--kinds", nargs="+", default=list(KINDS), choices=list(KINDS))
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        results = [run(kind, args.words, args.threads, Path(tmp)) for kind in args.kinds]
    if args.json:
        print(json.dumps({"results": results, "hardware": hardware(),
                          "date": datetime.date.today().isoformat()}, indent=2))
        return
    print("| file | words | MB | seconds (model load included) | words/s | peak RSS MB |")
    print("|---|---|---|---|---|---|")
    for r in results:
        print(f"| {r['kind']} | {r['words']:,} | {r['megabytes']:.1f} | {r['seconds']:.1f} | "
              f"{r['words_per_s']:,.0f} | {r['peak_rss_mb']:.0f} |")
    print(f"\n{hardware()}, {datetime.date.today().isoformat()}")


if __name__ == "__main__":
    main()
