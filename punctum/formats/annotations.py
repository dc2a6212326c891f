"""Speaker labels, turn marks, sound descriptions and timestamps beside a transcript's words.

Subtitles for the deaf and hard of hearing, broadcast captions, call-centre and meeting
transcripts write who speaks and what is heard beside what is said:

    JOHN: where are you going             a speaker label: 1-3 words and a colon, at a line start
    - home                                a dialogue dash: another speaker's line (not on a
                                          cue's first line: see `_line_prefix`)
    >> and we are back                    broadcast captions' speaker change (anywhere in a line)
    i was there [door slams] (laughs)     sound descriptions in brackets, anywhere
    [00:01:02] agent: hello               a timestamp at a line start (hh:mm:ss or mm:ss.fff
                                          bare; any time in brackets: "[00:00.000 --> 00:05.000]")
    Speaker 1  0:03                       a name and a time alone on a line (Otter's heading)
    (speaker 0) and so                    whisper.cpp's speaker (--diarize), at a line start

`find_annotations` tells which tokens of a cue are such annotations (`kept_out`: they never
reach the model and are written back as they are, where the model made "JOHN:" "John" and
"[music]" "Music") and which tokens open a speaker's turn (`turns`: a label, a dialogue dash
or ">>" at a line start; the word before it ends its sentence). A line starts at a cue's
first token and wherever a line break precedes a token. This module depends on the
standard library and `formats.transcript` only.

    >>> tokens = split_tokens("JOHN: where are you going [door slams]")
    >>> find_annotations(tokens)
    Annotations(kept_out=frozenset({0, 5, 6}), turns=frozenset({0}), dashes=frozenset())
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from punctum.formats.transcript import Cue, Token, breaks_line, split_tokens

# A speaker label's first word starts with a letter ("SPEAKER_00", "Dr.", "Mary-Jane"); the
# words after it may be numbers ("Speaker 1", "Man #2"); the last ends with the colon.
_LABEL_FIRST = re.compile(r"[^\W\d_][\w.'’-]*", re.UNICODE)
_LABEL_MORE = re.compile(r"#?[\w.'’-]+", re.UNICODE)
_LABEL_WORDS = 3
_FULL_NAME_WORDS = 5  # a full name ("Maria de la Cruz:", "José María García López:")
_NAME_PARTICLES = frozenset("al bin da de del della der di du la le van von y".split())
# A phone number as a speaker label (a dial-in caller in Zoom): "+14155550199:", "415-555-0199:".
_PHONE_LABEL = re.compile(r"\+?\d[\d-]{6,}\d:")
_LABEL_CHARS = 32
# Times: "01:02", "1:02:03", "00:00:05.000", "00:05,250".
_TIME = r"\d{1,2}(?::\d{2}){1,2}(?:[.,]\d{1,3})?"
_BARE_TIME = re.compile(r"\d{1,2}(?::\d{2}){2}(?:[.,]\d{1,3})?|\d{1,2}:\d{2}[.,]\d{1,3}")
# A bracket's content reads as a time or time range: digits, colons, separators, arrows.
_TIME_CONTENT = re.compile(rf"{_TIME}(?:\s*(?:-->|-|–|to)\s*{_TIME})?")
_SHORT_TIME = re.compile(r"\d{1,2}:\d{2}(?::\d{2})?")
_TIMED_LABEL_END = re.compile(rf"[(\[]{_TIME}[)\]]:")  # Rev's "Speaker 1 (00:03):"
# whisper.cpp's speaker (--diarize) before a segment's text: "(speaker 0)", "(speaker ?)".
_NUMBERED_SPEAKER = re.compile(r"speaker \d{1,3}|speaker \?", re.IGNORECASE)
_DASHES = frozenset({"-", "–", "—", "‐"})
_TURN_MARKS = frozenset({">>", ">>>"})
_BRACKETS = {"[": "]", "(": ")"}
# A line that may hold an annotation: a colon, a bracket, ">>" or a music note, or a dash at
# its start.
_MAY_HOLD = re.compile(r"[:\[(♪♫♬♩]|>>|^\s*[-–—‐](?:\s|$)")
# A token (one a line of `texts`) that may be (part of) an annotation: one ending in a
# colon, opening a bracket, a dash or ">>" alone, a time ("00:01:02"), or music notes.
_MAY_ANNOTATE = re.compile(r":$|^[\[(]|^(?:[-–—‐]|>>>?|[♪♫♬♩]+)$|^\d+:", re.MULTILINE)
# Music notes, around sung lyrics ("♪ la la ♪"): words to the model, which read them in
# TED's transcripts, but a cue of them alone is a sound (kept out, as "[Music]").
_MUSIC_NOTES = re.compile(r"[♪♫♬♩]+")
_BRACKET_TOKENS = 8  # words a sound description in square brackets may hold
_PAREN_TOKENS = 2  # ... in parentheses ("(laughs)", "(door slams)")
_TRAILING = ":,.;?!"  # marks after a closing bracket ("[laughs].")
# Words that open running text, not a speaker's name, before a time ("On Monday 10:30").
_NOT_NAMES = frozenset("about after an and around at before but by for from in is it of on "
                       "or see since so till to until was we with".split())


@dataclass(frozen=True)
class Annotations:
    """Token indexes of one cue.

    Attributes:
        kept_out: tokens that are annotations: they never reach the model.
        turns: tokens that open a speaker's turn (a subset of kept_out).
        dashes: dialogue dashes at line starts, the cue's first line too (a subset of
            kept_out): where a rebuilt subtitle starts a line.
    """

    kept_out: frozenset[int] = frozenset()
    turns: frozenset[int] = frozenset()
    dashes: frozenset[int] = frozenset()


NONE = Annotations()

# a WebVTT voice span's start tag ("<v Bob>", "<v.loud Bob>") or end tag
VOICE_TAG = re.compile(r"<v(?:\.[^\s>]*)?(?:[ \t][^>]*)?>|</v>")


def token_voices(tokens: Sequence[Token]) -> list[str]:
    """The WebVTT voice tag each token is spoken in ("<v Bob>"; "" outside voice spans),
    one entry per token (tokens without text too)."""
    voices, voice = [], ""
    for token in tokens:
        for tag in VOICE_TAG.findall(token.before):
            voice = "" if tag == "</v>" else tag
        voices.append(voice)
        for tag in VOICE_TAG.findall(token.after):
            voice = "" if tag == "</v>" else tag
    return voices


def voice_turns(cues: Sequence[Cue]) -> list[frozenset[int]]:
    """For each WebVTT cue, the tokens where another speaker's voice starts ("<v Ann>" after
    "<v Bob>", in the same cue or a later one; "<v.loud Ann>" is still Ann): the word before
    each ends its sentence, as before a speaker label."""
    turns, speaker = [], ""
    for cue in cues:
        found = set()
        for t, (token, voice) in enumerate(zip(cue.tokens, token_voices(cue.tokens))):
            name = voice_speaker(voice)
            if token.text and name:
                if speaker and name != speaker:
                    found.add(t)
                speaker = name
        turns.append(frozenset(found))
    return turns


def voice_speaker(voice: str) -> str:
    """The speaker of a voice tag ("<v.loud Ann Lee>" -> "Ann Lee"; "" for none)."""
    inside = voice[2:-1] if voice.startswith("<v") else ""
    if inside.startswith("."):  # classes before the name
        inside = inside.split(None, 1)[1] if len(inside.split(None, 1)) == 2 else ""
    return " ".join(inside.split())


def find_annotations(tokens: Sequence[Token],
                     decode: Callable[[str], str] | None = None) -> Annotations:
    """The annotations among a cue's tokens (see the module docstring); `decode`: how a
    token's text reads (subtitles: character references decoded, "&gt;&gt;" is ">>")."""
    texts = [token.text for token in tokens]
    if decode is not None and any("&" in text for text in texts):
        texts = [decode(text) for text in texts]
    if not _MAY_ANNOTATE.search("\n".join(texts)):  # most cues: one search, in C
        return NONE
    kept: set[int] = set()
    turns: set[int] = set()
    lines = _lines(tokens)
    dialogue = sum(texts[start] in _DASHES for start, _ in lines) >= 2
    for number, (start, end) in enumerate(lines):
        _line_prefix(texts[start:end], start, kept, turns,
                     first_line=number == 0 and not dialogue)
    _bracket_groups(texts, kept)
    for t, text in enumerate(texts):  # ">>" inside a line changes speaker too (captions)
        if text in _TURN_MARKS:
            kept.add(t)
            turns.add(t)
    if all(_MUSIC_NOTES.fullmatch(text) for text in texts if text):  # a cue of "♪" alone:
        kept.update(t for t, text in enumerate(texts) if text)  # a sound, no word
    dashes = {t for t in kept if texts[t] in _DASHES}
    return Annotations(frozenset(kept), frozenset(turns), frozenset(dashes))


def annotated_cue(line: str) -> Cue | None:
    """A line of text as a cue when it holds annotations (else None: plain text)."""
    if not _MAY_HOLD.search(line):
        return None
    tokens = split_tokens(line)
    return Cue(None, None, tokens) if find_annotations(tokens).kept_out else None


def separate(text: str) -> tuple[list[str], list[str]]:
    """(the whitespace-separated tokens of a text that are not annotations, those that
    are), each in order."""
    tokens = split_tokens(text)
    kept_out = find_annotations(tokens).kept_out
    words = [token.text for t, token in enumerate(tokens) if token.text and t not in kept_out]
    return words, [tokens[t].text for t in sorted(kept_out)]


def text_outside(text: str) -> str:
    """A text with its annotations (speaker labels, dialogue dashes, sound descriptions,
    timestamps) taken out and the other tokens joined by single spaces; a text without
    any is returned as it is. `punctum eval` scores what is left, as restore gives the
    model only that: "JOHN: hi [laughs] there" -> "hi there"."""
    if not _MAY_HOLD.search(text):
        return text
    words, kept_out = separate(text)
    return " ".join(words) if kept_out else text


def words_outside(text: str) -> list[str]:
    """The whitespace-separated tokens of a text that are not annotations."""
    return separate(text)[0]


def _lines(tokens: Sequence[Token]) -> list[tuple[int, int]]:
    """[start, end) token ranges of the cue's lines, from the first token with text of each."""
    lines: list[list[int]] = []
    new_line = True
    for index, token in enumerate(tokens):
        new_line = new_line or breaks_line(token.before)
        if token.text:
            if new_line:
                lines.append([index, index])
                new_line = False
            lines[-1][1] = index + 1
        new_line = new_line or breaks_line(token.after)
    return [(start, end) for start, end in lines]


def continues_dialogue(previous: Sequence[Token], previous_note: Annotations,
                       tokens: Sequence[Token], note: Annotations) -> Annotations:
    """`note` with the dash on its cue's first line opening a turn when the cue before
    ended on a dashed line (a dialogue that goes on across cues: "- And nobody can
    confirm that" / "- My wife can")."""
    lines, before = _lines(tokens), _lines(previous)
    if not lines or not before:
        return note
    first, last_start = lines[0][0], before[-1][0]
    if first in note.dashes and first not in note.turns and last_start in previous_note.dashes:
        return replace(note, turns=note.turns | {first})
    return note


def _line_prefix(line: list[str], offset: int, kept: set[int], turns: set[int],
                 first_line: bool) -> None:
    """Mark the line's leading timestamps, turn mark and speaker label (`line`: the texts
    of its tokens, the first of which is token `offset` of the cue). A dialogue dash on the
    first line of a cue with no other dashed line opens no turn (`first_line`): that
    speaker may go on from the cue before; in a cue of two dashed lines both open one."""
    if _is_heading(line):  # Otter's "Speaker 1  0:03" above the turn's text
        kept.update(range(offset, offset + len(line)))
        turns.add(offset)
        return
    index = 0
    while index < len(line) and _is_timestamp(line, index):
        index = _timestamp_end(line, index)
    kept.update(range(offset, offset + index))
    turn = None
    if index < len(line) and (line[index] in _DASHES or line[index] in _TURN_MARKS):
        turn = None if first_line and line[index] in _DASHES else index
        kept.add(offset + index)  # a dash has no words and stays anyway; ">>" would be one
        index += 1
    end = _label_end(line, index)
    if end is not None:
        kept.update(range(offset + index, offset + end))
        turn = index if turn is None else turn
    if turn is not None:
        kept.add(offset + turn)
        turns.add(offset + turn)


def _is_heading(line: list[str]) -> bool:
    """Whether a line is a speaker's name and a time alone: 1-3 words, each capitalised
    ("John Smith", "The Host", "A"), or a number or "_" among them ("speaker 1"); not a
    time of day in running text, as a restore may write it ("On Monday 10:30", "See you at
    10:30")."""
    *name, time = line
    numbered = any(c.isdigit() or c == "_" for word in name for c in word)
    return (0 < len(name) <= _LABEL_WORDS and bool(_SHORT_TIME.fullmatch(time.strip("[]()")))
            and bool(_LABEL_FIRST.fullmatch(name[0]))
            and all(_LABEL_MORE.fullmatch(word) for word in name[1:])
            and (numbered or (all(word[:1].isupper() for word in name)
                              and name[0].lower() not in _NOT_NAMES)))


def _is_timestamp(texts: list[str], index: int) -> bool:
    text = texts[index]
    if _BARE_TIME.fullmatch(text):
        return True
    end = _bracket_end(texts, index)
    return end is not None and bool(_TIME_CONTENT.fullmatch(_content(texts, index, end)))


def _timestamp_end(texts: list[str], index: int) -> int:
    """One past the timestamp that starts at index."""
    end = _bracket_end(texts, index)
    return index + 1 if end is None else end


def _label_end(texts: list[str], index: int) -> int | None:
    """One past a speaker label starting at index, or None: 1-3 words and a colon, where
    the words are a name's ("SPEAKER_00:", "Dr. Smith:", "Speaker 1:", "JOHN:": a capital,
    digit or underscore) or one lowercase word ("agent:"; "the key point:" is text), maybe
    qualified by a bracket before the colon ("NARRATOR (V.O.):", "Speaker 1 (00:03):"), or
    a name in square brackets, of any case, and a colon (WhisperX's "[SPEAKER_00]:", the
    "[john smith]:" that `--to text` writes for its speaker "john smith"), whisper.cpp's
    "(speaker 0)", or a phone number and a colon (a dial-in caller: "+14155550199:")."""
    if index >= len(texts):
        return None
    if _PHONE_LABEL.fullmatch(texts[index]):  # a dial-in caller (Zoom): "+14155550199:"
        return index + 1
    end = _bracket_end(texts, index)
    if end is not None and texts[end - 1].endswith(")") and \
            _NUMBERED_SPEAKER.fullmatch(_content(texts, index, end)):
        return end
    if end is not None and texts[end - 1].endswith(("]:", "):")):
        name = _content(texts, index, end).split()
        fits = 0 < len(name) <= _LABEL_WORDS or (  # "[Maria de la Cruz]:"
            len(name) <= _FULL_NAME_WORDS and _full_name(name))
        square = texts[index].startswith("[")  # (any case: "[john smith]:" is no running
        return end if fits and (square or _names(name)) else None  # text; "(in other words):" is)
    length, words = -1, []
    for k in range(index, min(index + _FULL_NAME_WORDS + 1, len(texts))):
        text = texts[k]
        length += len(text) + 1
        if length > _LABEL_CHARS + 1:
            return None
        qualifier = _bracket_end(texts, k) if k > index else None
        if qualifier is not None and texts[qualifier - 1].endswith(("]:", "):")):
            return qualifier if _names(words) else None
        colon = text.endswith(":")
        core = text[:-1] if colon else text
        pattern = _LABEL_FIRST if k == index else _LABEL_MORE
        if k - index == _FULL_NAME_WORDS or not core or not pattern.fullmatch(core):
            return None
        words.append(core)
        if colon:
            fits = len(words) <= _LABEL_WORDS or _full_name(words)
            return k + 1 if fits and _names(words) else None
    return None


def _full_name(words: list[str]) -> bool:
    """Whether 4-5 label words are a person's full name: capitalised words, maybe with
    particles between, the first and last capitalised ("José María García López", "Maria
    de la Cruz"), none a word that opens running text ("And So On And:")."""
    return (words[0][:1].isupper() and words[-1][:1].isupper()
            and all(word[:1].isupper() or word in _NAME_PARTICLES for word in words)
            and sum(word in _NAME_PARTICLES for word in words) < len(words) - 1
            and not any(word.lower() in _NOT_NAMES for word in words))


def _names(words: list[str]) -> bool:
    """Whether label words read as a speaker's name or role rather than running text."""
    return len(words) == 1 or any(
        char.isupper() or char.isdigit() or char == "_" for word in words for char in word)


def _bracket_groups(texts: list[str], kept: set[int]) -> None:
    """Mark "[door slams]", "(laughs)", "[00:05]": a bracket opened at a token's start and
    closed at a token's end, holding a letter or a time: square brackets up to
    _BRACKET_TOKENS tokens, parentheses up to _PAREN_TOKENS ("(and i quote)" is text)."""
    index = 0
    while index < len(texts):
        end = _bracket_end(texts, index)
        if end is None:
            index += 1
            continue
        content = _content(texts, index, end)
        timed = bool(_TIME_CONTENT.fullmatch(content))
        short = texts[index][0] == "[" or end - index <= _PAREN_TOKENS
        if timed or (short and any(char.isalpha() for char in content)):
            kept.update(range(index, end))
        index = end


def _bracket_end(texts: list[str], index: int) -> int | None:
    """One past the token that closes the bracket texts[index] opens, or None (no closing
    bracket within _BRACKET_TOKENS tokens, one inside a token: "(a)b", or a nested one)."""
    opening = texts[index][:1]
    closing = _BRACKETS.get(opening)
    if closing is None:
        return None
    for k in range(index, min(index + _BRACKET_TOKENS, len(texts))):
        inner = (texts[k][1:] if k == index else texts[k]).rstrip(_TRAILING)
        if opening in inner or closing in inner[:-1]:
            return None
        if inner.endswith(closing):
            return k + 1
    return None


def _content(texts: list[str], index: int, end: int) -> str:
    """The text between a bracket group's brackets."""
    joined = " ".join(texts[index:end]).rstrip(_TRAILING)
    return joined[1:-1].strip()
