"""Dataclasses from TOML tables: key names and simple types checked, one-line errors.

Shared by training recipes (punctum.train.recipe) and the server config (punctum.serve).
"""

from __future__ import annotations

import dataclasses
import math
import tomllib
import types
import typing
from pathlib import Path


def changed_keys(stored: dict, current: dict) -> list[str]:
    """Sorted keys whose values differ between two settings dicts (a missing key is None):
    what a run begun with `stored` would be resumed against."""
    return sorted(k for k in set(stored) | set(current) if stored.get(k) != current.get(k))


def build_dataclass(cls, values: dict, where: str, finite: bool = False):
    """Instantiate a dataclass from a dict, checking key names, simple types and required
    keys; with `finite`, a float value must be finite (TOML reads `nan` and `inf`)."""
    if not isinstance(values, dict):
        raise ValueError(f"{where} must be a table, got {type(values).__name__}")
    hints = typing.get_type_hints(cls)
    known = {f.name for f in dataclasses.fields(cls) if f.init}
    for key, value in values.items():
        if key not in known:
            raise ValueError(f"unknown key {where}.{key} (known: {', '.join(sorted(known))})")
        if not _type_ok(value, hints[key]):
            raise ValueError(f"{where}.{key} has the wrong type: {value!r}")
        if finite and isinstance(value, float) and not math.isfinite(value):
            raise ValueError(f"{where}.{key} must be a finite number, got {value!r}")
    missing = [f.name for f in dataclasses.fields(cls) if f.init and f.name not in values
               and f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING]
    if missing:
        raise ValueError(f"{where}.{missing[0]} is required")
    return cls(**values)


def _type_ok(value, hint) -> bool:
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        return any(_type_ok(value, arg) for arg in typing.get_args(hint))
    if hint is type(None):
        return value is None
    if hint is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if origin in (list, tuple) or hint in (list, tuple):
        return isinstance(value, (list, tuple))
    if hint in (str, bool, dict):
        return isinstance(value, hint)
    return True  # nested tables are checked where they are built


def existing(path: str | Path, key: str) -> str:
    """The path as a string; FileNotFoundError naming the recipe key when it does not exist."""
    if not Path(path).exists():
        raise FileNotFoundError(f"{key}: {path}: no such file")
    return str(path)


def read_toml(path: str | Path) -> dict:
    """A TOML file as a dict; one-line errors for a missing or malformed file."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such file")
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise ValueError(f"{path}: not valid TOML: {error}") from None
