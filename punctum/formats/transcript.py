"""The transcript model: `Transcript`s of `Cue`s of `Token`s, and cutting text into tokens."""

from __future__ import annotations

import functools
import html
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from punctum.references import REFERENCE

FORMATS = ("text", "srt", "vtt", "sbv", "ass", "lrc", "ttml", "whisper", "whispercpp", "vosk",
           "nemo", "ctm", "kaldi", "sphinx", "hf", "sherpa", "deepgram", "assemblyai", "google",
           "watson", "textgrid", "eaf", "csv", "tsv")
EXTENSIONS = {"text": ".txt", "srt": ".srt", "vtt": ".vtt", "sbv": ".sbv", "ass": ".ass",
              "lrc": ".lrc", "ttml": ".ttml",
              "whisper": ".json", "whispercpp": ".json", "vosk": ".json", "nemo": ".jsonl",
              "ctm": ".ctm",
              "kaldi": ".txt", "sphinx": ".jsonl", "hf": ".json", "sherpa": ".json",
              "deepgram": ".json", "assemblyai": ".json", "google": ".json",
              "watson": ".json",
              "textgrid": ".TextGrid", "eaf": ".eaf",
              "csv": ".csv", "tsv": ".tsv"}
SUBTITLES = ("srt", "vtt")
# Formats whose cues are separate texts (paragraphs, utterances of different recordings):
# context does not flow from one cue to the next, and each cue is closed as a text.
INDEPENDENT_CUES = frozenset({"text", "nemo", "kaldi", "csv", "tsv"})
# Formats without times (they cannot become subtitles).
UNTIMED = frozenset({"text", "nemo", "kaldi", "csv", "tsv"})
# Tables: a text column restored per row (`tables`).
TABLES = ("csv", "tsv")
# Formats whose text is one field of each record, named by a key (--text-key, --output-key).
KEYED = ("nemo", *TABLES)
# Formats that take a text key alone (the TextGrid or ELAN tier to restore; no output key).
TEXT_KEYED = (*KEYED, "textgrid", "eaf")
# Cloud recognisers' JSON, words listed as records (`wordlists`): a cue's "speaker" is its own.
WORD_LISTS = ("deepgram", "assemblyai", "google", "watson")
# The largest time in seconds a file may hold (over 300 years: Unix times fit).
MAX_SECONDS = 1e10

# Subtitle markup kept around tokens: tags, SRT/ASS override codes, HTML character references
# (whose ";" would otherwise read as a mark). A reference inside a word ("don&#39;t") or
# standing alone ("Tom &amp; Jerry") is text, unless it stands for whitespace (&nbsp;).
# tags (<i>, </i>, <font color=red>, <v Bob>, <c.yellow>, WebVTT's <00:00:01.000>), ASS
# overrides ({\an8}), comments and character references; "x < 5 and y > 3" holds no tag
_MARKUP = re.compile(r"</?[A-Za-z][^<>\n]*>|<\d[\d:.]*>|<!--.*?-->|\{\\[^{}\n]*\}|"
                     + REFERENCE.pattern)
_WHITESPACE = re.compile(r"(\s+)")
# Scripts written without spaces between words: Thai, Lao, Myanmar, Khmer, kana, CJK
# ideographs (and their punctuation), halfwidth and fullwidth forms.
_SPACELESS = re.compile("[\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff\u3000-\u30ff"
                        "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uff0f\uff1a-\uff20"
                        "\uff3b-\uff40\uff5b-\uffef]")  # not full-width Latin letters, digits
# Marks a model writes after a word (a reference followed by one still stands alone).
_MARKS_AFTER = frozenset(",.?!;:")
# ASR filler and noise tokens: <unk>, <sil>, [noise], [laughter], ++UM++, Watson's %HESITATION.
FILLER = re.compile(r"^(?:<[^<>\s]*>|\[[^\[\]\s]*\]|\+\+[^+\s]*\+\+|%HESITATION)$")


# ----------------------------------------------------------------------------- model

@dataclass(frozen=True)
class Token:
    """One written token (usually one word) with its timing.

    Attributes:
        text: the token as written, without whitespace or markup ("Hello,"; "" only for a
            cue whose text is markup alone).
        start, end: seconds, or None when the source has no word timings.
        before: whitespace and markup written before the token (" ", "\\n", "<i>"; Whisper's
            leading space).
        after: whitespace and markup written after it (the cue's closing "</i>").
        extra: the source's record of the token as read (a Whisper or Vosk word object, every
            key in its order); `text`, `start` and `end` are authoritative and are written
            back into it.
    """

    text: str
    start: float | None = None
    end: float | None = None
    before: str = ""
    after: str = ""
    extra: dict = field(default_factory=dict, hash=False)


@dataclass(frozen=True)
class Cue:
    """A subtitle cue, a Whisper segment, a Vosk result, a manifest line or a text line.

    Attributes:
        start, end: seconds, or None when the source has no times (text, NeMo).
        tokens: the cue's text as tokens; `text` joins them back.
        identifier: the SRT cue number or the VTT cue id as written ("" when absent).
        settings: what follows the end time on the timing line (VTT cue settings, SRT
            coordinates).
        extra: the source's record of the cue as read (JSON formats), every key in its order.
    """

    start: float | None
    end: float | None
    tokens: tuple[Token, ...] = ()
    identifier: str = ""
    settings: str = ""
    extra: dict = field(default_factory=dict, hash=False)

    @property
    def text(self) -> str:
        """The cue's text as written: tokens with their whitespace and markup."""
        return "".join(t.before + t.text + t.after for t in self.tokens)


@dataclass(frozen=True)
class Transcript:
    """A file in one of `FORMATS`: its cues and what the writer needs to reproduce it.

    Attributes:
        format: one of FORMATS.
        cues: the cues in file order.
        meta: file-level data: line ending, byte-order mark, trailing newlines, the VTT header
            and NOTE/STYLE/REGION blocks (as (cue index, text) pairs), the JSON root record and
            serialisation style, the manifest text key.
    """

    format: str
    cues: tuple[Cue, ...] = ()
    meta: dict = field(default_factory=dict, hash=False)

    def __post_init__(self) -> None:
        if self.format not in FORMATS:
            raise ValueError(f"format must be one of {FORMATS}, got {self.format!r}")

    @property
    def tokens(self) -> list[Token]:
        """Every token of every cue, in order."""
        return [token for cue in self.cues for token in cue.tokens]


# ----------------------------------------------------------------------------- tokens

# a dialogue dash written against the line's first word ("-Where are you going?")
_GLUED_DASH = re.compile(r"[-–](?=[^\W\d_])")
# a line-break tag: <br>, <br/>, <br class="x">, EBU-TT's <tt:br/>
LINE_BREAK = re.compile(r"<(?:[\w.-]+:)?br\b[^<>]*>", re.IGNORECASE)


def breaks_line(gap: str) -> bool:
    """Whether the whitespace and markup between two tokens start a new line: a line feed,
    a line-break tag or ASS's \\N."""
    return "\n" in gap or "\\N" in gap or ("<" in gap and bool(LINE_BREAK.search(gap)))


def split_tokens(text: str, markup: bool | re.Pattern = False) -> tuple[Token, ...]:
    """Cut running text into tokens, keeping whitespace (and markup tags) around them.

    Joining ``before + text + after`` over the tokens gives `text` back. Text made of markup
    or whitespace alone becomes one token with empty text. In subtitles (`markup`), a dash
    written against a line's first word ("-Where") is a token of its own (a dialogue dash).

    Args:
        text: a cue's text, a segment's text or a line.
        markup: treat ``<...>`` and ``{\\...}`` tags and character references (``&amp;``)
            as markup (subtitles), not as text; or a pattern of a format's own markup
            (ASS's override blocks and ``\\N`` escapes, `ass`).
    """
    pieces = _markup_pieces(text, _MARKUP if markup is True else markup) if markup else [text]
    tokens: list[Token] = []
    pending = ""
    for k, piece in enumerate(pieces):
        if k % 2:
            pending += piece
            continue
        for run in _WHITESPACE.split(piece):
            if run and not run.isspace():
                if markup and _GLUED_DASH.match(run) and (not tokens or breaks_line(pending)):
                    tokens.append(Token(run[0], before=pending))  # "-Where" opening a line:
                    run, pending = run[1:], ""  # a dialogue dash (Netflix's style), apart
                tokens.append(Token(run, before=pending))
                pending = ""
            else:
                pending += run
    if pending and tokens:
        tokens[-1] = replace(tokens[-1], after=pending)
    elif pending:
        tokens.append(Token("", before=pending))
    return tuple(tokens)


def spliced(text: str, replacements: Sequence[tuple[int, int, str]]) -> str:
    """`text` with each span [start, end) replaced by its new text (spans apart)."""
    pieces, position = [], 0
    for start, end, new in sorted(replacements, key=lambda r: r[0]):
        pieces += [text[position:start], new]
        position = end
    return "".join(pieces) + text[position:]


# tiers of remarks about the speech, not the speech (TextGrid, ELAN): never restored unless
# named ("Notes", "comments", "gloss", "translation"; not "Noteboom" or "Translator")
ASIDE_TIER = re.compile(r"(?<![a-z])(?:comments?|notes?|gloss(?:es)?|transl(?:ation)?s?|"
                        r"remarks?)(?![a-z])", re.IGNORECASE)


def holds_utterances(labels: Sequence[str]) -> bool:
    """Whether one of a tier's labels holds several words (an utterance: two words of two
    letters or more at least; not a word, a syllable, a record id or phones such as
    "T I N k", "s @U")."""
    return any(sum(sum(c.isalpha() for c in part) > 1 for part in label.split()) > 1
               for label in labels)


def shown(value, limit: int = 60) -> str:
    """repr(value) for an error message, cut to `limit` characters (a line of a file may
    be the whole file; safe for integers of any length)."""
    try:
        text = repr(value)
    except ValueError:  # more digits than Python converts
        return "a larger number"
    return text if len(text) <= limit else text[:limit] + "..."


def needs_space(left: str, right: str) -> bool:
    """Whether two words written by separate records (JSON words) take a space between
    them: not where either side is in a script written without spaces (Chinese, Japanese,
    Thai, Lao, Khmer, Myanmar)."""
    return bool(left and right) and not (_SPACELESS.match(left[-1])
                                         or _SPACELESS.match(right[0]))


def carry_spaces(texts: Sequence[str]) -> bool:
    """Whether word records are written with the spaces between words (OpenAI Whisper's
    " Hello", " Don" "'t"), not without (WhisperX's "Hello"): at least half of those that
    start with a letter or digit start with whitespace before it (a stray " home" among
    WhisperX words changes nothing; Whisper's "'t", ",000" are pieces of a word)."""
    worded = [text for text in texts if text.strip()[:1].isalnum()] or [
        text for text in texts if text.strip()]  # (all pieces: " $1" ",500")
    return bool(worded) and 2 * sum(text[:1].isspace() for text in worded) >= len(worded)


def respaced(old_text: Any, old_parts: Sequence[Any], new_parts: Sequence[str]) -> str | None:
    """`new_parts` joined with the whitespace that `old_text` holds before, between and after
    `old_parts` (their text without its own edge whitespace, in order, whitespace alone
    between them: a segment's text and its words, a file's text and its segments); None
    where `old_text` is not so made ("edited"), or a part is not text."""
    if not isinstance(old_text, str) or len(old_parts) != len(new_parts) or not all(
            isinstance(part, str) for part in old_parts):
        return None
    out, position = [], 0
    for old, new in zip(old_parts, new_parts):
        start = position
        while position < len(old_text) and old_text[position].isspace():
            position += 1
        core = old.strip()
        if not old_text.startswith(core, position):
            return None
        out += [old_text[start:position], new.strip()]
        position += len(core)
    rest = old_text[position:]
    return None if rest.strip() else "".join(out) + rest


def is_filler(word: str) -> bool:
    """Whether an ASR token is a filler or noise marker rather than a word."""
    return bool(FILLER.match(word))


def fillers_kept_out(tokens: tuple[Token, ...]) -> tuple[Token, ...]:
    """Tokens with the ASR fillers among them ("[noise] hi <unk>") moved into the whitespace
    around the neighbouring words, so that they never reach the model and are written back
    as they are. Text made of fillers alone becomes one token without text."""
    out: list[Token] = []
    pending = ""
    for token in tokens:
        if is_filler(token.text):
            if out:
                last = out[-1]
                out[-1] = replace(last, after=last.after + token.before + token.text + token.after)
            else:
                pending += token.before + token.text + token.after
        else:
            out.append(replace(token, before=pending + token.before))
            pending = ""
    if pending:
        out.append(Token("", before=pending))
    return tuple(out)


def _markup_pieces(text: str, markup: re.Pattern = _MARKUP) -> list[str]:
    """[text, markup, text, markup, ..., text]: the matches of `markup`, except the
    character references that are text (`_is_text`)."""
    pieces, position = [], 0
    for match in markup.finditer(text):
        start, end = match.span()
        if _is_text(text, start, end):
            continue
        pieces += [text[position:start], match.group()]
        position = end
    return pieces + [text[position:]]


def _is_text(text: str, start: int, end: int) -> bool:
    """Whether text[start:end], a markup match, is a character reference that is text: one
    for a letter or digit ("caf&eacute;"), for another non-space character inside a word
    ("don&#39;t") or standing alone ("Tom &amp; Jerry"), or at a word's edge unless
    normalisation drops it there ("&quot;Hi&quot;" keeps its quotes as markup: as text they
    would be lost)."""
    reference = text[start:end]
    decoded = html.unescape(reference)
    if not reference.startswith("&") or not decoded.isprintable() or decoded.strip() == "":
        return False  # a control character (&#1;) or no character at all is markup
    if decoded.isalnum():  # a letter ("caf&eacute;", "&Eacute;cole") is always text
        return True
    before = text[start - 1] if start else " "
    after = text[end] if end < len(text) else " "
    # standing alone: a mark the model wrote after it ("&amp;.") still leaves it alone
    alone_after = after.isspace() or (after in _MARKS_AFTER and (
        end + 1 >= len(text) or text[end + 1].isspace()))
    if (before.isalnum() and after.isalnum()) or (before.isspace() and alone_after):
        return True
    return not _dropped_at_edge(decoded)  # "--&gt;" is text, "&quot;Hi" markup


@functools.lru_cache(maxsize=256)
def _dropped_at_edge(chars: str) -> bool:
    """Whether normalisation drops these characters at a word's edge (quotes, brackets,
    dashes), so that as text they would be lost from the restored word."""
    from punctum.text import parse

    return parse(chars + "a").words == ("a",) or parse("a" + chars).words == ("a",)


def _split_word(raw: str, start: float | None, end: float | None, record: dict) -> Token:
    """A Whisper word (" Hello,") as a token whose whitespace is kept in before/after."""
    core = raw.strip()
    if not core:
        return Token("", start, end, before=raw, extra=record)
    lead = raw[:len(raw) - len(raw.lstrip())]
    trail = raw[len(raw.rstrip()):]
    return Token(core, start, end, before=lead, after=trail, extra=record)
