"""Restore many files: a folder of inputs mirrored into an output folder, resumable and atomic.

    punctum restore --input-dir transcripts/ --output-dir restored/ --jobs 2

`FileOptions` says how one input is read, restored and written. `restore_source` restores one
input (a file, stdin or text from the command line) onto an open stream, and `restore_to_path`
into a file, atomically: the output goes to a hidden temporary file in the destination folder
and is renamed over the destination only when complete, so a killed run never leaves a partial
output. `plan_batch` lists the files under a folder (hidden and temporary files left out) and
their destinations, setting aside those whose output already exists; `run_batch` restores the
rest in worker processes that each load the model once. A bad file never stops the job: its
one-line error is part of the returned `BatchReport`.

One run at a time per output folder: a run starts by removing the temporary files that a killed
run left there.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import logging
import os
import re
import sys
import zlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TextIO

from punctum import formats
from punctum.corpora import bom_encoding, looks_utf16
from punctum.fileio import TEMP_SUFFIX, atomic_writer, printable, standard_stream
from punctum.formats.annotations import separate, words_outside
from punctum.references import decode_references
from punctum.runtime import LONG_LINE_PART, RestoreOptions, cpu_count
from punctum.text import (
    ends_sentence,
    marks_after_word,
    separator,
    whitespace_tokens,
    words_as_written,
)

log = logging.getLogger(__name__)

# the suffixes of the transcript formats punctum reads (before .gz too)
_TRANSCRIPT_SUFFIXES = frozenset({".srt", ".vtt", ".sbv", ".ass", ".ssa", ".lrc", ".ttml",
                                  ".dfxp", ".eaf", ".textgrid",
                                  ".ctm", ".json", ".jsonl", ".csv", ".tsv", ".txt"})

OUTPUT_FORMATS = ("srt", "vtt", "text", "json")
PARAGRAPH_CHUNK_WORDS = 20_000  # --paragraphs: words restored at a time
JSON_FORMATS = ("whisper", "whispercpp", "vosk", "nemo", "sphinx", "hf", "sherpa", "deepgram",
                "assemblyai", "google", "watson")
# Names of files that are being written by another program (editors, downloads) or by us.
_TEMPORARY = re.compile(r"(~|\.(tmp|temp|swp|swo|part|partial|crdownload|punctum-tmp))$|^#.*#$",
                        re.IGNORECASE)


# ----------------------------------------------------------------------------- one input

@dataclass(frozen=True)
class FileOptions:
    """How each input is read, restored and written (the options of `punctum restore`).

    Args:
        restore: marks and case options for the model.
        input_format: "auto" (by extension and content; .gz input is text) or one of
            `formats.FORMATS`.
        to: output format: None (the input's), "srt", "vtt", "text" or "json" (the input's
            JSON format, Whisper JSON for subtitles; for text input the same as `as_json`).
        as_json: text input: one JSON object per line (text, words, marks, cases, probs).
        layout: rebuild subtitle cues within these limits (srt/vtt output only), or None.
        text_key: NeMo manifests and CSV/TSV tables: the key or column to restore (None: the
            format's default, see `formats.read`).
        output_key: the key or column to write (None: `text_key`).
        errors: bytes that are not UTF-8: "strict" (an error) or "replace" (U+FFFD).
        line_buffered: text input: restore and write each line as soon as it is read
            (a live pipe), not 64 lines at a time.
        stream_lookahead: text input as one stream of words (line breaks are not text
            ends): each word written, with its mark and case, once this many words have
            followed it, a line break after each sentence (`Punctuator.stream`); None: off.
        paragraphs: text input: each paragraph (lines up to a blank one) is one text, its
            line breaks kept (a recogniser's segment a line), not each line.
    """

    restore: RestoreOptions = field(default_factory=RestoreOptions)
    input_format: str = "auto"
    to: str | None = None
    as_json: bool = False
    layout: formats.ResegmentOptions | None = None
    text_key: str | None = None
    output_key: str | None = None
    errors: str = "strict"
    line_buffered: bool = False
    stream_lookahead: int | None = None
    paragraphs: bool = False

    def __post_init__(self) -> None:
        if self.input_format not in ("auto", *formats.FORMATS):
            raise ValueError(f"FileOptions.input_format must be 'auto' or one of "
                             f"{formats.FORMATS}, got {self.input_format!r}")
        if self.to is not None and self.to not in OUTPUT_FORMATS:
            raise ValueError(f"FileOptions.to must be None or one of {OUTPUT_FORMATS}, "
                             f"got {self.to!r}")
        if self.errors not in ("strict", "replace"):
            raise ValueError(f"FileOptions.errors must be 'strict' or 'replace', "
                             f"got {self.errors!r}")
        if self.stream_lookahead is not None and (
                isinstance(self.stream_lookahead, bool) or self.stream_lookahead < 0):
            raise ValueError(f"FileOptions.stream_lookahead must be None or an int >= 0, "
                             f"got {self.stream_lookahead!r}")
        if self.text_key == "" or self.output_key == "":
            raise ValueError("FileOptions.text_key and FileOptions.output_key must not be "
                             "empty")

    def input_format_of(self, path: str) -> str:
        """The format of the file `path`: `input_format`, or detected; a .gz file by the
        extension before .gz (x.srt.gz is SRT, x.json.gz by its content, x.txt.gz by its
        first lines), else text."""
        if self.input_format != "auto":
            return self.input_format
        inner = os.path.splitext(path[:-3])[1].lower()
        if path.lower().endswith(".gz") and inner not in _TRANSCRIPT_SUFFIXES and \
                inner not in formats.UNREAD:  # (refused by `detect_format`)
            return "text"  # compressed text is read line by line
        return formats.detect_format(path)

    def output_format(self, input_format: str) -> str:
        """The format written for an input of `input_format` (see `to`)."""
        if self.to is None or (self.to == "json" and input_format == "text"):
            return input_format
        if self.to == "json":
            return input_format if input_format in JSON_FORMATS else "whisper"
        return self.to

    def writes_json_lines(self, input_format: str) -> bool:
        """Whether text input is written as JSON lines (--json, or --to json)."""
        return input_format == "text" and (self.as_json or self.to == "json")

    def check(self, name: str, input_format: str) -> None:
        """ValueError, naming the input, when these options cannot apply to it."""
        output_format = self.output_format(input_format)
        if self.as_json and self.to not in (None, "json"):
            raise ValueError(f"{name}: --json writes JSON lines and --to {self.to} writes "
                             f"{self.to}; give one of them")
        if self.as_json and input_format != "text":
            hint = ("use --to json" if input_format not in formats.UNTIMED
                    else "its restored text is written in its own format")
            raise ValueError(f"{name}: --json is for plain text input; for {input_format} "
                             f"input {hint}")
        if self.stream_lookahead is not None and (input_format != "text" or self.as_json
                                                  or self.to not in (None, "text")):
            what = (f"{input_format} input" if input_format != "text" else
                    "JSON (--json)" if self.as_json else f"--to {self.to}")
            raise ValueError(f"{name}: --stream restores plain text into plain text, not "
                             f"{what}")
        if self.paragraphs and input_format != "text":
            raise ValueError(f"{name}: --paragraphs is for plain text input, not "
                             f"{input_format}")
        if self.paragraphs and (self.as_json or self.line_buffered or self.to
                                not in (None, "text") or self.stream_lookahead is not None):
            what = ("--json" if self.as_json else "--line-buffered" if self.line_buffered
                    else "--stream" if self.stream_lookahead is not None else f"--to {self.to}")
            raise ValueError(f"{name}: --paragraphs writes plain text, a paragraph at a "
                             f"time; it does not go with {what}")
        if self.line_buffered and input_format != "text":
            raise ValueError(f"{name}: --line-buffered is for plain text input, not "
                             f"{input_format}")
        if input_format in formats.UNTIMED and output_format in (*formats.SUBTITLES, "whisper"):
            written = "Whisper JSON (--to json)" if self.to == "json" else output_format
            raise ValueError(f"{name}: {input_format} input has no timings; cannot write "
                             f"{written}")
        if self.layout is not None and output_format not in formats.SUBTITLES:
            raise ValueError(f"{name}: --resegment builds subtitle cues; add --to srt or --to "
                             f"vtt (output format here: {output_format})")


@dataclass(frozen=True)
class Source:
    """One input.

    Attributes:
        name: the file's path, or a label such as "<stdin>" when `lines` are given.
        format: one of `formats.FORMATS` (resolved, not "auto").
        lines: the input's lines (stdin, command-line text), or None to read the file `name`.
        line_ends: whether `lines` keep their line endings (a table read from stdin).
        bom: whether `lines` came after a byte-order mark (decoding drops it; it is
            written back).
        newline: the line ending text `lines` came with (stdin's first line's), written back.
    """

    name: str
    format: str
    lines: Iterable[str] | None = None
    line_ends: bool = False
    bom: bool = False
    newline: str = "\n"


def output_name(name: str, input_format: str, output_format: str,
                json_lines: bool = False) -> str:
    """The output file name of an input: .gz dropped, extension changed with the format
    (`json_lines`: text restored as JSON lines, --json, is .jsonl)."""
    base = name[:-3] if name.lower().endswith(".gz") else name  # (a.txt.GZ too)
    if json_lines:
        return os.path.splitext(base)[0] + ".jsonl"
    if output_format == input_format:
        return base
    return os.path.splitext(base)[0] + formats.EXTENSIONS[output_format]


def restore_source(punctuator, source: Source, out: TextIO, options: FileOptions) -> None:
    """Restore one input and write it onto an open text stream in the output format.

    Raises:
        ValueError: the options do not apply to this input, or its content is malformed
            (naming the file and line).
        FileNotFoundError: no such file.
    """
    options.check(source.name, source.format)
    output_format = options.output_format(source.format)
    if source.format == "text" and output_format == "text":
        as_json = options.as_json or options.to == "json"
        bom, newline = (False, "\n") if as_json else _text_style(source)
        out.write("\ufeff" if bom else "")
        lines = _text_lines(source, options)
        live = options.line_buffered or options.stream_lookahead is not None
        if not live:  # (a live pipe is not read ahead)
            head = list(itertools.islice(lines, _SAMPLE_LINES))
            note_punctuated(source.name, head, options.restore)
            note_utterance_ids(source.name, head)
            lines = itertools.chain(head, lines)
        chunks = (_stream_words(punctuator, lines, options.restore, options.stream_lookahead)
                  if options.stream_lookahead is not None else
                  _restore_paragraphs(punctuator, lines, options.restore)
                  if options.paragraphs else
                  _restore_lines(punctuator, lines, options.restore, as_json,
                                 chunk_lines=1 if options.line_buffered else 64))
        for chunk in chunks:
            out.write(chunk if newline == "\n" else chunk.replace("\n", newline))
            if live:
                out.flush()
        return
    if source.format in formats.TABLES and output_format == source.format:
        _restore_table(punctuator, source, out, options)
        return
    if source.lines is None:
        transcript = formats.read(source.name, source.format, options.text_key, options.errors)
    else:
        text = "".join(source.lines) if source.line_ends else "\n".join(source.lines) + "\n"
        text = ("\ufeff" if source.bom else "") + text  # the reader finds it and writes it
        transcript = formats.loads(text, source.format, source.name, options.text_key)
    note_punctuated(source.name, (_words_shown(cue) for cue in transcript.cues[:_SAMPLE_LINES]),
                    options.restore)
    if options.layout is not None and formats.speakers_tiers(transcript) and \
            transcript.format not in formats.WORD_LISTS:  # (channels: labelled, resegmented)
        raise ValueError(f"{source.name}: --resegment rebuilds the cues of one speaker; the "
                         f"{source.format} document holds several speakers' tiers: give "
                         f"--text-key TIER")
    try:
        restored = formats.restore_transcript(transcript, punctuator, options.restore)
    except ValueError as error:  # (a word that is not Unicode text: JSON's "\ud800")
        raise ValueError(f"{source.name}: {error}") from None
    resegment_first = options.layout is not None and restored.format in formats.SUBTITLES
    if resegment_first:  # in its own format: WebVTT voices and timestamp tags still there
        restored = formats.resegment(restored, options.layout, punctuator.inventory)
    # channels resegmented as WebVTT voices, then labelled for SubRip where the speaker
    # changes (a label written first would not follow a turn resumed after an interjection)
    via_voices = options.layout is not None and output_format == "srt" and \
        formats.speakers_tiers(restored)
    try:
        result = formats.convert(restored, "vtt" if via_voices else output_format)
    except ValueError as error:  # (a cue without times)
        raise ValueError(f"{source.name}: {error}") from None
    if options.layout is not None and not resegment_first:
        result = formats.resegment(result, options.layout, punctuator.inventory)
    if via_voices:
        result = formats.convert(result, "srt")
    formats.write(result, out, output_key=options.output_key)


def restore_to_path(punctuator, source: Source, target: str, options: FileOptions) -> None:
    """Restore one input into the file `target`, atomically (see the module docstring).

    The destination folder is created when missing; a name ending in .gz is gzipped.
    On any error the temporary file is
    removed and `target` is left as it was. A target that exists and is not a regular file
    (a FIFO, /dev/null) is written to directly; a symbolic link keeps pointing at the file.
    "-", /dev/stdout and /dev/stderr are this process's own streams, written through them:
    opened anew they would truncate, or be replaced by, the file a shell redirected them to.
    """
    stream = standard_stream(target)
    if stream is not None:
        restore_source(punctuator, source, stream, options)
        stream.flush()
        return
    if os.path.exists(target) and not os.path.isfile(target):
        with open(target, "w", encoding="utf-8", newline="") as handle:
            restore_source(punctuator, source, handle, options)
        return
    with atomic_writer(target) as handle:  # gzipped when target ends in .gz
        restore_source(punctuator, source, handle, options)


def _text_style(source: Source) -> tuple[bool, str]:
    """(byte-order mark, line ending) of a text file, written back alike: CRLF when its
    first line ends so (the file is read line by line, so the first line decides), CR when
    it has carriage returns and no line feed in its first megabyte."""
    if source.lines is not None or not os.path.isfile(source.name):  # a pipe is read once
        return source.bom, source.newline
    from punctum.corpora import open_binary

    try:
        with open_binary(source.name) as handle:
            return _first_line_style(handle)
    except (OSError, EOFError, zlib.error):  # reading the lines reports it, naming the file
        return False, "\n"


def _first_line_style(handle) -> tuple[bool, str]:
    """(byte-order mark, the first line's ending) of a binary file, read a megabyte at a
    time up to its first line feed (CR: none in the whole file, as `corpora.decode_lines`
    then cuts lines at carriage returns)."""
    first = handle.read(1 << 20)
    encoding = bom_encoding(first)
    if encoding is not None:  # UTF-16 or UTF-32: written as UTF-8
        head = first.decode(encoding, errors="replace")
        at = head.find("\n")
        if at < 0:
            return False, "\r" if "\r" in head else "\n"
        return False, "\r\n" if head[at - 1:at] == "\r" else "\n"
    bom, before, chunk, carriage = first.startswith(b"\xef\xbb\xbf"), b"", first, False
    while chunk:
        at = chunk.find(b"\n")
        if at >= 0:
            previous = chunk[at - 1:at] if at else before
            return bom, "\r\n" if previous == b"\r" else "\n"
        carriage = carriage or b"\r" in chunk
        before, chunk = chunk[-1:], handle.read(1 << 20)
    return bom, "\r" if carriage else "\n"


# An input reads as punctuated already when this share of its first words end in a mark
# (recogniser output without punctuation has none; written English has one on about every
# sixth to tenth word). Dashes do not count: conversational transcripts cut words with them
# ("I- I think").
_PUNCTUATED_SHARE = 0.04
_SENTENCE_MARKS = tuple(".,?!;:")
_SAMPLE_LINES = 200  # lines (or cues) looked at
_warned: list[str] = []  # inputs named so far in this process


# the first token of a Kaldi `text` line: an utterance id with digits and - or _ in it
# ("spk1-utt1", "utt_001", "1272-128104-0000": digits alone in three parts or more); a
# number, a date (2024-01-05), a range (2019-20) or a word is not one
_UTTERANCE_ID = re.compile(r"(?=\S*\d)(?=\S*[A-Za-z_])[\w.]+(?:[-_][\w.]+)+"
                           r"|(?!\d{4}-\d\d-\d\d$)\d+(?:-\d+){2,}")


def note_utterance_ids(name: str, lines: Sequence[str]) -> bool:
    """Say (once a process) when every line of text starts with what looks like an
    utterance id (Kaldi's `text`: "spk1-utt1 so what"): read as text, its ids are restored
    as words; --format kaldi keeps them. Returns whether it said so."""
    firsts = [line.split(None, 1)[0] for line in lines if line.strip()]  # (an id alone:
    said = sum(len(line.split(None, 1)) == 2 for line in lines)  # an empty utterance)
    if said < 2 or len(set(firsts)) < len(firsts) or _warned_ids or not all(
            _UTTERANCE_ID.fullmatch(first) for first in firsts):  # (ids differ line by line)
        return False
    _warned_ids.append(name)
    log.warning("%s: every line starts with what looks like an utterance id (%s); read as "
                "text, the ids get marks and capitals as words do (--format kaldi keeps them "
                "as they are)", name, firsts[0])
    return True


_warned_ids: list[str] = []


def _words_shown(cue: formats.Cue) -> str:
    """A cue's words as a viewer reads them: without markup, references decoded ("&gt;&gt;"
    is ">>", "<i>ANNA:</i>" a label), its line breaks kept."""
    parts = []
    for token in cue.tokens:
        if token.text:
            parts += [("\n" if "\n" in token.before else " ") if parts else "",
                      decode_references(token.text)]
    return "".join(parts)


def note_punctuated(name: str, texts: Iterable[str], options: RestoreOptions) -> bool:
    """Warn when the input already has marks (Whisper's output, a file restored before):
    restoring replaces them unless --keep-existing. After the first warning of a process
    (a folder of Whisper output), the others are logged at INFO level (-v). Returns whether
    the input reads as punctuated."""
    if options.keep_existing:
        return False
    words = marked = 0
    for text in texts:
        written = words_outside(text) if options.annotations else whitespace_tokens(text)
        tokens = [t for t in written if any(c.isalnum() for c in t)]
        words += len(tokens)
        marked += sum(token.endswith(_SENTENCE_MARKS) for token in tokens)
    if words < 20 or marked < _PUNCTUATED_SHARE * words:
        return False
    level = logging.INFO if _warned else logging.WARNING
    _warned.append(name)
    log.log(level, "%s: already punctuated (a mark after %d%% of its first %d words); its "
            "marks are replaced by the model's (--keep-existing keeps them)", name,
            round(100 * marked / words), words)
    return True


def _restore_table(punctuator, source: Source, out: TextIO, options: FileOptions) -> None:
    """A CSV or TSV table restored in chunks of rows, written as it goes (bounded memory;
    the byte-order mark and each row's line ending kept)."""
    from punctum.corpora import iter_lines
    from punctum.formats.tables import stream_table

    if source.lines is None:
        lines = iter_lines(source.name, keep_blank=True, errors=options.errors, keep_ends=True)
    elif source.line_ends:
        lines = source.lines
    else:
        lines = (line + "\n" for line in source.lines)
    out.write("\ufeff" if _text_style(source)[0] else "")
    looked = []  # whether the first chunk's rows were looked at for marks already there

    def restore(transcript: formats.Transcript) -> formats.Transcript:
        if not looked:
            looked.append(note_punctuated(source.name, (c.text for c in transcript.cues[
                :_SAMPLE_LINES]), options.restore))
        return formats.restore_transcript(transcript, punctuator, options.restore)

    for piece in stream_table(lines, source.format, source.name, restore, options.text_key,
                              options.output_key):
        out.write(piece)


def _text_lines(source: Source, options: FileOptions) -> Iterable[str]:
    """The lines of a text source (a file of carriage returns alone is cut at each one:
    `corpora.decode_lines`)."""
    from punctum.corpora import iter_lines

    if source.lines is not None:
        return source.lines
    return iter_lines(source.name, keep_blank=True, errors=options.errors)


def _restore_lines(punctuator, lines: Iterable[str], options: RestoreOptions,
                   as_json: bool, chunk_lines: int = 64) -> Iterator[str]:
    """Restored lines (or JSON lines) as output chunks, lazily (`chunk_lines` lines are
    read before the first of them is given); blank lines stay blank. Every line's last
    chunk ends with a newline."""
    if not as_json:
        for chunk in _chunks(lines, chunk_lines):
            for line in formats.restore_lines(punctuator, chunk, options):
                yield line + "\n"
        return
    for line in lines:
        if punctuator.is_long_line(line):
            yield from _json_long_line(punctuator, line, options)
            continue
        yield json.dumps(json_line(punctuator, line, options), ensure_ascii=False) + "\n"


def _restore_paragraphs(punctuator, lines: Iterable[str], options: RestoreOptions,
                        chunk_words: int = PARAGRAPH_CHUNK_WORDS) -> Iterator[str]:
    """Restored lines, each paragraph one text (`formats.restore_paragraphs`), read and
    restored about `chunk_words` words at a time (a longer paragraph is cut at a line there,
    ending a text), so that a file of any length fits in memory."""
    chunk: list[str] = []
    words = 0
    for line in lines:
        chunk.append(line)
        words += len(line.split())
        if words >= chunk_words:
            yield "".join(f"{out}\n" for out in formats.restore_paragraphs(
                punctuator, chunk, options))
            chunk, words = [], 0
    if chunk:
        yield "".join(f"{out}\n" for out in formats.restore_paragraphs(punctuator, chunk,
                                                                       options))


def json_line(punctuator, line: str, options: RestoreOptions) -> dict:
    """One text line as --json writes it: the restored text and its words. A line holding
    annotations (`formats.annotations`: "agent: hello [laughs]") gives the model the words
    outside them, as restoring it as text does; its text has them in place, and they are
    listed under "annotations"."""
    words, annotations = separate(line) if options.annotations else ([], [])
    if not annotations:
        return punctuator.restore_detailed([line], options)[0].to_dict()
    record = punctuator.restore_detailed([" ".join(words)], options)[0].to_dict()
    text = next(formats.restore_lines(punctuator, [line], options))
    return {**record, "text": text, "annotations": annotations}


def _chunks(items: Iterable[str], size: int) -> Iterator[list[str]]:
    """Lists of `size` items (the last shorter), read lazily."""
    iterator = iter(items)
    while chunk := list(itertools.islice(iterator, size)):
        yield chunk


def _stream_words(punctuator, lines: Iterable[str], options: RestoreOptions,
                  lookahead: int) -> Iterator[str]:
    """The words of all lines as one stream (`Punctuator.stream`): each piece of output is
    what became final after a line was fed (a long line in parts), words joined by spaces
    and a line break after each sentence-final mark; the rest at the end, closed with a line
    break."""
    stream = punctuator.stream(lookahead, options)
    writer = _SentenceLines(punctuator.inventory)
    for line in lines:
        tokens = whitespace_tokens(line)
        for start in range(0, max(len(tokens), 1), LONG_LINE_PART):
            text = writer.write(stream.feed_detailed(tokens[start:start + LONG_LINE_PART]))
            if text:
                yield text
    yield writer.write(stream.flush_detailed()) + writer.close()


class _SentenceLines:
    """Restored parts of a stream written as lines of sentences."""

    def __init__(self, inventory) -> None:
        self.inventory = inventory
        self.last = ""  # the open line's last piece ("": no open line)

    def write(self, part) -> str:
        """The text of a `Restored` part (or None: ""): its pieces after the open line, a
        line break after each sentence-final mark (languages written without spaces: a
        part is one piece, and a sentence may end inside it)."""
        if part is None:
            return ""
        words, text = part.labelled, part.text
        lead = [part.lead] if part.lead else []  # the marks of the word before: ". " Then
        if lead:
            text = text[len(part.lead):].lstrip(" ")
        lead_ends = [_ends_a_sentence(part.lead, self.inventory)] if lead else []
        if not len(words):  # tokens without words (":)" alone) end no sentence
            pieces, ends = [text], [False]
        elif self.inventory.word_unit == "word":
            pieces = words_as_written(words, text)
            ends = [ends_sentence(words, i, self.inventory) for i in range(len(words))]
        else:
            pieces, ends = [text], [ends_sentence(words, len(words) - 1, self.inventory)]
        pieces, ends = lead + pieces, lead_ends + ends
        out = []
        for piece, end in zip(pieces, ends, strict=True):
            out.append((separator(self.last, piece, self.inventory) if self.last else "")
                       + piece)
            self.last = "" if end else piece
            if not self.last:
                out.append("\n")
        return "".join(out)

    def close(self) -> str:
        """The line break that ends the open line, if there is one."""
        return "\n" if self.last else ""


def _ends_a_sentence(marks: str, inventory) -> bool:
    """Whether marks written after a word (". ", "<unk> ?") end its sentence."""
    given = marks_after_word(marks, inventory)
    return given is not None and ends_sentence(given, 0, inventory)


def _json_long_line(punctuator, line: str, options: RestoreOptions) -> Iterator[str]:
    """The JSON object of a very long line, written as its parts are restored (bounded
    memory): the same keys as a short line's, "words" first and "text" at the end."""
    texts: list[str] = []
    yield '{"words": ['
    separator = ""
    for part in punctuator.restore_long_detailed(line, options):
        texts.append(part.text)
        yield separator + ", ".join(json.dumps(entry, ensure_ascii=False)
                                    for entry in part.to_dict()["words"])
        separator = ", "
    yield '], "text": ' + json.dumps(" ".join(texts), ensure_ascii=False) + "}\n"


# ----------------------------------------------------------------------------- planning

@dataclass(frozen=True)
class BatchOptions:
    """A folder job: every file under `input_dir` restored to the same path under `output_dir`.

    Args:
        input_dir: the folder read (recursively; hidden and temporary files left out).
        output_dir: the folder written; must not be `input_dir` or inside it.
        file: how each file is read, restored and written.
        model: bundled model name, model folder or hub id (None: the default model).
        jobs: worker processes (1: restore in this process).
        threads: ONNX Runtime threads per worker (0: the machine's cores shared among `jobs`).
        overwrite: restore files whose output exists too (default: skip them).
        progress: show a progress bar over files on stderr.
        post_bias: the model's decision biases: None its own, {} none, or mark -> offset
            (see `Punctuator`).
    """

    input_dir: str
    output_dir: str
    file: FileOptions = field(default_factory=FileOptions)
    model: str | None = None
    jobs: int = 1
    threads: int = 0
    overwrite: bool = False
    progress: bool = True
    post_bias: Mapping[str, float] | None = None

    def __post_init__(self) -> None:
        for name, low, high in (("jobs", 1, 256), ("threads", 0, 256)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                raise ValueError(f"BatchOptions.{name} must be an integer in [{low}, {high}], "
                                 f"got {value!r}")
        if not self.input_dir or not self.output_dir:
            raise ValueError("BatchOptions.input_dir and output_dir must not be empty")
        if self.file.line_buffered or self.file.stream_lookahead is not None:
            raise ValueError("--stream and --line-buffered are for standard input and single "
                             "files, not --input-dir")

    @property
    def worker_threads(self) -> int:
        """ONNX Runtime threads per worker: `threads`, or the cores shared among the jobs."""
        return self.threads or max(1, cpu_count() // self.jobs)


@dataclass(frozen=True)
class FileTask:
    """One file of a batch: read from `source` (as `format`, or "auto": detected when it
    runs) and written to `target`."""

    source: str
    target: str
    format: str = "auto"


@dataclass(frozen=True)
class FileResult:
    """What became of one file: `error` is its one-line error, "" when it was restored."""

    source: str
    target: str
    error: str = ""

    @property
    def ok(self) -> bool:
        return not self.error


@dataclass(frozen=True)
class BatchPlan:
    """The files of a batch: to restore, skipped (output exists), failed before running
    (their format could not be told), left out (not transcripts: binary files such as
    the videos beside their subtitles, formats punctum does not read; `left_out` says why)."""

    tasks: tuple[FileTask, ...]
    skipped: tuple[FileTask, ...] = ()
    failed: tuple[FileResult, ...] = ()
    left_out: tuple[FileResult, ...] = ()


def plan_batch(options: BatchOptions) -> BatchPlan:
    """List the files under `options.input_dir` and where each is written.

    Formats are detected here only when `options.file.to` can change an output's extension
    (otherwise each file's format is detected when it is restored).

    Raises:
        FileNotFoundError: `input_dir` is not a folder.
        ValueError: one of `output_dir` and `input_dir` is inside the other, or two inputs
            would be written to the same output (a.txt and a.txt.gz; a.srt and a.vtt with
            --to text).
    """
    _check_folders(options.input_dir, options.output_dir)
    tasks, skipped, failed, left_out = [], [], [], []
    unreadable: list[OSError] = []
    for relative in list_inputs(options.input_dir, unreadable, options.output_dir):
        source = os.path.join(options.input_dir, relative)
        if reason := _not_a_transcript(source, options.file.input_format):
            left_out.append(FileResult(source, "", reason))
            continue
        try:
            task = _plan_file(source, relative, options)
            _check_target_outside(task.target, options.input_dir)
        except (OSError, ValueError) as error:
            failed.append(FileResult(source, "", one_line(error)))
            continue
        if os.path.exists(task.target) and not options.overwrite:
            skipped.append(task)
        else:
            tasks.append(task)
    failed += [FileResult(error.filename or options.input_dir, "",
                          f"{error.filename}: cannot read the folder ({error.strerror})")
               for error in unreadable]
    _check_collisions(tasks + skipped)
    return BatchPlan(tuple(tasks), tuple(skipped), tuple(failed), tuple(left_out))


def _not_a_transcript(path: str, input_format: str, head_bytes: int = 8192) -> str:
    """Why a file of a folder is not restored ("binary", "Scenarist SCC"), or "": a file of
    a format punctum does not read (by its name, unless --format says how to read it), a
    binary one (NUL bytes in its first kilobytes, not UTF-16 text and not gzip, whose text is
    told when it is read) or an XML document that is neither TTML nor ELAN (YouTube's srv3,
    a project file), not named as a transcript (a broken .srt fails, named). A file that
    cannot be read says so later."""
    suffix = os.path.splitext(path)[1].lower()
    if suffix in formats.UNREAD and input_format == "auto":
        return formats.UNREAD[suffix]
    if suffix in _TRANSCRIPT_SUFFIXES or suffix == ".gz":
        return ""
    try:
        with open(path, "rb") as handle:
            head = handle.read(head_bytes)
    except OSError:
        return ""
    if head.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"<?xml") and input_format == "auto":
        text = head.decode("utf-8", errors="replace")
        return "" if formats.looks_like_ttml(text) or formats.looks_like_eaf(text) else \
            "XML, neither TTML nor ELAN"
    if b"\0" not in head or head[:2] == b"\x1f\x8b" or bom_encoding(head) or looks_utf16(
            head.split(b"\n")[0], 1):
        return ""
    return "binary"


def _check_target_outside(target: str, input_dir: str) -> None:
    """An output that resolves into the input folder (through a symbolic link) would be
    written onto an input."""
    real_input = os.path.realpath(input_dir)
    if os.path.commonpath([real_input, os.path.realpath(target)]) == real_input:
        raise ValueError(f"its output {target} resolves into the input folder "
                         f"({os.path.realpath(target)}); not written")


def list_inputs(folder: str, unreadable: list[OSError] | None = None,
                output_dir: str | None = None) -> list[str]:
    """Relative paths of the regular files under `folder` (or links to them, and in linked
    folders, each folder read once however many links lead to it), sorted;
    hidden files and folders, temporary files (editor backups, partial downloads) and
    pipes or devices are left out, as is a linked folder in or under `output_dir` (its
    outputs would be read as inputs, or an input written over). Subfolders that
    cannot be read are appended to `unreadable` (when given) instead of being skipped
    without a word."""
    found = []
    visit = _FolderVisits(folder, output_dir)  # linked subfolders followed, each folder once
    for root, dirs, files in os.walk(folder, onerror=None if unreadable is None
                                     else unreadable.append, followlinks=True):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".")
                         and visit.first(os.path.join(root, d)))
        for name in sorted(files):
            path = os.path.join(root, name)
            if name.startswith(".") or _TEMPORARY.search(name):
                continue
            if not os.path.isfile(path):  # a pipe or device would block or never end
                log.warning("%s: not a regular file; skipped", path)
                continue
            found.append(os.path.relpath(path, folder))
    return sorted(found)


class _FolderVisits:
    """Which subfolders `list_inputs` reads: the input folder's own by their own paths (a
    link into the tree is not followed: its files are read where they are), linked folders
    outside it once each (a loop ends), never one that holds the input folder, nor the
    output folder or one in it (its outputs would be read as inputs)."""

    def __init__(self, folder: str, output_dir: str | None) -> None:
        self.base = os.path.realpath(folder)
        self.output = os.path.realpath(output_dir) if output_dir else None
        self.outside: set[str] = set()

    def first(self, path: str) -> bool:
        real = os.path.realpath(path)
        if self.output and _under(real, self.output):
            return False
        if _under(real, self.base):
            return not os.path.islink(path)
        if _under(self.base, real) or real in self.outside:
            return False
        self.outside.add(real)
        return True


def _under(path: str, folder: str) -> bool:
    """Whether `path` is `folder` or inside it (both resolved)."""
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _plan_file(source: str, relative: str, options: BatchOptions) -> FileTask:
    file = options.file
    if file.to is None:
        input_format = file.input_format
        target = output_name(relative, "text", "text", json_lines=file.as_json)
    else:
        input_format = file.input_format_of(source)
        target = output_name(relative, input_format, file.output_format(input_format),
                             json_lines=file.writes_json_lines(input_format))
    return FileTask(source, os.path.join(options.output_dir, target), input_format)


def _check_folders(input_dir: str, output_dir: str) -> None:
    if not os.path.isdir(input_dir):
        raise FileNotFoundError(f"{input_dir}: no such folder")
    real_input, real_output = os.path.realpath(input_dir), os.path.realpath(output_dir)
    if os.path.commonpath([real_input, real_output]) == real_input:
        raise ValueError(f"output folder {output_dir} is inside the input folder {input_dir}; "
                         f"choose one outside it")
    if os.path.commonpath([real_input, real_output]) == real_output:
        raise ValueError(f"input folder {input_dir} is inside the output folder {output_dir}; "
                         f"outputs could replace inputs: choose folders side by side")
    if os.path.exists(output_dir) and not os.path.isdir(output_dir):
        raise ValueError(f"{output_dir}: exists and is not a folder")


def _check_collisions(tasks: list[FileTask]) -> None:
    seen: dict[str, str] = {}
    for task in tasks:
        if task.target in seen:
            raise ValueError(f"{seen[task.target]} and {task.source} would both be written to "
                             f"{task.target}; restore one of them separately")
        seen[task.target] = task.source


# ----------------------------------------------------------------------------- running

@dataclass(frozen=True)
class BatchReport:
    """The outcome of a batch: one result per file run (in the order they finished), and
    the files skipped."""

    results: tuple[FileResult, ...]
    skipped: tuple[FileTask, ...] = ()

    @property
    def failed(self) -> list[FileResult]:
        """The results with an error, by source path."""
        return sorted((r for r in self.results if not r.ok), key=lambda r: r.source)

    @property
    def n_restored(self) -> int:
        return sum(r.ok for r in self.results)

    def failure_summary(self) -> str:
        """"N of M files failed:" and one line per failed file ("" when none failed)."""
        failed = self.failed
        if not failed:
            return ""
        lines = [f"{len(failed)} of {len(self.results)} files failed:"]
        for result in failed:
            known = result.source in result.error
            line = result.error if known else f"{result.source}: {result.error}"
            lines.append("  " + printable(line))
        return "\n".join(lines)


def run_batch(options: BatchOptions, plan: BatchPlan | None = None) -> BatchReport:
    """Restore the files of a plan (default: `plan_batch(options)`), each atomically.

    Stale temporary files of a killed run are removed first. `options.jobs` > 1 runs that
    many worker processes, each loading the model once.

    Raises:
        FileNotFoundError, ValueError: a missing input folder, a model that cannot be found,
            planning conflicts (see `plan_batch`). Errors of single files are in the report.
    """
    plan, model = prepare_run(options, plan)
    results = list(plan.failed)
    if plan.tasks:
        with progress_bar(len(plan.tasks), options.progress) as bar:
            run = _run_here if options.jobs == 1 else _run_pool
            results += run(plan.tasks, options, model, bar)
    return BatchReport(tuple(results), plan.skipped)


def prepare_run(options: BatchOptions, plan: BatchPlan | None) -> tuple[BatchPlan, str]:
    """The plan (made when None), with the output folder cleared of a killed run's temporary
    files, and the model folder (see `resolve_model`)."""
    plan = plan or plan_batch(options)
    remove_temporary_files(options.output_dir)
    return plan, resolve_model(options.model, options.post_bias)


def resolve_model(model: str | None, post_bias: Mapping[str, float] | None = None) -> str:
    """The folder of a model name, folder or hub id, read once (and `post_bias` checked
    against its marks) so that a missing or bad model fails here rather than in every
    worker."""
    from punctum import artifact, calibration

    folder = artifact.resolve(model)
    read = artifact.read_artifact(folder)
    if post_bias:
        calibration.bias_vector(read.inventory.post_labels, post_bias)
    return str(folder)


def remove_temporary_files(folder: str) -> int:
    """Remove the temporary files that `restore_to_path` leaves when killed; returns how many."""
    removed = 0
    for root, _, files in os.walk(folder):
        for name in files:
            if name.startswith(".") and name.endswith(TEMP_SUFFIX):
                with contextlib.suppress(FileNotFoundError):
                    os.remove(os.path.join(root, name))
                    removed += 1
    if removed:
        log.info("removed %d temporary files of an earlier run from %s", removed, folder)
    return removed


def restore_task(punctuator, task: FileTask, options: FileOptions) -> FileResult:
    """Restore one file of a batch; its error, if any, is returned as one line."""
    try:
        input_format = task.format
        if input_format == "auto":
            input_format = options.input_format_of(task.source)
        restore_to_path(punctuator, Source(task.source, input_format), task.target, options)
    except Exception as error:  # a bad file never stops the job; the report names it
        return FileResult(task.source, task.target, one_line(error))
    return FileResult(task.source, task.target)


def one_line(error: BaseException) -> str:
    """An exception as one line: its message (with the type for unexpected kinds)."""
    text = " ".join(str(error).split()) or type(error).__name__
    if isinstance(error, (OSError, ValueError, TypeError, LookupError)):
        return text
    return f"{type(error).__name__}: {text}"


def progress_bar(total: int, enabled: bool):
    """A tqdm bar over files on stderr (a no-op when not `enabled`)."""
    from tqdm import tqdm

    return tqdm(total=total, unit="file", disable=not enabled, file=sys.stderr,
                dynamic_ncols=True)


def _run_here(tasks, options: BatchOptions, model: str, bar) -> list[FileResult]:
    from punctum.runtime import Punctuator

    punctuator = Punctuator.load(model, threads=options.worker_threads,
                                 post_bias=options.post_bias)
    results = []
    for task in tasks:
        results.append(restore_task(punctuator, task, options.file))
        bar.update()
    return results


def _run_pool(tasks, options: BatchOptions, model: str, bar) -> list[FileResult]:
    """Worker processes over the tasks. A file that kills its worker (a crash, the OOM
    killer) breaks the pool for every file not done: those go on in a new pool, and the
    ones that break that too are retried one by one, each in a fresh one-worker pool, so
    that only the file that kills again is reported."""
    from concurrent.futures.process import BrokenProcessPool

    results, broken, done_before, rounds = [], list(tasks), 0, 0
    while broken and (rounds < 2 or len(results) > done_before):  # a broken pool's files
        pending, broken, done_before = broken, [], len(results)  # go on in a new one
        rounds += 1
        if rounds > 1:  # (what the dead workers were writing)
            _remove_temporaries(pending)
        for task, outcome in _pool_results(pending, options, model,
                                           min(options.jobs, len(pending))):
            if isinstance(outcome, BrokenProcessPool):
                broken.append(task)
                continue
            results.append(_as_result(task, outcome))
            bar.update()
    _remove_temporaries(broken)
    for task in broken:  # a pool that did none: one by one, so only the file that kills is lost
        [(_, outcome)] = _pool_results([task], options, model, 1)
        if isinstance(outcome, BrokenProcessPool):
            _remove_temporaries([task])
        results.append(_as_result(task, outcome))
        bar.update()
    return results


def _remove_temporaries(tasks) -> None:
    """Remove the hidden temporary files that workers killed while writing these tasks'
    targets left behind."""
    from punctum.fileio import remove_stale

    for task in tasks:
        if os.path.isdir(os.path.dirname(os.path.realpath(task.target))):
            remove_stale(task.target)


def _as_result(task: FileTask, outcome) -> FileResult:
    if isinstance(outcome, BaseException):
        return FileResult(task.source, task.target, f"worker process failed: {one_line(outcome)}")
    return outcome


def _pool_results(tasks, options: BatchOptions, model: str, workers: int):
    """(task, FileResult or the exception that ended its worker) as tasks complete."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed

    # spawn: workers start clean instead of inheriting this process's threads (tqdm's).
    context = multiprocessing.get_context("spawn")
    stop = context.Event()
    executor = ProcessPoolExecutor(
        max_workers=workers, mp_context=context, initializer=_init_worker,
        initargs=(model, options.worker_threads, options.file, options.post_bias, stop))
    futures: dict = {}
    try:
        futures = {executor.submit(_work, task): task for task in tasks}
        for future in as_completed(futures):
            try:
                yield futures[future], future.result()
            except Exception as error:  # the worker process died (killed, out of memory)
                yield futures[future], error
    except BaseException:  # Ctrl-C: no new file starts; those being written are finished
        stop.set()
        _stop_pool(executor, futures)
        raise
    executor.shutdown()


def _stop_pool(executor, futures) -> None:
    """Cancel the files not started and wait for those in flight (their workers ignore
    Ctrl-C and write atomically); a second Ctrl-C while waiting ends the workers at once
    (a file being written then leaves only its hidden temporary file)."""
    for future in futures:
        future.cancel()
    try:
        executor.shutdown(wait=True, cancel_futures=True)
    except BaseException:
        for process in list((getattr(executor, "_processes", None) or {}).values()):
            process.terminate()
        executor.shutdown(wait=False, cancel_futures=True)
        raise


class FileWorker:
    """Restores the file tasks of a batch with one model, loaded once (a pool process, a Ray
    actor). A model that fails to load is reported as the error of every file."""

    def __init__(self, model: str, threads: int, options: FileOptions,
                 post_bias: Mapping[str, float] | None = None) -> None:
        from punctum.runtime import Punctuator

        self.options = options
        self.punctuator = None
        self.error = ""
        try:
            self.punctuator = Punctuator.load(model, threads=threads, post_bias=post_bias)
        except Exception as error:  # each file's result says why rather than a broken pool
            self.error = f"cannot load the model: {one_line(error)}"

    def restore(self, task: FileTask) -> FileResult:
        """Restore one file (see `restore_task`)."""
        if self.error:
            return FileResult(task.source, task.target, self.error)
        return restore_task(self.punctuator, task, self.options)


# The FileWorker of a pool process, made by the pool's initializer (one model per process),
# and the event the parent sets on Ctrl-C: queued files then start no more.
_worker: dict = {}


def _init_worker(model: str, threads: int, options: FileOptions,
                 post_bias: Mapping[str, float] | None, stop=None) -> None:
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is handled by the parent
    _worker["file"] = FileWorker(model, threads, options, post_bias)
    _worker["stop"] = stop


def _work(task: FileTask) -> FileResult:
    stop = _worker.get("stop")
    if stop is not None and stop.is_set():  # interrupted: a queued file is not started
        return FileResult(task.source, task.target, "interrupted")
    return _worker["file"].restore(task)
