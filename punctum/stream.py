"""`Stream`: words restored as they arrive, each final once enough right context follows
(the on-device paper's streaming use); `Punctuator.stream()` makes one.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from punctum.filling import MarkCounts, counted_marks
from punctum.merging import (
    goes_on_after,
    writes_case,
    written_labels,
)
from punctum.restored import Prediction, Restored, RestoreOptions
from punctum.text import (
    LOWER,
    NULL,
    Labelled,
    count_open_brackets,
    count_straight_quotes,
    ends_sentence,
    holds_word,
    is_symbol,
    marks_after_word,
    parse,
    quotes_its_mark,
    render,
    whitespace_tokens,
    wordless_tokens,
    written_cases,
)

if TYPE_CHECKING:
    from punctum.runtime import Punctuator

_DEEP = 1 << 20  # a bracket depth no text closes: count_open_brackets without its floor


def _depth_before_last_word(text: str, opened: int, inventory) -> int:
    """The brackets open before the last token of `text` that holds a word, `opened` before
    it: where that word is read again from when a feed brings its marks ("great:)" + "?",
    whose emoticon closes no bracket when none is open)."""
    if not any(c in text for c in "()[]{}"):  # (most feeds: no bracket opens or closes)
        return opened
    tokens = whitespace_tokens(text)
    last = next((i for i in range(len(tokens) - 1, -1, -1)
                 if holds_word(tokens[i], inventory)), 0)
    while last > 0 and _only_opens(tokens[last - 1]):  # "( hi": the "(" is written with it
        last -= 1
    if not any(holds_word(token, inventory) for token in tokens[:last]):
        last = 0  # what stands before a text's first word is written with it
    return count_open_brackets(" ".join(tokens[:last]), opened, inventory)


def _only_opens(token: str) -> bool:
    """Whether a token holds only opening brackets and quotes ("(", "“[", '"'), which are
    written with the word after them."""
    return all(unicodedata.category(c) in ("Ps", "Pi") or c in "\"'" for c in token)


class Stream:
    """Restores words as they arrive: each word is finalised once `lookahead` words of right
    context have followed it (the on-device paper's streaming use), the rest at `flush()`.

    Feed text or word lists; each call returns the finalised output pieces (words with their
    marks and casing) in order. Joining all pieces with spaces gives the restored text.
    `feed_detailed` / `flush_detailed` return the same as one typed result (or None).
    With lookahead 0 every word is final as soon as it is fed, so nothing is left for
    `flush()` to close: the last word keeps the mark the model gave it without right context.
    A sentence's first word is final before its end is known, so a stream writes no opening
    mark the input did not have (Spanish ¿ ¡; `restore` does, `text.open_sentences`), and
    with lookahead 0 a title is final before the name after it, so it gets no period (Mr
    Smith; lookahead >= 1 writes Mr. Smith, as `restore` does).
    """

    def __init__(self, punctuator: Punctuator, lookahead: int,
                 options: RestoreOptions) -> None:
        if isinstance(lookahead, bool) or not isinstance(lookahead, int) or lookahead < 0:
            raise ValueError(f"lookahead must be an int >= 0, got {lookahead!r}")
        self.punctuator = punctuator
        self.lookahead = lookahead
        self.options = options
        self.context_words = max(8, punctuator.windows.size // 2)
        self._pending: list[Labelled] = []
        self._context: tuple[str, ...] = ()
        self._sentence_start = True
        self._wordless = ""  # tokens without words (":)", "(") fed when nothing was pending
        self._deferred = ""  # feeds without words since the last one with words
        self._quotes = 0  # straight quotes (") fed so far: an odd count leaves one open
        self._after_pause = False  # the last final word kept a mark that ends no sentence
        self._cased = False  # the words fed so far write case (`writes_case`)
        self._marks = MarkCounts()  # marks of the final words, given and predicted
        self._words_fed = 0
        self._quoted_end = False  # the last final word ends in a quoted ! or ?
        self._brackets = 0  # brackets open after the text fed so far
        self._before_last = 0  # and before the last pending word (read again with marks)
        # a final last word's (mark the input gave it, the model's label), counted with the
        # next feed, which may bring its mark (`_close_final_word`)
        self._unmarked: tuple[str, str] | None = None

    def feed(self, text: str | Sequence[str]) -> list[str]:
        """Add text (or words); return the pieces that are now final."""
        return self._pieces(self.feed_detailed(text))

    def flush(self) -> list[str]:
        """Finalise everything still pending (end of the stream), closing the text (its last
        word gets a sentence-final mark; with lookahead 0 nothing is pending)."""
        return self._pieces(self.flush_detailed())

    def feed_detailed(self, text: str | Sequence[str]) -> Restored | None:
        """Like `feed`: the words now final as one typed result, None when there are none."""
        if not isinstance(text, str):
            words = None if isinstance(text, (bytes, bytearray)) else _words_of(text)
            if words is None:
                raise TypeError(f"feed expects a str or a sequence of str, got "
                                f"{type(text).__name__}")
            text = " ".join(words)
        inventory = self.punctuator.inventory
        if not any(holds_word(token, inventory) for token in whitespace_tokens(text)):
            self._deferred += text + " "  # no word: nothing can become final; read with the
            return None  # next words once (feeding thousands of ":)" alone stays linear)
        text, self._deferred = self._deferred + text, ""
        return self._kept_on_error(self._feed, text)

    def _kept_on_error(self, step, *args):
        """`step(*args)`, the stream's state as it was when it raises (a rejected feed, a
        lone surrogate or a model error, leaves the words fed before it to come out)."""
        saved = {**self.__dict__, "_pending": list(self._pending)}
        try:
            return step(*args)
        except BaseException:
            self.__dict__.update(saved)
            raise

    def _feed(self, text: str) -> Restored | None:
        lead = ""
        if not self._pending and self._words_fed and self.options.keep_existing:
            lead, text = self._leading_marks(text)  # the final word's, which cannot take them
            self._close_final_word(lead)
        result = self._feed_words(text)
        if not lead:
            return result
        if result is None:
            self._wordless = lead + " " + self._wordless
            return None
        return replace(result, text=lead + " " + result.text, lead=lead)

    def _leading_marks(self, text: str) -> tuple[str, str]:
        """(the marks that open `text` before its first word, as written; the rest): with
        nothing pending (lookahead 0) they follow a final word, so they are kept as pieces of
        their own ("came", ";"), as --keep-existing keeps them, with the tags and emoticons
        among them ("<unk> ."; quotes and brackets, which parse keeps beside the next word,
        stay in the rest)."""
        inventory = self.punctuator.inventory
        tokens = whitespace_tokens(text)
        count = 0
        for token in tokens:
            if holds_word(token, inventory) or (wordless_tokens(token, inventory)
                                                 and not is_symbol(token, inventory)):
                break
            count += 1
        if not count:
            return "", text
        return " ".join(tokens[:count]), " ".join(tokens[count:])

    def _close_final_word(self, lead: str) -> None:
        """With lookahead 0, the last final word's mark comes with the next feed (`lead`,
        "" for none): it decides whether the next word starts a sentence ("We left" + ". then"
        -> "Then") and counts toward the marks the text writes, with the model's label for
        that word (held back by `_finalise`)."""
        inventory = self.punctuator.inventory
        given = marks_after_word(lead, inventory) if lead else None
        if given is not None:
            self._sentence_start = ends_sentence(given, 0, inventory)
            self._after_pause = goes_on_after(given, given, 0, inventory)
            self._quoted_end = False
        if self._unmarked is not None:
            own, model = self._unmarked
            brought = counted_marks(given)[0] if given is not None else NULL
            self._marks += MarkCounts.of((own if own != NULL else brought,), (model,),
                                         inventory.sentence_final)
            self._unmarked = None

    def _feed_words(self, text: str) -> Restored | None:
        stripped = text.lstrip()
        again = self._wordless  # text fed before, parsed again with this feed
        took_word = bool(self._pending and stripped) and (
            not stripped[0].isalnum()  # ", world", ")", or an emoticon that starts with one:
            or not holds_word(stripped.split(None, 1)[0], self.punctuator.inventory))  # "8-)"
        if took_word:
            again = self._take_last_word() + " "  # what follows it: ", world", ")"
        open_quote = (self._quotes - count_straight_quotes(again)) % 2 == 1  # before `again`
        self._quotes += count_straight_quotes(text)
        inventory = self.punctuator.inventory
        opened = self._before_last if took_word else max(
            self._brackets - (count_open_brackets(again, _DEEP, inventory) - _DEEP), 0)
        self._brackets = count_open_brackets(again + text, opened, inventory)
        parsed = parse(again + text, inventory, open_quote=open_quote, open_brackets=opened)
        if len(parsed):
            self._before_last = _depth_before_last_word(again + text, opened, inventory)
            self._pending.append(parsed)
            self._wordless = ""
            first = self._words_fed - took_word == 0  # the stream's first word opens `parsed`
            self._cased = self._cased or writes_case(parsed, start=int(first))
            self._words_fed += len(parsed) - took_word
        elif wordless := " ".join(wordless_tokens(text, inventory)):
            self._wordless += wordless + " "  # nothing pending: before the next word
        return self._finalise(keep=self.lookahead, closing=False)

    def _take_last_word(self) -> str:
        """The last pending word as written, taken off the pending words, to be parsed again
        with a feed that starts with marks, quotes or brackets, as one text would be (a word
        already final cannot change, a pending one can)."""
        inventory = self.punctuator.inventory
        last = self._pending.pop()
        if len(last) > 1:
            self._pending.append(last.slice(0, len(last) - 1))
        return render(last.slice(len(last) - 1), inventory)

    def flush_detailed(self) -> Restored | None:
        """Like `flush`, as one typed result (None when nothing was pending)."""
        return self._kept_on_error(self._flush)

    def _flush(self) -> Restored | None:
        if self._deferred:
            deferred, self._deferred = self._deferred, ""
            self._feed(deferred)  # no words: nothing becomes final (its marks kept with
            # --keep-existing when they follow a final word: `_leading_marks`)
        if self._wordless and not self._pending:  # only such tokens after the last word
            wordless, self._wordless = self._wordless.rstrip(), ""
            empty = self.punctuator.predict(())
            return Restored(wordless, Labelled((), (), ()), empty, ())
        return self._finalise(keep=0, closing=True)

    def _pieces(self, part: Restored | None) -> list[str]:
        if part is None:
            return []
        return part.text.split(" ") if self.punctuator.inventory.word_unit == "word" \
            else [part.text]

    def _finalise(self, keep: int, closing: bool) -> Restored | None:
        """Render all pending words but the last `keep`; `closing`: the end of the stream
        (the last word may get a closing mark), never so for a feed, even with keep 0."""
        pending = Labelled.concat(self._pending)
        n_final = len(pending) - keep
        if n_final <= 0:
            return None
        words = self._context + pending.words
        prediction = self.punctuator.predict(words)
        tail = _slice_prediction(prediction, len(self._context))
        inventory = self.punctuator.inventory
        labelled = written_labels(pending, tail, self.options, inventory,
                                  self.punctuator.post_bias,
                                  capitalised=self.punctuator.capitalised, closing=closing,
                                  earlier=self._marks, cased=self._cased,
                                  after_pause=self._after_pause, opening=False)
        done = labelled.slice(0, n_final)
        if self.options.keep_existing:
            counted = counted_marks(pending)[:n_final]  # (the last pending word's: later)
            self._marks += MarkCounts.of(counted, tail.post[:len(counted)],
                                         inventory.sentence_final)
        self._after_pause = goes_on_after(done, pending, n_final - 1, inventory)
        # the last word's mark may come with the next feed (`_close_final_word`)
        if n_final == len(pending):  # its own mark ("so." fed) counts with the next feed
            last = pending.slice(n_final - 1)
            self._unmarked = (counted_marks(Labelled.concat([last, last]))[0],
                              tail.post[n_final - 1])
        else:
            self._unmarked = None
        rest = pending.slice(n_final)  # waiting words keep only what the input gave them
        result = self._render(done, _slice_prediction(tail, 0, n_final))
        self._pending = [rest] if len(rest) else []
        self._context = (self._context + done.words)[-self.context_words:]
        return result

    def _render(self, labelled: Labelled, prediction: Prediction) -> Restored:
        inventory = self.punctuator.inventory
        sentence_case = self.options.sentence_case and self.options.case
        start = self._sentence_start and not (self._quoted_end and labelled.case[0] == LOWER)
        text = render(labelled, inventory, lexicon=self.punctuator.artifact.lexicon,
                      sentence_case=sentence_case, sentence_start=start)
        cases = written_cases(labelled, inventory, sentence_case=sentence_case,
                              sentence_start=start, lexicon=self.punctuator.artifact.lexicon)
        self._sentence_start = ends_sentence(labelled, len(labelled) - 1, inventory)
        self._quoted_end = quotes_its_mark(labelled, len(labelled) - 1)  # '"Stop!" he'
        return Restored(text, labelled, prediction, cases)


def _words_of(words) -> list[str] | None:
    """The words of an iterable of str (a list, a tuple, a generator), None for anything
    else (None, a number, bytes among them)."""
    try:
        words = list(words)
    except TypeError:
        return None
    return words if all(isinstance(word, str) for word in words) else None


def _slice_prediction(prediction: Prediction, start: int, stop: int | None = None
                      ) -> Prediction:
    part = slice(start, stop)
    return replace(prediction, words=prediction.words[part], post=prediction.post[part],
                   case=prediction.case[part], post_probs=prediction.post_probs[part],
                   case_probs=prediction.case_probs[part])
