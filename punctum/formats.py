"""Subtitle and ASR-JSON readers and writers that keep every timing, and restoring them.

    punctum restore -i talk.srt -o talk.restored.srt
    punctum restore -i whisper.json --to srt --resegment --max-chars 42 --max-lines 2

Formats (`FORMATS`): SRT, WebVTT, Whisper JSON, Vosk JSON (an object, a list of objects or
JSON lines), NeMo-style JSONL manifests and plain text (one paragraph per line); Kaldi CTM and
text, pocketsphinx JSON and transformers-pipeline JSON are read and written by `formats_asr`.
Each is read into a `Transcript` of `Cue`s of `Token`s: a token is one whitespace-separated
piece of the written text (usually one word) with its timing when the source has one, and
keeps the whitespace and markup around it (`before`, `after`), so that writing a transcript
that was read gives back its input:

- SRT, WebVTT and plain text: byte-identical, except that timestamps are re-written in the
  format's own style (SRT ``00:01:02,345``; VTT ``00:01:02.345``, or ``01:02.345`` when no
  timestamp of the input has hours), blank lines between cues are one, trailing whitespace
  after the last cue is kept as newlines only, and a file with any CRLF line ending is
  written with CRLF throughout.
  VTT NOTE, STYLE and REGION blocks are kept in place; tags (``<v Bob>``, ``<i>``, inline
  timestamps ``<00:01.500>``, SRT's ``{\\an8}``) and character references (``&amp;``) are
  kept around the tokens and never reach the model.
- Whisper, Vosk, NeMo: the same JSON values, every key in its order (records are kept as read
  and only the fields a token or cue owns are written back when they changed); the text is
  re-serialised by Python's json module with the indent, separators and ASCII escaping
  detected from the input, so files written by Python (Whisper, NeMo) come back
  byte-identical.

`restore_transcript` punctuates and cases a transcript across cue boundaries: all tokens of a
file go to the model as one word sequence (for plain text and NeMo manifests each line is its
own text), and each token gets back its own words with their marks and case. Timings, cues and
words never change. `resegment` rebuilds subtitle cues at sentence boundaries within line,
length and duration limits; `convert` moves a transcript to another format.
"""

from __future__ import annotations

import bisect
import functools
import gzip
import json
import json.decoder
import json.scanner
import math
import re
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TextIO

import numpy as np

from punctum.fileio import NotUtf8Error
from punctum.runtime import RestoreOptions, close_text, merge_labels
from punctum.text import NULL, Inventory, Labelled, get_inventory, parse, render

FORMATS = ("text", "srt", "vtt", "whisper", "vosk", "nemo", "ctm", "kaldi", "sphinx", "hf")
EXTENSIONS = {"text": ".txt", "srt": ".srt", "vtt": ".vtt", "whisper": ".json",
              "vosk": ".json", "nemo": ".jsonl", "ctm": ".ctm", "kaldi": ".txt",
              "sphinx": ".jsonl", "hf": ".json"}
SUBTITLES = ("srt", "vtt")
# Formats whose cues are separate texts (paragraphs, utterances of different recordings):
# context does not flow from one cue to the next, and each cue is closed as a text.
INDEPENDENT_CUES = frozenset({"text", "nemo", "kaldi"})
# Formats without times (they cannot become subtitles).
UNTIMED = frozenset({"text", "nemo", "kaldi"})

# Subtitle markup kept around tokens: tags, SRT/ASS override codes, HTML character references
# (whose ";" would otherwise read as a mark).
_MARKUP = re.compile(r"(<[^<>\n]*>|\{\\[^{}\n]*\}|&(?:[a-zA-Z]+|#\d+|#x[0-9a-fA-F]+);)")
_WHITESPACE = re.compile(r"(\s+)")
_ARROW = re.compile(r"^\s*(\S+?)\s*-->\s*(\S+)(?:\s+(.*?))?\s*$")
# Timestamp patterns (SRT also reads "." before the milliseconds; VTT hours are optional)
# and the forms named in errors.
_TIMES = {"srt": (re.compile(r"^(\d+):(\d{2}):(\d{2})[,.](\d{3})$"), "HH:MM:SS,mmm"),
          "vtt": (re.compile(r"^(?:(\d+):)?(\d{2}):(\d{2})\.(\d{3})$"), "HH:MM:SS.mmm")}
_SRT_EXPECTED = "'HH:MM:SS,mmm --> HH:MM:SS,mmm'"
_VTT_EXPECTED = "'HH:MM:SS.mmm --> HH:MM:SS.mmm'"
_VTT_BLOCKS = ("NOTE", "STYLE", "REGION")
_SUFFIXES = {".srt": "srt", ".vtt": "vtt", ".txt": "text", ".ctm": "ctm"}


# ----------------------------------------------------------------------------- model

@dataclass(frozen=True)
class Token:
    """One written token (usually one word) with its timing.

    Attributes:
        text: the token as written, without whitespace or markup ("Hello,"; "" only for a
            cue whose text is markup alone).
        start, end: seconds, or None when the source has no word timings.
        before: whitespace and markup written before the token (" ", "\\n", "<i>"; Whisper's
            leading space).
        after: whitespace and markup written after it (the cue's closing "</i>").
        extra: the source's record of the token as read (a Whisper or Vosk word object, every
            key in its order); `text`, `start` and `end` are authoritative and are written
            back into it.
    """

    text: str
    start: float | None = None
    end: float | None = None
    before: str = ""
    after: str = ""
    extra: dict = field(default_factory=dict, hash=False)


@dataclass(frozen=True)
class Cue:
    """A subtitle cue, a Whisper segment, a Vosk result, a manifest line or a text line.

    Attributes:
        start, end: seconds, or None when the source has no times (text, NeMo).
        tokens: the cue's text as tokens; `text` joins them back.
        identifier: the SRT cue number or the VTT cue id as written ("" when absent).
        settings: what follows the end time on the timing line (VTT cue settings, SRT
            coordinates).
        extra: the source's record of the cue as read (JSON formats), every key in its order.
    """

    start: float | None
    end: float | None
    tokens: tuple[Token, ...] = ()
    identifier: str = ""
    settings: str = ""
    extra: dict = field(default_factory=dict, hash=False)

    @property
    def text(self) -> str:
        """The cue's text as written: tokens with their whitespace and markup."""
        return "".join(t.before + t.text + t.after for t in self.tokens)


@dataclass(frozen=True)
class Transcript:
    """A file in one of `FORMATS`: its cues and what the writer needs to reproduce it.

    Attributes:
        format: one of FORMATS.
        cues: the cues in file order.
        meta: file-level data: line ending, byte-order mark, trailing newlines, the VTT header
            and NOTE/STYLE/REGION blocks (as (cue index, text) pairs), the JSON root record and
            serialisation style, the manifest text key.
    """

    format: str
    cues: tuple[Cue, ...] = ()
    meta: dict = field(default_factory=dict, hash=False)

    def __post_init__(self) -> None:
        if self.format not in FORMATS:
            raise ValueError(f"format must be one of {FORMATS}, got {self.format!r}")

    @property
    def tokens(self) -> list[Token]:
        """Every token of every cue, in order."""
        return [token for cue in self.cues for token in cue.tokens]


@dataclass(frozen=True)
class ResegmentOptions:
    """Limits for cues rebuilt by `resegment`.

    Args:
        max_chars_per_line: characters per subtitle line (a longer single word gets a line
            of its own).
        max_lines: lines per cue.
        max_duration: seconds per cue (a single longer word gets a cue of its own).
    """

    max_chars_per_line: int = 42
    max_lines: int = 2
    max_duration: float = 7.0

    def __post_init__(self) -> None:
        for name, low, high in (("max_chars_per_line", 1, 1000), ("max_lines", 1, 100)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                raise ValueError(f"ResegmentOptions.{name} must be an integer in "
                                 f"[{low}, {high}], got {value!r}")
        duration = self.max_duration
        if isinstance(duration, bool) or not isinstance(duration, (int, float)) or \
                not 0 < duration <= 3600:
            raise ValueError(f"ResegmentOptions.max_duration must be a number of seconds in "
                             f"(0, 3600], got {duration!r}")


# ----------------------------------------------------------------------------- public API

def detect_format(path: str | Path) -> str:
    """The format of a file, by its extension (.srt, .vtt, .txt, .ctm) or else by its content.

    JSON content is told apart by its keys: "segments" (Whisper), "result", "partial" or a
    lone "text" (Vosk), "audio_filepath" or "pred_text" (NeMo manifest), "chunks" (a
    transformers pipeline), "t" with "w" or "b" and "d" (pocketsphinx). Lines of CTM fields
    are CTM. Kaldi's `text` files look like plain text: give their format.
    """
    path = Path(path)
    if path.suffix.lower() in _SUFFIXES:
        if not path.is_file():
            raise FileNotFoundError(f"{path}: no such file")
        return _SUFFIXES[path.suffix.lower()]
    return sniff_format(_read_text(path, errors="replace")[0], str(path))


def sniff_format(text: str, name: str = "<string>") -> str:
    """The format of a file's text from its content (see `detect_format`).

    Text that starts like JSON but does not parse is plain text, unless `name` ends in
    .json or .jsonl (then the JSON error, naming the line, is raised).
    """
    head = text.lstrip("\ufeff \t\r\n")
    first_lines = [line.strip() for line in head.split("\n", 2)[:2]]
    if head.startswith("WEBVTT"):
        return "vtt"
    if any(_is_timing(line, "srt") for line in first_lines):
        return "srt"
    from punctum import formats_asr

    if formats_asr.looks_like_ctm(head.split("\n", 3)[:3]):
        return "ctm"
    if not head or head[0] not in "{[":
        return "text"
    try:
        values = _load_json(text, name)[1]
    except ValueError:
        if Path(name).suffix.lower() in (".json", ".jsonl"):
            raise
        return "text"
    return _classify_json(values, name)


def read(path: str | Path, format: str = "auto", text_key: str = "pred_text",
         errors: str = "strict") -> Transcript:
    """Read a subtitle, ASR-JSON, manifest or text file.

    Args:
        path: the file.
        format: one of FORMATS, or "auto" (`detect_format`).
        text_key: the manifest key that holds the text to restore (NeMo).
        errors: "strict" (bytes that are not UTF-8 are an error) or "replace" (U+FFFD).

    Raises:
        FileNotFoundError: no such file.
        ValueError: malformed content, naming the file and line.
    """
    text, meta = _read_text(path, errors)
    return _parse(text, format, str(path), text_key, meta)


def loads(text: str, format: str = "auto", name: str = "<string>",
          text_key: str = "pred_text") -> Transcript:
    """Read a transcript from a string (`read` for text already in memory)."""
    text, meta = _normalise_newlines(text)
    return _parse(text, format, name, text_key, meta)


def dumps(transcript: Transcript, output_key: str | None = None) -> str:
    """The file text of a transcript (see the module docstring for what is kept).

    Args:
        transcript: any transcript.
        output_key: the manifest key the text is written to (NeMo; default: the key it was
            read from).
    """
    from punctum import formats_asr

    writers = {"text": _dump_text, "srt": _dump_srt, "vtt": _dump_vtt,
               "whisper": _dump_whisper, "vosk": _dump_vosk, **formats_asr.WRITERS}
    if transcript.format == "nemo":
        text = _dump_nemo(transcript, output_key)
    else:
        text = writers[transcript.format](transcript)
    meta = transcript.meta
    if meta.get("newline", "\n") != "\n":
        text = text.replace("\n", meta["newline"])
    return ("\ufeff" if meta.get("bom") else "") + text


def write(transcript: Transcript, target: str | Path | TextIO,
          output_key: str | None = None) -> None:
    """Write a transcript to a path (UTF-8) or to an open text stream (see `dumps`)."""
    text = dumps(transcript, output_key)
    if hasattr(target, "write"):
        target.write(text)
        return
    with open(target, "w", encoding="utf-8", newline="") as handle:
        handle.write(text)


def _parse(text: str, format: str, name: str, text_key: str, meta: dict) -> Transcript:
    if format == "auto":
        format = _SUFFIXES.get(Path(name).suffix.lower()) or sniff_format(text, name)
    from punctum import formats_asr

    readers = {"text": _read_plain, "srt": _read_srt, "vtt": _read_vtt,
               "whisper": _read_whisper, "vosk": _read_vosk, **formats_asr.READERS}
    if format == "nemo":
        return _read_nemo(text, name, meta, text_key)
    if format not in readers:
        raise ValueError(f"format must be 'auto' or one of {FORMATS}, got {format!r}")
    return readers[format](text, name, meta)


def _read_text(path: str | Path, errors: str = "strict") -> tuple[str, dict]:
    """A file's UTF-8 text and meta (see `_normalise_newlines`); errors name the line."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such file")
    if path.is_dir():
        raise ValueError(f"{path}: is a directory, expected a file")
    if errors not in ("strict", "replace"):
        raise ValueError(f"errors must be 'strict' or 'replace', got {errors!r}")
    data = _gunzip(path.read_bytes(), path)
    try:
        text = data.decode("utf-8", errors=errors)
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        raise NotUtf8Error(f"{path}:{line}: not valid UTF-8 ({error.reason})") from None
    return _normalise_newlines(text)


def _gunzip(data: bytes, path: Path) -> bytes:
    """The file's bytes, decompressed when they are gzip's (--format whisper -i x.json.gz)."""
    if not data.startswith(b"\x1f\x8b"):
        return data
    try:
        return gzip.decompress(data)
    except (OSError, EOFError, zlib.error) as error:
        raise ValueError(f"{path}: not a complete gzip file ({error})") from None


def _normalise_newlines(text: str) -> tuple[str, dict]:
    """Text with CRLF made LF and the byte-order mark removed; meta records both, so that
    the writer puts them back (a file with any CRLF is written with CRLF throughout)."""
    meta = {"bom": text.startswith("\ufeff"), "newline": "\r\n" if "\r\n" in text else "\n"}
    return text.removeprefix("\ufeff").replace("\r\n", "\n"), meta


# ----------------------------------------------------------------------------- tokens

def split_tokens(text: str, markup: bool = False) -> tuple[Token, ...]:
    """Cut running text into tokens, keeping whitespace (and markup tags) around them.

    Joining ``before + text + after`` over the tokens gives `text` back. Text made of markup
    or whitespace alone becomes one token with empty text.

    Args:
        text: a cue's text, a segment's text or a line.
        markup: treat ``<...>`` and ``{\\...}`` tags and character references (``&amp;``)
            as markup (subtitles), not as text.
    """
    pieces = _MARKUP.split(text) if markup else [text]
    tokens: list[Token] = []
    pending = ""
    for k, piece in enumerate(pieces):
        if k % 2:
            pending += piece
            continue
        for run in _WHITESPACE.split(piece):
            if run and not run.isspace():
                tokens.append(Token(run, before=pending))
                pending = ""
            else:
                pending += run
    if pending and tokens:
        tokens[-1] = replace(tokens[-1], after=pending)
    elif pending:
        tokens.append(Token("", before=pending))
    return tuple(tokens)


def _split_word(raw: str, start: float | None, end: float | None, record: dict) -> Token:
    """A Whisper word (" Hello,") as a token whose whitespace is kept in before/after."""
    core = raw.strip()
    if not core:
        return Token("", start, end, before=raw, extra=record)
    lead = raw[:len(raw) - len(raw.lstrip())]
    trail = raw[len(raw.rstrip()):]
    return Token(core, start, end, before=lead, after=trail, extra=record)


# ----------------------------------------------------------------------------- timestamps

def format_time(seconds: float, style: str = "srt", hours: bool = True) -> str:
    """A timestamp in a subtitle format's style: SRT 00:01:02,345, VTT 00:01:02.345.

    Args:
        seconds: time in seconds (rounded to milliseconds).
        style: "srt" or "vtt".
        hours: VTT only: False writes MM:SS.mmm for times under one hour.
    """
    total = round(seconds * 1000)
    h, rest = divmod(total, 3_600_000)
    m, rest = divmod(rest, 60_000)
    s, ms = divmod(rest, 1000)
    if style == "srt":
        return f"{h:02d}:{m:02d}:{s:02d},{ms:03d}"
    if not hours and h == 0:
        return f"{m:02d}:{s:02d}.{ms:03d}"
    return f"{h:02d}:{m:02d}:{s:02d}.{ms:03d}"


def _parse_time(stamp: str, style: str, where: str) -> float:
    pattern, form = _TIMES[style]
    match = pattern.match(stamp)
    if not match or int(match.group(2)) > 59 or int(match.group(3)) > 59:
        raise ValueError(f"{where}: bad timestamp {stamp!r} (expected {form})")
    h, m, s, ms = (int(g or 0) for g in match.groups())
    return h * 3600 + m * 60 + s + ms / 1000


def _is_timing(line: str, style: str) -> bool:
    """Whether a line is a valid timing line of the style (SRT: with a comma)."""
    match = _ARROW.match(line)
    pattern = _TIMES[style][0]
    return bool(match and pattern.match(match.group(1)) and pattern.match(match.group(2))
                and (style != "srt" or "," in match.group(1)))


def _parse_timing(line: str, where: str, style: str) -> tuple[float, float, str]:
    """(start, end, settings) of a timing line; ValueError naming `where` otherwise."""
    match = _ARROW.match(line)
    if not match:
        expected = _SRT_EXPECTED if style == "srt" else _VTT_EXPECTED
        raise ValueError(f"{where}: expected a timestamp line {expected}, got {line!r}")
    start = _parse_time(match.group(1), style, where)
    end = _parse_time(match.group(2), style, where)
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
                             f"{_SRT_EXPECTED}, got {first!r}")
        if not rest:
            raise ValueError(f"{name}:{first_no + 1}: expected a timestamp line "
                             f"{_SRT_EXPECTED} after cue number {first!r}")
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


# ----------------------------------------------------------------------------- WebVTT

def _read_vtt(text: str, name: str, meta: dict) -> Transcript:
    """WebVTT: the header block, then cues and NOTE/STYLE/REGION blocks (kept in place)."""
    blocks = _blocks(text)
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
    meta = {**meta, "header": "\n".join(line for _, line in blocks[0]),
            "blocks": tuple(others), "hours": hours or not cues, "trailer": _trailer(text)}
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


# ----------------------------------------------------------------------------- JSON

class _ShapeError(Exception):
    """JSON of the wrong shape at `path` (keys and indexes from the root)."""

    def __init__(self, path: tuple, message: str) -> None:
        super().__init__(message)
        self.path = path
        self.message = message


@dataclass(frozen=True)
class JsonStyle:
    """How a JSON file was written, so that it is written back the same way."""

    indent: int | None = None
    ensure_ascii: bool = False
    separators: tuple[str, str] = (", ", ": ")
    final_newline: bool = True

    @classmethod
    def detect(cls, text: str, lines: bool) -> JsonStyle:
        """The style of `text` (a JSON document, or JSON lines when `lines`)."""
        body = text.strip()
        indent = None
        if not lines and "\n" in body:
            second = body.split("\n", 2)[1]
            indent = len(second) - len(second.lstrip(" ")) or 2
        key = re.search(r'"\s*:(\s?)', body)
        key_sep = ": " if key is None or key.group(1) else ":"
        item = re.search(r',(\s?)"', body)
        item_sep = "," if indent is not None or (item and not item.group(1)) else ", "
        ensure_ascii = text.isascii() and "\\u" in text
        return cls(indent, ensure_ascii, (item_sep, key_sep), text.endswith("\n"))

    def dumps(self, value: Any) -> str:
        """One JSON value in this style (no final newline)."""
        return json.dumps(value, ensure_ascii=self.ensure_ascii, indent=self.indent,
                          separators=self.separators)

    def dumps_lines(self, values: Sequence[Any]) -> str:
        """JSON lines in this style."""
        text = "\n".join(json.dumps(v, ensure_ascii=self.ensure_ascii,
                                    separators=self.separators) for v in values)
        return text + ("\n" if values and self.final_newline else "")


# Style of JSON written from scratch (a conversion): what json.dump(indent=2) writes.
_NEW_JSON = JsonStyle(indent=2, separators=(",", ": "))


def _load_json(text: str, name: str) -> tuple[str, list[tuple[int, Any]]]:
    """("document", [(1, value)]) or ("lines", [(line number, value), ...]) for JSON lines.

    An empty or whitespace-only text is ("lines", []).
    """
    if not text.strip():
        return "lines", []
    try:
        return "document", [(1, json.loads(text))]
    except json.JSONDecodeError as error:
        whole = error
    lines = [(n, line) for n, line in enumerate(text.split("\n"), start=1) if line.strip()]
    try:
        json.loads(lines[0][1])
    except json.JSONDecodeError:
        raise ValueError(f"{name}:{whole.lineno}: not valid JSON ({whole.msg}, column "
                         f"{whole.colno})") from None
    values = []
    for number, line in lines:
        try:
            values.append((number, json.loads(line)))
        except json.JSONDecodeError as error:
            raise ValueError(f"{name}:{number}: not valid JSON ({error.msg}, column "
                             f"{error.colno})") from None
    return "lines", values


def _classify_json(values: list[tuple[int, Any]], name: str) -> str:
    first = values[0][1] if values else {}
    if isinstance(first, list):
        first = first[0] if first else {}
    if not isinstance(first, dict):
        first = {}
    if "segments" in first:
        return "whisper"
    if {"result", "partial", "alternatives"} & set(first) or set(first) == {"text"}:
        return "vosk"
    if {"audio_filepath", "pred_text"} & set(first):
        return "nemo"
    from punctum import formats_asr

    found = formats_asr.classify_json(first)
    if found:
        return found
    raise ValueError(f"{name}:{values[0][0] if values else 1}: cannot tell which JSON "
                     f"format this is (no 'segments', 'result', 'partial', 'audio_filepath', "
                     f"'pred_text', 'chunks' or 't' key); give the format (whisper, vosk, "
                     f"nemo, hf, sphinx)")


class _LocatedDict(dict):
    """A JSON object that remembers where it starts (character offset and line)."""

    position = 0
    line = 1


class _LineLocator:
    """Parses JSON with the pure-Python scanner, recording where each object starts.

    Only used to name the line of a shape error, so the fast C parser does the normal reads.
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = [0] + [m.end() for m in re.finditer("\n", text)]
        decoder = json.JSONDecoder()
        decoder.parse_object = self.parse_object
        self.scan = json.scanner.py_make_scanner(decoder)

    def parse_object(self, s_and_end, *args):
        value, end = json.decoder.JSONObject(s_and_end, *args)
        located = _LocatedDict(value)
        located.position = s_and_end[1] - 1
        located.line = self._line(located.position)
        return located, end

    def _line(self, position: int) -> int:
        return bisect.bisect_right(self.starts, position)

    def line_of(self, path: tuple) -> int:
        """The line of the value at `path`: where its object starts, or for a key of an
        object, the first line after the object's start that names the key."""
        node, _ = self.scan(self.text, len(self.text) - len(self.text.lstrip()))
        line = getattr(node, "line", 1)
        for key in path:
            if isinstance(node, _LocatedDict) and isinstance(key, str):
                found = re.compile(re.escape(json.dumps(key)) + r"\s*:").search(
                    self.text, node.position)
                line = self._line(found.start()) if found else line
            try:
                node = node[key]
            except (KeyError, IndexError, TypeError):
                break
            line = getattr(node, "line", line)
        return line


def _shape_error(error: _ShapeError, name: str, text: str,
                 lines: list[tuple[int, Any]] | None) -> ValueError:
    """The error naming the file and line: the JSON line (JSON lines), else the line where
    the object at the error's path starts."""
    if lines is not None and error.path:
        line, path = lines[error.path[0]][0], error.path[1:]
    else:
        line, path = _LineLocator(text).line_of(error.path), error.path
    where = _path_text(path)
    return ValueError(f"{name}:{line}: {where + ': ' if where else ''}{error.message}")


def _path_text(path: tuple) -> str:
    text = ""
    for key in path:
        text += f"[{key}]" if isinstance(key, int) else (f".{key}" if text else key)
    return text


def _kind(value: Any) -> str:
    names = {dict: "an object", list: "a list", str: "a string", bool: "a boolean",
             type(None): "null", int: "a number", float: "a number"}
    return names.get(type(value), type(value).__name__)


def _expect_object(value: Any, path: tuple, what: str) -> dict:
    if not isinstance(value, dict):
        raise _ShapeError(path, f"expected {what}, got {_kind(value)}")
    return value


def _expect_list(value: Any, path: tuple) -> list:
    if not isinstance(value, list):
        raise _ShapeError(path, f"expected a list, got {_kind(value)}")
    return value


def _field_text(record: dict, key: str, path: tuple) -> str:
    if key not in record:
        raise _ShapeError(path, f"no {key!r} key (keys: {', '.join(map(str, record))})")
    if not isinstance(record[key], str):
        raise _ShapeError(path + (key,), f"expected a string, got {_kind(record[key])}")
    return record[key]


def _field_time(record: dict, key: str, path: tuple, required: bool) -> float | None:
    value = record.get(key)
    if value is None and not required:
        return None
    if not is_time(value):
        if key not in record:
            got = "nothing"
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            got = repr(value)
        else:
            got = _kind(value)
        raise _ShapeError(path + (key,), f"expected a time in seconds (a finite number "
                                         f">= 0), got {got}")
    return float(value)


def is_time(value: Any) -> bool:
    """A time in seconds: a finite number >= 0 (not a bool, not NaN or Infinity)."""
    return (isinstance(value, (int, float)) and not isinstance(value, bool)
            and math.isfinite(value) and value >= 0)


def _put(record: dict, key: str, value: Any) -> None:
    """Set record[key] unless it holds an equal value already (1 stays 1, not 1.0)."""
    if key not in record or record[key] != value:
        record[key] = value


def _read_json_records(text: str, name: str, meta: dict, format: str, reader) -> Transcript:
    """Shared JSON reading: parse, style, records -> cues with errors naming the line."""
    layout, values = _load_json(text, name)
    style = JsonStyle.detect(text, lines=layout == "lines")
    try:
        cues, extra_meta = reader(layout, values)
    except _ShapeError as error:
        raise _shape_error(error, name, text, values if layout == "lines" else None) from None
    return Transcript(format, tuple(cues), {**meta, "json_style": style, **extra_meta})


# ----------------------------------------------------------------------------- Whisper

def _read_whisper(text: str, name: str, meta: dict) -> Transcript:
    return _read_json_records(text, name, meta, "whisper", _whisper_cues)


def _whisper_cues(layout: str, values: list) -> tuple[list[Cue], dict]:
    if not values:
        return [], {}
    if len(values) > 1:
        raise _ShapeError((1,), "expected one JSON object, got several lines of JSON")
    path = (0,) if layout == "lines" else ()
    root = _expect_object(values[0][1], path, "a Whisper result object with 'segments'")
    segments = _expect_list(root.get("segments"), path + ("segments",))
    cues = [_whisper_cue(s, path + ("segments", i)) for i, s in enumerate(segments)]
    return cues, {"record": root}


def _whisper_cue(segment: Any, path: tuple) -> Cue:
    segment = _expect_object(segment, path, "a segment object")
    start = _field_time(segment, "start", path, required=True)
    end = _field_time(segment, "end", path, required=True)
    if end < start:
        raise _ShapeError(path + ("end",), f"the segment ends ({end:g}) before it starts "
                                           f"({start:g})")
    words = segment.get("words")
    if words:
        words = _expect_list(words, path + ("words",))
        tokens = tuple(_whisper_token(w, path + ("words", j)) for j, w in enumerate(words))
    else:
        tokens = split_tokens(_field_text(segment, "text", path))
    return Cue(start, end, tokens, extra=segment)


def _whisper_token(word: Any, path: tuple) -> Token:
    word = _expect_object(word, path, "a word object")
    raw = _field_text(word, "word", path)
    return _split_word(raw, _field_time(word, "start", path, False),
                       _field_time(word, "end", path, False), word)


def _dump_whisper(transcript: Transcript) -> str:
    style = transcript.meta.get("json_style", _NEW_JSON)
    record = transcript.meta.get("record")
    segments = [_whisper_segment(cue, i) for i, cue in enumerate(transcript.cues)]
    if record is None:
        root = {"text": "".join(s["text"] for s in segments), "segments": segments}
    else:
        root = dict(record)
        old = [s.get("text") for s in record.get("segments", [])]
        if "text" in root and [s.get("text") for s in segments] != old:
            root["text"] = "".join(s.get("text", "") for s in segments)
        root["segments"] = segments
    return style.dumps(root) + ("\n" if style.final_newline else "")


def _whisper_segment(cue: Cue, index: int) -> dict:
    """The segment record with changed times, words and text written back."""
    record = dict(cue.extra) if cue.extra else {"id": index}
    _put(record, "start", cue.start)
    _put(record, "end", cue.end)
    old_words = cue.extra.get("words") if cue.extra else None
    timed = bool(cue.tokens) and all(t.start is not None for t in cue.tokens)
    if old_words or (not cue.extra and timed):
        words = [_whisper_word(token) for token in cue.tokens]
        if words != old_words:
            record["text"] = "".join(w["word"] for w in words)
        record["words"] = words
    else:
        _put(record, "text", cue.text)
    return record


def _whisper_word(token: Token) -> dict:
    record = dict(token.extra)
    _put(record, "word", token.before + token.text + token.after)
    for key in ("start", "end"):
        if getattr(token, key) is not None or key in record:
            _put(record, key, getattr(token, key))
    return record


# ----------------------------------------------------------------------------- Vosk

def _read_vosk(text: str, name: str, meta: dict) -> Transcript:
    return _read_json_records(text, name, meta, "vosk", _vosk_cues)


def _vosk_cues(layout: str, values: list) -> tuple[list[Cue], dict]:
    """Vosk results: one object, a list of objects, or JSON lines of objects."""
    return record_cues(layout, values, _vosk_cue)


def record_cues(layout: str, values: list, make_cue) -> tuple[list[Cue], dict]:
    """A cue per record (`make_cue(record, path)`) of one object, a list of objects or JSON
    lines of objects, and the layout to write them back in."""
    if layout == "lines":
        return [make_cue(v, (i,)) for i, (_, v) in enumerate(values)], {"layout": "lines"}
    root = values[0][1]
    if isinstance(root, list):
        return [make_cue(v, (i,)) for i, v in enumerate(root)], {"layout": "list"}
    return [make_cue(root, ())], {"layout": "object"}


def _vosk_cue(record: Any, path: tuple) -> Cue:
    """A final result ("result" words and "text"); a partial result is kept as it is."""
    record = _expect_object(record, path, "a Vosk result object")
    if "result" in record:
        words = _expect_list(record["result"], path + ("result",))
        tokens = tuple(_vosk_token(w, path + ("result", j), j) for j, w in enumerate(words))
        start = tokens[0].start if tokens else None
        end = tokens[-1].end if tokens else None
        return Cue(start, end, tokens, extra=record)
    if "text" in record:
        return Cue(None, None, split_tokens(_field_text(record, "text", path)), extra=record)
    if not {"partial", "alternatives"} & set(record):
        raise _ShapeError(path, f"expected a Vosk result ('result', 'text', 'partial' or "
                                f"'alternatives' key), got keys {sorted(record)}")
    return Cue(None, None, (), extra=record)


def _vosk_token(word: Any, path: tuple, index: int) -> Token:
    word = _expect_object(word, path, "a word object")
    return Token(_field_text(word, "word", path), _field_time(word, "start", path, True),
                 _field_time(word, "end", path, True), before=" " if index else "",
                 extra=word)


def _dump_vosk(transcript: Transcript) -> str:
    style = transcript.meta.get("json_style", _NEW_JSON)
    records = [_vosk_record(cue) for cue in transcript.cues]
    layout = transcript.meta.get("layout", "list" if len(records) != 1 else "object")
    if layout == "lines":
        return style.dumps_lines(records)
    text = style.dumps(records if layout == "list" else records[0])
    return text + ("\n" if style.final_newline else "")


def _vosk_record(cue: Cue) -> dict:
    record = dict(cue.extra)
    if not record:
        record = {"result": []} if cue.tokens and cue.tokens[0].start is not None else {}
    if isinstance(record.get("result"), list):
        words = []
        for token in cue.tokens:
            word = dict(token.extra)
            _put(word, "word", token.text)
            _put(word, "start", token.start)
            _put(word, "end", token.end)
            words.append(word)
        if words != cue.extra.get("result"):
            record["text"] = " ".join(token.text for token in cue.tokens)
        record["result"] = words
    elif "text" in record or cue.tokens:
        _put(record, "text", cue.text)
    return record


# ----------------------------------------------------------------------------- NeMo

def _read_nemo(text: str, name: str, meta: dict, text_key: str) -> Transcript:
    reader = functools.partial(_nemo_cues, text_key=text_key)
    return _read_json_records(text, name, meta, "nemo", reader)


def _nemo_cues(layout: str, values: list, text_key: str) -> tuple[list[Cue], dict]:
    """One cue per manifest line (a one-line manifest parses as a single document)."""
    meta = {"text_key": text_key}
    if layout == "document":
        return [_nemo_cue(values[0][1], (), text_key)], meta
    return [_nemo_cue(v, (i,), text_key) for i, (_, v) in enumerate(values)], meta


def _nemo_cue(record: Any, path: tuple, text_key: str) -> Cue:
    record = _expect_object(record, path, "a manifest object (one JSON object per line)")
    return Cue(None, None, split_tokens(_field_text(record, text_key, path)), extra=record)


def _dump_nemo(transcript: Transcript, output_key: str | None) -> str:
    style = transcript.meta.get("json_style", JsonStyle())
    key = output_key or transcript.meta.get("text_key", "pred_text")
    records = []
    for cue in transcript.cues:
        record = dict(cue.extra)
        _put(record, key, cue.text)
        records.append(record)
    return style.dumps_lines(records)


# ----------------------------------------------------------------------------- conversion

def convert(transcript: Transcript, format: str) -> Transcript:
    """The same words, marks and timings in another format.

    Subtitles need cue times (text and NeMo have none). Markup, cue settings, identifiers,
    VTT NOTE/STYLE blocks, the source's JSON records and cues with neither text nor times
    (Vosk partial results) are dropped; line breaks inside cues are kept between subtitle
    formats. To text, a file becomes one line (NeMo and text
    keep one line per cue); to Whisper, segments follow the leading-space convention and
    carry words when every token has times.
    """
    if format == transcript.format:
        return transcript
    if format not in ("text", "srt", "vtt", "whisper"):
        raise ValueError(f"can convert to text, srt, vtt or whisper, not {format!r}")
    newline = transcript.meta.get("newline", "\n")
    kept = [c for c in transcript.cues if c.tokens or c.start is not None]
    if format in SUBTITLES and any(c.start is None or c.end is None for c in kept):
        raise ValueError(f"{transcript.format} has no cue times; cannot write {format}")
    if format == "text":
        groups = ([[c] for c in kept] if transcript.format in INDEPENDENT_CUES
                  else [kept] if kept else [])
        cues = tuple(Cue(None, None, _plain_tokens(_joined(g), "", False)) for g in groups)
        return Transcript("text", cues, {"newline": newline, "trailer": "\n"})
    breaks = transcript.format in SUBTITLES and format in SUBTITLES
    first = " " if format == "whisper" else ""
    cues = tuple(Cue(c.start, c.end, _plain_tokens(c.tokens, first, breaks)) for c in kept)
    return Transcript(format, cues, {"newline": newline})


def _joined(cues: Sequence[Cue]) -> list[Token]:
    """The tokens of several cues, a space between cues."""
    tokens = []
    for index, cue in enumerate(cues):
        for k, token in enumerate(cue.tokens):
            tokens.append(replace(token, before=" " + token.before) if index and not k
                          else token)
    return tokens


def _plain_tokens(tokens: Sequence[Token], first: str, line_breaks: bool) -> tuple[Token, ...]:
    """Tokens without markup or records; gaps become "", " " (or "\\n" when kept)."""
    out: list[Token] = []
    gap = ""
    for token in tokens:
        gap += token.before
        if token.text:
            space = "\n" if line_breaks and "\n" in gap else " " if _has_space(gap) else ""
            out.append(Token(token.text, token.start, token.end, space if out else first))
            gap = ""
        gap += token.after
    return tuple(out)


def _has_space(text: str) -> bool:
    return any(char.isspace() for char in text)


# ----------------------------------------------------------------------------- restoring

def restore_transcript(transcript: Transcript, punctuator,
                       options: RestoreOptions | None = None) -> Transcript:
    """Restore punctuation and casing of every token, with context across cues.

    All tokens of the file (of each line for text and NeMo) go to the model as one word
    sequence; each token is then written as `text.render` of its own words with their labels,
    the sentence state carried over from the token before it. A token without words (a
    dialogue dash) and all timings, cues, whitespace and markup stay as they are. Quotes and
    brackets at a word's edges are dropped, as by `Punctuator.restore` (`text.canonical`).

    Args:
        transcript: any transcript.
        punctuator: a `Punctuator` (or an object with its `predict_batch`, `inventory` and
            `artifact.lexicon`). A pause-aware one is given the pauses between words where
            the transcript has word or cue timings (`word_pauses`), unless options.pauses is
            False.
        options: as for `Punctuator.restore`.

    Returns:
        The transcript with restored token texts.
    """
    options = options or RestoreOptions()
    inventory = punctuator.inventory
    parsed = [[parse(token.text, inventory) for token in cue.tokens] for cue in transcript.cues]
    documents = [d for d in _documents(transcript) if any(len(p) for c in d for p in parsed[c])]
    given = [_concat([p for c in doc for p in parsed[c]]) for doc in documents]
    timing = {}
    if options.pauses and getattr(punctuator, "pause_aware", False):
        timing["pauses"] = [word_pauses(transcript, parsed, doc) for doc in documents]
    predictions = punctuator.predict_batch([g.words for g in given], options.batch_size,
                                           **timing)
    texts: dict[tuple[int, int], str] = {}
    for doc, labelled, prediction in zip(documents, given, predictions):
        labelled = merge_labels(labelled, prediction, options)
        if options.close_text:
            labelled = close_text(labelled, prediction, inventory)
        keys = [(c, t) for c in doc for t in range(len(parsed[c]))]
        counts = [len(parsed[c][t]) for c, t in keys]
        rendered = _render_tokens(labelled, counts, punctuator, options)
        texts.update((k, r) for k, r in zip(keys, rendered) if r is not None)
    return _with_texts(transcript, texts)


def word_pauses(transcript: Transcript, parsed, doc: list[int]) -> np.ndarray:
    """(n_words,) seconds of silence after each word of the cues `doc` (NaN where unknown),
    for a PauseAware model.

    A token's times are its own (word-timed Whisper and Vosk files) or, for subtitles, the
    cue's start for its first token with words and the cue's end for its last one; the pause
    after a token's last word is the next token's start minus its end. Words inside a token
    and tokens without times have no pause.
    """
    spans: list[tuple[int, float | None, float | None]] = []  # (n_words, start, end)
    for c in doc:
        cue = transcript.cues[c]
        with_words = [t for t in range(len(cue.tokens)) if len(parsed[c][t])]
        for t in with_words:
            token = cue.tokens[t]
            start = token.start if token.start is not None else (
                cue.start if t == with_words[0] else None)
            end = token.end if token.end is not None else (
                cue.end if t == with_words[-1] else None)
            spans.append((len(parsed[c][t]), start, end))
    out = np.full(sum(n for n, _, _ in spans), np.nan)
    position = 0
    for (n, _, end), (_, start, _) in zip(spans, spans[1:]):
        position += n
        if end is not None and start is not None:
            out[position - 1] = max(start - end, 0.0)
    return out


def _with_texts(transcript: Transcript, texts: dict[tuple[int, int], str]) -> Transcript:
    """The transcript with token (cue index, token index) written as texts[...]."""
    cues = []
    for c, cue in enumerate(transcript.cues):
        tokens = tuple(replace(token, text=texts[(c, t)]) if (c, t) in texts else token
                       for t, token in enumerate(cue.tokens))
        cues.append(replace(cue, tokens=tokens))
    return replace(transcript, cues=tuple(cues))


def _documents(transcript: Transcript) -> list[list[int]]:
    """Cue indexes of each text the model sees as a whole."""
    if "documents" in transcript.meta:  # set by the reader (transformers pipeline results)
        return transcript.meta["documents"]
    indexes = list(range(len(transcript.cues)))
    if transcript.format in INDEPENDENT_CUES:
        return [[i] for i in indexes]
    return [indexes]


def _render_tokens(labelled: Labelled, counts: list[int], punctuator,
                   options: RestoreOptions) -> list[str | None]:
    """Each token's words rendered with their labels (None for a token without words)."""
    inventory = punctuator.inventory
    sentence_start, offset, out = True, 0, []
    for count in counts:
        if not count:
            out.append(None)
            continue
        piece = _slice(labelled, offset, offset + count)
        out.append(render(piece, inventory, lexicon=punctuator.artifact.lexicon,
                          sentence_case=options.sentence_case and options.case,
                          sentence_start=sentence_start))
        sentence_start = piece.post[-1] in inventory.sentence_final
        offset += count
    return out


_LABEL_FIELDS = ("words", "post", "case", "pre", "forms", "abbreviated")


def _concat(parts: list[Labelled]) -> Labelled:
    return Labelled(*(tuple(v for p in parts for v in getattr(p, f)) for f in _LABEL_FIELDS))


def _slice(labelled: Labelled, start: int, stop: int) -> Labelled:
    return labelled.slice(start, stop)


# ----------------------------------------------------------------------------- resegmenting

@dataclass(frozen=True)
class _Timed:
    """A token placed on the time line (its `before` is the separator: "", " ") and the
    mark after its last word."""

    token: Token
    start: float
    end: float
    mark: str


def resegment(transcript: Transcript, options: ResegmentOptions | None = None,
              language: str | Inventory = "en") -> Transcript:
    """Rebuild subtitle cues at sentence boundaries within line, length and duration limits.

    Word times come from the tokens when every token of a cue has them (Whisper or Vosk
    converted to subtitles); otherwise each cue's time is shared out among its tokens in
    proportion to their characters. A cue holds whole sentences while they fit together
    (so that a short "Yes." does not flash by alone); a sentence that does not fit in one cue
    is cut after its last marked word in the second half of the cue, else after the last
    word that fits. Lines are filled greedily. Times are made monotone (a token never
    starts before the previous one ends), and cue markup, settings and identifiers are
    dropped (SRT cues are numbered again; VTT NOTE blocks move to the first new cue that
    starts at or after the cue they preceded).

    Args:
        transcript: an SRT or VTT transcript with cue times.
        options: the limits (default ResegmentOptions()).
        language: the inventory whose marks end sentences.
    """
    options = options or ResegmentOptions()
    if transcript.format not in SUBTITLES:
        raise ValueError(f"resegment builds srt or vtt cues; convert the {transcript.format} "
                         f"transcript first")
    inventory = get_inventory(language)
    timed = _timed_tokens(transcript, inventory)
    groups = _group(timed, options, inventory.sentence_final)
    cues = tuple(_build_cue(group, options) for group in groups)
    meta = dict(transcript.meta)
    if meta.get("blocks"):
        meta["blocks"] = _move_blocks(meta["blocks"], transcript.cues, cues)
    return replace(transcript, cues=cues, meta=meta)


def _timed_tokens(transcript: Transcript, inventory: Inventory) -> list[_Timed]:
    """Every token with text, without markup, on a monotone time line."""
    timed: list[_Timed] = []
    previous_end = 0.0
    for number, cue in enumerate(transcript.cues, start=1):
        if cue.start is None or cue.end is None:
            raise ValueError(f"cue {number} has no times; cannot resegment")
        tokens = _plain_tokens(cue.tokens, " " if timed else "", False)
        if inventory.word_unit == "char" and tokens:
            tokens = (replace(tokens[0], before=""),) + tokens[1:]
        spans = _token_spans(tokens, cue)
        for token, (start, end) in zip(tokens, spans):
            start = max(start, previous_end)
            previous_end = end = max(end, start)
            words = parse(token.text, inventory)
            timed.append(_Timed(token, start, end, words.post[-1] if len(words) else NULL))
    return timed


def _token_spans(tokens: Sequence[Token], cue: Cue) -> list[tuple[float, float]]:
    """Word times when every token has them, else the cue's time shared by characters."""
    if all(t.start is not None and t.end is not None for t in tokens):
        return [(t.start, t.end) for t in tokens]
    total = sum(len(t.text) for t in tokens) or 1
    spans, done = [], 0
    for token in tokens:
        begin = cue.start + (cue.end - cue.start) * done / total
        done += len(token.text)
        spans.append((begin, cue.start + (cue.end - cue.start) * done / total))
    return spans


def _group(timed: list[_Timed], options: ResegmentOptions,
           final: frozenset[str]) -> list[list[_Timed]]:
    """Tokens -> cues: whole sentences while they fit, a longer sentence cut to fit."""
    groups: list[list[_Timed]] = []
    current: list[_Timed] = []
    for sentence in _sentences(timed, final):
        if current and _fits(current + sentence, options):
            current += sentence
            continue
        if current:
            groups.append(current)
        *full, current = _cut_to_fit(sentence, options)
        groups.extend(full)
    if current:
        groups.append(current)
    return groups


def _sentences(timed: list[_Timed], final: frozenset[str]) -> list[list[_Timed]]:
    sentences: list[list[_Timed]] = [[]]
    for item in timed:
        sentences[-1].append(item)
        if item.mark in final:
            sentences.append([])
    return [s for s in sentences if s]


def _cut_to_fit(sentence: list[_Timed], options: ResegmentOptions) -> list[list[_Timed]]:
    """A sentence in pieces that fit, each cut after a marked word where possible."""
    pieces: list[list[_Timed]] = []
    current: list[_Timed] = []
    for item in sentence:
        while current and not _fits(current + [item], options):
            cut = _break_point(current)
            pieces.append(current[:cut])
            current = current[cut:]
        current.append(item)
    return pieces + [current]


def _fits(group: list[_Timed], options: ResegmentOptions) -> bool:
    if len(group) == 1:
        return True
    duration = group[-1].end - group[0].start
    lines = _wrap(group, options.max_chars_per_line)
    return len(lines) <= options.max_lines and duration <= options.max_duration


def _break_point(group: list[_Timed]) -> int:
    """Where to cut a group that overflows: after its last marked word in the second half."""
    for index in range(len(group) - 1, len(group) // 2 - 1, -1):
        if group[index].mark != NULL:
            return index + 1
    return len(group)


def _wrap(group: list[_Timed], width: int) -> list[list[_Timed]]:
    """Greedy lines of at most `width` characters (a longer word stands alone)."""
    lines: list[list[_Timed]] = []
    length = 0
    for item in group:
        added = len(item.token.before) + len(item.token.text)
        if lines and length + added <= width:
            lines[-1].append(item)
            length += added
        else:
            lines.append([item])
            length = len(item.token.text)
    return lines


def _build_cue(group: list[_Timed], options: ResegmentOptions) -> Cue:
    tokens = []
    for number, line in enumerate(_wrap(group, options.max_chars_per_line)):
        for k, item in enumerate(line):
            before = ("\n" if number else "") if k == 0 else item.token.before
            tokens.append(replace(item.token, before=before, after=""))
    return Cue(group[0].start, group[-1].end, tuple(tokens))


def _move_blocks(blocks: tuple, old: tuple[Cue, ...], new: tuple[Cue, ...]) -> tuple:
    """NOTE/STYLE/REGION blocks placed before the first new cue starting at or after the
    cue they preceded (blocks before the first cue stay first)."""
    starts = [cue.start for cue in new]
    moved = []
    for index, text in blocks:
        if index == 0:
            moved.append((0, text))
        elif index >= len(old):
            moved.append((len(new), text))
        else:
            moved.append((bisect.bisect_left(starts, old[index].start), text))
    return tuple(moved)
