"""Artifact folders: find one by name or path and read its punctum.json (no torch).

An artifact folder holds punctum.json (format version, kind, label inventory, tokenizer and
window settings, training record, scores), model.onnx, tokenizer.json, lexicon.json,
optionally capitalised.json and weights.safetensors. Bundled artifacts live in
punctum/assets/<name>/. An ensemble folder (kind "ensemble", `punctum.ensemble`) holds only
punctum.json, naming its member models.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

from punctum.fileio import atomic_writer
from punctum.text import CAPITALISED_MIN_COUNT, CAPITALISED_MIN_SHARE, CASES, Inventory

ARTIFACT_FILE = "punctum.json"
MODEL_FILE = "model.onnx"
TOKENIZER_FILE = "tokenizer.json"
LEXICON_FILE = "lexicon.json"
# Optional: lowercase words written Capitalised wherever they stand (`text.build_capitalised`);
# the runtime writes them CAP where the model says LOWER.
CAPITALISED_FILE = "capitalised.json"
WEIGHTS_FILE = "weights.safetensors"
FORMAT_VERSION = 1
ASSETS = Path(__file__).parent / "assets"
DEFAULT_MODEL = "en-tiny"
_REQUIRED = ("format_version", "kind", "inventory", "tokenizer", "model", "windows")
# An ensemble folder (punctum.ensemble) holds no model of its own: only its members' names.
ENSEMBLE_KIND = "ensemble"
_REQUIRED_ENSEMBLE = ("format_version", "kind", "inventory", "members")


@dataclass(frozen=True)
class Artifact:
    """A read and checked artifact folder.

    Attributes:
        path: the folder.
        meta: punctum.json as a dict.
        inventory: the label inventory the model predicts.
        lexicon: lowercase word -> MIX-case form.
        capitalised: lowercase words written Capitalised wherever they stand (names).
    """

    path: Path
    meta: dict
    inventory: Inventory
    lexicon: dict
    capitalised: frozenset = frozenset()

    @property
    def name(self) -> str:
        return self.meta.get("name") or self.path.name

    @property
    def model_file(self) -> Path:
        return self.path / self.meta["model"]["file"]

    @property
    def tokenizer_file(self) -> Path:
        return self.path / self.meta["tokenizer"]["file"]

    @property
    def label_position(self) -> str:
        return self.meta["tokenizer"].get("label_position", "first")

    @property
    def case_labels(self) -> tuple[str, ...]:
        return tuple(self.meta.get("case_labels", CASES))


def available_models() -> list[str]:
    """Names of the artifacts bundled with the package."""
    if not ASSETS.is_dir():
        return []
    return sorted(p.name for p in ASSETS.iterdir() if (p / ARTIFACT_FILE).is_file())


def resolve(name_or_path: str | Path | None = None) -> Path:
    """The folder of a bundled model name, a local folder, or a hub repository id.

    Raises:
        FileNotFoundError: nothing of that name, with the bundled names listed.
    """
    if name_or_path is None:
        name_or_path = DEFAULT_MODEL
    if not str(name_or_path).strip():
        raise FileNotFoundError("no model '': give a bundled name, a folder or a hub id, or "
                                "none for the default")
    path = Path(name_or_path)
    if path.is_dir():
        return path
    if str(name_or_path) in available_models():
        return ASSETS / str(name_or_path)
    if path.exists():
        hint = (f" (a training checkpoint: punctum export {path} OUT_DIR makes one)"
                if path.suffix == ".pt" else "")
        raise ValueError(f"{path}: is a file; a model is a folder with {ARTIFACT_FILE}{hint}")
    text = str(name_or_path)
    if text.startswith("hf:") or text.count("/") == 1 and not text.startswith((".", "/")):
        return _download(text.removeprefix("hf:"))
    raise FileNotFoundError(f"no model {text!r}: not a folder and not a bundled model "
                            f"(bundled: {', '.join(available_models()) or 'none'})")


def _download(repo_id: str) -> Path:
    """Fetch an artifact folder from the Hugging Face hub (needs network + huggingface_hub)."""
    try:
        from huggingface_hub import snapshot_download
    except ImportError:
        raise FileNotFoundError(f"no local model {repo_id!r}; downloading it needs "
                                f"huggingface_hub (pip install huggingface_hub)") from None
    try:
        return Path(snapshot_download(repo_id))
    except Exception as error:  # offline, unknown repo, HTTP errors: all one line
        reason = next((line for line in str(error).splitlines() if line.strip()),
                      type(error).__name__)
        raise FileNotFoundError(f"no local folder {repo_id!r}, and downloading it from the "
                                f"hub failed: {reason}") from None


def read_artifact(path: str | Path) -> Artifact:
    """Read and check an artifact folder.

    Raises:
        FileNotFoundError: punctum.json or a file it names is missing.
        ValueError: punctum.json is malformed or from an unknown format version.
    """
    path = Path(path)
    meta = _read_json(path / ARTIFACT_FILE)
    ensemble = meta.get("kind") == ENSEMBLE_KIND
    missing = [key for key in (_REQUIRED_ENSEMBLE if ensemble else _REQUIRED)
               if key not in meta]
    if missing:
        raise ValueError(f"{path / ARTIFACT_FILE}: missing keys {missing}")
    if meta["format_version"] != FORMAT_VERSION:
        raise ValueError(f"{path / ARTIFACT_FILE}: format_version "
                         f"{meta['format_version']!r} is not supported (expected "
                         f"{FORMAT_VERSION})")
    try:
        inventory = Inventory.from_dict(meta["inventory"])
    except (KeyError, TypeError, ValueError) as error:
        raise ValueError(f"{path / ARTIFACT_FILE}: bad inventory ({error})") from None
    if ensemble:
        members = meta["members"]
        if not isinstance(members, list) or len(members) < 2 \
                or not all(isinstance(m, str) and m for m in members):
            raise ValueError(f"{path / ARTIFACT_FILE}: members must list two or more models")
        return Artifact(path, meta, inventory, {})
    _check_model_fields(meta, path / ARTIFACT_FILE)
    for key in ("model", "tokenizer"):
        file = path / meta[key]["file"]
        if not file.is_file():
            raise FileNotFoundError(f"{file}: missing from the model folder")
    lexicon_file = path / LEXICON_FILE
    lexicon = _read_json(lexicon_file) if lexicon_file.exists() else {}
    return Artifact(path, meta, inventory, lexicon, _read_capitalised(path / CAPITALISED_FILE))


def _check_model_fields(meta: dict, source: Path) -> None:
    """The shapes of the entries a model folder's punctum.json is read by, in one-line errors."""
    for key in ("model", "tokenizer"):
        entry = meta[key]
        if not isinstance(entry, dict) or not isinstance(entry.get("file"), str) \
                or not entry["file"]:
            raise ValueError(f"{source}: {key} must be an object with a 'file' name")
    windows = meta["windows"]
    if meta.get("kind") == "ctc_encoder":  # an acoustic model: windows of seconds
        if not isinstance(windows, dict) or not _numbers(
                [windows.get("chunk_seconds"), windows.get("overlap_seconds")]):
            raise ValueError(f"{source}: windows must be an object with numbers "
                             f"'chunk_seconds' and 'overlap_seconds'")
    elif not isinstance(windows, dict) or not all(
            isinstance(windows.get(k), int) and not isinstance(windows.get(k), bool)
            for k in ("size", "left", "right")):
        raise ValueError(f"{source}: windows must be an object with whole numbers 'size', "
                         f"'left' and 'right'")
    pauses = meta.get("pauses")
    if pauses is not None and not (isinstance(pauses, dict) and _numbers(pauses.get("edges"))):
        raise ValueError(f"{source}: pauses must be null or an object with a list of "
                         f"'edges' (seconds)")


def _numbers(values) -> bool:
    return isinstance(values, list) and all(
        isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
        for v in values)


def write_capitalised(path: str | Path, words: list[str], settings: dict) -> None:
    """Write a folder's capitalised.json: the words and how they were chosen."""
    record = {"words": sorted(words), "min_count": CAPITALISED_MIN_COUNT,
              "min_share": CAPITALISED_MIN_SHARE, **settings}
    with atomic_writer(Path(path) / CAPITALISED_FILE) as handle:
        handle.write(json.dumps(record, indent=0, ensure_ascii=False))


def _read_capitalised(file: Path) -> frozenset:
    """The words of capitalised.json ({"words": [...], how they were chosen}), or none
    without the file."""
    if not file.exists():
        return frozenset()
    words = _read_json(file).get("words")
    if not isinstance(words, list) or not all(isinstance(w, str) for w in words):
        raise ValueError(f"{file}: \"words\" must be a list of strings")
    return frozenset(words)


def update_meta(path: str | Path, changes: dict) -> dict:
    """Merge top-level `changes` into a folder's punctum.json, atomically; returns the result.

    Raises:
        FileNotFoundError, ValueError: as `read_artifact` (the folder is checked first).
    """
    meta = {**read_artifact(path).meta, **changes}
    with atomic_writer(Path(path) / ARTIFACT_FILE) as handle:
        handle.write(json.dumps(meta, indent=2, ensure_ascii=False) + "\n")
    return meta


def _read_json(file: Path) -> dict:
    if not file.is_file():
        hint = (f" (a training run: punctum export {file.parent / 'best.pt'} OUT_DIR makes a "
                f"model of it)" if (file.parent / "best.pt").is_file() else "")
        raise FileNotFoundError(f"{file}: no such file{hint}")
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ValueError(f"{file}: not valid JSON ({error})") from None
    if not isinstance(data, dict):
        raise ValueError(f"{file}: expected a JSON object")
    return data
