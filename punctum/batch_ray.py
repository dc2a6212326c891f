"""Restore many files, or a text column of Parquet files, on a Ray cluster (the `ray` extra).

    punctum batch --input-dir transcripts/ --output-dir restored/ --actors 4
    punctum batch --parquet corpus/ --output-dir restored/ --column text

Files: the tasks of `batch.plan_batch` go to Ray actors (`batch.FileWorker`) that each load the
model once and write every output atomically, exactly as `punctum restore --input-dir` does on
one machine; the result is the same `batch.BatchReport`. Parquet: `ray.data.read_parquet` ->
`map_batches` with `ColumnRestorer` actors, which restore one column with
`Punctuator.restore_batch` -> `write_parquet`. Without an address a local Ray instance is
started for the job. On a cluster, the model folder and the input and output paths must be
reachable from every node under the same names (shared storage, or s3:// for Parquet).
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from punctum.batch import (
    BatchOptions,
    BatchPlan,
    BatchReport,
    FileResult,
    FileTask,
    FileWorker,
    cpu_count,
    one_line,
    prepare_run,
    progress_bar,
    resolve_model,
)
from punctum.runtime import RestoreOptions


@dataclass(frozen=True)
class RayOptions:
    """Where and how wide a Ray job runs.

    Args:
        address: a Ray cluster ("auto", "ray://head:10001"), or None to start a local
            instance with this machine's cores.
        actors: model-holding actors (each needs one CPU; 0: one per CPU of the cluster).
    """

    address: str | None = None
    actors: int = 0

    def __post_init__(self) -> None:
        if isinstance(self.actors, bool) or not isinstance(self.actors, int) or \
                not 0 <= self.actors <= 10_000:
            raise ValueError(f"RayOptions.actors must be an integer in [0, 10000], "
                             f"got {self.actors!r}")
        if self.address == "":
            raise ValueError("RayOptions.address must be None or a Ray address, got ''")


@dataclass(frozen=True)
class ParquetOptions:
    """A Parquet job: one text column restored into another, written as Parquet files.

    Args:
        input: a Parquet file or folder (local or a pyarrow filesystem URI such as s3://).
        output_dir: the folder the restored Parquet files are written to.
        column: the string column to restore.
        output_column: the column written (the same name replaces `column`).
        batch_size: rows per `restore_batch` call.
        restore: marks and case options.
        model: bundled model name, model folder or hub id (None: the default model).
        threads: ONNX Runtime threads per actor (0: the cluster's CPUs shared among actors).
        post_bias: the model's decision biases: None its own, {} none, or mark -> offset.
    """

    input: str
    output_dir: str
    column: str = "text"
    output_column: str = "restored"
    batch_size: int = 256
    restore: RestoreOptions = field(default_factory=RestoreOptions)
    model: str | None = None
    threads: int = 0
    post_bias: Mapping[str, float] | None = None

    def __post_init__(self) -> None:
        if not 1 <= self.batch_size <= 100_000:
            raise ValueError(f"ParquetOptions.batch_size must be in [1, 100000], "
                             f"got {self.batch_size}")
        if not 0 <= self.threads <= 256:
            raise ValueError(f"ParquetOptions.threads must be in [0, 256], got {self.threads}")
        if not self.column or not self.output_column:
            raise ValueError("ParquetOptions.column and ParquetOptions.output_column must "
                             "not be empty")


_LINE_BREAK = re.compile(r"(\r\n|\r|\n)")  # a cell's line breaks, kept as written


@dataclass(frozen=True)
class ParquetReport:
    """The outcome of a Parquet job."""

    output_dir: str
    output_column: str


def import_ray():
    """The ray module, or ImportError naming the extra to install."""
    try:
        import ray
        import ray.data  # noqa: F401  (the Parquet mode needs ray[data])
    except ImportError as error:
        raise ImportError(f"punctum batch needs the ray extra: pip install 'punctum[ray]' "
                          f"({error})") from None
    return ray


@contextlib.contextmanager
def ray_session(address: str | None):
    """Connect to `address` or start a local Ray instance; one started here is shut down
    after. A Ray already initialised in this process (a test, a notebook) is used as is."""
    ray = import_ray()
    if ray.is_initialized():
        yield ray
        return
    if address:
        ray.init(address=address, log_to_driver=False)
    else:
        ray.init(num_cpus=cpu_count(), include_dashboard=False, log_to_driver=False)
    try:
        yield ray
    finally:
        ray.shutdown()


# ----------------------------------------------------------------------------- files

def run_files(options: BatchOptions, ray_options: RayOptions,
              plan: BatchPlan | None = None) -> BatchReport:
    """Restore the files of a plan (default: `plan_batch(options)`) on Ray actors.

    `options.jobs` is not used: `ray_options.actors` says how many actors run.
    """
    plan, model = prepare_run(options, plan)
    results = list(plan.failed)
    if not plan.tasks:
        return BatchReport(tuple(results), plan.skipped)
    with ray_session(ray_options.address) as ray:
        n_actors, threads = _actor_plan(ray, ray_options.actors, options.threads,
                                        len(plan.tasks))
        worker = ray.remote(num_cpus=1)(FileWorker)
        actors = [worker.remote(model, threads, options.file, options.post_bias)
                  for _ in range(n_actors)]
        try:
            with progress_bar(len(plan.tasks), options.progress) as bar:
                results += _dispatch(ray, actors, list(plan.tasks), bar)
        finally:
            for actor in actors:  # their CPUs are free for the cluster's next job at once
                ray.kill(actor)
    return BatchReport(tuple(results), plan.skipped)


def _actor_plan(ray, actors: int, threads: int, n_tasks: int | None = None,
                reserve: int = 0) -> tuple[int, int]:
    """(actors, ONNX threads per actor) for the cluster's CPUs and at most `n_tasks` tasks;
    by default one actor per CPU, less the `reserve` CPUs left to other tasks."""
    n_cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
    if actors > n_cpus:
        raise ValueError(f"--actors {actors} needs {actors} CPUs; the Ray cluster has {n_cpus}")
    free = max(1, n_cpus - reserve)
    n_actors = max(1, min(actors or free, n_tasks or n_cpus))
    return n_actors, threads or max(1, free // n_actors)


def _actor_cpus(ray, n_actors: int) -> float:
    """CPUs each Parquet actor reserves: together at most all but one of the cluster's, so
    that Ray Data's read and write tasks always find a CPU (they would wait forever)."""
    n_cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
    return min(1.0, (n_cpus - 1) / n_actors)


def _dispatch(ray, actors: list, tasks: list[FileTask], bar) -> list[FileResult]:
    """Each actor gets a new file as soon as one of its files is done (two queued per actor,
    so that it never waits for the driver). An actor that dies (node lost, out of memory) is
    not used again; its file is retried once on another actor, then reported."""
    pending = tasks[::-1]
    in_flight: dict = {}
    dead: set[int] = set()
    retried: set[str] = set()

    def submit(index: int) -> None:
        live = [i for i in [index] + list(range(len(actors))) if i not in dead]
        if pending and live:
            task = pending.pop()
            in_flight[actors[live[0]].restore.remote(task)] = (live[0], task)

    for index in list(range(len(actors))) * 2:
        submit(index)
    results = []
    while in_flight:
        [ref], _ = ray.wait(list(in_flight), num_returns=1)
        index, task = in_flight.pop(ref)
        result, died = _fetch(ray, ref, task)
        if died:
            dead.add(index)
            if task.source not in retried and len(dead) < len(actors):
                retried.add(task.source)
                pending.append(task)
                submit(index)
                continue
        results.append(result)
        bar.update()
        submit(index)
    for task in pending[::-1]:  # every actor died
        results.append(FileResult(task.source, task.target, "no Ray actor left to restore it"))
        bar.update()
    return results


def _fetch(ray, ref, task: FileTask) -> tuple[FileResult, bool]:
    """(the file's result, whether its actor died)."""
    try:
        return ray.get(ref), False
    except Exception as error:  # the actor died (node lost, out of memory)
        message = f"Ray actor failed: {one_line(error)[:300]}"
        return FileResult(task.source, task.target, message), True


# ----------------------------------------------------------------------------- Parquet

class ColumnRestorer:
    """A `map_batches` actor: restores one string column of each batch (a pyarrow.Table).

    Null values stay null; each text is restored line by line. The output column is appended,
    or replaces the text column when it has its name (`run_parquet` refuses other clashes).
    """

    def __init__(self, model: str, threads: int, options: ParquetOptions) -> None:
        from punctum.runtime import Punctuator

        self.punctuator = Punctuator.load(model, threads=threads, post_bias=options.post_bias)
        self.options = options

    def __call__(self, batch):
        """(rows,) pyarrow.Table -> the same table with `output_column` restored."""
        import pyarrow

        texts = batch.column(self.options.column).to_pylist()
        values = pyarrow.array(self._restore(texts), type=pyarrow.string())
        name = self.options.output_column
        if name in batch.column_names:
            return batch.set_column(batch.column_names.index(name), name, values)
        return batch.append_column(name, values)


    def _restore(self, texts: list[str | None]) -> list[str | None]:
        """Each text restored line by line (its newlines kept, as `punctum restore` keeps
        a file's lines, speaker labels and sound descriptions kept out of the model as
        there: `formats.restore_lines`), all lines of the batch in one call; None stays
        None."""
        from punctum import formats

        pieces = [[] if t is None else _LINE_BREAK.split(t) for t in texts]  # line, break, ...
        flat = [line for group in pieces for line in group[::2]]
        restored = iter(formats.restore_lines(self.punctuator, flat, self.options.restore))
        out = []
        for text, group in zip(texts, pieces):
            out.append(None if text is None else "".join(
                next(restored) if k % 2 == 0 else piece for k, piece in enumerate(group)))
        return out


def run_parquet(options: ParquetOptions, ray_options: RayOptions,
                progress: bool = True) -> ParquetReport:
    """Restore `options.column` of the Parquet input into Parquet files under `output_dir`.

    `progress` shows Ray Data's progress bars on stderr.

    Raises:
        FileNotFoundError: a local input path that does not exist.
        ValueError: no such column, or a column that does not hold strings.
    """
    if "://" not in options.input and not os.path.exists(options.input):
        raise FileNotFoundError(f"{options.input}: no such file or folder")
    _check_parquet_output(options.output_dir)
    if os.path.isfile(options.input):  # one local file: read its footer first
        schema, rows = _local_parquet_rows(options.input)
        if not rows:  # no rows: Ray would write nothing at all
            _write_empty(options, schema)
            return ParquetReport(options.output_dir, options.output_column)
    model = resolve_model(options.model, options.post_bias)
    from punctum.runtime import Punctuator

    Punctuator.load(model, threads=1)  # a broken model fails here, not in every actor
    with ray_session(ray_options.address) as ray:
        ray.data.DataContext.get_current().enable_progress_bars = progress
        try:
            dataset = ray.data.read_parquet(options.input)
            schema = dataset.schema()
        except Exception as error:  # noqa: BLE001 (pyarrow's and Ray's errors name no file)
            raise _unreadable(options.input, error) from None
        _check_column(schema, options.column, options.input, options.output_column)
        n_actors, threads = _actor_plan(ray, ray_options.actors, options.threads, reserve=1)
        restored = dataset.map_batches(
            ColumnRestorer, fn_constructor_args=(model, threads, options),
            batch_size=options.batch_size, batch_format="pyarrow",
            compute=ray.data.ActorPoolStrategy(size=n_actors),
            num_cpus=_actor_cpus(ray, n_actors))
        restored.write_parquet(options.output_dir)
    out = options.output_dir
    if "://" not in out and not (os.path.isdir(out) and os.listdir(out)):  # no rows at all
        _write_empty(options, getattr(schema, "base_schema", schema))
    return ParquetReport(options.output_dir, options.output_column)


def _unreadable(path: str, error: Exception) -> ValueError:
    """The error of an input Ray cannot read, naming the first local *.parquet file (of
    those Ray reads: no part of its path under the folder starts with "." or "_") whose
    footer cannot be read, else the input."""
    import pyarrow.parquet as pq

    reason = " ".join(str(error).split())[:200]
    if os.path.isdir(path):
        for folder, dirs, names in os.walk(path, followlinks=True):
            dirs[:] = sorted(d for d in dirs if not d.startswith((".", "_")))
            for name in sorted(n for n in names if n.lower().endswith(".parquet")
                               and not n.startswith((".", "_"))):
                try:
                    _ = pq.ParquetFile(os.path.join(folder, name)).metadata
                except Exception:  # noqa: BLE001
                    return ValueError(f"{os.path.join(folder, name)}: not a readable Parquet "
                                      f"file ({reason})")
    return ValueError(f"{path}: cannot be read as Parquet ({reason})")


def _local_parquet_rows(path: str):
    """(the schema, the number of rows) of one local Parquet file, from its footer;
    ValueError naming it when it is not Parquet (pyarrow's error names no file)."""
    import pyarrow.parquet as pq

    try:
        metadata = pq.ParquetFile(path).metadata
    except Exception as error:  # noqa: BLE001 (pyarrow's errors: ArrowInvalid, OSError)
        raise ValueError(f"{path}: not a readable Parquet file "
                         f"({' '.join(str(error).split())[:200]})") from None
    return metadata.schema.to_arrow_schema(), metadata.num_rows


def _write_empty(options: ParquetOptions, schema) -> None:
    """An input without rows gives an output file without rows, with the output column."""
    import pyarrow
    import pyarrow.parquet as pq

    if schema is None:
        raise ValueError(f"{options.input}: no Parquet files to read")
    _check_column(schema, options.column, options.input, options.output_column)
    if options.output_column not in schema.names:
        schema = schema.append(pyarrow.field(options.output_column, pyarrow.string()))
    os.makedirs(options.output_dir, exist_ok=True)
    pq.write_table(schema.empty_table(), os.path.join(options.output_dir, "part-0.parquet"))


def _check_parquet_output(output_dir: str) -> None:
    """ValueError for a local output that is a file or a folder with files in it."""
    if "://" in output_dir:
        return
    if os.path.exists(output_dir) and not os.path.isdir(output_dir):
        raise ValueError(f"{output_dir}: is a file; --output-dir needs a folder")
    if os.path.isdir(output_dir) and os.listdir(output_dir):
        raise ValueError(f"{output_dir}: not empty; Parquet output would add a second "
                         f"set of files (remove it or choose another folder)")


def _check_column(schema, column: str, name: str, output_column: str) -> None:
    """ValueError unless `column` holds strings and `output_column` is new or `column`."""
    import pyarrow

    if schema is None:
        raise ValueError(f"{name}: no Parquet rows to read")
    names = list(schema.names)
    if column not in names:
        raise ValueError(f"{name}: no column {column!r} (columns: {', '.join(names)})")
    if output_column in names and output_column != column:
        raise ValueError(f"{name}: already has a column {output_column!r}; choose another "
                         f"--output-column (or --output-column {column} to replace the text)")
    kind = schema.types[names.index(column)]
    if not (pyarrow.types.is_string(kind) or pyarrow.types.is_large_string(kind)):
        raise ValueError(f"{name}: column {column!r} holds {kind}, expected strings")
