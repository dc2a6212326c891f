"""TTML and DFXP subtitles (.ttml, .dfxp; IMSC, EBU-TT, Netflix's and YouTube's TTML), read
and written for `formats`.

    punctum restore -i episode.ttml -o episode.restored.ttml
    punctum restore -i episode.dfxp --to srt

Each ``<p>`` of the body is a cue, timed by its ``begin`` and ``end`` (or ``dur``; ``begin``
is 0 when only those are given), with the ``begin`` of the ``<div>`` and ``<body>`` around it
added (clock times ``00:00:01.500`` or ``00:00:01:12`` in frames, offsets ``1.5s``,
``1500ms``, ``36f``, ``10000000t`` with the document's ``ttp:frameRate`` and
``ttp:tickRate``); a sequential time container (``timeContainer="seq"``) is refused. Only the
text between a paragraph's tags is restored: tags (``<span tts:color="yellow">``, ``<br/>``),
comments, the brackets of CDATA sections (their text is text) and character references stay
where they stand and never reach the model, and every other byte of the file (head, styles,
regions, attributes, comments) is written back as read (a UTF-16 document as UTF-8, its
declaration saying so). Roll-up captions (lines broken by ``<br/>``) are read once
(`rolling`). Paragraphs without times (timed by their spans, or not at all) are restored but
cannot become subtitles.
"""

from __future__ import annotations

import re

from punctum.formats.transcript import MAX_SECONDS, Cue, Transcript, shown, split_tokens
from punctum.formats.xmltext import ATTRIBUTES as _ATTRIBUTES
from punctum.formats.xmltext import MARKUP, dump_spans, masked, opens_with, parse

# the root element: <tt ...> or a prefixed <tt:tt ...>
_ROOT = re.compile(rf"<((?:[\w.-]+:)?tt)({_ATTRIBUTES})/?>")
# a paragraph (TTML has no nested ones): its tag name, attributes and inner text; an empty
# <p .../> holds nothing to restore
_PARAGRAPH = re.compile(rf"<((?:[\w.-]+:)?p)({_ATTRIBUTES})>(.*?)</\1\s*>", re.DOTALL)
# a container whose begin shifts the paragraphs inside it
_CONTAINER = re.compile(rf"<(/?)((?:[\w.-]+:)?(?:body|div))({_ATTRIBUTES})(/?)>")
_ATTRIBUTE = re.compile(r"""((?:[\w.-]+:)?[\w.-]+)\s*=\s*("[^"]*"|'[^']*')""")
_CLOCK = re.compile(r"^(\d{1,9}):(\d{2}):(\d{2})(?:(\.\d+)|:(\d+(?:\.\d+)?))?$", re.ASCII)
_OFFSET = re.compile(r"^(\d+(?:\.\d+)?)(h|ms|m|s|f|t)$", re.ASCII)


class _TimeError(ValueError):
    """A time that cannot be read, located by the caller."""


def looks_like_ttml(text: str) -> bool:
    """Whether a text is a TTML document: its root element (after any XML declaration,
    doctype and comments in its first kilobytes) is <tt>."""
    return opens_with(text, _ROOT)


def read_ttml(text: str, name: str, meta: dict) -> Transcript:
    """The paragraphs of a TTML document as cues, in document order."""
    parse(text, name)
    scanned = masked(text)
    try:
        rates = _rates(scanned)
        begins = _container_begins(scanned, rates)
    except _TimeError as error:
        raise ValueError(f"{name}:{error.args[1]}: {error.args[0]}") from None
    cues, spans, k, offset = [], [], 0, 0.0
    for found in _PARAGRAPH.finditer(scanned):
        while k < len(begins) and begins[k][0] <= found.start():
            offset = begins[k][1]
            k += 1
        try:
            start, end = _times(_attributes(found.group(2)), offset, rates)
        except _TimeError as error:
            line = text.count("\n", 0, found.start()) + 1
            raise ValueError(f"{name}:{line}: {error.args[0]}") from None
        inner = text[found.start(3):found.end(3)]
        cues.append(Cue(start, end, split_tokens(inner, MARKUP)))
        spans.append(found.span(3))
    return Transcript("ttml", tuple(cues), {**meta, "ttml": {"text": text, "spans": spans}})


def _attributes(text: str) -> dict[str, str]:
    """Attributes by local name (tts:begin and begin alike), values without their quotes."""
    return {key.split(":")[-1]: value[1:-1] for key, value in _ATTRIBUTE.findall(text)}


def _rates(scanned: str) -> tuple[float, float]:
    """(frames per second, ticks per second) of the document's <tt> element."""
    root = _ROOT.search(scanned)
    attributes = _attributes(root.group(2)) if root else {}
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


def _container_begins(scanned: str, rates: tuple[float, float]) -> list[tuple[int, float]]:
    """(position, offset) after each <body> or <div> tag: the sum of the begin times of those
    elements then open, for the paragraphs that follow. _TimeError(message, line) for a
    begin that cannot be read or a sequential time container."""
    changes, open_begins = [], []
    for found in _CONTAINER.finditer(scanned):
        closing, _, attributes, empty = found.groups()
        if closing:
            if open_begins:
                open_begins.pop()
        elif not empty:
            named = _attributes(attributes)
            try:
                if named.get("timeContainer", "par").strip() == "seq":
                    raise _TimeError('a sequential time container (timeContainer="seq") '
                                     'is not read: give its paragraphs their own begin and end')
                begin = named.get("begin")
                open_begins.append(_seconds(begin, rates) if begin else 0.0)
            except _TimeError as error:
                raise _TimeError(error.args[0], scanned.count("\n", 0, found.start()) + 1
                                 ) from None
        changes.append((found.end(), sum(open_begins)))
    return changes


def _times(attributes: dict[str, str], offset: float, rates: tuple[float, float]
           ) -> tuple[float | None, float | None]:
    begin, end, duration = (attributes.get(k) for k in ("begin", "end", "dur"))
    if end is None and duration is None:
        return None, None
    start = offset + (_seconds(begin, rates) if begin is not None else 0.0)
    if end is not None:
        stop = offset + _seconds(end, rates)
    else:
        stop = start + _seconds(duration, rates)
    if stop < start:
        raise _TimeError(f"the paragraph ends ({shown(end or duration)}) before it starts "
                         f"({shown(begin or '0s')})")
    return round(start, 6), round(stop, 6)


def _seconds(value: str, rates: tuple[float, float]) -> float:
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
        raise _TimeError(f"bad time {shown(value)} (expected a clock time such as "
                         f"00:00:01.500 or an offset such as 1.5s)")
    if total > MAX_SECONDS:
        raise _TimeError(f"a time beyond {MAX_SECONDS:.0e} seconds")
    return total


def dump_ttml(transcript: Transcript) -> str:
    """The document read, each restored text written in place."""
    return dump_spans(transcript, "ttml", "a TTML document")
