"""Advanced SubStation Alpha (.ass) and SubStation Alpha (.ssa) scripts, read and written
for `formats`.

    punctum restore -i episode.ass -o episode.restored.ass
    punctum restore -i episode.ass --to srt -o episode.srt

A script is sections of lines ("[Script Info]", "[V4+ Styles]", "[Events]", "[Fonts]"); of
them, only the text of each "Dialogue:" line of [Events] is restored: its last field, named
Text by the section's "Format:" line (which it may follow with commas of its own). Every
other line and field stays as written, byte for byte; "Comment:" lines are not restored.

Dialogue lines are cues in the order of their start times (as they are shown; the file's
order among equal times), so that the model reads them as they are said whatever order the
editor saved them in; each is written back on its own line. Override blocks ("{\\i1}",
"{\\an8}", comments in braces) and the escapes "\\N" (a line break), "\\n" (a soft one) and
"\\h" (a no-break space) are markup: they stay where they stand and never reach the model;
a word cut by a block ("{\\k20}hel{\\k15}lo") stays one word. A line that draws a shape
("{\\p1}m 0 0 l 100 0") is kept as written. Where the Name (actor) field changes from one
named speaker to another, the sentence ends; converted to SRT, WebVTT or text, names become
labels or voices, as whisper.cpp's speakers do.
"""

from __future__ import annotations

import re
from dataclasses import replace

from punctum.formats.transcript import MAX_SECONDS, Cue, Token, Transcript, shown, split_tokens

# "[Events]": a section header
_SECTION = re.compile(r"^\s*\[([^\]\n]+)\]\s*$")
# the fields of an event line when the section names none (ASS's; SSA's first is "Marked")
_DEFAULT_FIELDS = ("layer", "start", "end", "style", "name", "marginl", "marginr", "marginv",
                   "effect", "text")
# H:MM:SS.cc (hours of any width; the fraction in hundredths, as libass reads it: .5 is 0.05)
_TIME = re.compile(r"^\s*(\d{1,12}):(\d{1,2}):(\d{1,2})(?:[.:](\d{1,3}))?\s*$", re.ASCII)
# an override block ("{\i1}"; one never closed runs to the end of the text, kept as written)
_BLOCK = re.compile(r"\{[^{}]*(?:\}|$)")
# markup in a text field: override blocks, the \N, \n and \h escapes, and the HTML-like tags
# converters leave behind ("<i>", "</font>")
MARKUP = re.compile(rf"{_BLOCK.pattern}|\\[Nnh]|</?(?:[ibus]|font)(?:\s[^<>\n]*)?>",
                    re.IGNORECASE)
# the first section of a script: [Script Info], or a fragment's styles or events
_FIRST_SECTION = re.compile(r"\[(?:script info|v4\+? styles|events)\]\s*$", re.IGNORECASE)
# a drawing: an override block that turns drawing mode on (\p1, \p2, ...; \pos is not one)
_DRAWING = re.compile(r"\{[^{}]*\\p[1-9]")


def is_ass(text: str) -> bool:
    """Whether a file's text starts as an ASS or SSA script does: "[Script Info]" (or a
    fragment's "[V4+ Styles]" or "[Events]") after any ";" comment lines."""
    for line in text.lstrip("\ufeff").split("\n", 50)[:50]:
        if line.strip() and not line.lstrip().startswith(";"):
            return bool(_FIRST_SECTION.match(line.strip()))
    return False


def escapes(gap: str) -> str:
    """The escapes ("N", "n", "h") written in markup between two tokens, outside override
    blocks: "N" a line break, "n" and "h" spaces."""
    return "".join(found[1] for found in re.findall(r"\\[Nnh]", _BLOCK.sub("", gap)))


def read_ass(text: str, name: str, meta: dict) -> Transcript:
    """The Dialogue lines of a script as cues in time order; meta keeps every line."""
    lines = text.split("\n")
    if text.strip() and not any(_SECTION.match(line) for line in lines):
        raise ValueError(f"{name}: not an ASS or SSA script (no section such as [Script Info] "
                         f"or [Events])")
    cues: list[Cue] = []
    section, fields = "", _DEFAULT_FIELDS
    seen: dict[tuple, int] = {}  # (start, end, words) -> the line a stacked copy repeats
    for index, line in enumerate(lines):
        header = _SECTION.match(line)
        if header:
            section, fields = header.group(1).strip().lower(), _DEFAULT_FIELDS
            continue
        key, colon, value = line.partition(":")
        if section != "events" or not colon:
            continue
        kind = key.strip().lower()
        if kind == "format":
            fields = _fields(value, f"{name}:{index + 1}")
        elif kind == "dialogue":
            cue = _cue(line, len(key) + 1, fields, index, f"{name}:{index + 1}")
            cues.append(_stacked(cue, seen))
    ordered = sorted(cues, key=lambda cue: cue.start)  # (stable: file order among equals)
    return Transcript("ass", tuple(ordered), {**meta, "lines": tuple(lines)})


def _stacked(cue: Cue, seen: dict[tuple, int]) -> Cue:
    """A line that repeats an earlier one's words at its times (a typesetter's border and
    fill layers, each with its own tags) as a copy: never read twice by the model, and
    written with the words the earlier line is restored to, in its own markup."""
    words = tuple(t.text for t in cue.tokens)
    if not any(words):
        return cue
    key = (cue.start, cue.end, words)
    if key not in seen:
        seen[key] = cue.extra["line"]
        return cue
    return replace(cue, tokens=(Token("", before=cue.text),),
                   extra={**cue.extra, "copy_of": seen[key], "tokens": cue.tokens})


def _fields(value: str, where: str) -> tuple[str, ...]:
    """The field names of a "Format:" line, lowercased; ValueError unless Start, End and a
    last field Text are among them."""
    fields = tuple(field.strip().lower() for field in value.split(","))
    if fields[-1] != "text" or not {"start", "end"} <= set(fields):
        raise ValueError(f"{where}: expected a Format line naming Start, End and, last, Text "
                         f"(as 'Format: Layer, Start, End, Style, Name, MarginL, MarginR, "
                         f"MarginV, Effect, Text'), got {shown(value.strip())}")
    return fields


def _cue(line: str, offset: int, fields: tuple[str, ...], index: int, where: str) -> Cue:
    """One Dialogue line (its values start at `offset`) as a cue; extra holds its line index,
    everything before its text, and its speaker (the Name field)."""
    values = line[offset:].split(",", len(fields) - 1)
    if len(values) < len(fields):
        raise ValueError(f"{where}: a Dialogue line with {len(values)} of the {len(fields)} "
                         f"fields its Format names ({', '.join(fields)})")
    named = dict(zip(fields, values))
    start, end = (_seconds(named[key], where) for key in ("start", "end"))
    if end < start:
        raise ValueError(f"{where}: the line ends ({named['end'].strip()}) before it starts "
                         f"({named['start'].strip()})")
    text = values[-1]
    prefix = line[:len(line) - len(text)]
    tokens = (Token("", before=text),) if _DRAWING.search(text) or not text.strip() else \
        split_tokens(text, MARKUP)  # (an empty line, as a drawing, becomes no subtitle)
    speaker = named.get("name", named.get("actor", "")).strip()
    return Cue(start, end, tokens, extra={"line": index, "prefix": prefix, "speaker": speaker})


def _seconds(value: str, where: str) -> float:
    found = _TIME.match(value)
    if found is None:
        raise ValueError(f"{where}: bad time {shown(value.strip())} (expected H:MM:SS.cc)")
    hours, minutes, seconds, fraction = found.groups()
    if int(minutes) > 59 or int(seconds) > 59:
        raise ValueError(f"{where}: bad time {shown(value.strip())} (expected H:MM:SS.cc)")
    total = (int(hours) * 60 + int(minutes)) * 60 + int(seconds)
    if total > MAX_SECONDS:
        raise ValueError(f"{where}: a time beyond {MAX_SECONDS:.0e} seconds")
    return round(total + (int(fraction) / 100 if fraction else 0.0), 3)


def dump_ass(transcript: Transcript) -> str:
    """The script as read, each Dialogue line's text replaced by its cue's."""
    if "lines" not in transcript.meta:
        raise ValueError("an ASS script is written only from one read as such (convert "
                         "others to srt or vtt)")
    lines = list(transcript.meta["lines"])
    by_line = {cue.extra["line"]: cue for cue in transcript.cues}
    for cue in transcript.cues:
        lines[cue.extra["line"]] = cue.extra["prefix"] + _copied(cue, by_line)
    return "\n".join(lines)


def _copied(cue: Cue, by_line: dict[int, Cue]) -> str:
    """A cue's text; a stacked copy's, its own markup around the words of the line it
    repeats as that line is now written."""
    source = by_line.get(cue.extra.get("copy_of"))
    own = cue.extra.get("tokens", ())
    if source is None or len(source.tokens) != len(own):
        return cue.text
    return "".join(t.before + s.text + t.after for t, s in zip(own, source.tokens))
