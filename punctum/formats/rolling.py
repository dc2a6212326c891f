"""Roll-up captions: cues that start with the last words of the cue before.

YouTube's automatic captions (as yt-dlp writes them, WebVTT or TTML, whose lines <br/> breaks)
and broadcast roll-up captions show each
line more than once: first as the new line of a cue, then as the first line(s) of the next
cues while new lines appear below (YouTube also shows it alone for 10 ms in between).
Restored as written, the model would read every line twice or more ("we're going to we're
going to talk about") and the copies could get different marks. `repeated_tokens` finds
the copies, so that each word goes to the model once and every copy is written as the word
it repeats; `without_repeats` drops them where a transcript becomes another format or is
resegmented, so that each word is written once.

The rule: a cue repeats the most whole word lines (lines holding words, compared word for
word as written) that end the cue before it (the last one with words) and start it: the
lines rolled up, or the line a paint-on caption grows word by word (a cue that only starts
with the last words of a line repeats nothing: "be there" / "there was"). A file is
roll-up when at least two cues, and at least half of the cues that show new words, show
them after lines they repeat, and either two of them show the new words on a line of their
own (lines rolled up) or, where every one goes on on the line it repeats (paint-on), three
do and two thirds of the cues that show new words; in any other file nothing is a copy (a
line said twice in ordinary subtitles, a refrain, a karaoke cue repeating its line with one
word highlighted, short subtitles that happen to start with the cue before: "wait" / "wait
for me" / "no" / "no way", stays as written).
"""

from __future__ import annotations

from dataclasses import replace

from punctum.formats.transcript import LINE_BREAK, SUBTITLES, Cue, Token, Transcript

_MAX_OVERLAP = 200  # words a cue may repeat (captions hold 2-3 lines: some 30 words)


def repeated_tokens(transcript: Transcript) -> dict[tuple[int, int], tuple[int, int]]:
    """{(cue, token): (cue, token) of the word it repeats, the first of its copies} for a
    file of roll-up captions (see the module docstring); {} for any other file."""
    if transcript.format not in (*SUBTITLES, "ttml"):
        return {}
    tagged = transcript.format == "ttml"  # (lines broken by <br/>; a newline is a space)
    copies: dict[tuple[int, int], tuple[int, int]] = {}
    rolled = candidates = on_new_lines = 0
    previous: tuple[int, list[list[int]]] | None = None  # a cue with words, its word lines
    for c, cue in enumerate(transcript.cues):
        lines = _word_lines(cue, tagged)
        if not lines:
            continue
        words = [t for line in lines for t in line]
        if previous is not None:
            p, before = previous
            count = _overlap(transcript.cues[p], before, cue, words)
            origins = [t for line in before for t in line][-count:] if count else []
            for t, origin in zip(words[:count], origins):
                copies[(c, t)] = copies.get((p, origin), (p, origin))
            candidates += count < len(words)  # a cue that shows new words
            rolled += 0 < count < len(words)  # ... after words it repeats
            on_new_lines += 0 < count < len(words) and count in _line_ends(lines)
        previous = (c, lines)
    rolling = rolled >= 2 and 2 * rolled >= candidates and (
        on_new_lines >= 2 or (rolled >= 3 and 3 * rolled >= 2 * candidates))
    return copies if rolling else {}


def _line_ends(lines: list[list[int]]) -> set[int]:
    """How many words the first lines of a cue hold: 1 line, 2 lines, ..."""
    ends, total = set(), 0
    for line in lines:
        total += len(line)
        ends.add(total)
    return ends


def without_repeats(transcript: Transcript) -> Transcript:
    """The transcript without the repeated words of roll-up captions (`repeated_tokens`),
    their markup moved to the next word kept (a voice tag stays open), and without the cues
    that held nothing else (VTT NOTE blocks keep their places)."""
    copies = repeated_tokens(transcript)
    if not copies:
        return transcript
    cues, kept_before = [], []  # kept_before[i]: cues kept among the first i
    for c, cue in enumerate(transcript.cues):
        kept_before.append(len(cues))
        tokens = _kept_tokens(cue, {t for (cc, t) in copies if cc == c})
        if any(token.text for token in tokens) or not any(t.text for t in cue.tokens):
            cues.append(replace(cue, tokens=tokens))
    kept_before.append(len(cues))
    meta = dict(transcript.meta)
    if meta.get("blocks"):
        meta["blocks"] = tuple((kept_before[i], text) for i, text in meta["blocks"])
    return replace(transcript, cues=tuple(cues), meta=meta)


def _kept_tokens(cue: Cue, dropped: set[int]) -> tuple[Token, ...]:
    """The cue's tokens but `dropped`, whose markup and whitespace go before the next one
    kept (or after the last one kept)."""
    kept: list[Token] = []
    pending = ""
    for t, token in enumerate(cue.tokens):
        if t in dropped:
            pending += token.before + token.after
            continue
        kept.append(replace(token, before=pending + token.before) if pending else token)
        pending = ""
    if pending and kept:
        kept[-1] = replace(kept[-1], after=kept[-1].after + pending)
    return tuple(kept)


def _overlap(before_cue: Cue, before: list[list[int]], cue: Cue, words: list[int]) -> int:
    """How many of the first words of `cue` repeat the last word lines of `before_cue` (the
    most lines that do, whole; 0 if none): rolled lines, or the line a paint-on cue grows."""
    new = [cue.tokens[t].text for t in words[:_MAX_OVERLAP]]
    old = [before_cue.tokens[t].text for line in before for t in line]
    best, count = 0, 0
    for line in reversed(before):  # the last line, then the last two, ...
        count += len(line)
        if count > len(new):
            break
        if old[-count:] == new[:count]:
            best = count
    return best


def _word_lines(cue: Cue, tagged: bool = False) -> list[list[int]]:
    """The indexes of the tokens with words on each line of the cue (lines without words
    left out); lines end at line feeds, or at line-break tags where `tagged` (TTML)."""
    lines: list[list[int]] = []
    current: list[int] = []
    for t, token in enumerate(cue.tokens):
        breaks = LINE_BREAK.search(token.before) if tagged else "\n" in token.before
        if breaks and current:
            lines.append(current)
            current = []
        if token.text:
            current.append(t)
    return lines + [current] if current else lines
