"""punctum: restore punctuation, casing and sentence boundaries in speech transcripts.

    import punctum
    punctum.restore("so what do you think i think it's great")
    # -> the text with marks, casing and sentence boundaries restored

Importing punctum is cheap: the runtime (ONNX Runtime) loads on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from punctum.version import __version__

if TYPE_CHECKING:
    from punctum.runtime import Punctuator

__all__ = ["Punctuator", "__version__", "load", "restore"]
_DEFAULT: dict = {}


def __getattr__(name: str):
    if name == "Punctuator":
        from punctum.runtime import Punctuator

        return Punctuator
    raise AttributeError(f"module 'punctum' has no attribute {name!r}")


def load(name_or_path: str | None = None, threads: int = 0) -> Punctuator:
    """Load a model: a bundled name (default "en-tiny"), a folder, or a hub id."""
    from punctum.runtime import Punctuator

    return Punctuator.load(name_or_path, threads=threads)


def restore(text: str, model: str | None = None) -> str:
    """Restore one text with a cached model (the bundled default unless `model` is given)."""
    key = model or ""
    if key not in _DEFAULT:
        _DEFAULT[key] = load(model)
    return _DEFAULT[key].restore(text)
