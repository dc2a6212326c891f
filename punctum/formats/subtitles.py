"""SRT, WebVTT, YouTube's SBV and plain text: timestamps, cues and blocks, read and written
back."""

from __future__ import annotations

import re

from punctum.formats.transcript import MAX_SECONDS, Cue, Transcript, shown, split_tokens

_ARROW = re.compile(r"^\s*(\S+?)\s*-->\s*(\S+)(?:\s+(.*?))?\s*$")
# Timestamp patterns (SRT also reads "." before the milliseconds; VTT hours are optional)
# and the forms named in errors.
_TIMES = {"srt": (re.compile(r"^(\d+):(\d{2}):(\d{2})[,.](\d{3})$"), "HH:MM:SS,mmm"),
          "vtt": (re.compile(r"^(?:(\d+):)?(\d{2}):(\d{2})\.(\d{3})$"), "HH:MM:SS.mmm")}
_SRT_EXPECTED = "'HH:MM:SS,mmm --> HH:MM:SS,mmm'"
# YouTube's SBV: "0:00:01.250,0:00:04.000" (hours of one digit or more), then the text lines
_SBV_TIME = r"(\d{1,12}):([0-5]\d):([0-5]\d)\.(\d{3})"  # (more hours: past MAX_SECONDS)
_SBV_TIMING = re.compile(rf"^\s*{_SBV_TIME},{_SBV_TIME}\s*$")
_SBV_EXPECTED = "'H:MM:SS.mmm,H:MM:SS.mmm'"
_VTT_EXPECTED = "'HH:MM:SS.mmm --> HH:MM:SS.mmm'"
_VTT_BLOCKS = ("NOTE", "STYLE", "REGION")


# ----------------------------------------------------------------------------- timestamps

def format_time(seconds: float, style: str = "srt", hours: bool = True) -> str:
    """A timestamp in a subtitle format's style: SRT 00:01:02,345, VTT 00:01:02.345, SBV
    0:01:02.345.

    Args:
        seconds: time in seconds (rounded to milliseconds).
        style: "srt", "vtt" or "sbv".
        hours: VTT only: False writes MM:SS.mmm for times under one hour.
    """
    total = round(seconds * 1000)
    h, rest = divmod(total, 3_600_000)
    m, rest = divmod(rest, 60_000)
    s, ms = divmod(rest, 1000)
    if style == "srt":
        return f"{h:02d}:{m:02d}:{s:02d},{ms:03d}"
    if style == "sbv":
        return f"{h}:{m:02d}:{s:02d}.{ms:03d}"
    if not hours and h == 0:
        return f"{m:02d}:{s:02d}.{ms:03d}"
    return f"{h:02d}:{m:02d}:{s:02d}.{ms:03d}"


def parse_time(stamp: str, style: str, where: str) -> float:
    """Seconds of a timestamp in `style` ("srt" or "vtt"); ValueError naming `where` when
    it is not one."""
    pattern, form = _TIMES[style]
    match = pattern.match(stamp)
    if match and len(match.group(1) or "") > 12:  # (past MAX_SECONDS, and too long for int)
        raise ValueError(f"{where}: timestamp {stamp[:40]!r} is beyond {MAX_SECONDS:.0e} "
                         f"seconds")
    if not match or int(match.group(2)) > 59 or int(match.group(3)) > 59:
        raise ValueError(f"{where}: bad timestamp {shown(stamp)} (expected {form})")
    h, m, s, ms = (int(g or 0) for g in match.groups())
    if h > MAX_SECONDS // 3600:
        raise ValueError(f"{where}: timestamp {stamp[:40]!r} is beyond {MAX_SECONDS:.0e} "
                         f"seconds")
    return (((h * 60 + m) * 60 + s) * 1000 + ms) / 1000  # exact: 1.84, not 1.8399999999999999


def _is_timing(line: str, style: str) -> bool:
    """Whether a line is a valid timing line of the style (SRT: HH:MM:SS,mmm, or with the
    period that the SRT reader also accepts: "00:00:01.000")."""
    match = _ARROW.match(line)
    pattern = _TIMES[style][0]
    return bool(match and pattern.match(match.group(1)) and pattern.match(match.group(2)))


def _parse_timing(line: str, where: str, style: str) -> tuple[float, float, str]:
    """(start, end, settings) of a timing line; ValueError naming `where` otherwise."""
    match = _ARROW.match(line)
    if not match:
        expected = _SRT_EXPECTED if style == "srt" else _VTT_EXPECTED
        raise ValueError(f"{where}: expected a timestamp line {expected}, got {shown(line)}")
    start = parse_time(match.group(1), style, where)
    end = parse_time(match.group(2), style, where)
    if end < start:
        raise ValueError(f"{where}: cue ends ({match.group(2)}) before it starts "
                         f"({match.group(1)})")
    return start, end, match.group(3) or ""


def _blocks(text: str) -> list[list[tuple[int, str]]]:
    """Runs of non-blank lines, each line with its 1-based number."""
    blocks: list[list[tuple[int, str]]] = []
    current: list[tuple[int, str]] = []
    for number, line in enumerate(text.split("\n"), start=1):
        if line.strip():
            current.append((number, line))
        elif current:
            blocks.append(current)
            current = []
    if current:
        blocks.append(current)
    return blocks


def _vtt_blocks(text: str) -> list[list[tuple[int, str]]]:
    """WebVTT blocks: runs of lines between empty lines. A line of only spaces belongs to the
    cue text, as WebVTT says, unless a block starts after it (a timing line, next or after an
    identifier, or NOTE, STYLE, REGION), as files written without that care mean."""
    lines = text.split("\n")
    blocks: list[list[tuple[int, str]]] = []
    current: list[tuple[int, str]] = []
    for number, line in enumerate(lines, start=1):
        if line.strip():
            current.append((number, line))
        elif current and (not line or _starts_block(lines[number:number + 2])):
            blocks.append(current)
            current = []
        elif current:
            current.append((number, line))
    if current:
        blocks.append(current)
    return blocks


def _starts_block(following: list[str]) -> bool:
    """Whether the next lines open a WebVTT cue or NOTE/STYLE/REGION block (an empty line
    next, or the end of the file, does not: the line before is the cue's last, as YouTube's
    captions write a line of one space last in a cue)."""
    if not following or not following[0]:  # the end of the file, or an empty line
        return False
    if not following[0].strip():
        return True
    words = following[0].split(None, 1)
    return ("-->" in following[0] or words[0] in _VTT_BLOCKS
            or (len(following) > 1 and "-->" in following[1]))


def _trailer(text: str) -> str:
    """The newlines after the last non-blank line (kept so that files round-trip)."""
    return "\n" * text[len(text.rstrip()):].count("\n")


# ----------------------------------------------------------------------------- SRT

def _read_srt(text: str, name: str, meta: dict) -> Transcript:
    cues = tuple(_srt_cue(block, name) for block in _blocks(text))
    return Transcript("srt", cues, {**meta, "trailer": _trailer(text)})


def _srt_cue(block: list[tuple[int, str]], name: str) -> Cue:
    """One SRT block: [number], timing line, text lines."""
    (first_no, first), rest = block[0], block[1:]
    identifier = ""
    if "-->" not in first:
        if not first.strip().isdigit() and not (rest and "-->" in rest[0][1]):
            raise ValueError(f"{name}:{first_no}: expected a cue number or a timestamp line "
                             f"{_SRT_EXPECTED}, got {shown(first)}")
        if not rest:
            raise ValueError(f"{name}:{first_no + 1}: expected a timestamp line "
                             f"{_SRT_EXPECTED} after cue number {shown(first)}")
        identifier = first
        (first_no, first), rest = rest[0], rest[1:]
    start, end, settings = _parse_timing(first, f"{name}:{first_no}", "srt")
    for number, line in rest:
        if _is_timing(line, "srt"):
            raise ValueError(f"{name}:{number}: timestamp line inside a cue's text (is the "
                             f"blank line before it missing?)")
    payload = "\n".join(line for _, line in rest)
    return Cue(start, end, split_tokens(payload, markup=True), identifier, settings)


def _dump_srt(transcript: Transcript) -> str:
    blocks = []
    for number, cue in enumerate(transcript.cues, start=1):
        timing = f"{format_time(cue.start, 'srt')} --> {format_time(cue.end, 'srt')}"
        lines = [cue.identifier or str(number), timing + (f" {cue.settings}" if cue.settings
                                                          else "")]
        blocks.append("\n".join(lines + ([cue.text] if cue.text else [])))
    return "\n\n".join(blocks) + transcript.meta.get("trailer", "\n" if blocks else "")


# ----------------------------------------------------------------------------- SBV

def is_sbv_timing(line: str) -> bool:
    """Whether a line is an SBV cue's timing line ("0:00:01.250,0:00:04.000")."""
    return _SBV_TIMING.match(line) is not None


def _read_sbv(text: str, name: str, meta: dict) -> Transcript:
    cues = tuple(_sbv_cue(block, name) for block in _blocks(text))
    return Transcript("sbv", cues, {**meta, "trailer": _trailer(text)})


def _sbv_cue(block: list[tuple[int, str]], name: str) -> Cue:
    """One SBV block: a timing line, then text lines."""
    (number, first), rest = block[0], block[1:]
    match = _SBV_TIMING.match(first)
    if match is None:
        raise ValueError(f"{name}:{number}: expected a timing line {_SBV_EXPECTED}, got "
                         f"{shown(first)}")
    h1, m1, s1, ms1, h2, m2, s2, ms2 = (int(g) for g in match.groups())
    start = (((h1 * 60 + m1) * 60 + s1) * 1000 + ms1) / 1000
    end = (((h2 * 60 + m2) * 60 + s2) * 1000 + ms2) / 1000
    if max(start, end) > MAX_SECONDS:
        raise ValueError(f"{name}:{number}: a time beyond {MAX_SECONDS:.0e} seconds")
    if end < start:
        raise ValueError(f"{name}:{number}: cue ends before it starts ({shown(first)})")
    for line_number, line in rest:
        if is_sbv_timing(line):
            raise ValueError(f"{name}:{line_number}: timing line inside a cue's text (is the "
                             f"blank line before it missing?)")
    return Cue(start, end, split_tokens("\n".join(line for _, line in rest)))


def _dump_sbv(transcript: Transcript) -> str:
    blocks = [f"{format_time(cue.start, 'sbv')},{format_time(cue.end, 'sbv')}"
              + (f"\n{cue.text}" if cue.text else "") for cue in transcript.cues]
    return "\n\n".join(blocks) + transcript.meta.get("trailer", "\n" if blocks else "")


# ----------------------------------------------------------------------------- WebVTT

def _read_vtt(text: str, name: str, meta: dict) -> Transcript:
    """WebVTT: the header block, then cues and NOTE/STYLE/REGION blocks (kept in place)."""
    if not text.strip():  # an empty file: empty output, as for other formats
        return Transcript("vtt", (), {**meta, "header": "", "trailer": _trailer(text)})
    blocks = _vtt_blocks(text)
    if not blocks or blocks[0][0][0] != 1 or not re.match(r"WEBVTT([ \t]|$)", blocks[0][0][1]):
        raise ValueError(f"{name}:1: expected 'WEBVTT' on the first line")
    for number, line in blocks[0]:
        if "-->" in line:
            raise ValueError(f"{name}:{number}: expected a blank line after the WEBVTT header")
    cues: list[Cue] = []
    others: list[tuple[int, str]] = []
    hours = False
    for block in blocks[1:]:
        if block[0][1].split(None, 1)[0] in _VTT_BLOCKS and "-->" not in block[0][1]:
            others.append((len(cues), "\n".join(line for _, line in block)))
        else:
            cue, with_hours = _vtt_cue(block, name)
            cues.append(cue)
            hours = hours or with_hours
    # the newlines after the last block's last line (which may be a line of spaces)
    trailer = "\n" * (text.count("\n") + 1 - blocks[-1][-1][0])
    meta = {**meta, "header": "\n".join(line for _, line in blocks[0]),
            "blocks": tuple(others), "hours": hours or not cues, "trailer": trailer}
    return Transcript("vtt", tuple(cues), meta)


def _vtt_cue(block: list[tuple[int, str]], name: str) -> tuple[Cue, bool]:
    """One VTT cue ([identifier], timing line with optional settings, text lines), and
    whether its timestamps are written with hours."""
    (first_no, first), rest = block[0], block[1:]
    identifier = ""
    if "-->" not in first:
        if not rest or "-->" not in rest[0][1]:
            where = rest[0][0] if rest else first_no + 1
            raise ValueError(f"{name}:{where}: expected a timestamp line {_VTT_EXPECTED} "
                             f"(or a NOTE, STYLE or REGION block)")
        identifier = first
        (first_no, first), rest = rest[0], rest[1:]
    start, end, settings = _parse_timing(first, f"{name}:{first_no}", "vtt")
    for number, line in rest:
        if "-->" in line:
            raise ValueError(f"{name}:{number}: '-->' inside a cue's text (is the blank line "
                             f"before it missing?)")
    payload = "\n".join(line for _, line in rest)
    cue = Cue(start, end, split_tokens(payload, markup=True), identifier, settings)
    match = _ARROW.match(first)
    return cue, match.group(1).count(":") == 2 or match.group(2).count(":") == 2


def _dump_vtt(transcript: Transcript) -> str:
    meta = transcript.meta
    hours = meta.get("hours", True)
    placed: dict[int, list[str]] = {}
    for index, text in meta.get("blocks", ()):
        placed.setdefault(min(index, len(transcript.cues)), []).append(text)
    parts = [meta.get("header", "WEBVTT")]
    for index, cue in enumerate(transcript.cues):
        parts.extend(placed.get(index, []))
        timing = (f"{format_time(cue.start, 'vtt', hours)} --> "
                  f"{format_time(cue.end, 'vtt', hours)}")
        lines = ([cue.identifier] if cue.identifier else []) + [
            timing + (f" {cue.settings}" if cue.settings else "")]
        parts.append("\n".join(lines + ([cue.text] if cue.text else [])))
    parts.extend(placed.get(len(transcript.cues), []))
    return "\n\n".join(parts) + meta.get("trailer", "\n")


# ----------------------------------------------------------------------------- plain text

def _read_plain(text: str, name: str, meta: dict) -> Transcript:
    """One cue (paragraph) per line, without times."""
    lines = text.split("\n")
    trailer = ""
    if text.endswith("\n"):
        lines, trailer = lines[:-1], "\n"
    cues = tuple(Cue(None, None, split_tokens(line)) for line in lines) if text else ()
    return Transcript("text", cues, {**meta, "trailer": trailer})


def _dump_text(transcript: Transcript) -> str:
    if not transcript.cues:
        return ""
    return "\n".join(cue.text for cue in transcript.cues) + transcript.meta.get("trailer", "\n")
