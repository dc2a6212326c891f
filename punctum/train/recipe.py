"""Recipes: one TOML file per trained model, mapped onto config dataclasses.

A recipe has four tables: [model] (kind + the model config fields), [tokenizer], [data]
(with [[data.sources]]) and [train]. Unknown keys, wrong types and missing data paths
fail before training starts, with a one-line message naming the key or the path.
Relative data paths are resolved against the data root (``--data-root``).
"""

from __future__ import annotations

import dataclasses
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from punctum.config import build_dataclass, changed_keys, existing, read_toml
from punctum.corpora import iter_lines
from punctum.pauses import PauseNoise
from punctum.runtime import MAX_THREADS
from punctum.tokenizer import LABEL_POSITIONS
from punctum.train.data import DataConfig, SourceConfig
from punctum.train.distill import DistillConfig
from punctum.train.noise import NoiseConfig

if TYPE_CHECKING:
    from punctum.train.speech import SpeechDataConfig


@dataclass(frozen=True)
class TokenizerConfig:
    """How subwords are made.

    Args:
        kind: "bpe" (trained by punctum) or "pretrained" (the encoder's own tokenizer).
        vocab_size: BPE pieces (on-device paper: 5000).
        label_position: "first" or "last" subword of a word carries its labels.
        train_documents: documents per source used to train the BPE (0 = all).
        path: tokenizer folder/file for kind "pretrained" (default: the model's).
        marks: speech (CTC) vocabularies only: include the marks as tokens (False for an
            unpunctuated ASR model).
    """

    kind: str = "bpe"
    vocab_size: int = 5000
    label_position: str = "first"
    train_documents: int = 3000
    path: str | None = None
    marks: bool = True

    def __post_init__(self) -> None:
        if self.kind not in ("bpe", "pretrained"):
            raise ValueError(f"tokenizer.kind must be 'bpe' or 'pretrained', got {self.kind!r}")
        if not 100 <= self.vocab_size <= 200_000:
            raise ValueError(f"tokenizer.vocab_size must be in [100, 200000], "
                             f"got {self.vocab_size}")
        if self.train_documents < 0:
            raise ValueError(f"tokenizer.train_documents must be >= 0 (0 = all), "
                             f"got {self.train_documents}")
        if self.label_position not in LABEL_POSITIONS:
            raise ValueError(f"tokenizer.label_position must be "
                             f"{' or '.join(map(repr, LABEL_POSITIONS))}, "
                             f"got {self.label_position!r}")


@dataclass(frozen=True)
class TrainConfig:
    """Optimisation and bookkeeping.

    Args:
        steps: optimizer steps in total.
        batch_size: windows per step (per process when distributed).
        lr, weight_decay, grad_clip: Adam(W) settings and the gradient-norm clip.
        optimizer: "adam" (on-device paper) or "adamw".
        scheduler: "plateau" (ReduceLROnPlateau on dev F1) or "linear" (warmup + decay).
        plateau_factor, plateau_patience: ReduceLROnPlateau settings (paper: 0.8, 2).
        warmup_steps: linear warmup for the "linear" scheduler.
        label_smoothing: cross-entropy label smoothing.
        eval_every, checkpoint_every, log_every: in steps.
        dev_words: words of the dev set used at each evaluation (0 = all).
        eval_batch_size: windows per evaluation batch.
        seed: seeds python, numpy, torch and the window sampler.
        device: "auto", "cpu" or "cuda".
        dtype: "fp32" or "bf16" (autocast; norms, softmax and loss stay fp32).
        threads: torch CPU threads (0 = torch's default).
        init_from: a checkpoint whose model weights start this run (fine-tuning; punctuation
            adaptation of a speech model); its run folder's tokenizer is reused. Or an
            artifact, a bundled name ("en-tiny") or a folder: its weights.safetensors, else
            the weights read back from its model.onnx (`punctum.train.recover`), and its
            tokenizer.
    """

    steps: int = 1000
    batch_size: int = 32
    lr: float = 0.002
    weight_decay: float = 2.5e-5
    grad_clip: float = 1.0
    optimizer: str = "adam"
    scheduler: str = "plateau"
    plateau_factor: float = 0.8
    plateau_patience: int = 2
    warmup_steps: int = 0
    label_smoothing: float = 0.0
    eval_every: int = 200
    checkpoint_every: int = 200
    log_every: int = 20
    dev_words: int = 30000
    eval_batch_size: int = 64
    seed: int = 0
    device: str = "auto"
    dtype: str = "fp32"
    threads: int = 0
    init_from: str | None = None

    def __post_init__(self) -> None:
        checks = {
            "steps": self.steps > 0, "batch_size": self.batch_size > 0,
            "lr": 0 < self.lr < math.inf, "weight_decay": 0 <= self.weight_decay < math.inf,
            "grad_clip": 0 < self.grad_clip < math.inf,
            "optimizer": self.optimizer in ("adam", "adamw"),
            "scheduler": self.scheduler in ("plateau", "linear"),
            "plateau_factor": 0 < self.plateau_factor < 1,
            "plateau_patience": self.plateau_patience >= 0,
            "warmup_steps": self.warmup_steps >= 0,
            "dtype": self.dtype in ("fp32", "bf16"),
            "device": self.device in ("auto", "cpu", "cuda"),
            "label_smoothing": 0 <= self.label_smoothing < 1,
            "eval_every": self.eval_every > 0, "checkpoint_every": self.checkpoint_every > 0,
            "log_every": self.log_every > 0, "eval_batch_size": self.eval_batch_size > 0,
            "dev_words": self.dev_words >= 0, "seed": 0 <= self.seed < 2 ** 32,
            "threads": not isinstance(self.threads, bool) and 0 <= self.threads <= MAX_THREADS,
        }
        for name, ok in checks.items():
            if not ok:
                raise ValueError(f"train.{name} has an invalid value: {getattr(self, name)!r}")
        if self.scheduler == "linear" and self.warmup_steps >= self.steps:
            # the linear schedule decays over steps - warmup_steps, which must be > 0
            raise ValueError(f"train.warmup_steps ({self.warmup_steps}) must be smaller than "
                             f"train.steps ({self.steps}) with the linear scheduler")


@dataclass(frozen=True)
class Recipe:
    """A whole training recipe."""

    model: dict
    tokenizer: TokenizerConfig = field(default_factory=TokenizerConfig)
    data: DataConfig | SpeechDataConfig = field(default_factory=lambda: DataConfig(sources=()))
    train: TrainConfig = field(default_factory=TrainConfig)
    name: str = ""

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


def parse_recipe(raw: dict, data_root: str | Path | None = None, name: str = "") -> Recipe:
    """Build a Recipe from a parsed TOML dict; relative data paths join `data_root`."""
    unknown = set(raw) - {"model", "tokenizer", "data", "train"}
    if unknown:
        raise ValueError(f"unknown recipe table(s): {', '.join(sorted(unknown))}")
    for table in ("model", "tokenizer", "data", "train"):
        if not isinstance(raw.get(table, {}), dict):
            raise ValueError(f"{table} must be a table ([{table}]), got "
                             f"{type(raw[table]).__name__}")
    if "kind" not in raw.get("model", {}):
        raise ValueError("model.kind is required (e.g. 'cnn_bilstm')")
    _check_model_table(raw["model"])
    if raw["model"]["kind"] == "ctc_encoder":
        return _speech_recipe(raw, data_root, name)
    data = dict(raw.get("data", {}))
    root = Path(data_root) if data_root else Path(".")
    sources = data.pop("sources", [])
    if not isinstance(sources, list):
        raise ValueError("data.sources must be an array of tables ([[data.sources]])")
    data["sources"] = tuple(_source(s, root, i) for i, s in enumerate(sources))
    if data.get("dev"):
        if not isinstance(data["dev"], str):
            raise ValueError(f"data.dev must be a file path (a string), got {data['dev']!r}")
        data["dev"] = existing(root / data["dev"], "data.dev")
    data["noise"] = _build(NoiseConfig, data.get("noise", {}), "data.noise")
    data["pause_noise"] = _pause_noise(data.get("pause_noise", {}))
    data["distill"] = _build(DistillConfig, data.get("distill", {}), "data.distill")
    return Recipe(
        model=dict(raw["model"]),
        tokenizer=_build(TokenizerConfig, raw.get("tokenizer", {}), "tokenizer"),
        data=_build(DataConfig, data, "data"),
        train=_build(TrainConfig, raw.get("train", {}), "train"),
        name=name,
    )


def _build(cls, values: dict, where: str):
    """A recipe table as a dataclass (`build_dataclass`); nan and inf are refused."""
    return build_dataclass(cls, values, where, finite=True)


def _pause_noise(table) -> PauseNoise:
    """The [data.pause_noise] table; scale_range must be two numbers [low, high]."""
    if not isinstance(table, dict):
        raise ValueError(f"data.pause_noise must be a table, got {table!r}")
    from punctum.models.validation import is_number  # (punctum.models imports torch)

    table = dict(table)
    if "scale_range" in table:
        scale = table["scale_range"]
        if not isinstance(scale, (list, tuple)) or len(scale) != 2 \
                or not all(map(is_number, scale)):
            raise ValueError(f"data.pause_noise.scale_range must be two numbers [low, high], "
                             f"got {scale!r}")
        table["scale_range"] = tuple(scale)
    return _build(PauseNoise, table, "data.pause_noise")


def _check_model_table(model: dict) -> None:
    """[model]'s kind, keys and values before any data is read (the sizes that come from
    the tokenizer are stood in for)."""
    from dataclasses import fields

    from punctum.models import MODELS

    kind = model["kind"]
    if kind not in MODELS:
        raise ValueError(f"model.kind must be one of {sorted(MODELS)}, got {kind!r}")
    config_cls = MODELS[kind][0]
    allowed = {f.name for f in fields(config_cls)} | {"kind", "pretrained"}
    unknown = sorted(set(model) - allowed)
    if unknown:
        raise ValueError(f"unknown key(s) model.{', model.'.join(unknown)} for {kind}")
    for key, value in model.items():
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError(f"model.{key} must be a finite number, got {value!r}")
    sizes = {"vocab_size": 2}
    if kind in ("cnn_bilstm", "transformer_tagger"):
        sizes.update(n_punct=2, n_case=2, pad_id=0)
    # a pretrained encoder's own sizes replace the scratch defaults (checked when built)
    derived = ("d_model", "n_layers", "n_heads", "d_ff") if model.get("pretrained") else ()
    values = {k: v for k, v in model.items() if k not in ("kind", "pretrained", *derived)}
    try:
        config_cls(**{**values, **sizes})
    except (TypeError, ValueError) as error:
        raise ValueError(f"model: {error}") from None


def _speech_recipe(raw: dict, data_root: str | Path | None, name: str) -> Recipe:
    """A CTC speech recipe: [data] holds manifests (punctum.train.speech)."""
    from punctum.train.speech import speech_data_config

    root = Path(data_root) if data_root else Path(".")
    tokenizer = _build(TokenizerConfig, {"vocab_size": 2000, **raw.get("tokenizer", {})},
                       "tokenizer")
    return Recipe(model=dict(raw["model"]), tokenizer=tokenizer,
                  data=speech_data_config(raw.get("data", {}), root),
                  train=_build(TrainConfig, raw.get("train", {}), "train"), name=name)


def _source(values: dict, root: Path, index: int) -> SourceConfig:
    """One [[data.sources]] entry, its path joined to the data root and checked."""
    source = _build(SourceConfig, values, f"data.sources[{index}]")
    path = existing(root / source.path, f"data.sources[{index}].path")
    if source.format == "text" and _holds_timed_records(path):
        raise ValueError(f"data.sources[{index}]: {path} holds `punctum timings` records "
                         f"(JSON with pauses); give format = \"timed\" (read as text, the "
                         f"model would learn the JSON)")
    return dataclasses.replace(source, path=path)


def _holds_timed_records(path: str) -> bool:
    """Whether a source's first line is a `punctum timings` record ({"text": ..., "pauses":
    ...}), not a document of text."""
    try:
        first = next(iter_lines(path, errors="replace"), "")
    except (OSError, ValueError):
        return False  # (the reader names the problem when the data is read)
    if not first.lstrip().startswith("{"):
        return False
    try:
        record = json.loads(first)
    except ValueError:
        return False
    return isinstance(record, dict) and "text" in record and "pauses" in record


def relocate(path: str, data_root: str | Path | None) -> str:
    """A recorded data path as found now: the path itself when it exists, else the longest
    trailing part of it that exists under `data_root` ("../shared/data/iwslt2011/dev.gz"
    under "/data" is "/data/iwslt2011/dev.gz" when that exists); unchanged when neither is
    found (the caller reports it)."""
    if not data_root or Path(path).exists():
        return path
    parts = Path(path).parts
    for start in range(len(parts)):
        candidate = Path(data_root).joinpath(*parts[start:])
        if parts[start] not in ("/", "..", ".") and candidate.exists():
            return str(candidate)
    return path


def relocated_data(data: dict, data_root: str | Path | None) -> dict:
    """A checkpoint's recorded [data] table with its file paths looked up under data_root
    (`relocate`): dev, each source's path, speech training manifests."""
    if not data_root:
        return data
    data = dict(data)
    if data.get("dev"):
        data["dev"] = relocate(data["dev"], data_root)
    if data.get("sources"):
        data["sources"] = [{**s, "path": relocate(s["path"], data_root)}
                           for s in data["sources"]]
    if isinstance(data.get("train"), (list, tuple)):
        data["train"] = [relocate(p, data_root) for p in data["train"]]
    return data


# Recipe settings that a resumed run may change: they alter neither what was learnt so far
# nor the restored optimizer, scheduler and sampler state. train.steps extends (or ends
# earlier) a run, except with the linear scheduler, whose decay it would reshape mid-run.
# Everything else (model, tokenizer, data, batch_size, lr, optimizer, scheduler, seed, ...)
# must stay as the run began.
RESUMABLE = ("name", "train.steps", "train.eval_every", "train.checkpoint_every",
             "train.log_every", "train.eval_batch_size", "train.threads", "train.device")


def resume_changes(stored: dict, recipe: Recipe) -> list[str]:
    """Dotted keys ("train.batch_size", "data.sources") whose values differ between the
    recipe a checkpoint recorded and `recipe`, less those that may change on resume
    (RESUMABLE). Data paths compare as the files they name; a [data]/[train]/[tokenizer]
    key that the checkpoint does not record (an older punctum's) is not compared."""
    old, new = _settings(stored), _settings(recipe.to_dict())
    allowed = resumable(recipe)
    return [key for key in changed_keys(old, new) if key not in allowed
            and (key in old or key.startswith("model."))]


def resumable(recipe: Recipe) -> tuple[str, ...]:
    """The keys of RESUMABLE that `recipe` may change on resume."""
    linear = recipe.train.scheduler == "linear"
    return tuple(k for k in RESUMABLE if not (linear and k == "train.steps"))


def _settings(recipe: dict) -> dict:
    """A recipe dict as {dotted key: JSON value}, data paths resolved."""
    plain = json.loads(json.dumps(recipe, default=str))
    data, train = plain.get("data") or {}, plain.get("train") or {}
    for source in data.get("sources") or []:
        if isinstance(source, dict) and isinstance(source.get("path"), str):
            source["path"] = _resolved(source["path"])
    for table, key in ((data, "dev"), (train, "init_from")):
        if isinstance(table.get(key), str):
            table[key] = _resolved(table[key])
    if isinstance(data.get("train"), list):  # speech manifests
        data["train"] = [_resolved(p) if isinstance(p, str) else p for p in data["train"]]
    return _flatten(plain)


def _resolved(path: str) -> str:
    return str(Path(path).resolve())


def _flatten(values: dict, prefix: str = "") -> dict:
    """{"train": {"lr": 1}} -> {"train.lr": 1}; lists (data.sources) stay whole."""
    flat = {}
    for key, value in values.items():
        if isinstance(value, dict) and value:
            flat.update(_flatten(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = value
    return flat


def load_recipe(path: str | Path, data_root: str | Path | None = None) -> Recipe:
    """Read and validate a TOML recipe file."""
    return parse_recipe(read_toml(path), data_root, name=Path(path).stem)
