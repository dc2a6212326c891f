"""Punctuator: an artifact folder run by ONNX Runtime (no torch).

    from punctum import Punctuator
    punctuator = Punctuator.load()                # the bundled default model
    punctuator.restore("so what do you think i think it's great")
    # -> the text with marks, casing and sentence boundaries restored

Text -> `text.parse` (existing marks and case normalised away unless kept) -> words ->
subwords -> double-overlap windows (`windows.py`) -> ONNX model -> per-word probabilities ->
labels (argmax, moved by the artifact's decision biases: `calibration.py`; names of its
capitalised.json never LOWER) -> `text.render`.
The output's words are always the input's words, in order.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from punctum import artifact as artifacts
from punctum import calibration
from punctum.filling import MarkCounts, counted_marks, fill_only
from punctum.pauses import bucketize
from punctum.text import (
    CAP,
    LOWER,
    MIX,
    NULL,
    UPPER,
    Labelled,
    count_open_brackets,
    count_straight_quotes,
    ends_sentence,
    holds_word,
    is_address,
    is_i,
    is_initialism,
    is_lowercase_initialism,
    is_number_with_ending,
    open_sentences,
    parse,
    quotes_its_mark,
    render,
    whitespace_tokens,
    wordless_tokens,
    written_cases,
)
from punctum.tokenizer import SubwordTokenizer
from punctum.windows import WindowConfig, plan_word_windows, stitch

log = logging.getLogger(__name__)
_DEEP = 1 << 20  # a bracket depth no text closes: count_open_brackets without its floor

# Padded subwords per ONNX Runtime call at most (8 windows of 200, 4 of 400, start and end
# tokens included): bounds the runtime's working memory whatever the window size
# (docs/BENCHMARKS.md, restore memory).
BATCH_SUBWORDS = 1616
# Words from which a line is restored through `Stream` in parts (bounded memory); counted
# in words, not characters, so that restoring the output again takes the same path.
LONG_LINE_WORDS = 32_768
# Characters from which a line in a language written without spaces takes that path, and
# any line four times as long (words of hundreds of characters each: URLs, hashes).
LONG_LINE = 200_000
# Words fed to `Stream` at a time for such a line.
LONG_LINE_PART = 4096


@dataclass(frozen=True)
class RestoreOptions:
    """How text is restored.

    Args:
        case: restore casing (False: words keep the input's own casing).
        keep_existing: keep marks and casing already in the input (default: normalise them
            away first, so that restoring twice gives the same text).
        sentence_case: capitalise the first word of every sentence.
        close_text: end a text with a sentence-final mark (the most probable one) when the
            model left its last word without one; a restored text is a whole text.
        batch_size: windows per ONNX Runtime call at most (see also BATCH_SUBWORDS).
        pauses: give a PauseAware model the pauses between words where the input has word
            or cue timings (`formats.restore_transcript`); False: text alone.
        annotations: transcripts and text files (`formats`, not `Punctuator.restore`):
            speaker labels ("JOHN:"), dialogue dashes, ">>", [sound descriptions] and
            timestamps are kept out of the model and written as they are, and a speaker's
            turn starts a sentence (`formats.annotations`); False: they are read as words.
    """

    case: bool = True
    keep_existing: bool = False
    sentence_case: bool = True
    close_text: bool = True
    batch_size: int = 16
    pauses: bool = True
    annotations: bool = True

    def __post_init__(self) -> None:
        if not 1 <= self.batch_size <= 1024:
            raise ValueError(f"batch_size must be in [1, 1024], got {self.batch_size}")


@dataclass(frozen=True)
class Prediction:
    """Per-word model output.

    Attributes:
        words: the normalised input words, (n,).
        post: predicted mark after each word, (n,).
        case: predicted case of each word, (n,).
        post_probs: (n, n_post) float32 probabilities over `post_labels`.
        case_probs: (n, n_case) float32 probabilities over `case_labels`.
        post_labels, case_labels: the label order of the probability columns.
    """

    words: tuple[str, ...]
    post: tuple[str, ...]
    case: tuple[str, ...]
    post_probs: np.ndarray
    case_probs: np.ndarray
    post_labels: tuple[str, ...]
    case_labels: tuple[str, ...]

    def to_dict(self) -> dict:
        """JSON-ready: one entry per word with its mark, case and their probabilities."""
        return {"words": [
            {"word": w, "mark": p, "case": c,
             "mark_prob": round(float(pp.max()), 4), "case_prob": round(float(cp.max()), 4)}
            for w, p, c, pp, cp in zip(self.words, self.post, self.case, self.post_probs,
                                       self.case_probs)]}


@dataclass(frozen=True)
class Restored:
    """The result of restoring one text.

    Attributes:
        text: the restored text.
        labelled: the labels the text was rendered from (model output merged with the
            options: kept marks, the closing mark).
        prediction: the model's own output and probabilities.
        written_case: the case each word is written in, (n,) (sentence starts capitalised).
    """

    text: str
    labelled: Labelled
    prediction: Prediction
    written_case: tuple[str, ...]

    def to_dict(self) -> dict:
        """JSON-ready: the text and, per word, the mark and case it shows there, with the
        model's probability of each; `model_mark` / `model_case` appear where the model's
        own top label differs (a closing mark, a capitalised sentence start, kept input),
        `abbreviated` where the word is written with an abbreviation's period (Mr., U.S.),
        `written_mark` where its mark is written otherwise than the label's own text (kept
        by --keep-existing: ";" for PERIOD, "..." , "?!"), and `before` / `after` where
        quotes, brackets or tokens without words (":)") are written before or after it (its
        mark goes after the quotes and brackets that close it, unless the input wrote it
        inside them)."""
        p = self.prediction
        post_index = {label: i for i, label in enumerate(p.post_labels)}
        case_index = {label: i for i, label in enumerate(p.case_labels)}
        words = []
        for i, word in enumerate(self.labelled.words):
            mark, case = self.labelled.post[i], self.written_case[i]
            entry = {"word": word, "mark": mark, "case": case,
                     "mark_prob": _probability(p.post_probs[i], post_index.get(mark)),
                     "case_prob": _probability(p.case_probs[i], case_index.get(case))}
            if mark != p.post[i]:
                entry["model_mark"] = p.post[i]
            if case != p.case[i]:
                entry["model_case"] = p.case[i]
            if self.labelled.abbreviated[i]:  # written with its period: "Mr.", "U.S."
                entry["abbreviated"] = True
            if edges := self.labelled.edges[i]:  # quotes, brackets, tokens such as ":)"
                entry |= {k: v for k, v in (("written_mark", edges.written_mark(mark)),
                                            ("before", edges.before), ("after", edges.after))
                          if v}
            words.append(entry)
        return {"text": self.text, "words": words}


def _probability(probs: np.ndarray, index: int | None) -> float | None:
    """probs[index] rounded for JSON; None for a label the model does not predict."""
    return None if index is None else round(float(probs[index]), 4)


def _post_bias(artifact: artifacts.Artifact, labels: tuple[str, ...],
               given: Mapping[str, float] | None) -> np.ndarray | None:
    """(n_post,) decision offsets: `given`, else the artifact's; None when all are zero."""
    if given is None:
        decision = artifact.meta.get("decision") or {}
        source = f"{artifact.path / artifacts.ARTIFACT_FILE}: decision."
        given = (decision.get("post_bias") or {}) if isinstance(decision, dict) else None
        if not isinstance(given, dict):
            raise ValueError(f"{source}post_bias must be an object of mark -> number")
    else:
        source = ""
    try:
        vector = calibration.bias_vector(labels, given)
    except ValueError as error:
        raise ValueError(f"{source}{error}") from None
    return vector if vector.any() else None


def _softmax(logits: np.ndarray) -> np.ndarray:
    shifted = logits - logits.max(axis=-1, keepdims=True)
    exp = np.exp(shifted)
    return (exp / exp.sum(axis=-1, keepdims=True)).astype(np.float32)


class Punctuator:
    """Restores punctuation and casing with an exported model.

    Args:
        artifact: a read artifact folder (see `Punctuator.load`).
        threads: CPU threads (0 = the machine's cores). A call whose windows fill one batch
            runs them with that many ONNX Runtime intra-op threads (lowest latency); a call
            with several batches runs up to `threads` batches at once, each on one thread
            (a second, single-threaded session, opened on first use): the BiLSTM's small
            per-step products parallelise poorly inside one run, so this is faster for bulk
            text (docs/BENCHMARKS.md, restore speed). Results do not depend on it.
        windows: override the artifact's window settings.
        post_bias: mark -> offset added to its log-probability before the argmax (see
            `calibration.py`); None: the artifact's own ("decision" in punctum.json, fitted
            by `punctum calibrate`), {}: none. The probabilities themselves are unchanged.

    Raises:
        ValueError: a bias names an unknown mark or is not a finite number; threads is not
            a whole number from 0 to MAX_THREADS.
    """

    def __init__(self, artifact: artifacts.Artifact, threads: int = 0,
                 windows: WindowConfig | None = None,
                 post_bias: Mapping[str, float] | None = None) -> None:
        check_threads(threads)
        self.artifact = artifact
        self.inventory = artifact.inventory
        self.post_labels = self.inventory.post_labels
        self.case_labels = artifact.case_labels
        self.tokenizer = SubwordTokenizer.load(artifact.tokenizer_file, artifact.label_position)
        self.windows = windows or _window_config(artifact)
        # Windows per ONNX Runtime call at most, whatever batch_size asks ("per_call" in
        # punctum.json's windows; None: no limit of the model's own). See _windows_per_call.
        self.windows_per_call = _windows_per_call(artifact)
        self.session = _open_session(artifact.model_file, threads)
        self.parallel = threads or cpu_count()
        self._pool: tuple[ThreadPoolExecutor, object] | None = None
        _check_outputs(self.session, artifact, len(self.post_labels), len(self.case_labels))
        pauses = artifact.meta.get("pauses") or {}
        self.pause_edges = tuple(pauses["edges"]) if pauses.get("edges") else None
        _check_pause_input(self.session, artifact, self.pause_edges is not None)
        self.post_bias = _post_bias(artifact, self.post_labels, post_bias)
        self.capitalised = artifact.capitalised if CAP in self.case_labels else frozenset()

    @property
    def pause_aware(self) -> bool:
        """Whether the model reads pauses between words (see `predict_batch`)."""
        return self.pause_edges is not None

    @classmethod
    def load(cls, name_or_path: str | Path | None = None, threads: int = 0,
             windows: WindowConfig | None = None,
             post_bias: Mapping[str, float] | None = None) -> Punctuator:
        """Load a bundled model by name ("en-tiny", the default), a folder, or a hub id; an
        ensemble folder gives an `ensemble.EnsemblePunctuator`."""
        artifact = artifacts.read_artifact(artifacts.resolve(name_or_path))
        if artifact.meta["kind"] == artifacts.ENSEMBLE_KIND:
            from punctum.ensemble import EnsemblePunctuator

            return EnsemblePunctuator(artifact, threads, windows, post_bias)
        return cls(artifact, threads, windows, post_bias)

    @property
    def model_files(self) -> tuple[Path, ...]:
        """The ONNX file(s) whose weights make the predictions."""
        return (self.artifact.model_file,)

    # ------------------------------------------------------------------------- prediction

    def predict(self, words: Sequence[str], pauses: Sequence[float] | None = None) -> Prediction:
        """Labels and probabilities for normalised words (see `text.normalize`)."""
        if isinstance(words, str):
            raise TypeError("predict expects a list of words, got one str (use "
                            "text.normalize(text) or restore(text))")
        return self.predict_batch([words], pauses=None if pauses is None else [pauses])[0]

    def predict_batch(self, batch: Sequence[Sequence[str]], batch_size: int = 16,
                      pauses: Sequence[Sequence[float] | None] | None = None
                      ) -> list[Prediction]:
        """Predict several word lists, batching their windows by length.

        Args:
            batch: word lists.
            batch_size: windows per ONNX Runtime call at most (see also BATCH_SUBWORDS).
            pauses: per word list, (n_words,) seconds of silence after each word (NaN or
                None where unknown), or None; used by a PauseAware model, ignored otherwise.
        """
        _check_texts(batch)
        batch = list(batch)
        if any(isinstance(words, str) for words in batch):
            raise TypeError("predict_batch expects lists of words, got a str among them")
        if pauses is not None and len(pauses) != len(batch):
            raise ValueError(f"{len(pauses)} pause lists for {len(batch)} word lists")
        encodings = _encode(self.tokenizer, batch)
        buckets = [self._pause_buckets(e, len(w), None if pauses is None else pauses[t])
                   for t, (e, w) in enumerate(zip(encodings, batch))]
        plans = [plan_word_windows(_word_lengths(e, len(w)), self.windows)
                 for e, w in zip(encodings, batch)]
        jobs = [(t, k) for t, plan in enumerate(plans) for k in range(len(plan))]
        jobs.sort(key=lambda job: _window_length(plans[job[0]][job[1]]))
        chunks = _chunk_jobs(jobs, [_window_length(plans[t][k]) + 2 for t, k in jobs],
                             min(batch_size, self.windows_per_call or batch_size))
        results = self._run_chunks([[(encodings[t].ids, buckets[t], plans[t][k])
                                     for t, k in chunk] for chunk in chunks])
        outputs = {job: result for chunk, chunk_results in zip(chunks, results)
                   for job, result in zip(chunk, chunk_results)}
        return [self._assemble(words, encodings[t], plans[t], outputs, t)
                for t, words in enumerate(batch)]

    def _pause_buckets(self, encoding, n_words: int, pauses) -> np.ndarray | None:
        """(n_subwords,) int64 pause bucket at each word's label position (0 elsewhere and
        where unknown) for a PauseAware model, else None."""
        if not self.pause_aware:
            return None
        out = np.zeros(len(encoding.ids), dtype=np.int64)
        if pauses is None:
            return out
        seconds = np.asarray([np.nan if p is None else p for p in pauses], dtype=np.float64)
        if len(seconds) != n_words:
            raise ValueError(f"{len(seconds)} pauses for {n_words} words")
        has = encoding.label_positions >= 0
        out[encoding.label_positions[has]] = bucketize(seconds, self.pause_edges)[has]
        return out

    def _run_chunks(self, chunks: list[list]) -> list[list[tuple[np.ndarray, np.ndarray]]]:
        """`_run` on each chunk (a batch of windows): one chunk on the main session, several
        concurrently on single-threaded runs (ONNX Runtime releases the GIL)."""
        if len(chunks) <= 1 or self.parallel <= 1:
            return [self._run(chunk, self.session) for chunk in chunks]
        if self._pool is None:
            self._pool = (ThreadPoolExecutor(self.parallel, thread_name_prefix="punctum"),
                          _open_session(self.artifact.model_file, 1))
        pool, session = self._pool
        return list(pool.map(lambda chunk: self._run(chunk, session), chunks))

    def _run(self, windows, session) -> list[tuple[np.ndarray, np.ndarray]]:
        """`session` on padded windows (subwords, pause buckets or None, window); per
        window (w, n_post) and (w, n_case) probs."""
        tok = self.tokenizer
        width = max(w.end - w.start for _, _, w in windows) + 2
        ids = np.full((len(windows), width), tok.pad_id, dtype=np.int64)
        lengths = np.zeros(len(windows), dtype=np.int64)
        pauses = np.zeros((len(windows), width), dtype=np.int64)
        for row, (subwords, buckets, w) in enumerate(windows):
            n = w.end - w.start
            ids[row, 0], ids[row, 1:n + 1], ids[row, n + 1] = (tok.bos_id, subwords[w.start:w.end],
                                                                tok.eos_id)
            lengths[row] = n + 2
            if buckets is not None:
                pauses[row, 1:n + 1] = buckets[w.start:w.end]
        feeds = {"ids": ids, "lengths": lengths}
        if self.pause_aware:
            feeds["pauses"] = pauses
        punct, case = session.run(None, feeds)
        return [(_softmax(punct[row, 1:n - 1]), _softmax(case[row, 1:n - 1]))
                for row, n in enumerate(lengths)]

    def _assemble(self, words, encoding, plan, outputs, text_index) -> Prediction:
        n_post, n_case = len(self.post_labels), len(self.case_labels)
        post_probs = np.zeros((len(words), n_post), dtype=np.float32)
        case_probs = np.zeros((len(words), n_case), dtype=np.float32)
        post_probs[:, 0] = case_probs[:, 0] = 1.0  # words without subwords: null / LOWER
        if plan:
            parts = [outputs[(text_index, k)] for k in range(len(plan))]
            post_sub = stitch([p for p, _ in parts], plan)
            case_sub = stitch([c for _, c in parts], plan)
            has = encoding.label_positions >= 0
            post_probs[has] = post_sub[encoding.label_positions[has]]
            case_probs[has] = case_sub[encoding.label_positions[has]]
        post = tuple(self.post_labels[i] for i in calibration.decide(post_probs,
                                                                     self.post_bias))
        case = decide_case(words, case_probs, self.case_labels, self.capitalised,
                           self.inventory.abbreviations)
        return Prediction(tuple(words), post, case, post_probs, case_probs, self.post_labels,
                          self.case_labels)

    # ------------------------------------------------------------------------- restoring

    def restore(self, text: str, options: RestoreOptions | None = None) -> str:
        """Punctuated, cased text; "" for empty, whitespace-only or marks-only input (a text
        without words keeps its tokens that hold quotes or brackets: ":)")."""
        return self.restore_detailed([text], options)[0].text

    def restore_batch(self, texts: Sequence[str],
                      options: RestoreOptions | None = None) -> list[str]:
        """Restore several texts; windows of all texts are batched together by length."""
        return [r.text for r in self.restore_detailed(texts, options)]

    def restore_detailed(self, texts: Sequence[str], options: RestoreOptions | None = None,
                         pauses: Sequence[Sequence[float] | None] | None = None
                         ) -> list[Restored]:
        """Like restore_batch, with labels and probabilities (typed results).

        Args:
            pauses: per text, the silence in seconds after each of its words (NaN or None
                where unknown), for a PauseAware model (see `predict_batch`).
        """
        options = options or RestoreOptions()
        _check_texts(texts)
        texts = list(texts)  # a generator is read once
        for text in texts:
            if not isinstance(text, str):
                raise TypeError(f"restore expects str, got {type(text).__name__}")
        inputs = [parse(text, self.inventory) for text in texts]
        predictions = self.predict_batch([i.words for i in inputs], options.batch_size,
                                         pauses=pauses if options.pauses else None)
        results = []
        for source, given, prediction in zip(texts, inputs, predictions):
            labelled = written_labels(given, prediction, options, self.inventory,
                                      self.post_bias, capitalised=self.capitalised)
            sentence_case = options.sentence_case and options.case
            text = render(labelled, self.inventory, lexicon=self.artifact.lexicon,
                          sentence_case=sentence_case) if len(given) else \
                " ".join(wordless_tokens(source, self.inventory))  # ":)" alone stays
            cases = written_cases(labelled, self.inventory, sentence_case=sentence_case,
                                  lexicon=self.artifact.lexicon)
            results.append(Restored(text, labelled, prediction, cases))
        return results

    def stream(self, lookahead: int = 4, options: RestoreOptions | None = None) -> Stream:
        """A streaming restorer: feed words as an ASR emits them (see `Stream`)."""
        return Stream(self, lookahead, options or RestoreOptions())

    def restore_lines(self, lines: Iterable[str], options: RestoreOptions | None = None,
                      chunk_lines: int = 64) -> Iterator[str]:
        """Restore an iterable of lines (paragraphs), lazily, in bounded memory.

        Lines of over LONG_LINE_WORDS words (LONG_LINE characters in languages written
        without spaces) go through `Stream`, so a 1,000,000-word line is fine too.
        """
        options = options or RestoreOptions()
        _check_texts(lines)
        batch: list[str] = []
        for line in lines:
            if self.is_long_line(line):
                yield from self._flush_lines(batch, options)
                batch = []
                yield self._restore_long(line, options)
                continue
            batch.append(line)
            if len(batch) == chunk_lines:
                yield from self._flush_lines(batch, options)
                batch = []
        yield from self._flush_lines(batch, options)

    def _flush_lines(self, batch: list[str], options: RestoreOptions) -> Iterator[str]:
        if batch:
            yield from self.restore_batch(batch, options)

    def is_long_line(self, line: str) -> bool:
        """Whether a line is restored in parts (`restore_long_detailed`)."""
        if self.inventory.word_unit != "word":
            return len(line) > LONG_LINE
        if len(line) > 4 * LONG_LINE:
            return True
        if len(line) < 2 * LONG_LINE_WORDS:  # too short to hold that many words
            return False
        n_words = 0
        for token in whitespace_tokens(line):  # stops counting at the limit
            n_words += holds_word(token, self.inventory)
            if n_words > LONG_LINE_WORDS:
                return True
        return False

    def _restore_long(self, line: str, options: RestoreOptions) -> str:
        return " ".join(part.text for part in self.restore_long_detailed(line, options))

    def restore_long_detailed(self, line: str, options: RestoreOptions | None = None
                              ) -> Iterator[Restored]:
        """A very long text restored in parts through `Stream`, in bounded memory: typed
        results of consecutive runs of words; their texts joined with spaces are the
        restored text."""
        stream = self.stream(lookahead=32, options=options)
        piece: list[str] = []
        n_words = 0
        for token in whitespace_tokens(line):  # parts of as many words, whatever marks
            piece.append(token)
            n_words += holds_word(token, self.inventory)
            if n_words == LONG_LINE_PART:
                part = stream.feed_detailed(" ".join(piece))
                piece, n_words = [], 0
                if part is not None:
                    yield part
        part = stream.feed_detailed(" ".join(piece)) if piece else None
        if part is not None:
            yield part
        part = stream.flush_detailed()
        if part is not None:
            yield part


def decide_case(words: Sequence[str], case_probs: np.ndarray, case_labels: Sequence[str],
                capitalised: frozenset = frozenset(),
                abbreviations: frozenset = frozenset()) -> tuple[str, ...]:
    """Each word's case: the most probable label, except that a word of `capitalised`
    (names the training text always writes Capitalised, capitalised.json) is never LOWER,
    an address (`text.is_address`: joe@example.com) and a number with a lowercase ending
    (`text.is_number_with_ending`: 2nd, 1990s) are written in lowercase, a dotted
    initialism (`text.is_initialism`: s.o.s) predicted CAP or MIX is UPPER and e.g, i.e,
    a.m, p.m predicted UPPER are LOWER (capitalised only at a sentence start) and a listed
    abbreviation (`Inventory.abbreviations`: mr, dr) predicted UPPER is CAP.

    Args:
        words: (n,) normalised words.
        case_probs: (n, n_case) float probabilities over case_labels.
    """
    case = [case_labels[i] for i in case_probs.argmax(-1)]
    if capitalised:
        case = [CAP if c == LOWER and w in capitalised else c for w, c in zip(words, case)]
    case = [UPPER if c in (CAP, MIX) and is_initialism(w) else
            LOWER if c == UPPER and is_lowercase_initialism(w) else  # e.g., not E.G.
            CAP if c == UPPER and w in abbreviations else c  # Mr, not MR
            for w, c in zip(words, case)]
    return tuple(LOWER if c != LOWER and (is_address(w) or is_number_with_ending(w)) else c
                 for w, c in zip(words, case))


def merge_labels(given: Labelled, prediction: Prediction, options: RestoreOptions,
                 abbreviations: frozenset = frozenset(), cased: bool | None = None) -> Labelled:
    """Combine predicted labels with what the input already had, as the options say.

    `--keep-existing` keeps the input's marks and cases where it has them; a word written
    in lowercase takes the model's case unless the input writes case (`cased`; None: as
    `writes_case` finds for `given`): then its lowercase words are the writer's too ("the
    theatre actor", not "the Theatre Actor"), and only the sentences the model ends start
    with a capital (`render`'s sentence case).

    A listed abbreviation (`Inventory.abbreviations`: mr, dr) that the model itself writes
    Capitalised (not MS, DR, nor a word capitalised.json makes Capitalised), before a
    Capitalised word of more than one letter, gets its period ("Mr. Smith", as the training
    text writes it; not "MS Word", "Gen Z"), unless the input is kept as it is."""
    post, case, forms = list(prediction.post), list(prediction.case), [None] * len(given)
    if options.keep_existing:
        post = [g if g != NULL else p for g, p in zip(given.post, post)]
        if writes_case(given) if cased is None else cased:
            case = list(given.case)
        else:
            case = [g if g != LOWER else c for g, c in zip(given.case, case)]
    if not options.case:
        case = list(given.case)
    if options.keep_existing or not options.case:
        forms = [f if c == MIX else None for f, c in zip(given.forms, case)]
    for i, word in enumerate(given.words):  # an address's mixed case is part of it (a URL
        if given.case[i] == MIX and is_address(word):  # path); all capitals are not
            case[i], forms[i] = MIX, given.forms[i]
    abbreviated = given.abbreviated
    edges = (given if options.keep_existing else given.without_written_marks()).edges
    if abbreviations and not options.keep_existing and CAP in prediction.case_labels:
        own = prediction.case_probs.argmax(-1) == prediction.case_labels.index(CAP)
        abbreviated = tuple(a or (w in abbreviations and p == NULL and c == CAP and own[i]
                                  and _names_follow(given.words, case, i))
                            for i, (w, p, c, a) in enumerate(zip(given.words, post, case,
                                                                 abbreviated)))
    return Labelled(given.words, tuple(post), tuple(case), given.pre, tuple(forms),
                    abbreviated, edges)


def writes_case(given: Labelled, start: int = 1) -> bool:
    """Whether a text writes case: a Capitalised word other than its first (from `start`
    on) and "I" (a recogniser's lowercase output does not, nor one that capitalises its
    first word only or writes "OK", "10AM", "iPhone")."""
    return any(case == CAP and not is_i(word)
               for word, case in zip(given.words[start:], given.case[start:]))



def _names_follow(words: Sequence[str], case: Sequence[str], i: int) -> bool:
    """Whether the word after word i is a Capitalised name of more than one letter."""
    return i + 1 < len(words) and case[i + 1] == CAP and len(words[i + 1]) > 1


def _encode(tokenizer, batch: Sequence[Sequence[str]]) -> list:
    """Subword encodings of word lists; a lone surrogate (not Unicode text, from JSON such
    as "\\ud800") is a ValueError naming it instead of the tokenizer's TypeError."""
    try:
        return tokenizer.encode_batch([list(w) for w in batch], add_special_tokens=False)
    except TypeError:
        for words in batch:
            for word in words:
                bad = next((c for c in word if 0xD800 <= ord(c) <= 0xDFFF), None)
                if bad is not None:
                    raise ValueError(f"the word {word!r} holds a lone surrogate "
                                     f"(U+{ord(bad):04X}), which is not Unicode text") from None
        raise


def _check_texts(texts) -> None:
    """A list of texts, not one str (whose characters would each be restored as a text)."""
    if isinstance(texts, str):
        raise TypeError("expected a list of texts, got one str (use restore(text) for one)")


def written_labels(given: Labelled, prediction: Prediction, options: RestoreOptions,
                   inventory, post_bias: np.ndarray | None = None,
                   sentence_ends: Collection[int] = (),
                   capitalised: frozenset = frozenset()) -> Labelled:
    """A whole text's labels as written: the model's merged with the input's as the options
    say (`merge_labels`; `--keep-existing` adds no marks of a kind the input writes itself,
    `filling`), the text closed with a sentence-final mark (`close_text`, unless
    options.close_text is off), as are the words of `sentence_ends` (indexes of words a
    speaker's turn follows), and its sentences opened where the language does (¿ ¡)."""
    if options.keep_existing:  # no marks of a kind the text writes itself
        final = inventory.sentence_final
        written = MarkCounts.of(counted_marks(given), prediction.post[:-1], final).written()
        prediction = fill_only(prediction, written, final, post_bias, capitalised)
    labelled = merge_labels(given, prediction, options, inventory.abbreviations)
    labelled = lower_within_sentences(labelled, given, options, inventory, capitalised,
                                      turns=sentence_ends)
    if options.close_text:
        labelled = close_text(labelled, prediction, inventory, post_bias, sentence_ends,
                              kept_marks(given, options))
    return open_sentences(labelled, inventory)


def lower_within_sentences(labelled: Labelled, given: Labelled, options: RestoreOptions,
                           inventory, capitalised: frozenset = frozenset(),
                           turns: Collection[int] = (), after_pause: bool = False) -> Labelled:
    """`--keep-existing`: after a mark the input wrote that does not end a sentence there
    (",", ";", "..."), a word it wrote in lowercase stays so unless it is a name
    (capitalised.json) or "I": the model's capital comes from a sentence break the writer
    did not make ("know; it's", not "know; It's"). Not after the words of `turns` (a
    speaker's turn follows them); `after_pause`: the first word follows such a mark (a
    stream's earlier words)."""
    if not (options.keep_existing and options.case):
        return labelled
    case = list(labelled.case)
    for i in range(len(given)):
        word = given.words[i]
        if i == 0:
            follows_pause = after_pause
        else:
            follows_pause = given.post[i - 1] != NULL and i - 1 not in turns and (
                not ends_sentence(labelled, i - 1, inventory)
                or quotes_its_mark(labelled, i - 1))  # '"Stop!" he cried'
        if follows_pause and given.case[i] == LOWER and case[i] == CAP \
                and word not in capitalised and not is_i(word):
            case[i] = LOWER
    return replace(labelled, case=tuple(case))


def kept_marks(given: Labelled, options: RestoreOptions) -> frozenset[int]:
    """Indexes of the words whose input mark is kept as it is (`--keep-existing`): closing a
    text does not replace it ("to this purpose:" stays)."""
    if not options.keep_existing:
        return frozenset()
    return frozenset(i for i, post in enumerate(given.post) if post != NULL)


def close_text(labelled: Labelled, prediction: Prediction, inventory,
               post_bias: np.ndarray | None = None,
               sentence_ends: Collection[int] = (), kept: Collection[int] = ()) -> Labelled:
    """Give the last word (and the words of `sentence_ends`) the most probable
    sentence-final mark where it has none.

    Args:
        post_bias: (n_post,) decision biases added to the log-probabilities, as for the
            other words (None: none), so that `punctum calibrate` fits what restore does.
        sentence_ends: indexes of other words that end a sentence (a turn follows them).
        kept: indexes of words whose mark stays whatever it is (the input's, kept), unless
            a turn follows them.
    """
    turns = {i for i in sentence_ends if 0 <= i < len(labelled)}
    ends = sorted(turns | ({len(labelled) - 1} if len(labelled) else set()))
    open_ends = [i for i in ends if not ends_sentence(labelled, i, inventory)
                 and (i not in kept or i in turns)]  # a turn ends a sentence whatever it had
    if not open_ends:
        return labelled
    edges = list(labelled.edges)
    for i in open_ends:  # a kept ";" before a turn is written as its label's own mark
        edges[i] = edges[i].without_mark() if edges[i] and edges[i].mark else edges[i]
    finals = [i for i, label in enumerate(prediction.post_labels)
              if label in inventory.sentence_final]
    post = list(labelled.post)
    for i in open_ends:
        scores = np.log(np.maximum(prediction.post_probs[i], 1e-30))
        if post_bias is not None:
            scores = scores + post_bias
        if post[i] not in inventory.sentence_final:
            post[i] = prediction.post_labels[max(finals, key=lambda k: scores[k])]
    return replace(labelled, post=tuple(post), edges=tuple(edges))


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
            text = " ".join(text)
        inventory = self.punctuator.inventory
        if not any(holds_word(token, inventory) for token in whitespace_tokens(text)):
            self._deferred += text + " "  # no word: nothing can become final; read with the
            return None  # next words once (feeding thousands of ":)" alone stays linear)
        text, self._deferred = self._deferred + text, ""
        return self._feed(text)

    def _feed(self, text: str) -> Restored | None:
        stripped = text.lstrip()
        again = self._wordless  # text fed before, parsed again with this feed
        took_word = bool(self._pending and stripped and not stripped[0].isalnum())
        if took_word:
            again = self._take_last_word() + " "  # what follows it: ", world", ")"
        open_quote = (self._quotes - count_straight_quotes(again)) % 2 == 1  # before `again`
        self._quotes += count_straight_quotes(text)
        inventory = self.punctuator.inventory
        opened = max(self._brackets - (count_open_brackets(again, _DEEP, inventory) - _DEEP), 0)
        self._brackets = count_open_brackets(again + text, opened, inventory)
        parsed = parse(again + text, inventory, open_quote=open_quote, open_brackets=opened)
        if len(parsed):
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
        if self._deferred:
            deferred, self._deferred = self._deferred, ""
            self._feed(deferred)  # no words: nothing becomes final
        if self._wordless:  # nothing pending: only such tokens came after the last word
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
        filled = tail
        if self.options.keep_existing:  # counted over the words fed so far
            final = inventory.sentence_final
            counts = self._marks + MarkCounts.of(counted_marks(pending), tail.post[:-1], final)
            filled = fill_only(tail, counts.written(), final, self.punctuator.post_bias,
                               self.punctuator.capitalised)
        labelled = merge_labels(pending, filled, self.options, inventory.abbreviations,
                                cased=self._cased)
        labelled = lower_within_sentences(labelled, pending, self.options, inventory,
                                          self.punctuator.capitalised,
                                          after_pause=self._after_pause)
        if closing and self.options.close_text:
            labelled = close_text(labelled, tail, self.punctuator.inventory,
                                  self.punctuator.post_bias,
                                  kept=kept_marks(pending, self.options))
        done = labelled.slice(0, n_final)
        if self.options.keep_existing:
            counted = counted_marks(pending)[:n_final]  # (the last pending word's: later)
            self._marks += MarkCounts.of(counted, tail.post[:len(counted)],
                                         inventory.sentence_final)
        self._after_pause = pending.post[n_final - 1] != NULL and (
            not ends_sentence(done, n_final - 1, inventory)
            or quotes_its_mark(done, n_final - 1))  # '"Stop!" he cried'
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


def _slice_prediction(prediction: Prediction, start: int, stop: int | None = None
                      ) -> Prediction:
    part = slice(start, stop)
    return replace(prediction, words=prediction.words[part], post=prediction.post[part],
                   case=prediction.case[part], post_probs=prediction.post_probs[part],
                   case_probs=prediction.case_probs[part])


def _word_lengths(encoding, n_words: int) -> np.ndarray:
    valid = encoding.word_index[encoding.word_index >= 0]
    return np.bincount(valid, minlength=n_words).astype(np.int64)


def _window_length(window) -> int:
    return window.end - window.start


def _chunk_jobs(jobs: list, lengths: list[int], batch_size: int) -> list[list]:
    """Consecutive groups of (length-sorted) jobs, each of at most `batch_size` windows and
    BATCH_SUBWORDS padded subwords, so that long windows make smaller batches."""
    chunks: list[list] = []
    for job, length in zip(jobs, lengths):
        if not chunks or len(chunks[-1]) == batch_size or \
                (len(chunks[-1]) + 1) * length > BATCH_SUBWORDS:
            chunks.append([])
        chunks[-1].append(job)
    return chunks


def cpu_count() -> int:
    """CPU cores this process may use."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def _windows_per_call(artifact: artifacts.Artifact) -> int | None:
    """The artifact's own cap on windows per ONNX Runtime call. int8 models quantize their
    activations with one scale per call, so a window's labels can depend on the windows it
    shares a call with; Transformer exports set 1 (docs/BENCHMARKS.md, restore speed: this
    is also faster for them on 2 cores), the BiLSTM keeps batches (4x faster per subword)."""
    value = artifact.meta["windows"].get("per_call")
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ValueError(f"{artifact.path / artifacts.ARTIFACT_FILE}: windows.per_call must be "
                         f"a positive integer, got {value!r}")
    return value


def _window_config(artifact: artifacts.Artifact) -> WindowConfig:
    """The artifact's windows; a bad value is an error naming its punctum.json."""
    return window_settings(artifact.meta["windows"], artifact, "windows")


def window_settings(settings, artifact: artifacts.Artifact, key: str) -> WindowConfig:
    """A WindowConfig from punctum.json's `settings` (size, left, right, strategy) found
    under `key`; a bad value is an error naming the file and the key."""
    try:
        return WindowConfig(size=settings["size"], left=settings["left"],
                            right=settings["right"],
                            strategy=settings.get("strategy", "double_overlap"))
    except (KeyError, TypeError, AttributeError, ValueError) as error:
        message = str(error).replace("WindowConfig.", f"{key}.")
        if not isinstance(error, ValueError):
            message = f"{key} must be an object with size, left and right ({error!r})"
        raise ValueError(f"{artifact.path / artifacts.ARTIFACT_FILE}: {message}") from None


def _open_session(model_file: Path, threads: int):
    import onnxruntime

    check_threads(threads)  # every session: the acoustic models' too

    options = onnxruntime.SessionOptions()
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
    if threads:
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
    try:
        return onnxruntime.InferenceSession(str(model_file), options,
                                            providers=["CPUExecutionProvider"])
    except Exception as error:  # ORT raises its own exception types for corrupt models
        raise ValueError(f"{model_file}: not a loadable ONNX model ({error})") from None


MAX_THREADS = 256  # ONNX Runtime starts every thread up front: a million would never finish


def check_threads(threads) -> None:
    """Raise a one-line ValueError unless threads is a whole number in 0..MAX_THREADS."""
    if isinstance(threads, bool) or not isinstance(threads, int) \
            or not 0 <= threads <= MAX_THREADS:
        raise ValueError(f"threads must be a whole number from 0 (all cores) to {MAX_THREADS}, "
                         f"got {threads!r}")


def _check_pause_input(session, artifact, pause_aware: bool) -> None:
    """punctum.json's "pauses" and the graph's "pauses" input go together."""
    has_input = "pauses" in {i.name for i in session.get_inputs()}
    if has_input != pause_aware:
        raise ValueError(f"{artifact.path / artifacts.ARTIFACT_FILE}: pauses is "
                         f"{'set' if pause_aware else 'null'} but {artifact.model_file.name} "
                         f"{'has no' if pause_aware else 'has a'} 'pauses' input")


def _check_outputs(session, artifact, n_post: int, n_case: int) -> None:
    """Fail loudly when the model's output sizes disagree with the label lists."""
    shapes = {o.name: o.shape for o in session.get_outputs()}
    expected = {"punct_logits": n_post, "case_logits": n_case}
    for name, size in expected.items():
        if name not in shapes:
            raise ValueError(f"{artifact.model_file}: no output {name!r} "
                             f"(outputs: {sorted(shapes)})")
        last = shapes[name][-1]
        if isinstance(last, int) and last != size:
            raise ValueError(f"{artifact.model_file}: output {name} has {last} labels but "
                             f"punctum.json lists {size}")
