"""Export a CTC speech checkpoint as an acoustic model folder for `punctum transcribe`.

    punctum export runs/e2e/best.pt models/e2e-synth --name e2e-synth

punctum.json (kind "ctc_encoder") records the feature settings, the normalisation, the frame
shift of the encoder output, long-audio chunking and a parity check: the mean token
agreement of greedy ONNX and torch transcripts on the recipe's first dev utterances (random
frames when the dev manifest is not there).
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import logging
import shutil
import tempfile
import warnings
from pathlib import Path

import numpy as np
import torch

from punctum.artifact import ARTIFACT_FILE, FORMAT_VERSION, MODEL_FILE, TOKENIZER_FILE
from punctum.ctc_vocab import CtcVocabulary
from punctum.decoding import greedy
from punctum.text import get_inventory
from punctum.train.export import load_model_from_checkpoint, quantize_int8
from punctum.train.recipe import relocated_data

log = logging.getLogger(__name__)

INPUT_NAMES = ["feats", "lengths"]
OUTPUT_NAMES = ["log_probs", "out_lengths"]


@dataclasses.dataclass(frozen=True)
class CtcExportOptions:
    """Options for acoustic model folders.

    Args:
        int8: dynamic int8 weights.
        name: model name in punctum.json.
        chunk_seconds, overlap_seconds: long audio is cut into chunks of this length that
            overlap by this much (see `punctum.transcribe.Transcriber.raw_words`).
        min_agreement: required mean token agreement of the greedy ONNX and torch outputs
            on the parity utterances (`greedy_agreement`).
        scores: measured scores to record.
        data_root: where the training data is now, if it has moved since training.
    """

    int8: bool = True
    name: str = ""
    chunk_seconds: float = 20.0
    overlap_seconds: float = 4.0
    min_agreement: float = 0.9
    scores: dict = dataclasses.field(default_factory=dict)
    data_root: str = ""

    def __post_init__(self) -> None:
        if not 0 <= self.min_agreement <= 1:
            raise ValueError(f"min_agreement must be in [0, 1], got {self.min_agreement}")
        if not 0 <= 2 * self.overlap_seconds < self.chunk_seconds:
            raise ValueError("overlap_seconds must be smaller than half of chunk_seconds")


class _Exported(torch.nn.Module):
    """The encoder with only (log_probs, out_lengths) as outputs."""

    def __init__(self, model: torch.nn.Module):
        super().__init__()
        self.model = model

    def forward(self, feats, lengths):
        log_probs, _, out_lengths = self.model(feats, lengths)
        return log_probs, out_lengths


def export_ctc_onnx(model: torch.nn.Module, path: Path, n_mels: int) -> None:
    feats = torch.randn(2, 120, n_mels)
    lengths = torch.tensor([120, 80], dtype=torch.int64)
    axes = {"feats": {0: "batch", 1: "time"}, "lengths": {0: "batch"},
            "log_probs": {0: "batch", 1: "frames"}, "out_lengths": {0: "batch"}}
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # The exporter puts the wrapper back in its own mode afterwards, and a new module is
        # in training mode: a wrapper left in it would switch dropout back on in `model`.
        torch.onnx.export(_Exported(model).eval(), (feats, lengths), str(path),
                          input_names=INPUT_NAMES, output_names=OUTPUT_NAMES,
                          dynamic_axes=axes, opset_version=17, dynamo=False)
    model.eval()


def parity_features(data: dict, n_mels: int, n_utterances: int = 16,
                    seed: int = 0) -> tuple[list[np.ndarray], str]:
    """(T, n_mels) features for the parity check and where they come from: the first dev
    utterances of the training recipe when its manifest is still there ("dev"), else
    random frames ("random"; a trained model's output on noise is uncertain, so int8 can
    flip its tokens more than on speech)."""
    dev = data.get("dev")
    if dev and Path(dev).exists():
        from punctum.audio.features import FeatureConfig, log_mel, normalize
        from punctum.audio.io import load_audio
        from punctum.audio.manifest import read_records

        config = FeatureConfig(**data["features"])
        mode = data.get("normalization", "utterance")  # normalize() also takes "none"
        records = [r for r in read_records(dev) if r.audio_path is not None][:n_utterances]
        try:
            feats = [normalize(log_mel(load_audio(r.audio_path, config.sample_rate), config),
                               mode) for r in records]
        except (FileNotFoundError, OSError) as error:  # the manifest moved, its audio not
            log.warning("parity check on random frames: %s", error)
            feats = []
        if feats:
            return feats, "dev"
    rng = np.random.default_rng(seed)
    lengths = rng.integers(60, 400, size=n_utterances)
    return [rng.standard_normal((int(n), n_mels)).astype(np.float32) for n in lengths], "random"


def greedy_agreement(model: torch.nn.Module, onnx_path: Path,
                     feats: list[np.ndarray]) -> float:
    """Mean token agreement of the greedy ONNX and torch outputs, one utterance at a time:
    1 - token edit distance / the longer output (1.0 when both are empty)."""
    import onnxruntime

    from punctum.metrics import align_words

    session = onnxruntime.InferenceSession(str(onnx_path), providers=["CPUExecutionProvider"])
    model.eval()
    scores = []
    for x in feats:
        lengths = np.asarray([len(x)], dtype=np.int64)
        with torch.no_grad():
            ref, _, ref_lengths = model(torch.from_numpy(x[None]), torch.from_numpy(lengths))
        got, got_lengths = session.run(None, {"feats": x[None], "lengths": lengths})
        a = [str(i) for i in greedy(ref[0, :int(ref_lengths[0])].numpy()).ids]
        b = [str(i) for i in greedy(got[0, :int(got_lengths[0])]).ids]
        longest = max(len(a), len(b))
        scores.append(1.0 - align_words(a, b).n_errors / longest if longest else 1.0)
    return float(np.mean(scores)) if scores else 1.0


def export_ctc_artifact(checkpoint: str | Path, out_dir: str | Path,
                        options: CtcExportOptions) -> dict:
    """Write the acoustic model folder; returns its punctum.json contents."""
    model, saved = load_model_from_checkpoint(checkpoint)
    vocab = CtcVocabulary.load(Path(checkpoint).parent / TOKENIZER_FILE)
    data = relocated_data(saved["recipe"]["data"], options.data_root)
    n_mels = model.config.n_mels
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        fp32 = Path(tmp) / "fp32.onnx"
        export_ctc_onnx(model, fp32, n_mels)
        final = Path(tmp) / MODEL_FILE
        if options.int8:
            quantize_int8(fp32, final)
        else:
            shutil.copy(fp32, final)
        feats, source = parity_features(data, n_mels)
        agreement = greedy_agreement(model, final, feats)
        if agreement < options.min_agreement:
            raise ValueError(f"ONNX/torch greedy agreement {agreement:.3f} is below "
                             f"{options.min_agreement}")
        shutil.copy(final, out / MODEL_FILE)
    vocab.save(out / TOKENIZER_FILE)
    features = data["features"]
    meta = {
        "format_version": FORMAT_VERSION,
        "name": options.name or saved["recipe"].get("name", ""),
        "kind": "ctc_encoder",
        "inventory": get_inventory(data.get("language", "en")).to_dict(),
        "tokenizer": {"file": TOKENIZER_FILE, "marks": list(vocab.marks)},
        "model": {"file": MODEL_FILE, "precision": "int8" if options.int8 else "fp32",
                  "inputs": INPUT_NAMES, "outputs": OUTPUT_NAMES},
        "model_config": saved["model_config"],
        "parameters": sum(p.numel() for p in model.parameters()),
        "features": features,
        "normalization": data.get("normalization", "utterance"),
        "frame_shift": 4 * features["hop_length"] / features["sample_rate"],
        "windows": {"chunk_seconds": options.chunk_seconds,
                    "overlap_seconds": options.overlap_seconds},
        "training": {"recipe": saved["recipe"], "steps": saved["state"]["step"],
                     "seconds": saved["state"]["seconds"],
                     "best_dev_score": saved["state"]["best_f1"]},
        "parity": {"greedy_agreement": agreement, "features": source,
                   "utterances": len(feats)},
        "scores": options.scores,
        "exported": datetime.date.today().isoformat(),
    }
    (out / ARTIFACT_FILE).write_text(json.dumps(meta, indent=2, ensure_ascii=False))
    return meta
