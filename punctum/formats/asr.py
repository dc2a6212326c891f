"""Kaldi, pocketsphinx and transformers-pipeline transcripts, read and written for `formats`.

    punctum restore -i decode.ctm -o decode.restored.ctm          # Kaldi / NIST CTM
    punctum restore -i data/test/text --format kaldi -o text.restored
    punctum restore -i sphinx.jsonl -o sphinx.restored.jsonl       # pocketsphinx JSON lines
    punctum restore -i wav2vec2.json --to srt                      # transformers pipeline

- ctm: one word per line, ``<utterance> <channel> <start> <duration> <word> [<confidence>
  ...]``; a cue is a run of lines of one utterance and channel. Every field and space but
  the word is written back as read; ";;" comment lines and blank lines are kept.
- kaldi: Kaldi's ``text`` file, ``<utterance-id> <words ...>`` per line; each line is its own
  text, and the id (the cue's `identifier`) never reaches the model. Not detected by
  content: give ``--format kaldi``.
- sphinx: the JSON lines of the ``pocketsphinx`` program, one utterance per line:
  ``{"b": start, "d": duration, "p": probability, "t": text, "w": [words as {"b", "d", "p",
  "t"}]}``. Alternative pronunciations (``and(2)``) keep their suffix after the restored
  word; numbers are written back with the input's three decimals.
- hf: the output of a transformers ``automatic-speech-recognition`` pipeline (wav2vec2,
  Whisper) with ``return_timestamps``: ``{"text": ..., "chunks": [{"text": ..., "timestamp":
  [start, end]}, ...]}``, one object, a list of them or JSON lines; each object is its own
  text and its "text" is rebuilt from its chunks. A chunk whose end is null (Whisper's last)
  is taken to end where it starts when it becomes a subtitle; the JSON keeps the null.

Filler tokens (``<s>``, ``</s>``, ``<sil>``, ``<unk>``, ``[NOISE]``, ``++UM++``) are kept as
tokens without words: they never reach the model and are written back unchanged.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from punctum.formats.json_records import (
    JsonStyle,
    _expect_list,
    _expect_object,
    _field_text,
    _field_time,
    _kind,
    _put,
    _read_json_records,
    _ShapeError,
    is_time,
    record_cues,
    write_document,
    write_lines,
)
from punctum.formats.transcript import (
    MAX_SECONDS,
    Cue,
    Token,
    Transcript,
    carry_spaces,
    fillers_kept_out,
    is_filler,
    respaced,
    shown,
    split_tokens,
)

_VARIANT = re.compile(r"^(.+?)(\(\d+\))$")  # pocketsphinx's alternative pronunciations
_CTM_LINE = re.compile(r"^(\s*(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+)(\S+)(.*)$")
_CTM_EXPECTED = "'<utterance> <channel> <start> <duration> <word> [<confidence>]'"
_THREE_DECIMALS = re.compile(r"-?\d+\.\d{3}")
_SPHINX_NUMBER = re.compile(r'("[bdp]"\s?:\s?)(-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)')


def looks_like_ctm(lines: list[str], timed: bool = True) -> bool:
    """Whether the first lines (comments and blank lines left out) are CTM word lines, with
    (`timed`) a time in seconds written with a decimal point in one of them at least ("0.30";
    text such as "call 5 5 5 1 2" has the fields but no such time)."""
    words = [line for line in lines if line.strip() and not line.lstrip().startswith(";;")]
    return bool(words) and all(_ctm_fields(line) is not None for line in words) and (
        not timed or any("." in field for line in words for field in line.split()[2:4]))


def classify_json(first: dict) -> str | None:
    """"sphinx" or "hf" for a first JSON object of those shapes, else None."""
    if "chunks" in first and "text" in first:
        return "hf"
    if {"t", "w"} <= set(first) or {"b", "d", "t"} <= set(first):
        return "sphinx"
    return None


# ----------------------------------------------------------------------------- CTM

def _ctm_fields(line: str) -> tuple[str, str, float, float, str, str] | None:
    """(prefix, utterance + channel key, start, end, word, suffix) of a CTM word line."""
    match = _CTM_LINE.match(line)
    if match is None:
        return None
    prefix, utterance, channel, start, duration, word, suffix = match.groups()
    try:
        begin, length = float(start), float(duration)
    except ValueError:
        return None
    if not (is_time(begin) and is_time(length)):
        return None
    return prefix, f"{utterance} {channel}", begin, round(begin + length, 6), word, suffix


def read_ctm(text: str, name: str, meta: dict) -> Transcript:
    """Word lines grouped into cues by utterance and channel; other lines kept as they are."""
    lines = text.split("\n")
    trailer = ""
    if text.endswith("\n"):
        lines, trailer = lines[:-1], "\n"
    cues: list[Cue] = []
    run: list[Token] = []
    key = None
    for number, line in enumerate(lines if text else [], start=1):
        if not line.strip() or line.lstrip().startswith(";;"):
            cues += _ctm_cue(run, key)
            run, key = [], None
            cues.append(Cue(None, None, (), extra={"line": line}))
            continue
        fields = _ctm_fields(line)
        if fields is None:
            raise ValueError(f"{name}:{number}: expected a CTM line {_CTM_EXPECTED}, "
                             f"got {line.strip()[:60]!r}")
        prefix, line_key, start, end, word, suffix = fields
        if line_key != key:
            cues += _ctm_cue(run, key)
            run, key = [], line_key
        text_of = "" if is_filler(word) else word
        run.append(Token(text_of, start, end, before=" " if run else "",
                         extra={"prefix": prefix, "word": word, "suffix": suffix}))
    cues += _ctm_cue(run, key)
    return Transcript("ctm", tuple(cues), {**meta, "trailer": trailer})


def _ctm_cue(run: list[Token], key: str | None) -> list[Cue]:
    if not run:
        return []
    return [Cue(run[0].start, run[-1].end, tuple(run), identifier=key or "")]


def dump_ctm(transcript: Transcript) -> str:
    lines = []
    for cue in transcript.cues:
        if "line" in cue.extra:
            lines.append(cue.extra["line"])
            continue
        for token in cue.tokens:
            record = token.extra
            if not record:
                raise ValueError("ctm: can only write back transcripts read as CTM")
            lines.append(record["prefix"] + (token.text or record["word"]) + record["suffix"])
    if not lines:
        return ""
    return "\n".join(lines) + transcript.meta.get("trailer", "\n")


# ----------------------------------------------------------------------------- Kaldi text

def read_kaldi(text: str, name: str, meta: dict) -> Transcript:
    """One cue per line: the utterance id as its identifier, the rest as its tokens."""
    lines = text.split("\n")
    trailer = ""
    if text.endswith("\n"):
        lines, trailer = lines[:-1], "\n"
    cues = []
    for line in lines if text else []:
        match = re.match(r"^(\s*\S+)(.*)$", line)
        if match is None:  # blank line
            cues.append(Cue(None, None, split_tokens(line)))
        else:
            cues.append(Cue(None, None, fillers_kept_out(split_tokens(match.group(2))),
                            identifier=match.group(1)))
    return Transcript("kaldi", tuple(cues), {**meta, "trailer": trailer})


def dump_kaldi(transcript: Transcript) -> str:
    if not transcript.cues:
        return ""
    return "\n".join(cue.identifier + cue.text for cue in transcript.cues) + \
        transcript.meta.get("trailer", "\n")


# ----------------------------------------------------------------------------- pocketsphinx

def read_sphinx(text: str, name: str, meta: dict) -> Transcript:
    transcript = _read_json_records(text, name, meta, "sphinx", _sphinx_cues)
    numbers = [m.group(2) for m in _SPHINX_NUMBER.finditer(text)]
    # pocketsphinx writes every number with three decimals; a file that does not is kept
    transcript.meta["three_decimals"] = bool(numbers) and all(
        _THREE_DECIMALS.fullmatch(n) for n in numbers)
    return transcript


def _sphinx_cues(layout: str, values: list) -> tuple[list[Cue], dict]:
    """pocketsphinx results: JSON lines (its output), one object or a list of objects."""
    return record_cues(layout, values, _sphinx_cue)


def _sphinx_cue(record: Any, path: tuple) -> Cue:
    record = _expect_object(record, path, "a pocketsphinx result object")
    start, end = _sphinx_span(record, path)
    if "w" in record:
        words = _expect_list(record["w"], path + ("w",))
        tokens: list[Token] = []
        for j, word in enumerate(words):
            tokens.append(_sphinx_token(word, path + ("w", j), any(t.text for t in tokens)))
        return Cue(start, end, tuple(tokens), extra=record)
    return Cue(start, end, fillers_kept_out(split_tokens(_field_text(record, "t", path))),
               extra=record)


def _sphinx_span(record: dict, path: tuple) -> tuple[float | None, float | None]:
    start = _field_time(record, "b", path, required=False)
    duration = _field_time(record, "d", path, required=False)
    if start is None or duration is None:
        return start, None
    return start, round(start + duration, 6)


def _sphinx_token(word: Any, path: tuple, after_a_word: bool) -> Token:
    word = _expect_object(word, path, "a word object")
    raw = _field_text(word, "t", path)
    start, end = _sphinx_span(word, path)
    if is_filler(raw) or not raw.strip():
        return Token("", start, end, extra=word)
    variant = _VARIANT.match(raw)
    core, suffix = (variant.group(1), variant.group(2)) if variant else (raw, "")
    return Token(core, start, end, before=" " if after_a_word else "", after=suffix,
                 extra=word)


def dump_sphinx(transcript: Transcript) -> str:
    style = transcript.meta.get("json_style", JsonStyle(separators=(",", ":")))
    records = [_sphinx_record(cue) for cue in transcript.cues]
    layout = transcript.meta.get("layout", "lines")
    if layout == "lines":
        text = write_lines(transcript, records, style)
    else:
        text = write_document(transcript, records if layout == "list" else records[0], style)
    if transcript.meta.get("three_decimals"):
        text = _SPHINX_NUMBER.sub(lambda m: f"{m.group(1)}{float(m.group(2)):.3f}", text)
    return text


def _sphinx_record(cue: Cue) -> dict:
    record = dict(cue.extra)
    if isinstance(record.get("w"), list):
        words = []
        for token in cue.tokens:
            word = dict(token.extra)
            if token.text:
                _put(word, "t", token.text + token.after)
            words.append(word)
        if words != record["w"]:
            record["t"] = " ".join(token.text for token in cue.tokens if token.text)
        record["w"] = words
    else:
        _put(record, "t", cue.text)
    return record


# ----------------------------------------------------------------------------- transformers

def read_hf(text: str, name: str, meta: dict) -> Transcript:
    return _read_json_records(text, name, meta, "hf", _hf_cues)


def _hf_cues(layout: str, values: list) -> tuple[list[Cue], dict]:
    """Pipeline results: one object, a list of objects (a batch) or JSON lines."""
    if not values:
        return [], {"layout": "lines", "documents": [], "records": []}
    if layout == "lines":
        roots, paths, shape = [v for _, v in values], [(i,) for i in range(len(values))], "lines"
    elif isinstance(values[0][1], list):
        roots, shape = values[0][1], "list"
        paths = [(i,) for i in range(len(roots))]
    else:
        roots, paths, shape = [values[0][1]], [()], "object"
    cues: list[Cue] = []
    documents, records = [], []
    for root, path in zip(roots, paths):
        root = _expect_object(root, path, "a pipeline result object with 'text' and 'chunks'")
        chunks = _expect_list(root.get("chunks"), path + ("chunks",))
        first = len(cues)
        cues += _ended([_hf_cue(chunk, path + ("chunks", k)) for k, chunk in enumerate(chunks)])
        documents.append(list(range(first, len(cues))))
        records.append(root)
    return cues, {"layout": shape, "documents": documents, "records": records}


def _hf_cue(chunk: Any, path: tuple) -> Cue:
    chunk = _expect_object(chunk, path, "a chunk object with 'text' and 'timestamp'")
    tokens = fillers_kept_out(split_tokens(_field_text(chunk, "text", path)))
    start, end = _hf_times(chunk.get("timestamp"), path + ("timestamp",))
    if start is not None and end is not None and end < start:
        raise _ShapeError(path + ("timestamp",), f"the chunk ends ({end:g}) before it starts "
                                                 f"({start:g})")
    words = [t for t in tokens if t.text]
    if len(words) == 1:  # a word-level chunk: its times are the word's
        tokens = tuple(Token(t.text, start, end, t.before, t.after) if t.text else t
                       for t in tokens)
    return Cue(start, end, tokens, extra=chunk)


# Whisper's last chunk may have no end: it is given one (the pipeline's output keeps its null)
# where the next chunk starts, or after this long a word, so a subtitle made of it shows.
SECONDS_A_WORD = 0.4


def _ended(cues: list[Cue]) -> list[Cue]:
    """Cues of one pipeline result, each chunk without an end given one (`SECONDS_A_WORD`),
    as its words are (a word-level chunk's word has the chunk's times)."""
    out, next_start = [], None
    for cue in reversed(cues):  # the next chunk's start, known walking back
        if cue.end is None and cue.start is not None:
            words = sum(1 for t in cue.tokens if t.text)
            end = next_start if next_start is not None and next_start >= cue.start else \
                cue.start + SECONDS_A_WORD * words
            tokens = tuple(replace(t, end=end) if t.start is not None and t.end is None else t
                           for t in cue.tokens)
            cue = replace(cue, end=end, tokens=tokens)
        if cue.start is not None:
            next_start = cue.start
        out.append(cue)
    return out[::-1]


def _hf_times(stamp: Any, path: tuple) -> tuple[float | None, float | None]:
    """(start, end) of a chunk's [start, end] timestamp; null ends are None."""
    if not isinstance(stamp, list) or len(stamp) != 2:
        raise _ShapeError(path, f"expected [start, end] in seconds, got {_kind(stamp)}")
    times = []
    for value in stamp:
        if value is not None and not is_time(value):
            raise _ShapeError(path, f"expected [start, end] in seconds (numbers from 0 to "
                                    f"{MAX_SECONDS:.0e} or null), got {shown(stamp)}")
        times.append(None if value is None else float(value))
    return times[0], times[1]


def dump_hf(transcript: Transcript) -> str:
    style = transcript.meta.get("json_style", JsonStyle(indent=2, separators=(",", ": ")))
    roots = []
    for indexes, record in zip(transcript.meta["documents"], transcript.meta["records"]):
        old = [chunk.get("text", "") for chunk in record.get("chunks", [])]
        chunks = []
        for index in indexes:
            chunk = dict(transcript.cues[index].extra)
            _put(chunk, "text", transcript.cues[index].text)
            chunks.append(chunk)
        root = dict(record)
        new = [chunk["text"] for chunk in chunks]
        if new != old:
            written = respaced(record.get("text"), old, new)
            root["text"] = written if written is not None else (
                "" if carry_spaces(new) else " ").join(new)
        root["chunks"] = chunks
        roots.append(root)
    layout = transcript.meta.get("layout", "object")
    if layout == "lines":
        return write_lines(transcript, roots, style)
    return write_document(transcript, roots if layout == "list" else roots[0], style)


READERS = {"ctm": read_ctm, "kaldi": read_kaldi, "sphinx": read_sphinx, "hf": read_hf}
WRITERS = {"ctm": dump_ctm, "kaldi": dump_kaldi, "sphinx": dump_sphinx, "hf": dump_hf}
