"""Whisper JSON, Vosk JSON and NeMo manifests: records kept as read, written back alike."""

from __future__ import annotations

import bisect
import functools
import json
import json.decoder
import json.scanner
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from punctum.formats.json_splice import splice
from punctum.formats.transcript import (
    MAX_SECONDS,
    Cue,
    Token,
    Transcript,
    _split_word,
    carry_spaces,
    fillers_kept_out,
    is_filler,
    needs_space,
    respaced,
    split_tokens,
)

# ----------------------------------------------------------------------------- JSON

class _ShapeError(Exception):
    """JSON of the wrong shape at `path` (keys and indexes from the root)."""

    def __init__(self, path: tuple, message: str) -> None:
        super().__init__(message)
        self.path = path
        self.message = message


# A JSON string literal, escapes included.
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')


@dataclass(frozen=True)
class JsonStyle:
    """How a JSON file was written, so that it is written back the same way."""

    indent: int | str | None = None
    ensure_ascii: bool = False
    separators: tuple[str, str] = (", ", ": ")
    final_newline: bool = True

    @classmethod
    def detect(cls, text: str, lines: bool) -> JsonStyle:
        """The style of `text` (a JSON document, or JSON lines when `lines`)."""
        body = text.strip()
        indent: int | str | None = None
        if not lines and "\n" in body:
            second = body.split("\n", 2)[1]
            lead = second[:len(second) - len(second.lstrip(" \t"))]
            indent = len(lead) if set(lead) <= {" "} else lead  # 0 and "\t" as written
        bare = _STRING.sub('""', body)  # separators are read outside string values
        key = re.search(r'"( ?):([ \t]?)', bare)  # Vosk's C++ writer: " : "
        key_sep = ": " if key is None else key.group(1) + ":" + key.group(2)
        if indent is not None:  # Python before 3.4 wrote ", " at line ends with an indent
            item_sep = ", " if re.search(r", \n", bare) else ","
        else:
            item = re.search(r',( ?)\S', bare)
            item_sep = "," if item and not item.group(1) else ", "
        ensure_ascii = text.isascii() and "\\u" in text
        return cls(indent, ensure_ascii, (item_sep, key_sep), text.endswith("\n"))

    def dumps(self, value: Any) -> str:
        """One JSON value in this style (no final newline)."""
        return _escape_surrogates(json.dumps(value, ensure_ascii=self.ensure_ascii,
                                             indent=self.indent, separators=self.separators))

    def dumps_lines(self, values: Sequence[Any]) -> str:
        """JSON lines in this style."""
        text = "\n".join(json.dumps(v, ensure_ascii=self.ensure_ascii,
                                    separators=self.separators) for v in values)
        return _escape_surrogates(text) + ("\n" if values and self.final_newline else "")


_SURROGATE = re.compile("[\ud800-\udfff]")


def _escape_surrogates(text: str) -> str:
    """JSON text with each lone surrogate (read from an escape such as "\\ud800", not
    Unicode text, so not writable as UTF-8) written as that escape again."""
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


# Style of JSON written from scratch (a conversion): what json.dump(indent=2) writes.
_NEW_JSON = JsonStyle(indent=2, separators=(",", ": "))


def _parse_json(text: str, name: str, line: int) -> Any:
    """json.loads, with its other errors (nesting too deep for the parser, integers with
    more digits than Python converts) one line naming the file; JSONDecodeError passes."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        raise
    except RecursionError:
        raise ValueError(f"{name}:{line}: JSON nested too deeply to read") from None
    except ValueError as error:
        raise ValueError(f"{name}:{line}: not readable JSON ({error})") from None


_JSON_SPACE = re.compile(r"\s*")


def value_spans(text: str) -> list[tuple[Any, int, int]] | None:
    """(value, start, end) of each JSON value of a text of values written one after another
    with only whitespace between them, or None when it is not one."""
    decoder, spans, position = json.JSONDecoder(), [], 0
    while True:
        position = _JSON_SPACE.match(text, position).end()
        if position == len(text):
            return spans
        try:
            value, end = decoder.raw_decode(text, position)
        except (json.JSONDecodeError, RecursionError, ValueError):
            return None
        spans.append((value, position, end))
        position = end


def _numbered(text: str, spans: list[tuple[Any, int, int]]) -> list[tuple[int, Any]]:
    """(line number, value) of each value of `value_spans`, lines counted once through."""
    numbered, line, counted = [], 1, 0
    for value, start, _ in spans:
        line += text.count("\n", counted, start)
        counted = start
        numbered.append((line, value))
    return numbered


def _load_json(text: str, name: str) -> tuple[str, list[tuple[int, Any]]]:
    """("document", [(1, value)]) or ("lines", [(line number, value), ...]) for JSON lines,
    or ("stream", [(line number, value), ...]) for values that follow one another over
    several lines each (each `rec.Result()` of Vosk printed in turn).

    An empty or whitespace-only text is ("lines", []).
    """
    if not text.strip():
        return "lines", []
    try:
        return "document", [(1, _parse_json(text, name, 1))]
    except json.JSONDecodeError as error:
        whole = error
    lines = [(n, line) for n, line in enumerate(text.split("\n"), start=1) if line.strip()]
    try:
        _parse_json(lines[0][1], name, lines[0][0])
    except json.JSONDecodeError:
        spans = value_spans(text) if whole.msg == "Extra data" else None
        if spans:  # values one after another, each over several lines (Vosk's Result()s)
            return "stream", _numbered(text, spans)
        raise ValueError(f"{name}:{whole.lineno}: not valid JSON ({whole.msg}, column "
                         f"{whole.colno})") from None
    values = []
    for number, line in lines:
        try:
            values.append((number, _parse_json(line, name, number)))
        except json.JSONDecodeError as error:
            raise ValueError(f"{name}:{number}: not valid JSON ({error.msg}, column "
                             f"{error.colno})") from None
    return "lines", values


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
        path = error.path
        try:
            line = _LineLocator(text).line_of(error.path)
        except RecursionError:  # nested deeper than the pure-Python scanner goes: no line
            line = None
    where = _path_text(path)
    place = name if line is None else f"{name}:{line}"
    return ValueError(f"{place}: {where + ': ' if where else ''}{error.message}")


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
        elif isinstance(value, float) or (isinstance(value, int) and not isinstance(value, bool)
                                          and abs(value) < 10**20):
            got = repr(value)
        else:
            got = "a larger number" if isinstance(value, int) and not isinstance(value, bool) \
                else _kind(value)
        raise _ShapeError(path + (key,), f"expected a time in seconds (a number from 0 to "
                                         f"{MAX_SECONDS:.0e}), got {got}")
    return float(value)


def is_time(value: Any) -> bool:
    """A time in seconds: a number from 0 to MAX_SECONDS (not a bool, NaN or Infinity)."""
    return (isinstance(value, (int, float)) and not isinstance(value, bool)
            and 0 <= value <= MAX_SECONDS)


def _put(record: dict, key: str, value: Any) -> None:
    """Set record[key] unless it holds an equal value already (1 stays 1, not 1.0)."""
    if key not in record or record[key] != value:
        record[key] = value


def _read_json_records(text: str, name: str, meta: dict, format: str, reader) -> Transcript:
    """Shared JSON reading: parse, style, records -> cues with errors naming the line."""
    layout, values = _load_json(text, name)
    style = JsonStyle.detect(text, lines=layout == "lines")
    try:  # values in a stream are records as lines are (`write_lines` writes them back)
        cues, extra_meta = reader("lines" if layout == "stream" else layout, values)
    except _ShapeError as error:
        raise _shape_error(error, name, text, values if layout != "document" else None) \
            from None
    # the text read, to write changed values into (`json_splice`); "reading": one document
    # or JSON lines (not meta["layout"], how records sit in the document)
    source = {"format": format, "reading": layout, "text": text}
    return Transcript(format, tuple(cues), {**meta, "json_style": style, "json_source": source,
                                            **extra_meta})


def write_document(transcript: Transcript, value: Any, style: JsonStyle) -> str:
    """A JSON document: the text it was read from with only the changed scalars rewritten
    (`json_splice`), or `value` in `style` when it was not read from one of this shape."""
    text = _source_text(transcript, "document")
    if text is not None:
        spliced = splice(text, json.loads(text), value, style.dumps)
        if spliced is not None:
            return spliced
    return style.dumps(value) + ("\n" if style.final_newline else "")


def write_lines(transcript: Transcript, values: Sequence[Any], style: JsonStyle) -> str:
    """JSON lines: each line read with only its changed scalars rewritten (blank lines
    kept) when there is one value for each line read; else `values` in `style`. Values
    read one after another over several lines each are written back so."""
    stream = _source_text(transcript, "stream")
    spans = value_spans(stream) if stream is not None else None
    if spans is not None and len(spans) == len(values):
        pieces, position = [], 0
        for value, (old, start, end) in zip(values, spans):
            spliced = splice(stream[start:end], old, value, style.dumps)
            pieces += [stream[position:start], style.dumps(value) if spliced is None
                       else spliced]
            position = end
        return "".join(pieces) + stream[position:]
    text = _source_text(transcript, "lines")
    lines = text.split("\n") if text is not None else []
    numbers = [n for n, line in enumerate(lines) if line.strip()]
    if len(numbers) != len(values):
        return style.dumps_lines(values)
    for number, value in zip(numbers, values):
        spliced = splice(lines[number], json.loads(lines[number]), value, style.dumps)
        lines[number] = style.dumps(value) if spliced is None else spliced
    return "\n".join(lines)


def _source_text(transcript: Transcript, reading: str) -> str | None:
    """The text the transcript was read from, if it was read as `reading` ("document" or
    "lines") JSON of its own format."""
    source = transcript.meta.get("json_source")
    if not source or source["format"] != transcript.format or source["reading"] != reading:
        return None
    return source["text"]


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
        text = segment.get("text")
        if isinstance(text, str) and text.strip() and _letters(text) != _letters(
                t.text for t in tokens):
            tokens = split_tokens(text)  # an edited text: restored, its stale words kept
    else:
        tokens = split_tokens(_field_text(segment, "text", path))
    return Cue(start, end, tokens, extra=segment)


def _letters(text) -> str:
    """What a text (or the words) holds without whitespace: a segment's words and its text
    agree when these are the same."""
    return "".join("".join(text).split())


def _whisper_token(word: Any, path: tuple) -> Token:
    word = _expect_object(word, path, "a word object")
    raw = _field_text(word, "word", path)
    return _split_word(raw, _field_time(word, "start", path, False),
                       _field_time(word, "end", path, False), word)


def _dump_whisper(transcript: Transcript) -> str:
    style = transcript.meta.get("json_style", _NEW_JSON)
    record = transcript.meta.get("record")
    segments = [_whisper_segment(cue, i) for i, cue in enumerate(transcript.cues)]
    for segment, speaker in zip(segments, transcript.meta.get("speakers", ())):
        if speaker is not None and "speaker" not in segment:  # (converted: WhisperX's key)
            segment["speaker"] = speaker
    if record is None:
        root = {"text": _joined_texts(s["text"] for s in segments), "segments": segments}
    else:
        root = dict(record)
        old = [s.get("text") for s in record.get("segments", []) if isinstance(s, dict)]
        new = [s.get("text") for s in segments]
        if "text" in root and new != old:
            root["text"] = respaced(root["text"], old, new) or _joined_texts(
                s.get("text", "") for s in segments)  # (the text's own spacing if it can)
        root["segments"] = segments
        _update_word_segments(root, record)
    return write_document(transcript, root, style)


def _joined_texts(texts) -> str:
    """Segment texts as one text: as written where they carry their spaces (OpenAI Whisper's
    " Hello"; then a segment without one continues a word), else with a space between words
    (`needs_space`)."""
    texts = [t for t in texts if isinstance(t, str)]
    if carry_spaces(texts):
        return "".join(texts)
    joined = ""
    for text in texts:
        if joined and text and not joined[-1].isspace() and needs_space(joined[-1], text[0]):
            joined += " "
        joined += text
    return joined


def _update_word_segments(root: dict, record: dict) -> None:
    """WhisperX's root "word_segments" (a copy of every segment word) gets the restored
    words too, when it lists the same words as the segments did."""
    copies = record.get("word_segments")
    old = [w for s in record.get("segments", []) if isinstance(s, dict)
           for w in s.get("words") or []]
    new = [w for s in root["segments"] for w in s.get("words") or []]
    if not isinstance(copies, list) or not len(copies) == len(old) == len(new):
        return
    if all(isinstance(c, dict) and isinstance(o, dict) and c.get("word") == o.get("word")
           for c, o in zip(copies, old)):
        root["word_segments"] = [c if c["word"] == n["word"] else {**c, "word": n["word"]}
                                 for c, n in zip(copies, new)]


def _whisper_segment(cue: Cue, index: int) -> dict:
    """The segment record with changed times, words and text written back."""
    record = dict(cue.extra) if cue.extra else {"id": index}
    _put(record, "start", cue.start)
    _put(record, "end", cue.end)
    old_words = cue.extra.get("words") if cue.extra else None
    timed = bool(cue.tokens) and all(t.start is not None for t in cue.tokens)
    if old_words and not all(t.extra for t in cue.tokens):  # the text disagreed with them
        _put(record, "text", cue.text)
    elif old_words or (not cue.extra and timed):
        words = [_whisper_word(token) for token in cue.tokens]
        if words != old_words and ("text" in record or not cue.extra):  # (none: none added)
            record["text"] = _segment_text(words, record.get("text"), old_words)
        record["words"] = words
    else:
        _put(record, "text", cue.text)
    return record


def _segment_text(words: list[dict], old: Any, old_words: Any = None) -> str:
    """A segment's text from its words: with the old text's whitespace around each word
    where the old text is its old words and whitespace (`transcript.respaced`: "我们用 iPhone
    拍照" keeps its spaces); else joined as they are when they carry their spaces (OpenAI
    Whisper's " Hello"), or with a space between them (WhisperX's "Hello"; none in scripts
    without spaces, `needs_space`), after the old text's leading whitespace (and only that:
    a text "i see" with words " i", " see" stays without its leading space)."""
    texts = [w["word"] for w in words]
    if isinstance(old_words, list) and len(old_words) == len(words):
        written = respaced(old, [w.get("word") if isinstance(w, dict) else None
                                 for w in old_words], texts)
        if written is not None:
            return written
    lead = old[:len(old) - len(old.lstrip())] if isinstance(old, str) and old.strip() else None
    if carry_spaces(texts):
        joined = "".join(texts)
        return joined if lead is None else lead + joined.lstrip()
    lead = lead or ""
    texts = [text.strip() for text in texts if text.strip()]
    out = texts[:1]
    for left, right in zip(texts, texts[1:]):
        out += [" ", right] if needs_space(left, right) else [right]
    return lead + "".join(out)


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
    """A final result ("result" words and "text"); with "alternatives" (Vosk's
    SetMaxAlternatives), the first, most likely one; a partial result is kept as it is."""
    record = _expect_object(record, path, "a Vosk result object")
    alternatives = record.get("alternatives")
    if isinstance(alternatives, list) and alternatives:
        best = _vosk_cue(alternatives[0], path + ("alternatives", 0))
        return replace(best, extra=record)
    if "result" in record:
        words = _expect_list(record["result"], path + ("result",))
        tokens = tuple(_vosk_token(w, path + ("result", j), j) for j, w in enumerate(words))
        start = tokens[0].start if tokens else None
        end = tokens[-1].end if tokens else None
        return Cue(start, end, tokens, extra=record)
    if "text" in record:
        tokens = fillers_kept_out(split_tokens(_field_text(record, "text", path)))
        return Cue(None, None, tokens, extra=record)
    if not {"partial", "alternatives"} & set(record):
        raise _ShapeError(path, f"expected a Vosk result ('result', 'text', 'partial' or "
                                f"'alternatives' key), got keys {sorted(record)}")
    return Cue(None, None, (), extra=record)


def _vosk_token(word: Any, path: tuple, index: int) -> Token:
    word = _expect_object(word, path, "a word object")
    text = _field_text(word, "word", path)
    return Token("" if is_filler(text) else text, _field_time(word, "start", path, True),
                 _field_time(word, "end", path, True), before=" " if index else "",
                 extra=word)


def _dump_vosk(transcript: Transcript) -> str:
    style = transcript.meta.get("json_style", _NEW_JSON)
    records = [_vosk_record(cue) for cue in transcript.cues]
    layout = transcript.meta.get("layout", "list" if len(records) != 1 else "object")
    if layout == "lines":
        return write_lines(transcript, records, style)
    return write_document(transcript, records if layout == "list" else records[0], style)


def _vosk_record(cue: Cue) -> dict:
    record = dict(cue.extra)
    alternatives = record.get("alternatives")
    if isinstance(alternatives, list) and alternatives:  # the first one was restored
        best = _vosk_record(replace(cue, extra=alternatives[0]))
        record["alternatives"] = [best, *alternatives[1:]]
        return record
    if not record:
        record = {"result": []} if cue.tokens and cue.tokens[0].start is not None else {}
    if isinstance(record.get("result"), list):
        words = []
        for token in cue.tokens:
            word = dict(token.extra)
            if token.text or not is_filler(word.get("word", "")):  # a filler stays as read
                _put(word, "word", token.text)
            _put(word, "start", token.start)
            _put(word, "end", token.end)
            words.append(word)
        if words != cue.extra.get("result"):
            record["text"] = " ".join(word["word"] for word in words)
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
    text_key = transcript.meta.get("text_key", "pred_text")
    key = output_key or text_key
    taken = next((i for i, cue in enumerate(transcript.cues) if key != text_key
                  and key in cue.extra), None)
    if taken is not None:  # an audio path or a reference transcript would be replaced
        raise ValueError(f"record {taken + 1} already has a {key!r} field; choose an output "
                         f"key the manifest does not use (or {text_key!r}, the text read)")
    records = []
    for cue in transcript.cues:
        record = dict(cue.extra)
        _put(record, key, cue.text)
        records.append(record)
    if len(records) == 1 and _source_text(transcript, "document") is not None:
        return write_document(transcript, records[0], style)
    return write_lines(transcript, records, style)
