"""Inference speed of other punctuation tools' architectures under ONNX Runtime on this CPU.

    python benchmarks/bench_speed.py --threads 2 --repeats 3
    python benchmarks/bench_speed.py --quick --threads 1     # tiny models: checks the script

Every model has random weights (speed does not depend on them) and runs through ONNX Runtime's
CPU provider, model forward only, on synthetic ids (no tokenizer is timed):

| short name | architecture (the tool that runs it) | precisions |
|---|---|---|
| xlmr-large | XLM-R large token classifier (deepmultilingualpunctuation) | fp32 |
| xlmr-base | XLM-R base (kredor/punctuate-all) | fp32, int8 |
| bert-base | BERT-base uncased (the papers' cascade tagger) | fp32, int8 |
| punctuators-6x512 | 6-layer d512 encoder, 8 heads, ffn 2048, vocab 32000 (punctuators) | int8 |
| cnn-bilstm | punctum's CnnBiLstm, default config, vocab 5000 (on-device paper) | int8 |
| minilm-l6 | MiniLM-L6 (uncased BERT, 6 layers, hidden 384, 12 heads, ffn 1536) | int8 |

The transformer models are punctum's TransformerTagger (punctuation and casing heads), with
`encoder_config` from a transformers XLMRobertaConfig / BertConfig `to_dict()` (the
xlm-roberta-large/base and bert-base-uncased config.json values), or with punctum's scratch
encoder for punctuators-6x512. Each model is exported like `punctum export` does it
(punctum.train.export: TorchScript exporter, opset 17, inputs `ids` (B, T) int64 and
`lengths` (B,) int64 with dynamic batch and time axes) into a temporary folder, and int8 is
onnxruntime's dynamic quantization (QInt8 weights, float activations). Models are built, timed
and freed one at a time.

Workloads. bulk: --words words (default 12,297, IWSLT2011 test2011 after merging
contractions) at an assumed 1.2 subwords per word for every model (a typical rate for English
under BPE and WordPiece; punctum's 5000-piece BPE gives 1.21 on test2011), cut into
back-to-back windows of 120 subwords (no overlap) and run in batches of 8; words/s is words /
the median time of --repeats passes, after one warm-up call per batch shape. paragraph: one
42-word paragraph (the on-device paper's Table 5 example) as one sequence of 51 subwords at
batch 1; milliseconds are the median of 20 calls after one warm-up call.

XLM-R large needs several GB of RAM and a few minutes to build and export, and more than
2 GB on disk (the exporter writes its weights as external data files next to model.onnx);
progress goes to stderr. Prints a markdown table, or JSON with --json.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import gc
import json
import math
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from common import hardware

IWSLT_TEST_WORDS = 12_297  # IWSLT2011 test2011 after merging contractions
SUBWORDS_PER_WORD = 1.2  # assumed for every model's BPE / WordPiece vocabulary
WINDOW_SUBWORDS = 120
BATCH_SIZE = 8
PARAGRAPH_WORDS = 42  # the on-device paper's Table 5 example
PARAGRAPH_RUNS = 20
DEFAULT_REPEATS = 3
QUICK_WORDS = 200
QUICK_VOCAB = 1000
FIRST_ID = 5  # synthetic ids stay above the special tokens (XLM-R: <s> 0, <pad> 1, </s> 2, <unk> 3)
SEED = 0
MB = 1_000_000
# xlm-roberta-large/base config.json values that differ from XLMRobertaConfig's BERT defaults.
XLMR_FIELDS = dict(
    max_position_embeddings=514,
    type_vocab_size=1,
    layer_norm_eps=1e-5,
    pad_token_id=1,
    bos_token_id=0,
    eos_token_id=2,
)


@dataclass(frozen=True)
class ModelSpec:
    """One architecture: family "xlm-roberta" or "bert" (transformers encoder), "scratch"
    (punctum's encoder) or "cnn_bilstm" (sizes 0 = CnnBiLstmConfig defaults)."""

    name: str
    description: str
    family: str
    precisions: tuple[str, ...]
    vocab_size: int
    n_layers: int = 0
    d_model: int = 0
    n_heads: int = 0
    d_ff: int = 0
    pad_id: int = 0


SPECS = {
    spec.name: spec
    for spec in (
        ModelSpec(
            name="xlmr-large",
            description="XLM-R large (deepmultilingualpunctuation)",
            family="xlm-roberta",
            precisions=("fp32",),
            vocab_size=250_002,
            n_layers=24,
            d_model=1024,
            n_heads=16,
            d_ff=4096,
            pad_id=1,
        ),
        ModelSpec(
            name="xlmr-base",
            description="XLM-R base (kredor/punctuate-all)",
            family="xlm-roberta",
            precisions=("fp32", "int8"),
            vocab_size=250_002,
            n_layers=12,
            d_model=768,
            n_heads=12,
            d_ff=3072,
            pad_id=1,
        ),
        ModelSpec(
            name="bert-base",
            description="BERT-base (cascade tagger)",
            family="bert",
            precisions=("fp32", "int8"),
            vocab_size=30_522,
            n_layers=12,
            d_model=768,
            n_heads=12,
            d_ff=3072,
        ),
        ModelSpec(
            name="punctuators-6x512",
            description="6-layer d512 encoder (punctuators)",
            family="scratch",
            precisions=("int8",),
            vocab_size=32_000,
            n_layers=6,
            d_model=512,
            n_heads=8,
            d_ff=2048,
        ),
        ModelSpec(
            name="cnn-bilstm",
            description="CNN-BiLSTM (on-device paper)",
            family="cnn_bilstm",
            precisions=("int8",),
            vocab_size=5000,
        ),
        ModelSpec(
            name="minilm-l6",
            description="MiniLM-L6 (uncased BERT)",
            family="bert",
            precisions=("int8",),
            vocab_size=30_522,
            n_layers=6,
            d_model=384,
            n_heads=12,
            d_ff=1536,
        ),
    )
}


@dataclass(frozen=True)
class Row:
    """Measurements of one model at one precision."""

    model: str
    description: str
    precision: str
    params_m: float
    size_mb: float
    bulk_words_per_s: float
    paragraph_ms: float


def tiny(spec: ModelSpec) -> ModelSpec:
    """The --quick version of spec: 2 layers, hidden 64, vocabulary QUICK_VOCAB."""
    return dataclasses.replace(
        spec, vocab_size=QUICK_VOCAB, n_layers=2, d_model=64, n_heads=4, d_ff=256
    )


def progress(message: str) -> None:
    """One timestamped progress line on stderr (stdout carries only the result)."""
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def label_sizes() -> tuple[int, int]:
    """(n_punct, n_case) of the English inventory, as `punctum train` sizes the heads."""
    from punctum.text import CASES, get_inventory

    return len(get_inventory("en").post_labels), len(CASES)


def encoder_config(spec: ModelSpec) -> dict:
    """transformers config dict of a "xlm-roberta" or "bert" spec (random-weight encoder)."""
    from transformers import BertConfig, XLMRobertaConfig

    sizes = dict(
        vocab_size=spec.vocab_size,
        hidden_size=spec.d_model,
        num_hidden_layers=spec.n_layers,
        num_attention_heads=spec.n_heads,
        intermediate_size=spec.d_ff,
    )
    if spec.family == "bert":
        return BertConfig(**sizes).to_dict()
    return XLMRobertaConfig(**sizes, **XLMR_FIELDS).to_dict()


def cnn_bilstm_config(spec: ModelSpec, n_punct: int, n_case: int):
    """CnnBiLstmConfig: the paper's defaults, or every width = d_model when d_model is set."""
    from punctum.models import CnnBiLstmConfig

    if spec.d_model == 0:
        return CnnBiLstmConfig(spec.vocab_size, n_punct, n_case, pad_id=spec.pad_id)
    width = spec.d_model
    return CnnBiLstmConfig(
        spec.vocab_size,
        n_punct,
        n_case,
        pad_id=spec.pad_id,
        embed_dim=width,
        conv_channels=width,
        n_conv_layers=spec.n_layers,
        bilstm_hidden=width,
        n_bilstm_layers=spec.n_layers,
        lstm_hidden=width,
    )


def build_model(spec: ModelSpec):
    """A randomly initialised punctum tagger (torch nn.Module in eval mode) for spec."""
    import torch

    from punctum.models import CnnBiLstm, TransformerTagger, TransformerTaggerConfig

    torch.manual_seed(SEED)
    n_punct, n_case = label_sizes()
    if spec.family == "cnn_bilstm":
        return CnnBiLstm(cnn_bilstm_config(spec, n_punct, n_case)).eval()
    encoder = None if spec.family == "scratch" else encoder_config(spec)
    config = TransformerTaggerConfig(
        spec.vocab_size,
        n_punct,
        n_case,
        pad_id=spec.pad_id,
        n_layers=spec.n_layers,
        d_model=spec.d_model,
        n_heads=spec.n_heads,
        d_ff=spec.d_ff,
        encoder_config=encoder,
    )
    return TransformerTagger(config).eval()


def folder_mb(folder: Path) -> float:
    """Size of every file in folder (model.onnx plus any external weight files), in MB."""
    return sum(path.stat().st_size for path in folder.iterdir() if path.is_file()) / MB


def export_models(spec: ModelSpec, workdir: Path) -> tuple[dict[str, Path], int]:
    """Export spec as ONNX at each of its precisions under workdir.

    Returns ({precision: model.onnx path}, parameter count). Each precision has its own
    folder so that its size on disk includes external data files.
    """
    from punctum.train.export import export_onnx, quantize_int8

    progress(f"{spec.name}: building the torch model")
    model = build_model(spec)
    n_params = sum(p.numel() for p in model.parameters())
    progress(f"{spec.name}: {n_params / 1e6:.1f}M parameters; exporting fp32 ONNX")
    fp32 = workdir / "fp32" / "model.onnx"
    fp32.parent.mkdir()
    export_onnx(model, fp32)
    del model
    gc.collect()
    paths = {"fp32": fp32}
    if "int8" in spec.precisions:
        progress(f"{spec.name}: quantizing to int8")
        paths["int8"] = workdir / "int8" / "model.onnx"
        paths["int8"].parent.mkdir()
        quantize_int8(fp32, paths["int8"])
    return {precision: paths[precision] for precision in spec.precisions}, n_params


def window_lengths(n_words: int) -> list[int]:
    """Back-to-back window lengths (subwords) covering n_words at SUBWORDS_PER_WORD."""
    n_subwords = math.ceil(n_words * SUBWORDS_PER_WORD)
    n_full, rest = divmod(n_subwords, WINDOW_SUBWORDS)
    return [WINDOW_SUBWORDS] * n_full + ([rest] if rest else [])


def make_batch(
    lengths: Sequence[int], vocab_size: int, pad_id: int, rng: np.random.Generator
) -> dict[str, np.ndarray]:
    """ONNX feed of random ids: ids (B, T) int64 right-padded with pad_id, lengths (B,) int64."""
    ids = np.full((len(lengths), max(lengths)), pad_id, dtype=np.int64)
    for row, length in enumerate(lengths):
        ids[row, :length] = rng.integers(FIRST_ID, vocab_size, size=length)
    return {"ids": ids, "lengths": np.asarray(lengths, dtype=np.int64)}


def make_workloads(n_words: int, spec: ModelSpec) -> tuple[list[dict], dict]:
    """The bulk batches (BATCH_SIZE windows each) and the one-sequence paragraph for spec."""
    rng = np.random.default_rng(SEED)
    windows = window_lengths(n_words)
    bulk = [
        make_batch(windows[i : i + BATCH_SIZE], spec.vocab_size, spec.pad_id, rng)
        for i in range(0, len(windows), BATCH_SIZE)
    ]
    paragraph_subwords = math.ceil(PARAGRAPH_WORDS * SUBWORDS_PER_WORD)
    paragraph = make_batch([paragraph_subwords], spec.vocab_size, spec.pad_id, rng)
    return bulk, paragraph


def open_session(path: Path, threads: int):
    """An ONNX Runtime CPU session with intra-op threads = threads, as punctum.runtime opens."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    return onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


def run_pass(session, batches: Sequence[dict]) -> float:
    """Run every batch once; return the wall time in seconds."""
    start = time.perf_counter()
    for feed in batches:
        session.run(None, feed)
    return time.perf_counter() - start


def time_bulk(session, batches: list[dict], repeats: int) -> float:
    """Median seconds of `repeats` passes over batches, after one warm-up call per shape."""
    shapes = {feed["ids"].shape: feed for feed in batches}
    run_pass(session, list(shapes.values()))
    return statistics.median(run_pass(session, batches) for _ in range(repeats))


def time_paragraph(session, feed: dict) -> float:
    """Median milliseconds of PARAGRAPH_RUNS calls on feed, after one warm-up call."""
    run_pass(session, [feed])
    return 1000 * statistics.median(run_pass(session, [feed]) for _ in range(PARAGRAPH_RUNS))


def measure(
    spec: ModelSpec,
    precision: str,
    path: Path,
    n_params: int,
    n_words: int,
    options: argparse.Namespace,
) -> Row:
    """Time one exported model on both workloads and return its table row."""
    progress(f"{spec.name} {precision}: {folder_mb(path.parent):.1f} MB; timing")
    session = open_session(path, options.threads)
    bulk, paragraph = make_workloads(n_words, spec)
    bulk_s = time_bulk(session, bulk, options.repeats)
    paragraph_ms = time_paragraph(session, paragraph)
    progress(
        f"{spec.name} {precision}: {n_words / bulk_s:,.0f} words/s, paragraph {paragraph_ms:.1f} ms"
    )
    return Row(
        spec.name,
        spec.description,
        precision,
        n_params / 1e6,
        folder_mb(path.parent),
        n_words / bulk_s,
        paragraph_ms,
    )


def benchmark_model(spec: ModelSpec, n_words: int, options: argparse.Namespace) -> list[Row]:
    """Build, export and time spec at each of its precisions in a temporary folder."""
    with tempfile.TemporaryDirectory(prefix=f"bench_speed_{spec.name}_") as tmp:
        paths, n_params = export_models(spec, Path(tmp))
        rows = [
            measure(spec, precision, path, n_params, n_words, options)
            for precision, path in paths.items()
        ]
    gc.collect()
    return rows


def environment(options: argparse.Namespace, n_words: int) -> dict[str, object]:
    """Hardware, settings, library versions and the date for the report."""
    import onnxruntime
    import torch

    return {
        "hardware": hardware(),
        "threads": options.threads,
        "quick": options.quick,
        "words": n_words,
        "windows": len(window_lengths(n_words)),
        "subwords_per_word": SUBWORDS_PER_WORD,
        "window_subwords": WINDOW_SUBWORDS,
        "batch_size": BATCH_SIZE,
        "paragraph_subwords": math.ceil(PARAGRAPH_WORDS * SUBWORDS_PER_WORD),
        "repeats": options.repeats,
        "python": platform.python_version(),
        "torch": torch.__version__,
        "onnxruntime": onnxruntime.__version__,
        "date": datetime.date.today().isoformat(),
    }


def format_markdown(env: dict[str, object], rows: list[Row]) -> str:
    """Settings line, then a markdown table with one row per model and precision."""
    quick = " QUICK (tiny models, for checking the script only)." if env["quick"] else ""
    lines = [
        f"{env['hardware']}; ONNX Runtime {env['onnxruntime']} CPU, threads: {env['threads']}; "
        f"torch {env['torch']}; {env['date']}.{quick}",
        f"bulk: {env['words']:,} words = {env['windows']} windows of <= {env['window_subwords']} "
        f"subwords ({env['subwords_per_word']} per word), batch {env['batch_size']}, median of "
        f"{env['repeats']}; paragraph: {PARAGRAPH_WORDS} words = {env['paragraph_subwords']} "
        f"subwords, batch 1, median of {PARAGRAPH_RUNS}.",
        "",
        "| model | precision | params M | MB | bulk words/s | paragraph ms |",
        "|---|---|---|---|---|---|",
    ]
    for row in rows:
        lines.append(
            f"| {row.model}: {row.description} | {row.precision} | {row.params_m:.1f} "
            f"| {row.size_mb:.1f} | {row.bulk_words_per_s:,.0f} "
            f"| {row.paragraph_ms:.1f} |"
        )
    return "\n".join(lines)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """Command-line options; errors exit with a usage message."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--models",
        default=",".join(SPECS),
        help=f"comma-separated short names from {', '.join(SPECS)}",
    )
    parser.add_argument("--threads", type=int, default=2, help="ONNX Runtime intra-op threads")
    parser.add_argument(
        "--repeats",
        type=int,
        default=DEFAULT_REPEATS,
        help="timed bulk passes (the median is reported)",
    )
    parser.add_argument(
        "--words",
        type=int,
        default=IWSLT_TEST_WORDS,
        help=f"bulk words (--quick uses {QUICK_WORDS})",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"tiny models (2 layers, hidden 64, vocab {QUICK_VOCAB}) on "
        f"{QUICK_WORDS} words, to check the script end to end",
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of markdown")
    args = parser.parse_args(argv)
    args.models = [name.strip() for name in args.models.split(",") if name.strip()]
    unknown = sorted(set(args.models) - set(SPECS))
    if unknown or not args.models:
        parser.error(f"--models: unknown or empty {unknown}; choose from {', '.join(SPECS)}")
    for name in ("threads", "repeats", "words"):
        if getattr(args, name) < 1:
            parser.error(f"--{name} must be >= 1, got {getattr(args, name)}")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Benchmark the chosen models one after another and print the table (or JSON)."""
    import torch

    args = parse_args(argv)
    torch.set_num_threads(args.threads)  # building and exporting stay within --threads too
    n_words = QUICK_WORDS if args.quick else args.words
    rows = []
    for name in args.models:
        spec = tiny(SPECS[name]) if args.quick else SPECS[name]
        rows.extend(benchmark_model(spec, n_words, args))
    env = environment(args, n_words)
    if args.json:
        print(json.dumps({**env, "rows": [dataclasses.asdict(row) for row in rows]}, indent=2))
    else:
        print(format_markdown(env, rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
