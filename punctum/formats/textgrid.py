"""Praat TextGrid files (long and short text forms), read and written for `formats`.

    punctum restore -i aligned.TextGrid -o aligned.punct.TextGrid   # e.g. Montreal Forced Aligner
    punctum restore -i aligned.TextGrid --model en-tiny-pauses       # its word times as pauses

The words of one tier (or each speaker's) are restored: the interval tier named by `--text-
key`, else a tier named "words" (or "word", or "<speaker> - words" as the Montreal Forced
Aligner names one speaker's words: each speaker's tier its own text), else one named
"transcript", "transcription", "text", "utterance(s)", "sentence(s)" or "ortho(graphy)", else
every interval tier of utterances (one interval of several words at least; as ELAN exports a
tier per speaker, each its own text; not one whose name holds "phon", "comment", "note",
"gloss", "transl" or "remark"), else the first interval tier whose name does not hold "phon",
else the first. Each interval is a cue with its times; an interval of one word gives that word
its times (so that a pause-aware model reads the pauses between words). Empty intervals and
silence labels ("sil", "sp", "spn", "<eps>", "<sil>", "#") never reach the model. Only the
changed interval texts are written again, each in place in the text read, so every other
character stays (phone tiers, point tiers, numbers as written, the long or short form; a UTF-16
file is written back as UTF-8). Times must run from 0 (Praat allows negative ones, which no
timed format punctum writes can hold).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any

from punctum.formats.transcript import (
    ASIDE_TIER,
    MAX_SECONDS,
    Cue,
    Transcript,
    fillers_kept_out,
    holds_utterances,
    shown,
    spliced,
    split_tokens,
)

# A value of the text forms: a string ("" inside doubles a quote), a number, a flag; the
# labels of the long form ("xmin =", "intervals [3]:", "item []:") are skipped, as are
# comments after "!" in the short form.
_VALUE = re.compile(r'"(?:[^"]|"")*"|[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?(?=\s|$)|'
                    r'<exists>|<absent>|![^\n]*|\[[^\]\n]*\]|"|[^\s"]+')
_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
_SILENCE = frozenset({"sil", "sp", "spn", "<eps>", "#", "<sil>"})
_WORD_TIERS = ("words", "word")
_TEXT_TIERS = ("transcript", "transcription", "text", "utterance", "utterances", "sentence",
               "sentences", "ortho", "orthography")


@dataclass(frozen=True)
class _Value:
    """One value of the file: its Python value and where its text stands."""
    value: Any
    start: int
    end: int


@dataclass(frozen=True)
class _Tier:
    name: str
    kind: str
    intervals: list[tuple[_Value, _Value, _Value]]  # xmin, xmax, text (interval tiers)


def _line(text: str, offset: int) -> int:
    """The 1-based line of a character offset (for errors)."""
    return text.count("\n", 0, offset) + 1


def looks_like_textgrid(text: str) -> bool:
    """Whether a text starts as a TextGrid text file does."""
    head = text.lstrip("\ufeff \t\r\n")[:200]
    return head.startswith('File type = "ooTextFile') and '"TextGrid"' in head


def read_textgrid(text: str, name: str, meta: dict, tier: str | None = None) -> Transcript:
    """A TextGrid's chosen tier (`tier`: the one of that name) as cues."""
    values = _values(text, name)
    chosen = _chosen_tiers(_tiers(_Reader(values, name, text)), name, tier)
    cues, documents, spans = [], [], []
    for tier in chosen:
        first = len(cues)
        for xmin, xmax, label in tier.intervals:
            if label.value.strip() and label.value.strip().lower() not in _SILENCE:
                cues.append(_cue(xmin, xmax, label.value, name, text))
                spans.append(label)
        documents.append(list(range(first, len(cues))))
    names = [re.sub(r"\s+-\s+words?$", "", t.name.strip(), flags=re.IGNORECASE) or t.name
             for t in chosen]  # (MFA's "Ann - words": Ann)
    return Transcript("textgrid", tuple(cues), {**meta, "documents": documents, "tiers": names,
                                                "word_tiers": all(map(_is_word_tier, chosen)),
                                                "textgrid": {"text": text, "spans": spans}})


def _values(text: str, name: str) -> list[_Value]:
    """The strings, numbers and flags of the file in order (labels and comments skipped)."""
    out = []
    for match in _VALUE.finditer(text):
        token = match.group()
        if token == '"':
            raise ValueError(f"{name}:{_line(text, match.start())}: a string that is never "
                             f"closed (a missing '\"')")
        if token.startswith('"'):
            out.append(_Value(token[1:-1].replace('""', '"'), match.start(), match.end()))
        elif token in ("<exists>", "<absent>"):
            out.append(_Value(token, match.start(), match.end()))
        elif _NUMBER.fullmatch(token):
            out.append(_Value(float(token), match.start(), match.end()))
        elif token[0].isdigit() or (token[0] in "-+." and token not in ("-", "+", ".")) \
                or token.lower().lstrip("-+") in ("nan", "inf", "infinity"):
            raise ValueError(f"{name}:{_line(text, match.start())}: "
                             f"{shown(token)} is not a number")
    if len(out) < 2 or out[0].value not in ("ooTextFile", "ooTextFile short") \
            or out[1].value != "TextGrid":
        raise ValueError(f'{name}: not a Praat TextGrid text file (File type = "ooTextFile", '
                         f'Object class = "TextGrid"); save a binary TextGrid as text')
    return out


class _Reader:
    """The values of a TextGrid in order, each taken with a check of its kind; errors name
    the line of the value."""

    def __init__(self, values: list[_Value], name: str, text: str) -> None:
        self.values, self.at, self.name, self.text = values, 2, name, text

    def where(self, value: _Value) -> str:
        return f"{self.name}:{_line(self.text, value.start)}"

    def take(self, kind: type, what: str) -> _Value:
        if self.at >= len(self.values):
            raise ValueError(f"{self.name}: the file ends where {what} should be")
        value = self.values[self.at]
        if not isinstance(value.value, kind):
            raise ValueError(f"{self.where(value)}: expected {what}, got {shown(value.value)}")
        self.at += 1
        return value

    def time(self, what: str) -> _Value:
        value = self.take(float, what)
        if not 0 <= value.value <= MAX_SECONDS:  # (Praat allows negative times: no timed
            raise ValueError(f"{self.where(value)}: {what} {value.value:g} is not a time "
                             f"from 0 to {MAX_SECONDS:.0e} seconds")  # format punctum writes)
        return value

    def count(self, what: str) -> int:
        value = self.take(float, what)
        if not 0 <= value.value <= len(self.values) or value.value != int(value.value):
            raise ValueError(f"{self.where(value)}: expected {what}, got {value.value:g}")
        return int(value.value)

    def end(self) -> None:
        if self.at < len(self.values):
            raise ValueError(f"{self.where(self.values[self.at])}: values after the last "
                             f"tier (do the tiers' sizes match their intervals?)")


def _tiers(reader: _Reader) -> list[_Tier]:
    reader.time("the file's xmin")
    reader.time("the file's xmax")
    if reader.take(str, "<exists> or <absent>").value == "<absent>":
        return []
    tiers = []
    for _ in range(reader.count("the number of tiers")):
        kind = reader.take(str, 'a tier class ("IntervalTier" or "TextTier")')
        tier_name = reader.take(str, "a tier name").value
        reader.time("the tier's xmin")
        reader.time("the tier's xmax")
        size = reader.count("the number of intervals or points")
        if kind.value == "IntervalTier":
            intervals = [(reader.time("an interval's xmin"), reader.time("an interval's xmax"),
                          reader.take(str, "an interval's text")) for _ in range(size)]
        elif kind.value == "TextTier":
            intervals = []
            for _ in range(size):
                reader.time("a point's time")
                reader.take(str, "a point's mark")
        else:
            raise ValueError(f"{reader.where(kind)}: tier {shown(tier_name)} is of class "
                             f"{shown(kind.value)}, not IntervalTier or TextTier")
        tiers.append(_Tier(tier_name, kind.value, intervals))
    reader.end()
    return tiers


def _named(tier: _Tier) -> str:
    return " ".join(tier.name.lower().split())


def _is_word_tier(tier: _Tier) -> bool:
    """Whether a tier is named for words ("words", MFA's "Ann - words")."""
    return _named(tier) in _WORD_TIERS or _named(tier).endswith(
        tuple(f" - {w}" for w in _WORD_TIERS))


def _chosen_tiers(tiers: list[_Tier], name: str, wanted: str | None) -> list[_Tier]:
    """The tiers to restore: the interval tier named `wanted`, else as the module docstring
    says."""
    intervals = [t for t in tiers if t.kind == "IntervalTier"]
    if wanted is not None:
        found = [t for t in intervals if t.name == wanted]
        if not found:
            names = ", ".join(shown(t.name) for t in intervals) or "none"
            raise ValueError(f"{name}: no interval tier named {shown(wanted)} (its interval "
                             f"tiers: {names})")
        return found[:1]
    if not intervals:
        raise ValueError(f"{name}: the TextGrid has no interval tier to restore")

    words = [t for t in intervals if _is_word_tier(t)]
    texts = [t for t in intervals if _named(t) in _TEXT_TIERS][:1]
    not_phones = [t for t in intervals if "phon" not in _named(t)]  # (SPPAS: PhonAlign)
    utterances = [t for t in not_phones if not ASIDE_TIER.search(t.name)  # (as ELAN exports
                  and holds_utterances([label.value for _, _, label in t.intervals])]  # them)
    return words or texts or utterances or not_phones[:1] or intervals[:1]


def _cue(xmin: _Value, xmax: _Value, label: str, name: str, text: str) -> Cue:
    start, end = xmin.value, xmax.value
    if end < start:
        raise ValueError(f"{name}:{_line(text, xmax.start)}: the interval ends ({end:g}) "
                         f"before it starts ({start:g})")
    tokens = fillers_kept_out(split_tokens(label))
    if sum(1 for t in tokens if t.text) == 1:  # a word-level interval: its times are the word's
        tokens = tuple(replace(t, start=start, end=end) if t.text else t for t in tokens)
    return Cue(start, end, tokens)


def dump_textgrid(transcript: Transcript) -> str:
    """The text read with each changed interval text written in place (doubled quotes)."""
    source = transcript.meta.get("textgrid")
    if source is None or len(source["spans"]) != len(transcript.cues):
        raise ValueError("a TextGrid is written from the TextGrid it was read from; convert "
                         "to srt, vtt, text or json instead")
    return spliced(source["text"], [(span.start, span.end, '"' + cue.text.replace('"', '""') + '"')
                                     for span, cue in zip(source["spans"], transcript.cues)
                                     if cue.text != span.value])
