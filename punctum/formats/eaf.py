"""ELAN annotation documents (.eaf), read and written for `formats`.

    punctum restore -i interview.eaf -o interview.restored.eaf
    punctum restore -i interview.eaf --to text          # a line per tier
    punctum restore -i interview.eaf --text-key Ann     # one tier, named by its TIER_ID

The annotations of the independent tiers (those without a PARENT_REF: ELAN's tier per
speaker) are restored, each tier a text of its own, each annotation a cue timed by its two
time slots (a slot without a TIME_VALUE leaves its annotation untimed); `--text-key` names one
tier instead. Tiers whose name holds "comment", "note", "gloss", "transl" or "remark", and every
dependent tier (translations, glosses, words under an utterance), stay as written. Only the
text of each restored ANNOTATION_VALUE is written again, in place, with its character
references (``&amp;``) as written; every other byte stays.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ElementTree

from punctum.formats.transcript import Cue, Transcript, shown, spliced, split_tokens

# the root element, after any XML declaration and comments
_ROOT = re.compile(r"<ANNOTATION_DOCUMENT[\s>]")
# every ANNOTATION_VALUE in document order: empty (<ANNOTATION_VALUE/>) or with its text
_VALUE = re.compile(r"<ANNOTATION_VALUE\s*/>|<ANNOTATION_VALUE\s*>(.*?)</ANNOTATION_VALUE\s*>",
                    re.DOTALL)
_ASIDE_TIER = re.compile(r"comment|note|gloss|transl|remark", re.IGNORECASE)


def looks_like_eaf(text: str) -> bool:
    """Whether a text is an ELAN document: its root element is <ANNOTATION_DOCUMENT>."""
    head = re.sub(r"<\?.*?\?>|<!--.*?-->", "", text[:4096], flags=re.DOTALL)
    return bool(_ROOT.match(head.lstrip("\ufeff \t\r\n")))


def read_eaf(text: str, name: str, meta: dict, tier: str | None = None) -> Transcript:
    """The annotations of the chosen tiers as cues, a document per tier."""
    root = _parse(text, name)
    slots = _time_slots(root, name)
    spans = [(found.start(1), found.end(1)) if found.group(1) is not None else None
             for found in _VALUE.finditer(text)]
    values = list(root.iter("ANNOTATION_VALUE"))
    if len(values) != len(spans):
        raise ValueError(f"{name}: the ANNOTATION_VALUE elements could not be located in the "
                         f"text ({len(values)} parsed, {len(spans)} found)")
    index = {id(value): k for k, value in enumerate(values)}
    cues, documents, where, names = [], [], [], []
    for element in _chosen_tiers(root, name, tier):
        names.append((element.get("PARTICIPANT") or "").strip() or element.get("TIER_ID", ""))
        first = len(cues)
        for alignable in element.iter("ALIGNABLE_ANNOTATION"):
            value = alignable.find("ANNOTATION_VALUE")
            span = spans[index[id(value)]] if value is not None else None
            if span is None or not text[span[0]:span[1]].strip():
                continue
            start, end = (slots.get(alignable.get(key)) for key in
                          ("TIME_SLOT_REF1", "TIME_SLOT_REF2"))
            if start is not None and end is not None and end < start:
                raise ValueError(f"{name}: annotation {shown(alignable.get('ANNOTATION_ID'))} "
                                 f"ends ({end:g} s) before it starts ({start:g} s)")
            cues.append(Cue(start, end, split_tokens(text[span[0]:span[1]], markup=True)))
            where.append(span)
        documents.append(list(range(first, len(cues))))
    return Transcript("eaf", tuple(cues), {**meta, "documents": documents, "tiers": names,
                                           "eaf": {"text": text, "spans": where}})


def _parse(text: str, name: str) -> ElementTree.Element:
    try:
        root = ElementTree.fromstring(text.encode("utf-8"))
    except ElementTree.ParseError as error:
        line, column = error.position
        raise ValueError(f"{name}:{line}: not well-formed XML (column {column + 1}; "
                         f"{str(error).split(':')[0]})") from None
    if root.tag != "ANNOTATION_DOCUMENT":
        raise ValueError(f"{name}: not an ELAN document (its root is {shown(root.tag)}, not "
                         f"ANNOTATION_DOCUMENT)")
    return root


def _time_slots(root: ElementTree.Element, name: str) -> dict[str, float | None]:
    """Each time slot's time in seconds (None where ELAN left it unaligned)."""
    slots: dict[str, float | None] = {}
    for slot in root.iter("TIME_SLOT"):
        value = slot.get("TIME_VALUE")
        try:
            milliseconds = int(value) if value is not None else None
        except ValueError:
            raise ValueError(f"{name}: time slot {shown(slot.get('TIME_SLOT_ID'))} has "
                             f"TIME_VALUE {shown(value)}, not milliseconds") from None
        if milliseconds is not None and not 0 <= milliseconds <= 10 ** 13:
            raise ValueError(f"{name}: time slot {shown(slot.get('TIME_SLOT_ID'))} has "
                             f"TIME_VALUE {milliseconds}, out of range")
        slots[slot.get("TIME_SLOT_ID", "")] = None if milliseconds is None else \
            milliseconds / 1000
    return slots


def _chosen_tiers(root: ElementTree.Element, name: str,
                  wanted: str | None) -> list[ElementTree.Element]:
    """The tier named `wanted`, else every independent tier not of remarks."""
    tiers = root.findall("TIER")
    if wanted is not None:
        found = [t for t in tiers if t.get("TIER_ID") == wanted]
        if not found:
            names = ", ".join(shown(t.get("TIER_ID")) for t in tiers) or "none"
            raise ValueError(f"{name}: no tier named {shown(wanted)} (its tiers: {names})")
        return found
    return [t for t in tiers if t.get("PARENT_REF") is None
            and not _ASIDE_TIER.search(t.get("TIER_ID", ""))]


def dump_eaf(transcript: Transcript) -> str:
    """The document read, each restored annotation's text written in place."""
    source = transcript.meta.get("eaf")
    if source is None or len(source["spans"]) != len(transcript.cues):
        raise ValueError("an ELAN document is written from the one it was read from; convert "
                         "to text or json instead")
    return spliced(source["text"], [(start, end, cue.text) for (start, end), cue
                                     in zip(source["spans"], transcript.cues)])
