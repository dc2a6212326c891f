"""Google Cloud Speech-to-Text's JSON responses, read and written for `formats`.

    punctum restore -i response.json -o response.restored.json
    punctum restore -i response.json --to srt --resegment

A response (``speech:recognize``, ``longrunningrecognize``'s operation with its "response",
a v2 batch result file; without ``enableAutomaticPunctuation`` the words come unpunctuated)::

    {"results": [{"alternatives": [{"transcript": "so what do you think",
                                    "confidence": 0.93,
                                    "words": [{"startTime": "0.080s", "endTime": "0.320s",
                                               "word": "so"}, ...]}],
                  "resultEndTime": "1.200s", "languageCode": "en-us"}, ...],
     "totalBilledTime": "2s"}

or streaming responses, one per line. The first alternative of each final result is
restored: each word's "word" and the alternative's "transcript" (with its leading space).
Times are read as JSON writes protobuf durations ("1.300s"), as numbers of seconds or as
``{"seconds", "nanos"}``; under the v1 names (startTime, endTime), v2's (startOffset,
endOffset) or the proto field names (start_time). Every other key stays as read; interim
streaming results too ("isFinal": false, or no "isFinal" where other results have one, as
protobuf's JSON leaves false out). A response without results (silence) is read as empty.

A cue is a result; results without word times are timed from the previous result's end to
their "resultEndTime". With speaker diarisation every result repeats the words said before
it with their speakers ("speakerTag": 1, "speakerLabel": "1"): the words are read once, the
repeats get the same restored words, and the speakers ("Speaker 1") cut cues and end
sentences where they change. A result whose words begin with all its channel has said, in
order (words by text and times, transcripts by their words), repeats them; where earlier
results gave transcripts alone, its words take their place (the transcripts are rewritten
from them); other words are said anew. Each channel ("channelTag") is a text of its own, and
each file of a v2 batch ("results" by URI) a recording of its own; channels convert to one
timeline labelled "Channel 1", "Channel 2".
"""

from __future__ import annotations

import re
from typing import Any

from punctum.formats.json_records import (
    _expect_list,
    _expect_object,
    _field_text,
    _kind,
    _read_json_records,
    _ShapeError,
    is_time,
)
from punctum.formats.transcript import MAX_SECONDS, Transcript, shown
from punctum.formats.wordlists import (
    Layout,
    Text,
    Word,
    at,
    channel_key,
    channel_names,
    dump_words,
    expect_shape,
    records_of,
    word_cues,
)

_DURATION = re.compile(r"^(\d{1,12}(?:\.\d{0,9})?)s$")  # protobuf's JSON: "1.300s", "0s"
_STARTS = ("startTime", "startOffset", "start_time", "start_offset")
_ENDS = ("endTime", "endOffset", "end_time", "end_offset")
_RESULT_ENDS = ("resultEndTime", "resultEndOffset", "result_end_time", "result_end_offset")


_ROOT_KEYS = frozenset({"totalBilledTime", "total_billed_time", "requestId", "request_id",
                        "speechAdaptationInfo", "usingLegacyModels", "metadata", "@type"})
_BILLED = frozenset({"totalBilledTime", "total_billed_time", "totalBilledDuration",
                     "total_billed_duration", "requestId", "request_id"})


def is_google(first: Any) -> bool:
    """Whether a JSON value is a Speech-to-Text response: "results" whose first holds
    "alternatives" with a "transcript" or "words" (also under an operation's "response", or
    per file of a v2 batch), a response without results (its billed time alone), or a
    streaming event."""
    if isinstance(first, dict) and isinstance(first.get("response"), dict):
        first = first["response"]
    if not isinstance(first, dict):
        return False
    results = first.get("results")
    if isinstance(results, dict):  # v2 batch: per file, its transcript's results
        return any(isinstance(file, dict) and _results_of(file) is not None
                   for file in results.values())
    if results is None:  # (silence: protobuf's JSON leaves out an empty list of results)
        metadata = first.get("metadata")
        return ("speechEventType" in first or "speech_event_type" in first or (
            bool(first) and set(first) <= _ROOT_KEYS and bool(_BILLED & (
                set(first) | (set(metadata) if isinstance(metadata, dict) else set())))))
    if not isinstance(results, list):
        return False
    if not results:
        return bool(set(first) & _ROOT_KEYS)
    result = results[0]
    listed = result.get("alternatives") if isinstance(result, dict) else None
    return (isinstance(listed, list) and not {"type", "final"} & set(result)
            and (not listed or isinstance(listed[0], dict) and bool(
                {"transcript", "words"} & set(listed[0]))))


def _results_of(file: dict) -> tuple[str, ...] | None:
    """Where a v2 batch file result keeps its results: its inline result's transcript
    (else its transcript, an older field)."""
    for keys in (("inlineResult", "transcript"), ("inline_result", "transcript"),
                 ("transcript",)):
        node: Any = file
        for key in keys:
            node = node.get(key) if isinstance(node, dict) else None
        if isinstance(node, dict) and isinstance(node.get("results"), list):
            return keys
    return None


def read_google(text: str, name: str, meta: dict) -> Transcript:
    return _read_json_records(text, name, meta, "google", _cues)


def _cues(layout: str, values: list) -> tuple[list, dict]:
    """Cues of every final result; meta "values": the records as read (JSON lines: a list
    of them; else the document's root), under which the places start. Lines, or a list of
    responses, are one stream; the files of a v2 batch are recordings of their own."""
    root, records = records_of(layout, values)
    expect_shape(records, is_google,
                 "a Speech-to-Text response ('results' with 'alternatives')")
    lists = []  # (path of a results list, its recording: () for one stream)
    for path, record in records:
        record = _expect_object(record, path, "a Speech-to-Text response object")
        if isinstance(record.get("response"), dict):
            path, record = path + ("response",), record["response"]
        results = record.get("results", [])
        if isinstance(results, dict):
            for number, (uri, file) in enumerate(results.items()):
                keys = _results_of(file) if isinstance(file, dict) else None
                if keys is not None:
                    lists.append((path + ("results", uri, *keys, "results"), (path, number)))
        elif "results" in record:  # (protobuf's JSON leaves out an empty list)
            _expect_list(results, path + ("results",))
            lists.append((path + ("results",), ()))
    results = [(at_path + (r,), result, number) for at_path, number in lists
               for r, result in enumerate(at(root, at_path))]
    flagged = any(isinstance(result, dict) and {"isFinal", "is_final"} & set(result)
                  for _, result, _ in results)  # (protobuf's JSON leaves out isFinal: false)
    reading = _Reading()
    for path, result, number in results:
        result = _expect_object(result, path, "a result object")
        if _final(result, flagged):
            reading.result(result, path, number)
    cues, meta = word_cues(reading.layout(), channel_names)
    return cues, {**meta, "values": root, "layout": layout}


def _final(result: dict, flagged: bool) -> bool:
    """Whether a result is final: as its "isFinal" says; without one, unless other results
    of the stream say it (protobuf's JSON leaves "isFinal": false out) or it has a
    "stability" (interim results do)."""
    flag = _first(result, ("isFinal", "is_final"))
    if flag is not None:
        return flag is True
    return not flagged and "stability" not in result


class _Reading:
    """Results read in turn: words said once, their repeats (diarisation) as copies.

    Each channel keeps what it has said in order (`sequence`: ("word", key, place) for a word
    record, ("text", Text, its words) for a result that gave a transcript alone). A result
    whose words begin with all of that, in order (diarisation's running aggregate), lists
    those words again: its first ones are copies (of word records) or take the place of the
    transcripts (which are then rewritten from them); the rest are said anew.
    """

    def __init__(self) -> None:
        self.found = Layout()
        self.sequence: dict[Any, list[tuple]] = {}  # channel: what it said, in order
        self.speakers: dict[tuple, str] = {}  # place of a word said: its latest speaker
        self.ends: dict[Any, float] = {}  # channel: the end of its last result

    def result(self, result: dict, path: tuple, recording: tuple) -> None:
        tag = next((name for name in ("channelTag", "channel_tag") if name in result), None)
        channel = (recording, None if tag is None else channel_key(result[tag], path + (tag,)))
        end = _seconds(result, _RESULT_ENDS, path)
        listed = result.get("alternatives") or []
        listed = _expect_list(listed, path + ("alternatives",))
        if not listed:
            return
        alt_path = path + ("alternatives", 0)
        alternative = _expect_object(listed[0], alt_path, "an alternative object")
        words = _expect_list(alternative.get("words") or [], alt_path + ("words",))
        transcript = alternative.get("transcript")
        if words:
            known = [c for c in self.sequence if c[0] == recording]
            if tag is None and len(known) == 1:  # (an aggregate without the channel's tag)
                channel = known[0]
            self._words(words, alt_path, channel, transcript)
        elif isinstance(transcript, str) and transcript.strip():
            start = self.ends.get(channel, 0.0) if end is not None else None
            text = Text(alt_path + ("transcript",), transcript, start, end, channel)
            self.sequence.setdefault(channel, []).append(("text", text, transcript.split()))
            self.found.items.append(text)
        if end is not None:
            self.ends[channel] = end

    def _words(self, words: list, alt_path: tuple, channel, transcript: Any) -> None:
        sequence = self.sequence.setdefault(channel, [])
        places = [alt_path + ("words", k) for k in range(len(words))]
        keys = [_key(_expect_object(w, p, "a word object"), p) for w, p in zip(words, places)]
        told = isinstance(transcript, str) and bool(transcript.strip())
        tagged = any(_first(w, ("speakerTag", "speaker_tag", "speakerLabel", "speaker_label"))
                     is not None for w in words)
        timed = all(start is not None for _, start, _ in keys)
        repeats = _repeated(sequence, keys) if timed or tagged or not told else 0
        if repeats:
            self._repeats(sequence, keys, places, words, channel)
        for k in range(repeats, len(words)):
            sequence.append(("word", keys[k], places[k]))
            self._speaker(places[k], words[k])
            text, start, end = keys[k]
            self.found.items.append(Word(places[k], text, start, end, None, channel,
                                         opens=k == repeats))
        if told and transcript.split() == [text.strip() for text, _, _ in keys]:
            self.found.spelt.append((alt_path + ("transcript",), places))
        elif isinstance(transcript, str) and len(words) > repeats:
            self.found.spelt.append((alt_path + ("transcript",), places[repeats:]))

    def _repeats(self, sequence: list[tuple], keys: list[tuple], places: list[tuple],
                 words: list, channel) -> None:
        """The first words of a result that repeat the channel's `sequence`: copies of its
        word records; for its transcripts, the words that spell them (said here)."""
        k, runs, said = 0, {}, []
        for entry in sequence:
            if entry[0] == "word":
                self.found.copies.setdefault(entry[2], []).append(places[k])
                self._speaker(entry[2], words[k])
                said.append(entry)
                k += 1
                continue
            text, pieces = entry[1], entry[2]
            span = range(k, k + len(pieces))
            runs[id(text)] = [Word(places[m], keys[m][0], keys[m][1], keys[m][2], None,
                                   channel, opens=m == k) for m in span]
            for m in span:
                self._speaker(places[m], words[m])
                said.append(("word", keys[m], places[m]))  # (said here, from now on)
            self.found.spelt.append((text.place, places[k:k + len(pieces)]))
            k += len(pieces)
        if runs:  # the transcripts' words, said in their place
            self.found.items = [w for item in self.found.items
                                for w in runs.get(id(item), [item])]
        sequence[:] = said

    def _speaker(self, original: tuple, word: dict) -> None:
        label = _first(word, ("speakerLabel", "speaker_label"))
        tag = _first(word, ("speakerTag", "speaker_tag"))
        if isinstance(label, str) and label.strip():
            self.speakers[original] = f"Speaker {label.strip()}"
        elif isinstance(tag, int) and not isinstance(tag, bool) and tag > 0:
            self.speakers[original] = f"Speaker {tag}"

    def layout(self) -> Layout:
        """The words with the speakers their latest repeats gave them."""
        items = self.found.items
        for i, item in enumerate(items):
            if isinstance(item, Word) and item.place in self.speakers:
                items[i] = Word(item.place, item.text, item.start, item.end,
                                self.speakers[item.place], item.channel, item.opens)
        return self.found


def _repeated(sequence: list[tuple], keys: list[tuple]) -> int:
    """How many of a result's first words (`keys`) repeat all the channel has said
    (`sequence`), in order; 0 where they do not."""
    k = 0
    for entry in sequence:
        if entry[0] == "word":
            if k >= len(keys) or keys[k] != entry[1]:
                return 0
            k += 1
        else:
            pieces = entry[2]
            if [text.strip() for text, _, _ in keys[k:k + len(pieces)]] != pieces:
                return 0
            k += len(pieces)
    return k


def _first(record: dict, names: tuple[str, ...]) -> Any:
    return next((record[name] for name in names if name in record), None)


def _key(word: dict, place: tuple) -> tuple:
    """(text, start, end) of a word record, checked. A word with an end but no start starts
    at 0 (JSON leaves out a protobuf field at its default)."""
    text = _field_text(word, "word", place)
    start, end = _seconds(word, _STARTS, place), _seconds(word, _ENDS, place)
    if start is None and end is not None:
        start = 0.0
    return text, start, end


def _seconds(record: dict, names: tuple[str, ...], path: tuple) -> float | None:
    """A duration under the first of `names` that the record has, in seconds (None: none)."""
    name = next((name for name in names if name in record), None)
    if name is None:
        return None
    value = record[name]
    seconds: Any = None
    if isinstance(value, str) and _DURATION.match(value):
        seconds = float(value[:-1])
    elif isinstance(value, dict) and set(value) <= {"seconds", "nanos"}:
        whole, nanos = value.get("seconds", 0), value.get("nanos", 0)
        if isinstance(whole, str) and whole.isdigit():
            whole = int(whole)
        if is_time(whole) and isinstance(nanos, int) and 0 <= nanos < 10**9:
            seconds = whole + nanos / 1e9
    elif is_time(value):
        seconds = float(value)
    if seconds is None or not is_time(seconds):
        got = shown(value) if isinstance(value, str) else _kind(value)
        raise _ShapeError(path + (name,), f"expected a duration (\"1.300s\", seconds from 0 "
                                          f"to {MAX_SECONDS:.0e}), got {got}")
    return round(seconds, 9)


def _text(word: dict) -> str:
    return word["word"]


def _put(word: dict, text: str) -> None:
    if word.get("word") != text:
        word["word"] = text


def dump_google(transcript: Transcript) -> str:
    return dump_words(transcript, _text, _put)
