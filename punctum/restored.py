"""What a restore takes and gives: its options (`RestoreOptions`), the model's own output
per word (`Prediction`) and the result as written (`Restored`). Shared by the runtime
(`runtime.Punctuator`), label merging (`merging`) and streams (`stream`); depends on numpy
and `text` only.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from punctum.text import Labelled

FILL_CHOICES = ("missing", "all")


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
            Either way, a recogniser's one-word tags ("<unk>", "[noise]", "[laughter]") and
            emoticons are kept as they are and out of the model, in every path
            (`Punctuator.restore` too); their neighbours' case follows the words around.
        fill: with keep_existing, where the model's marks go: "missing" (the kinds of mark
            the text leaves out, `filling`) or "all" (every word the input left without a
            mark).
    """

    case: bool = True
    keep_existing: bool = False
    sentence_case: bool = True
    close_text: bool = True
    batch_size: int = 16
    pauses: bool = True
    annotations: bool = True
    fill: str = "missing"

    def __post_init__(self) -> None:
        if not 1 <= self.batch_size <= 1024:
            raise ValueError(f"batch_size must be in [1, 1024], got {self.batch_size}")
        if self.fill not in FILL_CHOICES:
            raise ValueError(f"fill must be one of {', '.join(FILL_CHOICES)}, got {self.fill!r}")


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
        lead: what `text` writes before its first word that belongs to the word before it,
            restored earlier ("" mostly; a stream with lookahead 0 and keep_existing: the
            marks fed after a final word, ". " in ". Then we"); `text` starts with it.
    """

    text: str
    labelled: Labelled
    prediction: Prediction
    written_case: tuple[str, ...]
    lead: str = ""

    def to_dict(self) -> dict:
        """JSON-ready: the text and, per word, the mark and case it shows there, with the
        model's probability of each; `model_mark` / `model_case` appear where the model's
        own top label differs (a closing mark, a capitalised sentence start, kept input),
        `abbreviated` where the word is written with an abbreviation's period (Mr., U.S.),
        `written_mark` where its mark is written otherwise than the label's own text (kept
        by --keep-existing: ";" for PERIOD, "..." , "?!"), and `before` / `after` where
        quotes, brackets or tokens without words (":)") are written before or after it (its
        mark goes after the quotes and brackets that close it, unless the input wrote it
        inside them; a second mark kept after them is in `after`: '",' of '"why?", and')."""
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
                                            ("before", edges.opening()),
                                            ("after", edges.written_after(mark)))
                          if v}
            words.append(entry)
        return {"text": self.text, "words": words}


def _probability(probs: np.ndarray, index: int | None) -> float | None:
    """probs[index] rounded for JSON; None for a label the model does not predict."""
    return None if index is None else round(float(probs[index]), 4)
