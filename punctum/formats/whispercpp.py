"""whisper.cpp's JSON (``whisper-cli -oj``, ``-ojf``), read and written for `formats`.

    punctum restore -i talk.json -o talk.restored.json      # whisper-cli -oj -of talk
    punctum restore -i talk.json --to srt -o talk.srt

One document::

    {"systeminfo": ..., "model": {...}, "params": {...}, "result": {"language": "en"},
     "transcription": [{"timestamps": {"from": "00:00:00,000", "to": "00:00:04,120"},
                        "offsets": {"from": 0, "to": 4120}, "text": " so what do you think",
                        "tokens": [...], "speaker": "0", "speaker_turn_next": false}, ...]}

A segment is a cue: its times are "offsets" (milliseconds) or, without them, "timestamps"
("HH:MM:SS,mmm"); a segment with neither stays untimed (it cannot become a subtitle). Only each
segment's "text" is restored and written back; everything else, "tokens" of ``-ojf``
included (the recogniser's sub-word pieces with their ids, probabilities and times), is
written back as read. A change of "speaker" (``--diarize``; "?" is unknown, no change) or a
segment's "speaker_turn_next" (``-tdrz``) ends the sentence before the next speaker's first
word (a segment without words, "[BLANK_AUDIO]", tells no speaker). Bracketed non-speech
("[BLANK_AUDIO]", "(music)") never reaches the model.
"""

from __future__ import annotations

import re
from typing import Any

from punctum.formats.json_records import (
    JsonStyle,
    _expect_list,
    _expect_object,
    _field_text,
    _kind,
    _put,
    _read_json_records,
    _ShapeError,
    is_time,
    write_document,
)
from punctum.formats.transcript import (
    MAX_SECONDS,
    Cue,
    Transcript,
    fillers_kept_out,
    shown,
    split_tokens,
)

# whisper.cpp's timestamps: "00:01:02,345" (a "." before the milliseconds in some builds)
_STAMP = re.compile(r"^(\d{1,12}):([0-5]\d):([0-5]\d)[,.](\d{3})$")
_UNKNOWN_SPEAKER = "?"


def is_whispercpp(first: Any) -> bool:
    """Whether a JSON document's root is whisper.cpp's: an object with a "transcription"
    list."""
    return isinstance(first, dict) and isinstance(first.get("transcription"), list)


def read_whispercpp(text: str, name: str, meta: dict) -> Transcript:
    return _read_json_records(text, name, meta, "whispercpp", _cues)


def _cues(layout: str, values: list) -> tuple[list[Cue], dict]:
    if not values:
        return [], {}
    if len(values) > 1:
        raise _ShapeError((1,), "expected one JSON object, got several lines of JSON")
    path = (0,) if layout == "lines" else ()
    root = _expect_object(values[0][1], path, "a whisper.cpp result object with "
                                              "'transcription'")
    segments = _expect_list(root.get("transcription"), path + ("transcription",))
    cues = [_cue(s, path + ("transcription", i)) for i, s in enumerate(segments)]
    return cues, {"record": root}


def _cue(segment: Any, path: tuple) -> Cue:
    segment = _expect_object(segment, path, "a segment object with 'text'")
    start, end = _times(segment, path)
    if start is not None and end is not None and end < start:
        key = "offsets" if "offsets" in segment else "timestamps"
        span = segment[key]
        raise _ShapeError(path + (key,), f"the segment ends ({shown(span['to'])}) before it "
                                         f"starts ({shown(span['from'])})")
    tokens = fillers_kept_out(split_tokens(_field_text(segment, "text", path)))
    return Cue(start, end, tokens, extra=segment)


def _times(segment: dict, path: tuple) -> tuple[float | None, float | None]:
    """(start, end) in seconds: from "offsets" (milliseconds), else from "timestamps", else
    (None, None)."""
    if "offsets" in segment:
        span = _expect_object(segment["offsets"], path + ("offsets",),
                              "an object with 'from' and 'to' in milliseconds")
        return tuple(_milliseconds(span.get(key), path + ("offsets", key))
                     for key in ("from", "to"))
    if "timestamps" in segment:
        span = _expect_object(segment["timestamps"], path + ("timestamps",),
                              "an object with 'from' and 'to' as HH:MM:SS,mmm")
        return tuple(_stamp(span.get(key), path + ("timestamps", key))
                     for key in ("from", "to"))
    return None, None


def _milliseconds(value: Any, path: tuple) -> float:
    if isinstance(value, bool) or not is_time(value):
        raise _ShapeError(path, f"expected milliseconds (a number from 0), got {_kind(value)}")
    return value / 1000


def _stamp(value: Any, path: tuple) -> float:
    found = _STAMP.match(value) if isinstance(value, str) else None
    if found is None:
        raise _ShapeError(path, f"expected a time as HH:MM:SS,mmm, got {_kind(value)}")
    hours, minutes, seconds, millis = map(int, found.groups())
    total = ((hours * 60 + minutes) * 60 + seconds) * 1000 + millis
    if total > MAX_SECONDS * 1000:
        raise _ShapeError(path, f"{value[:40]!r} is beyond {MAX_SECONDS:.0e} seconds")
    return total / 1000


def speaker_turns(cues: tuple[Cue, ...] | list[Cue]) -> list[frozenset[int]]:
    """For each cue, the tokens where another speaker starts (its first word): after a
    change of "speaker" ("?" changes nothing) or a segment marked "speaker_turn_next"."""
    turns, speaker, turn_next = [], None, False
    for cue in cues:
        extra = cue.extra if isinstance(cue.extra, dict) else {}
        said_by = extra.get("speaker")
        known = isinstance(said_by, str) and said_by.strip() not in ("", _UNKNOWN_SPEAKER)
        changed = turn_next or (known and speaker is not None and said_by != speaker)
        first = next((t for t, token in enumerate(cue.tokens) if token.text), None)
        turns.append(frozenset({first} if changed and first is not None else ()))
        if first is not None:  # a segment without words carries a turn on, and its
            turn_next = extra.get("speaker_turn_next") is True  # speaker says nothing
            speaker = said_by if known else speaker
        elif extra.get("speaker_turn_next") is True:
            turn_next = True
    return turns


def dump_whispercpp(transcript: Transcript) -> str:
    style = transcript.meta.get("json_style", JsonStyle(indent=4, separators=(",", ": ")))
    record = transcript.meta.get("record")
    segments = []
    for cue in transcript.cues:
        segment = dict(cue.extra) if isinstance(cue.extra, dict) else {}
        _put(segment, "text", cue.text)
        segments.append(segment)
    root = dict(record) if record is not None else {}
    root["transcription"] = segments
    return write_document(transcript, root, style)
