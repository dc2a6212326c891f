"""Subtitle cues rebuilt at sentence boundaries within line, length and duration limits."""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from punctum.formats.annotations import find_annotations, token_voices
from punctum.formats.restoring import _plain_tokens
from punctum.formats.rolling import without_repeats
from punctum.formats.subtitles import parse_time
from punctum.formats.transcript import SUBTITLES, Cue, Token, Transcript, needs_space
from punctum.text import NULL, Inventory, Labelled, ends_sentence, get_inventory, parse


@dataclass(frozen=True)
class ResegmentOptions:
    """Limits for cues rebuilt by `resegment`.

    Args:
        max_chars_per_line: characters per subtitle line (a longer single word gets a line
            of its own).
        max_lines: lines per cue.
        max_duration: seconds per cue (a single longer word gets a cue of its own).
    """

    max_chars_per_line: int = 42
    max_lines: int = 2
    max_duration: float = 7.0

    def __post_init__(self) -> None:
        for name, low, high in (("max_chars_per_line", 1, 1000), ("max_lines", 1, 100)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                raise ValueError(f"ResegmentOptions.{name} must be an integer in "
                                 f"[{low}, {high}], got {value!r}")
        duration = self.max_duration
        if isinstance(duration, bool) or not isinstance(duration, (int, float)) or \
                not 0 < duration <= 3600:
            raise ValueError(f"ResegmentOptions.max_duration must be a number of seconds in "
                             f"(0, 3600], got {duration!r}")


# ----------------------------------------------------------------------------- resegmenting

# A cue that starts less than this many seconds before an earlier one ends follows it (a
# timing slip, or captions made to overlap by a few frames): its words are clamped to start
# where the earlier ones end and may join them. A longer overlap is two people speaking at
# once: those cues keep their own times.
OVERLAP_TOLERANCE = 0.5

@dataclass(frozen=True)
class _Timed:
    """A token placed on the time line (its `before` is the separator: "", " ") and the
    mark after its last word."""

    token: Token
    start: float
    end: float
    mark: str
    voice: str = ""  # the WebVTT voice tag the token is spoken in ("<v Bob>"), or ""
    turn: bool = False  # the token opens a speaker's turn or line ("JOHN:", a dialogue dash)
    overlaps: bool = False  # the first token of a cue that starts before an earlier one ends
    sound: bool = False  # in a cue of annotations alone ("[Music]"): kept a cue of its own
    ends: bool = False  # its mark ends a sentence (where a line break goes first)
    opens_cue: bool = False  # the first token of its cue
    glued: bool = False  # written against the token before, markup between ("<i>so</i>on")


# A WebVTT timestamp tag inside cue text: when the word after it is spoken (karaoke style,
# YouTube's automatic captions).
_TIMESTAMP_TAG = re.compile(r"<(\d[\d:.]*)>")


def resegment(transcript: Transcript, options: ResegmentOptions | None = None,
              language: str | Inventory = "en") -> Transcript:
    """Rebuild subtitle cues at sentence boundaries within line, length and duration limits.

    Word times come from the tokens when every token of a cue has them (Whisper or Vosk
    converted to subtitles), or from WebVTT timestamp tags (``<00:00:01.200>``, YouTube's
    automatic captions) when every word of a cue after its first has one; otherwise each
    cue's time is shared out among its tokens in proportion to their characters. A cue
    holds whole sentences while they fit together (so that a short "Yes." does not flash by
    alone); a sentence that does not fit in one cue
    is cut after its last marked word in the second half of the cue, else after the last
    word that fits. Lines are filled greedily, then each break moves back to its line's
    last sentence end (or a mark in the line's second half) where the words fit below.
    Times are made monotone (a token never starts before the previous one ends), except
    that a cue that starts before an earlier one ends (two speakers at once) keeps its
    words' times in cues of its own. Cue markup,
    settings and identifiers are dropped (SRT cues are numbered again; VTT NOTE blocks move
    to the first new cue that starts at or after the cue they preceded). WebVTT voice spans
    (`<v Bob>`) are kept: a new cue starts where the voice changes, and each cue opens with
    its voice's tag. A speaker's turn (`annotations`: "JOHN:", ">>", a dialogue dash) starts
    a new sentence on a new line. A cue of annotations alone ("[Music]", "(applause)") stays
    a cue of its own, at its own time, never joined to words spoken before or after it (so
    does a cue of music notes alone, "♪").
    The lines roll-up captions repeat are left out (`rolling.without_repeats`).

    Args:
        transcript: an SRT or VTT transcript with cue times.
        options: the limits (default ResegmentOptions()).
        language: the inventory whose marks end sentences.
    """
    options = options or ResegmentOptions()
    if transcript.format not in SUBTITLES:
        raise ValueError(f"resegment builds srt or vtt cues; convert the {transcript.format} "
                         f"transcript first")
    inventory = get_inventory(language)
    transcript = without_repeats(transcript)  # roll-up captions: each word in one cue
    timed = _timed_tokens(transcript, inventory)
    groups = _group(timed, options)
    cues = tuple(sorted((_build_cue(group, options) for group in groups),
                        key=lambda cue: cue.start))  # overlapping cues in order of start
    meta = dict(transcript.meta)
    if meta.get("blocks"):
        meta["blocks"] = _move_blocks(meta["blocks"], transcript.cues, cues)
    return replace(transcript, cues=cues, meta=meta)


def _timed_tokens(transcript: Transcript, inventory: Inventory) -> list[_Timed]:
    """Every token with text, without markup, on a monotone time line."""
    timed: list[_Timed] = []
    previous_end = latest_end = 0.0
    after_overlap = False
    for number, cue in enumerate(transcript.cues, start=1):
        if cue.start is None or cue.end is None:
            raise ValueError(f"cue {number} has no times; cannot resegment")
        starts_early = bool(timed) and _spoken_at_once(cue, latest_end)
        # two speakers at once: its words keep their times, in cues of their own, as do the
        overlaps = starts_early or after_overlap  # next cue's (not joined to words before)
        if overlaps:
            previous_end = min(previous_end, cue.start)
        after_overlap = starts_early
        latest_end = max(latest_end, cue.end)
        tokens = _plain_tokens(cue.tokens, " " if timed else "", False)
        if inventory.word_unit == "char" and tokens:
            tokens = (replace(tokens[0], before=""),) + tokens[1:]
        spans = _token_spans(tokens, cue, _inline_starts(cue))
        voices = _voices(cue)
        notes = find_annotations(cue.tokens)
        opens = [t in notes.turns or t in notes.dashes
                 for t, token in enumerate(cue.tokens) if token.text]
        sound = bool(notes.kept_out) and not notes.turns and all(  # ("[Music]", "♪")
            t in notes.kept_out for t, token in enumerate(cue.tokens) if token.text)
        for k, (token, (start, end), voice, turn) in enumerate(zip(tokens, spans, voices,
                                                                   opens)):
            start = max(start, previous_end)
            previous_end = end = max(end, start)
            words = parse(token.text, inventory)
            mark = _mark(words, inventory)
            glued = k > 0 and not token.before and needs_space(tokens[k - 1].text, token.text)
            timed.append(_Timed(token, start, end, mark, voice, turn, overlaps, sound,
                                mark in inventory.sentence_final, k == 0, glued))
            overlaps = False
    return timed


def _spoken_at_once(cue: Cue, latest_end: float) -> bool:
    """Whether a cue starts before an earlier one ends (at `latest_end`) by more than a slip
    of the timing (OVERLAP_TOLERANCE), or by a slip that would leave it less than half its
    time if it started at that end (a 0.3 s cue inside the cue before); in whole
    milliseconds, as subtitles write times."""
    overlap = round((latest_end - cue.start) * 1000)
    kept = round((cue.end - latest_end) * 1000)
    return overlap > round(OVERLAP_TOLERANCE * 1000) or (
        overlap > 0 and 2 * kept < round((cue.end - cue.start) * 1000))


def _mark(words: Labelled, inventory: Inventory) -> str:
    """The mark after a token's last word (NULL for none), a sentence-final one only where
    it ends a sentence as written (a kept ";" or "..." is a pause, read as the first mark
    that does not end one)."""
    if not len(words):
        return NULL
    post = words.post[-1]
    if post in inventory.sentence_final and not ends_sentence(words, len(words) - 1, inventory):
        return next(m.name for m in inventory.post_marks if not m.sentence_final)
    return post


def _voices(cue: Cue) -> list[str]:
    """The voice tag each token of a cue with text is spoken in ("" outside voice spans)."""
    return [voice for token, voice in zip(cue.tokens, token_voices(cue.tokens)) if token.text]


def _inline_starts(cue: Cue) -> list[float | None]:
    """For each token of a cue with text, the time of the last WebVTT timestamp tag before
    it (None where there is none, or where it is not a valid time)."""
    starts = []
    for token in cue.tokens:
        if token.text:
            tags = _TIMESTAMP_TAG.findall(token.before)
            try:
                starts.append(parse_time(tags[-1], "vtt", "") if tags else None)
            except ValueError:
                starts.append(None)
    return starts


def _token_spans(tokens: Sequence[Token], cue: Cue,
                 inline: Sequence[float | None] = ()) -> list[tuple[float, float]]:
    """Word times when every token has them; else, when every token after the first has a
    timestamp tag (`inline` starts) in order within the cue, from one tag to the next;
    else the cue's time shared by characters."""
    if all(t.start is not None and t.end is not None for t in tokens):
        return [(t.start, t.end) for t in tokens]
    starts = [cue.start, *inline[1:]]
    if len(tokens) > 1 and len(inline) == len(tokens) and all(
            s is not None for s in starts) and starts == sorted(starts) and \
            starts[-1] <= cue.end:
        return list(zip(starts, starts[1:] + [cue.end]))
    total = sum(len(t.text) for t in tokens) or 1
    spans, done = [], 0
    for token in tokens:
        begin = cue.start + (cue.end - cue.start) * done / total
        done += len(token.text)
        spans.append((begin, cue.start + (cue.end - cue.start) * done / total))
    return spans


def _group(timed: list[_Timed], options: ResegmentOptions) -> list[list[_Timed]]:
    """Tokens -> cues: whole sentences while they fit, a longer sentence cut to fit."""
    groups: list[list[_Timed]] = []
    current: list[_Timed] = []
    for sentence in _sentences(timed):
        if current and current[-1].voice == sentence[0].voice and not sentence[0].overlaps \
                and not (current[-1].sound or sentence[0].sound) and _fits(current + sentence,
                                                                           options):
            current += sentence
            continue
        if current:
            groups.append(current)
        *full, current = _cut_to_fit(sentence, options)
        groups.extend(full)
    if current:
        groups.append(current)
    return groups


def _sentences(timed: list[_Timed]) -> list[list[_Timed]]:
    sentences: list[list[_Timed]] = [[]]
    for item in timed:
        if sentences[-1] and (sentences[-1][-1].voice != item.voice or item.turn
                              or item.overlaps or sentences[-1][-1].sound != item.sound
                              or item.sound and item.opens_cue):
            sentences.append([])  # a new speaker (or a cue of sounds) starts a new sentence
        if item.glued and not sentences[-1] and len(sentences) > 1:
            sentences.pop()  # never cut from the token it is written against
        sentences[-1].append(item)
        if item.ends:
            sentences.append([])
    return [s for s in sentences if s]


def _cut_to_fit(sentence: list[_Timed], options: ResegmentOptions) -> list[list[_Timed]]:
    """A sentence in pieces that fit, each cut after a marked word where possible; a cue of
    sounds alone stays whole ("[MUSIC PLAYING]", as long as it was)."""
    if sentence[0].sound:
        return [sentence]
    pieces: list[list[_Timed]] = []
    current: list[_Timed] = []
    for item in sentence:
        while current and not item.glued and not _fits(current + [item], options):
            cut = _break_point(current)
            pieces.append(current[:cut])
            current = current[cut:]
        current.append(item)
    return pieces + [current]


def _fits(group: list[_Timed], options: ResegmentOptions) -> bool:
    if len(group) == 1:
        return True
    duration = group[-1].end - group[0].start
    lines = _wrap(group, options.max_chars_per_line)
    return len(lines) <= options.max_lines and duration <= options.max_duration


def _break_point(group: list[_Timed]) -> int:
    """Where to cut a group that overflows: after its last marked word in the second half."""
    for index in range(len(group) - 1, len(group) // 2 - 1, -1):
        if group[index].mark != NULL and not (index + 1 < len(group) and group[index + 1].glued):
            return index + 1
    return len(group)


def _wrap(group: list[_Timed], width: int) -> list[list[_Timed]]:
    """Greedy lines of at most `width` characters (a longer word stands alone); a speaker's
    turn starts a line; the parts of a word written against markup ("<b>un</b>believable")
    stay on one line."""
    lines: list[list[_Timed]] = []
    length = 0
    for item in group:
        added = len(item.token.before) + len(item.token.text)
        if lines and length + added <= width and not item.turn:
            lines[-1].append(item)
            length += added
        elif item.glued:  # the whole word to a line of its own, where words precede it
            line = lines[-1]
            first = next(k for k in range(len(line) - 1, -1, -1) if not line[k].glued)
            if first:
                lines[-1:] = [line[:first], line[first:]]
            lines[-1].append(item)
            length = _line_length(lines[-1])
        else:
            lines.append([item])
            length = len(item.token.text)
    return _marked_breaks(lines, width)


def _marked_breaks(lines: list[list[_Timed]], width: int) -> list[list[_Timed]]:
    """Greedy lines with each break moved back to the last mark of its line (a sentence's
    end, or any mark in the line's second half: "the plan?" / "I think", not "the plan? I" /
    "think") where the words moved still fit on the next line."""
    for number in range(len(lines) - 1):
        line, after = lines[number], lines[number + 1]
        if after[0].turn:
            continue
        room = width - _line_length(after)
        half = _line_length(line) / 2
        for k in range(len(line) - 2, -1, -1):
            moved = line[k + 1:]
            if _line_length(moved) + len(after[0].token.before or " ") > room:
                break
            if moved[0].glued:
                continue
            if line[k].ends or (
                    line[k].mark != NULL and _line_length(line[:k + 1]) >= half):
                lines[number], lines[number + 1] = line[:k + 1], moved + after
                break
    return lines


def _line_length(line: list[_Timed]) -> int:
    """Characters of a line's words and the spaces between them."""
    return sum(len(item.token.text) for item in line) + sum(
        len(item.token.before) for item in line[1:])


def _build_cue(group: list[_Timed], options: ResegmentOptions) -> Cue:
    tokens = []
    for number, line in enumerate(_wrap(group, options.max_chars_per_line)):
        for k, item in enumerate(line):
            before = ("\n" if number else "") if k == 0 else item.token.before
            tokens.append(replace(item.token, before=before, after=""))
    if group[0].voice:
        tokens[0] = replace(tokens[0], before=group[0].voice)
    return Cue(group[0].start, group[-1].end, tuple(tokens))


def _move_blocks(blocks: tuple, old: tuple[Cue, ...], new: tuple[Cue, ...]) -> tuple:
    """NOTE/STYLE/REGION blocks placed before the first new cue starting at or after the
    cue they preceded (blocks before the first cue stay first)."""
    starts = [cue.start for cue in new]
    moved = []
    for index, text in blocks:
        if index == 0:
            moved.append((0, text))
        elif index >= len(old):
            moved.append((len(new), text))
        else:
            moved.append((bisect.bisect_left(starts, old[index].start), text))
    return tuple(moved)
