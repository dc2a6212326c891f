"""The training loop behind `punctum train RECIPE`.

    punctum train recipes/en-tiny.toml --data-root ../shared/data --out runs/en-tiny

Steps: make or load the tokenizer, encode the corpora (cached), build the model, then
optimise with periodic dev evaluation (best checkpoint kept by dev punctuation F1) and
atomic checkpoints (``last.pt``; ``--resume`` continues at the same step, data position and
random state). Launched by torchrun, it trains data-parallel (gloo on CPU, nccl on GPU).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import json
import logging
import math
import os
import shutil
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

from punctum import artifact as artifacts
from punctum import metrics
from punctum.fileio import atomic_writer
from punctum.models import build_model
from punctum.models.losses import distill_loss
from punctum.models.transformer_tagger import TransformerTagger
from punctum.pauses import N_BUCKETS, bucketize
from punctum.text import CASES, LOWER, NULL, get_inventory
from punctum.tokenizer import SubwordTokenizer, train_bpe
from punctum.train import checkpoint, recover
from punctum.train.batching import Batch, WindowSampler, iter_batches, sequential_windows
from punctum.train.data import EncodedCorpus, encode_source, iter_source, read_dev
from punctum.train.distill import Teacher
from punctum.train.pretrained import resolve_pretrained
from punctum.train.recipe import Recipe, resumable, resume_changes

log = logging.getLogger(__name__)
TOKENIZER_NAME = "tokenizer.json"


@dataclass
class RunState:
    """What a checkpoint records besides weights and optimizer."""

    step: int = 0
    best_f1: float = -1.0
    history: list = field(default_factory=list)
    seconds: float = 0.0

    @property
    def evaluated(self) -> bool:
        """Whether a dev evaluation ran (and so chose best.pt)."""
        return any("dev_f1" in entry for entry in self.history)


@dataclass(frozen=True)
class Distributed:
    rank: int = 0
    world: int = 1

    @property
    def main(self) -> bool:
        return self.rank == 0


def init_distributed(device: str) -> Distributed:
    """Join a torchrun process group when WORLD_SIZE > 1 (gloo on CPU, nccl on CUDA)."""
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world <= 1:
        return Distributed()
    backend = "nccl" if device == "cuda" else "gloo"
    if not torch.distributed.is_initialized():
        torch.distributed.init_process_group(backend)
    return Distributed(torch.distributed.get_rank(), world)


def _barrier(dist: Distributed) -> None:
    if dist.world > 1:
        torch.distributed.barrier()


def resolve_device(name: str) -> str:
    """'auto' picks CUDA when present."""
    if name == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if name == "cuda" and not torch.cuda.is_available():
        raise ValueError("train.device is 'cuda' but no CUDA device is available")
    return name


def autocast(device: str, dtype: str):
    """One autocast context for training and evaluation (bf16 or a no-op). On a CPU without
    bf16 kernels (AVX2 only: oneDNN has no bf16 LSTM there) bf16 runs as fp32, with a warning."""
    if dtype == "bf16" and device == "cpu" and not cpu_has_bf16():
        _warn_bf16_as_fp32()
        return contextlib.nullcontext()
    if dtype == "bf16":
        return torch.autocast(device_type=device, dtype=torch.bfloat16)
    return contextlib.nullcontext()


@functools.cache
def cpu_has_bf16() -> bool:
    """Whether oneDNN has bf16 kernels on this CPU (AVX-512 BF16, AMX or AVX-512 emulation);
    asked once per process (autocast runs every step)."""
    mkldnn = torch.backends.mkldnn
    return bool(mkldnn.is_available() and torch.ops.mkldnn._is_mkldnn_bf16_supported())


@functools.cache
def _warn_bf16_as_fp32() -> None:
    log.warning("this CPU has no bf16 kernels (oneDNN): train.dtype 'bf16' runs in fp32")


# ----------------------------------------------------------------------------- setup

def prepare_tokenizer(recipe: Recipe, out: Path, dist: Distributed) -> SubwordTokenizer:
    """Train the BPE (or load the pretrained tokenizer) once and keep it in the run folder;
    with init_from, the tokenizer its weights belong to."""
    config = recipe.tokenizer
    path = out / TOKENIZER_NAME
    if recipe.train.init_from and recover.is_artifact(recipe.train.init_from):
        recover.check_language(recipe.train.init_from, recipe.data.language, "train.init_from")
    if recipe.train.init_from and dist.main and not path.exists():
        source = weights_tokenizer(recipe.train.init_from)
        if not source.exists():
            raise FileNotFoundError(f"train.init_from: {source}: no tokenizer beside the "
                                    f"checkpoint")
        shutil.copy(source, path)  # the weights belong to that run's subwords
    if config.kind == "pretrained" and not recipe.train.init_from:
        source = config.path or recipe.model.get("pretrained")
        if not source:
            raise ValueError("tokenizer.kind 'pretrained' needs tokenizer.path or model.pretrained")
        tokenizer = SubwordTokenizer.load(resolve_pretrained(source), config.label_position)
        if dist.main:
            tokenizer.save(path)  # the run folder keeps the tokenizer it trained with
        return tokenizer
    if dist.main and not path.exists():
        log.info("training a %d-piece BPE", config.vocab_size)
        data = dataclasses.replace(recipe.data, max_documents=config.train_documents,
                                   noise=dataclasses.replace(recipe.data.noise, drop=0.0,
                                                             insert=0.0, substitute=0.0))
        docs = ((d[0] if isinstance(d, tuple) else d).words  # timed sources: (doc, pauses)
                for s in data.sources for d in iter_source(s, data, "train"))
        train_bpe(docs, config.vocab_size, label_position=config.label_position).save(path)
    _barrier(dist)
    return SubwordTokenizer.load(path, config.label_position)


def prepare_corpora(recipe: Recipe, tokenizer: SubwordTokenizer, out: Path, dist: Distributed,
                    split: str = "train") -> list[EncodedCorpus]:
    """Encode every source (rank 0 first, so the others read its cache)."""
    cache = out / "cache"
    teacher = None
    if recipe.data.distill.enabled and split == "train":
        teacher = Teacher(recipe.data.distill, get_inventory(recipe.data.language).post_labels,
                          recipe.data.language)
    if dist.main:
        for source in recipe.data.sources:
            encode_source(source, recipe.data, tokenizer, split, cache, teacher)
    _barrier(dist)
    return [encode_source(s, recipe.data, tokenizer, split, cache, teacher)
            for s in recipe.data.sources]


def prepare_dev(recipe: Recipe, tokenizer: SubwordTokenizer) -> EncodedCorpus | None:
    """The dev set (Che format, or timed JSONL with pauses) encoded, or None."""
    if not recipe.data.dev:
        return None
    return read_dev(recipe.data.dev, tokenizer, recipe.data.language)


def build_for_recipe(recipe: Recipe, tokenizer: SubwordTokenizer) -> torch.nn.Module:
    """The model of the recipe, sized to the tokenizer and the label inventory."""
    fields = dict(recipe.model)
    kind = fields.pop("kind")
    sizes = {"n_punct": len(get_inventory(recipe.data.language).post_labels),
             "n_case": len(CASES)}
    init_from = recipe.train.init_from
    if kind == "transformer_tagger" and init_from and recover.is_artifact(init_from):
        # The artifact's config holds the encoder's (encoder_config): no pretrained folder
        # is needed to rebuild it; the recipe's other fields (dropout) still apply.
        fields.pop("pretrained", None)
        config = recover.model_config(artifacts.resolve(init_from))
        return build_model(kind, {**config, **fields, **sizes})
    if kind == "transformer_tagger" and fields.get("pretrained"):
        path = resolve_pretrained(fields.pop("pretrained"))
        return TransformerTagger.from_pretrained(path, **sizes, **fields)
    return build_model(kind, {**fields, **sizes, "vocab_size": tokenizer.vocab_size,
                              "pad_id": tokenizer.pad_id})


def make_optimizer(model: torch.nn.Module, config):
    """Adam(W) and the scheduler named in the config."""
    cls = torch.optim.Adam if config.optimizer == "adam" else torch.optim.AdamW
    optimizer = cls(model.parameters(), lr=config.lr, weight_decay=config.weight_decay)
    if config.scheduler == "plateau":
        scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(
            optimizer, mode="max", factor=config.plateau_factor,
            patience=config.plateau_patience)
    else:
        def linear(step: int) -> float:
            warm = max(config.warmup_steps, 1)
            return min((step + 1) / warm, max(0.0, (config.steps - step) / (config.steps - warm)))

        scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, linear)
    return optimizer, scheduler


# ----------------------------------------------------------------------------- steps

def _to_device(batch: Batch, device: str) -> tuple[torch.Tensor, ...]:
    return tuple(torch.from_numpy(a).to(device, non_blocking=True)
                 for a in (batch.ids, batch.lengths, batch.punct, batch.case))


def uses_pauses(model: torch.nn.Module) -> bool:
    """Whether the model reads pause buckets (a PauseAware model)."""
    return getattr(getattr(model, "config", None), "pause_buckets", 0) > 0


def model_inputs(model: torch.nn.Module, batch: Batch, device: str) -> dict:
    """Keyword inputs beyond (ids, lengths): {"pauses": (B, T) int64 buckets} for a
    PauseAware model (all unknown when the batch has no timings), else {}."""
    if not uses_pauses(model):
        return {}
    seconds = batch.pauses if batch.pauses is not None else np.full(batch.ids.shape, np.nan)
    return {"pauses": torch.from_numpy(bucketize(seconds)).to(device)}


def row_settings(batch: Batch, default_smoothing: float, device: str):
    """(weights, smoothing) for the loss: (B, T) weights or None, (B, 1) smoothing or a float."""
    shape = batch.punct.shape
    weights = None
    if batch.row_weight is not None:
        weights = torch.from_numpy(batch.row_weight).to(device)[:, None].expand(shape)
    smoothing = default_smoothing
    if batch.row_smoothing is not None:
        smoothing = torch.from_numpy(batch.row_smoothing).to(device)[:, None]
    return weights, smoothing


def train_step(task, wrapped, optimizer, batch, recipe: Recipe) -> float:
    """One optimizer step on the task's loss; returns the loss. A non-finite loss or
    gradient norm skips the step (the weights stay finite) and returns nan: the loop stops.
    (The gradients are all-reduced, so every data-parallel process sees the same norm.)"""
    wrapped.train()
    loss = task.loss(wrapped, batch)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    norm = torch.nn.utils.clip_grad_norm_(task.model.parameters(), recipe.train.grad_clip)
    value = float(loss.detach())
    if not (math.isfinite(value) and bool(torch.isfinite(norm))):
        return math.nan
    optimizer.step()
    return value


class TaggingTask:
    """Punctuation + casing tagging on text windows (CNN-BiLSTM, Transformer tagger).

    A task owns what differs between kinds of model: tokenizer, data sampler, model, loss,
    dev evaluation and the extra checkpoint keys; `train` runs the same loop for every task.
    """

    def __init__(self, recipe: Recipe, out: Path, dist: Distributed, device: str) -> None:
        self.recipe, self.device = recipe, device
        self.tokenizer = prepare_tokenizer(recipe, out, dist)
        self.sampler = tagging_sampler(recipe, prepare_corpora(recipe, self.tokenizer, out, dist),
                                       self.tokenizer, dist)
        self.model = build_for_recipe(recipe, self.tokenizer).to(device)
        if uses_pauses(self.model) and self.model.config.pause_buckets != N_BUCKETS:
            raise ValueError(f"model.pause_buckets must be {N_BUCKETS} (the buckets of "
                             f"punctum.pauses.EDGES), got {self.model.config.pause_buckets}")
        self.dev = prepare_dev(recipe, self.tokenizer) if dist.main else None

    def loss(self, wrapped, batch: Batch) -> torch.Tensor:
        ids, lengths, punct, case = _to_device(batch, self.device)
        weights, smoothing = row_settings(batch, self.recipe.train.label_smoothing, self.device)
        extra = model_inputs(self.model, batch, self.device)
        with autocast(self.device, self.recipe.train.dtype):
            punct_logits, case_logits = wrapped(ids, lengths, **extra)
        loss = self.model.loss(punct_logits.float(), case_logits.float(), punct, case,
                               punct_weights=weights, case_weights=weights,
                               label_smoothing=smoothing)
        distill = self.recipe.data.distill
        if batch.soft is None or distill.weight == 0:
            return loss
        soft = torch.from_numpy(batch.soft).to(self.device)
        return loss + distill.weight * distill_loss(punct_logits, case_logits, soft,
                                                    self.model.config.punct_loss_weight)

    def evaluate(self) -> dict | None:
        """{"score": dev punctuation F1 (selects the best checkpoint), "dev_f1": ...}."""
        if self.dev is None:
            return None
        scores = evaluate(self.model, self.dev, self.recipe, self.tokenizer, self.device,
                          self.recipe.train.dev_words)
        return {"score": scores["punct_f1"], "dev_f1": scores["punct_f1"]}

    def payload(self) -> dict:
        return {"inventory": get_inventory(self.recipe.data.language).to_dict(),
                "label_position": self.tokenizer.label_position}


def tagging_sampler(recipe: Recipe, corpora, tokenizer, dist: Distributed) -> WindowSampler:
    """The window sampler over the recipe's sources, with per-source loss settings."""
    sources = recipe.data.sources
    per_source_smoothing = any(s.label_smoothing is not None for s in sources)
    smoothing = [recipe.train.label_smoothing if s.label_smoothing is None else s.label_smoothing
                 for s in sources] if per_source_smoothing else None
    return WindowSampler(corpora, [s.weight for s in sources], recipe.data.max_subwords,
                         (tokenizer.bos_id, tokenizer.eos_id, tokenizer.pad_id),
                         seed=recipe.train.seed + 1000 * dist.rank,
                         loss_weights=[s.loss_weight for s in sources], smoothing=smoothing,
                         pause_noise=recipe.data.pause_noise)


@torch.no_grad()
def predict_corpus(model, corpus: EncodedCorpus, windows, batch_size: int, special_ids,
                   device: str, dtype: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Gold and predicted label ids at every labelled position of the windows.

    Returns:
        (gold_punct, pred_punct, pred_case_with_gold_case) as flat int64 arrays; the third
        holds (gold_case, pred_case) stacked as shape (2, N) for positions with case labels.
    """
    model.eval()
    gold, pred, cases = [], [], []
    for batch in iter_batches(corpus, windows, batch_size, special_ids):
        ids, lengths, punct, case = _to_device(batch, device)
        with autocast(device, dtype):
            punct_logits, case_logits = model(ids, lengths, **model_inputs(model, batch, device))
        mask = punct >= 0
        gold.append(punct[mask].cpu().numpy())
        pred.append(punct_logits.float().argmax(-1)[mask].cpu().numpy())
        case_mask = case >= 0
        cases.append(np.stack([case[case_mask].cpu().numpy(),
                               case_logits.float().argmax(-1)[case_mask].cpu().numpy()]))
    return np.concatenate(gold), np.concatenate(pred), np.concatenate(cases, axis=1)


def evaluate(model, corpus: EncodedCorpus, recipe: Recipe, tokenizer, device: str,
             max_words: int = 0) -> dict:
    """Punctuation (and, where known, casing) P/R/F1 on an encoded corpus."""
    labels = get_inventory(recipe.data.language).post_labels
    windows = sequential_windows(corpus, recipe.data.max_subwords, max_words)
    special = (tokenizer.bos_id, tokenizer.eos_id, tokenizer.pad_id)
    gold, pred, cases = predict_corpus(model, corpus, windows, recipe.train.eval_batch_size,
                                       special, device, recipe.train.dtype)
    names = np.asarray(labels)
    punct = metrics.score_labels(names[gold], names[pred], labels, NULL)
    result = {"punct_f1": punct.overall.f1, "punct": punct.to_dict(), "words": len(gold)}
    if cases.shape[1]:
        case_names = np.asarray(CASES)
        casing = metrics.score_labels(case_names[cases[0]], case_names[cases[1]], CASES, LOWER)
        result.update(case_f1=casing.overall.f1, case=casing.to_dict())
    return result


# ----------------------------------------------------------------------------- loop

def _payload(run, state: RunState) -> dict:
    return {
        "kind": run.recipe.model["kind"],
        "model_config": dataclasses.asdict(run.model.config),
        "model": run.model.state_dict(),
        "optimizer": run.optimizer.state_dict(),
        "scheduler": run.scheduler.state_dict(),
        "sampler": run.task.sampler.state(),
        "rng": checkpoint.rng_state(),
        "state": dataclasses.asdict(state),
        "recipe": run.recipe.to_dict(),
        **run.task.payload(),
    }


def _resumable(path: Path, recipe: Recipe) -> dict:
    """The checkpoint at `path` if `recipe` can resume it, else a one-line error: a file that
    is no resumable checkpoint, or a recipe changed in settings that resuming cannot take
    (`recipe.resume_changes`; e.g. batch_size, the data, the optimizer or the scheduler)."""
    if not path.exists():
        raise FileNotFoundError(f"{path}: nothing to resume")
    saved = checkpoint.load_checkpoint(path)
    needed = ("model", "optimizer", "scheduler", "sampler", "rng", "state", "recipe")
    missing = [key for key in needed if not isinstance(saved, dict) or key not in saved]
    if missing:
        raise ValueError(f"{path}: not a checkpoint to resume (no {', '.join(missing)}; a "
                         f"soup or an export holds weights only)")
    if not isinstance(saved["recipe"], dict) or not isinstance(saved["state"], dict):
        raise ValueError(f"{path}: not a checkpoint to resume (its recipe or state is not "
                         f"a dict)")
    changed = resume_changes(saved["recipe"], recipe)
    if changed:
        allowed = ", ".join(k.removeprefix("train.") for k in resumable(recipe) if k != "name")
        raise ValueError(f"{path}: the recipe changed since this run began ({', '.join(changed)}"
                         f"); --resume needs it unchanged but for these [train] keys: "
                         f"{allowed}. Restore it, or train the new recipe in another --out")
    return saved


def _restore(saved: dict, path: Path, run: _Run) -> RunState:
    """Load a checkpoint checked by `_resumable` into the run's objects."""
    try:
        run.model.load_state_dict(saved["model"])
        run.optimizer.load_state_dict(saved["optimizer"])
        run.scheduler.load_state_dict(saved["scheduler"])
        run.task.sampler.set_state(saved["sampler"])
        checkpoint.set_rng_state(saved["rng"])
        state = RunState(**saved["state"])
    except (RuntimeError, ValueError, KeyError, TypeError, AttributeError) as error:
        reason = " ".join([line.strip() for line in str(error).splitlines()
                           if line.strip()][:2]) or type(error).__name__
        raise ValueError(f"{path}: does not fit this recipe's model, so it cannot be resumed "
                         f"with it ({reason})") from None
    log.info("resumed from %s at step %d", path, state.step)
    return state


def _evaluate_and_select(run, state: RunState, loss: float) -> None:
    """Dev evaluation: record it, step the plateau scheduler, keep the best checkpoint."""
    result = {"step": state.step, "loss": loss, "lr": run.optimizer.param_groups[0]["lr"]}
    scores = run.task.evaluate()
    if scores is not None:
        score = scores.pop("score")
        result.update(scores)
        if isinstance(run.scheduler, torch.optim.lr_scheduler.ReduceLROnPlateau):
            run.scheduler.step(score)
        if score > state.best_f1:
            state.best_f1 = score
            checkpoint.save_atomic(run.payload(state), run.out / "best.pt")
    state.history.append(result)
    log.info("step %d: %s", state.step, json.dumps(result))


@dataclass
class _Run:
    """The objects of one training run."""

    recipe: Recipe
    out: Path
    dist: Distributed
    device: str
    task: object  # TaggingTask or punctum.train.speech_task.SpeechTask
    wrapped: torch.nn.Module
    optimizer: object
    scheduler: object

    @property
    def model(self) -> torch.nn.Module:
        return self.task.model

    def payload(self, state: RunState) -> dict:
        return _payload(self, state)


def make_task(recipe: Recipe, out: Path, dist: Distributed, device: str):
    """The task for the recipe's model kind."""
    if recipe.model["kind"] == "ctc_encoder":
        from punctum.train.speech_task import SpeechTask

        return SpeechTask(recipe, out, dist, device)
    return TaggingTask(recipe, out, dist, device)


def weights_tokenizer(init_from: str) -> Path:
    """The tokenizer file the init_from weights belong to: the artifact's, or the one beside
    the checkpoint in its run folder."""
    if recover.is_artifact(init_from):
        folder = artifacts.resolve(init_from)
        recover.model_config(folder)  # an ensemble has no weights (nor one tokenizer)
        return folder / artifacts.read_artifact(folder).meta["tokenizer"]["file"]
    if not Path(init_from).is_file():
        raise FileNotFoundError(f"train.init_from: {init_from}: not a checkpoint file, a model "
                                f"folder or a bundled model (bundled: "
                                f"{', '.join(artifacts.available_models())})")
    return Path(init_from).parent / TOKENIZER_NAME


def _initial_state(path: str) -> dict:
    """The model weights of a checkpoint, or of an artifact (a bundled name or a folder:
    `punctum.train.recover`); a one-line error naming a file that holds none."""
    if recover.is_artifact(path):
        return recover.recover_state_dict(artifacts.resolve(path))[2]
    from punctum.train.export import check_checkpoint

    weights_tokenizer(path)  # a missing file is named as init_from
    return check_checkpoint(checkpoint.load_checkpoint(path), path)["model"]


def _load_initial_weights(model: torch.nn.Module, path: str, state: dict | None = None
                          ) -> None:
    """Start from a checkpoint's or an artifact's weights (`state`: those already read by
    `_initial_state`); a different architecture is a one-line error."""
    state = _initial_state(path) if state is None else state
    try:
        result = model.load_state_dict(state, strict=False)
    except (RuntimeError, TypeError, AttributeError) as error:
        lines = [line.strip() for line in str(error).splitlines() if line.strip()]
        first = next((line for line in lines if line.startswith(("size mismatch", "Missing",
                                                                 "Unexpected"))),
                     lines[0] if lines else type(error).__name__)  # (not "Error(s) in ...:")
        raise ValueError(f"train.init_from: {path} does not fit this recipe's model "
                         f"({first[:200]})") from None
    # A pause embedding added to a text model starts from zeros (see CnnBiLstm).
    missing = [k for k in result.missing_keys if not k.startswith("pause_")]
    if missing or result.unexpected_keys:
        names = ", ".join((missing + list(result.unexpected_keys))[:3])
        raise ValueError(f"train.init_from: {path} does not fit this recipe's model "
                         f"(missing or unexpected weights: {names})")
    log.info("model weights from %s", path)


def score_weights(recipe: Recipe, weights: str | Path) -> dict:
    """Dev scores of a checkpoint's or a single-model artifact's weights, measured as a run
    of `recipe` measures its own (its dev file, train.dev_words, windows of max_subwords).

    Raises:
        ValueError: the recipe has no dev file, or the weights do not fit its model.
    """
    if not recipe.data.dev:
        raise ValueError("scoring weights needs data.dev in the recipe")
    recipe = dataclasses.replace(recipe, train=dataclasses.replace(recipe.train,
                                                                   init_from=str(weights)))
    tokenizer = SubwordTokenizer.load(weights_tokenizer(str(weights)),
                                      recipe.tokenizer.label_position)
    model = build_for_recipe(recipe, tokenizer)
    _load_initial_weights(model, str(weights))
    device = resolve_device(recipe.train.device)
    with torch.no_grad():
        return evaluate(model.to(device), prepare_dev(recipe, tokenizer), recipe, tokenizer,
                        device, recipe.train.dev_words)


def _new_run_tokenizer(out: Path, tokenizer: str | Path | None) -> None:
    """A new run's tokenizer.json: `tokenizer` copied in, or none, so that the recipe's is
    made. One left by an attempt that failed before its first checkpoint (another recipe's,
    or trained on data since fixed) would otherwise be trained with, silently."""
    if int(os.environ.get("RANK", "0")) != 0:  # torchrun: the main process alone writes
        return
    path = out / TOKENIZER_NAME
    if tokenizer is not None:
        shutil.copy(tokenizer, path)
    elif path.exists():
        log.info("%s: from an earlier attempt at this run; made again for the recipe", path)
        path.unlink()


def _setup(recipe: Recipe, out: Path) -> _Run:
    device = resolve_device(recipe.train.device)
    dist = init_distributed(device)
    if recipe.train.threads:
        torch.set_num_threads(recipe.train.threads)
    init_from = recipe.train.init_from
    initial = _initial_state(init_from) if init_from else None  # before the tokenizer work
    checkpoint.seed_everything(recipe.train.seed + dist.rank)
    task = make_task(recipe, out, dist, device)
    if init_from:
        _load_initial_weights(task.model, init_from, initial)
    wrapped = task.model
    if dist.world > 1:
        wrapped = torch.nn.parallel.DistributedDataParallel(task.model)
    optimizer, scheduler = make_optimizer(task.model, recipe.train)
    return _Run(recipe, out, dist, device, task, wrapped, optimizer, scheduler)


def train(recipe: Recipe, out_dir: str | Path, resume: bool = False,
          progress: bool = True, tokenizer: str | Path | None = None) -> RunState:
    """Train the recipe's model into `out_dir`; returns the final run state.

    A folder that holds a run (last.pt) is refused unless `resume`: its checkpoints would
    be replaced. `resume` continues last.pt, and refuses a recipe changed since the run
    began in anything but the settings of `recipe.RESUMABLE` (steps to extend a run,
    evaluation/checkpoint/log intervals, threads, device). Writes tokenizer.json, last.pt
    (every checkpoint_every steps), best.pt (best dev F1; the final weights when no dev
    evaluation ran), history.json and curve.png. `tokenizer`: a new run's tokenizer file,
    instead of the recipe's (self-training's student: its teacher's subwords).
    """
    out = Path(out_dir)
    if not resume and (out / "last.pt").exists():
        raise FileExistsError(f"{out}: holds a run already (last.pt); --resume continues it, "
                              f"or choose another --out")
    saved = _resumable(out / "last.pt", recipe) if resume else None  # before any work
    out.mkdir(parents=True, exist_ok=True)
    if not resume:
        _new_run_tokenizer(out, tokenizer)
    run = _setup(recipe, out)
    state = _restore(saved, out / "last.pt", run) if saved is not None else RunState()
    del saved
    if resume and state.step >= recipe.train.steps and run.dist.main:
        log.warning("%s: at step %d already, train.steps is %d: nothing to train (--steps "
                    "sets more)", out, state.step, recipe.train.steps)
    stop = _StopRequest()
    previous = stop.install() if _main_thread() else {}
    try:
        _loop(run, state, progress, stop)
    except KeyboardInterrupt:
        if run.dist.main and stop.at_boundary:
            checkpoint.save_atomic(run.payload(state), out / "last.pt")
            _write_history(out, state)
            log.warning("interrupted at step %d; resume with --resume", state.step)
        elif run.dist.main:
            log.warning("stopped at once; --resume continues from the last checkpoint")
        raise
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    if run.dist.main:
        _finish(run, state)
    _close_distributed(run.dist)
    return state


def _close_distributed(dist: Distributed) -> None:
    """Every rank waits for the main one's last writes, then leaves the process group: a
    process that exits while still in it can abort in gloo's threads ("terminate called
    without an active exception", seen about once in three test-suite runs)."""
    if dist.world > 1 and torch.distributed.is_initialized():
        torch.distributed.barrier()
        torch.distributed.destroy_process_group()


class _StopRequest:
    """SIGINT or SIGTERM asks the loop to stop after the step under way, so that the saved
    checkpoint holds the weights, optimizer, sampler and RNG state of one step boundary and
    --resume continues exactly. A second signal stops at once (the periodic last.pt stays)."""

    def __init__(self) -> None:
        self.requested = False
        self.at_boundary = False

    def install(self) -> dict:
        """Handle SIGINT and SIGTERM; returns the previous handlers."""
        return {signum: signal.signal(signum, self._handle)
                for signum in (signal.SIGINT, signal.SIGTERM)}

    def _handle(self, signum, frame) -> None:
        if self.requested:
            raise KeyboardInterrupt
        self.requested = True
        log.warning("stopping after this step (signal %d; again to stop at once)", signum)

    def check(self) -> None:
        """At a step boundary: raise KeyboardInterrupt when a stop was asked for."""
        if self.requested:
            self.at_boundary = True
            raise KeyboardInterrupt


def _main_thread() -> bool:
    import threading

    return threading.current_thread() is threading.main_thread()


def _loop(run: _Run, state: RunState, progress: bool, stop: _StopRequest | None = None
          ) -> None:
    from tqdm import tqdm

    config = run.recipe.train
    bar = tqdm(total=config.steps, initial=state.step, disable=not (progress and run.dist.main),
               dynamic_ncols=True)
    losses: list[float] = []
    started = time.time() - state.seconds
    while state.step < config.steps:
        batch = run.task.sampler.next_batch(config.batch_size)
        loss = train_step(run.task, run.wrapped, run.optimizer, batch, run.recipe)
        if not math.isfinite(loss):
            raise ValueError(f"the training loss or its gradients became non-finite at step "
                             f"{state.step + 1} (the run diverged): lower train.lr, or check "
                             f"the data and the loss weights (checkpoints saved before it "
                             f"are kept)")
        losses.append(loss)
        state.step += 1
        state.seconds = time.time() - started
        _after_step(run, state, losses, bar)
        if stop is not None and state.step < config.steps:
            stop.check()
    bar.close()


def _after_step(run: _Run, state: RunState, losses: list[float], bar) -> None:
    config = run.recipe.train
    if not isinstance(run.scheduler, torch.optim.lr_scheduler.ReduceLROnPlateau):
        run.scheduler.step()
    bar.update(1)
    if state.step % config.log_every == 0:
        loss = float(np.mean(losses[-config.log_every:]))
        bar.set_postfix(loss=f"{loss:.4f}", best_f1=f"{max(state.best_f1, 0) * 100:.1f}")
        # Without a progress bar (--no-progress, background runs) the log shows the loss.
        log.log(logging.INFO if bar.disable else logging.DEBUG, "step %d loss %.4f (%.2f s/step)",
                state.step, loss, state.seconds / max(state.step, 1))
    last = state.step == config.steps
    if run.dist.main and (state.step % config.eval_every == 0 or last):
        _evaluate_and_select(run, state, float(np.mean(losses[-config.eval_every:])))
    if run.dist.main and (state.step % config.checkpoint_every == 0 or last):
        checkpoint.save_atomic(run.payload(state), run.out / "last.pt")
        _write_history(run.out, state)  # as far as last.pt: an interrupted run's too


def _write_history(out: Path, state: RunState) -> None:
    with atomic_writer(out / "history.json") as handle:
        handle.write(json.dumps(dataclasses.asdict(state), indent=1))


def _finish(run: _Run, state: RunState) -> None:
    """history.json and curve.png; best.pt is the final weights when no dev evaluation
    chose one (no dev set, fewer steps than eval_every, or no score above the start)."""
    if not (run.out / "best.pt").exists():
        checkpoint.save_atomic(run.payload(state), run.out / "best.pt")
    _write_history(run.out, state)
    try:
        plot_curve(state.history, run.out / "curve.png")
    except ImportError:
        log.warning("matplotlib is not installed: no curve.png")


def plot_curve(history: list[dict], path: Path) -> None:
    """Training loss and dev F1 against steps, as a PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    steps = [h["step"] for h in history]
    figure, left = plt.subplots(figsize=(7, 4))
    left.plot(steps, [h["loss"] for h in history], color="tab:blue", label="train loss")
    left.set_xlabel("step")
    left.set_ylabel("train loss")
    if any("dev_f1" in h for h in history):
        right = left.twinx()
        right.plot(steps, [h.get("dev_f1", float("nan")) * 100 for h in history],
                   color="tab:red", label="dev F1")
        right.set_ylabel("dev punctuation F1")
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)
