"""The `punctum` command: argparse subcommands that build option dataclasses.

    echo "so what do you think i think it's great" | punctum restore
    punctum restore --input-dir transcripts/ --output-dir restored/ --jobs 2
    punctum batch --parquet corpus/ --output-dir restored/ --column text
    punctum eval --ref ../shared/data/iwslt2011/test2011 --hyp hyp.txt --hyp-format text
    punctum train recipes/en-tiny.toml --data-root ../shared/data --out runs/en-tiny
    punctum export runs/en-tiny/best.pt punctum/assets/en-tiny --name en-tiny

Errors in files or options are printed as one line on stderr with exit code 2. Folder jobs
keep going past a bad file and end with exit code 1 and a list of the files that failed.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import itertools
import logging
import math
import os
import sys
from pathlib import Path

from punctum.fileio import NotUtf8Error, make_folder, printable, standard_stream
from punctum.version import __version__

EXIT_USAGE = 2
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, what a shell reports for a reader that went away


def _at_least(minimum: int):
    """An argparse type: an integer >= minimum (for counts no options dataclass checks)."""
    def parse(value: str) -> int:
        number = int(value)
        if number < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}, got {number}")
        return number
    parse.__name__ = "int"  # argparse names the type in "invalid int value"
    return parse


@contextlib.contextmanager
def needs_extra(extra: str, what: str):
    """Turn an ImportError inside the block into the pip command that installs `extra`."""
    try:
        yield
    except ImportError as error:
        raise ImportError(f"{what} needs the {extra} extra: pip install 'punctum[{extra}]' "
                          f"({error})") from None


def _add_eval(subparsers) -> None:
    parser = subparsers.add_parser(
        "eval", help="score a punctuated hypothesis against a reference",
        description="P/R/F1 per mark and overall (IWSLT2011 convention), casing, WER/CER.")
    parser.add_argument("--ref", required=True, help="reference file")
    parser.add_argument("--hyp", required=True, help="hypothesis file")
    parser.add_argument("--format", dest="ref_format", default="auto",
                        choices=["auto", "che", "text", "tsv", "xml", "transcript"],
                        help="reference format (default: guessed; transcript: SRT, WebVTT, "
                             "JSON or CTM, as restore reads them)")
    parser.add_argument("--hyp-format", default="auto",
                        choices=["auto", "che", "text", "tsv", "xml", "transcript"],
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
    parser.add_argument("--plot", metavar="PNG",
                        help="save the confusion matrix as a PNG (or .svg, .pdf)")
    parser.set_defaults(run=_run_eval)


# Above this word error rate a hypothesis is not the reference restored (a restored text
# differs in its words only by what a tokenizer splits): `punctum eval` warns.
_DIFFERENT_TEXT_WER = 0.5


def _run_eval(args) -> int:
    from punctum.evaluation import EvalOptions, evaluate_files, plot_confusion, write_json

    options = EvalOptions(ref_format=args.ref_format, hyp_format=args.hyp_format,
                          language=args.language, mid_final=args.mid_final,
                          bootstrap_samples=args.samples, seed=args.seed,
                          text_column=args.text_column)
    if args.plot is not None:  # before scoring: a bad path would fail after the tables
        if not args.plot.lower().endswith((".png", ".svg", ".pdf")) or os.path.isdir(args.plot):
            raise ValueError(f"--plot {args.plot}: expected a .png, .svg or .pdf file path")
        if not os.path.isdir(os.path.dirname(args.plot) or "."):
            raise FileNotFoundError(f"--plot {args.plot}: no such folder")
    evaluation = evaluate_files(args.ref, args.hyp, options, args.compare)
    print(write_json(evaluation) if args.json else evaluation.format())
    alignment = evaluation.alignment
    if alignment is not None and alignment.wer > _DIFFERENT_TEXT_WER:
        logging.getLogger("punctum.eval").warning(
            "%s: its words differ from %s's in %.0f%% (WER): is it a restoring of the same "
            "text?", args.hyp, args.ref, 100 * alignment.wer)
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
                        help="folder that relative data paths in the recipe start from "
                             "(default ../shared/data)")
    parser.add_argument("--resume", action="store_true", help="continue from OUT/last.pt")
    parser.add_argument("--steps", type=int, help="override train.steps")
    parser.add_argument("--no-progress", action="store_true",
                        help="no progress bar: the loss is logged every log_every steps "
                             "(the default when stderr is not a terminal: a run's log file)")
    parser.set_defaults(run=_run_train)


def _log_losses_without_bar(args) -> bool:
    """--no-progress, or stderr not a terminal (a background run's log): the loss every
    log_every steps and the data's progress (a teacher's labelling) at INFO. Returns
    whether to show progress bars."""
    bars = not args.no_progress and sys.stderr.isatty()
    if not bars:
        logging.getLogger("punctum.train").setLevel(logging.INFO)
    return bars


def _run_train(args) -> int:
    import dataclasses

    with needs_extra("train", "training"):
        from punctum.train.recipe import load_recipe
        from punctum.train.trainer import train
    recipe = load_recipe(args.recipe, args.data_root)
    if args.steps is not None:
        recipe = dataclasses.replace(recipe, train=dataclasses.replace(recipe.train,
                                                                       steps=args.steps))
    progress = _log_losses_without_bar(args)
    state = train(recipe, args.out, resume=args.resume, progress=progress)
    if os.environ.get("RANK", "0") == "0":
        scored = (f"best dev F1 {state.best_f1 * 100:.1f}" if state.evaluated
                  and state.best_f1 > -1 else "no dev evaluation chose a checkpoint: best.pt "
                  "is the final weights")
        print(f"trained {state.step} steps; {scored}; run folder {args.out}")
    if int(os.environ.get("WORLD_SIZE", "1")) > 1:
        _leave_process()
    return 0


def _leave_process() -> None:
    """End a torchrun worker once its run is written and it has left the process group:
    at once, without the interpreter's teardown, where gloo's threads can still abort it
    ("terminate called without an active exception", SIGABRT: a failed run to torchrun
    though every checkpoint was written; seen about once in twenty test-suite runs)."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def _add_restore(subparsers) -> None:
    parser = subparsers.add_parser(
        "restore", help="punctuate and case text, subtitles or ASR JSON (bundled model default)",
        description="Restore punctuation, casing and sentence boundaries. Text comes from "
                    "the arguments, from --input files, or from stdin; one output line per "
                    "input line, each a text (--paragraphs: lines up to a blank line one "
                    "text). Subtitles (SRT, WebVTT, SBV) and ASR JSON (Whisper, "
                    "whisper.cpp, Vosk, NeMo manifests, Deepgram, AssemblyAI, Google, Watson) "
                    "keep every timing; context flows "
                    "across cues. CSV/TSV tables: the text column of each row (with a start "
                    "column, rows are segments and context flows across them). --input-dir "
                    "restores every file under a folder into --output-dir (resumable; "
                    "--jobs worker processes).")
    parser.add_argument("text", nargs="*", help="text to restore (default: read stdin)")
    parser.add_argument("-i", "--input", action="append", default=[], metavar="FILE",
                        help="read text from FILE (repeatable; .gz read transparently; "
                             "'-': standard input)")
    parser.add_argument("-o", "--output", metavar="PATH",
                        help="write to PATH (a folder when there are several inputs; '-' or "
                             "/dev/stdout: standard output)")
    parser.add_argument("--input-dir", metavar="DIR",
                        help="restore every file under DIR (recursive; hidden and temporary "
                             "files left out)")
    parser.add_argument("--output-dir", metavar="DIR",
                        help="--input-dir: write each output to the same relative path under DIR")
    parser.add_argument("--jobs", type=int, metavar="N",
                        help="--input-dir: worker processes, each loading the model once "
                             "(default 1: this process)")
    _add_folder_options(parser)
    _add_restore_options(parser)
    parser.set_defaults(run=_run_restore)


def _add_folder_options(parser) -> None:
    parser.add_argument("--overwrite", action="store_true",
                        help="folders: restore files whose output exists too (default: skip "
                             "them, so that a killed job resumes)")
    parser.add_argument("--no-progress", action="store_true", help="folders: no progress bar")


def _add_restore_options(parser) -> None:
    """The model and format options shared by `restore` and `batch`."""
    parser.add_argument("-m", "--model", default=None,
                        help="bundled model name, model folder or hub id (default: en-tiny)")
    parser.add_argument("--json", action="store_true",
                        help="text input: one JSON object per line: text, words, marks, cases, "
                             "probs")
    parser.add_argument("--no-case", action="store_true", help="restore marks only")
    parser.add_argument("--keep-existing", action="store_true",
                        help="keep marks and casing already present in the input")
    parser.add_argument("--fill", choices=["missing", "all"], default=None,
                        help="with --keep-existing, where the model's marks go: the kinds of "
                             "mark the input leaves out (missing, the default) or every word "
                             "it left without one (all)")
    parser.add_argument("--no-pauses", action="store_true",
                        help="do not give a pause-aware model the pauses from word or cue "
                             "timings (text alone)")
    parser.add_argument("--no-annotations", action="store_true",
                        help="read speaker labels (JOHN:), dialogue dashes, >>, [sound "
                             "descriptions] and line-start timestamps as words (default: "
                             "kept as written, and a speaker's turn starts a sentence)")
    parser.add_argument("--threads", type=_at_least(0), default=0,
                        help="ONNX Runtime threads (per worker for folders; default: the "
                             "cores, shared among workers)")
    parser.add_argument("--bias", action="append", type=_mark_offset, metavar="MARK=OFFSET",
                        help="decision bias for a mark, added to its log-probability (e.g. "
                             "COMMA=0.5 for more commas; repeatable); replaces the model's "
                             "own biases (`punctum calibrate`), marks not named get 0")
    parser.add_argument("--no-bias", action="store_true",
                        help="ignore the model's decision biases (plain argmax)")
    parser.add_argument("--errors", choices=["strict", "replace"], default="strict",
                        help="undecodable input bytes: an error, or replaced by U+FFFD")
    parser.add_argument("--format", default="auto",  # formats.FORMATS, kept literal so that
                        # parsing arguments imports no numpy (a test checks they agree)
                        choices=["auto", "text", "srt", "vtt", "sbv", "ass", "lrc", "ttml",
                                 "whisper",
                                 "whispercpp", "vosk", "nemo", "ctm", "kaldi", "sphinx", "hf",
                                 "sherpa", "deepgram", "assemblyai", "google", "watson",
                                 "textgrid",
                                 "eaf", "csv", "tsv"],
                        help="input format (default: files by extension and content; stdin "
                             "by its first lines: subtitles, a TextGrid, XML, JSON or CTM, "
                             "else text; arguments are text)")
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
    parser.add_argument("--line-buffered", action="store_true",
                        help="restore and write each line as soon as it is read (a live "
                             "pipe from a recogniser; on when stdin is a terminal)")
    parser.add_argument("--stream", action="store_true",
                        help="read text as one stream of words, line breaks not ending "
                             "texts: write each word once --lookahead words follow it, a "
                             "line break after each sentence")
    parser.add_argument("--lookahead", type=int, metavar="N",
                        help="--stream: words of right context before a word is final "
                             "(default 4)")
    parser.add_argument("--paragraphs", action="store_true",
                        help="text: a paragraph (lines up to a blank line) is one text and "
                             "its line breaks stay (a recogniser's segment a line, Whisper's "
                             ".txt), not each line")
    parser.add_argument("--text-key",
                        help="NeMo manifests: the key to restore (default: pred_text); CSV/TSV "
                             "tables: the column (default: the first named text, transcript, "
                             "transcription, utterance, sentence or pred_text); TextGrids: the "
                             "interval tier (default: words, or a text tier, or each "
                             "speaker's); ELAN documents: the tier (TIER_ID; default: each "
                             "speaker's)")
    parser.add_argument("--output-key",
                        help="NeMo manifests and tables: the key or column to write (default: "
                             "--text-key; a new column is added last)")


def _run_restore(args) -> int:
    from punctum.formats import KEYED, TEXT_KEYED
    from punctum.runtime import Punctuator

    if args.input_dir is not None or args.output_dir is not None:
        return _run_restore_folder(args)
    if args.jobs is not None or args.overwrite:
        raise ValueError("--jobs and --overwrite are for --input-dir")
    options = _file_options(args)
    sources = _restore_sources(args, options)
    if any(s.name == "<stdin>" and s.format == "text" for s in sources) and \
            sys.stdin.isatty() and not options.paragraphs:
        options = dataclasses.replace(options, line_buffered=True)  # typed: answer each line
    for source in sources:  # option conflicts before the model loads or any output is written
        options.check(source.name, source.format)
        if (args.output_key is not None or args.text_key is not None) and \
                source.format not in TEXT_KEYED:  # (in a folder: to manifests, tables and
            raise ValueError(f"{source.name}: --text-key and --output-key are for NeMo "  # grids
                             f"manifests and CSV/TSV tables (--text-key also for TextGrid "
                             f"and ELAN tiers), not {source.format} input")
        if args.output_key is not None and source.format not in KEYED:
            raise ValueError(f"{source.name}: --output-key is for NeMo manifests and CSV/TSV "
                             f"tables; a TextGrid's or ELAN tier is restored in place")
    if args.output == "":
        raise ValueError("-o/--output needs a path ('-' for standard output)")
    targets = [_restore_target(args.output, s, len(sources), options) for s in sources]
    streamed = args.output is not None and standard_stream(args.output) is not None
    for source, target in zip(sources, targets):
        _check_output_suffix(target, options.output_format(source.format), source.name,
                             options.as_json or options.to == "json")
    if not streamed:
        _check_distinct_targets(targets, sources)
        files = [s.name for s in sources if s.lines is None]
        _check_outputs_are_not_inputs(targets, files)
        for target, source in zip(targets, sources):  # talk.srt beside talk.srt.gz
            if target is not None and source.name.lower().endswith(".gz") and os.path.exists(
                    target) and os.path.realpath(target) == os.path.realpath(source.name[:-3]):
                raise ValueError(f"{target}: exists beside the input {source.name}; the "
                                 f"output would replace it (name -o a file)")
    if args.output and not streamed and (len(sources) > 1 or _names_folder(args.output)):
        if os.path.exists(args.output) and not os.path.isdir(args.output):
            raise ValueError(f"-o {args.output}: is a file; several inputs need a folder "
                             f"(or - for standard output)")
        make_folder(args.output, args.output)
    punctuator = Punctuator.load(args.model, threads=args.threads, post_bias=_post_bias(args))
    if len(sources) == 1:
        _restore_one(punctuator, sources[0], targets[0], options)
        return 0
    failed = []  # several files: one that cannot be read does not stop the others
    held = not (options.line_buffered or options.stream_lookahead is not None)
    for source, target in zip(sources, targets):
        try:
            _restore_one(punctuator, source, target, options, held)
        except (ValueError, FileNotFoundError, UnicodeError, OSError) as error:
            if isinstance(error, BrokenPipeError):
                raise
            failed.append(source.name)
            print(f"punctum restore: error: {_error_text(error, args)}", file=sys.stderr)
    if failed:
        print(f"punctum restore: {len(failed)} of {len(sources)} files failed: "
              f"{', '.join(printable(name) for name in failed)}", file=sys.stderr)
        return 1
    return 0


def _restore_one(punctuator, source, target, options, held: bool = False) -> None:
    """One input to stdout (target None) or into its file; `held`: its output to stdout
    written once it is whole (one of several inputs: a file that fails half-way writes
    nothing, not half its text before the next file's)."""
    import shutil
    import tempfile

    from punctum.batch import restore_source, restore_to_path

    if target is not None:
        restore_to_path(punctuator, source, target, options)
    elif not held:
        restore_source(punctuator, source, sys.stdout, options)
    else:  # (in memory up to 8 MB, then on disk)
        with tempfile.SpooledTemporaryFile(8 << 20, mode="w+", encoding="utf-8",
                                           newline="", errors="surrogateescape") as out:
            restore_source(punctuator, source, out, options)
            out.seek(0)
            shutil.copyfileobj(out, sys.stdout)


def _run_restore_folder(args) -> int:
    from punctum.batch import plan_batch, run_batch

    options = _batch_options(args, jobs=1 if args.jobs is None else args.jobs)
    plan = plan_batch(options)
    _say_skipped(args.command, len(plan.skipped))
    _say_left_out(args.command, plan.left_out)
    return _report_batch(args.command, run_batch(options, plan), options.output_dir)


def _mark_offset(value: str) -> tuple[str, float]:
    """--bias MARK=OFFSET -> (MARK, offset)."""
    mark, sep, offset = value.partition("=")
    try:
        number = float(offset)
    except ValueError:
        number = float("nan")
    if not sep or not mark.strip() or not math.isfinite(number):
        raise argparse.ArgumentTypeError(f"expected MARK=OFFSET such as COMMA=0.5, got {value!r}")
    if abs(number) > MAX_BIAS:
        raise argparse.ArgumentTypeError(f"an offset is a log-probability shift from "
                                         f"-{MAX_BIAS:g} to {MAX_BIAS:g}, got {value!r}")
    return mark.strip().upper(), number


MAX_BIAS = 50.0  # beyond this a mark always or never wins; larger values overflow exp()


def _post_bias(args) -> dict[str, float] | None:
    """The decision biases from --bias / --no-bias: None (the model's own), {} or a dict."""
    if args.no_bias and args.bias:
        raise ValueError("--bias and --no-bias: give one of them")
    if args.no_bias:
        return {}
    if not args.bias:
        return None
    biases = dict(args.bias)
    if len(biases) < len(args.bias):
        raise ValueError("--bias: a mark is given twice")
    return biases


def _restore_options(args):
    from punctum.runtime import RestoreOptions

    fill = getattr(args, "fill", None)
    if fill is not None and not args.keep_existing:
        raise ValueError("--fill is for --keep-existing (without it every mark is the model's)")
    return RestoreOptions(case=not args.no_case, keep_existing=args.keep_existing,
                          pauses=not getattr(args, "no_pauses", False),
                          annotations=not getattr(args, "no_annotations", False),
                          fill=fill or "missing")


def _file_options(args):
    """FileOptions from the restore options (validated before the model loads)."""
    from punctum.batch import FileOptions

    return FileOptions(restore=_restore_options(args), input_format=args.format, to=args.to,
                       as_json=args.json, layout=_restore_layout(args), text_key=args.text_key,
                       output_key=args.output_key, errors=args.errors,
                       line_buffered=getattr(args, "line_buffered", False),
                       stream_lookahead=_stream_lookahead(args),
                       paragraphs=getattr(args, "paragraphs", False))


def _stream_lookahead(args) -> int | None:
    """--stream's lookahead (default 4), None without --stream."""
    lookahead = getattr(args, "lookahead", None)
    if not getattr(args, "stream", False):
        if lookahead is not None:
            raise ValueError("--lookahead is for --stream")
        return None
    return 4 if lookahead is None else lookahead


def _batch_options(args, jobs: int = 1):
    """BatchOptions for --input-dir (restore and batch)."""
    from punctum.batch import BatchOptions

    if args.input_dir is None:
        raise ValueError("--output-dir is for --input-dir; give the folder to read")
    if args.output_dir is None:
        raise ValueError("--input-dir needs --output-dir, the folder to write")
    if getattr(args, "text", None) or getattr(args, "input", None):
        raise ValueError("give --input-dir, or text arguments and --input files, not both")
    if getattr(args, "output", None):
        raise ValueError("--input-dir writes into --output-dir; -o is for single inputs")
    return BatchOptions(input_dir=args.input_dir, output_dir=args.output_dir,
                        file=_file_options(args), model=args.model, jobs=jobs,
                        threads=args.threads, overwrite=args.overwrite,
                        progress=not args.no_progress, post_bias=_post_bias(args))


def _say_skipped(command: str, n_skipped: int) -> None:
    if n_skipped:
        print(f"punctum {command}: skipping {_files(n_skipped)} whose output exists "
              f"(--overwrite redoes them)", file=sys.stderr)


def _say_left_out(command: str, left_out, named: int = 5) -> None:
    """Name the files of a folder that are not transcripts (binary, or of a format punctum
    does not read), the first few with the reason."""
    if not left_out:
        return
    names = ", ".join(f"{printable(r.source)} ({r.error})" for r in left_out[:named])
    more = f" and {len(left_out) - named} more" if len(left_out) > named else ""
    what = "that is not a transcript" if len(left_out) == 1 else "that are not transcripts"
    print(f"punctum {command}: left out {_files(len(left_out))} {what}: {names}{more}",
          file=sys.stderr)


def _report_batch(command: str, report, output_dir: str) -> int:
    """Print what a folder job did on stderr; exit code 1 when a file failed."""
    print(f"punctum {command}: restored {_files(report.n_restored)} into "
          f"{printable(str(output_dir))}",
          file=sys.stderr)
    summary = report.failure_summary()
    if summary:
        print(summary, file=sys.stderr)
        return 1
    return 0


def _files(n: int) -> str:
    return f"{n} file" if n == 1 else f"{n} files"


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


def _restore_sources(args, options) -> list:
    """A batch.Source per input: the arguments, the files, or stdin."""
    from punctum.batch import Source

    if args.text and args.input:
        raise ValueError("give text arguments or --input files, not both")
    default = "text" if args.format == "auto" else args.format
    if args.text:
        files = [text for text in args.text if os.path.sep in text or "." in text.strip(".")]
        if files and all(os.path.isfile(text) for text in files):  # "punctum restore talk.srt"
            print(f"punctum restore: note: {printable(files[0])} is restored as text; "
                  f"-i {printable(files[0])} reads the file", file=sys.stderr)
        return [Source("<arguments>", default, iter([_argument_text(args.text, args.errors)]))]
    if not args.input:
        return [_stdin_source(args, default)]
    if "-" in args.input and len(args.input) > 1:
        raise ValueError("-i - (standard input) cannot be given with other inputs")
    for path in args.input:  # fail on a missing file before any output is written
        if os.path.isdir(path):
            raise ValueError(f"{path}: is a folder (--input-dir restores the files under it)")
        if path != "-" and not os.path.exists(path):
            raise FileNotFoundError(f"{path}: no such file")
    return [_stdin_source(args, default) if path == "-" else
            Source(path, options.input_format_of(path)) if os.path.isfile(path) else
            _stdin_source(args, default, path)  # a pipe: -i <(command), told apart as stdin
            for path in args.input]


def _argument_text(texts: list[str], errors: str) -> str:
    """Text arguments as one text; bytes that are not UTF-8 (which Python keeps as lone
    surrogates) are an error naming them, or U+FFFD with --errors replace, as in files."""
    joined = " ".join(texts)
    try:
        joined.encode("utf-8")
        return joined
    except UnicodeEncodeError:
        raw = joined.encode("utf-8", "surrogateescape")
    try:
        return raw.decode("utf-8", errors)
    except UnicodeDecodeError as error:
        raise ValueError(f"<arguments>: not valid UTF-8 ({error.reason} at byte "
                         f"{error.start}); --errors replace writes U+FFFD for such bytes"
                         ) from None


def _stdin_source(args, default: str, pipe: str | None = None):
    """Standard input (or the named `pipe`: -i <(command)) as a Source: gunzipped when
    gzip's, its format told apart by its first lines when --format is auto
    (`formats.sniff_lines`)."""
    from punctum.batch import Source
    from punctum.corpora import decode_lines, gunzipped, starts_with_bom

    name = "<stdin>" if pipe is None else pipe
    stream = gunzipped(sys.stdin.buffer if pipe is None else open(pipe, "rb"))
    # lines keep their endings where the format's reader wants them: a table's (CR inside
    # cells), a file piped in (written back with CRLF if it has it); text's are dropped,
    # its first line's written back
    bom = starts_with_bom(stream, name)
    lines = (line for _, line in decode_lines(stream, name, args.errors, keep_ends=True))
    found = default
    if args.format == "auto":
        from punctum.formats import sniff_lines

        found, lines = sniff_lines(lines, name)  # subtitles, JSON or CTM piped in
    if found != "text":
        return Source(name, found, lines, line_ends=True, bom=bom)
    first = next(lines, "")
    newline = first[len(first.rstrip("\r\n")):] or "\n"
    return Source(name, found, (line.rstrip("\r\n") for line in
                                itertools.chain([first] if first else [], lines)),
                  bom=bom, newline=newline)


def _check_output_suffix(target: str | None, output_format: str, name: str,
                         json_lines: bool = False) -> None:
    """ValueError when -o names a subtitle file of another format than is written (SRT in
    out.vtt, JSON in out.srt could not be read back as their names say), or a JSON file
    for plain text (`json_lines`: text written as JSON lines, --json)."""
    if target is None or standard_stream(target) is not None:
        return
    suffix = os.path.splitext(target.lower().removesuffix(".gz"))[1]
    named = {".srt": "srt", ".vtt": "vtt", ".sbv": "sbv", ".textgrid": "textgrid",
             ".ass": "ass", ".ssa": "ass", ".lrc": "lrc", ".ttml": "ttml",
             ".dfxp": "ttml", ".eaf": "eaf"}.get(suffix)
    if named is not None and named != output_format:
        written = {"sbv": "SBV", "textgrid": "a TextGrid", "ass": "an ASS script",
                   "lrc": "LRC", "ttml": "TTML", "eaf": "an ELAN document"}.get(named)
        convert = f"add --to {named} to convert it" if named in ("srt", "vtt") else \
            f"{written} is written from such input alone"
        raise ValueError(f"{target}: the output of {name} is {output_format}, not {named}; "
                         f"{convert}, or name the file otherwise")
    from punctum.batch import JSON_FORMATS

    if suffix in (".json", ".jsonl") and output_format not in JSON_FORMATS and not (
            output_format == "text" and json_lines):
        add = "--json for one JSON object per line" if output_format == "text" else \
            "--to json to convert it"
        raise ValueError(f"{target}: the output of {name} is {output_format}, not JSON; add "
                         f"{add}, or name the file otherwise")


def _check_distinct_targets(targets: list, sources: list) -> None:
    """ValueError when two inputs would be written to the same file (the first would be
    lost)."""
    seen: dict[str, str] = {}
    for target, source in zip(targets, sources):
        if target is None or target == "-":
            continue
        key = os.path.normcase(os.path.abspath(target))
        if key in seen:
            raise ValueError(f"{seen[key]} and {source.name} would both be written to "
                             f"{target}; restore them one at a time or with --input-dir")
        seen[key] = source.name


def _restore_target(output: str | None, source, n_sources: int, options) -> str | None:
    """-o itself for one input; for several, or when -o is a folder (an existing one or a
    path ending in "/"), a file in it named after each input."""
    from punctum.batch import output_name

    if output is None or standard_stream(output) is not None or (
            n_sources == 1 and not _names_folder(output)):
        return output  # several inputs to "-" are written one after another
    if source.lines is not None:  # stdin or arguments: no name to give the file
        raise ValueError(f"-o {output}: is a folder; give a file path for {source.name}")
    name = output_name(os.path.basename(source.name), source.format,
                       options.output_format(source.format),
                       json_lines=options.writes_json_lines(source.format))
    return os.path.join(output, name)


def _add_batch(subparsers) -> None:
    parser = subparsers.add_parser(
        "batch", help="restore a folder or a Parquet column on Ray (needs punctum[ray])",
        description="Files: restore every file under --input-dir into --output-dir on Ray "
                    "actors (as restore --input-dir: resumable, atomic, failures listed at "
                    "the end). Parquet: restore one text column of --parquet into Parquet "
                    "files under --output-dir. Without --address a local Ray is started.")
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--input-dir", metavar="DIR", help="restore every file under DIR")
    source.add_argument("--parquet", metavar="PATH",
                        help="a Parquet file or folder (local, or a URI such as s3://)")
    parser.add_argument("--output-dir", required=True, metavar="DIR", help="folder to write")
    parser.add_argument("--address", help="Ray cluster address (default: start a local Ray "
                                          "with this machine's cores)")
    parser.add_argument("--actors", type=int, default=0, metavar="K",
                        help="model-holding actors, one CPU each (default: one per CPU; for "
                             "Parquet, one per CPU but one)")
    parser.add_argument("--column", default="text", help="--parquet: the column to restore")
    parser.add_argument("--output-column", default="restored",
                        help="--parquet: the column written (default: restored)")
    parser.add_argument("--batch-size", type=int, default=256, metavar="N",
                        help="--parquet: rows per model call (default 256)")
    _add_folder_options(parser)
    _add_restore_options(parser)
    parser.set_defaults(run=_run_batch)


def _run_batch(args) -> int:
    from punctum.batch_ray import RayOptions, import_ray

    ray = import_ray()
    ray_options = RayOptions(address=args.address, actors=args.actors)
    try:
        if args.parquet is not None:
            return _run_batch_parquet(args, ray_options)
        return _run_batch_files(args, ray_options)
    except ray.exceptions.RayError as error:  # its text holds the remote traceback
        lines = [line for line in str(error).splitlines() if line.strip()]
        print(f"punctum batch: error: {lines[-1].strip()[:300] if lines else error!r}",
              file=sys.stderr)
        return 1


def _reject_flags(flags: dict, why: str) -> None:
    """ValueError naming the flags given (a true value) that do not apply."""
    given = [flag for flag, value in flags.items() if value]
    if given:
        raise ValueError(f"{', '.join(given)}: {why}")


def _run_batch_files(args, ray_options) -> int:
    from punctum.batch import plan_batch
    from punctum.batch_ray import run_files

    parquet_only = {"--column": args.column != "text",
                    "--output-column": args.output_column != "restored",
                    "--batch-size": args.batch_size != 256}
    _reject_flags(parquet_only, "for --parquet, not --input-dir files")
    options = _batch_options(args)
    plan = plan_batch(options)
    _say_skipped(args.command, len(plan.skipped))
    _say_left_out(args.command, plan.left_out)
    return _report_batch(args.command, run_files(options, ray_options, plan),
                         options.output_dir)


def _run_batch_parquet(args, ray_options) -> int:
    from punctum.batch_ray import ParquetOptions, run_parquet

    file_only = {"--format": args.format != "auto", "--to": args.to, "--json": args.json,
                 "--resegment": args.resegment, "--overwrite": args.overwrite,
                 "--errors": args.errors != "strict", "--text-key": args.text_key,
                 "--output-key": args.output_key, "--stream": args.stream,
                 "--line-buffered": args.line_buffered, "--lookahead": args.lookahead,
                 "--paragraphs": args.paragraphs,
                 "--max-*": (args.max_chars, args.max_lines, args.max_duration) != (None,) * 3}
    _reject_flags(file_only, "for --input-dir files, not --parquet")
    options = ParquetOptions(input=args.parquet, output_dir=args.output_dir,
                             column=args.column, output_column=args.output_column,
                             batch_size=args.batch_size, restore=_restore_options(args),
                             model=args.model, threads=args.threads,
                             post_bias=_post_bias(args))
    report = run_parquet(options, ray_options, progress=not args.no_progress)
    print(f"punctum batch: restored column {args.column!r} into Parquet files under "
          f"{report.output_dir} (column {report.output_column!r})", file=sys.stderr)
    return 0


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
    parser.add_argument("--min-agreement", type=float, default=None,
                        help="minimum ONNX/torch agreement: per-word labels for text models "
                             "(default 0.995), greedy tokens for acoustic models (default 0.9)")
    parser.add_argument("--per-channel", action="store_true",
                        help="int8 scales per output channel (better for Transformers)")
    parser.add_argument("--with-weights", action="store_true",
                        help="also write fp32 weights.safetensors (for fine-tuning)")
    parser.add_argument("--window", type=int, nargs=3, default=(120, 40, 15),
                        metavar=("SIZE", "LEFT", "RIGHT"),
                        help="default double-overlap windows in subwords (default 120 40 15)")
    parser.add_argument("--scores", metavar="JSON",
                        help="a JSON file of measured scores to record in punctum.json")
    parser.add_argument("--data-root", metavar="DIR", default="",
                        help="where the training data is now, when export runs elsewhere "
                             "than training did: each recorded data path is looked up by its "
                             "trailing folders under DIR (dev set for the parity check, "
                             "sources for the casing lexicon)")
    parser.set_defaults(run=_run_export)


def _run_export(args) -> int:
    with needs_extra("train", "export"):
        from punctum.train.export import ExportOptions, export_artifact, parity_texts
    checkpoint = Path(args.checkpoint)
    tokenizer = Path(args.tokenizer) if args.tokenizer else checkpoint.parent / "tokenizer.json"
    scores = _read_scores(args.scores) if args.scores else {}
    if _checkpoint_kind(checkpoint) == "ctc_encoder":
        return _export_ctc(args, checkpoint, scores)
    size, left, right = args.window
    agreement = {} if args.min_agreement is None else {"min_agreement": args.min_agreement}
    options = ExportOptions(int8=args.int8, name=args.name, **agreement,
                            include_weights=args.with_weights, per_channel=args.per_channel,
                            window_size=size,
                            window_left=left, window_right=right, scores=scores,
                            data_root=args.data_root)
    meta = export_artifact(checkpoint, args.out_dir, tokenizer, options,
                           parity_texts(checkpoint, data_root=args.data_root))
    print(f"wrote {args.out_dir} ({meta['model']['precision']}); ONNX/torch label agreement "
          f"{meta['parity']['label_agreement'] * 100:.2f}% on {meta['parity']['words']} words")
    return 0


def _add_calibrate(subparsers) -> None:
    parser = subparsers.add_parser(
        "calibrate", help="fit a model's per-mark decision biases on a dev set",
        description="Fit offsets added to each mark's log-probability before the argmax, so "
                    "that overall punctuation F1 on a dev set is highest, and store them in "
                    "the model folder's punctum.json (README: decision biases).")
    parser.add_argument("model", help="model folder (an exported artifact)")
    parser.add_argument("--dev", required=True,
                        help="punctuated dev file (Che format, text or TSV), e.g. "
                             "../shared/data/iwslt2011/dev2012.gz; never the test set")
    parser.add_argument("--format", dest="dev_format", default="auto",
                        choices=["auto", "che", "text", "tsv", "xml"],
                        help="dev file format (default: guessed)")
    parser.add_argument("--threads", type=_at_least(0), default=0, help="ONNX Runtime threads")
    parser.add_argument("--dry-run", action="store_true",
                        help="print the fitted biases without writing punctum.json")
    parser.set_defaults(run=_run_calibrate)


def _run_calibrate(args) -> int:
    from punctum.artifact import read_artifact, update_meta
    from punctum.calibration import bias_vector, decision_record, fit_on_dev
    from punctum.evaluation import load_scored
    from punctum.runtime import Punctuator

    folder = Path(args.model)
    if not (folder / "punctum.json").is_file():
        raise FileNotFoundError(f"{folder}: not a model folder (calibrate writes into its "
                                "punctum.json; copy a bundled model's folder first)")
    read_artifact(folder)
    punctuator = Punctuator.load(folder, threads=args.threads, post_bias={})
    dev = load_scored(args.dev, args.dev_format, punctuator.inventory)
    decision = punctuator.artifact.meta.get("decision") or {}
    own = decision.get("post_bias") if isinstance(decision, dict) else None
    reason = None  # the model's own biases are a second start, when they are valid ones
    if own is not None and not isinstance(own, dict):
        reason = "post_bias must be an object of mark -> number"
    elif own is not None:
        try:
            bias_vector(punctuator.post_labels, own)
        except ValueError as error:
            reason = str(error)
    if reason is not None:
        logging.getLogger("punctum.calibrate").warning(
            "%s: decision.%s; fitting from no offsets alone", folder / "punctum.json", reason)
        own = None
    fit = fit_on_dev(punctuator, dev, starts=[own] if isinstance(own, dict) else [])
    print(f"{fit.words:,} dev words: overall punctuation F1 {fit.f1_before * 100:.2f} -> "
          f"{fit.f1_after * 100:.2f} with biases "
          + ", ".join(f"{label} {value:+.2f}" for label, value in fit.bias.items()))
    if args.dry_run:
        return 0
    scored = bool(punctuator.artifact.meta.get("scores"))
    update_meta(folder, {"decision": decision_record(fit, Path(args.dev).name)})
    print(f"wrote {folder / 'punctum.json'}" + (" (scores recorded there before the biases "
                                                 "are now out of date: measure again)"
                                                 if scored else ""))
    return 0


def _add_ensemble(subparsers) -> None:
    parser = subparsers.add_parser(
        "ensemble", help="make one model of several (the mean of their probabilities)",
        description="Write a model folder that restores with several models at once: each "
                    "predicts with its own tokenizer and windows and their per-word "
                    "probabilities are averaged. Fit its decision biases with punctum "
                    "calibrate, then use it as --model DIR (README: ensembles).")
    parser.add_argument("members", nargs="+", help="bundled model names or model folders")
    parser.add_argument("--out", required=True, help="the folder to write")
    parser.add_argument("--name", default="", help="model name (default: the folder's)")
    parser.set_defaults(run=_run_ensemble)


def _run_ensemble(args) -> int:
    from punctum.ensemble import write_ensemble

    folder = write_ensemble(args.members, args.out, args.name)
    print(f"wrote {folder / 'punctum.json'} ({len(args.members)} members); fit its biases "
          f"with: punctum calibrate {folder} --dev DEV")
    return 0


def _add_selftrain(subparsers) -> None:
    parser = subparsers.add_parser(
        "selftrain", help="discriminative self-training from a recipe (needs punctum[train])",
        description="Teacher -> pseudo labels on an unlabelled pool -> student, repeated while "
                    "dev F1 improves (Chen et al. 2021). The recipe is a training recipe plus "
                    "a [selftrain] table; finished work in OUT is reused on a re-run.")
    parser.add_argument("recipe", help="recipe file with a [selftrain] table")
    parser.add_argument("--out", required=True, help="output folder (rounds, pool, best.pt)")
    parser.add_argument("--data-root", default="../shared/data",
                        help="folder that relative paths in the recipe start from "
                             "(default ../shared/data)")
    parser.add_argument("--teacher", metavar="MODEL",
                        help="start from this checkpoint, model folder or bundled model "
                             "(en-accurate) instead of training round 0 (overrides "
                             "selftrain.teacher)")
    parser.add_argument("--no-progress", action="store_true",
                        help="no progress bars: losses and labelling logged (the default when "
                             "stderr is not a terminal)")
    parser.set_defaults(run=_run_selftrain)


def _run_selftrain(args) -> int:
    with needs_extra("train", "self-training"):
        from punctum.train.recover import is_artifact
        from punctum.train.selftrain import load_selftrain_recipe, selftrain
    from punctum.config import existing

    recipe, config = load_selftrain_recipe(args.recipe, args.data_root)
    if args.teacher:
        teacher = args.teacher if is_artifact(args.teacher) else existing(args.teacher,
                                                                          "--teacher")
        config = dataclasses.replace(config, teacher=teacher)
    progress = _log_losses_without_bar(args)
    summary = selftrain(recipe, config, args.out, progress=progress)
    rounds = ", ".join(f"round {r['round']}: {r['dev_f1'] * 100:.1f}" for r in summary["rounds"])
    best = summary["rounds"][summary["best_round"]]["checkpoint"]
    where = f"the teacher {best} (no best.pt)" if is_artifact(best) else f"{args.out}/best.pt"
    print(f"dev F1 {rounds}; best round {summary['best_round']} -> {where}")
    return 0


def _checkpoint_kind(checkpoint) -> str:
    from punctum.train.checkpoint import load_checkpoint
    from punctum.train.export import check_checkpoint

    return check_checkpoint(load_checkpoint(checkpoint), checkpoint)["kind"]


def _read_scores(path: str) -> dict:
    """--scores: a JSON object, or a one-line error naming the file."""
    import json

    try:
        scores = json.loads(Path(path).read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ValueError(f"{path}: not a JSON file ({error})") from None
    if not isinstance(scores, dict):
        raise ValueError(f"{path}: expected a JSON object of scores")
    return scores


def _export_ctc(args, checkpoint, scores: dict) -> int:
    from punctum.train.export_ctc import CtcExportOptions, export_ctc_artifact

    agreement = {} if args.min_agreement is None else {"min_agreement": args.min_agreement}
    options = CtcExportOptions(int8=args.int8, name=args.name, scores=scores,
                               data_root=args.data_root, **agreement)
    meta = export_ctc_artifact(checkpoint, args.out_dir, options)
    print(f"wrote {args.out_dir} ({meta['model']['precision']} acoustic model); ONNX/torch "
          f"greedy agreement {meta['parity']['greedy_agreement'] * 100:.0f}%")
    return 0


def _add_transcribe(subparsers) -> None:
    parser = subparsers.add_parser(
        "transcribe", help="speech to punctuated, cased text with word timings (audio extra)",
        description="Transcribe audio files (wav, flac, ogg, mp3) with an exported CTC model: "
                    "end to end (the model writes the marks) or as a cascade (a model without "
                    "marks, then the lexical model). Long files are read in chunks.")
    parser.add_argument("audio", nargs="+", help="audio files")
    parser.add_argument("-m", "--model", required=True,
                        help="acoustic model folder or name; \"pocketsphinx\": that package's "
                             "English model, as a cascade with --text-model (needs "
                             "punctum[sphinx])")
    parser.add_argument("--text-model", help="lexical model for casing (and marks in a "
                        "cascade; default: the bundled model for cascades)")
    parser.add_argument("--beam", type=int, default=0, help="prefix beam width (0 = greedy)")
    parser.add_argument("--to", choices=["text", "json", "srt", "vtt"], default="text",
                        help="output: text, JSON with word timings, or subtitles")
    parser.add_argument("-o", "--output", metavar="PATH",
                        help="write to PATH (a folder when there are several files)")
    parser.add_argument("--threads", type=_at_least(0), default=0, help="ONNX Runtime threads")
    parser.set_defaults(run=_run_transcribe)


def _run_transcribe(args) -> int:
    from punctum.formats import EXTENSIONS
    from punctum.transcribe import Transcriber, dumps

    if not 0 <= args.beam <= MAX_BEAM:
        raise ValueError(f"--beam must be from 0 (greedy) to {MAX_BEAM}, got {args.beam}")
    names = [os.path.splitext(os.path.basename(p))[0] for p in args.audio]
    to_stdout = not args.output or standard_stream(args.output) is not None
    if not to_stdout and len(set(names)) < len(names):
        raise ValueError("two audio files have the same name; their outputs would collide")
    several = len(args.audio) > 1
    if several and args.to != "text" and to_stdout:
        raise ValueError(f"several audio files make one {args.to} file each: give -o FOLDER "
                         f"(on stdout they would run together into one broken file)")
    into_folder = not to_stdout and (several or _names_folder(args.output))
    if into_folder and os.path.exists(args.output) and not os.path.isdir(args.output):
        raise ValueError(f"-o {args.output}: is a file; several inputs need a folder")
    suffix = EXTENSIONS["whisper" if args.to == "json" else args.to]
    targets = [os.path.join(args.output, name + suffix) if into_folder else args.output
               for name in names]
    _check_outputs_are_not_inputs(targets, args.audio)
    transcriber = Transcriber.load(args.model, args.text_model, args.threads, args.beam)
    if into_folder:
        make_folder(args.output, args.output)
    failures = []
    for path, target in zip(args.audio, targets):
        try:
            result = transcriber.transcribe(path)
        except (FileNotFoundError, ValueError, RuntimeError) as error:
            failures.append(str(error))
            print(f"punctum transcribe: error: {error}", file=sys.stderr)
            continue
        _write_text(target, dumps(result, args.to, inventory=transcriber.model.inventory))
    if failures:
        return 1 if several else EXIT_USAGE
    return 0


MAX_BEAM = 64  # prefix beams; each costs a full pass over the vocabulary per frame


def _names_folder(path: str) -> bool:
    """Whether -o names a folder: an existing one, or a path ending in a separator."""
    return path != "-" and (os.path.isdir(path) or path.endswith(("/", os.sep)))


def _check_outputs_are_not_inputs(targets: list, inputs: list[str]) -> None:
    sources = {os.path.realpath(path) for path in inputs}
    for target in targets:
        if target is not None and os.path.realpath(target) in sources:
            raise ValueError(f"{target}: is an input; the output would replace it")


def _write_text(target: str | None, text: str) -> None:
    """Text to stdout (target None or "-"), or atomically into a file."""
    from punctum.fileio import atomic_writer

    stream = sys.stdout if target is None else standard_stream(target)
    if stream is not None:
        stream.write(text)
        stream.flush()
        return
    with atomic_writer(target) as out:
        out.write(text)


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
    parser.add_argument("--threads", type=_at_least(0), help="ONNX Runtime threads per model")
    parser.add_argument("--acoustic", metavar="NAME",
                        help="recognise speech for POST /v1/transcribe: pocketsphinx (needs "
                             "punctum[audio,sphinx]) or an acoustic model folder, followed by "
                             "the default model (without it the route answers 501)")
    parser.set_defaults(run=_run_serve)


def _run_serve(args) -> int:
    with needs_extra("serve", "serve"):
        from punctum.serve import load_config, run
    config = load_config(args.config, host=args.host, port=args.port,
                         models=tuple(args.model) if args.model else None, threads=args.threads,
                         acoustic=args.acoustic)
    if not config.loopback:
        logging.getLogger("punctum.serve").warning(
            "binding to %s: the server is reachable from other machines", config.host)
    run(config)
    return 0


def _add_synth(subparsers) -> None:
    parser = subparsers.add_parser(
        "synth", help="speak punctuated text with the Debian TTS voices (needs punctum[audio])",
        description="Build a speech corpus (16 kHz FLAC + JSONL manifest) from punctuated "
                    "text: per utterance a random voice, speaking rate, pitch and optional "
                    "noise. Parallel; resumable (run the same command again); reproducible "
                    "from --seed. Flags override the recipe's values.")
    parser.add_argument("inputs", nargs="*", metavar="TEXT",
                        help="text files (one document per line), .tsv tables, LJSpeech "
                             ".csv or .jsonl manifests (.gz read)")
    parser.add_argument("--out", help="corpus folder (with --recipe: one subfolder per split)")
    parser.add_argument("--recipe", help="corpus recipe, e.g. recipes/speech-synth.toml")
    parser.add_argument("--data-root", default="../shared/data",
                        help="folder that the recipe's text paths start from "
                             "(default ../shared/data)")
    parser.add_argument("--only", action="append", default=[], metavar="SPLIT",
                        help="--recipe: build only this split (repeatable)")
    parser.add_argument("--list-voices", action="store_true",
                        help="list the voices, their families and whether they are installed")
    parser.add_argument("-n", "--utterances", type=int, dest="n_utterances",
                        help="utterances to synthesize (default: all)")
    parser.add_argument("--voices", nargs="+", metavar="NAME",
                        help="voice ids, names, families or engines to use (default: all)")
    parser.add_argument("--hold-out", nargs="+", metavar="NAME",
                        help="voice ids, names, families or engines never used")
    parser.add_argument("--split", choices=["train", "dev", "test"],
                        help="keep only the text whose words hash to this split")
    parser.add_argument("--split-fractions", type=float, nargs=3,
                        metavar=("TRAIN", "DEV", "TEST"), help="default 0.96 0.02 0.02")
    parser.add_argument("--min-words", type=int, help="words per utterance at least (3)")
    parser.add_argument("--max-words", type=int, help="words per utterance at most (30)")
    parser.add_argument("--max-sentences", type=int, help="sentences per utterance (3)")
    parser.add_argument("--skip-digits", action="store_true", default=None,
                        help="drop utterances with digits")
    parser.add_argument("--rate-range", type=float, nargs=2, metavar=("LOW", "HIGH"),
                        help="speaking-rate factor (0.85 1.15)")
    parser.add_argument("--pitch-range", type=float, nargs=2, metavar=("LOW", "HIGH"),
                        help="pitch factor (0.9 1.1)")
    parser.add_argument("--noise-probability", type=float,
                        help="share of utterances with added noise (0.3)")
    parser.add_argument("--snr-db-range", type=float, nargs=2, metavar=("LOW", "HIGH"),
                        help="noise SNR in dB (10 30)")
    parser.add_argument("--seed", type=int, help="seed of every random choice (0)")
    parser.add_argument("--workers", type=int, help="parallel jobs (default: CPU cores)")
    parser.add_argument("--exclude-ids", nargs="+", default=[], metavar="PREFIX",
                        help="skip documents whose id starts with PREFIX (e.g. LJ001-)")
    parser.add_argument("--text-column", default="text", help="TSV text column")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.set_defaults(run=_run_synth)


_SYNTH_FIELDS = ("n_utterances", "voices", "hold_out", "split", "split_fractions",
                 "min_words", "max_words", "max_sentences", "skip_digits", "rate_range",
                 "pitch_range", "noise_probability", "snr_db_range", "seed", "workers")


def _run_synth(args) -> int:
    from punctum.audio import synth, voices

    if args.list_voices:
        for voice in voices.VOICES:
            state = "installed" if voices.voice_available(voice) else "missing"
            print(f"{voice.id:34} family {voice.family:15} {voice.gender}  pitch "
                  f"{'yes' if voice.pitch_control else 'no ':3}  {state}")
        return 0
    if not args.out:
        raise ValueError("--out is required")
    given = {name: getattr(args, name) for name in _SYNTH_FIELDS
             if getattr(args, name) is not None}
    progress = not args.no_progress
    if args.recipe:
        if args.inputs:
            raise ValueError("give text files or --recipe, not both")
        recipe = synth.load_synth_recipe(args.recipe, args.data_root)
        reports = synth.build_from_recipe(recipe, args.out, given, tuple(args.only), progress)
    else:
        reports = [synth.build_from_files(args.inputs, args.out, synth.SynthConfig(**given),
                                          tuple(args.exclude_ids), args.text_column,
                                          progress)]
    for report in reports:
        print(f"{report.out_dir}: {report.n_utterances} utterances ({report.n_resumed} "
              f"resumed), {report.seconds_of_audio / 3600:.2f} h of audio, "
              f"{len(report.voices)} voices, {report.wall_seconds:.0f} s")
    return 0


def _add_timings(subparsers) -> None:
    parser = subparsers.add_parser(
        "timings", help="timed text for pause-aware models: the pause after every word of "
                        "punctuated text spoken by espeak-ng",
        description="Cut punctuated text into utterances (as punctum synth does), speak each "
                    "with a random espeak-ng voice, speed and pitch, and write JSONL records "
                    "{id, text, pauses, voice, wpm}: the measured silence after each word. "
                    "No audio is kept. Reproducible from --seed.")
    parser.add_argument("inputs", nargs="+", metavar="TEXT",
                        help="text files (one document per line), tables or manifests")
    parser.add_argument("--out", required=True, help="output .jsonl or .jsonl.gz")
    parser.add_argument("-n", "--utterances", type=int, default=0,
                        help="utterances (default: all of the split)")
    parser.add_argument("--split", choices=["train", "dev", "test"],
                        help="keep only the text whose words hash to this split")
    parser.add_argument("--hold-out", nargs="+", default=[], metavar="NAME",
                        help="espeak-ng voices or accents never used (e.g. en-gb-scotland)")
    parser.add_argument("--voices", nargs="+", default=[], metavar="NAME",
                        help="use only these espeak-ng voices or accents")
    parser.add_argument("--min-words", type=int, default=8, help="words per utterance (8)")
    parser.add_argument("--max-words", type=int, default=60, help="at most (60)")
    parser.add_argument("--max-sentences", type=int, default=6, help="sentences (6)")
    parser.add_argument("--max-documents", type=int, default=0,
                        help="documents read per input (default: all)")
    parser.add_argument("--rate-range", type=float, nargs=2, default=[0.85, 1.2],
                        metavar=("LOW", "HIGH"), help="speed factor (0.85 1.2)")
    parser.add_argument("--seed", type=int, default=0, help="seed of every random choice")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                        help="processes (default: CPU cores)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.set_defaults(run=_run_timings)


def _run_timings(args) -> int:
    from punctum.audio.synth import SynthConfig
    from punctum.audio.timed_text import TimedConfig, build_timed

    texts = SynthConfig(voices=tuple(args.voices), hold_out=tuple(args.hold_out),
                        n_utterances=args.utterances, min_words=args.min_words,
                        max_words=args.max_words, max_sentences=args.max_sentences,
                        split=args.split or "", rate_range=tuple(args.rate_range),
                        seed=args.seed)
    config = TimedConfig(texts, max_documents=args.max_documents, jobs=args.jobs)
    _check_outputs_are_not_inputs([args.out], args.inputs)
    if os.path.isdir(args.out) or args.out.endswith(("/", os.sep)):
        raise ValueError(f"--out {args.out}: expected a .jsonl or .jsonl.gz file, not a folder")
    report = build_timed(args.inputs, args.out, config, progress=not args.no_progress)
    print(f"timings: {report['utterances']} utterances, {report['words']} words "
          f"({report['skipped']} skipped) -> {args.out}")
    return 0


def _add_glue(subparsers) -> None:
    parser = subparsers.add_parser(
        "glue", help="glue same-speaker utterances into longer recordings (needs "
                     "punctum[audio])",
        description="Utterance gluing as in Jakubiak et al. (Samsung) 3.2: same speaker, "
                    "RMS-sorted neighbours, groups of 2-3, 8/10/12 ms cross-fades, long "
                    "silences shortened; or --mode concat, the random-concatenation "
                    "baseline. Writes 16 kHz FLAC + a JSONL manifest with the source "
                    "utterances' boundaries; text-only input is glued as text.")
    parser.add_argument("input", help=".jsonl manifest, .tsv table with speaker ids (audio "
                                      "in flac/ or wavs/ beside it, or text only) or "
                                      "LJSpeech .csv")
    parser.add_argument("--out", required=True, help="output folder")
    parser.add_argument("--mode", choices=["glue", "concat"], help="default glue")
    parser.add_argument("--group-size", type=int, nargs=2, metavar=("MIN", "MAX"),
                        help="utterances per recording (2 3)")
    parser.add_argument("--min-duration", type=float, help="glue: shorter are dropped (1.0 s)")
    parser.add_argument("--min-rms", type=float, help="glue: quieter are dropped (0.01)")
    parser.add_argument("--crossfade-ms", type=float, nargs="+", metavar="MS",
                        help="glue: cross-fade lengths to draw from (8 10 12)")
    parser.add_argument("--silence-limits", type=float, nargs="+", metavar="S",
                        help="glue: longer silences are shortened (0.6 0.7 0.8 0.9)")
    parser.add_argument("--same-speaker", action="store_true", default=None,
                        dest="concat_same_speaker",
                        help="concat: join utterances of one speaker only")
    parser.add_argument("--drop-single", action="store_false", default=None,
                        dest="keep_single",
                        help="drop utterances left without a group")
    parser.add_argument("--seed", type=int, help="seed of every random choice (0)")
    parser.add_argument("--workers", type=int, help="parallel jobs (default: CPU cores)")
    parser.add_argument("--text-column", default="text", help="TSV text column")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.set_defaults(run=_run_glue)


def _run_glue(args) -> int:
    from punctum.audio.glue import GlueConfig, glue_corpus
    from punctum.audio.manifest import MANIFEST, read_records

    given = {name: getattr(args, name) for name in
             ("mode", "min_duration", "min_rms", "crossfade_ms", "silence_limits",
              "concat_same_speaker", "keep_single", "seed", "workers")
             if getattr(args, name) is not None}
    if args.group_size:
        given["min_group"], given["max_group"] = args.group_size
    config = GlueConfig(**given)
    _check_outputs_are_not_inputs([Path(args.out) / MANIFEST, args.out], [args.input])
    records = read_records(args.input, args.text_column)
    report = glue_corpus(records, args.out, config, progress=not args.no_progress)
    dropped = (f"{report.n_too_short} shorter than {config.min_duration} s and "
               f"{report.n_too_quiet} quieter than RMS {config.min_rms} dropped, "
               if config.mode == "glue" else "")
    audio = f"{report.seconds_out / 3600:.2f} h of audio" if report.seconds_out else "text"
    print(f"{report.out_dir}: {report.n_recordings} recordings from {report.n_input} "
          f"utterances ({dropped}{report.n_single} left single); {audio}, "
          f"{report.wall_seconds:.0f} s")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="punctum", description="Restore punctuation, casing and sentence boundaries.")
    parser.add_argument("--version", action="version", version=f"punctum {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log progress details")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    _add_restore(subparsers)
    _add_batch(subparsers)
    _add_eval(subparsers)
    _add_train(subparsers)
    _add_selftrain(subparsers)
    _add_export(subparsers)
    _add_calibrate(subparsers)
    _add_ensemble(subparsers)
    _add_serve(subparsers)
    _add_transcribe(subparsers)
    _add_synth(subparsers)
    _add_glue(subparsers)
    _add_timings(subparsers)
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
    except NotUtf8Error as error:
        print(f"punctum {args.command}: error: {_error_text(error, args)}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:  # `punctum restore big.txt | head`: the reader has all it wants
        _silence_stdout()
        return EXIT_BROKEN_PIPE
    except (FileNotFoundError, ValueError, TypeError, ImportError, OSError) as error:
        print(f"punctum {args.command}: error: {_error_text(error, args)}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        _ignore_interrupts()  # (another Ctrl-C while exiting: no traceback from atexit)
        print(f"punctum {args.command}: interrupted", file=sys.stderr)
        return 130


def _ignore_interrupts() -> None:
    """Ignore SIGINT from here on (the process is exiting), where this thread may."""
    import signal
    import threading

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)


def _error_text(error: Exception, args) -> str:
    """An error as its one line says it: undecodable input with the --errors hint (for
    commands that have the option), other errors with the library's field names as flags."""
    if isinstance(error, NotUtf8Error):
        hint = "; --errors replace substitutes the bad bytes" if hasattr(args, "errors") else ""
        return printable(str(error)) + hint
    return printable(_as_flags(_os_message(error), args.command))


def _os_message(error: Exception) -> str:
    """An error's message; an operating-system error's without Python's "[Errno 17]"
    ("a.txt: Permission denied")."""
    if not isinstance(error, OSError) or not error.errno or not error.strerror:
        return str(error)
    return f"{error.filename}: {error.strerror}" if error.filename else error.strerror


# option fields that the library names in its errors, and the flags that set them
_FLAGS = {"ResegmentOptions.max_chars_per_line": "--max-chars",
          "ResegmentOptions.max_lines": "--max-lines",
          "ResegmentOptions.max_duration": "--max-duration",
          "BatchOptions.jobs": "--jobs", "BatchOptions.threads": "--threads",
          "RayOptions.actors": "--actors", "RayOptions.address": "--address",
          "ParquetOptions.batch_size": "--batch-size", "ParquetOptions.threads": "--threads",
          "ParquetOptions.column": "--column", "ParquetOptions.output_column": "--output-column",
          "FileOptions.text_key": "--text-key", "FileOptions.output_key": "--output-key",
          "FileOptions.stream_lookahead": "--lookahead",
          "SynthConfig.n_utterances": "-n", "GlueConfig.min_group": "--group-size MIN",
          "GlueConfig.max_group": "--group-size MAX"}
# fields set by one command's flags only
_COMMAND_FLAGS = {"export": {"WindowConfig.size": "--window SIZE",
                             "WindowConfig.left": "--window LEFT",
                             "WindowConfig.right": "--window RIGHT"},
                  "timings": {"SynthConfig.rate_range": "--rate-range",
                              "SynthConfig.min_words": "--min-words",
                              "SynthConfig.max_words": "--max-words",
                              "SynthConfig.max_sentences": "--max-sentences",
                              "SynthConfig.seed": "--seed", "TimedConfig.jobs": "--jobs",
                              "TimedConfig.max_documents": "--max-documents"}}
# unqualified field names, replaced only where they start a message
_LEADING_FLAGS = {"threads": "--threads", "min_agreement": "--min-agreement",
                  "bootstrap_samples": "--samples", "seed": "--seed", "post_bias:": "--bias:"}


def _as_flags(message: str, command: str = "") -> str:
    """An error message with the option fields it names written as the flags of `command`
    that set them ("ResegmentOptions.max_chars_per_line must be ..." -> "--max-chars must
    be ...")."""
    for field_name, flag in {**_FLAGS, **_COMMAND_FLAGS.get(command, {})}.items():
        message = message.replace(field_name, flag)
    first, _, rest = message.partition(" ")
    return f"{_LEADING_FLAGS[first]} {rest}" if first in _LEADING_FLAGS and rest else message


def _silence_stdout() -> None:
    """Point stdout at /dev/null, so that flushing it at exit raises no second error."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())


if __name__ == "__main__":
    raise SystemExit(main())
