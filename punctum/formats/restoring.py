"""Restoring a transcript across cue boundaries, and converting it to another format."""

from __future__ import annotations

import heapq
import html
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace

import numpy as np

from punctum.formats import ass, whispercpp
from punctum.formats.annotations import (
    NONE,
    Annotations,
    annotated_cue,
    continues_dialogue,
    find_annotations,
    token_voices,
    voice_speaker,
    voice_turns,
)
from punctum.formats.rolling import repeated_tokens, without_repeats
from punctum.formats.transcript import (
    INDEPENDENT_CUES,
    LINE_BREAK,
    SUBTITLES,
    WORD_LISTS,
    Cue,
    Token,
    Transcript,
    carry_spaces,
    needs_space,
    shown,
    split_tokens,
)
from punctum.merging import written_labels
from punctum.references import REFERENCE, decode_references, encode_like
from punctum.runtime import RestoreOptions
from punctum.text import NULL, Edges, Labelled, ends_sentence, marks_after_word, parse, render

# Formats whose text holds character references (&amp;): read as the characters they stand
# for, written back as the same references.
_REFERENCED = (*SUBTITLES, "ttml", "eaf")
# Control characters that are not whitespace (which splits tokens), as records may hold.
_CONTROL = re.compile("[\x00-\x08\x0e-\x1b\x7f-\x84\x86-\x9f]+")
# A "<" that subtitle readers take for the start of a tag, a timestamp or a comment.
_TAG_OPENING = re.compile(r"<(?=[A-Za-z/\d!])")

# ----------------------------------------------------------------------------- conversion

def convert(transcript: Transcript, format: str, speakers: bool = True) -> Transcript:
    """The same words, marks and timings in another format.

    Subtitles and Whisper JSON need cue times (text, NeMo and Kaldi text have none). The
    lines roll-up captions repeat are written once (`rolling.without_repeats`) in the
    other format (the same format is the transcript itself).
    Markup, cue settings, identifiers, VTT NOTE/STYLE blocks, the source's JSON records and
    cues with neither text nor times (Vosk partial results) are dropped; line breaks inside
    cues are kept between subtitle formats (from SBV too). To text, each text the model sees
    as a whole becomes one line: a file, or each line of text, NeMo and Kaldi text, each
    recording and channel of a CTM, each result of a transformers pipeline; to Whisper,
    segments follow the leading-space convention and carry words when every token has
    times. WhisperX's, whisper.cpp's and ASS's speakers become voices (to WebVTT) or labels
    (to SubRip and text) unless `speakers` is False (the words alone, as `punctum eval`
    scores them); the speakers' tiers of a TextGrid or ELAN document and the channels of a
    cloud recogniser's response are written on one timeline, by time, labelled so (to text,
    a line per turn, where the tiers hold utterances rather than a word a cue). To Whisper
    JSON, each segment gets its speaker as WhisperX's "speaker".
    """
    if format == transcript.format:
        return transcript
    if format not in ("text", "srt", "vtt", "whisper"):
        raise ValueError(f"can convert to text, srt, vtt or whisper, not {format!r}")
    transcript = without_repeats(transcript)  # roll-up captions: each word written once
    newline = transcript.meta.get("newline", "\n")
    independent_to_text = format == "text" and transcript.format in INDEPENDENT_CUES
    kept = [c for c in transcript.cues  # one line per utterance, empty ones too (Kaldi)
            if c.tokens or c.start is not None or independent_to_text]
    untimed = next((n for n, c in enumerate(kept, start=1) if c.start is None or c.end is None),
                   None) if format in (*SUBTITLES, "whisper") else None
    if untimed is not None:
        text = shown(kept[untimed - 1].text) if kept[untimed - 1].tokens else "no text"
        raise ValueError(f"{transcript.format} cue {untimed} of {len(kept)} ({text}) has no "
                         f"times; cannot write {format}")
    tiers = _tier_speakers(transcript) if format != "text" else None
    if tiers is not None:  # speakers' tiers (TextGrid, ELAN): one timeline, interleaved
        kept.sort(key=lambda c: c.start)
    elif format != "text":
        _one_timeline(transcript, format)
    # character references are text to other formats than subtitles ("don&#39;t" -> "don't"),
    # and WebVTT needs &, < and > written as references ("AT&T" -> "AT&amp;T", "-->")
    # (SubRip has no references: WebVTT's are decoded for it, but for < and >, which would
    # read as tags there; a "<" of other formats' text that would open a tag is written &lt;)
    referenced = transcript.format in _REFERENCED
    write = (_decode_for_srt if referenced and format == "srt"
             else decode_references if referenced and format != "vtt"
             else _escape_vtt if format == "vtt" and transcript.format != "vtt"
             else _escape_srt if format == "srt" and not referenced
             else str)
    # JSON word records that carry their spaces (Whisper's " Don" "'t") are joined as they
    # are written; records that carry none (WhisperX) get a space between words
    spacing = "written" if _carry_spaces([t for c in kept for t in c.tokens if t.extra]) \
        else "records"  # (cues read from text alone, not records, say nothing of it)
    if format == "text" and speakers and _converses(transcript):  # a call's channels,
        return _conversation(transcript, kept, newline, write, spacing)  # speakers' tiers
    if format == "text":  # one line per text the model sees as a whole
        kept_ids = {id(c) for c in kept}
        per_result = "documents" in transcript.meta  # a line for each, empty ones too
        groups = [g for doc in _documents(transcript)
                  if (g := [c for c in map(transcript.cues.__getitem__, doc)
                            if id(c) in kept_ids]) or per_result]
        cues = tuple(Cue(None, None, _plain_tokens(_joined(g), "", False, write, spacing))
                     for g in groups)
        said_by = _speakers_of(transcript.format) if speakers else None
        if said_by is not None:  # WhisperX's, whisper.cpp's: a line per turn
            cues = _with_speakers(cues, [[s for c in g for s in said_by(c)]
                                         for g in groups], format)
        return Transcript("text", cues, {"newline": newline, "trailer": "\n"})
    breaks = format in SUBTITLES and (  # line breaks kept (TTML's: <br/> alone)
        "tags" if transcript.format == "ttml" else transcript.format in (*SUBTITLES, "sbv", "ass"))
    first = " " if format == "whisper" else ""
    pairs = [(c, plain) for c in kept  # a cue whose only tokens were fillers or markup
             if (plain := _plain_tokens(c.tokens, first, breaks, write, spacing))  # ("[noise]")
             or not c.tokens]  # is left out
    cues = tuple(Cue(c.start, c.end, plain) for c, plain in pairs)
    said_by = _speakers_of(transcript.format) if speakers else None
    if tiers is not None and speakers and format in SUBTITLES:
        cues = _with_speakers(cues, [[tiers[id(c)]] for c, _ in pairs], format)
    elif said_by is not None and format in SUBTITLES:
        cues = _with_speakers(cues, [said_by(c) for c, _ in pairs], format)
    elif transcript.format == "vtt" and format == "srt" and speakers:  # voices as labels
        cues = _with_speakers(cues, [_voice_speakers(c) for c, _ in pairs], format)
    meta = {"newline": newline}
    if format == "whisper" and speakers and (tiers is not None or said_by is not None):
        meta["speakers"] = [tiers[id(c)] if tiers is not None else  # (WhisperX's "speaker"
                            next(iter(said_by(c)), None) for c, _ in pairs]  # of a segment)
    return Transcript(format, cues, meta)


def _converses(transcript: Transcript) -> bool:
    """Whether the transcript is a conversation written a line per turn: a cloud
    recogniser's channels, an ELAN document's speakers' tiers, a TextGrid's speakers' tiers
    of utterances (not a word an interval), several of them timed."""
    if transcript.format == "textgrid" and transcript.meta.get("word_tiers"):
        return False
    return transcript.format in (*WORD_LISTS, "eaf", "textgrid") and \
        _tier_speakers(transcript) is not None


def _conversation(transcript: Transcript, kept: Sequence[Cue], newline: str,
                  write: Callable[[str], str], spacing: str) -> Transcript:
    """Text of a recording's channels or speakers' tiers in the order of their times: a line
    for each run of one tier's cues, labelled with its name ("[Channel 0]: ", "[Ann]: "; no
    label for a name a label cannot hold). Each tier's cues keep their order (an untimed cue
    follows the one before it), merged with the others' by time."""
    kept_ids = {id(c) for c in kept}
    names = transcript.meta["tiers"]
    tiers = []
    for number, doc in enumerate(_documents(transcript)):
        timed, start = [], 0.0
        for i in doc:
            cue = transcript.cues[i]
            start = cue.start if cue.start is not None else start
            if id(cue) in kept_ids:
                timed.append((start, number, cue))
        tiers.append(timed)
    lines: list[tuple[int, list[Cue]]] = []
    for _, number, cue in heapq.merge(*tiers, key=lambda item: item[0]):
        if lines and lines[-1][0] == number:
            lines[-1][1].append(cue)
        else:
            lines.append((number, [cue]))
    out = []
    for number, run in lines:
        tokens = _plain_tokens(_joined(run), "", False, write, spacing)
        name = _speaker_name(names[number])
        if tokens and name is not None:
            label = Token(f"[{name}]:", run[0].start, run[0].start)
            tokens = (label, replace(tokens[0], before=" "), *tokens[1:])
        if tokens:
            out.append(Cue(None, None, tuple(tokens)))
    return Transcript("text", tuple(out), {"newline": newline, "trailer": "\n"})


def _tier_speakers(transcript: Transcript) -> dict[int, str] | None:
    """For a TextGrid's or ELAN document's tiers of several speakers (meta "tiers": a name
    per document, several of them timed), each cue's speaker by id(cue); else None."""
    names = transcript.meta.get("tiers")
    documents = transcript.meta.get("documents", ())
    timed = [doc for doc in documents if any(transcript.cues[i].start is not None
                                             for i in doc)]
    if not names or len(names) != len(documents) or len(timed) < 2:
        return None
    return {id(transcript.cues[i]): _speaker_name(name) for doc, name in zip(documents, names)
            for i in doc}


def speakers_tiers(transcript: Transcript) -> bool:
    """Whether the transcript holds several speakers' timed tiers (TextGrid, ELAN), which
    `convert` writes on one timeline."""
    return _tier_speakers(transcript) is not None


def _one_timeline(transcript: Transcript, format: str) -> None:
    """Refuse to write texts timed each on their own as one timed file: a batch of
    transformers pipeline results, each timed from 0 (its cues would go back in time at each
    result), or sherpa-onnx's results of several files."""
    timed = [doc for doc in transcript.meta.get("documents", ())
             if any(transcript.cues[i].start is not None for i in doc)]
    if len(timed) > 1:
        raise ValueError(f"the {transcript.format} batch holds {len(timed)} results, each "
                         f"timed from its own start; one {format} file has one timeline: "
                         f"write --to text (a line per result), or give one result per file")


def _with_speakers(cues: tuple[Cue, ...], per_cue: list[list[str | None]],
                   format: str) -> tuple[Cue, ...]:
    """Cues with their words' speakers (`per_cue`: each cue's, one per word with text; from
    WhisperX's "speaker" of a segment or word, or WebVTT voices) written as WhisperX writes
    them and punctum reads them back: a WebVTT voice opening every cue and wherever the
    speaker changes in one ("<v SPEAKER_00>"), a SubRip or text label where the speaker
    changes ("[SPEAKER_00]: ", a word's on a new line; in text, words of no speaker after a
    speaker's start a line of their own, without a label)."""
    out, previous = [], None
    for cue, speakers in zip(cues, per_cue):
        if len(speakers) != len(cue.tokens):  # (a word's text was joined to another's)
            speakers = [speakers[0] if speakers else None] * len(cue.tokens)
        tokens, voice = [], None
        for k, (token, speaker) in enumerate(zip(cue.tokens, speakers)):
            if speaker is not None and format == "vtt" and (k == 0 or speaker != voice):
                closing = "</v>" if voice is not None else ""
                named = html.escape(speaker, quote=False)  # ("Tom &amp; Jerry")
                token = replace(token, before=f"{closing}<v {named}>" + token.before.lstrip()
                                if k == 0 else f"{closing} <v {named}>")
            elif speaker is not None and format in ("srt", "text") and speaker != previous:
                tokens.append(Token(f"[{speaker}]:", token.start, token.start,
                                    token.before if k == 0 else "\n"))
                token = replace(token, before=" ")
            elif speaker is None and previous is not None and format == "text" and k:
                token = replace(token, before="\n")  # words of no speaker: a line of their own
            voice = speaker if speaker is not None else voice
            previous = speaker if speaker is not None or format == "text" else previous
            tokens.append(token)
        out.append(replace(cue, tokens=tuple(tokens)))
    return tuple(out)


def _speakers_of(format: str) -> Callable[[Cue], list[str | None]] | None:
    """How a format tells the speaker of each word of a cue, if it does."""
    return {"whisper": _word_speakers, "whispercpp": _segment_speakers,
            "ass": _segment_speakers, **dict.fromkeys(WORD_LISTS, _segment_speakers)
            }.get(format)


def _segment_speakers(segment: Cue) -> list[str | None]:
    """The speaker of each word of a whisper.cpp segment with text (--diarize's "speaker";
    "?", unknown, is none)."""
    own = segment.extra.get("speaker") if isinstance(segment.extra, dict) else None
    name = None if isinstance(own, str) and own.strip() == "?" else _speaker_name(own)
    return [name for token in segment.tokens if token.text]


def _word_speakers(segment: Cue) -> list[str | None]:
    """The speaker of each word of a Whisper segment with text (a word's own "speaker", else
    the segment's), as a voice or label may name it (None: none, or one with "<", ">")."""
    own = segment.extra.get("speaker") if isinstance(segment.extra, dict) else None
    return [_speaker_name(token.extra.get("speaker", own) if isinstance(token.extra, dict)
                          else own) for token in segment.tokens if token.text]


def _voice_speakers(cue: Cue) -> list[str | None]:
    """The speaker of each token with text of a WebVTT cue: its voice's ("<v Ann>": Ann)."""
    return [_speaker_name(voice_speaker(voice)) for token, voice in
            zip(cue.tokens, token_voices(cue.tokens)) if token.text]


def _speaker_name(value) -> str | None:
    """A speaker's name as a voice or label may hold it (None: none, or one with "<", ">",
    "[", "]" or a line break)."""
    if not isinstance(value, str) or not value.strip() or any(c in value for c in "<>[]\n"):
        return None
    return " ".join(value.split())


def _joined(cues: Sequence[Cue]) -> list[Token]:
    """The tokens of several cues, a space between cues."""
    tokens = []
    for index, cue in enumerate(cues):
        for k, token in enumerate(cue.tokens):
            tokens.append(replace(token, before=" " + token.before) if index and not k
                          else token)
    return tokens


def _decode_for_srt(text: str) -> str:
    """WebVTT text for SubRip: character references decoded, but that for "<" (a literal
    "<b>" written as a character would be a tag there; "&gt;&gt;" is ">>")."""
    def decoded(reference: re.Match) -> str:
        char = html.unescape(reference.group())
        return reference.group() if char == "<" else char

    return REFERENCE.sub(decoded, text) if "&" in text else text


def _escape_srt(text: str) -> str:
    """Text for SubRip with each "<" that would open a tag there written &lt; ("a<b and
    c>d" would read back as "a" + a tag + "d"; "x < 5" stays as it is)."""
    return _TAG_OPENING.sub("&lt;", text) if "<" in text else text


def _escape_vtt(text: str) -> str:
    """WebVTT text with &, < and > as references (references already there kept as such)."""
    return html.escape(decode_references(text), quote=False)


def _plain_tokens(tokens: Sequence[Token], first: str, line_breaks: bool | str,
                  write: Callable[[str], str] = str,
                  spacing: str = "records") -> tuple[Token, ...]:
    """Tokens without markup or records; gaps become "", " " (or "\\n" when kept).

    A gap is a space when it holds whitespace, a line-break tag or a no-break space, or, with
    spacing "records" (records that carry no spaces: WhisperX), when both tokens are word
    records of a script written with spaces (`needs_space`).
    `write` maps each token's text (decoding or writing character references).
    """
    out: list[Token] = []
    gap, after_record = "", False
    for token in tokens:
        gap += token.before
        if token.text:
            separate = _separates(gap) or (spacing == "records" and after_record
                                           and bool(token.extra)
                                           and needs_space(out[-1].text, token.text))
            space = ("\n" if line_breaks and ("\n" in gap and line_breaks != "tags"
                                                or bool(LINE_BREAK.search(gap))
                                                or "\\N" in gap and "N" in ass.escapes(gap))
                     else " " if separate else "")
            closing, opening = _edge_references(gap, bool(out))
            if closing:
                out[-1] = replace(out[-1], text=out[-1].text + write(closing))
            text = write(opening + token.text)
            out.append(Token(text, token.start, token.end, space if out else first))
            gap, after_record = "", bool(token.extra)
        gap += token.after
    closing, _ = _edge_references(gap + " ", bool(out))
    if closing:
        out[-1] = replace(out[-1], text=out[-1].text + write(closing))
    return tuple(out)


def _edge_references(gap: str, after_token: bool) -> tuple[str, str]:
    """The characters that character references in the markup between two tokens stand for
    ('&quot;' in '&quot;Stop&quot;', markup there since restoring would drop a quote that
    was text), kept when the markup is dropped: those before the gap's first whitespace close
    the token before (`after_token`), those after its last whitespace open the next."""
    if "&" not in gap:
        return "", ""
    parts = re.split(r"\s+", gap)
    head, tail = (parts[0], parts[-1]) if len(parts) > 1 else ("", gap)
    if not after_token:
        head, tail = "", head + tail
    return _referenced(head), _referenced(tail)


def _referenced(markup: str) -> str:
    """The visible characters that the character references in `markup` stand for."""
    return "".join(c for r in REFERENCE.findall(markup)
                   if (c := html.unescape(r)).isprintable() and not c.isspace())


def _carry_spaces(tokens: Sequence[Token]) -> bool:
    """Whether tokens are written with the spaces between them (OpenAI Whisper's " Hello"
    records, subtitle text), not records that carry none (WhisperX's "Hello"): at least
    half of those with text have whitespace before them (`transcript.carry_spaces`)."""
    return carry_spaces([(" " if _separates(t.before) else "") + t.text for t in tokens])


def _separates(gap: str) -> bool:
    """Whether the whitespace and markup between two tokens separate two words: whitespace,
    a line-break tag, ASS's \\N, \\n or \\h, or a reference to a space (&nbsp;, &emsp;,
    &#32;)."""
    return any(char.isspace() for char in gap) or bool(LINE_BREAK.search(gap)) or (
        "\\" in gap and bool(ass.escapes(gap))) or (
        "&" in gap and any(char.isspace() for char in decode_references(gap)))


# ----------------------------------------------------------------------------- restoring

def restore_lines(punctuator, lines: Sequence[str], options: RestoreOptions) -> Iterator[str]:
    """Restored lines of text, each its own text (`Punctuator.restore_lines`), except that a
    line holding annotations (`annotations`: "agent: hello [laughs]") is restored as a cue of
    a text transcript, so that they stay as written. Very long lines are plain text."""
    cues = [None if not options.annotations or punctuator.is_long_line(line)
            else annotated_cue(line) for line in lines]
    plain = [line for line, cue in zip(lines, cues) if cue is None]
    restored_plain = punctuator.restore_lines(plain, options, max(len(plain), 1))
    annotated = tuple(cue for cue in cues if cue is not None)
    restored_cues = iter(restore_transcript(Transcript("text", annotated), punctuator,
                                            options).cues if annotated else ())
    for cue in cues:  # stripped as `Punctuator.restore_lines` strips ("\r" of CRLF lines)
        yield next(restored_plain) if cue is None else next(restored_cues).text.strip()


def restore_paragraphs(punctuator, lines: Sequence[str],
                       options: RestoreOptions) -> Iterator[str]:
    """Restored lines of text whose paragraphs (runs of lines up to a blank one) are each
    one text: context flows across a paragraph's line breaks (a recogniser's segments a line,
    Whisper's .txt, a transcript wrapped at a width), which stay where they were; blank
    lines stay blank. Each line is given stripped, as `restore_lines` gives it."""
    cues = tuple(Cue(None, None, split_tokens(line)) for line in lines)
    documents: list[list[int]] = []
    for index, cue in enumerate(cues):
        if cue.tokens and (index == 0 or not cues[index - 1].tokens):
            documents.append([])
        if cue.tokens:
            documents[-1].append(index)
    if not documents:
        yield from ("" for _ in lines)
        return
    restored = restore_transcript(Transcript("text", cues, {"documents": documents}),
                                  punctuator, options)
    for cue in restored.cues:
        yield cue.text.strip()


def restore_transcript(transcript: Transcript, punctuator,
                       options: RestoreOptions | None = None) -> Transcript:
    """Restore punctuation and casing of every token, with context across cues.

    All tokens of the file (of each line for text and NeMo) go to the model as one word
    sequence; each token is then written as `text.render` of its own words with their labels,
    the sentence state carried over from the token before it. A token without words (a
    dialogue dash) and all timings, cues, whitespace and markup stay as they are, as do quotes
    and brackets at a word's edges (`text.Edges`), as in `Punctuator.restore`.
    In roll-up captions (`rolling`), a line repeated from the cue before goes to the model
    once and each copy is written as the word it repeats.

    Args:
        transcript: any transcript.
        punctuator: a `Punctuator` (or an object with its `predict_batch`, `inventory` and
            `artifact.lexicon`). A pause-aware one is given the pauses between words where
            the transcript has word or cue timings (`word_pauses`), unless options.pauses is
            False.
        options: as for `Punctuator.restore`.

    Returns:
        The transcript with restored token texts.
    """
    options = options or RestoreOptions()
    inventory = punctuator.inventory
    subtitles = transcript.format in _REFERENCED
    copies = repeated_tokens(transcript)  # roll-up captions: each word to the model once
    original, transcript = transcript, _without(transcript, copies)
    model_text = _model_text(decode_references if subtitles else str)
    notes = _notes(original, copies, model_text) if options.annotations else \
        [NONE] * len(transcript.cues)
    groups = [_word_groups(cue, inventory.word_unit == "word", note.kept_out)
              for cue, note in zip(transcript.cues, notes)]
    cache: dict[str, Labelled] = {}
    parsed = [_parse_groups(cue, cue_groups, inventory, model_text, cache, note.kept_out)
              for cue, cue_groups, note in zip(transcript.cues, groups, notes)]
    documents = [d for d in _documents(transcript) if any(len(p) for c in d for p in parsed[c])]
    voices = _voices(transcript) if options.annotations else [frozenset()] * len(
        transcript.cues)
    if options.annotations:
        notes = _same_speaker_goes_on(transcript.cues, notes, documents, voices, model_text,
                                      tagged=transcript.format == "vtt")
    given = [_inner_leads_dropped(Labelled.concat([p for c in doc for p in parsed[c]]))
             for doc in documents]
    sounds = [_marks_after_sounds(transcript, doc, parsed, notes, model_text)
              for doc in documents] if options.annotations else [[]] * len(documents)
    if options.keep_existing:
        given = [_sound_marks_given(g, found, inventory) for g, found in zip(given, sounds)]
    timing = {}
    if options.pauses and getattr(punctuator, "pause_aware", False):
        timing["pauses"] = [word_pauses(transcript, parsed, doc) for doc in documents]
    predictions = punctuator.predict_batch([g.words for g in given], options.batch_size,
                                           **timing)
    texts: dict[tuple[int, int], str] = {}
    for doc, labelled, prediction in zip(documents, given, predictions):
        labelled = written_labels(labelled, prediction, options, inventory,
                                  getattr(punctuator, "post_bias", None),
                                  _turn_ends(doc, parsed, notes, voices),
                                  getattr(punctuator, "capitalised", frozenset()))
        keys = [(c, t) for c in doc for t in range(len(parsed[c]))]
        counts = [len(parsed[c][t]) for c, t in keys]
        rendered = _render_tokens(labelled, counts, punctuator, options)
        texts.update((k, r) for k, r in zip(keys, rendered) if r is not None)
    _share_word_pieces(texts, groups, transcript, model_text)
    texts.update((key, text[:len(text) - len(marks)]) for found in sounds
                 for key, text, marks, word in found if word >= 0 or not options.keep_existing)
    texts.update((key, texts[origin]) for key, origin in copies.items() if origin in texts)
    _controls_kept(texts, original, decode_references if subtitles else str)
    if subtitles:  # characters read from references are written as the same references
        texts = {(c, t): encode_like(text, original.cues[c].tokens[t].text)
                 for (c, t), text in texts.items()}
    return _with_texts(original, texts)


def _model_text(decode: Callable[[str], str]) -> Callable[[str], str]:
    """How the model reads a token's text: decoded (`decode`), without control characters
    inside it ("hel\x01lo" is "hello": a record's word stays one word; `_controls_kept`
    writes them back)."""
    def read(text: str) -> str:
        text = decode(text)
        return text if text.isprintable() else _CONTROL.sub("", text)
    return read


def _controls_kept(texts: dict[tuple[int, int], str], original: Transcript,
                   decode: Callable[[str], str]) -> None:
    """The control characters of restored tokens written back where they stood between the
    letters (`_split_word_pieces`; a token whose letters changed stays as written)."""
    for (c, t), text in texts.items():
        written = original.cues[c].tokens[t].text
        if not written.isprintable() and _CONTROL.search(written):
            written = decode(written)
            pieces = _split_word_pieces(text, _CONTROL.split(written))
            texts[(c, t)] = "".join(p + s for p, s in zip(pieces, _CONTROL.findall(written)
                                                        + [""]))


# Marks written after a sound description's closing bracket ("[laughter].", "(laughs)!?").
_SOUND_MARKS = re.compile(r"[\])]([.,;?!…]+)$")
# Brackets that stand for words not heard ("[inaudible]", "[crosstalk 00:12]"): the marks
# after them are theirs, as after the words they stand for.
_UNHEARD = frozenset({"inaudible", "unintelligible", "indiscernible", "crosstalk", "unclear",
                      "foreign", "blank_audio", "redacted", "?"})


def _voices(transcript: Transcript) -> list[frozenset[int]]:
    """For each cue, the tokens where another speaker starts, as the format tells it."""
    if transcript.format == "vtt":
        return voice_turns(transcript.cues)
    if transcript.format == "whisper":
        return _speaker_turns(transcript.cues)
    if transcript.format in WORD_LISTS:  # a cue's "speaker", within each channel's text
        turns = [frozenset()] * len(transcript.cues)
        for doc in _documents(transcript):
            for i, found in zip(doc, whispercpp.speaker_turns([transcript.cues[i]
                                                               for i in doc])):
                turns[i] = found
        return turns
    if transcript.format in ("whispercpp", "ass"):  # a segment's or line's "speaker"
        return whispercpp.speaker_turns(transcript.cues)
    return [frozenset()] * len(transcript.cues)


def _speaker_turns(cues: Sequence[Cue]) -> list[frozenset[int]]:
    """For each cue of a diarised Whisper file (WhisperX's "speaker" on segments and words),
    the tokens where another speaker starts: the word before ends its sentence."""
    turns, speaker = [], None
    for cue in cues:
        found = set()
        own = cue.extra.get("speaker") if isinstance(cue.extra, dict) else None
        for t, token in enumerate(cue.tokens):
            said_by = token.extra.get("speaker", own) if isinstance(token.extra, dict) \
                else own
            if not token.text or not isinstance(said_by, str):
                continue
            if speaker is not None and said_by != speaker:
                found.add(t)
            speaker = said_by
        turns.append(frozenset(found))
    return turns


def _marks_after_sounds(transcript: Transcript, doc: list[int], parsed, notes,
                        model_text) -> list[tuple[tuple[int, int], str, str, int]]:
    """The sound descriptions of the cues `doc` written with marks after them ("great
    [laughter]. so"): (key, text, the marks, the index of the word before among the doc's
    words, -1 for none). Those marks are the word's before it, where the model's go (not
    twice: "great. [laughter]."): dropped, or with --keep-existing that word's own mark."""
    found, position = [], 0
    for c in doc:
        tokens, kept_out = transcript.cues[c].tokens, notes[c].kept_out
        if not kept_out:  # (most cues: no annotation)
            position += sum(map(len, parsed[c]))
            continue
        for t, words in enumerate(parsed[c]):
            position += len(words)
            if t in kept_out and t not in notes[c].turns and (
                    marks := _SOUND_MARKS.search(model_text(tokens[t].text))) and \
                    not _stands_for_words(tokens, kept_out, t, model_text):
                found.append(((c, t), tokens[t].text, marks.group(1), position - 1))
    return found


def _stands_for_words(tokens, kept_out: frozenset[int], last: int, model_text) -> bool:
    """Whether the bracket group that token `last` closes stands for words not heard
    (`_UNHEARD`: "[inaudible]", "[crosstalk 00:12]")."""
    first = last
    while first > 0 and first - 1 in kept_out and model_text(
            tokens[first].text)[:1] not in "[(":
        first -= 1
    written = " ".join(model_text(tokens[k].text) for k in range(first, last + 1))
    content = written.lower().rstrip(".,;?!…")[1:-1]  # (inside the brackets)
    return any(word in _UNHEARD for word in re.findall(r"[a-z_]+|\?", content))


def _sound_marks_given(given: Labelled, found, inventory) -> Labelled:
    """`given` with the marks written after sound descriptions as the marks of the words
    before them (where those have none)."""
    post, edges = list(given.post), list(given.edges)
    for _, _, marks, word in found:
        mark = marks_after_word(marks, inventory)
        if word >= 0 and post[word] == NULL and mark is not None:
            post[word] = mark.post[0]
            if mark.edges[0] is not None and mark.edges[0].mark:
                edges[word] = replace(edges[word] or Edges(), mark=mark.edges[0].mark.strip(),
                                      mark_of=mark.post[0])
    return replace(given, post=tuple(post), edges=tuple(edges))


def _inner_leads_dropped(given: Labelled) -> Labelled:
    """A document's words without the leads (`Edges.lead`) that parsing each token alone
    gives a token opening with marks ("left ...and"): only its first word opens a text; the
    marks of others stood after a word, where the model's mark goes (dropped, as the marks
    of a token are when they cannot be its own)."""
    if not any(e is not None and e.lead for e in given.edges[1:]):
        return given
    edges = given.edges[:1] + tuple(
        (e.without_lead() if e.before or e.after or e.mark else None)
        if e is not None and e.lead else e for e in given.edges[1:])
    return replace(given, edges=edges)


def _notes(transcript: Transcript, copies: dict, decode) -> list[Annotations]:
    """Each cue's annotations, found in the cues as written (a roll-up cue's repeated line
    is still its first line; a first-line dash after a cue that ended on one opens a turn,
    `annotations.continues_dialogue`); a repeated line's turn was taken where it first
    appeared."""
    cues = transcript.cues
    notes = [find_annotations(cue.tokens, decode) for cue in cues]
    for c in range(1, len(cues)):
        if notes[c].dashes and notes[c - 1].dashes:
            notes[c] = continues_dialogue(cues[c - 1].tokens, notes[c - 1], cues[c].tokens,
                                          notes[c])
    if copies:
        notes = [replace(note, turns=frozenset(t for t in note.turns if (c, t) not in copies))
                 for c, note in enumerate(notes)]
    return notes


def _same_speaker_goes_on(cues: Sequence[Cue], notes: list[Annotations],
                          documents: list[list[int]], voices: list[frozenset[int]],
                          decode, tagged: bool = False) -> list[Annotations]:
    """The notes without the turns of a speaker label that names the speaker of the label
    before it in its document, no other turn between (Zoom writes "John Smith:" on every
    cue of a turn: his sentence goes on; a voice, ">>" or a dash between is another's).
    `tagged`: the cues may hold WebVTT voice tags."""
    notes = list(notes)
    for doc in documents:
        speaker, voice = None, ""
        for c in doc:
            note, tokens, same = notes[c], cues[c].tokens, set()
            voiced = tagged and any("<v" in token.before for token in tokens)
            if not (note.turns or voices[c] or voiced):
                continue
            spoken_in = token_voices(tokens) if voiced else [voice] * len(tokens)
            for t, token in enumerate(tokens):
                if token.text and (spoken_in[t] != voice or t in voices[c]):
                    speaker, voice = None, spoken_in[t]  # another voice: another speaker
                if t in note.turns:
                    label = _label_text(tokens, note.kept_out, t, decode)
                    if label is not None and label == speaker:
                        same.add(t)
                    speaker = label
            if same:
                notes[c] = replace(note, turns=note.turns - same)
    return notes


def _label_text(tokens: Sequence[Token], kept_out: frozenset[int], first: int,
                decode) -> str | None:
    """The speaker a label starting at token `first` names ("john smith" for "John Smith:"),
    or None for a turn that names none (a dash, ">>")."""
    words = []
    for t in range(first, len(tokens)):
        if t not in kept_out:
            return None
        text = decode(tokens[t].text)
        words.append(text)
        if text.endswith(":"):
            name = " ".join(words)[:-1].strip().lower()
            return name or None
        if len(words) > 4:
            return None
    return None


def _turn_ends(doc: list[int], parsed: list[list[Labelled]], notes: list[Annotations],
               voices: list[frozenset[int]]) -> list[int]:
    """Indexes (within the words of the cues `doc`) of the words a speaker's turn follows:
    a speaker label, dash or ">>" (`notes`), or another WebVTT voice (`voices`)."""
    if not any(notes[c].turns or voices[c] for c in doc):
        return []
    ends, position = [], 0
    for c in doc:
        for t, words in enumerate(parsed[c]):
            if (t in notes[c].turns or t in voices[c]) and position:
                ends.append(position - 1)
            position += len(words)
    return ends


def _share_word_pieces(texts: dict[tuple[int, int], str], groups: list[list[list[int]]],
                       transcript: Transcript, model_text) -> None:
    """A word written in pieces (tokens of one group) restored on its first token: each
    piece gets its part of it, in `texts`."""
    for c, cue_groups in enumerate(groups):
        for group in (g for g in cue_groups if len(g) > 1 and (c, g[0]) in texts):
            pieces = [model_text(transcript.cues[c].tokens[t].text) for t in group]
            for t, text in zip(group, _split_word_pieces(texts.pop((c, group[0])), pieces)):
                texts[(c, t)] = text


def _without(transcript: Transcript, tokens: dict[tuple[int, int], tuple[int, int]]
             ) -> Transcript:
    """The transcript with the words of `tokens` (cue, token) emptied: they stay in place
    for timings and layout, but give the model no words."""
    if not tokens:
        return transcript
    return _with_texts(transcript, dict.fromkeys(tokens, ""))


def _word_groups(cue: Cue, spaced_words: bool = True,
                 kept_out: frozenset[int] = frozenset()) -> list[list[int]]:
    """Token indexes of each written word. A JSON word record with nothing before it
    continues the word before, where the cue's records carry their spaces (Whisper splits
    " $1" ",000." and " Don" "'t"); WhisperX's records carry none, and each is a word.
    In subtitle text, a tag between two letters or digits of a word ("<i>hel</i>lo",
    "caf<i>&eacute;</i>") does not split it, in languages written with spaces between words
    (`spaced_words`). Annotations (`kept_out`) are groups of their own."""
    spaced = any(t.extra for t in cue.tokens) and _carry_spaces(cue.tokens)  # (records)
    groups: list[list[int]] = []
    for t, token in enumerate(cue.tokens):
        previous = cue.tokens[t - 1] if t else None
        if previous is not None and previous.text and token.text and not (
                kept_out and (t in kept_out or t - 1 in kept_out)) and (
                (spaced and not previous.after and not token.before) if token.extra
                else spaced_words and _tagged_piece(previous, token)):
            groups[-1].append(t)
        else:
            groups.append([t])
    return groups


def _tagged_piece(previous: Token, token: Token) -> bool:
    """Whether subtitle text continues the word before it across markup alone, a letter or
    digit on each side (not a dialogue dash or quote before a tag: "-<i>so</i>")."""
    gap = previous.after + token.before
    left, right = decode_references(previous.text)[-1:], decode_references(token.text)[:1]
    return (bool(gap) and not _separates(gap) and left.isalnum() and right.isalnum()
            and needs_space(left, right))


def _parse_groups(cue: Cue, groups: list[list[int]], inventory, model_text,
                  cache: dict[str, Labelled] | None = None,
                  kept_out: frozenset[int] = frozenset()) -> list[Labelled]:
    """Per token, its words: a group's words on its first token, none on the others nor on
    annotations (`kept_out`; `cache`: text -> parse, shared by the cues of a file, whose
    words repeat)."""
    cache = {} if cache is None else cache

    def parsed_text(text: str) -> Labelled:
        if text not in cache:
            cache[text] = parse(model_text(text), inventory)
        return cache[text]

    parsed = []
    for group in groups:
        if group[0] in kept_out:
            parsed.append(parsed_text(""))
            continue
        parsed.append(parsed_text("".join(cue.tokens[t].text for t in group)))
        parsed.extend(parsed_text("") for _ in group[1:])
    return parsed


def _split_word_pieces(rendered: str, pieces: list[str]) -> list[str]:
    """A restored word cut back into the pieces it was written in ("$1,000." -> "$1",
    ",000."): each piece keeps its letters with their new case, marks added before the
    word go to the first piece and marks after it to the last. When the word itself
    changed (its letters do not line up), the pieces stay as they were."""
    joined = "".join(pieces)
    core = _core_span(joined)
    new = _core_span(rendered)
    if joined[core[0]:core[1]].lower() != rendered[new[0]:new[1]].lower():
        return pieces
    # the characters around the core that the restored word still has ("👍🏽" of "ok👍🏽.")
    # stay in their pieces too; only what was added goes to the first or last piece
    head, tail = joined[:core[0]], joined[core[1]:]
    low = 0 if rendered[:new[0]].endswith(head) else core[0]
    high = len(joined) if rendered[new[1]:].startswith(tail) else core[1]
    begin, finish = new[0] - (core[0] - low), new[1] + (high - core[1])
    out, position = [], 0
    for k, piece in enumerate(pieces):
        start, end = (min(max(x, low), high) for x in (position, position + len(piece)))
        position += len(piece)
        part = rendered[begin + start - low:begin + end - low]
        if k == 0:
            part = rendered[:begin] + part
        if k == len(pieces) - 1:
            part = part + rendered[finish:]
        out.append(part)
    return out


def _core_span(text: str) -> tuple[int, int]:
    """[start, end) of text between its first and last letter or digit."""
    alnum = [i for i, char in enumerate(text) if char.isalnum()]
    return (alnum[0], alnum[-1] + 1) if alnum else (0, 0)


def word_pauses(transcript: Transcript, parsed, doc: list[int]) -> np.ndarray:
    """(n_words,) seconds of silence after each word of the cues `doc` (NaN where unknown),
    for a PauseAware model.

    A token's times are its own (word-timed Whisper and Vosk files) or, for subtitles, the
    cue's start for its first token with words and the cue's end for its last one; the pause
    after a token's last word is the next token's start minus its end. Words inside a token
    and tokens without times have no pause.
    """
    spans: list[tuple[int, float | None, float | None]] = []  # (n_words, start, end)
    for c in doc:
        cue = transcript.cues[c]
        with_words = [t for t in range(len(cue.tokens)) if len(parsed[c][t])]
        for k, t in enumerate(with_words):
            token = cue.tokens[t]
            start = token.start if token.start is not None else (
                cue.start if t == with_words[0] else None)
            following = with_words[k + 1] if k + 1 < len(with_words) else len(cue.tokens)
            ends = [cue.tokens[j].end for j in range(t, following)  # a word's later pieces
                    if cue.tokens[j].end is not None and (j == t or cue.tokens[j].text)]
            end = ends[-1] if ends else (cue.end if t == with_words[-1] else None)
            spans.append((len(parsed[c][t]), start, end))
    out = np.full(sum(n for n, _, _ in spans), np.nan)
    position = 0
    for (n, _, end), (_, start, _) in zip(spans, spans[1:]):
        position += n
        if end is not None and start is not None:
            out[position - 1] = max(start - end, 0.0)
    return out


def _with_texts(transcript: Transcript, texts: dict[tuple[int, int], str]) -> Transcript:
    """The transcript with token (cue index, token index) written as texts[...]."""
    cues = []
    for c, cue in enumerate(transcript.cues):  # constructors: replace() costs 6 us a call
        tokens = tuple(
            Token(texts[(c, t)], token.start, token.end, token.before, token.after, token.extra)
            if (c, t) in texts else token for t, token in enumerate(cue.tokens))
        cues.append(Cue(cue.start, cue.end, tokens, cue.identifier, cue.settings, cue.extra))
    return replace(transcript, cues=tuple(cues))


def _documents(transcript: Transcript) -> list[list[int]]:
    """Cue indexes of each text the model sees as a whole."""
    if "documents" in transcript.meta:  # set by the reader (transformers pipeline results)
        return transcript.meta["documents"]
    indexes = list(range(len(transcript.cues)))
    if transcript.format in INDEPENDENT_CUES:
        return [[i] for i in indexes]
    if transcript.format == "ctm":  # one text per recording and channel, as the file orders them
        by_key: dict[str, list[int]] = {}
        for i, cue in enumerate(transcript.cues):
            by_key.setdefault(cue.identifier, []).append(i)
        return list(by_key.values())
    return [indexes]


def _render_tokens(labelled: Labelled, counts: list[int], punctuator,
                   options: RestoreOptions) -> list[str | None]:
    """Each token's words rendered with their labels (None for a token without words)."""
    inventory = punctuator.inventory
    style = {"lexicon": punctuator.artifact.lexicon,
             "sentence_case": options.sentence_case and options.case}
    if inventory.word_unit == "word":  # words joined by spaces: render once, then cut
        words = render(labelled, inventory, **style).split(" ")
        if len(words) == len(labelled):
            ends = np.cumsum(counts).tolist()
            return [" ".join(words[end - count:end]) if count else None
                    for count, end in zip(counts, ends)]
    sentence_start, offset, out = True, 0, []
    for count in counts:
        if not count:
            out.append(None)
            continue
        piece = _slice(labelled, offset, offset + count)
        out.append(render(piece, inventory, sentence_start=sentence_start, **style))
        sentence_start = ends_sentence(piece, len(piece) - 1, inventory)
        offset += count
    return out


def _slice(labelled: Labelled, start: int, stop: int) -> Labelled:
    return labelled.slice(start, stop)
