"""The `punctum` command: argparse subcommands that build option dataclasses.

    punctum eval --ref ../shared/data/iwslt2011/test2011 --hyp hyp.txt --hyp-format text
    punctum train recipes/en-tiny.toml --data-root ../shared/data --out runs/en-tiny

Errors in files or options are printed as one line on stderr with exit code 2.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys

from punctum.version import __version__

EXIT_USAGE = 2


def _add_eval(subparsers) -> None:
    parser = subparsers.add_parser(
        "eval", help="score a punctuated hypothesis against a reference",
        description="P/R/F1 per mark and overall (IWSLT2011 convention), casing, WER/CER.")
    parser.add_argument("--ref", required=True, help="reference file")
    parser.add_argument("--hyp", required=True, help="hypothesis file")
    parser.add_argument("--format", dest="ref_format", default="auto",
                        choices=["auto", "che", "text", "tsv", "xml"],
                        help="reference format (default: guessed)")
    parser.add_argument("--hyp-format", default="auto",
                        choices=["auto", "che", "text", "tsv", "xml"],
                        help="hypothesis format (default: guessed)")
    parser.add_argument("--language", default="en", help="label inventory (default: en)")
    parser.add_argument("--text-column", default="text", help="TSV text column")
    parser.add_argument("--mid-final", action="store_true",
                        help="also split scores into mid-utterance and utterance-final")
    parser.add_argument("--compare", metavar="HYP2",
                        help="paired bootstrap of HYP2 against HYP")
    parser.add_argument("--samples", type=int, default=1000, help="bootstrap resamples")
    parser.add_argument("--seed", type=int, default=0, help="bootstrap seed")
    parser.add_argument("--json", action="store_true", help="print JSON instead of tables")
    parser.add_argument("--plot", metavar="PNG", help="save the confusion matrix as a PNG")
    parser.set_defaults(run=_run_eval)


def _run_eval(args) -> int:
    from punctum.evaluation import EvalOptions, evaluate_files, plot_confusion, write_json

    options = EvalOptions(ref_format=args.ref_format, hyp_format=args.hyp_format,
                          language=args.language, mid_final=args.mid_final,
                          bootstrap_samples=args.samples, seed=args.seed,
                          text_column=args.text_column)
    evaluation = evaluate_files(args.ref, args.hyp, options, args.compare)
    print(write_json(evaluation) if args.json else evaluation.format())
    if args.plot:
        plot_confusion(evaluation.punct, args.plot)
    return 0


def _add_train(subparsers) -> None:
    parser = subparsers.add_parser(
        "train", help="train a model from a recipe (needs punctum[train])",
        description="Train the model a TOML recipe describes; checkpoints are resumable.")
    parser.add_argument("recipe", help="recipe file, e.g. recipes/en-tiny.toml")
    parser.add_argument("--out", required=True, help="run folder (checkpoints, logs)")
    parser.add_argument("--data-root", default="../shared/data",
                        help="folder that relative data paths in the recipe start from")
    parser.add_argument("--resume", action="store_true", help="continue from OUT/last.pt")
    parser.add_argument("--steps", type=int, help="override train.steps")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.set_defaults(run=_run_train)


def _run_train(args) -> int:
    import dataclasses

    try:
        from punctum.train.recipe import load_recipe
        from punctum.train.trainer import train
    except ImportError as error:
        raise ImportError(f"training needs the train extra: pip install 'punctum[train]' "
                          f"({error})") from None
    recipe = load_recipe(args.recipe, args.data_root)
    if args.steps:
        recipe = dataclasses.replace(recipe, train=dataclasses.replace(recipe.train,
                                                                       steps=args.steps))
    state = train(recipe, args.out, resume=args.resume, progress=not args.no_progress)
    if os.environ.get("RANK", "0") != "0":
        return 0
    print(f"trained {state.step} steps; best dev F1 {state.best_f1 * 100:.1f}; "
          f"run folder {args.out}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="punctum", description="Restore punctuation, casing and sentence boundaries.")
    parser.add_argument("--version", action="version", version=f"punctum {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log progress details")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    _add_eval(subparsers)
    _add_train(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")
    if not getattr(args, "run", None):
        parser.print_help()
        return EXIT_USAGE
    try:
        return args.run(args)
    except (FileNotFoundError, ValueError, TypeError, ImportError, OSError) as error:
        print(f"punctum {args.command}: error: {error}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print(f"punctum {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
