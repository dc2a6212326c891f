"""Label inventory, normalisation, and text <-> (words, labels) <-> text.

Pure Python. This module is the only place that knows which characters are punctuation
marks: every other module reads marks, cases and the null label from an `Inventory`.

A word carries three labels:

- ``post``: the mark written after it (English: O, COMMA, PERIOD, QUESTION, EXCLAMATION);
- ``case``: LOWER, CAP (first cased letter upper), UPPER, MIX (any other pattern, whose exact
  form comes from the parsed text or a casing lexicon);
- ``pre``: a mark written before it (Spanish inverted marks); O in most languages.

`parse` turns cased, punctuated text into normalised words and labels, `render` turns them
back into text, and ``canonical(text)`` is the normal form that every round trip reproduces:
words joined by single spaces, one inventory mark per word written as its label's own text
(`render` of `parse` writes a mark as the text wrote it, ";" or "?!": `Edges.mark`, which
`--keep-existing` keeps), invisible format characters at word edges dropped (the apostrophe
of 'em, '90s, rock 'n' roll and students' and the sign of -5 stay). Quotes and brackets,
which no model predicts, are not labels: they are kept where they were written (`Edges`), as
are tokens without a word that hold one (":)", "(", a lone quote), beside the nearest word.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field, replace

from punctum.references import (
    apply_case_decoded,
    apply_outside,
    closes_reference,
    opens_with_reference,
)

NULL = "O"
LOWER, CAP, UPPER, MIX = "LOWER", "CAP", "UPPER", "MIX"
CASES = (LOWER, CAP, UPPER, MIX)
WORD_UNITS = ("word", "char")

# Characters stripped from word edges in every language (never part of a word's edge).
_QUOTES = "\"'“”‘’‚„«»‹›「」『』〝〞＂"
_BRACKETS = "()[]{}（）［］｛｝〈〉《》【】"
_DASHES = "-‐‑‒–—―"
_APOSTROPHES = "'’ʼ"
# a left quote often stands for an apostrophe before a word: ‘90s, ‘em
_LEAD_APOSTROPHES = _APOSTROPHES + "‘"
# signs kept before a number: -5, –5 (en dash), ‐5 (hyphen), −5 (minus)
_DIGIT_SIGNS = "-‐‑–−"
# invisible format characters: at a word's edge they are dropped with the marks around
# them (a BOM, zero-width spaces and joiners, a soft hyphen; not direction marks and
# embeddings, which right-to-left text needs where they are written)
_INVISIBLE = "\u00ad\u200b\u200c\u200d\u2060\u2061\u2062\u2063\u2064\ufeff"


@dataclass(frozen=True)
class Mark:
    """One punctuation label: its name, how it is written, and what else reads as it.

    Args:
        name: label name, e.g. "COMMA".
        text: the character(s) written for it, e.g. ",".
        sentence_final: whether it ends a sentence.
        aliases: other characters parsed as this mark (e.g. ";" read as PERIOD).
        opens: for a pre-mark, the post-mark whose sentences it opens ("QUESTION" for ¿):
            `open_sentences` writes it before the first word of each such sentence.
    """

    name: str
    text: str
    sentence_final: bool = False
    aliases: tuple[str, ...] = ()
    opens: str = ""


@dataclass(frozen=True)
class Inventory:
    """The label set of one language.

    Args:
        language: language code, e.g. "en".
        post_marks: marks written after a word, in label order (the null label comes first
            implicitly).
        pre_marks: marks written before a word (Spanish ¿ ¡).
        word_unit: "word" (space-separated) or "char" (each Han/kana character is a word).
        abbreviations: lowercase words whose trailing period is part of their spelling, not a
            sentence mark ("dr" in "Dr."). Runs of one or two letters separated by periods
            (U.S., e.g., a.m., Ph.D.) are always abbreviations.
        elisions: lowercase words that keep a leading apostrophe ("em" in 'em).
        extra_strip: further characters stripped from word edges in this language.
    """

    language: str
    post_marks: tuple[Mark, ...]
    pre_marks: tuple[Mark, ...] = ()
    word_unit: str = "word"
    abbreviations: frozenset[str] = frozenset()
    elisions: frozenset[str] = frozenset()
    extra_strip: str = ""
    _lookup: dict = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.word_unit not in WORD_UNITS:
            raise ValueError(f"word_unit must be one of {WORD_UNITS}, got {self.word_unit!r}")
        names = [m.name for m in self.post_marks + self.pre_marks]
        if NULL in names or len(set(names)) != len(names):
            raise ValueError(f"mark names must be unique and not {NULL!r}: {names}")
        object.__setattr__(self, "_lookup", _build_lookup(self))

    @property
    def post_labels(self) -> tuple[str, ...]:
        """Post-mark label names, null first: ("O", "COMMA", ...)."""
        return (NULL,) + tuple(m.name for m in self.post_marks)

    @property
    def pre_labels(self) -> tuple[str, ...]:
        """Pre-mark label names, null first."""
        return (NULL,) + tuple(m.name for m in self.pre_marks)

    @property
    def case_labels(self) -> tuple[str, ...]:
        """Case label names, LOWER (the negative class) first."""
        return CASES

    @property
    def sentence_final(self) -> frozenset[str]:
        """Names of the post marks that end a sentence."""
        return frozenset(m.name for m in self.post_marks if m.sentence_final)

    def mark_text(self, name: str) -> str:
        """The written form of a mark name ("" for the null label)."""
        return self._lookup["text"][name]

    def to_dict(self) -> dict:
        """A JSON-ready description (stored in artifacts)."""
        return {
            "language": self.language,
            "post_marks": [_mark_to_dict(m) for m in self.post_marks],
            "pre_marks": [_mark_to_dict(m) for m in self.pre_marks],
            "word_unit": self.word_unit,
            "abbreviations": sorted(self.abbreviations),
            "elisions": sorted(self.elisions),
            "extra_strip": self.extra_strip,
        }

    @classmethod
    def from_dict(cls, data: dict) -> Inventory:
        """Rebuild an inventory from `to_dict` output; ValueError on unknown keys."""
        known = {"language", "post_marks", "pre_marks", "word_unit", "abbreviations",
                 "elisions", "extra_strip"}
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"unknown inventory keys: {sorted(unknown)}")
        return cls(
            language=data["language"],
            post_marks=tuple(_mark_from_dict(m) for m in data.get("post_marks", ())),
            pre_marks=tuple(_mark_from_dict(m) for m in data.get("pre_marks", ())),
            word_unit=data.get("word_unit", "word"),
            abbreviations=frozenset(data.get("abbreviations", ())),
            elisions=frozenset(data.get("elisions", ())),
            extra_strip=data.get("extra_strip", ""),
        )


def _mark_to_dict(mark: Mark) -> dict:
    return {"name": mark.name, "text": mark.text, "sentence_final": mark.sentence_final,
            "aliases": list(mark.aliases), **({"opens": mark.opens} if mark.opens else {})}


def _mark_from_dict(data: dict) -> Mark:
    return Mark(data["name"], data["text"], bool(data.get("sentence_final", False)),
                tuple(data.get("aliases", ())), str(data.get("opens", "")))


def _build_lookup(inv: Inventory) -> dict:
    """Character tables used by the parser: char -> post/pre mark name, strippable chars."""
    post: dict[str, str] = {}
    for mark in inv.post_marks:
        for form in (mark.text, *mark.aliases):
            for char in form:
                post.setdefault(char, mark.name)
    if "-" in post:  # other dashes than the inventory lists (‐ ‑ ‒): the hyphen's mark,
        post |= {c: post["-"] for c in _DASHES if c not in post}  # not dropped unseen
    pre = {char: m.name for m in inv.pre_marks for char in m.text + "".join(m.aliases)}
    strip = set(_QUOTES + _BRACKETS + _DASHES + "…" + _INVISIBLE + inv.extra_strip) | \
        set(post) | set(pre)
    text = {NULL: ""} | {m.name: m.text for m in inv.post_marks + inv.pre_marks}
    final = {m.name for m in inv.post_marks if m.sentence_final}
    final_text = frozenset(c for m in inv.post_marks if m.sentence_final
                           for c in m.text + "".join(m.aliases)) - set(";；؛…")
    word_char = re.compile("[^\\s" + re.escape("".join(sorted(strip))) + "]")
    kept = frozenset(_QUOTES + _BRACKETS) - set(post) - set(pre)
    # what a tag or an emoticon may start with, or marks, quotes and brackets before one
    symbol_first = frozenset(strip) | set(":;=<[8B>(" + _QUOTES + _BRACKETS)
    return {"post": post, "pre": pre, "strip": frozenset(strip), "text": text, "final": final,
            "word_char": word_char, "kept": kept, "final_text": final_text,
            "symbol_first": symbol_first}


# Only words that practically never end a sentence: the period of "etc." or "St." often
# doubles as a full stop, and reading it as part of the word would hide that mark.
_EN_ABBREVIATIONS = frozenset(
    "mr mrs ms dr prof vs approx dept esp gen gov lt col sgt capt rev hon messrs".split()
)

INVENTORIES: dict[str, Inventory] = {
    "en": Inventory(
        language="en",
        post_marks=(
            Mark("COMMA", ",", aliases=(":", "-", "–", "—", "―")),
            Mark("PERIOD", ".", True, aliases=(";", "…")),
            Mark("QUESTION", "?", True),
            Mark("EXCLAMATION", "!", True),
        ),
        abbreviations=_EN_ABBREVIATIONS,
        elisions=frozenset({"em", "til", "cause", "tis", "twas", "n"}),
    ),
    "es": Inventory(
        language="es",
        post_marks=(
            Mark("COMMA", ",", aliases=(":", "-", "–", "—")),
            Mark("PERIOD", ".", True, aliases=(";", "…")),
            Mark("QUESTION", "?", True),
            Mark("EXCLAMATION", "!", True),
        ),
        pre_marks=(Mark("INV_QUESTION", "¿", opens="QUESTION"),
                   Mark("INV_EXCLAMATION", "¡", opens="EXCLAMATION")),
        abbreviations=frozenset("sr sra srta dr dra ud uds".split()),
    ),
    "zh": Inventory(
        language="zh",
        post_marks=(
            Mark("COMMA", "，", aliases=(",", "、", "：", ":", "；", ";")),
            Mark("PERIOD", "。", True, aliases=(".",)),
            Mark("QUESTION", "？", True, aliases=("?",)),
            Mark("EXCLAMATION", "！", True, aliases=("!",)),
        ),
        word_unit="char",
    ),
    "ja": Inventory(
        language="ja",
        post_marks=(
            Mark("COMMA", "、", aliases=("，", ",")),
            Mark("PERIOD", "。", True, aliases=(".", "．")),
            Mark("QUESTION", "？", True, aliases=("?",)),
            Mark("EXCLAMATION", "！", True, aliases=("!",)),
        ),
        word_unit="char",
    ),
    "ar": Inventory(
        language="ar",
        post_marks=(
            Mark("COMMA", "،", aliases=(",",)),
            Mark("PERIOD", ".", True, aliases=("؛",)),
            Mark("QUESTION", "؟", True, aliases=("?",)),
            Mark("EXCLAMATION", "!", True),
        ),
    ),
}


def get_inventory(language: str | Inventory = "en") -> Inventory:
    """Return the inventory for a language code (or pass an Inventory through)."""
    if isinstance(language, Inventory):
        return language
    if language not in INVENTORIES:
        raise ValueError(f"unknown language {language!r}; known: {sorted(INVENTORIES)}")
    return INVENTORIES[language]


@dataclass(frozen=True)
class Edges:
    """What is written around a word besides its marks: quotes, brackets and wordless tokens.

    Attributes:
        before: written before the word and its pre-mark: '("', or "( " for a token of its
            own ("( laughs )").
        after: written after the word: '")', or " :)" for a token of its own after it.
        mark_at: where in `after` the word's post-mark is written: after the quotes and
            brackets attached to the word unless the text wrote it inside them ('way,"').
        mark, mark_of: the post-mark as the text wrote it where that is not the label's own
            text (";" or "..." for PERIOD, "—" for COMMA, "?!"), and that label: `render`
            writes `mark` while the word's label is still `mark_of` (`--keep-existing`).
        lead: marks written before a text's first word, which no word before it can take
            ("... " in "... and then", "--" in "--and", "!" in '!" and'): written at
            `lead_at` in `before` (after the quotes, brackets or tags written before them:
            "(! wow") as long as the written marks are kept (`--keep-existing`), dropped
            with them otherwise.
        outer, outer_at: a second mark the text wrote after the quotes or brackets that
            close the word's own ("," of '"why?", and', "." of '"stop!".'), written at
            `outer_at` in `after` while the word's label is still `mark_of` (set with it,
            `mark` or not) and dropped with the written marks.
    """

    before: str = ""
    after: str = ""
    mark_at: int = 0
    mark: str = ""
    mark_of: str = NULL
    lead: str = ""
    lead_at: int = 0
    outer: str = ""
    outer_at: int = 0

    def opening(self) -> str:
        """What is written before the word: `before` with the lead in it."""
        return self.before[:self.lead_at] + self.lead + self.before[self.lead_at:] \
            if self.lead else self.before

    def written_mark(self, post: str) -> str:
        """The mark as written for label `post` ("" where the label's own text applies)."""
        return self.mark if self.mark and self.mark_of == post else ""

    def written_outer(self, post: str) -> str:
        """The second mark as written for label `post` ("" where there is none or the label
        changed)."""
        return self.outer if self.outer and self.mark_of == post else ""

    def written_after(self, post: str) -> str:
        """`after` with the second mark written for label `post` in it ('",' of '"why?",')."""
        outer = self.written_outer(post)
        at = max(self.outer_at, self.mark_at)
        return self.after[:at] + outer + self.after[at:] if outer else self.after

    def keeps_marks(self) -> bool:
        """Whether these edges hold marks as the text wrote them (`mark`, `lead`, `outer`),
        which `without_mark` drops."""
        return bool(self.mark or self.lead or self.outer)

    def without_mark(self) -> Edges | None:
        """These edges without the written mark and lead (None when nothing else is left)."""
        edges = self.without_lead()
        if not (edges.before or edges.after):
            return None
        return replace(edges, mark="", mark_of=NULL, outer="", outer_at=0)

    def without_lead(self) -> Edges:
        """These edges without the lead, and without the second of the spaces that stood
        around it ("<unk> . then": "<unk> Then", not "<unk>  Then")."""
        before, at = self.before, self.lead_at
        if self.lead and before[at - 1:at + 1] == "  ":
            before = before[:at] + before[at + 1:]
        return replace(self, before=before, lead="", lead_at=0)


@dataclass(frozen=True)
class Labelled:
    """Words with their labels, one entry per word in every field.

    Attributes:
        words: normalised (lowercased, mark-free) words.
        post: post-mark label per word.
        case: case label per word.
        pre: pre-mark label per word.
        forms: the exact cased form of MIX words (None for other words).
        abbreviated: whether the word is written with an abbreviation period (U.S., Dr.);
            the period is not part of `words` and not a mark.
        edges: quotes, brackets and wordless tokens written around the word (None: none).
    """

    words: tuple[str, ...]
    post: tuple[str, ...]
    case: tuple[str, ...]
    pre: tuple[str, ...] = ()
    forms: tuple[str | None, ...] = ()
    abbreviated: tuple[bool, ...] = ()
    edges: tuple[Edges | None, ...] = ()

    def __post_init__(self) -> None:
        n = len(self.words)
        if not self.pre:
            object.__setattr__(self, "pre", (NULL,) * n)
        if not self.forms:
            object.__setattr__(self, "forms", (None,) * n)
        if not self.abbreviated:
            object.__setattr__(self, "abbreviated", (False,) * n)
        if not self.edges:
            object.__setattr__(self, "edges", (None,) * n)
        lengths = {len(self.post), len(self.case), len(self.pre), len(self.forms),
                   len(self.abbreviated), len(self.edges)}
        if lengths != {n}:
            raise ValueError(f"label fields must all have {n} entries, got lengths {lengths}")

    def __len__(self) -> int:
        return len(self.words)

    def slice(self, start: int, stop: int | None = None) -> Labelled:
        """Words start..stop with their labels (Python slice semantics)."""
        return Labelled(*(getattr(self, f)[start:stop] for f in LABELLED_FIELDS))

    def without_written_marks(self) -> Labelled:
        """These labels with every mark written as its label's own text (`Edges.mark`
        dropped: ";" written "." for PERIOD), as a model's own marks are."""
        if not any(e and e.keeps_marks() for e in self.edges):
            return self
        return replace(self, edges=tuple(e.without_mark() if e and e.keeps_marks() else e
                                         for e in self.edges))

    @staticmethod
    def concat(parts: Iterable[Labelled]) -> Labelled:
        """One Labelled of consecutive parts' words, in order."""
        parts = list(parts)
        return Labelled(*(tuple(v for p in parts for v in getattr(p, f))
                          for f in LABELLED_FIELDS))


LABELLED_FIELDS = ("words", "post", "case", "pre", "forms", "abbreviated", "edges")


# ----------------------------------------------------------------------------- characters

def lower_char(char: str) -> str:
    """Lowercase one character, keeping it when lowercasing is not a 1:1 round trip."""
    low = char.lower()
    return low if len(low) == 1 and _upper_only(low) == char else char


def _upper_only(char: str) -> str:
    up = char.upper()
    return up if len(up) == 1 else char


def upper_char(char: str) -> str:
    """Uppercase one character, keeping it when uppercasing is not a 1:1 round trip (the
    Greek final sigma ς, whose capital Σ lowercases to σ, is written Σ)."""
    up = char.upper()
    return up if len(up) == 1 and (up.lower() == char or char == "ς") else char


def lower_word(word: str) -> str:
    """Lowercase a word character by character (length and letters are preserved)."""
    if word == word.lower():  # nothing to lowercase (ASR output): no character changes
        return word
    low = "".join(lower_char(c) for c in word)
    if low.endswith("σ") and word.endswith("Σ") and len(word) > 1 and word[-2].isalpha():
        low = low[:-1] + "ς"  # a word-final capital sigma is the final form ς (ΟΔΟΣ -> οδος)
    return low


def _is_upper(char: str) -> bool:
    return lower_char(char) != char


def _is_lower(char: str) -> bool:
    return upper_char(char) != char


def case_of(word: str) -> str:
    """The case class of a written word: LOWER, CAP, UPPER or MIX.

    A word without cased letters (digits, CJK) is LOWER; a single capital letter is CAP.
    """
    if word == word.lower():  # no character has a lowercase form other than itself
        return LOWER
    cased = [c for c in word if _has_case(c)]
    if not any(_is_upper(c) for c in cased):
        return LOWER
    if _is_upper(cased[0]) and not any(_is_upper(c) for c in cased[1:]):
        return CAP
    round_trip = [c for c in cased if _is_upper(c) or _is_lower(c)]  # not ß, ﬁ, İ
    if len(round_trip) > 1 and all(_is_upper(c) for c in round_trip):
        return UPPER
    return MIX


def _has_case(char: str) -> bool:
    """A letter with another case, even one that is not a 1:1 round trip (ß, ﬁ, İ)."""
    return char.upper() != char or char.lower() != char


def apply_case(word: str, case: str, form: str | None = None) -> str:
    """Write a normalised word in a case class.

    Args:
        word: the normalised (lowercase) word.
        case: LOWER, CAP, UPPER or MIX.
        form: the cased form for MIX; ignored unless it lowercases to `word`. Without a
            usable form, MIX falls back to CAP.
    """
    if case == LOWER:
        return word
    if case == MIX and form is not None and lower_word(form) == word:
        return form
    if "&" in word and ";" in word:  # "&eacute;cole" -> "&Eacute;cole", "&amp;" stays
        written = apply_case_decoded(word, lambda decoded: _cased(decoded, case))
        if lower_word(written) == word:
            return written
        if case == CAP and opens_with_reference(word):  # ("&#201;cole" is another word)
            return word
        return apply_outside(word, lambda masked: _cased(masked, case))  # "CAF&#233;"
    return _cased(word, case)


def _cased(word: str, case: str) -> str:
    """`apply_case` of a word without a known form."""
    if case == MIX and (guessed := _mixed_form(word)) is not None:
        return guessed
    if case == UPPER:
        written = "".join(upper_char(c) for c in word)
    else:
        written = word
        for i, char in enumerate(word):
            if _has_case(char):  # the first letter with case (as case_of reads CAP)
                written = word[:i] + upper_char(char) + word[i + 1:]  # kept if not 1:1 (ß)
                break
    if ("σ" in word or "ς" in word) and lower_word(written) != word:
        # Σ reads back as σ or ς by its place: where it would read back as the other, the
        # sigma stays as it is and the other letters take the case
        kept = "".join(c if c in "σς" or w in "σς" else w for c, w in zip(word, written))
        return kept if lower_word(kept) == word else word
    return written


# Mixed case a word without a known form is written in: McDonald, O'Neil, U.S.-based (not
# o'er, o'ercome, mcqs, mcat: three letters or more, none an "er" after "o'")
_MC_NAME = re.compile(r"(mc|o['’](?!er))([a-z]{3,})(['’]s)?")


def _mixed_form(word: str) -> str | None:
    """A mixed-case form guessed from the word's shape: "Mc" and "O'" names (mcdonald ->
    McDonald, o'neil -> O'Neil), and a hyphenated word whose first part is a dotted
    initialism (u.s.-based -> U.S.-based); None for others (written Capitalised)."""
    name = _MC_NAME.fullmatch(word)
    if name and word not in ("o'clock", "o’clock"):
        return name.group(1).capitalize() + name.group(2).capitalize() + (name.group(3) or "")
    head, dash, rest = word.partition("-")
    if dash and rest and is_initialism(head):
        return head.upper() + dash + rest
    return None


# ----------------------------------------------------------------------------- parsing

def _is_cjk(char: str) -> bool:
    code = ord(char)
    return (0x4E00 <= code <= 0x9FFF or 0x3400 <= code <= 0x4DBF or 0x3040 <= code <= 0x30FF
            or 0xF900 <= code <= 0xFAFF or 0x20000 <= code <= 0x2FFFF or code == 0x3005)


def holds_word(token: str, language: str | Inventory = "en") -> bool:
    """Whether a whitespace-free token holds a word, not marks, quotes or brackets alone
    (a token that `parse` reads as no words: "-", "...", "(")."""
    lookup = get_inventory(language)._lookup
    return bool(lookup["word_char"].search(token)) and not _symbol_token(token, lookup)


def marks_after_word(marks: str, language: str | Inventory = "en") -> Labelled | None:
    """Marks written after a word on their own (". ", "<unk> ?"; a stream's next feed) read
    as that word's: a Labelled of the word ("x") and one after it ("y"), or None when they
    give it no mark."""
    given = parse(f"x {marks} y", language)
    return given if len(given) == 2 and given.post[0] != NULL else None


def is_symbol(token: str, language: str | Inventory = "en") -> bool:
    """Whether a whitespace-free token is an emoticon or a recogniser's tag (":)", "<unk>",
    "[noise]"), maybe with marks after it ("<unk>.")."""
    return _symbol_token(token, get_inventory(language)._lookup)


def _symbol_token(token: str, lookup: dict) -> bool:
    """Whether a token is an emoticon or a tag (`_emoticon_token`), maybe after marks,
    quotes or brackets (',"<unk>', ")8-)": `_symbol_after_marks`), as `parse` reads it."""
    return _emoticon_token(token, lookup["word_char"]) or (
        token[:1] in lookup["strip"] and _symbol_after_marks(token, lookup) > 0)


def whitespace_tokens(text: str) -> list[str]:
    """The whitespace-free tokens of a text, as `parse` splits it: on whitespace and on
    control characters (which are never part of a word)."""
    if not text.isprintable():
        text = "".join(" " if unicodedata.category(c) == "Cc" else c for c in text)
    return text.split()


def _split_cjk(token: str) -> list[str]:
    """Cut a token into single CJK characters and the non-CJK runs between them."""
    pieces, run = [], []
    for char in token:
        if _is_cjk(char):
            if run:
                pieces.append("".join(run))
                run = []
            pieces.append(char)
        else:
            run.append(char)
    if run:
        pieces.append("".join(run))
    return pieces


def _core_bounds(token: str, lookup: dict) -> tuple[int, int]:
    """Index range [start, end) of the token's word core (its edges stripped of marks)."""
    strip = lookup["strip"]
    start, end = 0, len(token)
    while start < end and token[start] in strip:
        start += 1
    while end > start and token[end - 1] in strip:
        end -= 1
    return start, end


def _extend_core(token: str, start: int, end: int, inv: Inventory,
                 single_open: bool = False) -> tuple[int, int]:
    """Take back edge characters that belong to the word: 'em, -5, students' (not where a
    single quote is open: 'bus', 'the Beatles')."""
    core = token[start:end]
    lead = token[start - 1] if start > 0 else "\0"
    elided = (lead in _APOSTROPHES and core[:1].isdigit()) or (
        lead in _LEAD_APOSTROPHES and (lower_word(core) in inv.elisions or _is_decade(core)))
    if elided:
        start -= 1
    elif lead in _DIGIT_SIGNS and _starts_number(core):
        start -= 1
    elif lead == "." and core[:1].isdigit() and _opens_number(token[:start - 1]):
        start -= 2 if token[:start - 1].endswith(tuple(_DIGIT_SIGNS)) else 1  # .5, -.5, (.5)
    elif lead == "-" and not any(c.isalpha() for c in core):  # "->", "-_-", "<--": glued to
        start = _hyphens_taken(token, start, core, -1)  # symbols, hyphens are theirs ("-Hi":
        # a dialogue dash, a mark)
    trail = token[end] if end < len(token) else "\0"
    quoted = single_open or (not elided and lead in _LEAD_APOSTROPHES)  # 'bus', not bus'
    if trail in _APOSTROPHES and (
            (core[-1:] in ("s", "S") and len(core) > 1 and not quoted)  # students'
            or (elided and lower_word(core) == "n")):  # rock 'n' roll
        end += 1
    elif trail == "-":  # "i-", "th-": a word cut off (as transcripts write it); "<-"
        end = _hyphens_taken(token, end, core, 1)
    elif trail == ";" and "&" in core and closes_reference(core):  # "AT&amp;", "&#39;"
        end += 1
    return start, end


def _hyphens_taken(token: str, at: int, core: str, step: int) -> int:
    """The core's edge at `at` moved over the ASCII hyphens next to it (`step` -1: before
    it, 1: after it) when they belong to the word: one alone at the token's edge (after a
    word cut off: "i-", "we-." with a mark after it), or any run of them beside a core of
    symbols ("-->", "<--", "-_-"; after quotes or brackets: '"->"'); a dash after a word
    ("so--", "so-—") or with a mark between ("well,-") is a mark, as is one before letters
    (`_extend_core`: "-Hello", a dialogue dash)."""
    edge = at
    while 0 < edge if step < 0 else edge < len(token):
        if token[edge - 1 if step < 0 else edge] != "-":
            break
        edge += step
    beyond = token[:edge] if step < 0 else token[edge:]  # (quotes and brackets: '"-i"')
    run = abs(edge - at)
    if (any(c not in _WRAPPING for c in beyond) if step < 0 else
            beyond[:1] in tuple(_DASHES)) or not (
            run == 1 or not any(c.isalnum() for c in core)):
        return at
    return edge


def _is_decade(core: str) -> bool:
    """90s, 70s: what a left quote before it elides (‘90s), unlike a quoted number (‘50)."""
    return len(core) == 3 and core[:2].isdigit() and core[2] in "sS"


def _starts_number(core: str) -> bool:
    """Whether a word core is a number a sign can stand before: 5, 3.5%, $5, €2."""
    return core[:1].isdigit() or (len(core) > 1 and unicodedata.category(core[0]) == "Sc"
                                  and core[1].isdigit())


def _opens_number(before: str) -> bool:
    """Whether what precedes a "." before digits leaves it a decimal point (".5", "-.5",
    "(.5"): nothing but brackets, quotes or a sign, and no other period (not after a word,
    where it is a mark: "end.5")."""
    return not any(c.isalnum() or c == "." for c in before)


def is_abbreviation(word: str, abbreviations: Collection[str]) -> bool:
    """U.S, e.g, a.m, Ph.D, B.Sc (runs of one or two letters separated by periods) or a
    listed abbreviation (`Inventory.abbreviations`: mr, dr)."""
    if lower_word(word) in abbreviations:
        return True
    parts = word.split(".")
    return len(parts) > 1 and all(len(p) <= 2 and p.isalpha() for p in parts)


def _edge_marks(chars: str, lookup: dict, table: str) -> str:
    """The mark a run of edge characters stands for: after a word, the first sentence-final
    one, else the first mark; before a word, the one nearest the word ("¡¿Qué?!" opens a
    question, as its first closing mark says); else NULL."""
    names = [lookup[table][c] for c in chars if c in lookup[table]]
    if table == "pre":
        return names[-1] if names else NULL
    final = [n for n in names if n in lookup["final"]]
    return (final or names or [NULL])[0]


@dataclass
class _Builder:
    """Accumulates words and labels while a text is parsed."""

    inv: Inventory
    words: list = field(default_factory=list)
    post: list = field(default_factory=list)
    case: list = field(default_factory=list)
    pre: list = field(default_factory=list)
    forms: list = field(default_factory=list)
    abbreviated: list = field(default_factory=list)
    edges: list = field(default_factory=list)
    pending_pre: str = NULL
    pending_before: list = field(default_factory=list)  # tokens opening the next word
    pending_space: bool = True  # whether whitespace stood before the first of them
    pending_lead: str = ""  # marks before the text's first word ("... " in "... and")
    pending_lead_at: int = 0  # where in the pending tokens they stand ('"' in '"... and')
    tail: list = field(default_factory=list)  # (token, closes) after the last word
    straight_quotes: int = 0  # '"' seen so far: a lone one opens when the count is even
    single_open: int = 0  # words left in a single quote a word opened ('the), not closed
    brackets: int = 0  # brackets open so far (`count_open_brackets`)

    def add_word(self, written: str, pre: str, post: str, abbreviated: bool = False,
                 before: str = "", after: str = "", mark_at: int = 0, mark: str = "",
                 outer: tuple[str, int] = ("", 0)) -> None:
        self._fold_tail()
        if abbreviated and mark_at == 0 and mark == ".":
            post = NULL  # "U.S.." is written "U.S.": its period cannot show a full stop
            mark_at = len(after)  # and a full stop after it goes after its quotes
        if post == NULL:
            outer = ("", 0)
        if post == NULL or mark == self.inv.mark_text(post):
            mark = ""
        self.straight_quotes += count_straight_quotes(before + after)
        self.single_open = max(self.single_open - 1, 0)
        if any(c in "'‘" for c in before):
            self.single_open = _SINGLE_QUOTE_WORDS
        if any(c in "'’" for c in after):  # (not at a full stop: restoring may add one)
            self.single_open = 0
        case = case_of(written)
        self.words.append(lower_word(written))
        self.case.append(case)
        self.forms.append(written if case == MIX else None)
        self.pre.append(pre if pre != NULL else self.pending_pre)
        self.post.append(post)
        self.abbreviated.append(abbreviated)
        spaced = self.pending_before and self.pending_space and len(self.words) > 1 \
            and self.inv.word_unit == "char"  # "好的 ） 「 吗": the space before 「 stays
        before = " " * bool(spaced) + "".join(self.pending_before) + before
        lead, self.pending_lead = self.pending_lead, ""
        self.edges.append(Edges(before, after, mark_at, mark, post if mark or outer[0] else NULL,
                                lead, self.pending_lead_at if lead else 0, *outer)
                          if before or after or mark or lead else None)
        self.pending_pre, self.pending_before, self.pending_space = NULL, [], True

    def add_bare(self, written: str) -> None:
        """A word with nothing at its edges (most ASR output): `add_word`, shortened."""
        if self.tail or self.pending_before or self.pending_pre != NULL or self.single_open \
                or self.pending_lead:
            self.add_word(written, NULL, NULL)
            return
        case = case_of(written)
        self.words.append(lower_word(written))
        self.case.append(case)
        self.forms.append(written if case == MIX else None)
        self.pre.append(NULL)
        self.post.append(NULL)
        self.abbreviated.append(False)
        self.edges.append(None)

    def _fold_tail(self) -> None:
        """Write the tokens kept after the last word into its edges: a new mark goes after a
        token that only closes ("( laughs )." ) unless the word has one, before others
        ("great. :)")."""
        if not self.tail:
            return
        edges = self.edges[-1] or Edges()
        after, mark_at = edges.after, edges.mark_at
        for token, closes in self.tail:
            moves = closes and self.post[-1] == NULL and mark_at == len(after)
            after += token
            mark_at = len(after) if moves else mark_at
        self.edges[-1] = replace(edges, after=after, mark_at=mark_at)
        self.tail = []

    def add_orphan_marks(self, pre: str, post: str, written: str = "",
                         joined: bool = False, at: int | None = None) -> None:
        """Marks standing alone ("word ?", "¿ word") or ending a token without a word
        ("( laughs )."): the post-mark is the word before's, written after all that follows
        it so far (`at`: at that index of `Edges.after`); a `written` mark that is not the
        label's own text ("word —") is recorded as written (`joined`: no space before it)."""
        if pre != NULL:
            self.pending_pre = pre
        if post == NULL or not self.post:
            return
        current = self.post[-1]
        if current != NULL and self._outer_orphan(current, post, written):
            return
        if current != NULL and (post not in self.inv.sentence_final
                                or current in self.inv.sentence_final):
            self._more_marks(current, written, joined)
            return
        if current != NULL and self._more_marks(post, written, joined, current):
            self.post[-1] = post  # "wait - !": the sentence's end, written after the dash
            return
        self._fold_tail()
        edges = self.edges[-1]
        if edges and edges.after:  # "( laughs ) ." is written "( laughs )."
            at = len(edges.after) if at is None else at
            self.edges[-1] = edges = replace(edges, mark_at=at)
        elif written == "." and (self.abbreviated[-1]
                                 or is_abbreviation(self.words[-1], self.inv.abbreviations)):
            self.abbreviated[-1] = True  # "U.S. ." is written "U.S.", as "a.a ." is "a.a."
            return
        self.post[-1] = post
        self._written_mark(post, written if joined or not written else f" {written}")

    def _outer_orphan(self, current: str, post: str, written: str) -> bool:
        """A mark standing alone after the quotes or brackets that close a word's own mark
        ('"why?" ,'): the word's second mark (`Edges.outer`), as '"why?",' writes it.
        Whether it was taken so."""
        edges = self.edges[-1]
        if self.tail or not edges or edges.outer or edges.mark_at >= len(edges.after) \
                or edges.mark_of not in (NULL, current):
            return False
        if not all(c in self.inv._lookup["kept"] for c in edges.after[edges.mark_at:]):
            return False  # (a wordless token after the quotes: "why?" :) ,)
        outer = written or self.inv.mark_text(post)
        self.edges[-1] = replace(edges, outer=outer, outer_at=len(edges.after), mark_of=current)
        return True

    def _more_marks(self, current: str, written: str, joined: bool,
                    was: str | None = None) -> bool:
        """Marks after the word's own ("end. . . ." or "end ?!") are written after it as they
        were, where nothing stands between (`Edges.after` ends at the mark); `was`: the
        word's label before, when the new marks change it to `current` ("wait - !").
        Whether they were written."""
        was = current if was is None else was
        edges = self.edges[-1]
        if self.tail or not written or (edges and edges.mark_at != len(edges.after)):
            return False
        if edges and edges.mark and edges.mark_of != was:
            return False
        mark = (edges.mark if edges and edges.mark else self.inv.mark_text(was))
        self._written_mark(current, mark + ("" if joined else " ") + written)
        return True

    def _written_mark(self, post: str, written: str) -> None:
        """Record (or forget) the last word's mark as written, for label `post`."""
        edges = self.edges[-1]
        if written and written.strip() != self.inv.mark_text(post):
            self.edges[-1] = replace(edges or Edges(), mark=written, mark_of=post)
        elif edges and edges.mark:
            self.edges[-1] = edges.without_mark()

    def add_orphan_token(self, token: str, space_before: bool = True,
                         space_after: bool = True) -> None:
        """A token without a word that holds a quote or bracket (":)", "(") is written as it
        is: after the word before it, unless it only opens ("(", "“") or starts the text, then
        before the next word. `space_before` / `space_after`: whether whitespace stood there
        (not between the characters of a token that a char-unit language cuts up)."""
        kinds = {_QUOTE_KIND.get(c) or unicodedata.category(c) for c in token}
        if kinds == {'"'}:  # a lone straight quote: opening or closing, as they alternate
            kinds = {"Pi" if self.straight_quotes % 2 == 0 else "Pf"}
            self.straight_quotes += count_straight_quotes(token)
        if any(c in "'’" for c in token):
            self.single_open = 0
        if self.words and not self.pending_before and not kinds <= {"Ps", "Pi"}:
            self.tail.append((" " * space_before + token, kinds <= {"Pe", "Pf", "'"}))
        else:  # before the next word, after what already waits for it ("[ ]")
            self._pend(token + " " * space_after, space_before)

    def add_lead(self, marks: str, offset: int = 0, glued: bool = False) -> None:
        """Marks before the text's first word ("...", "--", "(!"): kept for it as written
        (`Edges.lead`, where they stand among the quotes, brackets and tags before it); a
        text without words drops them, as other wordless marks. Marks on both sides of such
        a token ('! " ?') keep the first ones. `offset`: characters of the word's own
        `before` ahead of them ('"' of '"...and'); `glued`: written before the space after
        the last token waiting for the word ("<unk>? so")."""
        if self.words or not marks.strip():
            return
        waiting = sum(map(len, self.pending_before))
        at = waiting + offset
        if glued and self.pending_before and self.pending_before[-1].endswith(" "):
            at -= 1
        if self.pending_lead and at != self.pending_lead_at:
            return
        if self.pending_before and at == waiting and marks[-1:].isspace():  # '"-"- a': the space is
            marks = marks.rstrip()  # kept when the marks are not, so that what waits for
            self._pend(" ", False)  # the word ('"-"') is not glued to it
        self.pending_lead, self.pending_lead_at = self.pending_lead + marks, at

    def add_joined(self, emoticon: str) -> None:
        """An emoticon joined to the last word ("tomorrow:)"): a new mark goes after it."""
        self.tail.append((emoticon, True))

    def _pend(self, text: str, space_before: bool) -> None:
        if not self.pending_before:
            self.pending_space = space_before
        self.pending_before.append(text)

    def opens(self, chars: str) -> bool:
        """Whether quotes and brackets open something here: "(", "“", or a straight quote
        when an even number came before."""
        return any(unicodedata.category(c) in ("Ps", "Pi") for c in chars) or (
            count_straight_quotes(chars) > 0 and self.straight_quotes % 2 == 0)

    def add_closing(self, chars: str, space_before: bool) -> None:
        """Closing quotes or brackets among marks, with no word ('”。」', ').', '"?'): written
        after the word before, its mark where it stands among them, as in a word's trail."""
        lookup = self.inv._lookup
        post, mark, closing, mark_at = _trail(chars, lookup)
        self.straight_quotes += count_straight_quotes(closing)
        if any(c in "'’" for c in closing):
            self.single_open = 0
        if not self.words or self.pending_before:  # "home ( )." -> "home. ( )"
            if not self.words and post != NULL:  # "'... and", "'...' and": the text's lead,
                self.add_lead(mark, offset=mark_at)  # where it stands among the quotes
            self._pend(closing + " ", space_before)
            if self.words and post != NULL:  # (spaced: "so ( }-" is not "so-")
                self.add_orphan_marks(NULL, post, mark, False)
            return
        self._fold_tail()
        start = len(self.edges[-1].after) if self.edges[-1] else 0
        self.tail.append((" " * space_before + closing, True))
        if post != NULL:
            self.add_orphan_marks(NULL, post, mark, True, at=start + space_before + mark_at)

    def result(self) -> Labelled:
        if self.pending_before and self.words:  # "word (": kept after the last word
            self.tail.append((" " * self.pending_space + "".join(self.pending_before).rstrip(),
                              False))
        self._fold_tail()
        return Labelled(tuple(self.words), tuple(self.post), tuple(self.case),
                        tuple(self.pre), tuple(self.forms), tuple(self.abbreviated),
                        tuple(self.edges))


# how many words a single quote opened before a word ('the) stays open for `_extend_core`:
# "the Beatles'" closes it, while a lone elision ('da, 'stans) must not turn a later
# possessive ("the donors' walls") into a quote (a count of words, which restoring never
# changes, unlike the marks that end sentences)
_SINGLE_QUOTE_WORDS = 12

# quotes that can open or close alike ('"' alternates; "'" closes unless it stands first)
_QUOTE_KIND = {'"': '"', "＂": '"', "'": "'"}


def count_straight_quotes(text: str) -> int:
    """How many quotes that open and close alike (", ＂) a text holds."""
    return text.count('"') + text.count("＂")


def _trail(chars: str, lookup: dict) -> tuple[str, str, str, int]:
    """What a run of characters after a word (or a closing piece without one) writes: its
    post-mark label (`_edge_marks`), that mark as written (the run of marks holding it),
    its quotes and brackets, and how many of them stand before the mark (all of them when
    there is none): '),' -> COMMA, ",", ")", 1; ',"' -> COMMA, ",", '"', 0."""
    post = _edge_marks(chars, lookup, "post")
    closing = "".join(c for c in chars if c in lookup["kept"])
    if post == NULL:
        return post, "", closing, len(closing)
    table = lookup["post"]
    at = next(i for i, c in enumerate(chars) if table.get(c) == post)
    start, end = at, at + 1
    while start and chars[start - 1] in table:
        start -= 1
    while end < len(chars) and chars[end] in table:
        end += 1
    kept_before = sum(c in lookup["kept"] for c in chars[:start])
    return post, chars[start:end], closing, kept_before


def _outer_marks(chars: str, lookup: dict, mark: str, kept_before: int) -> tuple[str, int]:
    """The marks after the closing quotes or brackets that follow a word's own mark (`mark`
    and `kept_before` as `_trail` found them in `chars`), and how many quotes and brackets
    stand before them ('?",' -> ",", 1; '!").' -> ".", 2); ("", 0) where there are none
    ('?"', '",', '.")')."""
    end = chars.find(mark) + len(mark)  # (the run `_trail` chose: its first occurrence)
    rest = chars[end:]
    start = next((i for i, c in enumerate(rest) if c in lookup["post"]), None)
    if start is None or not any(c in lookup["kept"] for c in rest[:start]):
        return "", 0
    stop = start
    while stop < len(rest) and rest[stop] in lookup["post"]:
        stop += 1
    return rest[start:stop], kept_before + sum(c in lookup["kept"] for c in rest[:start])


# ASCII emoticons, kept whole: :) ;-( =] :-(( and, where no word character follows, :D :-P
# :/ :O ;* (a token that starts with one; marks after it are labels: ":D!")
_EMOTICON = re.compile(r"[:;=][-'^]?(?:[()\[\]{}]+|[DPpOo3Xx/\\|*](?![\w/\\]))")
# a bracket emoticon joined to the end of a word ("tomorrow:)", "it!;-("), its brackets
# facing one way (not "x={}")
# emoji joined to the end of a word ("thanks👍", "nasa😀!"): skin tones, variation
# selectors and zero-width joiners inside the run; written after the word, as ":)" is
_EMOJI = "\U0001F000-\U0001FAFF\u2600-\u27BF\u2B50\u2B55\u2B1B\u2B1C"
_JOINED_EMOTICON = re.compile(  # (or ":D", ":-P", ":p" closing a word: "tomorrow:D"; or
    # after emoji joined to one: "thanks👍:)", an invisible character, "%", a closing bracket
    # or quote: "(see you):)"; with brows: "mad>:("; turned round: "great(:"; before marks
    # and closing quotes: "great:)!\"")
    rf"(?<=[^\W_]|[.!?,%)\]}}\"'”’»{_EMOJI}\uFE0F{_INVISIBLE}])"
    r"(?:>?[:;=][-'^]?(?:[)\]}]+|[(\[{]+|[DPp])|\([-'^]?[:;=])"
    r"(?=[.,!?;:…—–-]*[\"'”’»]*[.,!?;:…—–-]*$)")
_JOINED_EMOJI = re.compile(  # (after a letter or digit: `_joined_emoji`)
    rf"[{_EMOJI}][{_EMOJI}\uFE0F\u200D]*(?=[.,!?;:…—–-]*[\"'”’»)\]}}]*[.,!?;:…—–-]*$)")
_OPENING, _CLOSING = "([{", ")]}"
_MARKS_BEFORE_EMOTICON = ".,!?…" + _DASHES  # "great ?:)", ".[noise]": the word before's
_ANY_BRACKET = re.compile(r"[()\[\]{}]")


def _bracket_delta(text: str) -> int:
    """Brackets a text opens less those it closes."""
    return sum(text.count(c) for c in _OPENING) - sum(text.count(c) for c in _CLOSING)


def count_open_brackets(text: str, depth: int = 0, language: str | Inventory = "en") -> int:
    """The brackets open after `text` when `depth` were open before it, as `parse` counts
    them (emoticons aside): what a stream passes to the next feed's `parse`."""
    if not _ANY_BRACKET.search(text):
        return depth
    lookup = get_inventory(language)._lookup
    word_char, strip = lookup["word_char"], lookup["strip"]
    for token in whitespace_tokens(text):
        if not _ANY_BRACKET.search(token) or _emoticon_token(token, word_char) or (
                token[0] not in strip and token[-1] not in strip):  # "f(x": a bare word
            continue
        token = token[_leading_emoticon_end(token):]  # ":)thanks": the emoticon closes none
        joined = _joined_match(token, depth, word_char)
        depth = max(depth + _bracket_delta(token[:joined.start()] if joined else token), 0)
    return depth


# a recogniser's tag for what is no word, a token of its own: "<unk>", "<NOISE>",
# "<spoken_noise>", "</s>", Kaldi's and Switchboard's "[noise]", "[laughter]",
# "[vocalized-noise]" (marks after it are the word before's: "<unk>.", "[noise].")
_TAG = re.compile(r"</?[A-Za-z][\w-]{0,31}>|\[[A-Za-z][\w-]{0,31}\]")


def _emoticon_token(token: str, word_char: re.Pattern) -> bool:
    """Whether a token is an emoticon or a tag, maybe with marks after it (":)", ":D!",
    ":-P", "<unk>."), or one in quotes or brackets ('"<unk>"', "(:D)")."""
    wrapped = len(token) - len(token.lstrip(_WRAPPING)) if token[:1] in _WRAPPING else 0
    for start in range(min(wrapped, 3) + 1):  # "[noise]" opens with a bracket of its own
        symbol = _symbol_match(token[start:])
        if symbol is not None:
            return not word_char.search(token, start + symbol.end())
    return False


_WRAPPING = _QUOTES + _BRACKETS  # what an emoticon or a tag may stand inside


def _symbol_match(token: str) -> re.Match | None:
    """An emoticon or a recogniser's tag at the start of a token (most tokens start with
    neither: one character looked at)."""
    first = token[:1]
    if first in ("<", "["):
        return _TAG.match(token) or (_OTHER_EMOTICON.match(token) if first == "[" else None)
    if first in _OTHER_EMOTICON_FIRST:
        return _OTHER_EMOTICON.match(token)
    return _EMOTICON.match(token) if first in (":", ";", "=") else None


# emoticons of other shapes, as whole tokens: a nose between ("8-)", "B-)"), brows before
# (">:(", ">;-)") or turned round ("(:", "(-:"; not "):", which closes a bracket in text)
_OTHER_EMOTICON = re.compile(
    r"(?:8[-^][()DPp|]|B[-^][()|]|>[:;=][-'^]?[()\[\]DPp|/\\]|\([-'^]?[:;=])"
    r"(?![\w(:;=])")  # (not "B-P", "b-p" capitalised)
_OTHER_EMOTICON_FIRST = "8B>("
_NOSE_OR_EYES = ("-", "^", ":", ";", "=")  # (after the first character, or none)


def _joined_match(piece: str, depth: int, word_char: re.Pattern) -> re.Match | None:
    """An emoticon joined to the end of a word, maybe before marks ("tomorrow:)",
    "tomorrow:)."), or None; one that closes a bracket is that bracket's ("(see below:)")
    while one is open (`depth`: brackets open before the piece)."""
    joined = _JOINED_EMOTICON.search(piece)
    if joined is None or not word_char.search(piece, 0, joined.start()):
        return None
    if joined.group()[-1] in _CLOSING and depth + _bracket_delta(piece[:joined.start()]) > 0:
        return None
    return joined


def _joined_emoji(piece: str) -> re.Match | None:
    """Emoji joined to the end of a word, maybe before marks ("thanks👍", "nasa😀!"), or
    None."""
    joined = _JOINED_EMOJI.search(piece)  # (after a letter or digit: "😀😀" stays whole)
    return joined if joined and any(c.isalnum() for c in piece[:joined.start()]) else None


def _parse_wordless(piece: str, builder: _Builder, space_before: bool,
                    space_after: bool) -> None:
    """A piece without a word that holds a quote or bracket. Marks before its first quote or
    bracket are the previous word's ("：“" in Chinese), and so are marks among closing ones
    (").", '”。」'); a piece that opens something ("(", "(-)") is kept as written up to its
    last quote or bracket, as is an emoticon (":)", then its marks: ":)!")."""
    lookup = builder.inv._lookup
    wrapped = len(piece) - len(piece.lstrip(_WRAPPING))  # ('"[noise]': the tag's own "[")
    start = next((k for k in range(1, min(wrapped, 3) + 1) if _symbol_match(piece[k:])), 0)
    if start and _quoted_symbol(piece, start):  # "'[noise]'": one token, as "[noise]" is
        builder.add_orphan_token(piece, space_before, space_after)
        return
    if start and builder.opens(piece[:start]):  # '"<unk>', "(:P": what opens, then it
        _parse_wordless(piece[:start], builder, space_before, False)
        _parse_wordless(piece[start:], builder, False, space_after)
        return
    if start and builder.words and not builder.pending_before:  # ")8-)", "”<unk>": what
        builder.add_closing(piece[:start], space_before)  # closes the word before, then it
        _parse_wordless(piece[start:], builder, False, space_after)
        return
    if start:  # "'[noise]", ")<unk>" before the first word (or the next): kept as written
        builder.add_orphan_token(piece[:start], space_before, False)
        _parse_wordless(piece[start:], builder, False, space_after)
        return
    lead = len(piece) - len(piece.lstrip(_MARKS_BEFORE_EMOTICON))
    emoticon = _symbol_match(piece[lead:])
    if emoticon:  # "?:)": the word before's mark, then the emoticon
        if lead:
            post, mark, _, _ = _trail(piece[:lead], lookup)
            builder.add_orphan_marks(NULL, post, mark, not space_before)
            if not builder.words and post != NULL:  # (none before it: the text's lead)
                builder.add_lead(piece[:lead])
        _parse_emoticon(piece[lead:], emoticon.end(), builder, space_before, space_after)
        return
    first = next(i for i, c in enumerate(piece) if c in lookup["kept"])
    if first:
        post, mark, _, _ = _trail(piece[:first], lookup)
        builder.add_orphan_marks(NULL, post, mark, not space_before)
        if not builder.words and post != NULL:  # '!" and': the text's lead
            builder.add_lead(piece[:first])
    if not builder.opens(piece[first:]):
        builder.add_closing(piece[first:], space_before and not first)
        return
    last = max(i for i, c in enumerate(piece) if c in lookup["kept"]) + 1
    closes = unicodedata.category(piece[last - 1]) in ("Pe", "Pf")  # "'[noise],": spaced
    builder.add_orphan_token(piece[first:last],  # (spaced after marks that go to the word
                             space_before and (not first or bool(builder.words)),  # before:
                             space_after and (last == len(piece) or closes))  # 'so ,"(')
    if last < len(piece):  # "(-": written after the word before, "(" before the next
        post, mark, _, _ = _trail(piece[last:], lookup)
        builder.add_orphan_marks(NULL, post, mark, not builder.pending_before)
        if not builder.words and post != NULL:  # "(! wow": the text's lead, after the "("
            spaced = builder.pending_before and builder.pending_before[-1].endswith(" ")
            builder.add_lead(piece[last:] + " " * (space_after and not spaced), glued=spaced)


_QUOTE_PAIRS = {"'": "'", '"': '"', "‘": "’", "“": "”", "«": "»", "‹": "›", "„": "“",
                "‚": "‘", "「": "」", "『": "』", "＂": "＂"}


def _quoted_symbol(piece: str, start: int) -> bool:
    """Whether a piece is a tag or emoticon inside quotes that close in it ("'[noise]'",
    '“<unk>”'): the quotes piece[:start], the same ones closing after the symbol."""
    head = piece[:start]
    tail = "".join(_QUOTE_PAIRS.get(c, "\0") for c in reversed(head))
    inner = piece[start:len(piece) - start]
    found = _symbol_match(inner) if piece.endswith(tail) and inner else None
    return found is not None and found.end() == len(inner)


def _parse_symbol(piece: str, builder: _Builder, space_before: bool,
                  space_after: bool) -> bool:
    """A piece that is or holds a tag or an emoticon apart from any word, parsed: whether it
    was one (most pieces, words, start with no character that one starts with)."""
    lookup = builder.inv._lookup
    first = piece[0]
    if (first in ":;=<[" or first in _WRAPPING or first in _OTHER_EMOTICON_FIRST
            and piece[1:2] in _NOSE_OR_EYES) and space_before and space_after:
        symbol = piece.rstrip(_INVISIBLE)  # (invisible characters at its end are dropped)
        if symbol and _emoticon_token(symbol, lookup["word_char"]):  # ":D", "<unk>", "(:D)"
            _parse_wordless(symbol, builder, space_before, space_after)
            return True
    if first in ":;=" and (end := _leading_emoticon_end(piece)):  # ":)thanks": then a word
        _parse_wordless(piece[:end], builder, space_before, False)
        _parse_piece(piece[end:], builder, False, space_after)
        return True
    if first in lookup["strip"] and space_before and space_after:
        at = _symbol_after_marks(piece.rstrip(_INVISIBLE), lookup)
        if at:  # ".[noise]", ";<unk>", '."<unk>': marks, quotes or brackets, then it (spaced:
            _parse_piece(piece[:at], builder, space_before, False)  # the marks go to the
            _parse_wordless(piece[at:].rstrip(_INVISIBLE), builder, True,  # word before, and
                            space_after)  # 'so ?"<unk>' written 'so?"<unk>' is one token)
            return True
    return False


def _leading_emoticon_end(token: str) -> int:
    """Where an emoticon that closes ("):)", not ":(", which may open "(laughs)") ends when
    a word follows it in the same token (":)thanks"), or 0."""
    opening = _EMOTICON.match(token)
    if opening is None or opening.group()[-1] not in ")]}":
        return 0
    return opening.end() if token[opening.end():opening.end() + 1].isalnum() else 0


def _symbol_after_marks(piece: str, lookup: dict) -> int:
    """Where a tag or emoticon starts that ends a token after marks, quotes or brackets
    (".[noise]", ";<unk>", ")8-)", ']<unk>'; up to four of them), or 0."""
    for at in range(1, min(len(piece), 5)):
        if piece[at - 1] not in lookup["strip"]:
            return 0
        if piece[at] in _SYMBOL_FIRST and _symbol_match(piece[at:]) and _emoticon_token(
                piece[at:], lookup["word_char"]):
            return at
    return 0


_SYMBOL_FIRST = ":;=<[" + _OTHER_EMOTICON_FIRST  # what a tag or an emoticon starts with


def _parse_emoticon(piece: str, end: int, builder: _Builder, space_before: bool,
                    space_after: bool) -> None:
    """An emoticon (piece[:end]) kept whole, then what follows it: quotes or brackets
    (":D)", ':P"') as written, marks as labels (":)!")."""
    lookup = builder.inv._lookup
    rest = piece[end:]
    kept_after = any(c in lookup["kept"] for c in rest)
    post, mark, _, _ = _trail(rest, lookup) if rest and not kept_after else (NULL, "", "", 0)
    builder.add_orphan_token(piece[:end], space_before,
                             not kept_after and (space_after or bool(rest)))
    if kept_after:
        _parse_wordless(rest, builder, False, space_after)
    elif rest:  # (glued to the word before unless the emoticon waits for the next one)
        builder.add_orphan_marks(NULL, post, mark, not builder.pending_before)
        if post != NULL and not builder.words:  # "<unk>? so": the text's lead, before the
            builder.add_lead(rest, glued=True)  # space after the tag


def _parse_piece(piece: str, builder: _Builder, space_before: bool = True,
                 space_after: bool = True) -> None:
    inv = builder.inv
    lookup = inv._lookup
    if piece[0] in lookup["symbol_first"] and _parse_symbol(piece, builder, space_before,
                                                            space_after):
        return
    if piece[-1] not in lookup["strip"] and piece[0] not in lookup["strip"] and (
            piece[-1] < "\u2600" or not _JOINED_EMOJI.search(piece)) and not (
            piece[-1] in "DPp" and piece[-2:-1] in (":", ";", "=", "-")):  # "tomorrow:D"
        builder.add_bare(piece)  # a bare word (most ASR output): nothing to strip
        return
    if piece[0] in _INVISIBLE or piece[-1] in _INVISIBLE:  # (strip characters: not bare)
        piece = piece.strip(_INVISIBLE)  # dropped at a token's edges, so that "\u200b<unk>"
        if piece:  # is a tag and "\u200b:)" an emoticon
            _parse_piece(piece, builder, space_before, space_after)
        return
    joined = _joined_match(piece, builder.brackets, lookup["word_char"]) \
        if any(c in piece for c in ":;=") else None
    if joined is None and max(piece) >= "\u2600":
        joined = _joined_emoji(piece)
    if joined is not None:  # "tomorrow:)": the word, then the emoticon as written after it
        _parse_piece(piece[:joined.start()], builder, space_before, False)
        builder.add_joined(joined.group())
        rest = piece[joined.end():]
        if any(c in lookup["kept"] for c in rest):  # 'thanks👍"': quotes closing after it
            builder.add_closing(rest, False)
            return
        post, mark, _, _ = _trail(rest, lookup)
        builder.add_orphan_marks(NULL, post, mark, True)
        return
    builder.brackets = max(builder.brackets + _bracket_delta(piece), 0)
    start, end = _core_bounds(piece, lookup)
    kept = lookup["kept"]
    if start == end:
        if any(c in kept for c in piece):  # ":)", "(", ")." (a bracket, then its mark)
            _parse_wordless(piece, builder, space_before, space_after)
        else:
            post, mark, _, _ = _trail(piece, lookup)
            builder.add_orphan_marks(_edge_marks(piece, lookup, "pre"), post, mark,
                                     not space_before)
            if not builder.words and post != NULL:  # "... and": before the first word
                builder.add_lead(piece + " " * space_after)
        return
    start, end = _extend_core(piece, start, end, inv, builder.single_open > 0)
    post, mark, _, _ = _trail(piece[:start], lookup)
    builder.add_orphan_marks(NULL, post, mark, not space_before)  # "a ,b", "时间：2020年"
    if post != NULL and not builder.words:  # "...and", '--"and', '"...and': before the
        builder.add_lead(*_opening_marks(piece[:start], lookup, piece[start:end], inv))
    pre = _edge_marks(piece[:start], lookup, "pre")
    abbreviated = piece[end:end + 1] == "." and (
        is_abbreviation(piece[start:end], inv.abbreviations)
        or _period_before_mark(piece[end:], lookup))
    trail = piece[end + abbreviated:]
    post, mark, after, mark_at = _trail(trail, lookup)
    outer = _outer_marks(trail, lookup, mark, mark_at) if post != NULL and len(trail) > 2 \
        else ("", 0)
    before = "".join(c for c in piece[:start] if c in kept)
    written = piece[start:end]
    if before and before[-1] in _LEAD_APOSTROPHES and _elides(before[-1], written, inv):
        before, written = before[:-1], before[-1] + written  # (written "'0" once restored)
    builder.add_word(written, pre, post, abbreviated, before, after, mark_at, mark, outer)


def _opening_marks(edge: str, lookup: dict, word: str, inv: Inventory) -> tuple[str, int]:
    """The post-marks in a word's leading edge and where they stand among its quotes and
    brackets: those that open it ("--" of '--"and', at 0), else those that close it after
    its quotes or brackets ("..." of '"...and', at 1); ("", 0) where a pre-mark stands among
    them ("¿...qué", whose order a lead would change)."""
    if any(c in lookup["pre"] for c in edge):
        return "", 0
    end = 0
    while end < len(edge) and edge[end] in lookup["post"]:
        end += 1
    if end:
        return edge[:end], 0
    start = len(edge)
    while start and edge[start - 1] in lookup["post"]:
        start -= 1
    quote = edge[:start].rstrip()[-1:]
    if quote and quote in _LEAD_APOSTROPHES and _elides(quote, word, inv):  # "',0": the
        return "", 0  # word takes the apostrophe ('0), not the marks between
    kept = sum(c in lookup["kept"] for c in edge[:start])
    return edge[start:], kept


def _elides(apostrophe: str, word: str, inv: Inventory) -> bool:
    """Whether an apostrophe written before a word would be read as part of it ('0, 'em,
    ‘90s): one that marks stood between ("',0") is, since restoring drops or moves them."""
    return _extend_core(apostrophe + word, 1, 1 + len(word), inv)[0] == 0


def _period_before_mark(trail: str, lookup: dict) -> bool:
    """Whether a word's trail is a period, closing quotes or brackets and another mark
    ('.",', '.);', '.".'): an abbreviation's period ("Rd.",), since no mark follows a full
    stop (and `render` writes an abbreviation's period and a full stop so: 'a.".')."""
    closing = len(trail) - 1 - len(trail[1:].lstrip("".join(lookup["kept"])))
    mark = trail[1 + closing:2 + closing]
    return closing > 0 and mark in lookup["post"]


def parse(text: str, language: str | Inventory = "en", *,
          open_quote: bool = False, open_brackets: int = 0) -> Labelled:
    """Parse cased, punctuated text into normalised words and their labels.

    Args:
        text: any string; empty, whitespace-only or marks-only input gives no words.
        language: an inventory name or an Inventory.
        open_quote: whether a straight quote (") is open before the text (earlier text of a
            stream): a lone one then closes (its word's mark goes before it) rather than opens.
        open_brackets: brackets open before the text (`count_open_brackets` of a stream's
            earlier text): "below:)" then closes one rather than ends in an emoticon.

    Returns:
        Labelled with one entry per word; words are lowercased with marks stripped from
        their edges (inner apostrophes, hyphens and decimal points stay; the final period of
        an abbreviation is recorded in `abbreviated`, not as a mark).
    """
    if not isinstance(text, str):
        raise TypeError(f"parse expects str, got {type(text).__name__}")
    inv = get_inventory(language)
    builder = _Builder(inv, straight_quotes=int(open_quote), brackets=open_brackets)
    if inv.word_unit == "word":
        for token in whitespace_tokens(text):
            _parse_piece(token, builder)
        return builder.result()
    for token in whitespace_tokens(text):
        pieces = _split_cjk(token)
        for k, piece in enumerate(pieces):  # no whitespace between a token's pieces
            _parse_piece(piece, builder, k == 0, k == len(pieces) - 1)
    return builder.result()


def wordless_tokens(text: str, language: str | Inventory = "en") -> list[str]:
    """The tokens of a text without words that `parse` keeps as written (":)", "(", a lone
    quote), beside a word: a text without words loses them unless its caller keeps them."""
    lookup = get_inventory(language)._lookup
    word_char = lookup["word_char"]
    return [t for t in whitespace_tokens(text)
            if (not word_char.search(t) and any(c in lookup["kept"] for c in t))
            or _symbol_token(t, lookup)]


def normalize(text: str, language: str | Inventory = "en") -> list[str]:
    """The model-input words of a text: lowercased, marks stripped (see `parse`)."""
    return list(parse(text, language).words)


# ----------------------------------------------------------------------------- rendering

def separator(previous: str, word: str, inv: Inventory) -> str:
    """Space between words, none next to a CJK character or a wide quote or bracket ("“",
    "）") in char-unit languages (`previous`, `word`: as written, or their characters that
    stand side by side: see `render`)."""
    if inv.word_unit == "word":
        return " "
    return "" if _joins(previous[-1:], inv) or _joins(word[:1], inv) else " "


def _joins(char: str, inv: Inventory) -> bool:
    """Whether a character is written without spaces beside it: CJK, or a full-width
    quote or bracket ("「", "）"; not "]" or "“", which Latin text uses too)."""
    return bool(char) and (_is_cjk(char) or (char in inv._lookup["kept"]
                                             and unicodedata.east_asian_width(char) in "WF"))


def render(
    labelled: Labelled,
    language: str | Inventory = "en",
    *,
    lexicon: dict[str, str] | None = None,
    sentence_case: bool = False,
    sentence_start: bool = True,
) -> str:
    """Write words and labels as text.

    Args:
        labelled: words and labels (e.g. from `parse` or a model).
        language: an inventory name or an Inventory.
        lexicon: lowercase word -> cased form, used for MIX words without a form.
        sentence_case: capitalise LOWER words that start a sentence.
        sentence_start: whether the first word starts a sentence (False when continuing
            text that was rendered earlier).

    Returns:
        The text; its words, lowercased, equal `labelled.words`.
    """
    inv = get_inventory(language)
    cases = written_cases(labelled, inv, sentence_case=sentence_case,
                          sentence_start=sentence_start, lexicon=lexicon)
    parts: list[str] = []
    for i, word in enumerate(labelled.words):
        case = cases[i]
        form = labelled.forms[i] or (lexicon or {}).get(word)
        written = inv.mark_text(labelled.pre[i]) + apply_case(word, case, form)
        edges = labelled.edges[i]
        if edges is None:  # most words: the label's mark right after the word
            mark = inv.mark_text(labelled.post[i])
            if labelled.abbreviated[i]:
                written += "." if mark == "." else "." + mark  # "U.S." + PERIOD: "U.S."
            else:
                written += mark
        else:
            written = _with_edges(written, edges, labelled.post[i], labelled.abbreviated[i],
                                  inv)
        if parts:
            parts.append(_space_between(labelled.words[i - 1], parts[-1],
                                        labelled.edges[i - 1], word, edges, inv))
        parts.append(written)
    return "".join(parts)


def _space_between(previous: str, previous_written: str, previous_edges: Edges | None,
                   word: str, edges: Edges | None, inv: Inventory) -> str:
    """`separator` for words as `render` writes them: a quote or bracket written at their
    edges stands beside the other word ("𠀀] 0"), marks do not ("价格:100元")."""
    if inv.word_unit == "word":
        return " "
    after = previous_edges.after if previous_edges else ""
    last = after[-1] if after and previous_written.endswith(after) else previous[-1:]
    first = edges.before[0] if edges and edges.before else word[:1]
    return separator(last, first, inv)


# a number with a lowercase ending: 2nd, 1990s, '90s, 5th, 3pm (never Capitalised)
_NUMBER_WITH_ENDING = re.compile(r"^['’‘]?\d[\d,.]*(?:st|nd|rd|th|s|am|pm)$")


def is_number_with_ending(word: str) -> bool:
    """2nd, 1990s, '90s, 5th, 3pm: a number whose letters stay lowercase, even where a
    sentence starts (not 2Nd); 3d, 4k and 5g are not such numbers (3D, 4K, 5G)."""
    return bool(_NUMBER_WITH_ENDING.match(word))


def is_address(word: str) -> bool:
    """An e-mail address, a handle or a web address (joe@example.com, https://x.org,
    www.example.com): written in lowercase, never Capitalised as a name or a sentence start."""
    return "@" in word or "://" in word or word.lower().startswith("www.")


# Dotted runs of single letters written in lowercase; every other one (U.S., S.O.S., F.B.I.)
# is an initialism, all capitals whenever it is not lowercase.
_LOWERCASE_INITIALISMS = frozenset({"e.g", "i.e", "a.m", "p.m"})


def is_i(word: str) -> bool:
    """"I", cut off ("i-") and its contractions (i'm, i'll, i’d), Capitalised wherever they
    stand."""
    return word in ("i", "i-") or word.startswith(("i'", "i’"))


def is_cut_word(word: str) -> bool:
    """A word cut off as transcripts write it, its hyphen kept: "i-", "th-", "w-" ("i- i
    think", "w- what"; a grade, "a b-", reads the same)."""
    return len(word) > 1 and word[-1] == "-" and word[-2].isalnum()


def is_lowercase_initialism(word: str) -> bool:
    """e.g, i.e, a.m, p.m (a final period allowed): written in lowercase inside a sentence."""
    return (word[:-1] if word.endswith(".") else word).lower() in _LOWERCASE_INITIALISMS


def is_initialism(word: str) -> bool:
    """A dotted initialism such as u.s or s.o.s. (a final period allowed): written all in
    capitals, never Capitalised (S.o.s.); e.g, i.e, a.m, p.m excepted."""
    parts = (word[:-1] if word.endswith(".") else word).split(".")
    return (len(parts) > 1 and all(len(p) == 1 and p.isalpha() for p in parts)
            and not is_lowercase_initialism(word))


def words_as_written(labelled: Labelled, text: str) -> list[str]:
    """The rendered `text` of a space-separated language cut into one piece per word, each
    with its marks and what `Edges` writes around it ("( laughs )", "great. :)"), (n,)."""
    pieces = text.split(" ")
    out, start = [], 0
    for post, edges in zip(labelled.post, labelled.edges):
        n = 1
        if edges:
            n += (edges.lead + edges.before + edges.after + edges.written_mark(post)).count(" ")
        out.append(" ".join(pieces[start:start + n]))
        start += n
    if start != len(pieces):
        raise ValueError(f"{len(pieces)} pieces of text for {len(labelled)} words")
    return out


def ends_sentence(labelled: Labelled, i: int, language: str | Inventory = "en") -> bool:
    """Whether word i ends a sentence as written: a sentence-final label, unless the text
    wrote it without a sentence-final character (";" read as PERIOD: the next word does not
    start a sentence)."""
    inv = get_inventory(language)
    post = labelled.post[i]
    if post not in inv.sentence_final:
        return False
    if labelled.edges[i] is None:
        return True
    outer = labelled.edges[i].written_outer(post)
    if outer:  # '"why?", and' goes on, '"stop!". then' does not
        return any(c in inv._lookup["final_text"] for c in _ELLIPSIS.sub("", outer))
    if i + 1 < len(labelled) and labelled.case[i + 1] == LOWER and quotes_its_mark(labelled, i):
        return False  # '"Stop!" he cried': a speech tag goes on after the quote
    mark = labelled.edges[i].written_mark(post)
    if not mark:
        return True
    mark = _ELLIPSIS.sub("", mark)  # "wait... what": an ellipsis goes on
    return any(c in inv._lookup["final_text"] for c in mark)


# quotes that close what a speaker said
_CLOSING_QUOTES = frozenset('"”’\'»＂')


def quotes_its_mark(labelled: Labelled, i: int) -> bool:
    """Whether word i ends with a question or exclamation mark inside a closing quote
    ('"Stop!"', '“Why?”'), after which a word in lowercase goes on with the sentence."""
    edges = labelled.edges[i]
    return (edges is not None and labelled.post[i] in ("QUESTION", "EXCLAMATION")
            and edges.after[edges.mark_at:edges.mark_at + 1] in _CLOSING_QUOTES)


_ELLIPSIS = re.compile(r"(?:\s?\.){2,}|…")


def _with_edges(written: str, edges: Edges, post: str, abbreviated: bool,
                inv: Inventory) -> str:
    """A word as written (its pre-mark, letters and case) with its post-mark and `edges`."""
    mark = edges.written_mark(post) or inv.mark_text(post)
    mark_at, after = edges.mark_at, edges.after
    if abbreviated:
        written += "."
        if mark == "." and not mark_at:  # "U.S." + PERIOD is written "U.S.", and
            if after[:1].strip():  # '"U.S.".' once quotes close it
                mark_at = len(after.split(" ", 1)[0])
            else:
                mark = ""
    if edges.outer:  # '"why?",': after the quotes that close the word's own mark
        after = edges.written_after(post)
    return edges.opening() + written + after[:mark_at] + mark + after[mark_at:]


def written_cases(labelled: Labelled, language: str | Inventory = "en", *,
                  sentence_case: bool = False, sentence_start: bool = True,
                  lexicon: dict[str, str] | None = None) -> tuple[str, ...]:
    """The case each word is written in by `render` with the same options, (n,).

    With sentence_case, a LOWER word that starts a sentence is written CAP (an initialism,
    `is_initialism`, UPPER: S.O.S.; an address, `is_address`, stays lowercase). A word that
    no case changes (a number, CJK) is LOWER whatever its label, and a MIX word without a
    form (in `labelled.forms` or `lexicon`, as render takes them) is CAP, as it is written.
    """
    cases = list(labelled.case)
    if sentence_case:
        inv = get_inventory(language)
        final = inv.sentence_final
        for i, word in enumerate(labelled.words):
            if sentence_start and cases[i] == LOWER and not is_address(word) \
                    and not is_number_with_ending(word):
                cases[i] = UPPER if is_initialism(word) else CAP
            sentence_start = labelled.post[i] in final and (
                labelled.edges[i] is None or ends_sentence(labelled, i, inv))
    lexicon = lexicon or {}
    cases = [CAP if c == MIX and apply_case(w, MIX, f or lexicon.get(w)) == apply_case(w, CAP)
             else c for w, c, f in zip(labelled.words, cases, labelled.forms)]  # no MIX form
    return tuple(LOWER if c in (CAP, UPPER) and apply_case(w, c) == w else c
                 for w, c in zip(labelled.words, cases))


def canonical(text: str, language: str | Inventory = "en") -> str:
    """The normal form of a text: ``render(parse(text))``, each mark written as its label's
    own text (";" as ".", "—" as ",", "?!" as "?")."""
    return render(parse(text, language).without_written_marks(), language)


def open_sentences(labelled: Labelled, language: str | Inventory = "en") -> Labelled:
    """Labels with each sentence that ends in a mark some pre-mark opens (Spanish ? and !)
    opened by it on its first word, unless that word has a pre-mark already: what the model,
    which predicts marks after words only, cannot say. A text's last sentence counts only
    when it ends in such a mark. Unchanged for languages without such pre-marks."""
    opener = {m.opens: m.name for m in get_inventory(language).pre_marks if m.opens}
    if not opener or not len(labelled):
        return labelled
    pre = list(labelled.pre)
    for span in sentence_spans(labelled, language):
        mark = opener.get(labelled.post[span[-1]])
        if mark and pre[span[0]] == NULL:
            pre[span[0]] = mark
    return replace(labelled, pre=tuple(pre))


def sentence_spans(labelled: Labelled, language: str | Inventory = "en") -> list[range]:
    """Word index ranges of the sentences (a sentence ends at a sentence-final mark)."""
    final = get_inventory(language).sentence_final
    spans, start = [], 0
    for i, post in enumerate(labelled.post):
        if post in final:
            spans.append(range(start, i + 1))
            start = i + 1
    if start < len(labelled.post):
        spans.append(range(start, len(labelled.post)))
    return spans


# ----------------------------------------------------------------------------- lexicon

def build_casing_lexicon(
    texts: Iterable[str],
    language: str | Inventory = "en",
    min_count: int = 2,
) -> dict[str, str]:
    """Learn the MIX-case forms of words (iPhone, McDonald's) from cased text.

    A word enters the lexicon when its most frequent written form is MIX and occurs at
    least `min_count` times.

    Returns:
        lowercase word -> most frequent cased form.
    """
    forms: dict[str, Counter] = {}
    for text in texts:
        labelled = parse(text, language)
        for word, form, case in zip(labelled.words, labelled.forms, labelled.case):
            if case == MIX:
                forms.setdefault(word, Counter())[form] += 1
            elif word in forms:
                forms[word][case] += 1
    lexicon = {}
    for word, counts in forms.items():
        best, n = counts.most_common(1)[0]
        if n >= min_count and best not in CASES:
            lexicon[word] = best
    return lexicon


# build_capitalised defaults: chosen before measuring, then checked on LibriSpeech-PC text
# (docs/BENCHMARKS.md, "Names: capitalised.json").
CAPITALISED_MIN_COUNT = 5
CAPITALISED_MIN_SHARE = 0.95


def build_capitalised(
    texts: Iterable[str],
    language: str | Inventory = "en",
    min_count: int = CAPITALISED_MIN_COUNT,
    min_share: float = CAPITALISED_MIN_SHARE,
) -> list[str]:
    """Learn the words that are written Capitalised wherever they stand (names: Aaron, Accra).

    Only occurrences inside a sentence count (not a text's first word, not after a
    sentence-final mark or a pre-mark), so sentence starts do not make common words look
    like names.

    Returns:
        sorted lowercase words seen at least `min_count` times inside sentences, at least
        `min_share` of them written CAP.
    """
    inv = get_inventory(language)
    counts: dict[str, Counter] = {}
    for text in texts:
        labelled = parse(text, inv)
        for i, (word, case) in enumerate(zip(labelled.words, labelled.case)):
            if i == 0 or labelled.post[i - 1] in inv.sentence_final or labelled.pre[i] != NULL:
                continue
            counts.setdefault(word, Counter())[case] += 1
    return sorted(word for word, c in counts.items()
                  if c.total() >= min_count and c[CAP] >= min_share * c.total())
