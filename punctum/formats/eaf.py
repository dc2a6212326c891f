"""ELAN annotation documents (.eaf), read and written for `formats`.

    punctum restore -i interview.eaf -o interview.restored.eaf
    punctum restore -i interview.eaf --to text          # a labelled line per turn
    punctum restore -i interview.eaf --text-key Ann     # one tier, named by its TIER_ID

The annotations of the tiers of utterances are restored: the independent tiers (those without
a PARENT_REF: ELAN's tier per speaker), or, where none of those holds utterances (a Toolbox
import's record ids), the dependent tiers that do, their annotations timed through the
annotation they refer to. Each tier is a text of its own, its annotations cues in the order of
their times (a slot without a TIME_VALUE leaves its annotation untimed); `--text-key` names
one tier instead. Tiers named for comments, notes, glosses, translations or remarks stay as
written, as do translations and glosses under a speaker's tier. Only the text of each
restored ANNOTATION_VALUE is written again, in place, with its character references
(``&amp;``), comments and CDATA as written; every other byte stays (a UTF-16 document is
written as UTF-8, its declaration saying so).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ElementTree

from punctum.formats.transcript import (
    ASIDE_TIER,
    Cue,
    Transcript,
    holds_utterances,
    shown,
    split_tokens,
)
from punctum.formats.xmltext import MARKUP, dump_spans, masked, opens_with, parse

# the root element, after any XML declaration and comments
_ROOT = re.compile(r"<ANNOTATION_DOCUMENT[\s>]")
# every ANNOTATION_VALUE in document order: empty (<ANNOTATION_VALUE/>) or with its text
_VALUE = re.compile(r"<ANNOTATION_VALUE\s*/>|<ANNOTATION_VALUE\s*>(.*?)</ANNOTATION_VALUE\s*>",
                    re.DOTALL)


def looks_like_eaf(text: str) -> bool:
    """Whether a text is an ELAN document: its root element is <ANNOTATION_DOCUMENT>."""
    return opens_with(text, _ROOT)


def read_eaf(text: str, name: str, meta: dict, tier: str | None = None) -> Transcript:
    """The annotations of the chosen tiers as cues, a document per tier."""
    root = _parse(text, name)
    slots = _time_slots(root, name)
    spans = [(found.start(1), found.end(1)) if found.group(1) is not None else None
             for found in _VALUE.finditer(masked(text))]
    values = list(root.iter("ANNOTATION_VALUE"))
    if len(values) != len(spans):
        raise ValueError(f"{name}: the ANNOTATION_VALUE elements could not be located in the "
                         f"text ({len(values)} parsed, {len(spans)} found)")
    span_of = {id(value): span for value, span in zip(values, spans)}
    times = _annotation_times(root, slots)
    cues, documents, where, names = [], [], [], []
    for element in _chosen_tiers(root, name, tier, text, span_of):
        names.append((element.get("PARTICIPANT") or "").strip() or element.get("TIER_ID", ""))
        tier_cues = []
        for annotation in _annotations(element):
            span = span_of.get(id(annotation.find("ANNOTATION_VALUE")))
            if span is None or not text[span[0]:span[1]].strip():
                continue
            start, end = times.get(annotation.get("ANNOTATION_ID"), (None, None))
            if start is not None and end is not None and end < start:
                raise ValueError(f"{name}: annotation {shown(annotation.get('ANNOTATION_ID'))} "
                                 f"ends ({end:g} s) before it starts ({start:g} s)")
            tier_cues.append((Cue(start, end, split_tokens(text[span[0]:span[1]], MARKUP)),
                              span))
        if all(cue.start is not None for cue, _ in tier_cues):  # (as said, not as stored)
            tier_cues.sort(key=lambda pair: pair[0].start)
        documents.append(list(range(len(cues), len(cues) + len(tier_cues))))
        cues += [cue for cue, _ in tier_cues]
        where += [span for _, span in tier_cues]
    return Transcript("eaf", tuple(cues), {**meta, "documents": documents, "tiers": names,
                                           "eaf": {"text": text, "spans": where}})


def _parse(text: str, name: str) -> ElementTree.Element:
    root = parse(text, name)
    if root.tag != "ANNOTATION_DOCUMENT":
        raise ValueError(f"{name}: not an ELAN document (its root is {shown(root.tag)}, not "
                         f"ANNOTATION_DOCUMENT)")
    return root


def _annotations(tier: ElementTree.Element) -> list[ElementTree.Element]:
    """A tier's ALIGNABLE_ANNOTATION and REF_ANNOTATION elements, in document order."""
    return [element for annotation in tier.findall("ANNOTATION") for element in annotation
            if element.tag in ("ALIGNABLE_ANNOTATION", "REF_ANNOTATION")]


def _annotation_times(root: ElementTree.Element, slots: dict[str, float | None]
                      ) -> dict[str, tuple[float | None, float | None]]:
    """(start, end) of every annotation by its id: an alignable one's time slots, a
    referring one's its parent's (followed up the chain)."""
    times, refers = {}, {}
    for element in root.iter("ALIGNABLE_ANNOTATION"):
        times[element.get("ANNOTATION_ID")] = tuple(
            slots.get(element.get(key)) for key in ("TIME_SLOT_REF1", "TIME_SLOT_REF2"))
    for element in root.iter("REF_ANNOTATION"):
        refers[element.get("ANNOTATION_ID")] = element.get("ANNOTATION_REF")
    for annotation in refers:
        seen, parent = {annotation}, refers[annotation]
        while parent in refers and parent not in seen:
            seen.add(parent)
            parent = refers[parent]
        times[annotation] = times.get(parent, (None, None))
    return times


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


def _chosen_tiers(root: ElementTree.Element, name: str, wanted: str | None, text: str,
                  span_of: dict) -> list[ElementTree.Element]:
    """The tier named `wanted`, else the tiers of utterances (annotations of several words;
    not tiers of remarks): the independent ones (ELAN's tier per speaker, with the
    independent tiers of their linguistic type whose annotations are single words: a
    speaker's short replies), else dependent ones (a Toolbox import's text under a tier of
    record ids), else every independent tier."""
    tiers = root.findall("TIER")
    if wanted is not None:
        found = [t for t in tiers if t.get("TIER_ID") == wanted]
        if not found:
            names = ", ".join(shown(t.get("TIER_ID")) for t in tiers) or "none"
            raise ValueError(f"{name}: no tier named {shown(wanted)} (its tiers: {names})")
        return found[:1]

    def labels(tier: ElementTree.Element) -> list[str]:
        spans = (span_of.get(id(a.find("ANNOTATION_VALUE"))) for a in _annotations(tier))
        return [text[span[0]:span[1]] for span in spans if span is not None]

    kept = [t for t in tiers if not ASIDE_TIER.search(t.get("TIER_ID", ""))]
    speech = [t for t in kept if holds_utterances(labels(t))]
    independent = [t for t in speech if t.get("PARENT_REF") is None]
    if independent:  # with them, a speaker's tier of one-word replies ("yes", "ok") of the
        types = {t.get("LINGUISTIC_TYPE_REF") for t in independent}  # same linguistic type
        return [t for t in kept if t in independent or (
            t.get("PARENT_REF") is None and t.get("LINGUISTIC_TYPE_REF") in types
            and any(label.strip() for label in labels(t)))]
    return speech or [t for t in kept if t.get("PARENT_REF") is None]


def dump_eaf(transcript: Transcript) -> str:
    """The document read, each restored text written in place."""
    return dump_spans(transcript, "eaf", "an ELAN document")
