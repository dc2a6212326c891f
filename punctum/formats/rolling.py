"""Roll-up captions: cues that start with the previous cue's last line.

YouTube's automatic captions (as yt-dlp writes them) and broadcast roll-up captions show each
line twice: first as the new line of a cue, then again as the first line of the next, while
new words appear below it. Restored as written, the model would read every line twice
("we're going to we're going to talk about") and the two copies could get different marks.
`repeated_tokens` finds the copies, so that each word goes to the model once and every copy
is written as the word it repeats; `without_repeats` drops them where a transcript becomes
another (`--to`, `--resegment`), so that each word is written once.
"""

from __future__ import annotations

from dataclasses import replace

from punctum.formats.transcript import SUBTITLES, Cue, Transcript


def repeated_tokens(transcript: Transcript) -> dict[tuple[int, int], tuple[int, int]]:
    """{(cue, token): (cue, token) of the word it repeats} for the words of each cue's first
    line that repeat the last line of the cue before (the last one with words).

    Only for subtitles where at least half of the cues after the first do so (a file of
    roll-up captions); {} for any other file, so that a line said twice in ordinary
    subtitles stays two lines for the model.
    """
    if transcript.format not in SUBTITLES:
        return {}
    copies: dict[tuple[int, int], tuple[int, int]] = {}
    rolled = candidates = 0
    previous: tuple[int, list[int]] | None = None  # a cue and the tokens of its last line
    for c, cue in enumerate(transcript.cues):
        lines = word_lines(cue)
        if not lines:
            continue
        if previous is not None:
            candidates += 1
            p, last = previous
            if _texts(cue, lines[0]) == _texts(transcript.cues[p], last):
                rolled += 1
                for t, origin in zip(lines[0], last):
                    copies[(c, t)] = copies.get((p, origin), (p, origin))
        previous = (c, lines[-1])
    return copies if candidates >= 2 and 2 * rolled >= candidates else {}


def without_repeats(transcript: Transcript) -> Transcript:
    """The transcript without the repeated words of roll-up captions (`repeated_tokens`),
    and without the cues that held nothing else (VTT NOTE blocks keep their places)."""
    copies = repeated_tokens(transcript)
    if not copies:
        return transcript
    cues, kept_before = [], []  # kept_before[i]: cues kept among the first i
    for c, cue in enumerate(transcript.cues):
        kept_before.append(len(cues))
        tokens = tuple(token for t, token in enumerate(cue.tokens) if (c, t) not in copies)
        if any(token.text for token in tokens) or not any(t.text for t in cue.tokens):
            cues.append(replace(cue, tokens=tokens))
    kept_before.append(len(cues))
    meta = dict(transcript.meta)
    if meta.get("blocks"):
        meta["blocks"] = tuple((kept_before[i], text) for i, text in meta["blocks"])
    return replace(transcript, cues=tuple(cues), meta=meta)


def word_lines(cue: Cue) -> list[list[int]]:
    """The indexes of the tokens with words on each line of the cue (lines without words
    left out)."""
    lines: list[list[int]] = []
    current: list[int] = []
    for t, token in enumerate(cue.tokens):
        if "\n" in token.before and current:
            lines.append(current)
            current = []
        if token.text:
            current.append(t)
    return lines + [current] if current else lines


def _texts(cue: Cue, line: list[int]) -> list[str]:
    return [cue.tokens[t].text for t in line]
