"""sherpa-onnx's recognition results as JSON, read and written for `formats`.

    punctum restore -i results.jsonl -o results.restored.jsonl
    punctum restore -i result.json --to srt

A result is what sherpa-onnx's recognisers print and return as JSON (``str(stream.result)``
in Python, ``getResult`` in the other APIs; ``sherpa-onnx-offline`` prints one per file)::

    {"lang": "", "emotion": "", "event": "", "text": " so what do you think",
     "timestamps": [0.24, 0.52, 0.68, 0.80, 0.96, 1.12], "durations": [],
     "tokens": [" so", " what", " do", " you", " th", "ink"], "words": []}

One object, a list of them or JSON lines, each result a cue. Only "text" is restored and
written back; "tokens", "timestamps" and every other key stay as the recogniser wrote them.
Token times start a token; a result is timed from its first token's start to its last's
end, where "durations" give one (TDT models), else to a word's length (0.4 s) after the last
token's start, or to the next segment's start where that comes first. Words get times of
their own where "durations" are given and the tokens spell the text's words (a token opening
with a space or "▁" opens a word). A streaming recogniser's results carry "start_time", the
start of their segment, which their token times count from; consecutive segments of one
stream ("segment") are one text, as they were said; other results are texts of their own (one per
file decoded), which cannot share one subtitle timeline.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from punctum.formats.asr import SECONDS_A_WORD
from punctum.formats.json_records import (
    JsonStyle,
    _expect_object,
    _field_text,
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
    Transcript,
    fillers_kept_out,
    shown,
    split_tokens,
)

_WORD_START = (" ", "\u2581")  # a token that opens a word: " HE", "▁he"


def is_sherpa(first: Any) -> bool:
    """Whether a JSON object is a sherpa-onnx result: "text", "tokens" and "timestamps"."""
    return isinstance(first, dict) and {"text", "tokens", "timestamps"} <= set(first)


def read_sherpa(text: str, name: str, meta: dict) -> Transcript:
    return _read_json_records(text, name, meta, "sherpa", _cues)


def _cues(layout: str, values: list) -> tuple[list[Cue], dict]:
    if not values:
        return [], {"layout": "lines", "documents": []}
    cues, meta = record_cues(layout, values, _cue)
    streamed = len(cues) > 1 and all(isinstance(c.extra.get("segment"), int) and not
                                     isinstance(c.extra.get("segment"), bool) for c in cues)
    if streamed:  # a segment's estimated end stops where a later next segment starts
        cues = [replace(cue, end=min(cue.end, after.start))
                if not cue.extra.get("durations") and None not in (cue.start, after.start)
                and cue.start < after.start else cue
                for cue, after in zip(cues, cues[1:])] + cues[-1:]
    meta["documents"] = [list(range(len(cues)))] if streamed or len(cues) == 1 else [
        [i] for i in range(len(cues))]
    return cues, meta


def _cue(record: Any, path: tuple) -> Cue:
    record = _expect_object(record, path, "a sherpa-onnx result object with 'text'")
    tokens = fillers_kept_out(split_tokens(_field_text(record, "text", path)))
    starts = _numbers(record, "timestamps", path)
    if not starts:
        return Cue(None, None, tokens, extra=record)
    offset = record.get("start_time", 0)
    if not is_time(offset) or isinstance(offset, bool):
        raise _ShapeError(path + ("start_time",), f"expected seconds (a number from 0), got "
                                                  f"{_kind(offset)}")
    back = next((k for k in range(1, len(starts)) if starts[k] < starts[k - 1]), None)
    if back is not None:
        raise _ShapeError(path + ("timestamps", back), f"{starts[back]} comes before the "
                                                       f"timestamp before it ({starts[back - 1]})")
    durations = _numbers(record, "durations", path)
    if durations and len(durations) != len(starts):
        raise _ShapeError(path + ("durations",), f"{len(durations)} durations for "
                                                 f"{len(starts)} timestamps")
    pieces = record.get("tokens")
    if durations and isinstance(pieces, list) and len(pieces) == len(starts):
        tokens = _timed_words(tokens, pieces, starts, durations, offset)
    # a token time starts a token: without durations, the last one is given a word's length
    end = min(starts[-1] + (durations[-1] if durations else SECONDS_A_WORD), MAX_SECONDS)
    return Cue(round(offset + starts[0], 6), round(offset + end, 6), tokens, extra=record)


def _numbers(record: dict, key: str, path: tuple) -> list[float]:
    """The list of seconds under `key` ([] when absent), each a number from 0."""
    values = record.get(key, [])
    if not isinstance(values, list):
        raise _ShapeError(path + (key,), f"expected a list of seconds, got {_kind(values)}")
    for k, value in enumerate(values):
        if isinstance(value, bool) or not is_time(value):
            got = shown(value) if isinstance(value, (int, float)) else _kind(value)
            raise _ShapeError(path + (key, k), f"expected seconds (a number from 0 to "
                                               f"{MAX_SECONDS:.0e}), got {got}")
    return values


def _timed_words(tokens: tuple, pieces: list, starts: list[float], durations: list[float],
                 offset: float) -> tuple:
    """`tokens` with the times of the recogniser's tokens that spell each word, or as they
    are where the tokens do not spell the text's words (inverse text normalisation, byte
    pieces)."""
    groups: list[list[int]] = []
    for k, piece in enumerate(pieces):
        if not isinstance(piece, str):
            return tokens
        if not groups or piece.startswith(_WORD_START):
            groups.append([])
        groups[-1].append(k)
    worded = [t for t, token in enumerate(tokens) if token.text]
    if len(groups) != len(worded):
        return tokens
    out = list(tokens)
    for t, group in zip(worded, groups):
        spelt = "".join(pieces[k] for k in group).replace("\u2581", "").strip()
        if _letters(spelt) != _letters(tokens[t].text):
            return tokens
        start = offset + starts[group[0]]
        end = offset + starts[group[-1]] + durations[group[-1]]
        out[t] = replace(tokens[t], start=round(start, 6), end=round(max(end, start), 6))
    return tuple(out)


def _letters(text: str) -> str:
    return "".join(c for c in text.lower() if c.isalnum())


def dump_sherpa(transcript: Transcript) -> str:
    style = transcript.meta.get("json_style", JsonStyle())
    records = []
    for cue in transcript.cues:
        record = dict(cue.extra) if isinstance(cue.extra, dict) else {}
        _put(record, "text", cue.text)
        records.append(record)
    layout = transcript.meta.get("layout", "list" if len(records) != 1 else "object")
    if layout == "lines":
        return write_lines(transcript, records, style)
    return write_document(transcript, records if layout == "list" else records[0], style)
