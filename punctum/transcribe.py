"""Speech to punctuated, cased text with word timings (`punctum transcribe`), without torch.

    from punctum.transcribe import Transcriber
    transcriber = Transcriber.load("models/e2e-synth")     # an exported CTC model folder
    result = transcriber.transcribe("talk.flac")
    result.text, result.words[0].start

An end-to-end model (its vocabulary has the marks) writes the marks itself; casing comes from
the lexical model's casing head (`punctuator`), else from sentence starts only. A model
without marks runs as a cascade: its words go through the lexical Punctuator for marks and
casing. Long audio is read and decoded in overlapping chunks (bounded memory): the earlier
chunk keeps its words that start before the middle of the overlap, the later one continues
with the words whose middle lies after the last kept word's end.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from punctum import artifact as artifacts
from punctum.ctc_vocab import CtcVocabulary
from punctum.decoding import Decoded, greedy, prefix_beam_search
from punctum.pauses import pauses_after
from punctum.text import Labelled, parse, render


@dataclass(frozen=True)
class TimedWord:
    """One recognised word: `text` as written (marks and case included), seconds."""

    text: str
    start: float
    end: float


@dataclass(frozen=True)
class Transcription:
    """The result for one audio file."""

    path: str
    text: str
    words: tuple[TimedWord, ...]

    def to_dict(self) -> dict:
        return {"path": self.path, "text": self.text,
                "words": [{"word": w.text, "start": round(w.start, 3), "end": round(w.end, 3)}
                          for w in self.words]}


@dataclass(frozen=True)
class _RawWord:
    word: str  # lowercase, as the vocabulary spells it
    mark: str  # mark written after it by the model ("" when none)
    start: float
    end: float


def _join(kept: list[_RawWord], later: list[_RawWord]) -> None:
    """Append a later chunk's words to the kept ones with times that never go back.

    A first later word that covers more than half of the last kept word is that word heard
    with more context (the earlier chunk cut it short) and replaces it; otherwise a later
    word that starts before the last kept word ends starts where it ends.
    """
    if kept and later and later[0].start < kept[-1].end:
        last, first = kept[-1], later[0]
        if kept[-1].end - first.start > (last.end - last.start) / 2:
            kept.pop()
        else:
            later[0] = replace(first, start=last.end)
    kept.extend(later)


class Transcriber:
    """A CTC acoustic model folder plus, optionally, a lexical Punctuator.

    Args:
        model: the read acoustic artifact (kind "ctc_encoder").
        punctuator: lexical model for casing (end-to-end) or marks and casing (cascade).
        threads: ONNX Runtime intra-op threads.
        beam: 0 = greedy decoding, else the prefix beam width.
    """

    def __init__(self, model: artifacts.Artifact, punctuator=None, threads: int = 0,
                 beam: int = 0) -> None:
        from punctum.audio.features import FeatureConfig
        from punctum.runtime import _open_session

        if model.meta.get("kind") != "ctc_encoder":
            raise ValueError(f"{model.path}: kind {model.meta.get('kind')!r} is not an acoustic "
                             f"model (expected 'ctc_encoder')")
        self.model = model
        self.vocab = CtcVocabulary.load(model.tokenizer_file)
        source = model.path / artifacts.ARTIFACT_FILE
        features = model.meta.get("features")
        try:
            self.features = FeatureConfig(**features)
        except (TypeError, ValueError) as error:
            raise ValueError(f"{source}: features must be an object of FeatureConfig's fields "
                             f"({error})") from None
        self.normalization = model.meta.get("normalization", "utterance")
        self.frame_shift = _positive(model.meta.get("frame_shift"), "frame_shift", source)
        self.chunk = _positive(model.meta["windows"]["chunk_seconds"], "windows.chunk_seconds",
                               source)
        self.overlap = float(model.meta["windows"]["overlap_seconds"])
        if not 0 <= self.overlap < self.chunk:
            raise ValueError(f"{source}: windows.overlap_seconds must be in [0, chunk_seconds "
                             f"= {self.chunk:g}), got {self.overlap:g}")
        self.session = _open_session(model.model_file, threads)
        _check_feature_input(self.session, self.features.n_mels, source)
        self.punctuator = punctuator
        self.beam = beam
        if not self.vocab.marks and punctuator is None:
            raise ValueError(f"{model.path}: the model writes no marks; a cascade needs a "
                             f"lexical model (--text-model)")

    @classmethod
    def load(cls, name_or_path: str | Path, text_model: str | None = None, threads: int = 0,
             beam: int = 0) -> Transcriber:
        """An acoustic model folder, with the lexical model `text_model` (None: none for
        end-to-end models, the bundled default for cascades); "pocketsphinx": that package's
        English model (`punctum.sphinx`) as a cascade."""
        from punctum.runtime import Punctuator

        engine = str(name_or_path) == "pocketsphinx"  # unless a model folder has that name
        if engine and not (Path(name_or_path) / artifacts.ARTIFACT_FILE).is_file():
            from punctum.sphinx import SphinxTranscriber

            return SphinxTranscriber.load(text_model, threads)

        model = artifacts.read_artifact(artifacts.resolve(name_or_path))
        marks = model.meta.get("tokenizer", {}).get("marks")
        if text_model is None and not marks:
            text_model = artifacts.DEFAULT_MODEL
        punctuator = Punctuator.load(text_model, threads=threads) if text_model else None
        return cls(model, punctuator, threads, beam)

    @property
    def end_to_end(self) -> bool:
        return bool(self.vocab.marks)

    # ------------------------------------------------------------------------- decoding

    def log_probs(self, samples: np.ndarray) -> np.ndarray:
        """(T', V) CTC log-probabilities of (n,) 16 kHz samples."""
        from punctum.audio.features import log_mel, normalize

        feats = log_mel(samples, self.features)
        if self.normalization != "none":
            feats = normalize(feats, self.normalization)
        feats = feats.astype(np.float32)[None]
        if feats.shape[1] < 7:  # shorter than the subsampling's receptive field
            return np.zeros((0, self.vocab.size), dtype=np.float32)
        lengths = np.asarray([feats.shape[1]], dtype=np.int64)
        log_probs, out_lengths = self.session.run(None, {"feats": feats, "lengths": lengths})
        return log_probs[0, :int(out_lengths[0])]

    def decode(self, log_probs: np.ndarray) -> Decoded:
        return prefix_beam_search(log_probs, self.beam) if self.beam else greedy(log_probs)

    def chunk_words(self, samples: np.ndarray, offset: float) -> list[_RawWord]:
        """Words of one chunk with absolute times (offset = the chunk's start second)."""
        decoded = self.decode(self.log_probs(samples))
        owners = self.vocab.token_words(list(decoded.ids))
        words: list[_RawWord] = []
        pieces: dict[int, list[int]] = {}
        marks: dict[int, str] = {}
        for k, (token, owner) in enumerate(zip(decoded.ids, owners)):
            if owner >= 0:
                pieces.setdefault(owner, []).append(k)
            elif self.vocab.tokenizer.id_to_token(token) in self.vocab.marks and pieces:
                marks[max(pieces)] = self.vocab.tokenizer.id_to_token(token)
        for owner, ks in sorted(pieces.items()):
            text = self.vocab.decode([decoded.ids[k] for k in ks])
            if not text:
                continue
            start = offset + decoded.starts[ks[0]] * self.frame_shift
            end = offset + (decoded.ends[ks[-1]] + 1) * self.frame_shift
            words.append(_RawWord(text, marks.get(owner, ""), start, end))
        return words

    def raw_words(self, path: str | Path) -> list[_RawWord]:
        """All words of a file, chunk by chunk, each kept from one chunk only."""
        from punctum.audio.io import iter_audio_chunks

        kept: list[_RawWord] = []
        chunks = iter_audio_chunks(path, self.chunk, self.overlap, self.features.sample_rate)
        for index, (offset, samples) in enumerate(chunks):
            words = self.chunk_words(samples, offset)
            if index == 0:
                kept = words
                continue
            cut = offset + self.overlap / 2  # the middle of the overlap with the last chunk
            while kept and kept[-1].start >= cut:  # the earlier chunk keeps words before it
                kept.pop()
            boundary = kept[-1].end if kept else offset
            # The later chunk continues after the last kept word: a word is taken from it when
            # its middle lies past that word's end, so the two chunks' slightly different
            # timings of the same word can neither double nor drop it.
            _join(kept, [w for w in words if (w.start + w.end) / 2 > boundary])
        return kept

    # ------------------------------------------------------------------------- text

    def transcribe(self, path: str | Path) -> Transcription:
        """Punctuated, cased text and timed words of one audio file ("" for silence)."""
        raw = self.raw_words(path)
        if not raw:
            return Transcription(str(path), "", ())
        labelled = self._labelled(raw)
        text = render(labelled, self._inventory(), lexicon=self._lexicon(), sentence_case=True)
        written = text.split(" ")
        if len(written) != len(raw):  # char-unit languages: keep the lowercase forms
            written = [w.word + w.mark for w in raw]
        words = tuple(TimedWord(t, w.start, w.end) for t, w in zip(written, raw))
        return Transcription(str(path), text, words)

    def _inventory(self):
        return self.model.inventory

    def _lexicon(self) -> dict:
        return self.punctuator.artifact.lexicon if self.punctuator is not None else {}

    def _labelled(self, raw: list[_RawWord]) -> Labelled:
        """Words with marks (model or cascade) and case labels (lexical model or none)."""
        from punctum.runtime import RestoreOptions

        if not self.end_to_end:  # a cascade: a pause-aware lexical model hears the pauses
            text = " ".join(w.word for w in raw)
            pauses = pauses_after([w.start for w in raw], [w.end for w in raw])
            timing = [pauses] if len(parse(text, self._inventory())) == len(raw) else None
            return self.punctuator.restore_detailed([text], RestoreOptions(),
                                                    pauses=timing)[0].labelled
        given = parse(" ".join(w.word + w.mark for w in raw), self._inventory())
        if self.punctuator is None:
            return given
        prediction = self.punctuator.predict(given.words)
        return Labelled(given.words, given.post, prediction.case, given.pre,
                        tuple(None for _ in given.words), given.abbreviated, given.edges)


def to_transcript(result: Transcription, format: str):
    """A formats.Transcript (one cue per file) of timed words, for SRT/VTT/Whisper output."""
    from punctum.formats import Cue, Token, Transcript

    tokens = tuple(Token(w.text, w.start, w.end, before=" " if i else "")
                   for i, w in enumerate(result.words))
    start = result.words[0].start if result.words else 0.0
    end = result.words[-1].end if result.words else 0.0
    return Transcript(format, (Cue(start, end, tokens),))


def dumps(result: Transcription, format: str, resegment_options=None, inventory=None) -> str:
    """The result as text, JSON (words with times) or SRT/VTT cues at sentence boundaries."""
    from punctum import formats

    if format == "text":
        return result.text + "\n"
    if format == "json":
        return json.dumps(result.to_dict(), ensure_ascii=False) + "\n"
    if not result.words:
        return "WEBVTT\n\n" if format == "vtt" else ""
    options = resegment_options or formats.ResegmentOptions()
    transcript = formats.resegment(to_transcript(result, format), options, inventory or "en")
    return formats.dumps(transcript)


def _positive(value, name: str, source: Path) -> float:
    """A positive finite number from punctum.json, or a ValueError naming it."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or \
            not 0 < value < float("inf"):
        raise ValueError(f"{source}: {name} must be a positive number, got {value!r}")
    return float(value)


def _check_feature_input(session, n_mels: int, source: Path) -> None:
    """The model's feature input takes n_mels values per frame (its last axis, when fixed)."""
    width = session.get_inputs()[0].shape[-1]
    if isinstance(width, int) and width != n_mels:
        raise ValueError(f"{source}: features.n_mels is {n_mels}, but the model reads "
                         f"{width} features per frame")
