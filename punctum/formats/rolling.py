"""Roll-up captions: cues that start with the last words of the cue before.

YouTube's automatic captions (as yt-dlp writes them) and broadcast roll-up captions show each
line more than once: first as the new line of a cue, then as the first line(s) of the next
cues while new lines appear below (YouTube also shows it alone for 10 ms in between).
Restored as written, the model would read every line twice or more ("we're going to we're
going to talk about") and the copies could get different marks. `repeated_tokens` finds
the copies, so that each word goes to the model once and every copy is written as the word
it repeats; `without_repeats` drops them where a transcript becomes another format or is
resegmented, so that each word is written once.

The rule: a cue repeats the longest run of words (compared as written) that ends the cue
before it (the last one with words) and starts it: the lines rolled up, or the words of a
line that grows word by word (paint-on captions). A file is roll-up when at least two cues,
and at least half of the cues that show new words, show them after words they repeat; in
any other file nothing is a copy (a line said twice in ordinary subtitles, a karaoke cue
repeating its line with one word highlighted, stays as written).
"""

from __future__ import annotations

from dataclasses import replace

from punctum.formats.transcript import SUBTITLES, Cue, Token, Transcript

_MAX_OVERLAP = 200  # words a cue may repeat (captions hold 2-3 lines: some 30 words)


def repeated_tokens(transcript: Transcript) -> dict[tuple[int, int], tuple[int, int]]:
    """{(cue, token): (cue, token) of the word it repeats, the first of its copies} for a
    file of roll-up captions (see the module docstring); {} for any other file."""
    if transcript.format not in SUBTITLES:
        return {}
    copies: dict[tuple[int, int], tuple[int, int]] = {}
    rolled = candidates = 0
    previous: tuple[int, list[int]] | None = None  # a cue with words and its word tokens
    for c, cue in enumerate(transcript.cues):
        words = [t for t, token in enumerate(cue.tokens) if token.text]
        if not words:
            continue
        if previous is not None:
            p, before = previous
            count = _overlap(transcript.cues[p], before, cue, words)
            for t, origin in zip(words[:count], before[len(before) - count:]):
                copies[(c, t)] = copies.get((p, origin), (p, origin))
            candidates += count < len(words)  # a cue that shows new words
            rolled += 0 < count < len(words)  # ... after words it repeats
        previous = (c, words)
    return copies if rolled >= 2 and 2 * rolled >= candidates else {}


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


def _overlap(before_cue: Cue, before: list[int], cue: Cue, words: list[int]) -> int:
    """How many of the first words of `cue` are the last words of `before_cue` (the longest
    such run; 0 if none)."""
    old = [before_cue.tokens[t].text for t in before[-_MAX_OVERLAP:]]
    new = [cue.tokens[t].text for t in words[:_MAX_OVERLAP]]
    for count in range(min(len(old), len(new)), 0, -1):
        if old[len(old) - count:] == new[:count]:
            return count
    return 0
