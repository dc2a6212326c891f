"""Roll-up captions: accuracy with each repeated line read once (`formats.rolling`) against
reading the file as written.

    python benchmarks/bench_rollup.py --model en-tiny --threads 2

IWSLT2011 test2011's words (Che's, for punctuation; the cased XML source's, for casing) are
written as YouTube-style automatic captions: lines of --line-words words, each cue showing
the line before and a new one, with a 10 ms cue between them that shows the line alone (the
layout yt-dlp gives YouTube's captions). The file is restored with `restore_transcript`
twice: as punctum does it (each repeated line to the model once, every copy written like
the line it repeats) and with the detection turned off (the model reads every line three
times, as a tool without it would). Each line's first appearance is then scored against the
reference, as in bench_iwslt.py ("!" as PERIOD; casing: LOWER negative), and the share of
lines whose copies are written differently from their first appearance is counted.
"""

from __future__ import annotations

import argparse
import datetime
from dataclasses import replace
from pathlib import Path
from unittest import mock

import numpy as np
from bench_iwslt import XML_NAME
from common import SHARED_DATA, existing_data, hardware

from punctum import formats
from punctum.corpora import CHE_LABEL_MAP
from punctum.evaluation import ScoredFile, load_scored, score
from punctum.formats import restoring
from punctum.runtime import Punctuator
from punctum.text import get_inventory, parse


def _vtt_time(seconds: float) -> str:
    ms = round(seconds * 1000)
    return f"{ms // 3600000:02d}:{ms // 60000 % 60:02d}:{ms // 1000 % 60:02d}.{ms % 1000:03d}"


def youtube_vtt(words: tuple[str, ...], line_words: int) -> str:
    """The words as rolling automatic captions: cue k shows line k-1 and line k."""
    lines = [" ".join(words[i:i + line_words]) for i in range(0, len(words), line_words)]
    blocks, start = ["WEBVTT\nKind: captions\nLanguage: en\n"], 0.0
    for k, line in enumerate(lines):
        end = start + 2.5
        previous = lines[k - 1] if k else " "
        blocks.append(f"{_vtt_time(start)} --> {_vtt_time(end)}\n{previous}\n{line}\n")
        blocks.append(f"{_vtt_time(end)} --> {_vtt_time(end + 0.01)}\n{line}\n \n")
        start = end + 0.01
    return "\n".join(blocks)


def first_appearances(transcript: formats.Transcript) -> tuple[str, list[list[str]]]:
    """(the text of each line where it first appears, joined; every appearance of each line,
    in order). A line first appears last in a two-line cue."""
    shown: list[list[str]] = []
    for cue in transcript.cues:
        if cue.end - cue.start < 0.02:  # the 10 ms cue: the line alone
            shown[-1].append(cue.text.strip().split("\n")[0])
            continue
        rows = [row.strip() for row in cue.text.split("\n")]
        if len(shown):
            shown[-1].append(rows[0])
        shown.append([rows[-1]])
    return " ".join(s[0] for s in shown), shown


def restored_lines(punctuator: Punctuator, words: tuple[str, ...], line_words: int,
                   rolling: bool) -> tuple[str, float]:
    """(the restored text, each line once; the share of lines whose copies differ)."""
    transcript = formats.loads(youtube_vtt(words, line_words), "vtt")
    if rolling:
        result = formats.restore_transcript(transcript, punctuator)
    else:
        with mock.patch.object(restoring, "repeated_tokens", lambda transcript: {}):
            result = formats.restore_transcript(transcript, punctuator)
    text, shown = first_appearances(result)
    differing = sum(len(set(s)) > 1 for s in shown) / len(shown)
    return text, differing


def scored(text: str, reference, has_case: bool) -> tuple[ScoredFile, ScoredFile]:
    hyp = parse(text, "en")
    hyp = replace(hyp, post=tuple(CHE_LABEL_MAP.get(label, label) for label in hyp.post))
    return (ScoredFile(reference, np.zeros(len(reference), dtype=bool), has_case=has_case),
            ScoredFile(hyp, np.zeros(len(hyp), dtype=bool), has_case=True))


def measure(punctuator: Punctuator, data: Path, line_words: int) -> dict:
    inventory = get_inventory("en")
    che = load_scored(data / "test2011", "che").labelled
    xml = load_scored(data / XML_NAME, "xml").labelled
    rows = {}
    for rolling in (True, False):
        text, differing = restored_lines(punctuator, che.words, line_words, rolling)
        punct = score(*scored(text, che, has_case=False), inventory).punct.overall.f1
        case_text, _ = restored_lines(punctuator, xml.words, line_words, rolling)
        case = score(*scored(case_text, xml, has_case=True), inventory).case.overall.f1
        rows["each line once" if rolling else "as written"] = (punct, case, differing)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=None)
    parser.add_argument("--data", type=Path, default=SHARED_DATA / "iwslt2011")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--line-words", type=int, default=7)
    args = parser.parse_args()
    args.data = existing_data(args.data, "test2011", XML_NAME)
    punctuator = Punctuator.load(args.model, threads=args.threads)
    rows = measure(punctuator, args.data, args.line_words)
    print(f"| roll-up captions ({punctuator.artifact.name}, {args.line_words} words a line) | "
          f"punctuation F1 | casing F1 | lines whose copies differ |")
    print("|---|---|---|---|")
    for name, (punct, case, differing) in rows.items():
        print(f"| {name} | {punct * 100:.1f} | {case * 100:.1f} | {differing * 100:.1f}% |")
    print(f"\n{hardware()}, {datetime.date.today().isoformat()}")


if __name__ == "__main__":
    main()
