"""Ensembles: several exported models restoring as one (no torch).

An ensemble folder holds only a punctum.json of kind "ensemble":

    {"format_version": 1, "kind": "ensemble", "name": "en-ensemble",
     "members": ["en-accurate", "en-tiny"], "inventory": {...}, "case_labels": [...],
     "decision": {...}}

Each member (a bundled model name, or a folder relative to the ensemble's) predicts with its
own tokenizer and windows; the ensemble averages their per-word mark and case
probabilities and decides with its own biases (`punctum calibrate` fits them, as for any
model) and the union of the members' capitalised words. Models that err differently gain
from it: on dev2012 the mean of en-accurate (a MiniLM tagger) and en-tiny (a CNN-BiLSTM)
beats either alone (docs/BENCHMARKS.md), at the cost of running both. `punctum ensemble
MEMBER MEMBER ... --out DIR` writes such a folder; `Punctuator.load(DIR)` returns an
`EnsemblePunctuator`.
"""

from __future__ import annotations

import datetime
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from punctum import artifact as artifacts
from punctum.fileio import atomic_writer
from punctum.runtime import (
    Prediction,
    Punctuator,
    _post_bias,
    decide_case,
    decide_marks,
    window_settings,
)
from punctum.windows import WindowConfig

KIND = artifacts.ENSEMBLE_KIND


class EnsemblePunctuator(Punctuator):
    """A `Punctuator` over several models: the mean of their probabilities.

    Args:
        artifact: a read ensemble folder (`artifact.read_artifact`).
        threads, windows: passed to every member (windows: None keeps each member's own).
        post_bias: as for `Punctuator`; applied to the mean probabilities (the members'
            own biases are not used).

    Raises:
        ValueError: a member is itself an ensemble or predicts other labels.
        FileNotFoundError: a member cannot be found.
    """

    def __init__(self, artifact: artifacts.Artifact, threads: int = 0,
                 windows: WindowConfig | None = None,
                 post_bias: Mapping[str, float] | None = None) -> None:
        self.artifact = artifact
        self.inventory = artifact.inventory
        self.post_labels = self.inventory.post_labels
        self.case_labels = artifact.case_labels
        self.members = [_load_member(artifact, member, threads, windows)
                        for member in artifact.meta["members"]]
        for member in self.members:
            if (member.post_labels, member.case_labels) != (self.post_labels,
                                                            self.case_labels):
                raise ValueError(f"{artifact.path}: member {member.artifact.path} predicts "
                                 f"{member.post_labels} / {member.case_labels}, the ensemble "
                                 f"{self.post_labels} / {self.case_labels}")
            if member.inventory.to_dict() != self.inventory.to_dict():  # (its marks' texts,
                raise ValueError(f"{artifact.path}: member {member.artifact.path} is a "  # its
                                 f"{member.inventory.language!r} model, the ensemble "  # words)
                                 f"{self.inventory.language!r}'s (another inventory)")
        self.windows = max((m.windows for m in self.members), key=lambda w: w.size)
        self.post_bias = _post_bias(artifact, self.post_labels, post_bias)
        self.capitalised = frozenset().union(*(m.capitalised for m in self.members))

    @property
    def pause_aware(self) -> bool:
        """Whether a member reads pauses (the others ignore them)."""
        return any(member.pause_aware for member in self.members)

    @property
    def model_files(self) -> tuple[Path, ...]:
        return tuple(f for member in self.members for f in member.model_files)

    def predict_batch(self, batch: Sequence[Sequence[str]], batch_size: int = 16,
                      pauses: Sequence[Sequence[float] | None] | None = None
                      ) -> list[Prediction]:
        """Each member's predictions (pauses go to those that read them), averaged per
        word; see `Punctuator.predict_batch`."""
        per_member = [member.predict_batch(batch, batch_size, pauses=pauses)
                      for member in self.members]
        return [self._combine(words, predictions)
                for words, predictions in zip(batch, zip(*per_member))]

    def _combine(self, words: Sequence[str], predictions: Sequence[Prediction]) -> Prediction:
        post_probs = np.mean([p.post_probs for p in predictions], axis=0, dtype=np.float32)
        case_probs = np.mean([p.case_probs for p in predictions], axis=0, dtype=np.float32)
        post = decide_marks(words, post_probs, self.post_labels, self.post_bias)
        case = decide_case(words, case_probs, self.case_labels, self.capitalised,
                           self.inventory.abbreviations, self.inventory.language == "en")
        return Prediction(tuple(words), post, case, post_probs, case_probs,
                          self.post_labels, self.case_labels)


def ensemble_of(models: Sequence[str], threads: int = 0) -> EnsemblePunctuator:
    """An ensemble named in code rather than by a folder (e.g. a list-valued distillation
    teacher): bundled names, or folders relative to the working directory; no biases."""
    first = artifacts.read_artifact(artifacts.resolve(models[0]))
    meta = _ensemble_meta(" + ".join(models), list(models), first)
    return EnsemblePunctuator(artifacts.Artifact(Path("."), meta, first.inventory, {}),
                              threads, post_bias={})


def _ensemble_meta(name: str, members: list[str], first: artifacts.Artifact) -> dict:
    """punctum.json of an ensemble whose labels are those of its first member."""
    return {"format_version": artifacts.FORMAT_VERSION, "name": name, "kind": KIND,
            "members": members, "inventory": first.meta["inventory"],
            "case_labels": list(first.case_labels)}


def _load_member(artifact: artifacts.Artifact, member: str, threads: int,
                 windows: WindowConfig | None) -> Punctuator:
    """A member by folder (relative to the ensemble's) or by bundled name, without its
    own decision biases, with the windows the ensemble pins for it ("member_windows" in its
    punctum.json: a member's windows may change after the ensemble's biases were fitted)
    unless `windows` is given."""
    local = artifact.path / member
    try:
        read = artifacts.read_artifact(local if local.is_dir() else artifacts.resolve(member))
    except (FileNotFoundError, ValueError) as error:
        raise type(error)(f"{artifact.path}: member {member!r}: {error}") from None
    if read.meta.get("kind") == KIND:
        raise ValueError(f"{artifact.path}: member {member!r} is itself an ensemble")
    pins = artifact.meta.get("member_windows") or {}
    if not isinstance(pins, dict):
        raise ValueError(f"{artifact.path / artifacts.ARTIFACT_FILE}: member_windows must be "
                         f"an object of member -> windows")
    pinned = pins.get(member)
    if windows is None and pinned is not None:  # as when the ensemble's biases were fitted
        windows = window_settings(pinned, artifact, f"member_windows.{member}")
    return Punctuator(read, threads, windows, post_bias={})


def _check_out_holds_no_model(out: Path) -> None:
    file = out / artifacts.ARTIFACT_FILE
    if not file.is_file():
        return
    try:
        record = json.loads(file.read_text(encoding="utf-8"))
        kind = record.get("kind")
    except (OSError, ValueError, AttributeError):
        record, kind = {}, None
    if kind != KIND:
        raise ValueError(f"{out}: holds a model folder whose punctum.json the ensemble would "
                         f"replace; choose another --out")
    if record.get("decision") or record.get("scores"):
        raise ValueError(f"{out}: holds an ensemble with fitted decision biases or measured "
                         f"scores that a new one would drop; remove it or choose another --out")


def write_ensemble(members: Sequence[str], out: str | Path, name: str = "") -> Path:
    """Write an ensemble folder of `members` (bundled names or model folders).

    Folders are stored relative to `out`, so that the two can move together; bundled
    names stay names. Returns the folder.

    Raises:
        ValueError: fewer than two members, an ensemble among them, members whose
            labels differ, a member whose model cannot be loaded (a corrupt model.onnx), or
            an `out` folder that holds a model (a member's, perhaps) whose punctum.json the
            ensemble's would replace.
        FileNotFoundError: a member cannot be found.
    """
    if len(members) < 2:
        raise ValueError(f"an ensemble needs at least two models, got {len(members)}")
    if not str(out).strip():
        raise ValueError("the ensemble needs an output folder (--out)")
    out = Path(out)
    read = [artifacts.read_artifact(artifacts.resolve(m)) for m in members]
    for member, meta in zip(members, (r.meta for r in read)):
        if meta.get("kind") == KIND:
            raise ValueError(f"{member}: is itself an ensemble")
        if (meta["inventory"], meta.get("case_labels")) != (read[0].meta["inventory"],
                                                            read[0].meta.get("case_labels")):
            raise ValueError(f"{member}: predicts other labels than {members[0]}")
    for artifact in read:  # a member that cannot run is refused now, not at restore time
        Punctuator(artifact, threads=1, post_bias={})
    _check_out_holds_no_model(out)
    bundled = set(artifacts.available_models())
    stored = [m if m in bundled and not Path(m).is_dir()
              else os.path.relpath(Path(m).resolve(), out.resolve()) for m in members]
    meta = {**_ensemble_meta(name or out.name, stored, read[0]),
            "created": datetime.date.today().isoformat()}
    out.mkdir(parents=True, exist_ok=True)
    with atomic_writer(out / artifacts.ARTIFACT_FILE) as handle:
        handle.write(json.dumps(meta, indent=2, ensure_ascii=False) + "\n")
    return out
