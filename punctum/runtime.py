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
from collections.abc import Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from punctum import artifact as artifacts
from punctum import calibration
from punctum.merging import written_labels
from punctum.pauses import bucketize
from punctum.restored import Prediction, Restored, RestoreOptions
from punctum.stream import Stream
from punctum.text import (
    CAP,
    LOWER,
    MIX,
    NULL,
    UPPER,
    holds_word,
    is_address,
    is_cut_word,
    is_i,
    is_initialism,
    is_lowercase_initialism,
    is_number_with_ending,
    parse,
    render,
    whitespace_tokens,
    wordless_tokens,
    written_cases,
)
from punctum.tokenizer import SubwordTokenizer
from punctum.windows import WindowConfig, plan_word_windows, stitch

log = logging.getLogger(__name__)

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


def _post_bias(artifact: artifacts.Artifact, labels: tuple[str, ...],
               given: Mapping[str, float] | None) -> np.ndarray | None:
    """(n_post,) decision offsets: `given`, else the artifact's; None when all are zero."""
    if given is None:
        decision = artifact.meta.get("decision") or {}
        source = f"{artifact.path / artifacts.ARTIFACT_FILE}: decision."
        given = (decision.get("post_bias") or {}) if isinstance(decision, dict) else None
        if not isinstance(given, dict):
            raise ValueError(f"{source}post_bias must be an object of mark -> number")
    elif not isinstance(given, Mapping):
        raise TypeError(f"post_bias must be a mapping of mark -> number, got "
                        f"{type(given).__name__}")
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
        _check_vocabulary(self.tokenizer, artifact)
        if windows is not None and not isinstance(windows, WindowConfig):
            raise TypeError(f"windows must be a punctum.windows.WindowConfig, got "
                            f"{type(windows).__name__}")
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
        _check_embedding(self.session, self.tokenizer, artifact, self.pause_aware)
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
        if artifact.meta["kind"] == "ctc_encoder":
            raise ValueError(f"{artifact.path}: an acoustic model (speech to text: punctum "
                             f"transcribe -m); restoring text needs a lexical model")
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
        post = decide_marks(words, post_probs, self.post_labels, self.post_bias)
        case = decide_case(words, case_probs, self.case_labels, self.capitalised,
                           self.inventory.abbreviations, self.inventory.language == "en")
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
            if not isinstance(line, str):
                raise TypeError(f"restore_lines expects lines of str, got "
                                f"{type(line).__name__}")
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


def decide_marks(words: Sequence[str], post_probs: np.ndarray, post_labels: Sequence[str],
                 post_bias: np.ndarray | None = None) -> tuple[str, ...]:
    """Each word's mark: the most probable label under the decision biases
    (`calibration.decide`), except after a word cut off (`text.is_cut_word`: "i- i think"),
    which the next word goes on from without one.

    Args:
        words: (n,) normalised words.
        post_probs: (n, n_post) float probabilities over post_labels.
    """
    post = [post_labels[i] for i in calibration.decide(post_probs, post_bias)]
    if "-\0" in "\0".join(words[:-1]) + "\0":  # (most texts cut no word: one search)
        post = [NULL if i + 1 < len(words) and is_cut_word(w) else p
                for i, (w, p) in enumerate(zip(words, post))]
    return tuple(post)


def decide_case(words: Sequence[str], case_probs: np.ndarray, case_labels: Sequence[str],
                capitalised: frozenset = frozenset(),
                abbreviations: frozenset = frozenset(),
                pronoun_i: bool = True) -> tuple[str, ...]:
    """Each word's case: the most probable label, except that a word of `capitalised`
    (names the training text always writes Capitalised, capitalised.json) is never LOWER,
    an address (`text.is_address`: joe@example.com) and a number with a lowercase ending
    (`text.is_number_with_ending`: 2nd, 1990s) are written in lowercase, a dotted
    initialism (`text.is_initialism`: s.o.s) predicted CAP or MIX is UPPER and e.g, i.e,
    a.m, p.m predicted UPPER are LOWER (capitalised only at a sentence start) and a listed
    abbreviation (`Inventory.abbreviations`: mr, dr) predicted UPPER is CAP, and a word cut
    off (`text.is_cut_word`: th-) predicted UPPER is LOWER (its letters read as an acronym),
    as is the word after it predicted CAP (unless "I" or a name: the sentence goes on);
    "i-" is "I-" in English (`pronoun_i`).

    Args:
        words: (n,) normalised words.
        case_probs: (n, n_case) float probabilities over case_labels.
    """
    case = [case_labels[i] for i in case_probs.argmax(-1)]
    if capitalised:
        case = [CAP if c == LOWER and w in capitalised else c for w, c in zip(words, case)]
    case = [UPPER if c in (CAP, MIX) and is_initialism(w) else
            LOWER if c == UPPER and is_lowercase_initialism(w) else  # e.g., not E.G.
            CAP if c == UPPER and w in abbreviations else  # Mr, not MR
            LOWER if c == UPPER and is_cut_word(w) and len(w) > 2 else  # th-, not TH-
            CAP if pronoun_i and w == "i-" and c == LOWER else c  # "I- I think", as "I" is
            for w, c in zip(words, case)]
    if "-\0" in "\0".join(words) + "\0":  # "th- the thing": the same sentence goes on
        case = [LOWER if c == CAP and i and is_cut_word(words[i - 1]) and not is_i(w)
                and w not in capitalised else c for i, (w, c) in enumerate(zip(words, case))]
    return tuple(LOWER if c != LOWER and (is_address(w) or is_number_with_ending(w)) else c
                 for w, c in zip(words, case))


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


def _check_vocabulary(tokenizer: SubwordTokenizer, artifact: artifacts.Artifact) -> None:
    """Fail loudly when the tokenizer does not fit the model's embedding table (punctum.json's
    model_config.vocab_size): its ids would index another table (out of range: an ONNX
    Runtime error; in range: nonsense). punctum's own BPE must match the table exactly; a
    pretrained encoder's table may be padded beyond its tokenizer's pieces (as export allows).
    """
    config = artifact.meta.get("model_config")
    expected = config.get("vocab_size") if isinstance(config, dict) else None
    if not isinstance(expected, int) or isinstance(expected, bool):
        return
    if tokenizer.vocab_size > expected or (_own_bpe(artifact)
                                           and tokenizer.vocab_size != expected):
        raise ValueError(f"{artifact.tokenizer_file}: {tokenizer.vocab_size:,} pieces, but "
                         f"the model was trained with {expected:,} (punctum.json "
                         f"model_config.vocab_size): the tokenizer is another model's")


def _check_embedding(session, tokenizer: SubwordTokenizer, artifact: artifacts.Artifact,
                     pause_aware: bool) -> None:
    """Fail loudly when the graph's embedding table does not fit the tokenizer (a model.onnx
    copied from another model): its last piece must index the table, and for punctum's own
    BPE the next id must not (a larger table is another model's). Two one-token runs."""
    import onnxruntime

    quiet = onnxruntime.RunOptions()
    quiet.log_severity_level = 4  # (the failure is the answer: not ORT's error log)

    def runs(piece: int) -> bool:
        ids = np.array([[tokenizer.bos_id, piece, tokenizer.eos_id]], dtype=np.int64)
        feeds = {"ids": ids, "lengths": np.array([3], dtype=np.int64)}
        if pause_aware:
            feeds["pauses"] = np.zeros_like(ids)
        try:
            session.run(None, feeds, quiet)
        except Exception:  # ORT's own error types (an index out of the table's range)
            return False
        return True

    last = tokenizer.vocab_size - 1
    if not runs(last) or (_own_bpe(artifact) and runs(last + 1)):
        raise ValueError(f"{artifact.model_file}: its embedding table does not fit "
                         f"{artifact.tokenizer_file.name}'s {tokenizer.vocab_size:,} pieces: the "
                         f"model or the tokenizer is another model's")


def _own_bpe(artifact: artifacts.Artifact) -> bool:
    """Whether the artifact's tokenizer is punctum's own BPE (training.recipe.tokenizer.kind,
    "bpe" when not recorded) rather than a pretrained encoder's."""
    training = artifact.meta.get("training")
    recipe = training.get("recipe") if isinstance(training, dict) else None
    tokenizer = recipe.get("tokenizer") if isinstance(recipe, dict) else None
    kind = tokenizer.get("kind", "bpe") if isinstance(tokenizer, dict) else "bpe"
    return kind == "bpe"


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
