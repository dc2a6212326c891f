"""IBM Watson Speech to Text's JSON results, read and written for `formats`.

    punctum restore -i results.json -o results.restored.json
    punctum restore -i results.json --to srt

A response of ``/v1/recognize`` (or of an asynchronous job; its words come unpunctuated,
lowercase but for some names, with ``%HESITATION`` for a hesitation)::

    {"result_index": 0,
     "results": [{"final": true, "alternatives": [
         {"transcript": "so what do you think ", "confidence": 0.96,
          "timestamps": [["so", 0.08, 0.3], ["what", 0.3, 0.5], ...],
          "word_confidence": [["so", 0.99], ["what", 0.98], ...]}]}],
     "speaker_labels": [{"from": 0.08, "to": 0.3, "speaker": 0, "confidence": 0.6,
                         "final": false}, ...]}

or the WebSocket interface's messages, one per line (speaker labels may come in messages of
their own), or an asynchronous job's (``GET /v1/recognitions/{id}``: ``{"id", "status",
"results": [{"result_index", "results": [...]}]}``). The first alternative of each final
result is restored: the word of each "timestamps" entry, the same word in
"word_confidence", and the "transcript" (its trailing space kept). Times, confidences,
"word_alternatives", "keywords_result", interim results ("final": false) and every other
key stay as read. ``%HESITATION`` never reaches the model. A cue is a result, cut at pauses
of 0.8 s and where the speaker changes ("speaker_labels", matched by each word's times:
"Speaker 0"); a speaker's change ends the sentence before it. Results without timestamps
are restored as text, untimed.
"""

from __future__ import annotations

from typing import Any

from punctum.formats.json_records import (
    _expect_list,
    _expect_object,
    _kind,
    _read_json_records,
    _ShapeError,
    is_time,
)
from punctum.formats.transcript import Transcript
from punctum.formats.wordlists import (
    Layout,
    Text,
    Word,
    dump_words,
    expect_shape,
    records_of,
    word_cues,
)


def is_watson(first: Any) -> bool:
    """Whether a JSON value is Watson's: "results" whose first holds "final" and
    "alternatives" (none, with a "result_index": silence), an asynchronous job's (its
    "results" a list of those), speaker labels alone, or {"state": "listening"}."""
    if not isinstance(first, dict):
        return False
    if set(first) == {"state"} or (set(first) == {"speaker_labels"}):
        return True
    results = first.get("results")
    if not isinstance(results, list):
        return False
    if not results:
        return "result_index" in first
    head = results[0]
    return isinstance(head, dict) and ("final" in head and isinstance(
        head.get("alternatives"), list) or "results" in head and is_watson(head))


def read_watson(text: str, name: str, meta: dict) -> Transcript:
    return _read_json_records(text, name, meta, "watson", _cues)


def _cues(layout: str, values: list) -> tuple[list, dict]:
    """Cues of every final result; meta "values": the records as read (JSON lines: a list
    of them; else the document's root), under which the places start. Lines, or a list of
    responses, are one stream."""
    root, records = records_of(layout, values)
    expect_shape(records, is_watson,
                 "a Watson result ('results' with 'final' and 'alternatives')")
    responses = [(path, response) for path, record in records
                 for path, response in _responses(record, path)]
    speakers: dict[tuple[float, float], str] = {}  # (a stream's labels: the latest hold)
    for path, response in responses:
        speakers.update(_speakers(response.get("speaker_labels"), path + ("speaker_labels",)))
    found = Layout()
    for path, response in responses:
        results = _expect_list(response.get("results", []), path + ("results",))
        for r, result in enumerate(results):
            result_path = path + ("results", r)
            result = _expect_object(result, result_path, "a result object")
            if result.get("final") is not False:
                _result(result, result_path, speakers, found)
    cues, meta = word_cues(found)
    return cues, {**meta, "values": root, "layout": layout}


def _responses(record: Any, path: tuple) -> list[tuple[tuple, dict]]:
    """The recognition responses of a record: itself, or those of an asynchronous job
    ({"id", "status", "results": [{"result_index", "results"}]})."""
    record = _expect_object(record, path, "a Watson results object")
    results = record.get("results")
    if isinstance(results, list) and results and all(
            isinstance(r, dict) and "results" in r and "alternatives" not in r for r in results):
        return [(path + ("results", k), response) for k, response in enumerate(results)]
    return [(path, record)]


def _result(result: dict, path: tuple, speakers: dict, found: Layout) -> None:
    listed = _expect_list(result.get("alternatives") or [], path + ("alternatives",))
    if not listed:
        return
    alt_path = path + ("alternatives", 0)
    alternative = _expect_object(listed[0], alt_path, "an alternative object")
    stamps = _expect_list(alternative.get("timestamps") or [], alt_path + ("timestamps",))
    transcript = alternative.get("transcript")
    if not stamps:
        if isinstance(transcript, str) and transcript.strip():
            found.items.append(Text(alt_path + ("transcript",), transcript))
        return
    places = [alt_path + ("timestamps", k) for k in range(len(stamps))]
    for k, (stamp, place) in enumerate(zip(stamps, places)):
        text, start, end = _stamp(stamp, place)
        found.items.append(Word(place, text, start, end, speakers.get((start, end)),
                                opens=k == 0))
    confidences = alternative.get("word_confidence")
    if isinstance(confidences, list) and len(confidences) == len(stamps) and all(
            isinstance(c, list) and c and c[0] == s[0] for c, s in zip(confidences, stamps)):
        for k, place in enumerate(places):
            found.copies[place] = [alt_path + ("word_confidence", k)]
    if isinstance(transcript, str):
        found.spelt.append((alt_path + ("transcript",), places))


def _stamp(stamp: Any, place: tuple) -> tuple[str, float, float]:
    """A "timestamps" entry [word, start, end], checked."""
    if not (isinstance(stamp, list) and len(stamp) == 3 and isinstance(stamp[0], str)):
        raise _ShapeError(place, f"expected [word, start, end], got {_kind(stamp)}")
    for k in (1, 2):
        if isinstance(stamp[k], bool) or not is_time(stamp[k]):
            raise _ShapeError(place + (k,), f"expected a time in seconds, got "
                                            f"{_kind(stamp[k])}")
    return stamp[0], float(stamp[1]), float(stamp[2])


def _speakers(labels: Any, path: tuple) -> dict[tuple[float, float], str]:
    """Each labelled word's speaker by its (from, to) times."""
    if labels is None:
        return {}
    speakers = {}
    for k, label in enumerate(_expect_list(labels, path)):
        label = _expect_object(label, path + (k,), "a speaker label object")
        times, speaker = (label.get("from"), label.get("to")), label.get("speaker")
        if all(is_time(t) and not isinstance(t, bool) for t in times) and isinstance(
                speaker, int) and not isinstance(speaker, bool):
            speakers[tuple(float(t) for t in times)] = f"Speaker {speaker}"
    return speakers


def _text(record: list) -> str:
    return record[0]


def _put(record: list, text: str) -> None:
    record[0] = text


def dump_watson(transcript: Transcript) -> str:
    return dump_words(transcript, _text, _put)
