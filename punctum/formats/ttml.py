"""TTML and DFXP subtitles (.ttml, .dfxp; IMSC, EBU-TT, Netflix's and YouTube's TTML), read
and written for `formats`.

    punctum restore -i episode.ttml -o episode.restored.ttml
    punctum restore -i episode.dfxp --to srt

Each ``<p>`` of the body is a cue, timed by its ``begin`` and ``end`` (or ``dur``), with the
``begin`` of the ``<div>`` and ``<body>`` around it added (clock times ``00:00:01.500`` or
``00:00:01:12`` in frames, offsets ``1.5s``, ``1500ms``, ``36f``, ``10000000t`` with the
document's ``ttp:frameRate`` and ``ttp:tickRate``). Only the text between a paragraph's tags is
restored: tags (``<span tts:color="yellow">``, ``<br/>``) and character references stay where
they stand and never reach the model, and every other byte of the file (head, styles,
regions, attributes) is written back as read. Paragraphs without times (timed by their
spans, or not at all) are restored but cannot become subtitles.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ElementTree

from punctum.formats.transcript import MAX_SECONDS, Cue, Transcript, shown, spliced, split_tokens

# the root element: <tt ...> or a prefixed <tt:tt ...>
_ROOT = re.compile(r"<(?:[\w.-]+:)?tt[\s>]")
# a paragraph (TTML has no nested ones): its tag name, attributes and inner text; an empty
# <p .../> holds nothing to restore
_PARAGRAPH = re.compile(r"<((?:[\w.-]+:)?p)(\s[^<>]*)?(?<!/)>(.*?)</\1\s*>", re.DOTALL)
# a container whose begin shifts the paragraphs inside it
_CONTAINER = re.compile(r"<(/?)((?:[\w.-]+:)?(?:body|div))(\s[^<>]*?)?(/?)>")
_ATTRIBUTE = re.compile(r"""(?:^|\s)((?:[\w.-]+:)?[\w.-]+)\s*=\s*("[^"]*"|'[^']*')""")
_CLOCK = re.compile(r"^(\d{1,9}):(\d{2}):(\d{2})(?:(\.\d+)|:(\d+(?:\.\d+)?))?$", re.ASCII)
_OFFSET = re.compile(r"^(\d+(?:\.\d+)?)(h|ms|m|s|f|t)$", re.ASCII)


def looks_like_ttml(text: str) -> bool:
    """Whether a text is a TTML document: its root element (after any XML declaration and
    comments in its first kilobytes) is <tt>."""
    head = re.sub(r"<\?.*?\?>|<!--.*?-->|<!DOCTYPE[^>]*>", "", text[:4096], flags=re.DOTALL)
    return bool(_ROOT.match(head.lstrip("\ufeff \t\r\n")))


def read_ttml(text: str, name: str, meta: dict) -> Transcript:
    """The paragraphs of a TTML document as cues, in document order."""
    _check_xml(text, name)
    rates = _rates(text)
    begins = _container_begins(text, rates, name)
    cues, spans, k, offset, line, counted = [], [], 0, 0.0, 1, 0
    for found in _PARAGRAPH.finditer(text):
        while k < len(begins) and begins[k][0] <= found.start():
            offset = begins[k][1]
            k += 1
        line += text.count("\n", counted, found.start())
        counted = found.start()
        where = f"{name}:{line}"
        start, end = _times(_attributes(found.group(2) or ""), offset, rates, where)
        cues.append(Cue(start, end, split_tokens(found.group(3), markup=True)))
        spans.append(found.span(3))
    return Transcript("ttml", tuple(cues), {**meta, "ttml": {"text": text, "spans": spans}})


def _check_xml(text: str, name: str) -> None:
    """A one-line error for a document that is not well-formed XML, naming its line."""
    try:
        ElementTree.fromstring(text.encode("utf-8"))
    except ElementTree.ParseError as error:
        line, column = error.position
        raise ValueError(f"{name}:{line}: not well-formed XML (column {column + 1}; "
                         f"{str(error).split(':')[0]})") from None


def _attributes(text: str) -> dict[str, str]:
    """Attributes by local name (tts:begin and begin alike), values without their quotes."""
    return {key.split(":")[-1]: value[1:-1] for key, value in _ATTRIBUTE.findall(text)}


def _rates(text: str) -> tuple[float, float]:
    """(frames per second, ticks per second) of the document's <tt> element."""
    root = _ROOT.search(text)
    tag_end = text.find(">", root.start()) if root else -1
    attributes = _attributes(text[root.end() - 1:tag_end]) if root else {}
    frame_rate = _positive(attributes.get("frameRate"), 30.0)
    multiplier = attributes.get("frameRateMultiplier", "").split()
    if len(multiplier) == 2 and all(m.isdigit() and int(m) for m in multiplier):
        frame_rate *= int(multiplier[0]) / int(multiplier[1])  # (NTSC: 30 * 1000/1001)
    tick_rate = _positive(attributes.get("tickRate"), frame_rate if "frameRate" in attributes
                          else 1.0)
    return frame_rate, tick_rate


def _positive(value: str | None, default: float) -> float:
    try:
        number = float(value) if value is not None else default
    except ValueError:
        return default
    return number if number > 0 else default


def _container_begins(text: str, rates: tuple[float, float], name: str
                      ) -> list[tuple[int, float]]:
    """(position, offset) after each <body> or <div> tag: the sum of the begin times of those
    elements then open, for the paragraphs that follow."""
    changes, open_begins = [], []
    for found in _CONTAINER.finditer(text):
        closing, _, attributes, empty = found.groups()
        if closing:
            if open_begins:
                open_begins.pop()
        elif not empty:
            begin = _attributes(attributes or "").get("begin")
            where = f"{name}:{text.count(chr(10), 0, found.start()) + 1}"
            open_begins.append(_seconds(begin, rates, where) if begin else 0.0)
        changes.append((found.end(), sum(open_begins)))
    return changes


def _times(attributes: dict[str, str], offset: float, rates: tuple[float, float],
           where: str) -> tuple[float | None, float | None]:
    begin, end, duration = (attributes.get(k) for k in ("begin", "end", "dur"))
    if begin is None:
        return None, None
    start = offset + _seconds(begin, rates, where)
    if end is not None:
        stop = offset + _seconds(end, rates, where)
    elif duration is not None:
        stop = start + _seconds(duration, rates, where)
    else:
        return None, None
    if stop < start:
        raise ValueError(f"{where}: the paragraph ends ({shown(end or duration)}) before it "
                         f"starts ({shown(begin)})")
    return round(start, 6), round(stop, 6)


def _seconds(value: str, rates: tuple[float, float], where: str) -> float:
    """Seconds of a TTML time expression: a clock time or an offset time."""
    frame_rate, tick_rate = rates
    text = value.strip()
    clock = _CLOCK.match(text)
    if clock:
        hours, minutes, seconds, fraction, frames = clock.groups()
        total = int(hours) * 3600 + int(minutes) * 60 + int(seconds)
        total += float(fraction) if fraction else float(frames) / frame_rate if frames else 0
    elif offset := _OFFSET.match(text):
        number, unit = float(offset.group(1)), offset.group(2)
        total = number * {"h": 3600, "m": 60, "s": 1, "ms": 0.001, "f": 1 / frame_rate,
                          "t": 1 / tick_rate}[unit]
    else:
        raise ValueError(f"{where}: bad time {shown(value)} (expected a clock time such as "
                         f"00:00:01.500 or an offset such as 1.5s)")
    if total > MAX_SECONDS:
        raise ValueError(f"{where}: a time beyond {MAX_SECONDS:.0e} seconds")
    return total


def dump_ttml(transcript: Transcript) -> str:
    """The document read, each paragraph's inner text replaced by its cue's."""
    source = transcript.meta.get("ttml")
    if source is None or len(source["spans"]) != len(transcript.cues):
        raise ValueError("a TTML document is written from the one it was read from; convert "
                         "to srt or vtt instead")
    return spliced(source["text"], [(start, end, cue.text) for (start, end), cue
                                     in zip(source["spans"], transcript.cues)])
