"""Discriminative self-training (Chen et al., Interspeech 2021) as `punctum selftrain RECIPE`.

A self-training recipe is an ordinary training recipe plus a [selftrain] table:

    [selftrain]
    pool = ["text/qmsum_meetings/qmsum_meetings.txt.gz"]    # unlabelled: marks/case stripped
    eval_files = ["iwslt2011/test2011", "iwslt2011/dev2012.gz"]
    alpha = 0.5          # loss weight of pseudo labels: L = sum_human l + alpha sum_pseudo l
    beta_human = 0.1     # label smoothing of human labels (beta_1)
    beta_pseudo = 0.2    # label smoothing of pseudo labels (beta_2)
    rounds = 3           # at most; stops when dev F1 stops improving
    student_init = "pretrained"   # or "teacher": warm-start each student (short CPU budgets)
    student_train = {steps = 1000, lr = 3e-5, warmup_steps = 50}   # [train] overrides

Round 0 trains the teacher on the labelled sources, or takes `teacher`: a checkpoint, or a
model artifact (a bundled name such as "en-accurate", or an exported folder), whose dev F1 is
measured as the students' is (`trainer.score_weights`). Each round r >= 1 exports the best
model so far as an fp32 ONNX artifact (an artifact teacher is used as it is), pseudo-labels the pool
with it (batched, resumable by parts, deterministic), and trains a student on labelled +
pseudo-labelled data: from the same initialisation as the teacher (the paper), or, with
student_init = "teacher", from the teacher's weights for a shorter run (student_train).
Everything lives in the output folder:

    pool.txt.gz            the normalised pool (checked against eval_files once)
    round-0/               teacher run (best.pt, history.json, ...), or round.json of a
                           given teacher
    round-r/teacher/       artifact used for pseudo labels
    round-r/pseudo/        part-NNNNN.txt, then pseudo.txt.gz
    round-r/student/       student run
    selftrain.json         dev F1 per round and the best round; best.pt is its checkpoint
                           (none when an artifact teacher stays best)
"""

from __future__ import annotations

import dataclasses
import json
import logging
import random
import shutil
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from punctum.config import build_dataclass, changed_keys, existing, read_toml
from punctum.corpora import iter_lines, iter_tsv
from punctum.evaluation import detect_format, load_scored
from punctum.fileio import atomic_writer
from punctum.runtime import MAX_THREADS
from punctum.text import normalize, render, sentence_spans
from punctum.train import recover
from punctum.train.data import SourceConfig
from punctum.train.recipe import Recipe, parse_recipe

log = logging.getLogger(__name__)


STUDENT_INITS = ("pretrained", "teacher")


@dataclass(frozen=True)
class SelfTrainConfig:
    """The [selftrain] table.

    Args:
        pool: unlabelled text files (one document per line; .tsv: its `text` column); any
            marks and case in them are stripped, so labels never leak in.
        eval_files: evaluation files the pool must not overlap (Che, text, TSV or XML).
        alpha: loss weight of pseudo-labelled positions (0 = ignore them).
        beta_human, beta_pseudo: label smoothing of human and pseudo labels.
        pseudo_weight: sampling weight of the pseudo-labelled source in the mixture.
        rounds: self-training rounds at most (each makes a student).
        min_confidence: keep only pseudo-labelled sentences whose every word's mark
            probability is at least this (0 = keep all).
        ngram, max_shared_ngrams: the overlap check: refuse a pool that shares more than
            max_shared_ngrams distinct n-grams with the evaluation files.
        teacher: a checkpoint, or a single-model artifact (bundled name or folder), to
            start from instead of training round 0.
        chunk_documents: pool documents per pseudo-label part (the unit of resuming).
        max_pool_documents: use at most this many pool documents (0 = all).
        max_pool_words: keep a random subset of the pool's documents (seeded, in their
            order) of at most about this many words (0 = all).
        threads: ONNX Runtime threads for pseudo-labelling (0 = its default).
        student_init: "pretrained" (each student starts where the teacher started, as in
            the paper) or "teacher" (each student starts from its teacher's weights).
        student_train: [train] fields that students override (e.g. steps, lr,
            warmup_steps), for warm-started students that need fewer steps.
    """

    pool: tuple[str, ...]
    eval_files: tuple[str, ...] = ()
    alpha: float = 1.0
    beta_human: float = 0.0
    beta_pseudo: float = 0.0
    pseudo_weight: float = 1.0
    rounds: int = 1
    min_confidence: float = 0.0
    ngram: int = 8
    max_shared_ngrams: int = 0
    teacher: str | None = None
    chunk_documents: int = 512
    max_pool_documents: int = 0
    max_pool_words: int = 0
    threads: int = 0
    student_init: str = "pretrained"
    student_train: dict = dataclasses.field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "pool", tuple(self.pool))
        object.__setattr__(self, "eval_files", tuple(self.eval_files))
        checks = [
            (bool(self.pool), "selftrain.pool must name at least one file"),
            (self.alpha >= 0, f"selftrain.alpha must be >= 0, got {self.alpha}"),
            (0 <= self.beta_human < 1 and 0 <= self.beta_pseudo < 1,
             "selftrain.beta_human and beta_pseudo must be in [0, 1)"),
            (self.pseudo_weight > 0, "selftrain.pseudo_weight must be > 0"),
            (self.rounds >= 1, f"selftrain.rounds must be >= 1, got {self.rounds}"),
            (0 <= self.min_confidence < 1, "selftrain.min_confidence must be in [0, 1)"),
            (2 <= self.ngram <= 32, "selftrain.ngram must be in [2, 32]"),
            (self.max_shared_ngrams >= 0, "selftrain.max_shared_ngrams must be >= 0"),
            (self.max_pool_documents >= 0, "selftrain.max_pool_documents must be >= 0 (0: all)"),
            (self.max_pool_words >= 0, "selftrain.max_pool_words must be >= 0 (0: all)"),
            (0 <= self.threads <= MAX_THREADS, f"selftrain.threads must be from 0 (ONNX "
             f"Runtime's default) to {MAX_THREADS}"),
            (self.chunk_documents >= 1, "selftrain.chunk_documents must be >= 1"),
            (self.student_init in STUDENT_INITS,
             f"selftrain.student_init must be one of {STUDENT_INITS}, got {self.student_init!r}"),
        ]
        for ok, message in checks:
            if not ok:
                raise ValueError(message)


def load_selftrain_recipe(path: str | Path, data_root: str | Path | None = None
                          ) -> tuple[Recipe, SelfTrainConfig]:
    """The training recipe and the [selftrain] table; relative paths join data_root."""
    raw = read_toml(path)
    if "selftrain" not in raw:
        raise ValueError(f"{path}: no [selftrain] table (see punctum/train/selftrain.py)")
    table = raw.pop("selftrain")
    recipe = parse_recipe(raw, data_root, name=Path(path).stem)
    root = Path(data_root) if data_root else Path(".")
    config = build_dataclass(SelfTrainConfig, table, "selftrain", finite=True)
    for key in ("pool", "eval_files"):
        if not all(isinstance(p, str) for p in getattr(config, key)):
            raise ValueError(f"selftrain.{key} must be a list of file paths (strings), got "
                             f"{list(getattr(config, key))!r}")
    config = dataclasses.replace(
        config,
        pool=tuple(existing(root / p, "selftrain.pool") for p in config.pool),
        eval_files=tuple(existing(root / p, "selftrain.eval_files") for p in config.eval_files))
    if recipe.data.dev is None:
        raise ValueError("self-training selects rounds on dev F1: set data.dev in the recipe")
    student_train_config(recipe, config)  # unknown or mistyped overrides fail here
    return recipe, config


def student_train_config(recipe: Recipe, config: SelfTrainConfig,
                         teacher: str | Path | None = None):
    """The students' [train] table: the recipe's, with student_train applied and, for
    student_init = "teacher", init_from set to the teacher checkpoint."""
    overrides = dict(config.student_train)
    if teacher is not None and config.student_init == "teacher":
        overrides["init_from"] = str(teacher)
    merged = dataclasses.asdict(recipe.train) | overrides
    return build_dataclass(type(recipe.train), merged, "selftrain.student_train",
                           finite=True)



# ----------------------------------------------------------------------------- the pool

def iter_pool_documents(paths: Iterable[str], max_documents: int = 0) -> Iterator[str]:
    """Normalised pool documents: lowercase words without marks, space-joined."""
    count = 0
    for path in paths:
        lines = (u.text for u in iter_tsv(path)) if detect_format(path) == "tsv" \
            else iter_lines(path)
        for line in lines:
            words = normalize(line)
            if not words:
                continue
            yield " ".join(words)
            count += 1
            if max_documents and count >= max_documents:
                return


def _ngrams(words: list[str], n: int) -> Iterator[tuple[str, ...]]:
    for i in range(len(words) - n + 1):
        yield tuple(words[i:i + n])


def eval_ngrams(files: Iterable[str], n: int = 8) -> set[tuple[str, ...]]:
    """The distinct lowercase word n-grams of evaluation files (any scorer format)."""
    grams: set[tuple[str, ...]] = set()
    for path in files:
        words = list(load_scored(path).labelled.words)
        grams.update(_ngrams(words, n))
    return grams


def check_overlap(documents: Iterable[str], eval_grams: set, n: int = 8,
                  max_shared: int = 0) -> int:
    """Distinct n-grams the pool shares with the evaluation files.

    Raises:
        ValueError: more than max_shared shared n-grams, naming the first pool line.
    """
    shared: set[tuple[str, ...]] = set()
    first: tuple[int, str] | None = None
    for number, document in enumerate(documents, 1):
        hits = [g for g in _ngrams(document.split(), n) if g in eval_grams]
        if hits and first is None:
            first = (number, " ".join(hits[0]))
        shared.update(hits)
    if len(shared) > max_shared:
        raise ValueError(f"the pool overlaps the evaluation files: {len(shared)} shared "
                         f"{n}-grams (allowed {max_shared}), first at pool document "
                         f"{first[0]}: {first[1]!r}; remove those documents")
    return len(shared)


def build_pool(config: SelfTrainConfig, out: Path) -> Path:
    """Write the normalised pool once (atomically), after the overlap check."""
    path = out / "pool.txt.gz"
    if path.exists():
        return path
    documents = list(iter_pool_documents(config.pool, config.max_pool_documents))
    if config.max_pool_words:
        documents = subsample_words(documents, config.max_pool_words)
    if not documents:
        raise ValueError("the self-training pool has no words")
    if config.eval_files:
        grams = eval_ngrams(config.eval_files, config.ngram)
        shared = check_overlap(documents, grams, config.ngram, config.max_shared_ngrams)
        log.info("pool: %d documents, %d shared %d-grams", len(documents), shared, config.ngram)
    _write_atomic(path, "".join(d + "\n" for d in documents))
    return path


def subsample_words(documents: list[str], max_words: int, seed: int = 0) -> list[str]:
    """A seeded random subset of documents, in their original order, whose word count
    stays within max_words (documents are never cut)."""
    order = list(range(len(documents)))
    random.Random(seed).shuffle(order)
    keep, words = [], 0
    for index in order:
        size = len(documents[index].split())
        if words + size > max_words:
            continue
        keep.append(index)
        words += size
    return [documents[i] for i in sorted(keep)]


def _write_atomic(path: Path, text: str) -> None:
    with atomic_writer(path) as handle:  # gzip for .gz
        handle.write(text)


# ----------------------------------------------------------------------------- pseudo labels

def pseudo_label_texts(punctuator, documents: list[str], min_confidence: float = 0.0
                       ) -> list[str]:
    """Restored lines for pool documents; with min_confidence, only the runs of consecutive
    sentences whose words all reach it (each run its own line)."""
    from punctum.runtime import RestoreOptions

    results = punctuator.restore_detailed(documents, RestoreOptions())
    if min_confidence <= 0:
        return [r.text for r in results if r.text]
    lines = []
    for result in results:
        confidence = result.prediction.post_probs.max(axis=-1)  # (n_words,)
        run: list[range] = []
        for span in sentence_spans(result.labelled, punctuator.inventory) + [None]:
            if span is not None and confidence[span.start:span.stop].min() >= min_confidence:
                run.append(span)
                continue
            if run:
                piece = result.labelled.slice(run[0].start, run[-1].stop)
                lines.append(render(piece, punctuator.inventory,
                                    lexicon=punctuator.artifact.lexicon, sentence_case=True))
            run = []
    return lines


def _chunks(documents: Iterable[str], size: int) -> Iterator[list[str]]:
    chunk: list[str] = []
    for document in documents:
        chunk.append(document)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def pseudo_label(artifact: str | Path, pool_file: str | Path, out_dir: str | Path,
                 config: SelfTrainConfig, progress: bool = True) -> Path:
    """Pseudo-label the pool into out_dir/pseudo.txt.gz; finished parts are kept, so an
    interrupted run resumes where it stopped and gives the same file."""
    from tqdm import tqdm

    from punctum.runtime import Punctuator

    out = Path(out_dir)
    final = out / "pseudo.txt.gz"
    if final.exists():
        return final
    out.mkdir(parents=True, exist_ok=True)
    punctuator = Punctuator.load(artifact, threads=config.threads)
    n_documents = sum(1 for _ in iter_lines(pool_file))
    total = -(-n_documents // config.chunk_documents)
    chunks = _chunks(iter_lines(pool_file), config.chunk_documents)
    for index, chunk in enumerate(tqdm(chunks, total=total, desc="pseudo-labelling",
                                       unit="part", disable=not progress)):
        part = out / f"part-{index:05d}.txt"
        if part.exists():
            continue
        lines = pseudo_label_texts(punctuator, chunk, config.min_confidence)
        _write_atomic(part, "".join(line + "\n" for line in lines))
        if not progress:  # (a background run's log)
            log.info("pseudo-labelling: part %d of %d written", index + 1, total)
    parts = sorted(out.glob("part-*.txt"))
    text = "".join(p.read_text(encoding="utf-8") for p in parts)
    if not text.strip():
        raise ValueError(f"no pool document kept its pseudo labels (selftrain.min_confidence "
                         f"{config.min_confidence} is too high for this teacher); lower it and "
                         f"use a new output folder")
    _write_atomic(final, text)
    return final


# ----------------------------------------------------------------------------- rounds

def student_recipe(recipe: Recipe, pseudo_file: str | Path | None, config: SelfTrainConfig,
                   teacher: str | Path | None = None) -> Recipe:
    """The labelled recipe plus the pseudo-labelled source, with alpha and the betas, and
    the students' training settings. pseudo_file None: labelled data only (the control of a
    warm-started student: the same extra steps without pseudo labels)."""
    human = tuple(dataclasses.replace(s, label_smoothing=config.beta_human)
                  for s in recipe.data.sources)
    pseudo = () if pseudo_file is None else (SourceConfig(
        path=str(pseudo_file), weight=config.pseudo_weight, loss_weight=config.alpha,
        label_smoothing=config.beta_pseudo),)
    data = dataclasses.replace(recipe.data, sources=human + pseudo)
    return dataclasses.replace(recipe, data=data, name=f"{recipe.name}-student",
                               train=student_train_config(recipe, config, teacher))


def _train_round(recipe: Recipe, folder: Path, tokenizer: Path | None, shared_cache: Path,
                 progress: bool) -> float:
    """Train (or resume, or just read) one round's run; returns its best dev F1."""
    from punctum.train.trainer import train

    folder.mkdir(parents=True, exist_ok=True)
    summary = folder / "round.json"
    if summary.exists():
        return _read_round(summary)["dev_f1"]
    cache = folder / "cache"
    if not cache.exists():
        shared_cache.mkdir(parents=True, exist_ok=True)
        cache.symlink_to(shared_cache.resolve(), target_is_directory=True)
    state = train(recipe, folder, resume=(folder / "last.pt").exists(), progress=progress,
                  tokenizer=tokenizer)  # same subwords as the teacher
    _write_json(summary, {"dev_f1": state.best_f1, "steps": state.step})
    return state.best_f1


def _teacher_artifact(teacher: str | Path, folder: Path, name: str) -> Path | str:
    """An artifact that pseudo-labels for `teacher`: an artifact teacher itself, or a
    checkpoint exported (fp32) into folder."""
    from punctum.train.export import ExportOptions, export_artifact, parity_texts

    if recover.is_artifact(teacher):
        return teacher
    if (folder / "punctum.json").exists():
        return folder
    checkpoint = Path(teacher)
    options = ExportOptions(int8=False, name=name)
    export_artifact(checkpoint, folder, checkpoint.parent / "tokenizer.json", options,
                    parity_texts(checkpoint))
    return folder


def _round_zero(recipe: Recipe, config: SelfTrainConfig, out: Path, cache: Path,
                progress: bool) -> tuple[str | Path, float]:
    """(the first teacher, its dev F1): the given checkpoint or artifact, else a trained run."""
    summary = out / "round-0" / "round.json"
    started = _read_round(summary).get("teacher") if summary.exists() else None
    if not config.teacher:
        if started:  # round 0 took that teacher: there is no round-0/best.pt
            raise ValueError(f"{out} was started with the teacher {started}: give --teacher "
                             f"{started} (or selftrain.teacher) to continue it, or use another "
                             f"output folder")
        f1 = _train_round(recipe, out / "round-0", None, cache, progress)
        return out / "round-0" / "best.pt", f1
    artifact = recover.is_artifact(config.teacher)
    teacher = config.teacher if artifact else Path(config.teacher)
    name = str(config.teacher) if artifact else str(Path(config.teacher).resolve())
    if artifact:
        recover.check_language(config.teacher, recipe.data.language, "selftrain.teacher")
    if summary.exists():  # later rounds in `out` learnt from that teacher's labels
        if started != name:
            begun = f"the teacher {started}" if started else "a teacher it trained (round-0)"
            raise ValueError(f"{out} was started with {begun}, not {name}: use another output "
                             f"folder")
        return teacher, _read_round(summary)["dev_f1"]
    if artifact:
        from punctum.train.trainer import score_weights

        f1 = score_weights(recipe, config.teacher)["punct_f1"]
    else:
        f1 = _checkpoint_f1(teacher)
    summary.parent.mkdir(parents=True, exist_ok=True)
    _write_json(summary, {"dev_f1": f1, "teacher": name})
    return teacher, f1


def _read_round(summary: Path) -> dict:
    """A finished round's record (round.json), or ValueError naming it."""
    try:
        record = json.loads(summary.read_text(encoding="utf-8"))
        f1 = record["dev_f1"]
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise ValueError(f"{summary}: not a finished round's record ({error!r}); remove it "
                         f"to run the round again") from None
    if isinstance(f1, bool) or not isinstance(f1, (int, float)):
        raise ValueError(f"{summary}: dev_f1 must be a number, got {f1!r}; remove it to run "
                         f"the round again")
    return record


def _write_json(path: Path, record: dict) -> None:
    with atomic_writer(path) as handle:
        handle.write(json.dumps(record, indent=2) + "\n")


def selftrain(recipe: Recipe, config: SelfTrainConfig, out_dir: str | Path,
              progress: bool = True) -> dict:
    """Run the rounds (resuming finished work); returns the summary in selftrain.json."""
    from punctum.train.trainer import weights_tokenizer

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    _check_settings(out, recipe, config)
    pool = build_pool(config, out)
    cache = out / "cache"
    best, best_f1 = _round_zero(recipe, config, out, cache, progress)
    history = [{"round": 0, "dev_f1": best_f1, "checkpoint": str(best)}]
    best_round = 0
    for r in range(1, config.rounds + 1):
        folder = out / f"round-{r}"
        teacher = _teacher_artifact(best, folder / "teacher", f"teacher-{r}")
        pseudo = pseudo_label(teacher, pool, folder / "pseudo", config, progress)
        f1 = _train_round(student_recipe(recipe, pseudo, config, best), folder / "student",
                          weights_tokenizer(str(best)), cache, progress)
        history.append({"round": r, "dev_f1": f1,
                        "checkpoint": str(folder / "student" / "best.pt")})
        log.info("self-training round %d: dev F1 %.4f (best so far %.4f)", r, f1, best_f1)
        if f1 <= best_f1:
            break
        best_f1, best_round = f1, r
        best = folder / "student" / "best.pt"
    if recover.is_artifact(best):
        log.info("no student beat the teacher %s on dev: no best.pt written", best)
    else:
        for source, name in ((Path(best), "best.pt"),
                             (Path(best).parent / "tokenizer.json", "tokenizer.json")):
            with atomic_writer(out / name, binary=True) as handle, open(source, "rb") as data:
                shutil.copyfileobj(data, handle)
    summary = {"rounds": history, "best_round": best_round, "best_dev_f1": best_f1,
               "config": dataclasses.asdict(config)}
    _write_json(out / "selftrain.json", summary)
    return summary


# [selftrain] fields left out of settings.json: those that may change when a run is
# resumed (more rounds, other threads) and the teacher (round-0/round.json checks it).
_RESUMABLE = ("rounds", "threads", "teacher")


def _check_settings(out: Path, recipe: Recipe, config: SelfTrainConfig) -> None:
    """Store the recipe and [selftrain] settings in OUT/settings.json, or refuse to resume
    a folder begun with others (its pool, rounds and pseudo labels would be reused)."""
    settings = json.loads(json.dumps(
        {"selftrain": {k: v for k, v in dataclasses.asdict(config).items()
                       if k not in _RESUMABLE},
         "recipe": dataclasses.asdict(recipe)}, default=str))
    path = out / "settings.json"
    started = (out / "pool.txt.gz").exists() or any(out.glob("round-*"))
    if not path.exists() or not started:  # nothing built yet (a first attempt failed early)
        path.write_text(json.dumps(settings, indent=1) + "\n", encoding="utf-8")
        return
    try:
        stored = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise ValueError(f"{path}: cannot be read ({error}); use another output folder") \
            from None
    if stored != settings:
        changed = changed_keys({**stored.get("selftrain", {}), **stored.get("recipe", {})},
                               {**settings["selftrain"], **settings["recipe"]})
        raise ValueError(f"{out} was started with other settings ({', '.join(changed)} "
                         f"differ); use another output folder")


def _checkpoint_f1(checkpoint: Path) -> float:
    """The best dev F1 a teacher checkpoint records; a one-line ValueError naming the file
    when it is not a tagger checkpoint that `punctum export` reads (the teacher is exported)."""
    from punctum.train.checkpoint import load_checkpoint
    from punctum.train.export import check_checkpoint, check_exportable

    saved = check_checkpoint(load_checkpoint(checkpoint), checkpoint)
    check_exportable(saved, checkpoint)
    return float(saved["state"]["best_f1"])
