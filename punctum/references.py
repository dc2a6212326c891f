"""HTML character references in words: "&amp;", "&#39;", "&eacute;" (subtitles, scraped text).

A reference stands for one character. Subtitle readers decode them before the model reads
a word (`decode_references`) and write the restored word with the same references again
(`encode_like`); in plain text a reference is part of its word ("AT&amp;T", "&amp;": the
";" that closes it is no mark) and a word's case is applied to the characters the
references stand for (`apply_case_decoded`: "&eacute;cole" -> "&Eacute;cole", not "&Eacute"
of a name that does not exist or "&Amp;"). Standard library only.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from html.entities import html5

_NAME = r"&(?:[a-zA-Z]+|#\d+|#x[0-9a-fA-F]+)"  # a reference but its closing ";"
# An HTML character reference (&amp; &#39; &#x27;).
REFERENCE = re.compile(_NAME + ";")
# The start of a reference at the end of a word core, before its ";" ("AT&amp", "&#39").
_OPEN_REFERENCE = re.compile(_NAME + "$")


def decode_references(text: str) -> str:
    """Text with its character references decoded (an unknown name, "&bogus;", stays)."""
    if "&" not in text:
        return text
    return REFERENCE.sub(lambda m: html.unescape(m.group()), text)  # "&times" stays as is


def encode_like(text: str, original: str) -> str:
    """`text` (a restored token) with the characters that `original` wrote as references
    written as the same references again ("Q&A" -> "Q&amp;A" for "q&amp;a"); a character
    whose case changed takes the reference of its new case where one exists ("École" ->
    "&Eacute;cole" for "&eacute;cole"; numeric references in the same style)."""
    references = {}
    for reference in REFERENCE.findall(original):
        char = html.unescape(reference)
        references[char] = reference
        for other in (char.upper(), char.lower()):
            if other != char and len(other) == 1:
                references.setdefault(other, _other_case(reference, other))
    for char in sorted(references, key=lambda c: c != "&"):  # "&" first: others hold one
        written = references[char]
        if char and written and char != written:
            text = text.replace(char, written)
    return text


def _other_case(reference: str, char: str) -> str:
    """The reference to `char`, the other case of what `reference` stands for, written in
    its style ("&eacute;" -> "&Eacute;", "&#233;" -> "&#201;"); "" where none exists."""
    if reference.startswith("&#x"):
        hexa = f"{ord(char):x}"
        return f"&#x{hexa.upper() if reference[3:-1].isupper() else hexa};"
    if reference.startswith("&#"):
        return f"&#{ord(char)};"
    name = reference[1:-1]
    for candidate in (name[:1].swapcase() + name[1:], name[:2].swapcase() + name[2:],
                      name.swapcase()):  # eacute -> Eacute, aelig -> AElig, eth -> ETH
        if html5.get(candidate + ";") == char:
            return f"&{candidate};"
    return ""


def closes_reference(core: str) -> bool:
    """Whether a ";" after a word core closes a character reference that the core ends
    with ("AT&amp" + ";"; not "&bogus" + ";", which stands for nothing)."""
    found = _OPEN_REFERENCE.search(core)
    if found is None:
        return False
    name = found.group()[1:]
    return name.startswith("#") or name + ";" in html5  # (not "&copyright": "&copy" + "right")


def apply_case_decoded(word: str, apply: Callable[[str], str]) -> str:
    """`apply` (a case change) applied to the characters a word's references stand for,
    which are then written as references again in the word's style."""
    if not REFERENCE.search(word):
        return apply(word)
    return encode_like(apply(decode_references(word)), word)


def apply_outside(word: str, apply: Callable[[str], str]) -> str:
    """`apply` (a case change) applied to the characters outside the word's references,
    each reference kept as written ("caf&#233;" -> "CAF&#233;"); the word as it is where
    the change would alter the references' places."""
    masked = REFERENCE.sub(lambda m: "\0" * len(m.group()), word)
    changed = apply(masked)
    if len(changed) != len(word) or any((a == "\0") != (b == "\0")
                                        for a, b in zip(masked, changed)):
        return word
    return "".join(w if m == "\0" else c for w, m, c in zip(word, masked, changed))


def opens_with_reference(word: str) -> bool:
    """Whether the first letter of a word is one a reference stands for ("&#233;cole")."""
    for found in REFERENCE.finditer(word):
        if any(c.isalpha() for c in word[:found.start()]):
            return False
        if any(c.isalpha() for c in html.unescape(found.group())):
            return True
    return False
