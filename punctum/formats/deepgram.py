"""Deepgram's JSON responses, read and written for `formats`.

    punctum restore -i call.json -o call.restored.json     # /v1/listen, punctuate=false
    punctum restore -i call.json --to srt --resegment

A pre-recorded response (``/v1/listen``; Deepgram leaves punctuation and casing out unless
``punctuate`` or ``smart_format`` is asked for)::

    {"metadata": {...}, "results": {"channels": [{"alternatives": [
        {"transcript": "so what do you think", "confidence": 0.99,
         "words": [{"word": "so", "start": 0.08, "end": 0.32, "confidence": 0.99,
                    "speaker": 0}, ...]}]}],
     "utterances": [{"start": 0.08, "end": 1.2, "channel": 0, "transcript": "so what do
                     you think", "words": [...], "speaker": 0, "id": "..."}]}}

or the live API's messages, one per line (``{"type": "Results", "channel_index": [0, 1],
"is_final": true, "channel": {"alternatives": [...]}, ...}``). The first alternative of each
channel is restored: each word gets the restored word as "punctuated_word" (the key Deepgram
itself writes when it punctuates, and what caption tools read), "word" stays as recognised,
and the alternative's "transcript" is rewritten from the words. The utterances' copies of
the words and their transcripts get the same words. Times, confidences and every other key
stay as read; "paragraphs" (only given with punctuation) stay as Deepgram wrote them.
Interim live results ("is_final": false) stay as read.

A cue is an utterance (``utterances=true``), a live result, or a channel's words, cut at
pauses of 0.8 s and where the diarised speaker changes ("Speaker 0", as Deepgram names
them); a speaker's change ends the sentence before it. Each channel is a text of its own;
several channels convert to one subtitle timeline labelled "Channel 0", "Channel 1".
"""

from __future__ import annotations

from typing import Any

from punctum.formats.json_records import (
    _expect_list,
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

_MESSAGES = frozenset({"Results", "Metadata", "UtteranceEnd", "SpeechStarted"})


def is_deepgram(first: Any) -> bool:
    """Whether a JSON value is a Deepgram response: "results" with "channels", or a live
    message ("channel" with "alternatives", or a "type" Deepgram's live API sends)."""
    if not isinstance(first, dict):
        return False
    results, channel = first.get("results"), first.get("channel")
    return (isinstance(results, dict) and isinstance(results.get("channels"), list)) or (
        isinstance(channel, dict) and isinstance(channel.get("alternatives"), list)) or (
        first.get("type") in _MESSAGES and ("channel_index" in first or "request_id" in first
                                            or "channel" in first))


def read_deepgram(text: str, name: str, meta: dict) -> Transcript:
    return _read_json_records(text, name, meta, "deepgram", _cues)


def _cues(layout: str, values: list) -> tuple[list, dict]:
    """Cues of every response or live result; meta "values": the records as read (JSON
    lines: a list of them; else the document's root), under which the places start."""
    root, records = records_of(layout, values)
    expect_shape(records, is_deepgram,
                 "a Deepgram response ('results' with 'channels', or live messages)")
    found = Layout()
    for number, (path, record) in enumerate(records):
        record = _expect_object(record, path, "a Deepgram response object")
        if isinstance(record.get("results"), dict):
            _response(record, path, number, found)
        elif isinstance(record.get("channel"), dict) and record.get("is_final") is not False:
            _message(record, path, found)
    cues, meta = word_cues(found, channel_names)
    return cues, {**meta, "values": root, "layout": layout}


def _response(record: dict, path: tuple, number: int, found: Layout) -> None:
    """A pre-recorded response (the `number`th read: a recording of its own): each
    channel's first alternative, its utterances' copies."""
    results_path = path + ("results",)
    channels = _expect_list(record["results"].get("channels"), results_path + ("channels",))
    alternatives = []
    for c, channel in enumerate(channels):
        channel_path = results_path + ("channels", c)
        channel = _expect_object(channel, channel_path, "a channel object")
        listed = _expect_list(channel.get("alternatives", []),
                              channel_path + ("alternatives",))
        if listed:
            alt_path = channel_path + ("alternatives", 0)
            alternatives.append(((number, c), alt_path, _expect_object(listed[0], alt_path,
                                                             "an alternative object")))
    originals: dict[tuple, list[tuple]] = {}  # (channel, text, start, end): places, in order
    keyed = []
    for c, alt_path, alternative in alternatives:
        words = words_of(alternative, alt_path)
        keys = [_key(word, alt_path + ("words", k)) for k, word in enumerate(words)]
        for k, key in enumerate(keys):
            originals.setdefault((c, *key), []).append(alt_path + ("words", k))
        keyed.append((c, alt_path, alternative, words, keys))
    opening = _utterances(record["results"].get("utterances"), results_path, number,
                          originals, found)
    for c, alt_path, alternative, words, keys in keyed:
        _alternative(alternative, alt_path, c, opening, found, words, keys)


def _message(record: dict, path: tuple, found: Layout) -> None:
    """A live result (final): its channel's first alternative, a cue of its own."""
    index = record.get("channel_index")
    channel = ("live", channel_key(index[0], path + ("channel_index", 0))
               if isinstance(index, list) and index else 0)
    listed = record["channel"].get("alternatives")
    if isinstance(listed, list) and listed:
        alt_path = path + ("channel", "alternatives", 0)
        alternative = _expect_object(listed[0], alt_path, "an alternative object")
        words = words_of(alternative, alt_path)
        keys = [_key(word, alt_path + ("words", k)) for k, word in enumerate(words)]
        _alternative(alternative, alt_path, channel, {alt_path + ("words", 0)}, found, words,
                     keys)


def _alternative(alternative: dict, alt_path: tuple, channel, opening: set, found: Layout,
                 words: list, keys: list[tuple]) -> None:
    """The words of an alternative (with their checked `keys`), or its transcript alone."""
    places = []
    for k, (word, (text, start, end)) in enumerate(zip(words, keys)):
        place = alt_path + ("words", k)
        places.append(place)
        found.items.append(Word(place, text, start, end, _speaker(word), channel,
                                opens=place in opening))
    transcript = alternative.get("transcript")
    if places and isinstance(transcript, str):
        found.spelt.append((alt_path + ("transcript",), places))
    elif not places and isinstance(transcript, str) and transcript.strip():
        found.items.append(Text(alt_path + ("transcript",), transcript, channel=channel))


def _utterances(utterances: Any, results_path: tuple, number: int, originals: dict,
                found: Layout) -> set:
    """Copies of the channels' words in the utterances (each a transcript that spells its
    words); the places of the words that open an utterance."""
    if not isinstance(utterances, list):
        return set()
    opening = set()
    for u, utterance in enumerate(utterances):
        path = results_path + ("utterances", u)
        utterance = _expect_object(utterance, path, "an utterance object")
        channel = (number, channel_key(utterance.get("channel", 0), path + ("channel",)))
        places = [path + ("words", k) for k in range(len(words_of(utterance, path)))]
        keys = [(channel, *_key(word, place))
                for word, place in zip(words_of(utterance, path), places)]
        first = copied(originals, keys, places, found)
        if first is None:  # words of its own: left as read
            continue
        opening.add(first)
        if isinstance(utterance.get("transcript"), str):
            found.spelt.append((path + ("transcript",), places))
    return opening


def _key(word: dict, place: tuple) -> tuple:
    """(text, start, end) of a word record, checked."""
    _field_text(word, "word", place)
    return (_text(word), _field_time(word, "start", place, True),
            _field_time(word, "end", place, True))


def _text(word: dict) -> str:
    """The word as written: "punctuated_word" where Deepgram punctuated, else "word"."""
    punctuated = word.get("punctuated_word")
    return punctuated if isinstance(punctuated, str) else word["word"]


def _speaker(word: dict) -> str | None:
    speaker = word.get("speaker")
    if isinstance(speaker, bool) or not isinstance(speaker, (int, str)) or speaker == "":
        return None
    return f"Speaker {speaker}"


def _put(word: dict, text: str) -> None:
    word["punctuated_word"] = text


def dump_deepgram(transcript: Transcript) -> str:
    return dump_words(transcript, _text, _put)
