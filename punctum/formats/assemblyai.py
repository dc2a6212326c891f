"""AssemblyAI's transcript JSON, read and written for `formats`.

    punctum restore -i transcript.json -o transcript.restored.json   # punctuate: false
    punctum restore -i transcript.json --to vtt --resegment

A transcript (``GET /v2/transcript/{id}``; asked for with ``"punctuate": false,
"format_text": false``, its words come lowercase and unpunctuated)::

    {"id": "...", "status": "completed", "text": "so what do you think",
     "words": [{"text": "so", "start": 80, "end": 320, "confidence": 0.99,
                "speaker": "A"}, ...],
     "utterances": [{"speaker": "A", "text": "so what do you think", "start": 80,
                     "end": 1200, "confidence": 0.98, "words": [...]}], ...}

or the sentences or paragraphs of one (``/sentences``, ``/paragraphs``: ``{"sentences":
[{"text": ..., "words": [...]}, ...]}``). Each word's "text" gets the restored word; "text"
(the transcript's, an utterance's, a sentence's) is rewritten from its words; the
utterances' copies of the words get the same. Times (milliseconds), confidences and every
other key stay as read. One object, a list of them or JSON lines, each transcript a text of
its own (each channel of a ``multichannel`` one too); the real-time API's messages as JSON
lines: the final transcripts one text, the partial ones as read.

A cue is an utterance (``speaker_labels``), a sentence or paragraph, or a transcript's
words, cut at pauses of 0.8 s and where the speaker changes ("Speaker A", as AssemblyAI
names them); a speaker's change ends the sentence before it.
"""

from __future__ import annotations

from typing import Any

from punctum.formats.json_records import (
    _expect_object,
    _field_text,
    _field_time,
    _read_json_records,
)
from punctum.formats.transcript import Transcript
from punctum.formats.wordlists import (
    Layout,
    Text,
    Word,
    channel_key,
    channel_names,
    copied,
    dump_words,
    expect_shape,
    records_of,
    word_cues,
    words_of,
)

_PARTS = ("sentences", "paragraphs")  # the /sentences and /paragraphs endpoints' lists


def is_assemblyai(first: Any) -> bool:
    """Whether a JSON value is an AssemblyAI transcript (an "audio_url", or "text" with
    "words" whose records hold "text", "start" and "end") or its sentences or paragraphs."""
    if not isinstance(first, dict):
        return False
    if "text" in first and ("audio_url" in first or _worded(first.get("words"))):
        return True
    return any(isinstance(first.get(key), list) and first[key] and isinstance(
        first[key][0], dict) and "text" in first[key][0] and "words" in first[key][0]
        for key in _PARTS)


def _worded(words: Any) -> bool:
    return isinstance(words, list) and bool(words) and isinstance(words[0], dict) and {
        "text", "start", "end"} <= set(words[0])


def read_assemblyai(text: str, name: str, meta: dict) -> Transcript:
    return _read_json_records(text, name, meta, "assemblyai", _cues)


def _cues(layout: str, values: list) -> tuple[list, dict]:
    """Cues of every transcript; meta "values": the records as read (JSON lines: a list of
    them; else the document's root), under which the places start."""
    root, records = records_of(layout, values)
    expect_shape(records, is_assemblyai,
                 "an AssemblyAI transcript ('text' with 'words', or 'sentences')")
    found = Layout()
    for number, (path, record) in enumerate(records):
        record = _expect_object(record, path, "an AssemblyAI transcript object")
        if record.get("message_type") == "PartialTranscript":
            continue  # real-time: a partial transcript, kept as read
        if record.get("message_type") == "FinalTranscript":
            number = -1  # real-time: the final transcripts of a session are one text
        part = next((key for key in _PARTS if isinstance(record.get(key), list)), None)
        if part is not None and "words" not in record:
            _parts(record, path, part, number, found)
        else:
            _transcript(record, path, number, found)
    cues, meta = word_cues(found, channel_names)
    return cues, {**meta, "values": root, "layout": layout}


def _transcript(record: dict, path: tuple, number: int, found: Layout) -> None:
    """A transcript's words (the utterances copy them), or its text where it lists none."""
    words = words_of(record, path)
    if not words:
        text = record.get("text")
        if isinstance(text, str) and text.strip():
            found.items.append(Text(path + ("text",), text, channel=(number, None)))
        return
    places = [path + ("words", k) for k in range(len(words))]
    keys = [_key(word, place) for word, place in zip(words, places)]  # (with the channel)
    originals: dict[tuple, list[tuple]] = {}
    for key, place in zip(keys, places):
        originals.setdefault(key, []).append(place)
    opening = set()
    utterances = record.get("utterances")
    for u, utterance in enumerate(utterances if isinstance(utterances, list) else ()):
        at_path = path + ("utterances", u)
        utterance = _expect_object(utterance, at_path, "an utterance object")
        copies = words_of(utterance, at_path)
        copy_places = [at_path + ("words", k) for k in range(len(copies))]
        first = copied(originals, [_key(w, p) for w, p in zip(copies, copy_places)],
                       copy_places, found)
        if first is not None:
            opening.add(first)
            if isinstance(utterance.get("text"), str):
                found.spelt.append((at_path + ("text",), copy_places))
    for word, place, (_, start, end, channel) in zip(words, places, keys):
        found.items.append(Word(place, word["text"], start, end, _speaker(word),
                                (number, channel), opens=place in opening))
    if isinstance(record.get("text"), str):
        found.spelt.append((path + ("text",), places))


def _parts(record: dict, path: tuple, part: str, number: int, found: Layout) -> None:
    """The sentences or paragraphs of a transcript: each a cue, its text from its words."""
    for s, sentence in enumerate(record[part]):
        at_path = path + (part, s)
        sentence = _expect_object(sentence, at_path, f"a {part[:-1]} object")
        words = words_of(sentence, at_path)
        places = [at_path + ("words", k) for k in range(len(words))]
        for k, (word, place) in enumerate(zip(words, places)):
            _, start, end, channel = _key(word, place)
            found.items.append(Word(place, word["text"], start, end, _speaker(word),
                                    (number, channel), opens=k == 0))
        if places and isinstance(sentence.get("text"), str):
            found.spelt.append((at_path + ("text",), places))
        elif not places and isinstance(sentence.get("text"), str) and sentence["text"].strip():
            found.items.append(Text(at_path + ("text",), sentence["text"],
                                    channel=(number, None)))


def _key(word: dict, place: tuple) -> tuple:
    """(text, start, end, channel) of a word record, checked; times in seconds."""
    text = _field_text(word, "text", place)
    start = _field_time(word, "start", place, True)
    end = _field_time(word, "end", place, True)
    return text, start / 1000, end / 1000, channel_key(word.get("channel"), place + ("channel",))


def _speaker(word: dict) -> str | None:
    speaker = word.get("speaker")
    return f"Speaker {speaker}" if isinstance(speaker, str) and speaker.strip() else None


def _text(word: dict) -> str:
    return word["text"]


def _put(word: dict, text: str) -> None:
    if word.get("text") != text:
        word["text"] = text


def dump_assemblyai(transcript: Transcript) -> str:
    return dump_words(transcript, _text, _put)
