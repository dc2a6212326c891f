"""Score a punctuated hypothesis file against a reference file (`punctum eval`).

    punctum eval --ref ../shared/data/iwslt2011/test2011 --hyp out.txt --hyp-format text

Files are read with `punctum.corpora` and parsed with `punctum.text`; scores come from
`punctum.metrics`. When the hypothesis has the reference's words, labels are compared word by
word (for Che references, token by token, as in the IWSLT2011 papers); otherwise the words are
aligned first and WER/CER are reported too. docs/EVALUATION.md states every convention.
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
import unicodedata
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from punctum import metrics
from punctum.corpora import (
    CHE_LABEL_MAP,
    CHE_LABELS,
    CheDocument,
    iter_lines,
    iter_tsv,
    iter_xml_segments,
    read_che,
    rereadable,
)
from punctum.text import (
    CASES,
    LOWER,
    NULL,
    Inventory,
    Labelled,
    get_inventory,
    normalize,
    parse,
)

FORMATS = ("che", "text", "tsv", "xml", "transcript")


@dataclass(frozen=True)
class ScoredFile:
    """A reference or hypothesis file as words, labels and utterance boundaries.

    Attributes:
        labelled: all words of the file in order, with labels.
        is_final: (n_words,) bool, True at the last word of each line/row/segment.
        has_case: whether the file carries casing (Che files do not).
        che: the token-level document for Che files.
        stripped: whether annotations were taken out of its lines (`_scored_text`).
    """

    labelled: Labelled
    is_final: np.ndarray
    has_case: bool
    che: CheDocument | None = None
    stripped: bool = False


@dataclass(frozen=True)
class Evaluation:
    """Everything `punctum eval` reports."""

    punct: metrics.ClassScores
    case: metrics.ClassScores | None = None
    alignment: metrics.Alignment | None = None
    cer: float | None = None
    mid_final: metrics.MidFinalScores | None = None
    bootstrap: metrics.BootstrapResult | None = None
    counts: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        """JSON-ready scores (fractions in [0, 1])."""
        out = {"punctuation": self.punct.to_dict(), "counts": self.counts}
        if self.case is not None:
            out["casing"] = self.case.to_dict()
        if self.alignment is not None:
            a = self.alignment
            out["wer"] = a.wer
            out["cer"] = self.cer
            out["alignment"] = {"match": a.n_match, "substitutions": a.n_sub,
                                "deletions": a.n_del, "insertions": a.n_ins}
        if self.mid_final is not None:
            out["mid_final"] = {"mid": self.mid_final.mid.to_dict(),
                                "final": self.mid_final.final.to_dict(),
                                "weighted_f1": self.mid_final.weighted_f1}
        if self.bootstrap is not None:
            out["bootstrap"] = _bootstrap_dict(self.bootstrap)
        return out

    def format(self) -> str:
        """Plain-text tables in the papers' layout (P/R/F1 x 100)."""
        parts = [metrics.format_table(self.punct, "Punctuation")]
        if self.case is not None:
            parts.append(metrics.format_table(self.case, "Casing"))
        if self.alignment is not None:
            a = self.alignment
            parts.append(f"WER {a.wer * 100:.2f}  CER {self.cer * 100:.2f}  (sub {a.n_sub}, "
                         f"del {a.n_del}, ins {a.n_ins}, match {a.n_match})")
        if self.mid_final is not None:
            parts.append(metrics.format_table(self.mid_final.mid, "Mid-utterance"))
            parts.append(metrics.format_table(self.mid_final.final, "Utterance-final"))
            parts.append(f"Weighted F1 {self.mid_final.weighted_f1 * 100:.1f}")
        if self.bootstrap is not None:
            parts.append(_format_bootstrap(self.bootstrap))
        return "\n\n".join(parts)


def _bootstrap_dict(result: metrics.BootstrapResult) -> dict:
    return {"f1_hyp": result.f1_a, "f1_compare": result.f1_b, "ci_hyp": list(result.ci_a),
            "ci_compare": list(result.ci_b), "delta": result.delta,
            "p_value": result.p_value, "n_samples": result.n_samples,
            "n_units": result.n_units}


def _format_bootstrap(result: metrics.BootstrapResult) -> str:
    return (f"Paired bootstrap ({result.n_samples} samples over {result.n_units} sentences):\n"
            f"  hyp     F1 {result.f1_a * 100:.1f}  CI [{result.ci_a[0] * 100:.1f}, "
            f"{result.ci_a[1] * 100:.1f}]\n"
            f"  compare F1 {result.f1_b * 100:.1f}  CI [{result.ci_b[0] * 100:.1f}, "
            f"{result.ci_b[1] * 100:.1f}]\n"
            f"  delta {result.delta * 100:+.1f}, p(compare not better) = {result.p_value:.4f}")


# ----------------------------------------------------------------------------- loading

def detect_format(path: str | Path) -> str:
    """Guess a file's format from its name and first line: a transcript (subtitles, JSON,
    CTM: `formats.detect_format`) is "transcript"."""
    name = Path(path).name.lower().removesuffix(".gz")
    if name.endswith(".xml"):
        return "xml"
    if name.endswith(".tsv"):
        return "tsv"
    if name.endswith((".srt", ".vtt", ".sbv", ".ass", ".ssa", ".lrc", ".ttml", ".dfxp", ".eaf",
                      ".textgrid", ".json", ".jsonl", ".ctm")):
        return "transcript"
    first = next(iter_lines(path), "")
    fields = first.split("\t")
    if len(fields) == 2 and _is_che_line(*fields):
        return "che"
    if not name.endswith(".txt") or _TRANSCRIPT_START.match(first.lstrip("\ufeff")):
        from punctum import formats

        if formats.detect_format(path) not in ("text", "csv", "tsv"):
            return "transcript"
    return "text"


# a label of Che's format that it does not know ("COLON", "EXCLAMATION")
_OTHER_CHE_LABEL = re.compile(r"[A-Z][A-Z_]+")


def _is_che_line(token: str, label: str) -> bool:
    """Whether a line's two tab-separated fields read as Che's: a known label, or a
    lowercase token and a label-like word ("COLON": read as Che so that the error names it,
    not as text with the label as a word; "Act<TAB>I" and "ID<TAB>TEXT" are text)."""
    return label in CHE_LABELS or (token == token.lower() and token.strip() != ""
                                   and bool(_OTHER_CHE_LABEL.fullmatch(label)))
# the first line of subtitles that a .txt file may hold (others are text)
# the first line of a transcript saved as .txt: WebVTT, SRT, ASS (or its comments), LRC
_TRANSCRIPT_START = re.compile(r"\s*(?:WEBVTT|\d+\s*$|\d[\d:.,]* --> |\[script info\]|;|"
                               r"\[\d+:\d|\[[a-z]+:)", re.IGNORECASE)


def _transcript_texts(path: str | Path) -> list[str]:
    """The texts of a transcript file (SRT, WebVTT, Whisper/Vosk/NeMo JSON, CTM, ...) as
    `punctum restore --to text` writes them: one per document, markup and WhisperX's
    speakers dropped."""
    from punctum import formats

    try:
        transcript = formats.read(path)
    except ValueError as error:
        texts = _json_line_texts(path)  # `punctum restore --json`: {"text", "words"} lines
        if texts is None:
            message = str(error)
            if "; give the format" in message:  # (restore's hint: eval has no such option)
                raise ValueError(message.split("; give the format")[0] + "; punctum eval reads "
                                 "Whisper, whisper.cpp, Vosk, NeMo, pipeline and pocketsphinx "
                                 "JSON, and restore --json lines") from None
            raise
        return texts
    return [cue.text for cue in formats.convert(transcript, "text", speakers=False).cues]


def _json_line_texts(path: str | Path) -> list[str] | None:
    """The "text" of each line of JSON objects (`punctum restore --json`), or None when a
    line is not one."""
    texts = []
    for line in iter_lines(path):
        try:
            record = json.loads(line)
        except ValueError:
            return None
        if not isinstance(record, dict) or not isinstance(record.get("text"), str):
            return None
        texts.append(record["text"])
    return texts


def load_scored(path: str | Path, fmt: str = "auto", language: str | Inventory = "en",
                text_column: str = "text", annotations: bool = True) -> ScoredFile:
    """Read a file in one of FORMATS (or "auto") into words, labels and utterance ends (a
    pipe is copied once, `corpora.rereadable`); `annotations`: take speaker labels, sound
    descriptions and timestamps out of text lines and TSV rows."""
    with rereadable(path) as readable:
        return _load_scored(readable, fmt, language, text_column, annotations)


def _load_scored(path: str | Path, fmt: str, language: str | Inventory,
                 text_column: str, annotations: bool = True) -> ScoredFile:
    fmt = detect_format(path) if fmt == "auto" else fmt
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; expected one of {', '.join(FORMATS)}")
    if fmt == "che":
        che = read_che(path)
        labelled = che.labelled()
        is_final = np.zeros(len(labelled), dtype=bool)
        return ScoredFile(labelled, is_final, has_case=False, che=che)
    if fmt in ("xml", "transcript"):
        units = list(iter_xml_segments(path)) if fmt == "xml" else _transcript_texts(path)
        return _join_units([_parsed(u, language) for u in units])
    written = [u.text for u in iter_tsv(path, text_column=text_column)] if fmt == "tsv" \
        else list(iter_lines(path))
    return _scored_units(written, language, annotations)


def _scored_units(texts: list[str], language: str | Inventory,
                  annotations: bool) -> ScoredFile:
    """Lines or rows parsed and joined, with their annotations taken out (`annotations`)."""
    units = [_scored_text(text) for text in texts] if annotations else texts
    scored = _join_units([_parsed(u, language) for u in units])
    return replace(scored, stripped=units != texts)


def _scored_text(text: str) -> str:
    """A line or row of text without the speaker labels, sound descriptions and timestamps
    that restore keeps out of the model (`formats.annotations`): they are not scored."""
    from punctum.formats.annotations import text_outside

    return text_outside(text)


def load_tsv_by_id(path: str | Path, ids: list[str], language: str | Inventory = "en",
                   text_column: str = "text", name: str | None = None,
                   annotations: bool = True) -> ScoredFile:
    """A hypothesis TSV ordered by the reference's utterance ids (missing ids are empty;
    `name`: the file as messages call it, when `path` is a copy of a pipe).

    Raises:
        ValueError: an id given twice, or ids the reference does not have (their words
            could be counted nowhere).
    """
    by_id: dict[str, str] = {}
    for unit in iter_tsv(path, text_column=text_column):
        if unit.id in by_id:
            raise ValueError(f"{path}: utterance id {unit.id!r} is given twice")
        by_id[unit.id] = unit.text
    known = set(ids)
    unknown = [i for i in by_id if i not in known]
    if unknown:
        raise ValueError(f"{path}: {len(unknown)} utterance id(s) not in the reference "
                         f"(first: {unknown[0]!r})")
    missing = [i for i in ids if i not in by_id]
    if missing:
        logging.getLogger(__name__).warning(
            "%s: no row for %d of the reference's %d utterance ids (first: %r); their words "
            "are scored as deleted", name or path, len(missing), len(ids), missing[0])
    return _scored_units([by_id.get(i, "") for i in ids], language, annotations)


def join_texts(texts: list[str], language: str | Inventory = "en") -> ScoredFile:
    """Texts (utterances) parsed and joined into one ScoredFile; each text's last word is
    utterance-final."""
    return _join_units([_parsed(text, language) for text in texts])


def _parsed(text: str, language: str | Inventory) -> Labelled:
    """`text.parse` of a scored text in Unicode's composed form (NFC): "é" typed as e and
    a combining accent is the same word as "é" typed as one character."""
    return parse(unicodedata.normalize("NFC", text), language)


def _join_units(units: list[Labelled]) -> ScoredFile:
    fields = ([], [], [], [], [])
    is_final: list[bool] = []
    for unit in units:
        for store, values in zip(fields, (unit.words, unit.post, unit.case, unit.pre,
                                          unit.forms)):
            store.extend(values)
        is_final.extend([False] * (len(unit) - 1) + [True] if len(unit) else [])
    labelled = Labelled(*(tuple(f) for f in fields))
    return ScoredFile(labelled, np.asarray(is_final, dtype=bool), has_case=True)


# ----------------------------------------------------------------------------- scoring

@dataclass(frozen=True)
class EvalOptions:
    """Options of `punctum eval`.

    Args:
        ref_format, hyp_format: one of FORMATS or "auto".
        language: inventory name.
        mid_final: also score mid-utterance and utterance-final positions separately.
        bootstrap_samples: resamples for --compare.
        seed: bootstrap seed.
        text_column: TSV column holding the text.
    """

    ref_format: str = "auto"
    hyp_format: str = "auto"
    language: str = "en"
    mid_final: bool = False
    bootstrap_samples: int = 1000
    seed: int = 0
    text_column: str = "text"

    def __post_init__(self) -> None:
        for name in ("ref_format", "hyp_format"):
            value = getattr(self, name)
            if value not in FORMATS + ("auto",):
                raise ValueError(f"{name} must be one of {FORMATS + ('auto',)}, got {value!r}")
        if not 1 <= self.bootstrap_samples <= MAX_BOOTSTRAP_SAMPLES:
            raise ValueError(f"bootstrap_samples must be in [1, {MAX_BOOTSTRAP_SAMPLES:,}], "
                             f"got {self.bootstrap_samples}")
        if not 0 <= self.seed < 2 ** 32:
            raise ValueError(f"seed must be in [0, 2**32), got {self.seed}")


MAX_BOOTSTRAP_SAMPLES = 1_000_000  # (each holds six counts: 48 MB; papers use 1,000)


def evaluate_files(ref_path: str | Path, hyp_path: str | Path, options: EvalOptions,
                   compare_path: str | Path | None = None) -> Evaluation:
    """Score `hyp_path` (and optionally `compare_path`) against `ref_path` (files, or pipes,
    which are copied once: `corpora.rereadable`)."""
    with contextlib.ExitStack() as stack:
        names = {}  # the copy of a pipe -> the name to report

        def readable(path):
            copy = stack.enter_context(rereadable(path))
            names[str(copy)] = str(path)
            return copy

        ref_path, hyp_path = readable(ref_path), readable(hyp_path)
        if compare_path is not None:
            compare_path = readable(compare_path)
        return _evaluate_files(ref_path, hyp_path, options, compare_path, names)


def _evaluate_files(ref_path: str | Path, hyp_path: str | Path, options: EvalOptions,
                    compare_path: str | Path | None, names: dict[str, str]) -> Evaluation:
    inventory = get_inventory(options.language)
    ref = load_scored(ref_path, options.ref_format, inventory, options.text_column)
    if not len(ref.labelled):
        raise ValueError(f"{ref_path}: the reference has no words to score against")
    if options.mid_final and ref.che is not None:
        raise ValueError(f"{ref_path}: --mid-final needs utterance ends (lines, TSV rows, XML "
                         f"segments); a Che token file has none")
    hyp = _load_hyp(ref_path, hyp_path, ref, options, inventory, names)
    annotations = True
    if (ref.stripped or hyp.stripped) and ref.labelled.words != hyp.labelled.words:
        as_written = (load_scored(ref_path, options.ref_format, inventory, options.text_column,
                                  annotations=False),
                      _load_hyp(ref_path, hyp_path, ref, options, inventory, names, False))
        if as_written[0].labelled.words == as_written[1].labelled.words:  # "Note:" of one
            (ref, hyp), annotations = as_written, False  # side read as a label, "Note," not
    evaluation = score(ref, hyp, inventory, options.mid_final)
    if compare_path is None:
        return evaluation
    other = _load_hyp(ref_path, compare_path, ref, options, inventory, names, annotations)
    result = compare(ref, hyp, other, inventory, options.bootstrap_samples, options.seed)
    return Evaluation(**{**evaluation.__dict__, "bootstrap": result})


def _load_hyp(ref_path, hyp_path, ref: ScoredFile, options: EvalOptions,
              inventory: Inventory, names: dict[str, str] | None = None,
              annotations: bool = True) -> ScoredFile:
    ref_format = detect_format(ref_path) if options.ref_format == "auto" else options.ref_format
    hyp_format = detect_format(hyp_path) if options.hyp_format == "auto" else options.hyp_format
    if ref_format == "tsv" and hyp_format == "tsv":
        ids = [u.id for u in iter_tsv(ref_path, text_column=options.text_column)]
        repeated = next((i for i, n in Counter(ids).items() if n > 1), None)
        if repeated is not None:  # its hypothesis would be scored once per reference row
            raise ValueError(f"{ref_path}: utterance id {repeated!r} is given twice; the "
                             f"hypothesis rows are matched by id")
        return load_tsv_by_id(hyp_path, ids, inventory, options.text_column,
                              (names or {}).get(str(hyp_path)), annotations)
    return load_scored(hyp_path, hyp_format, inventory, options.text_column, annotations)


def _punct_sequences(ref: ScoredFile, hyp: ScoredFile, inventory: Inventory):
    """Label inventory plus reference and hypothesis label sequences at the same positions,
    or None when the words differ (alignment needed)."""
    if ref.che is not None:
        labels = CHE_LABELS
        if hyp.che is not None and hyp.che.tokens == ref.che.tokens:
            return labels, ref.che.labels, _map_che(hyp.che.labels)
        if hyp.labelled.words == ref.labelled.words:
            return labels, ref.che.labels, _map_che(ref.che.expand(hyp.labelled.post))
        return None
    if hyp.labelled.words == ref.labelled.words:
        return inventory.post_labels, ref.labelled.post, hyp.labelled.post
    return None


def _map_che(labels) -> tuple[str, ...]:
    return tuple(CHE_LABEL_MAP.get(label, label) for label in labels)


def _labels_for(ref: ScoredFile, inventory: Inventory) -> tuple[str, ...]:
    return CHE_LABELS if ref.che is not None else inventory.post_labels


def score(ref: ScoredFile, hyp: ScoredFile, inventory: Inventory,
          mid_final: bool = False) -> Evaluation:
    """Punctuation and casing scores of one hypothesis, aligning words when they differ."""
    counts = {"ref_words": len(ref.labelled), "hyp_words": len(hyp.labelled)}
    same = _punct_sequences(ref, hyp, inventory)
    if same is not None:
        labels, ref_post, hyp_post = same
        punct = metrics.score_labels(ref_post, hyp_post, labels, NULL)
        case = _case_direct(ref, hyp)
        split = _mid_final(ref_post, hyp_post, ref, labels) if mid_final and not ref.che else None
        return Evaluation(punct, case, mid_final=split, counts=counts)
    if ref.che is not None:  # aligned to text: the reference's words as text reads them
        ref = replace(ref, labelled=_as_text_words(ref.labelled, inventory)[0])
        counts["ref_words"] = len(ref.labelled)
    if hyp.che is not None:  # ... and a Che hypothesis's too ("--" a mark, not a word)
        hyp = replace(hyp, labelled=_as_text_words(hyp.labelled, inventory)[0])
        counts["hyp_words"] = len(hyp.labelled)
    return _score_aligned(ref, hyp, inventory, mid_final, counts)


def _as_text_words(labelled: Labelled, inventory: Inventory) -> tuple[Labelled, np.ndarray]:
    """A Che reference's words as `text.parse` reads the same words written out: tokens
    without a word ("--") give their mark to the word before (a sentence-final one wins),
    others are normalised ("Dr." -> "dr", "idea:" -> "idea"), so that a hypothesis that
    writes the reference exactly scores 100. Also returns, for each word, the index of the
    reference word it comes from, (n,)."""
    words: list[str] = []
    post: list[str] = []
    origin: list[int] = []
    read: dict[str, list[str]] = {}  # each distinct word parsed once
    for index, (word, mark) in enumerate(zip(labelled.words, labelled.post)):
        pieces = read.get(word)
        if pieces is None:
            pieces = read[word] = normalize(unicodedata.normalize("NFC", word), inventory)
        if not pieces:
            if post and mark != NULL and (post[-1] == NULL or mark in inventory.sentence_final):
                post[-1] = mark
            continue
        words.extend(pieces)
        post.extend([NULL] * (len(pieces) - 1) + [mark])
        origin.extend([index] * len(pieces))
    return (Labelled(tuple(words), tuple(post), (LOWER,) * len(words)),
            np.asarray(origin, dtype=np.int64))


def _scores_case(ref: ScoredFile, hyp: ScoredFile) -> bool:
    """Casing is scored when both sides carry it and the reference has a cased word (an
    all-lowercase reference, ASR output, has no casing to score)."""
    return ref.has_case and hyp.has_case and any(c != LOWER for c in ref.labelled.case)


def _case_direct(ref: ScoredFile, hyp: ScoredFile) -> metrics.ClassScores | None:
    if not _scores_case(ref, hyp):
        return None
    return metrics.score_labels(ref.labelled.case, hyp.labelled.case, CASES, LOWER)


def _mid_final(ref_post, hyp_post, ref: ScoredFile, labels) -> metrics.MidFinalScores:
    return metrics.score_mid_final(ref_post, hyp_post, ref.is_final, labels, NULL)


def score_utterances(refs: list[str], hyps: list[str], inventory: Inventory,
                     mid_final: bool = False) -> Evaluation:
    """Scores of paired utterances (reference i against hypothesis i), aligned utterance by
    utterance: exact at any error rate, unlike aligning the joined texts (`score`), which
    anchors on words and can pair words of different utterances when most words are wrong.
    WER and CER are totals over the utterances; each reference's last word is final."""
    if len(refs) != len(hyps):
        raise ValueError(f"{len(refs)} references but {len(hyps)} hypotheses")
    ref_units = [_parsed(text, inventory) for text in refs]
    hyp_units = [_parsed(text, inventory) for text in hyps]
    ref, hyp = _join_units(ref_units), _join_units(hyp_units)
    counts = {"ref_words": len(ref.labelled), "hyp_words": len(hyp.labelled)}
    alignment = metrics.align_segments([u.words for u in ref_units],
                                       [u.words for u in hyp_units])
    separator = _word_separator(inventory)
    chars = [len(separator.join(u.words)) for u in ref_units]
    cer_edits = sum(metrics.char_error_rate(r.words, h.words, separator) * max(n, 1)
                    for r, h, n in zip(ref_units, hyp_units, chars))
    return _score_aligned(ref, hyp, inventory, mid_final, counts, alignment,
                          cer=cer_edits / max(sum(chars), 1))


def _score_aligned(ref: ScoredFile, hyp: ScoredFile, inventory: Inventory, mid_final: bool,
                   counts: dict, alignment: metrics.Alignment | None = None,
                   cer: float | None = None) -> Evaluation:
    labels = _labels_for(ref, inventory)
    hyp_post = _map_che(hyp.labelled.post) if ref.che is not None else hyp.labelled.post
    if alignment is None:
        alignment = metrics.align_words(ref.labelled.words, hyp.labelled.words)
    ref_seq, hyp_seq = metrics.project_labels(alignment, ref.labelled.post, hyp_post, NULL)
    punct = metrics.score_labels(ref_seq, hyp_seq, labels, NULL)
    case = None
    if _scores_case(ref, hyp):
        ref_case, hyp_case = metrics.project_labels(alignment, ref.labelled.case,
                                                    hyp.labelled.case, LOWER)
        case = metrics.score_labels(ref_case, hyp_case, CASES, LOWER)
    split = None
    if mid_final and ref.che is None:
        final = np.append(ref.is_final, False)[alignment.ref_index]  # inserted words: mid
        split = metrics.score_mid_final(ref_seq, hyp_seq, final, labels, NULL)
    if cer is None:
        cer = metrics.char_error_rate(ref.labelled.words, hyp.labelled.words,
                                      _word_separator(inventory))
    return Evaluation(punct, case, alignment, cer, split, counts=counts)


def _word_separator(inventory: Inventory) -> str:
    """What stands between words in the language's text: a space, or nothing (zh, ja)."""
    return "" if inventory.word_unit == "char" else " "


def compare(ref: ScoredFile, hyp_a: ScoredFile, hyp_b: ScoredFile, inventory: Inventory,
            n_samples: int = 1000, seed: int = 0) -> metrics.BootstrapResult:
    """Paired bootstrap of overall punctuation F1 (hyp_b against hyp_a) over the reference's
    sentences; hypotheses whose words differ are aligned to the reference first."""
    labels = _labels_for(ref, inventory)
    ref_post = ref.che.labels if ref.che is not None else ref.labelled.post
    final = inventory.sentence_final & set(labels)
    units = metrics.sentence_units(ref_post, final)
    n_units = int(units.max()) + 1 if len(units) else 0
    counts = [_unit_counts(ref, hyp, inventory, labels, units, n_units)
              for hyp in (hyp_a, hyp_b)]
    return metrics.bootstrap_unit_counts(*counts, n_samples=n_samples, seed=seed)


def _unit_counts(ref: ScoredFile, hyp: ScoredFile, inventory: Inventory, labels, units,
                 n_units: int) -> np.ndarray:
    """(n_units, 3) tp/fp/fn per reference sentence for one hypothesis."""
    same = _punct_sequences(ref, hyp, inventory)
    if same is not None:
        return metrics.unit_counts(same[1], same[2], labels, NULL, units, n_units)
    if ref.che is not None:  # sentences of Che tokens -> of merged words -> of text words
        text_words, origin = _as_text_words(ref.labelled, inventory)
        units = units[np.cumsum(ref.che.groups) - 1][origin]
        ref = replace(ref, labelled=text_words)
    if hyp.che is not None:
        hyp = replace(hyp, labelled=_as_text_words(hyp.labelled, inventory)[0])
    hyp_post = _map_che(hyp.labelled.post) if ref.che is not None else hyp.labelled.post
    alignment = metrics.align_words(ref.labelled.words, hyp.labelled.words)
    ref_seq, hyp_seq = metrics.project_labels(alignment, ref.labelled.post, hyp_post, NULL)
    # an inserted word belongs to the sentence of the reference word before it
    ref_index = np.maximum.accumulate(np.where(alignment.ref_index >= 0,
                                               alignment.ref_index, 0))
    op_units = units[ref_index] if len(units) else np.zeros(0, dtype=np.int64)
    return metrics.unit_counts(ref_seq, hyp_seq, labels, NULL, op_units, n_units)


def write_json(evaluation: Evaluation, path: str | Path | None = None) -> str:
    """The evaluation as JSON text (also written to `path` when given)."""
    text = json.dumps(evaluation.to_dict(), indent=2)
    if path:
        Path(path).write_text(text + "\n", encoding="utf-8")
    return text


def plot_confusion(scores: metrics.ClassScores, path: str | Path) -> None:
    """Save the confusion matrix as a PNG (needs matplotlib: pip install 'punctum[plot]')."""
    try:
        import matplotlib
    except ImportError:
        raise ImportError("--plot needs matplotlib: pip install 'punctum[plot]'") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axis = plt.subplots(figsize=(5, 4.5))
    confusion = scores.confusion
    axis.imshow(np.log1p(confusion), cmap="Blues")
    axis.set_xticks(range(len(scores.labels)), scores.labels, rotation=45, ha="right")
    axis.set_yticks(range(len(scores.labels)), scores.labels)
    axis.set_xlabel("hypothesis")
    axis.set_ylabel("reference")
    for (row, col), value in np.ndenumerate(confusion):
        axis.text(col, row, str(value), ha="center", va="center", fontsize=8)
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)
