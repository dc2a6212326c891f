"""The CTC speech task for `punctum train`: vocabulary, feature batches, loss, dev WER/F1.

The trainer's loop, checkpoints, resume, bf16 autocast and torchrun data parallelism are the
text models'; this module supplies what differs (see `TaggingTask` in trainer.py).
Model selection: dev punctuation F1 when the vocabulary has marks (end-to-end models), else
1 - WER (an unpunctuated ASR model, e.g. before punctuation adaptation).
"""

from __future__ import annotations

import logging
from pathlib import Path

import torch

from punctum.ctc_vocab import CtcVocabulary
from punctum.decoding import greedy
from punctum.evaluation import score_utterances
from punctum.models import build_model
from punctum.text import get_inventory
from punctum.train.speech import (
    SpeechBatch,
    SpeechSampler,
    iter_dev_batches,
    load_corpus,
)

VOCAB_NAME = "tokenizer.json"
log = logging.getLogger(__name__)


def prepare_vocabulary(recipe, out: Path, dist) -> CtcVocabulary:
    """Train the CTC vocabulary on the training texts once; later runs and ranks load it."""
    from punctum.audio.manifest import read_records
    from punctum.train.trainer import _barrier

    path = out / VOCAB_NAME
    if dist.main and not path.exists():
        texts = [r.text for p in recipe.data.train for r in read_records(p)]
        if recipe.train.init_from:
            vocab = adapted_vocabulary(Path(recipe.train.init_from).parent / VOCAB_NAME,
                                       texts, recipe.tokenizer.marks)
        else:
            vocab = CtcVocabulary.train(texts, recipe.tokenizer.vocab_size,
                                        recipe.data.language, with_marks=recipe.tokenizer.marks)
        vocab.save(path)
    _barrier(dist)
    return CtcVocabulary.load(path)


def adapted_vocabulary(path: Path, texts: list[str], marks: bool) -> CtcVocabulary:
    """The vocabulary of the run being adapted; when this run wants marks and it has none,
    its least-used pieces are replaced by the marks (same size, same other ids)."""
    from punctum.ctc_vocab import add_marks

    vocab = CtcVocabulary.load(path)
    if marks and not vocab.marks:
        vocab, replaced = add_marks(vocab, texts)
        log.info("marks replace pieces %s", replaced)
    return vocab


class SpeechTask:
    """CTC training of a `CtcEncoder` on speech manifests."""

    def __init__(self, recipe, out: Path, dist, device: str) -> None:
        self.recipe, self.device = recipe, device
        data = recipe.data
        self.vocab = prepare_vocabulary(recipe, out, dist)
        cache = out / "cache"
        corpus = load_corpus(data.train, data, self.vocab, cache, max_seconds=data.max_seconds)
        self.sampler = SpeechSampler(corpus, data, seed=recipe.train.seed + 1000 * dist.rank)
        fields = {k: v for k, v in recipe.model.items() if k != "kind"}
        self.model = build_model("ctc_encoder", {**fields, "vocab_size": self.vocab.size,
                                                 "n_mels": data.features.n_mels}).to(device)
        self.dev = None
        if dist.main and data.dev:
            self.dev = load_corpus(data.dev, data, self.vocab, cache, limit=data.dev_utterances)

    def _tensors(self, batch: SpeechBatch):
        return [torch.from_numpy(a).to(self.device) for a in (
            batch.feats, batch.lengths, batch.targets, batch.target_lengths, batch.plain,
            batch.plain_lengths)]

    def loss(self, wrapped, batch: SpeechBatch) -> torch.Tensor:
        from punctum.train.trainer import autocast

        feats, lengths, targets, target_lengths, plain, plain_lengths = self._tensors(batch)
        with autocast(self.device, self.recipe.train.dtype):
            log_probs, inter, out_lengths = wrapped(feats, lengths)
        if self.model.config.inter_targets == "unpunctuated":
            return self.model.loss(log_probs, inter, out_lengths, targets, target_lengths,
                                   plain, plain_lengths)
        return self.model.loss(log_probs, inter, out_lengths, targets, target_lengths)

    @torch.no_grad()
    def transcribe_dev(self) -> list[str]:
        """Greedy transcripts of the dev utterances, in corpus order."""
        from punctum.train.trainer import autocast

        self.model.eval()
        texts: dict[int, str] = {}
        for batch in iter_dev_batches(self.dev, self.recipe.data):
            feats, lengths = (torch.from_numpy(a).to(self.device)
                              for a in (batch.feats, batch.lengths))
            with autocast(self.device, self.recipe.train.dtype):
                log_probs, _, out_lengths = self.model(feats, lengths)
            log_probs = log_probs.float().cpu().numpy()
            for row, index in enumerate(batch.indices):
                frames = log_probs[row, :int(out_lengths[row])]
                texts[int(index)] = self.vocab.decode(greedy(frames).ids)
        return [texts[i] for i in sorted(texts)]

    def evaluate(self) -> dict | None:
        """{"score", "dev_f1", "dev_wer"} on the dev utterances (greedy decoding)."""
        if self.dev is None:
            return None
        hyps = self.transcribe_dev()
        refs = [r.text for r in self.dev.records[:len(hyps)]]
        return speech_scores(refs, hyps, self.recipe.data.language, bool(self.vocab.marks))

    def payload(self) -> dict:
        return {"vocabulary": {"marks": list(self.vocab.marks), "size": self.vocab.size,
                               "language": self.vocab.language}}


def speech_scores(refs: list[str], hyps: list[str], language: str, with_marks: bool) -> dict:
    """Punctuation F1 and WER (marks and case removed) of transcripts, aligned utterance by
    utterance (exact at any error rate, see `score_utterances`)."""
    evaluation = score_utterances(refs, hyps, get_inventory(language))
    wer = evaluation.alignment.wer
    f1 = evaluation.punct.overall.f1 if evaluation.alignment.n_hyp else 0.0
    selection = f1 if with_marks else 1.0 - wer
    return {"score": float(selection), "dev_f1": float(f1), "dev_wer": float(wer)}
