"""Reading and writing transcript files: format detection and dispatch to each format."""

from __future__ import annotations

import gzip
import itertools
import re
import zlib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, TextIO

from punctum.corpora import bom_encoding, decode_with_bom
from punctum.fileio import NotUtf8Error
from punctum.formats import asr
from punctum.formats.ass import dump_ass, is_ass, read_ass
from punctum.formats.assemblyai import dump_assemblyai, is_assemblyai, read_assemblyai
from punctum.formats.deepgram import dump_deepgram, is_deepgram, read_deepgram
from punctum.formats.eaf import dump_eaf, looks_like_eaf, read_eaf
from punctum.formats.google_stt import dump_google, is_google, read_google
from punctum.formats.json_records import (
    _dump_nemo,
    _dump_vosk,
    _dump_whisper,
    _load_json,
    _read_nemo,
    _read_vosk,
    _read_whisper,
)
from punctum.formats.lrc import dump_lrc, looks_like_lrc, opens_lrc, read_lrc
from punctum.formats.sherpa import dump_sherpa, is_sherpa, read_sherpa
from punctum.formats.subtitles import (
    _dump_sbv,
    _dump_srt,
    _dump_text,
    _dump_vtt,
    _is_timing,
    _read_plain,
    _read_sbv,
    _read_srt,
    _read_vtt,
    is_sbv_timing,
)
from punctum.formats.tables import dump_table, read_table
from punctum.formats.textgrid import dump_textgrid, looks_like_textgrid, read_textgrid
from punctum.formats.transcript import FORMATS, TABLES, Transcript, shown
from punctum.formats.ttml import dump_ttml, looks_like_ttml, read_ttml
from punctum.formats.watson import dump_watson, is_watson, read_watson
from punctum.formats.whispercpp import dump_whispercpp, is_whispercpp, read_whispercpp

_SUFFIXES = {".srt": "srt", ".vtt": "vtt", ".sbv": "sbv", ".ass": "ass", ".ssa": "ass",
             ".lrc": "lrc", ".ttml": "ttml", ".dfxp": "ttml", ".eaf": "eaf",
             ".txt": "text", ".ctm": "ctm", ".csv": "csv", ".tsv": "tsv",
             ".textgrid": "textgrid"}
# timed-text formats that look like text but are not: refused by name (also before .gz)
UNREAD = {".sub": "MicroDVD/SubViewer", ".scc": "Scenarist SCC", ".stl": "EBU STL"}


# ----------------------------------------------------------------------------- public API

def detect_format(path: str | Path) -> str:
    """The format of a file, by its extension (.srt, .vtt, .sbv, .ass, .ssa, .txt, .ctm, .csv,
    .tsv, .TextGrid, also before .gz) or else by its content (gzip's decompressed).

    JSON content is told apart by its keys: "segments" (Whisper), a "transcription" list
    (whisper.cpp), "result", "partial" or a lone "text" (Vosk), "audio_filepath" or
    "pred_text" (NeMo manifest), "text" with "tokens" and "timestamps" (sherpa-onnx), "results"
    with "channels" (Deepgram), "text" with "words" or "audio_url" (AssemblyAI), "results"
    with "alternatives" (Google Speech-to-Text), "results" with "final" (IBM Watson), "chunks"
    (a transformers pipeline), "t" with "w" or "b" and "d" (pocketsphinx). Lines of CTM fields
    are CTM. Kaldi's `text` files look like plain text: give their format.
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix == ".gz":  # x.srt.gz: the extension before .gz
        suffix = Path(path.stem).suffix.lower()
    if suffix in UNREAD:  # (restored as text, their markup and times would be mangled)
        raise ValueError(f"{path}: {UNREAD[suffix]} is not a format punctum reads; convert "
                         f"it to SRT or WebVTT first (e.g. ffmpeg -i {path.name} out.srt), "
                         f"or give --format text to restore it as plain text")
    if suffix in _SUFFIXES:
        if not path.is_file():
            raise FileNotFoundError(f"{path}: no such file")
        if suffix == ".txt":  # subtitles, CTM or JSON saved as .txt are those still
            return _format_in_text_file(path)
        return _SUFFIXES[suffix]
    return sniff_format(_normalise_newlines(_read_text(path, errors="replace"))[0], str(path))


def _format_in_text_file(path: Path, head_bytes: int = 65_536) -> str:
    """The format of a .txt file (recognisers' output saved with "> out.txt"): "srt",
    "vtt" or "sbv" when its first lines are a subtitle file's, "ctm" when they are CTM lines, a
    JSON format when it starts as JSON and all of it parses as a transcript (as
    `sniff_format` tells them), else "text"; only its head is read unless it starts as
    JSON (gzip's decompressed)."""
    with open(path, "rb") as handle:
        head = handle.read(head_bytes)
    if head.startswith(b"\x1f\x8b"):
        with gzip.open(path, "rb") as handle:
            try:
                head = handle.read(head_bytes)
            except (OSError, EOFError, zlib.error):
                return "text"  # the reader names the damage
    text = _normalise_newlines(head.decode(bom_encoding(head) or "utf-8", errors="replace"))[0]
    if _JSON_START.match(text.lstrip("\ufeff \t\r\n")):
        text = _normalise_newlines(_read_text(path, errors="replace"))[0]
    return _text_or_other(text, str(path))


def _text_or_other(text: str, name: str) -> str:
    """`sniff_format` of a .txt file's text: a JSON format only where it parses as JSON
    transcript records (JSON of another kind, or text that only starts like JSON, is
    text)."""
    try:
        format = sniff_format(text, name)
    except ValueError:  # (JSON that is not a transcript's)
        return "text"
    if format == "ctm":
        lines = [line for line in text.lstrip("\ufeff \t\r\n").split("\n", 200)[:200]
                 if line.strip() and not line.startswith(";;")][:3]  # (";;": comments)
        if not all(5 <= len(line.split()) <= 6 for line in lines):
            return "text"  # (prose whose third and fourth words are numbers: "rose 2.5 3")
    return format


def _subtitle_start(text: str) -> str | None:
    """"vtt", "srt" or "sbv" when a text starts as a subtitle file does, else None."""
    head = text.lstrip("\ufeff \t\r\n")
    if head.startswith("WEBVTT") and (head[6:7] in ("", "\n", "\r") or (
            head[6:7] in (" ", "\t") and "-->" in head)):  # ("WEBVTT files hold...": text)
        return "vtt"
    first_lines = [line.strip() for line in head.split("\n", 2)[:2]]
    if is_sbv_timing(first_lines[0]):
        return "sbv"
    return "srt" if any(_is_timing(line, "srt") for line in first_lines) else None


def sniff_format(text: str, name: str = "<string>") -> str:
    """The format of a file's text from its content (see `detect_format`).

    Text that starts like JSON but does not parse is plain text, unless `name` ends in
    .json or .jsonl (then the JSON error, naming the line, is raised).
    """
    head = text.lstrip("\ufeff \t\r\n")
    subtitles = _subtitle_start(head)
    if subtitles:
        return subtitles
    if looks_like_textgrid(head):
        return "textgrid"
    if is_ass(head):
        return "ass"
    if looks_like_lrc(head):
        return "lrc"
    if looks_like_ttml(head):
        return "ttml"
    if looks_like_eaf(head):
        return "eaf"
    if head.startswith("<?xml"):
        raise ValueError(f"{name}: an XML document that is neither TTML/DFXP nor ELAN, which "
                         f"punctum does not read; give --format text to restore it as text")
    if asr.looks_like_ctm(head.split("\n", 3)[:3]):
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


# The start of a JSON transcript: an object (a key or its end next) or a list of objects
# or lists; not a "[laughter]" or "{noise}" tag, nor a list of numbers or strings.
_JSON_START = re.compile(r'(?:\{\s*(?:"|\}|$)|\[\s*(?:\{|\[|\]|$))')


def sniff_lines(lines: Iterable[str], name: str = "<stdin>") -> tuple[str, Iterator[str]]:
    """The format of text arriving line by line (a pipe), and all its lines again.

    Decided from as few first lines as it takes, so that a live pipe of text is not held
    back: a line of text is text; WEBVTT opens WebVTT; a timing line, or a number and then a
    timing line, opens SRT; an SBV timing line opens SBV; three CTM lines are CTM; JSON (a
    first line that opens an object, or a list of objects: `{`, `{"text": ...`, `[{`) is
    read whole and told apart as `sniff_format` does. Tables and Kaldi text look like text:
    give their format.
    """
    lines = iter(lines)
    head: list[str] = []
    for line in lines:
        head.append(line)
        if line.strip():
            break
    first = head[-1].strip().lstrip("\ufeff") if head else ""
    rest = itertools.chain(head, lines)
    if not first:
        return "text", rest
    if first == "WEBVTT" or first.startswith(("WEBVTT ", "WEBVTT\t")) and _vtt_goes_on(
            head, lines):  # ("WEBVTT files hold captions" is a line of text)
        return "vtt", itertools.chain(head, lines)
    if _is_timing(first, "srt") or first.isdigit() and _is_timing(_peek(head, lines), "srt"):
        return "srt", itertools.chain(head, lines)
    if is_sbv_timing(first):
        return "sbv", itertools.chain(head, lines)
    if first.startswith(";") and not first.startswith(";;"):  # an ASS script's comments?
        _comments_head(head, lines)
        first = head[-1].strip()
    if first.startswith(('File type = "ooTextFile', "<?xml", "<!--", "<!DOCTYPE", "<tt")) or \
            is_ass(first) or opens_lrc(first):  # a TextGrid, XML, a script, lyrics: read whole
        whole = head + list(lines)
        return sniff_format("\n".join(whole), name), iter(whole)
    if _JSON_START.match(first):
        whole = head + list(lines)
        return sniff_format("\n".join(whole), name), iter(whole)
    if asr.looks_like_ctm([first], timed=False) or first.startswith(";;"):  # a word line,
        if asr.looks_like_ctm(_ctm_head(head, lines)):  # or a comment: three lines decide
            return "ctm", itertools.chain(head, lines)
    return "text", itertools.chain(head, lines)


def _comments_head(head: list[str], lines: Iterator[str], most: int = 50) -> None:
    """`head` grown by the next lines while they are blank or ";" comments (as an ASS script
    may open), up to `most` lines: its last line is then the first of another kind."""
    while len(head) < most:
        line = next(lines, None)
        if line is None:
            return
        head.append(line)
        if line.strip() and not line.lstrip().startswith(";"):
            return


def _ctm_head(head: list[str], lines: Iterator[str], words: int = 3,
              most: int = 100) -> list[str]:
    """`head` grown by the next lines until it holds `words` lines that are not CTM
    comments (";; ...") or blank, or `most` lines in all: enough to tell CTM apart."""
    def counted() -> int:
        return sum(bool(line.strip()) and not line.lstrip().startswith(";;") for line in head)

    while counted() < words and len(head) < most:
        line = next(lines, None)
        if line is None:
            break
        head.append(line)
    return head


def _vtt_goes_on(head: list[str], lines: Iterator[str], most: int = 20) -> bool:
    """After a first line "WEBVTT <text>": whether the next line that is not blank is one of
    WebVTT's (a header "Kind: captions", a NOTE, STYLE or REGION block, a cue's timing line,
    or an identifier and then one); the lines read are kept in `head`."""
    for _ in range(most):
        line = next(lines, None)
        if line is None:
            return False
        head.append(line)
        text = line.strip()
        if not text:
            continue
        if "-->" in text or re.match(r"[\w-]+:\s", text) or text.startswith(
                ("NOTE", "STYLE", "REGION")):
            return True
        return "-->" in _peek(head, lines)
    return False


def _peek(head: list[str], lines: Iterator[str]) -> str:
    """The next line, read and kept in `head` ("" at the end)."""
    line = next(lines, None)
    if line is None:
        return ""
    head.append(line)
    return line.strip()


def read(path: str | Path, format: str = "auto", text_key: str | None = None,
         errors: str = "strict") -> Transcript:
    """Read a subtitle, ASR-JSON, manifest or text file.

    Args:
        path: the file.
        format: one of FORMATS, or "auto" (`detect_format`).
        text_key: the key or column that holds the text to restore (NeMo manifests:
            default pred_text; CSV and TSV tables: default the first column named text,
            transcript, transcription, utterance, sentence or pred_text).
        errors: "strict" (bytes that are not UTF-8 are an error) or "replace" (U+FFFD).

    Raises:
        FileNotFoundError: no such file.
        ValueError: malformed content, naming the file and line.
    """
    return _parse(_read_text(path, errors), format, str(path), text_key)


def loads(text: str, format: str = "auto", name: str = "<string>",
          text_key: str | None = None) -> Transcript:
    """Read a transcript from a string (`read` for text already in memory)."""
    return _parse(text, format, name, text_key)


def dumps(transcript: Transcript, output_key: str | None = None) -> str:
    """The file text of a transcript (see the module docstring for what is kept).

    Args:
        transcript: any transcript.
        output_key: the manifest key or table column the text is written to (NeMo, CSV,
            TSV; default: the key it was read from; a new column is added last).
    """
    writers = {"text": _dump_text, "srt": _dump_srt, "vtt": _dump_vtt, "sbv": _dump_sbv,
               "ass": dump_ass, "lrc": dump_lrc, "ttml": dump_ttml, "eaf": dump_eaf,
               "sherpa": dump_sherpa, "deepgram": dump_deepgram,
               "assemblyai": dump_assemblyai, "google": dump_google, "watson": dump_watson,
               "whisper": _dump_whisper, "vosk": _dump_vosk, "whispercpp": dump_whispercpp,
               "textgrid": dump_textgrid,
               **asr.WRITERS}
    if transcript.format == "nemo":
        text = _dump_nemo(transcript, output_key)
    elif transcript.format in TABLES:
        text = dump_table(transcript, output_key)
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


def _parse(raw: str, format: str, name: str, text_key: str | None) -> Transcript:
    """The transcript in `raw`, a file's text as decoded: its newlines normalised (see
    `_normalise_newlines`), except in tables, whose rows keep their own line endings."""
    text, meta = _normalise_newlines(raw)
    if format == "auto":  # (subtitles, CTM or JSON saved as .txt: as in `detect_format`)
        format = _SUFFIXES.get(Path(name).suffix.lower()) or sniff_format(text, name)
        format = _text_or_other(text, name) if format == "text" else format
    if format in TABLES:  # an Excel cell holds "\n" in a file of "\r\n" rows
        text, meta = raw.removeprefix("\ufeff"), {**meta, "newline": "\n"}
    readers = {"text": _read_plain, "srt": _read_srt, "vtt": _read_vtt, "sbv": _read_sbv,
               "ass": read_ass, "lrc": read_lrc, "ttml": read_ttml, "sherpa": read_sherpa,
               "deepgram": read_deepgram, "assemblyai": read_assemblyai,
               "google": read_google, "watson": read_watson,
               "whisper": _read_whisper, "vosk": _read_vosk, "whispercpp": read_whispercpp,
               **asr.READERS}
    if format == "nemo":
        return _read_nemo(text, name, meta, text_key or "pred_text")
    if format in TABLES:
        return read_table(text, name, meta, format, text_key)
    if format == "textgrid":
        return read_textgrid(text, name, meta, text_key)
    if format == "eaf":
        return read_eaf(text, name, meta, text_key)
    if format not in readers:
        raise ValueError(f"format must be 'auto' or one of {FORMATS}, got {format!r}")
    return readers[format](text, name, meta)


def _read_text(path: str | Path, errors: str = "strict") -> str:
    """A file's UTF-8 text (gzip's decompressed), or UTF-16 or UTF-32 text where a byte-order mark
    says so (Praat's TextGrids, Windows "Unicode" subtitles); errors name the line."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such file")
    if path.is_dir():
        raise ValueError(f"{path}: is a directory, expected a file")
    if errors not in ("strict", "replace"):
        raise ValueError(f"errors must be 'strict' or 'replace', got {errors!r}")
    data = _gunzip(path.read_bytes(), path)
    if bom_encoding(data) is not None:  # UTF-16 or UTF-32, the mark dropped
        return decode_with_bom(data, str(path), errors)
    try:
        text = data.decode("utf-8", errors=errors)
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        raise NotUtf8Error(f"{path}:{line}: not valid UTF-8 ({error.reason})") from None
    return text


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
    the writer puts them back (a file with any CRLF is written with CRLF throughout; one
    with CR alone, classic Mac OS's and allowed in WebVTT, with CR)."""
    text = text.removeprefix("\ufeff") if (bom := text.startswith("\ufeff")) else text
    if "\r\n" in text:
        return text.replace("\r\n", "\n"), {"bom": bom, "newline": "\r\n"}
    if "\r" in text and "\n" not in text:
        return text.replace("\r", "\n"), {"bom": bom, "newline": "\r"}
    return text, {"bom": bom, "newline": "\n"}


def _unread_json(first: dict) -> tuple[str, str, str] | None:
    """(service, why, where its transcript is) for recognisers' JSON that punctum does not
    read: Amazon Transcribe, Azure Speech batch transcription, Rev.ai, Speechmatics,
    ElevenLabs (which punctuate their own transcripts)."""
    punctuated = "the service punctuates its own transcripts"
    results = first.get("results")
    if isinstance(results, dict) and {"transcripts", "items"} <= set(results):
        return "Amazon Transcribe", punctuated, "results.transcripts[0].transcript"
    if "combinedRecognizedPhrases" in first or "recognizedPhrases" in first:
        return "Azure Speech", punctuated, "combinedRecognizedPhrases[0].lexical"
    if isinstance(first.get("monologues"), list):
        return "Rev.ai", punctuated, "monologues' elements"
    words = first.get("words")
    if isinstance(words, list) and any(isinstance(w, dict) and w.get("type") in (
            "spacing", "audio_event") for w in words[:50]):
        return "ElevenLabs", punctuated, "text"
    listed = [r for r in results if isinstance(r, dict)] if isinstance(results, list) else []
    if any(r.get("type") in ("word", "punctuation") for r in listed):
        return "Speechmatics", punctuated, "results' words"
    return None


def _classify_json(values: list[tuple[int, Any]], name: str) -> str:
    first = values[0][1] if values else {}
    if isinstance(first, list):
        first = first[0] if first else {}
    if not isinstance(first, dict):
        first = {}
    if "segments" in first:
        return "whisper"
    if is_whispercpp(first):
        return "whispercpp"
    if {"result", "partial", "alternatives"} & set(first) or set(first) == {"text"}:
        return "vosk"
    if {"audio_filepath", "pred_text"} & set(first):
        return "nemo"
    if is_sherpa(first):
        return "sherpa"
    if is_watson(first):
        return "watson"
    unread = _unread_json(first)
    if unread is not None:
        service, reason, where = unread
        raise ValueError(f"{name}:{values[0][0] if values else 1}: {service} JSON is not a "
                         f"format punctum reads ({reason}); to restore its transcript, save "
                         f"its {where} as text")
    if is_deepgram(first):
        return "deepgram"
    if is_assemblyai(first):
        return "assemblyai"
    if is_google(first):
        return "google"
    found = asr.classify_json(first)
    if found:
        return found
    keys = ", ".join(shown(key, 20) for key in list(first)[:6]) or "none"
    raise ValueError(f"{name}:{values[0][0] if values else 1}: cannot tell which JSON "
                     f"format this is (its keys: {keys}); give the format (whisper, "
                     f"whispercpp, vosk, nemo, hf, sphinx, sherpa, deepgram, assemblyai, google, "
                     f"watson; or text, to restore it as text)")
