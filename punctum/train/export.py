"""Export a training checkpoint as an artifact folder (`punctum export`).

    punctum export runs/en-tiny/best.pt punctum/assets/en-tiny --int8 --name en-tiny

The folder holds punctum.json (format version, kind, label inventory, tokenizer, window
settings, training record, scores, parity), model.onnx (fp32 or dynamic int8), tokenizer.json,
lexicon.json (MIX-case forms) and, for fine-tuning, weights.safetensors with the model config
in punctum.json. ONNX comes from the legacy exporter (``dynamo=False``), which keeps LSTMs in
a form that dynamic int8 quantization handles. A parity check runs the ONNX model and the
torch model on sample windows and records the per-word label agreement.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import json
import logging
import os
import shutil
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np
import torch

from punctum.artifact import (
    ARTIFACT_FILE,
    CAPITALISED_FILE,
    FORMAT_VERSION,
    LEXICON_FILE,
    MODEL_FILE,
    TOKENIZER_FILE,
    WEIGHTS_FILE,
    write_capitalised,
)
from punctum.corpora import head_texts
from punctum.models import build_model
from punctum.pauses import EDGES
from punctum.text import CASES, Inventory, build_capitalised, build_casing_lexicon
from punctum.tokenizer import SubwordTokenizer
from punctum.train.checkpoint import load_checkpoint
from punctum.train.recipe import relocated_data

log = logging.getLogger(__name__)
INPUT_NAMES = ["ids", "lengths"]
OUTPUT_NAMES = ["punct_logits", "case_logits"]


@dataclasses.dataclass(frozen=True)
class ExportOptions:
    """Options of `punctum export`.

    Args:
        int8: quantize weights to int8 (dynamic quantization).
        name: model name recorded in punctum.json.
        min_agreement: fail when the ONNX/torch per-word label agreement is lower.
        parity_windows: sample windows used for the parity check.
        lexicon_documents: documents per training source read to build the casing lexicon
            (0 = no lexicon).
        window_size, window_left, window_right: default double-overlap windows (subwords).
        scores: measured scores to record (e.g. from benchmarks).
        include_weights: also write weights.safetensors (fp32, for fine-tuning; large).
        per_channel: int8 scales per output channel instead of per tensor (Transformer
            encoders lose less accuracy this way).
        data_root: where the training data is now, when it has moved since training
            (`punctum.train.recipe.relocate`).
    """

    int8: bool = True
    name: str = ""
    min_agreement: float = 0.995
    parity_windows: int = 64
    lexicon_documents: int = 2000
    window_size: int = 120
    window_left: int = 40
    window_right: int = 15
    scores: dict = dataclasses.field(default_factory=dict)
    include_weights: bool = False
    per_channel: bool = False
    data_root: str = ""

    def __post_init__(self) -> None:
        if not 0 <= self.min_agreement <= 1:
            raise ValueError(f"min_agreement must be in [0, 1], got {self.min_agreement}")
        from punctum.windows import WindowConfig

        WindowConfig(self.window_size, self.window_left, self.window_right)  # as loading does


def check_checkpoint(saved, path: str | Path) -> dict:
    """`saved` if it has what a punctum training checkpoint holds, else a one-line ValueError."""
    if not isinstance(saved, dict) or not all(
            isinstance(saved.get(key), dict) for key in ("model_config", "model", "recipe")) \
            or not isinstance(saved.get("kind"), str):
        got = f"a {type(saved).__name__}" if not isinstance(saved, dict) \
            else f"keys {sorted(map(str, saved))[:6]}"
        raise ValueError(f"{path}: not a punctum training checkpoint (expected a dict with "
                         f"'kind', 'model_config', 'model' and 'recipe'; got {got})")
    return saved


# What export reads of a tagger's checkpoint besides its weights: (path of keys, type).
_EXPORTED_FIELDS = ((("state", "step"), int), (("state", "seconds"), (int, float)),
                    (("state", "best_f1"), (int, float)), (("label_position",), str),
                    (("inventory",), dict), (("recipe", "data", "sources"), (list, tuple)),
                    (("recipe", "data", "max_subwords"), int))


def check_exportable(saved: dict, path: str | Path) -> None:
    """A one-line ValueError naming the first field export needs that `saved` lacks."""
    for keys, kind in _EXPORTED_FIELDS:
        value = saved
        for key in keys:
            value = value.get(key) if isinstance(value, dict) else None
        if isinstance(value, bool) or not isinstance(value, kind):
            raise ValueError(f"{path}: the checkpoint has no {'.'.join(keys)} of the right "
                             f"type (got {value!r}); not a tagger checkpoint punctum export "
                             f"reads")


def load_model_from_checkpoint(path: str | Path) -> tuple[torch.nn.Module, dict]:
    """Rebuild the model of a checkpoint (no training code needed besides the model file)."""
    saved = check_checkpoint(load_checkpoint(path), path)
    try:
        model = build_model(saved["kind"], saved["model_config"])
        model.load_state_dict(saved["model"])
    except (KeyError, TypeError, ValueError, RuntimeError) as error:
        reason = " ".join([line.strip() for line in str(error).splitlines()
                           if line.strip()][:2]) or type(error).__name__
        raise ValueError(f"{path}: its weights do not fit its model ({reason})") from None
    check_finite(model, path)
    return model.eval(), saved


def check_finite(model: torch.nn.Module, path: str | Path) -> None:
    """A one-line ValueError when a weight of `model` (read from `path`) is nan or inf: a
    run that diverged, whose export would predict nothing useful."""
    for name, tensor in model.state_dict().items():
        if tensor.is_floating_point() and not bool(torch.isfinite(tensor).all()):
            raise ValueError(f"{path}: the weight {name} holds nan or inf (the run diverged); "
                             f"export an earlier checkpoint")


def pause_aware(model: torch.nn.Module) -> bool:
    """Whether the model reads pause buckets (its ONNX graph then has a "pauses" input)."""
    return getattr(model.config, "pause_buckets", 0) > 0


def input_names(model: torch.nn.Module) -> list[str]:
    return INPUT_NAMES + (["pauses"] if pause_aware(model) else [])


def export_onnx(model: torch.nn.Module, path: Path) -> None:
    """Write an fp32 ONNX graph with dynamic batch and time axes."""
    ids = torch.randint(4, min(model.config.vocab_size, 100), (2, 9), dtype=torch.int64)
    lengths = torch.tensor([9, 6], dtype=torch.int64)
    axes = {"ids": {0: "batch", 1: "time"}, "lengths": {0: "batch"},
            "punct_logits": {0: "batch", 1: "time"}, "case_logits": {0: "batch", 1: "time"}}
    inputs: tuple = (ids, lengths)
    if pause_aware(model):
        inputs = (ids, lengths, torch.randint(0, model.config.pause_buckets + 1, (2, 9)))
        axes["pauses"] = {0: "batch", 1: "time"}
    # The exporter warns about packed-sequence shape inference and batch sizes; the parity
    # check below is what tells whether the graph is right.
    with torch.no_grad(), warnings.catch_warnings(), native_warnings_dropped(_KNOWN_WARNINGS):
        warnings.simplefilter("ignore")
        torch.onnx.export(model, inputs, str(path), input_names=input_names(model),
                          output_names=OUTPUT_NAMES, dynamic_axes=axes, opset_version=17,
                          dynamo=False)


# what torch's C++ code prints to stderr while it exports an LSTM (its packed sequences have
# no shape inference; the exported graph is checked against torch afterwards)
_KNOWN_WARNINGS = ("shape inference of prim::PackPadded", "shape inference of prim::PadPacked")


@contextlib.contextmanager
def native_warnings_dropped(known: tuple[str, ...]):
    """Within the block, lines that native code writes to the stderr file descriptor (which
    Python's warnings filters do not reach) are held back; afterwards those holding none of
    `known` are written to stderr as they were."""
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as held:
        os.dup2(held.fileno(), 2)
        try:
            yield
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            held.seek(0)
            lines = held.read().decode("utf-8", "replace").splitlines(keepends=True)
            sys.stderr.write("".join(line for line in lines
                                     if not any(k in line for k in known)))


def quantize_int8(source: Path, target: Path, per_channel: bool = False) -> None:
    """Dynamic int8 quantization of the weights (activations stay float); convolutions stay
    fp32 (`onnx_graph.QUANTIZED_OP_TYPES`: int8 ones are slower here)."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    from punctum.train.onnx_graph import QUANTIZED_OP_TYPES

    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.ERROR)  # the quantizer logs advice on the root logger
    try:
        quantize_dynamic(str(source), str(target), weight_type=QuantType.QInt8,
                         per_channel=per_channel, op_types_to_quantize=list(QUANTIZED_OP_TYPES))
    finally:
        root.setLevel(level)


def sample_batches(tokenizer: SubwordTokenizer, texts: list[list[str]], n_windows: int,
                   max_subwords: int) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Padded (ids, lengths, label_positions) batches of up to 8 windows from word lists."""
    windows = []
    for words in texts:
        for start in range(0, len(words), max_subwords // 2):
            enc = tokenizer.encode_words(words[start:start + max_subwords // 2])
            if len(enc) <= max_subwords:
                windows.append(enc)
            if len(windows) == n_windows:
                break
        if len(windows) == n_windows:
            break
    batches = []
    for i in range(0, len(windows), 8):
        chunk = windows[i:i + 8]
        width = max(len(e) for e in chunk)
        ids = np.full((len(chunk), width), tokenizer.pad_id, dtype=np.int64)
        for row, enc in enumerate(chunk):
            ids[row, :len(enc)] = enc.ids
        lengths = np.asarray([len(e) for e in chunk], dtype=np.int64)
        positions = [e.label_positions[e.label_positions >= 0] for e in chunk]
        batches.append((ids, lengths, positions))
    return batches


def label_agreement(model: torch.nn.Module, onnx_path: Path, batches) -> float:
    """Share of words whose punctuation and case labels agree between torch and ONNX."""
    import onnxruntime

    session = onnxruntime.InferenceSession(str(onnx_path), providers=["CPUExecutionProvider"])
    same, total = 0, 0
    rng = np.random.default_rng(0)
    for ids, lengths, positions in batches:
        feeds = {"ids": ids, "lengths": lengths}
        if pause_aware(model):  # random pauses at the words: every bucket is exercised
            feeds["pauses"] = np.zeros_like(ids)
            for row, pos in enumerate(positions):
                feeds["pauses"][row, pos] = rng.integers(0, model.config.pause_buckets + 1,
                                                         len(pos))
        with torch.no_grad():
            reference = [t.numpy() for t in model(*(torch.from_numpy(feeds[k])
                                                    for k in input_names(model)))]
        outputs = session.run(OUTPUT_NAMES, feeds)
        for row, pos in enumerate(positions):
            agree = np.ones(len(pos), dtype=bool)
            for ref, out in zip(reference, outputs):
                agree &= ref[row, pos].argmax(-1) == out[row, pos].argmax(-1)
            same += int(agree.sum())
            total += len(pos)
    return same / max(total, 1)


def _lexicon(texts: list[str], inventory: Inventory) -> dict[str, str]:
    """MIX-case forms learned from the first documents of the training sources."""
    return build_casing_lexicon(texts, inventory, min_count=3) if texts else {}


def _metadata(saved: dict, options: ExportOptions, agreement: float, n_words: int) -> dict:
    recipe = saved["recipe"]
    pauses = saved["model_config"].get("pause_buckets", 0) > 0
    return {
        "format_version": FORMAT_VERSION,
        "name": options.name or recipe.get("name", ""),
        "kind": saved["kind"],
        "inventory": saved["inventory"],
        "case_labels": list(CASES),
        "tokenizer": {"file": TOKENIZER_FILE, "label_position": saved["label_position"]},
        "model": {"file": MODEL_FILE, "precision": _precision(options),
                  "inputs": INPUT_NAMES + (["pauses"] if pauses else []),
                  "outputs": OUTPUT_NAMES},
        "pauses": {"edges": list(EDGES)} if pauses else None,
        "model_config": saved["model_config"],
        "weights": WEIGHTS_FILE if options.include_weights else None,
        "windows": _windows(options, recipe, saved["kind"]),
        "training": {"recipe": recipe, "steps": saved["state"]["step"],
                     "seconds": saved["state"]["seconds"],
                     "best_dev_f1": saved["state"]["best_f1"]},
        "parity": {"label_agreement": agreement, "words": n_words},
        "scores": options.scores,
        "exported": datetime.date.today().isoformat(),
    }


def _windows(options: ExportOptions, recipe: dict, kind: str) -> dict:
    """punctum.json's window settings. A Transformer runs one window per ONNX Runtime call
    ("per_call"): its int8 activation scales then never mix windows, and it is no slower."""
    windows = {"size": options.window_size, "left": options.window_left,
               "right": options.window_right, "strategy": "double_overlap",
               "max_subwords": recipe["data"]["max_subwords"]}
    if kind == "transformer_tagger":
        windows["per_call"] = 1
    return windows


def _precision(options: ExportOptions) -> str:
    if not options.int8:
        return "fp32"
    return "int8 (per channel)" if options.per_channel else "int8"


def export_artifact(checkpoint: str | Path, out_dir: str | Path, tokenizer_path: str | Path,
                    options: ExportOptions, sample_texts: list[list[str]]) -> dict:
    """Write the artifact folder; returns its punctum.json contents.

    Raises:
        ValueError: the ONNX model disagrees with torch on more than 1 - min_agreement of
            the sample words; the tokenizer's size is not the model's.
    """
    model, saved = load_model_from_checkpoint(checkpoint)
    check_exportable(saved, checkpoint)
    tokenizer = SubwordTokenizer.load(tokenizer_path, saved["label_position"])
    expected = saved["model_config"].get("vocab_size")
    own_bpe = saved["recipe"].get("tokenizer", {}).get("kind", "bpe") == "bpe"
    # a pretrained encoder's embedding table may be padded beyond its tokenizer's pieces
    if expected is not None and (tokenizer.vocab_size > expected
                                 or own_bpe and tokenizer.vocab_size != expected):
        raise ValueError(f"{tokenizer_path}: {tokenizer.vocab_size} pieces, but {checkpoint} "
                         f"was trained on {expected}: not the tokenizer of its run")
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise ValueError(f"{out}: is a file, expected a folder for the artifact")
    if out.is_dir():
        _check_replaceable(out)
    created = not out.exists()
    out.mkdir(parents=True, exist_ok=True)
    _remove_stale_stages(out)
    # everything is written into a hidden folder inside `out` (the same file system, so the
    # moves are renames) and moved in at the end, so that a failure (parity, unreadable
    # training text, a bad checkpoint) leaves an earlier export whole
    try:
        with tempfile.TemporaryDirectory(prefix=STAGE_PREFIX, dir=out) as stage:
            stage = Path(stage)
            agreement, n_words = _write_model(model, saved, tokenizer, stage, options,
                                              sample_texts)
            if options.include_weights:
                _save_weights(model, stage / WEIGHTS_FILE)
            tokenizer.save(stage / TOKENIZER_FILE)
            _write_lexicons(saved, stage, options)
            metadata = _metadata(saved, options, agreement, n_words)
            (stage / ARTIFACT_FILE).write_text(json.dumps(metadata, indent=2,
                                                          ensure_ascii=False))
            _move_into(stage, out)
    except BaseException:
        if created:  # a folder this export made holds nothing of use
            shutil.rmtree(out, ignore_errors=True)
        raise
    log.info("exported %s: agreement %.4f on %d words", out, agreement, n_words)
    return metadata


STAGE_PREFIX = ".export-"  # the hidden folder inside the artifact an export is built in


_ARTIFACT_FILES = frozenset({ARTIFACT_FILE, MODEL_FILE, TOKENIZER_FILE, LEXICON_FILE,
                             CAPITALISED_FILE, WEIGHTS_FILE})


def _check_replaceable(out: Path) -> None:
    """An existing output folder must be empty or hold a model (which the export replaces:
    said when decision biases fitted by `punctum calibrate` go with it); a folder of other
    files is refused (the artifact's files would be mixed with them)."""
    others = sorted(f.name for f in out.iterdir()
                    if f.name not in _ARTIFACT_FILES and not f.name.startswith("."))
    if others:
        shown = ", ".join(others[:3]) + (f" and {len(others) - 3} more" if len(others) > 3
                                         else "")
        raise ValueError(f"{out}: holds other files than a model's ({shown}); export into "
                         f"an empty folder, or a model's folder to replace it")
    try:
        old = json.loads((out / ARTIFACT_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return
    if isinstance(old, dict) and old.get("decision"):
        log.warning("%s: replacing its model; the decision biases punctum calibrate fitted "
                    "for it are not kept (run punctum calibrate again)", out)


def _remove_stale_stages(out: Path) -> None:
    """Staging folders that a killed export left inside `out`."""
    for stale in out.glob(f"{STAGE_PREFIX}*"):
        if stale.is_dir():
            shutil.rmtree(stale, ignore_errors=True)


def _write_model(model: torch.nn.Module, saved: dict, tokenizer: SubwordTokenizer,
                 stage: Path, options: ExportOptions,
                 sample_texts: list[list[str]]) -> tuple[float, int]:
    """ONNX (int8 unless options say fp32) into stage/model.onnx, checked against torch;
    returns (label agreement, words compared)."""
    fp32 = stage / "fp32.onnx"
    export_onnx(model, fp32)
    if options.int8:
        quantize_int8(fp32, stage / MODEL_FILE, options.per_channel)
        fp32.unlink()
    else:
        fp32.rename(stage / MODEL_FILE)
    batches = sample_batches(tokenizer, sample_texts, options.parity_windows,
                             saved["recipe"]["data"]["max_subwords"])
    agreement = label_agreement(model, stage / MODEL_FILE, batches)
    if agreement < options.min_agreement:
        raise ValueError(f"ONNX/torch label agreement {agreement:.4f} is below "
                         f"{options.min_agreement}")
    return agreement, sum(len(p) for _, _, ps in batches for p in ps)


def _write_lexicons(saved: dict, stage: Path, options: ExportOptions) -> None:
    """lexicon.json and capitalised.json (not without training text) from the head of the
    training text, into stage."""
    data = relocated_data(saved["recipe"]["data"], options.data_root)
    texts = (head_texts(data["sources"], options.lexicon_documents, data["val_fraction"])
             if options.lexicon_documents > 0 else [])
    inventory = Inventory.from_dict(saved["inventory"])
    (stage / LEXICON_FILE).write_text(json.dumps(_lexicon(texts, inventory), indent=0,
                                                 sort_keys=True, ensure_ascii=False))
    if texts:
        write_capitalised(stage, build_capitalised(texts, inventory),
                          {"documents_per_source": options.lexicon_documents,
                           "validation_documents_skipped": data["val_fraction"]})
    elif options.lexicon_documents > 0:
        log.warning("no training text found for the casing lexicon and capitalised words "
                    "(missing sources?): the artifact has neither")


def _move_into(stage: Path, out: Path) -> None:
    """The staged artifact files moved into `out`, punctum.json last; files of an earlier
    export that this one does not write (its weights, its capitalised words: they would be
    read as this model's) are removed first."""
    for name in (WEIGHTS_FILE, CAPITALISED_FILE):
        if not (stage / name).exists():
            (out / name).unlink(missing_ok=True)
    files = [f for f in sorted(stage.iterdir()) if f.name != ARTIFACT_FILE]
    for file in [*files, stage / ARTIFACT_FILE]:
        os.replace(file, out / file.name)


def _save_weights(model: torch.nn.Module, path: Path) -> None:
    from safetensors.torch import save_file

    save_file({k: v.contiguous() for k, v in model.state_dict().items()}, str(path))


def parity_texts(checkpoint: str | Path, max_words: int = 20000,
                 data_root: str | Path | None = None) -> list[list[str]]:
    """Word lists for the parity check: the recipe's dev set (Che tokens, timed JSONL or
    punctuated text, TSV or XML, as training reads it), else its first sources.

    Args:
        data_root: where the training data is now, if it has moved (`relocate`).

    Raises:
        ValueError: neither the dev set nor any source is found (the recipe's paths are
            as training was given them, relative to where it ran).
    """
    from punctum.corpora import iter_documents

    data = relocated_data(load_checkpoint(checkpoint)["recipe"]["data"], data_root)
    dev = data.get("dev")
    if dev and Path(dev).is_file():
        return _dev_words(dev, max_words, data.get("language", "en"))
    texts, total = [], 0
    for source in data["sources"]:
        if not Path(source["path"]).is_file():
            continue
        for document in iter_documents(source["path"]):
            texts.append(list(document.words))
            total += len(document)
            if total >= max_words:
                return texts
    if not texts:
        raise ValueError(f"{checkpoint}: neither its dev set nor its training text is found "
                         f"({dev or data['sources'][0]['path']}); run export where training "
                         f"ran (the recipe's paths are relative to it) or give the data's "
                         f"folder now (--data-root)")
    return texts


def _dev_words(dev: str, max_words: int, language: str) -> list[list[str]]:
    """The words of a dev file (as training reads it), per document, about max_words."""
    from punctum.train.data import dev_documents

    texts, total = [], 0
    for document in dev_documents(dev, language)[0]:
        words = (document[0] if isinstance(document, tuple) else document).words
        texts.append(list(words[:max_words - total]))
        total += len(texts[-1])
        if total >= max_words:
            break
    return texts


