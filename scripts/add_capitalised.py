"""Add capitalised.json (names written Capitalised wherever they stand) to exported artifacts.

    python scripts/add_capitalised.py punctum/assets/en-tiny punctum/assets/en-accurate

For artifacts exported before `punctum export` wrote the file. The words come from the first
--documents lines of each text source in the artifact's recorded training recipe
without the documents its validation split holds out (`text.build_capitalised`, the export's
own settings), read from the paths the recipe names, so run it from where the model was
trained (the repository root for the bundled models).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from punctum.artifact import read_artifact, write_capitalised
from punctum.corpora import head_texts
from punctum.text import build_capitalised


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("artifacts", nargs="+", type=Path, help="artifact folders")
    parser.add_argument("--documents", type=int, default=2000,
                        help="lines read per training source (punctum export's default)")
    args = parser.parse_args()
    for folder in args.artifacts:
        artifact = read_artifact(folder)
        sources = artifact.meta["training"]["recipe"]["data"]["sources"]
        missing = [s["path"] for s in sources
                   if s.get("format", "text") == "text" and not Path(s["path"]).exists()]
        if missing:
            print(f"{folder}: training sources not found here: {', '.join(missing)}",
                  file=sys.stderr)
            return 2
        fraction = artifact.meta["training"]["recipe"]["data"].get("val_fraction", 0.0)
        words = build_capitalised(head_texts(sources, args.documents, fraction),
                                  artifact.inventory)
        write_capitalised(folder, words, {"documents_per_source": args.documents,
                                          "validation_documents_skipped": fraction})
        print(f"{folder}: {len(words)} capitalised words")
    return 0


if __name__ == "__main__":
    sys.exit(main())
