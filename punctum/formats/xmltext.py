"""What the XML formats (`ttml`, `eaf`) share: parsing with one-line errors, the parts of a
document that are never scanned for elements, and the markup inside an element's text."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ElementTree

from punctum.references import REFERENCE

# comments, CDATA sections, processing instructions and the doctype (with an internal
# subset): never scanned for elements
OPAQUE = re.compile(r"<!--.*?-->|<!\[CDATA\[.*?\]\]>|<\?.*?\?>|<!DOCTYPE(?:[^\[>]|\[.*?\])*>",
                    re.DOTALL)
# the attributes of a tag (a quoted value may hold ">" and line breaks)
ATTRIBUTES = r"""(?:\s+[^\s=<>/"']+\s*=\s*(?:"[^"]*"|'[^']*'))*\s*"""
# markup inside an element's text: tags, comments, processing instructions, the brackets of
# a CDATA section (its text is text) and character references
MARKUP = re.compile(rf"<!--.*?-->|<!\[CDATA\[|\]\]>|<\?.*?\?>|</?[A-Za-z][\w.:-]*{ATTRIBUTES}"
                    rf"/?>|{REFERENCE.pattern}", re.DOTALL)
# the XML declaration's encoding
_DECLARED = re.compile(r"""^(\ufeff?\s*<\?xml\b[^>]*?\bencoding\s*=\s*)(["'])([^"']*)\2""")


def parse(text: str, name: str) -> ElementTree.Element:
    """The document's root element; a one-line error naming the line where it is not
    well-formed XML (the text is decoded already: the encoding it declares is not used)."""
    parser = ElementTree.XMLParser(encoding="utf-8")
    try:
        parser.feed(text.encode("utf-8", errors="surrogatepass"))
        return parser.close()
    except ElementTree.ParseError as error:
        line, column = error.position
        raise ValueError(f"{name}:{line}: not well-formed XML (column {column + 1}; "
                         f"{str(error).split(':')[0]})") from None


def masked(text: str) -> str:
    """The text with its comments, CDATA sections, processing instructions and doctype
    blanked out (same length: offsets hold)."""
    return OPAQUE.sub(lambda found: re.sub(r"[^\n]", " ", found.group()), text)


def opens_with(text: str, root: re.Pattern) -> bool:
    """Whether `root` matches the document's first element (after its declaration, doctype
    and comments, in its first kilobytes)."""
    head = OPAQUE.sub("", text[:8192])
    return bool(root.match(head.lstrip("\ufeff \t\r\n")))


def declared_utf8(text: str) -> str:
    """The document with the encoding its XML declaration names made UTF-8, as punctum
    writes it (a UTF-16 file read is written as UTF-8)."""
    found = _DECLARED.match(text)
    if found is None or found.group(3).lower().replace("_", "-") in ("utf-8", "utf8"):
        return text
    return text[:found.start(3)] + "UTF-8" + text[found.end(3):]


def dump_spans(transcript, key: str, what: str) -> str:
    """The document a transcript was read from (meta[key]: its text and the span of each
    cue's text), each cue's text written into its span, declared UTF-8 (`what`: the format's
    name for the error when it was not read from one)."""
    from punctum.formats.transcript import spliced

    source = transcript.meta.get(key)
    if source is None or len(source["spans"]) != len(transcript.cues):
        raise ValueError(f"{what} is written from the one it was read from; convert to srt, "
                         f"vtt, text or json instead")
    return declared_utf8(spliced(source["text"], [(start, end, cue.text) for (start, end), cue
                                                  in zip(source["spans"], transcript.cues)]))
