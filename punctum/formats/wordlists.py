"""Recognisers' JSON that lists words as records (Deepgram, AssemblyAI, Google Cloud
Speech-to-Text, IBM Watson): the words gathered in order, cut into cues, and written back everywhere
they were listed.

A cloud recogniser's result holds each word as a record (``{"word": "so", "start": 0.24,
...}``) in one or more lists, beside transcripts that spell those words ("so what do you
think"). Some words are listed twice: Deepgram's and AssemblyAI's utterances copy the words
of the channel; Google's diarised results repeat every word said before them. A reader gives
a `Layout`: the `Word`s in the order said (each an original record), the `Text`s (transcripts
without word records), the copies of each word and the transcripts that spell words.
`word_cues` makes the cues (a cue per utterance or result, cut where the speaker changes and
at pauses of 0.8 s; a text per channel) and `written` puts the restored words into every
record that held them, copies included, and into each transcript that spelt them, with its
own spaces (`transcript.respaced`); a transcript that spells other words (edited, formatted)
stays as read.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any

from punctum.formats.json_records import (
    JsonStyle,
    _expect_list,
    _expect_object,
    _kind,
    _ShapeError,
    write_document,
    write_lines,
)
from punctum.formats.transcript import (
    Cue,
    Token,
    Transcript,
    fillers_kept_out,
    is_filler,
    needs_space,
    respaced,
    split_tokens,
)

Place = tuple  # keys and indexes from the root of the values read to a record or a string

# A pause between words this long or longer ends a cue (Deepgram's own utterances end at
# pauses of 0.8 s, its default "utt_split"), so that a recording without utterances or
# results does not become one subtitle.
PAUSE_CUT = 0.8


@dataclass(frozen=True)
class Word:
    """A word record as said (not a copy).

    Attributes:
        place: where its record is.
        text: the word as the record spells it.
        start, end: seconds (None: untimed).
        speaker: the speaker's name ("Speaker 0"), or None.
        channel: the text it belongs to (an audio channel, a result of its own).
        opens: whether it starts a cue (an utterance's or a result's first word).
    """

    place: Place
    text: str
    start: float | None
    end: float | None
    speaker: str | None = None
    channel: Hashable = None
    opens: bool = False


@dataclass(frozen=True)
class Text:
    """A transcript string without word records: restored as a cue of its own."""

    place: Place
    text: str
    start: float | None = None
    end: float | None = None
    channel: Hashable = None


@dataclass
class Layout:
    """What a reader found: items in the order said, copies and spelt transcripts."""

    items: list[Word | Text] = field(default_factory=list)
    copies: dict[Place, list[Place]] = field(default_factory=dict)  # original -> its copies
    spelt: list[tuple[Place, list[Place]]] = field(default_factory=list)  # text, its words


def copied(originals: dict[Hashable, list[Place]], keys: list[Hashable], places: list[Place],
           found: Layout) -> Place | None:
    """Record `places` (a list of word records: an utterance's) as copies of the originals
    with the same keys (text and times), taken in order (`originals`: key -> places of the
    originals not yet copied); the first one's original, or None (nothing recorded) where
    the list is empty or holds words of its own."""
    if not places or any(len(originals.get(key, ())) < n for key, n in Counter(keys).items()):
        return None
    sources = [originals[key].pop(0) for key in keys]
    for source, place in zip(sources, places):
        found.copies.setdefault(source, []).append(place)
    return sources[0]


def records_of(layout: str, values: list) -> tuple[Any, list[tuple[tuple, Any]]]:
    """The values read (JSON lines: a list of them; else the document's root), under which
    places start, and each record with its place: a line, an item of a root list, or the
    root."""
    if layout == "lines":
        root: Any = [v for _, v in values]
        return root, [((i,), r) for i, r in enumerate(root)]
    root = values[0][1] if values else {}
    if isinstance(root, list):
        return root, [((i,), r) for i, r in enumerate(root)]
    return root, [((), root)]


def words_of(record: dict, path: tuple) -> list:
    """A record's "words" (none when absent or null), each checked to be an object."""
    words = _expect_list(record.get("words") or [], path + ("words",))
    for k, word in enumerate(words):
        _expect_object(word, path + ("words", k), "a word object")
    return words


def dump_words(transcript: Transcript, text_of: Callable[[Any], str],
               put: Callable[[Any, str], None]) -> str:
    """The file of a transcript read by a word-list reader (`written`), in its layout."""
    meta = transcript.meta
    style = meta.get("json_style", JsonStyle())
    values = written(transcript, meta["values"], text_of, put)
    if meta.get("layout") == "lines":
        return write_lines(transcript, values, style)
    return write_document(transcript, values, style)


def expect_shape(records: list[tuple[tuple, Any]], matches: Callable[[Any], bool],
                 what: str) -> None:
    """Refuse records none of which has the shape of the format given (`--format`), rather
    than write them back untouched."""
    if records and not any(matches(record) for _, record in records):
        raise _ShapeError(records[0][0], f"expected {what}")


def channel_names(channels: list[tuple]) -> list[str] | None:
    """The names of the channels of one recording ((record number, channel) pairs:
    "Channel 1"), or None where they are separate recordings (or tell no channel)."""
    if len({number for number, _ in channels}) > 1 or None in {c for _, c in channels}:
        return None
    return [f"Channel {channel}" for _, channel in channels]


def at(root: Any, place: Place) -> Any:
    """The value at `place` under `root`."""
    for key in place:
        root = root[key]
    return root


def _gap(last: Word, word: Word) -> str:
    """The space between two words as a text writes it: none between words of a script
    written without spaces (Chinese, Japanese, Thai: "你好" "世界")."""
    left, right = last.text.strip(), word.text.strip()
    return "" if left and right and not needs_space(left, right) else " "


def _paused(last: Word, word: Word) -> bool:
    """Whether a pause of PAUSE_CUT seconds or more stands between two words."""
    return None not in (last.end, word.start) and round(word.start - last.end, 6) >= PAUSE_CUT


def channel_key(value: Any, path: tuple) -> Any:
    """A channel as a response names it (a number, a name, or None: none), checked."""
    if value is None or (isinstance(value, (int, str)) and not isinstance(value, bool)):
        return value
    raise _ShapeError(path, f"expected a channel (a number or a name), got {_kind(value)}")


def word_cues(layout: Layout, channel_names: Callable[[list], list[str] | None] | None = None
              ) -> tuple[list[Cue], dict]:
    """Cues of the layout's items and the meta to write them back: "places" (per cue, the
    place of each token's record; a Text's place alone; cues in the order they close, each
    channel's in the order said), "documents" (cue indexes per channel) and, for several
    channels of one recording, "tiers" (their names from `channel_names`, None where the
    channels are separate recordings; `convert` writes tiers on one timeline)."""
    cues, places, by_channel = [], [], {}
    runs: dict[Hashable, list[Word]] = {}  # each channel's open run: another channel's words
    # (crosstalk, words listed by time across channels) do not cut it

    def close(channel: Hashable) -> None:
        run = runs.pop(channel, None)
        if run:
            tokens = tuple(Token("" if is_filler(w.text.strip()) else w.text.strip(),
                                 w.start, w.end, before=_gap(run[k - 1], w) if k else "")
                           for k, w in enumerate(run))
            timed = run[0].start is not None and run[-1].end is not None
            speaker = run[0].speaker
            by_channel.setdefault(channel, []).append(len(cues))
            cues.append(Cue(run[0].start if timed else None, run[-1].end if timed else None,
                            tokens, extra={"speaker": speaker} if speaker else {}))
            places.append([w.place for w in run])

    for item in layout.items:
        if isinstance(item, Text):
            close(item.channel)
            by_channel.setdefault(item.channel, []).append(len(cues))
            cues.append(Cue(item.start, item.end, fillers_kept_out(split_tokens(item.text))))
            places.append(item.place)
            continue
        run = runs.get(item.channel)
        if run and (item.opens or item.speaker != run[-1].speaker or _paused(run[-1], item)):
            close(item.channel)
        runs.setdefault(item.channel, []).append(item)
    for channel in list(runs):
        close(channel)
    meta: dict = {"places": places, "copies": layout.copies, "spelt": layout.spelt,
                  "documents": list(by_channel.values())}
    names = channel_names(list(by_channel)) if channel_names and len(by_channel) > 1 else None
    if names:
        meta["tiers"] = names
    return cues, meta


def _padded(text: str, old: str) -> str:
    """A restored word with the whitespace its record held around it (" what")."""
    core = old.strip()
    if not core:
        return text
    start = old.index(core)
    return old[:start] + text + old[start + len(core):]


def written(transcript: Transcript, values: Any, text_of: Callable[[dict], str],
            put: Callable[[dict, str], None]) -> Any:
    """`values` (as read) with the transcript's words written: into each word record and
    its copies by `put(record, text)` (every record, once any word changed: Deepgram's
    "punctuated_word" is then on all of them), into each Text's string, and into each
    transcript that spelt its words as `text_of(record)` read them."""
    meta = transcript.meta
    every = [p for places in meta["places"] if not isinstance(places, tuple) for p in places]
    every += [c for copies in meta["copies"].values() for c in copies]
    old = {place: text_of(at(values, place)) for place in every}  # each word as read
    new: dict[Place, str] = {}
    texts: dict[Place, str] = {}
    for cue, places in zip(transcript.cues, meta["places"]):
        if isinstance(places, tuple):  # a Text
            texts[places] = cue.text
            continue
        for token, place in zip(cue.tokens, places):
            if token.text:
                new[place] = _padded(token.text, old[place])
    for original, copies in meta["copies"].items():
        for place in copies:
            if original in new:
                new[place] = new[original]
    changed = any(text != old[place] for place, text in new.items())
    if not changed and all(text == at(values, place) for place, text in texts.items()):
        return values
    out = json.loads(json.dumps(values))  # a deep copy (JSON values: twice deepcopy's speed)
    for place in every if changed else ():
        put(at(out, place), new.get(place, old[place]))
    for place, text in texts.items():
        at(out, place[:-1])[place[-1]] = text
    for text_place, word_places in meta["spelt"] if changed else ():
        old_parts = [old[p] for p in word_places]
        new_parts = [new.get(p, part) for p, part in zip(word_places, old_parts)]
        rebuilt = respaced(at(values, text_place), old_parts, new_parts)
        if rebuilt is not None:
            at(out, text_place[:-1])[text_place[-1]] = rebuilt
    return out
