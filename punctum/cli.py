"""The `punctum` command: argparse subcommands that build option dataclasses.

    echo "so what do you think i think it's great" | punctum restore
    punctum eval --ref ../shared/data/iwslt2011/test2011 --hyp hyp.txt --hyp-format text
    punctum train recipes/en-tiny.toml --data-root ../shared/data --out runs/en-tiny
    punctum export runs/en-tiny/best.pt punctum/assets/en-tiny --name en-tiny

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


def _add_restore(subparsers) -> None:
    parser = subparsers.add_parser(
        "restore", help="punctuate and case text (the bundled model by default)",
        description="Restore punctuation, casing and sentence boundaries. Text comes from "
                    "the arguments, from --input files, or from stdin; one output line per "
                    "input line.")
    parser.add_argument("text", nargs="*", help="text to restore (default: read stdin)")
    parser.add_argument("-i", "--input", action="append", default=[], metavar="FILE",
                        help="read text from FILE (repeatable; .gz read transparently)")
    parser.add_argument("-o", "--output", metavar="PATH",
                        help="write to PATH (a folder when there are several inputs)")
    parser.add_argument("-m", "--model", default=None,
                        help="bundled model name, model folder or hub id (default: en-tiny)")
    parser.add_argument("--json", action="store_true",
                        help="one JSON object per line: text, words, marks, cases, probs")
    parser.add_argument("--no-case", action="store_true", help="restore marks only")
    parser.add_argument("--keep-existing", action="store_true",
                        help="keep marks and casing already present in the input")
    parser.add_argument("--threads", type=int, default=0, help="ONNX Runtime threads")
    parser.add_argument("--errors", choices=["strict", "replace"], default="strict",
                        help="undecodable input bytes: an error, or replaced by U+FFFD")
    parser.set_defaults(run=_run_restore)


def _run_restore(args) -> int:
    from punctum.runtime import Punctuator, RestoreOptions

    options = RestoreOptions(case=not args.no_case, keep_existing=args.keep_existing)
    sources = _restore_sources(args)
    if args.output and len(sources) > 1:
        os.makedirs(args.output, exist_ok=True)
    punctuator = Punctuator.load(args.model, threads=args.threads)
    for name, lines in sources:
        target = _restore_target(args.output, name, len(sources))
        with _open_output(target) as out:
            for line in _restore_lines(punctuator, lines, options, args.json):
                out.write(line + "\n")
    return 0


def _restore_sources(args) -> list[tuple[str, object]]:
    """(name, line iterator) per input: the arguments, the files, or stdin."""
    from punctum.corpora import decode_lines, iter_lines

    if args.text and args.input:
        raise ValueError("give text arguments or --input files, not both")
    if args.text:
        return [("<arguments>", iter([" ".join(args.text)]))]
    if args.input:
        for path in args.input:  # fail on a missing file before any output is written
            if not os.path.isfile(path):
                raise FileNotFoundError(f"{path}: no such file")
        return [(p, iter_lines(p, keep_blank=True, errors=args.errors)) for p in args.input]
    return [("<stdin>", (line for _, line in decode_lines(sys.stdin.buffer, "<stdin>",
                                                          args.errors)))]


def _restore_target(output: str | None, name: str, n_sources: int) -> str | None:
    if output is None or n_sources == 1:
        return output
    return os.path.join(output, os.path.basename(name).removesuffix(".gz"))


def _open_output(target: str | None):
    import contextlib

    if target is None:
        return contextlib.nullcontext(sys.stdout)
    return open(target, "w", encoding="utf-8")


def _restore_lines(punctuator, lines, options, as_json: bool):
    """Restored lines (or JSON lines); blank lines stay blank."""
    import json

    if not as_json:
        yield from punctuator.restore_lines(lines, options)
        return
    for line in lines:
        result = punctuator.restore_detailed([line], options)[0]
        yield json.dumps({"text": result.text, **result.prediction.to_dict()},
                         ensure_ascii=False)


def _add_export(subparsers) -> None:
    parser = subparsers.add_parser(
        "export", help="export a checkpoint as an artifact folder (needs punctum[train])",
        description="ONNX (+ dynamic int8) artifact with tokenizer, labels and a parity "
                    "check against torch.")
    parser.add_argument("checkpoint", help="checkpoint file, e.g. runs/en-tiny/best.pt")
    parser.add_argument("out_dir", help="artifact folder to write")
    parser.add_argument("--int8", action=argparse.BooleanOptionalAction, default=True,
                        help="int8 weights (default) or --no-int8 for fp32")
    parser.add_argument("--name", default="", help="model name for punctum.json")
    parser.add_argument("--tokenizer", help="tokenizer.json (default: beside the checkpoint)")
    parser.add_argument("--min-agreement", type=float, default=0.995,
                        help="minimum ONNX/torch per-word label agreement")
    parser.add_argument("--with-weights", action="store_true",
                        help="also write fp32 weights.safetensors (for fine-tuning)")
    parser.add_argument("--window", type=int, nargs=3, default=(120, 40, 15),
                        metavar=("SIZE", "LEFT", "RIGHT"),
                        help="default double-overlap windows in subwords (default 120 40 15)")
    parser.add_argument("--scores", metavar="JSON",
                        help="a JSON file of measured scores to record in punctum.json")
    parser.set_defaults(run=_run_export)


def _run_export(args) -> int:
    import json
    from pathlib import Path

    try:
        from punctum.train.export import ExportOptions, export_artifact, parity_texts
    except ImportError as error:
        raise ImportError(f"export needs the train extra: pip install 'punctum[train]' "
                          f"({error})") from None
    checkpoint = Path(args.checkpoint)
    tokenizer = Path(args.tokenizer) if args.tokenizer else checkpoint.parent / "tokenizer.json"
    scores = json.loads(Path(args.scores).read_text(encoding="utf-8")) if args.scores else {}
    size, left, right = args.window
    options = ExportOptions(int8=args.int8, name=args.name, min_agreement=args.min_agreement,
                            include_weights=args.with_weights, window_size=size,
                            window_left=left, window_right=right, scores=scores)
    meta = export_artifact(checkpoint, args.out_dir, tokenizer, options,
                           parity_texts(checkpoint))
    print(f"wrote {args.out_dir} ({meta['model']['precision']}); ONNX/torch label agreement "
          f"{meta['parity']['label_agreement'] * 100:.2f}% on {meta['parity']['words']} words")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="punctum", description="Restore punctuation, casing and sentence boundaries.")
    parser.add_argument("--version", action="version", version=f"punctum {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log progress details")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    _add_restore(subparsers)
    _add_eval(subparsers)
    _add_train(subparsers)
    _add_export(subparsers)
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
