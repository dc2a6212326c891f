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
        "restore", help="punctuate and case text, subtitles or ASR JSON (bundled model default)",
        description="Restore punctuation, casing and sentence boundaries. Text comes from "
                    "the arguments, from --input files, or from stdin; one output line per "
                    "input line. Subtitles (SRT, WebVTT) and ASR JSON (Whisper, Vosk, NeMo "
                    "manifests) keep every timing; context flows across cues.")
    parser.add_argument("text", nargs="*", help="text to restore (default: read stdin)")
    parser.add_argument("-i", "--input", action="append", default=[], metavar="FILE",
                        help="read text from FILE (repeatable; .gz read transparently)")
    parser.add_argument("-o", "--output", metavar="PATH",
                        help="write to PATH (a folder when there are several inputs)")
    parser.add_argument("-m", "--model", default=None,
                        help="bundled model name, model folder or hub id (default: en-tiny)")
    parser.add_argument("--json", action="store_true",
                        help="text input: one JSON object per line: text, words, marks, cases, "
                             "probs")
    parser.add_argument("--no-case", action="store_true", help="restore marks only")
    parser.add_argument("--keep-existing", action="store_true",
                        help="keep marks and casing already present in the input")
    parser.add_argument("--threads", type=int, default=0, help="ONNX Runtime threads")
    parser.add_argument("--errors", choices=["strict", "replace"], default="strict",
                        help="undecodable input bytes: an error, or replaced by U+FFFD")
    parser.add_argument("--format", default="auto",
                        choices=["auto", "text", "srt", "vtt", "whisper", "vosk", "nemo"],
                        help="input format (default: files by extension and content; stdin "
                             "and arguments are text)")
    parser.add_argument("--to", choices=["srt", "vtt", "text", "json"],
                        help="output format (default: the input's; json: the input's JSON "
                             "format, Whisper JSON for subtitles, --json for text)")
    parser.add_argument("--resegment", action="store_true",
                        help="rebuild subtitle cues at sentence boundaries (srt/vtt output)")
    parser.add_argument("--max-chars", type=int, metavar="N",
                        help="--resegment: characters per line (default 42)")
    parser.add_argument("--max-lines", type=int, metavar="N",
                        help="--resegment: lines per cue (default 2)")
    parser.add_argument("--max-duration", type=float, metavar="S",
                        help="--resegment: seconds per cue (default 7)")
    parser.add_argument("--text-key", default="pred_text",
                        help="NeMo manifests: the key to restore (default: pred_text)")
    parser.add_argument("--output-key",
                        help="NeMo manifests: the key to write (default: --text-key)")
    parser.set_defaults(run=_run_restore)


def _run_restore(args) -> int:
    from punctum.runtime import Punctuator, RestoreOptions

    options = RestoreOptions(case=not args.no_case, keep_existing=args.keep_existing)
    layout = _restore_layout(args)
    sources = _restore_sources(args)
    for name, input_format, _ in sources:
        _restore_check(args, name, input_format)
    if args.output and len(sources) > 1:
        os.makedirs(args.output, exist_ok=True)
    punctuator = Punctuator.load(args.model, threads=args.threads)
    for name, input_format, lines in sources:
        output_format = _restore_output_format(args.to, input_format)
        target = _restore_target(args.output, name, len(sources), input_format, output_format)
        if input_format == "text" and output_format == "text":
            with _open_output(target) as out:
                for line in _restore_lines(punctuator, lines, options,
                                           args.json or args.to == "json"):
                    out.write(line + "\n")
        else:
            _restore_transcript(args, punctuator, options, layout, (name, input_format, lines),
                                target)
    return 0


def _restore_layout(args):
    """ResegmentOptions from --max-* (validated before the model loads), or None."""
    from punctum.formats import ResegmentOptions

    limits = {"max_chars_per_line": args.max_chars, "max_lines": args.max_lines,
              "max_duration": args.max_duration}
    given = {key: value for key, value in limits.items() if value is not None}
    if not args.resegment:
        if given:
            raise ValueError("--max-chars, --max-lines and --max-duration need --resegment")
        return None
    return ResegmentOptions(**given)


def _restore_sources(args) -> list[tuple[str, str, object]]:
    """(name, format, line iterator) per input: the arguments, the files, or stdin."""
    from punctum.corpora import decode_lines, iter_lines

    if args.text and args.input:
        raise ValueError("give text arguments or --input files, not both")
    default = "text" if args.format == "auto" else args.format
    if args.text:
        return [("<arguments>", default, iter([" ".join(args.text)]))]
    if args.input:
        for path in args.input:  # fail on a missing file before any output is written
            if not os.path.isfile(path):
                raise FileNotFoundError(f"{path}: no such file")
        return [(p, _restore_format(args.format, p),
                 iter_lines(p, keep_blank=True, errors=args.errors)) for p in args.input]
    return [("<stdin>", default, (line for _, line in decode_lines(sys.stdin.buffer, "<stdin>",
                                                                   args.errors)))]


def _restore_format(requested: str, path: str) -> str:
    from punctum.formats import detect_format

    if requested != "auto":
        return requested
    if path.endswith(".gz"):
        return "text"  # compressed input is read line by line as text
    return detect_format(path)


def _restore_output_format(to: str | None, input_format: str) -> str:
    """--to as a format name: json is the input's JSON format (Whisper for subtitles)."""
    if to is None or (to == "json" and input_format == "text"):
        return input_format
    if to == "json":
        return input_format if input_format in ("whisper", "vosk", "nemo") else "whisper"
    return to


def _restore_check(args, name: str, input_format: str) -> None:
    """Option conflicts for one input, before the model loads or any output is written."""
    output_format = _restore_output_format(args.to, input_format)
    if args.json and input_format != "text":
        raise ValueError(f"{name}: --json is for text input; use --to json for "
                         f"{input_format} input")
    if input_format in ("text", "nemo") and output_format in ("srt", "vtt"):
        raise ValueError(f"{name}: {input_format} input has no timings; cannot write "
                         f"{output_format}")
    if args.resegment and output_format not in ("srt", "vtt"):
        raise ValueError(f"{name}: --resegment builds subtitle cues; add --to srt or --to vtt "
                         f"(output format here: {output_format})")


def _restore_transcript(args, punctuator, options, layout, source, target) -> None:
    """Read, restore, convert, optionally resegment and write one subtitle or JSON input."""
    from punctum import formats

    name, input_format, lines = source
    if name.startswith("<"):
        transcript = formats.loads("\n".join(lines) + "\n", input_format, name, args.text_key)
    else:
        transcript = formats.read(name, input_format, args.text_key, args.errors)
    restored = formats.restore_transcript(transcript, punctuator, options)
    result = formats.convert(restored, _restore_output_format(args.to, input_format))
    if layout is not None:
        result = formats.resegment(result, layout, punctuator.inventory)
    formats.write(result, target or sys.stdout, output_key=args.output_key)


def _restore_target(output: str | None, name: str, n_sources: int, input_format: str = "text",
                    output_format: str = "text") -> str | None:
    if output is None or n_sources == 1:
        return output
    base = os.path.basename(name).removesuffix(".gz")
    if output_format != input_format:
        from punctum.formats import EXTENSIONS

        base = os.path.splitext(base)[0] + EXTENSIONS[output_format]
    return os.path.join(output, base)


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


def _add_serve(subparsers) -> None:
    parser = subparsers.add_parser(
        "serve", help="HTTP API and web page (needs punctum[serve])",
        description="Serve POST /v1/restore, GET /v1/models, GET /healthz and a web page at /. "
                    "Binds to 127.0.0.1 unless --host says otherwise; limits come from "
                    "--config (a TOML file with a [serve] table).")
    parser.add_argument("--config", metavar="TOML", help="server settings ([serve] table)")
    parser.add_argument("--host", help="address to bind (default 127.0.0.1)")
    parser.add_argument("--port", type=int, help="port (default 8000)")
    parser.add_argument("-m", "--model", action="append", metavar="NAME",
                        help="model to load (repeatable; the first is the default)")
    parser.add_argument("--threads", type=int, help="ONNX Runtime threads per model")
    parser.set_defaults(run=_run_serve)


def _run_serve(args) -> int:
    try:
        from punctum.serve import load_config, run
    except ImportError as error:
        raise ImportError(f"serve needs the serve extra: pip install 'punctum[serve]' "
                          f"({error})") from None
    config = load_config(args.config, host=args.host, port=args.port,
                         models=tuple(args.model) if args.model else None, threads=args.threads)
    if not config.loopback:
        logging.getLogger("punctum.serve").warning(
            "binding to %s: the server is reachable from other machines", config.host)
    run(config)
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
    _add_serve(subparsers)
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
