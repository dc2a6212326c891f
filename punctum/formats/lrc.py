"""LRC lyrics and timed transcripts (.lrc), read and written for `formats`.

    punctum restore -i song.lrc -o song.restored.lrc
    punctum restore -i song.lrc --to srt

A line is time tags, then its text: ``[00:12.34]so what do you think`` (minutes, seconds and
hundredths; several tags where a line is sung more than once). Lines of ID tags (``[ti:...]``,
``[ar:...]``, ``[offset:+250]``) and lines without a time tag stay as written. Each time tag is
a cue, in time order (the file's among equal times), lasting until the next starts (the last
until the "[length:]" tag's time, else until it starts: LRC gives no end); a line sung at
several times is read at each (its text written back once, as restored at its first tag), and a
timed line without text only ends the one before. Only the texts are restored and written back
after their tags. Enhanced LRC's word tags (``<00:12.80>``) are markup: they stay where they
stand and never reach the model. Times are as written: ``[offset:]`` is not applied.
"""

from __future__ import annotations

import re
from dataclasses import replace

from punctum.formats.transcript import MAX_SECONDS, Cue, Token, Transcript, split_tokens

# [mm:ss], [mm:ss.xx] or [mm:ss:xx] (minutes of any width); the run of them opening a line
_TAG = r"\[(\d{1,9}):(\d{1,2})(?:[.:](\d{1,3}))?\]"
_TIME_TAG = re.compile(_TAG)
_LENGTH = re.compile(r"^\s*\[length:\s*(\d{1,9}):(\d{1,2})(?:\.(\d{1,3}))?\s*\]\s*$",
                     re.IGNORECASE | re.ASCII)
_POINT_TIME = re.compile(r"^\s*\[\d{1,9}:\d{1,2}\.\d{1,3}\]")
_TAGS = re.compile(rf"^\s*(?:{_TAG}\s*)+")
# an ID tag line: [ti:Title], [ar:Artist], [offset:+250], [length: 03:25], [#:comment]
_ID_TAG = re.compile(r"^\s*\[[A-Za-z#][A-Za-z0-9_ #-]*:[^\]]*\]\s*$")
# enhanced LRC's word times inside a line's text: <00:12.80>
MARKUP = re.compile(r"<\d{1,9}:\d{1,2}(?:[.:]\d{1,3})?>")


def looks_like_lrc(text: str, lines: int = 20) -> bool:
    """Whether a text starts as LRC does: its first lines that are not blank are ID tags or
    timed lines, one of them timed at least, and an ID tag or a time with hundredths after a
    point ("[00:12.34]") among them: "[00:01:23]" alone reads as a transcript's hours."""
    head = [line for line in text.lstrip("\ufeff").split("\n", lines)[:lines] if line.strip()]
    timed = [bool(_TAGS.match(line)) for line in head]
    return any(timed) and all(t or _ID_TAG.match(line) for t, line in zip(timed, head)) and (
        not all(timed) or any(_POINT_TIME.match(line) for line in head))


def opens_lrc(line: str) -> bool:
    """Whether a first line may open LRC: an ID tag ("[ti:Title]") or a timed line."""
    return bool(_ID_TAG.match(line) or _TAGS.match(line))


def read_lrc(text: str, name: str, meta: dict) -> Transcript:
    """The timed lines as cues in time order; meta keeps every line."""
    lines = text.split("\n")
    cues = []
    for index, line in enumerate(lines):
        tags = _TAGS.match(line)
        if tags is None:
            continue
        times = [_seconds(found, f"{name}:{index + 1}")
                 for found in _TIME_TAG.finditer(tags.group())]
        prefix, text_of_line = tags.group(), line[len(tags.group()):]
        tokens = split_tokens(text_of_line, MARKUP) if text_of_line.strip() else (
            Token("", before=text_of_line),)  # (an empty line ends the one before: no cue)
        cues += [Cue(time, None, tokens, extra={"line": index, "prefix": prefix, "copy": k > 0})
                 for k, time in enumerate(times)]  # (a line sung twice: a cue at each time)
    ordered = sorted(cues, key=lambda cue: cue.start)  # (stable: file order among equals)
    last = _length(lines)  # the song's length ends its last line, where the file gives it
    ended = [replace(cue, end=max(cue.start, ordered[k + 1].start)) if k + 1 < len(ordered)
             else replace(cue, end=max(cue.start, last or 0.0))
             for k, cue in enumerate(ordered)]
    return Transcript("lrc", tuple(ended), {**meta, "lines": tuple(lines)})


def _length(lines: list[str]) -> float | None:
    """Seconds of the "[length: mm:ss]" ID tag, if a line holds one that reads so."""
    for line in lines:
        found = _LENGTH.match(line)
        if found:
            minutes, seconds, fraction = found.groups()
            return int(minutes) * 60 + int(seconds) + (float(f"0.{fraction}") if fraction
                                                       else 0.0)
    return None


def _seconds(found: re.Match, where: str) -> float:
    minutes, seconds, fraction = found.groups()
    if int(seconds) > 59:
        raise ValueError(f"{where}: bad time tag {found.group()!r} (expected [mm:ss.xx])")
    total = int(minutes) * 60 + int(seconds)
    if total > MAX_SECONDS:
        raise ValueError(f"{where}: a time beyond {MAX_SECONDS:.0e} seconds")
    return round(total + (int(fraction) / 10 ** len(fraction) if fraction else 0.0), 3)


def dump_lrc(transcript: Transcript) -> str:
    """The file as read, each timed line's text replaced by its cue's."""
    if "lines" not in transcript.meta:
        raise ValueError("an LRC file is written only from one read as such (convert others "
                         "to srt or vtt)")
    lines = list(transcript.meta["lines"])
    for cue in transcript.cues:
        if not cue.extra.get("copy"):
            lines[cue.extra["line"]] = cue.extra["prefix"] + cue.text
    return "\n".join(lines)
