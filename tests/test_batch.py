"""Folder jobs: `punctum restore --input-dir` (resumable, atomic, failures listed) and
`punctum batch` on Ray (files and Parquet)."""

import dataclasses
import gzip
import json
import os
import random
import signal
import subprocess
import sys
import time

import pytest

from punctum import formats
from punctum.batch import TEMP_SUFFIX, list_inputs, output_name
from punctum.cli import main
from punctum.text import normalize

# Generated speech-like words (never copied from a corpus).
VOCAB = ["so", "we", "i", "you", "they", "the", "a", "and", "but", "what", "is", "was", "do",
         "think", "went", "home", "today", "new", "york", "river", "stone", "green", "light",
         "seven", "because", "later", "it's", "well", "yes", "no", "maybe", "walk", "house"]

SRT = ("1\n00:00:01,000 --> 00:00:02,500\nso what do you think\n\n"
       "2\n00:00:02,600 --> 00:00:04,000\ni think it's great we went home\n")
WHISPER = {"text": " we went to new york it was great",
           "segments": [{"id": 0, "start": 0.0, "end": 2.0,
                         "text": " we went to new york it was great"}]}


def _random_text(rng: random.Random, n_lines: int, words_per_line: int) -> str:
    lines = [" ".join(rng.choice(VOCAB) for _ in range(words_per_line)) for _ in range(n_lines)]
    return "\n".join(lines) + "\n"


def _write(path, content) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")


def _words(path) -> list[str]:
    """The words of a file (any format), normalised: only marks and case removed."""
    if str(path).endswith(".gz"):
        return normalize(gzip.open(path, "rt", encoding="utf-8").read())
    return normalize(" ".join(cue.text for cue in formats.read(path).cues))


def _outputs(folder) -> dict[str, str]:
    """Relative path -> content of every file under `folder` (hidden ones too)."""
    found = {}
    for root, _, files in os.walk(folder):
        for name in files:
            path = os.path.join(root, name)
            found[os.path.relpath(path, folder)] = open(path, encoding="utf-8").read()
    return found


def _restore_dir(capsys, source, target, *extra):
    code = main(["restore", "--input-dir", str(source), "--output-dir", str(target),
                 "--no-progress", *extra])
    return code, capsys.readouterr().err


@pytest.fixture
def tree(tmp_path):
    """An input folder with text, gzip, SRT and Whisper files, nested, plus files to skip."""
    rng = random.Random(1)
    root = tmp_path / "in"
    _write(root / "a.txt", _random_text(rng, 3, 12) + "\n" + _random_text(rng, 2, 8))
    _write(root / "talks" / "day1" / "b.srt", SRT)
    _write(root / "talks" / "c.json", json.dumps(WHISPER))
    with gzip.open(root / "d.txt.gz", "wt", encoding="utf-8") as handle:
        handle.write(_random_text(rng, 2, 10))
    for skipped in (".hidden.txt", ".cache/e.txt", "notes.txt~", "f.txt.tmp", "g.txt.swp"):
        _write(root / skipped, "should not be read\n")
    return root


def test_folder_job_mirrors_tree_and_keeps_words(tree, tmp_path, capsys):
    out = tmp_path / "out"
    code, err = _restore_dir(capsys, tree, out)
    assert code == 0, err
    assert sorted(_outputs(out)) == ["a.txt", "d.txt", "talks/c.json", "talks/day1/b.srt"]
    for name in ("a.txt", "talks/day1/b.srt", "talks/c.json"):
        assert _words(out / name) == _words(tree / name)
        assert (out / name).read_text() != (tree / name).read_text()  # marks or case added
    assert _words(out / "d.txt") == _words(tree / "d.txt.gz")
    old, new = formats.read(tree / "talks/day1/b.srt"), formats.read(out / "talks/day1/b.srt")
    assert [(c.start, c.end) for c in old.cues] == [(c.start, c.end) for c in new.cues]
    assert (out / "a.txt").read_text().count("\n") == (tree / "a.txt").read_text().count("\n")
    assert "restored 4 files" in err and "Traceback" not in err


def test_to_changes_extensions(tree, tmp_path, capsys):
    code, err = _restore_dir(capsys, tree, tmp_path / "out", "--to", "text")
    assert code == 0, err
    assert sorted(_outputs(tmp_path / "out")) == ["a.txt", "d.txt", "talks/c.txt",
                                                  "talks/day1/b.txt"]


def test_existing_outputs_are_skipped_and_overwrite_redoes_them(tree, tmp_path, capsys):
    out = tmp_path / "out"
    assert _restore_dir(capsys, tree, out)[0] == 0
    restored = (out / "a.txt").read_text()
    (out / "a.txt").write_text("kept\n")
    stale = out / "talks" / f".c.json.0123abcd{TEMP_SUFFIX}"
    stale.write_text("partial")
    code, err = _restore_dir(capsys, tree, out)
    assert code == 0 and "skipping 4 files whose output exists" in err
    assert (out / "a.txt").read_text() == "kept\n" and not stale.exists()
    code, err = _restore_dir(capsys, tree, out, "--overwrite")
    assert code == 0 and "skipping" not in err and "restored 4 files" in err
    assert (out / "a.txt").read_text() == restored


def test_bad_files_are_listed_and_the_others_written(tmp_path, capsys):
    rng = random.Random(2)
    root = tmp_path / "in"
    _write(root / "good1.txt", _random_text(rng, 2, 10))
    _write(root / "bad.srt", "1\n00:00:01 --> later\nhello there\n")
    _write(root / "sub" / "binary.txt", b"we see\n\xff\xfe a boat\n")
    _write(root / "sub" / "broken.json", '{"segments": [')
    _write(root / "zz_good2.txt", _random_text(rng, 2, 10))
    out = tmp_path / "out"
    code, err = _restore_dir(capsys, root, out)
    assert code == 1
    assert sorted(_outputs(out)) == ["good1.txt", "zz_good2.txt"]  # no partial, no temp file
    lines = err.strip().splitlines()
    summary = lines.index("3 of 5 files failed:")
    failures = lines[summary + 1:]
    assert len(failures) == 3 and "Traceback" not in err
    for name, message in (("bad.srt", "bad.srt:2"), ("binary.txt", "not valid UTF-8"),
                          ("broken.json", "not valid JSON")):
        assert any(name in line and message in line for line in failures), failures


def test_jobs_2_matches_jobs_1(tiny_artifact, tree, tmp_path, capsys):
    # One ONNX thread per worker in both runs: by default --jobs 1 gets both cores and
    # --jobs 2 one each, and ONNX Runtime's threaded kernels may then flip a near-tie
    # label of the tiny test model. This test is about splitting files across processes.
    model = ["--model", str(tiny_artifact), "--threads", "1"]
    assert _restore_dir(capsys, tree, tmp_path / "one", "--jobs", "1", *model)[0] == 0
    code, err = _restore_dir(capsys, tree, tmp_path / "two", "--jobs", "2", *model)
    assert code == 0, err
    assert _outputs(tmp_path / "two") == _outputs(tmp_path / "one")


def _count(folder) -> tuple[int, int]:
    """(finished outputs, temporary files) under a folder."""
    names = [name for _, _, files in os.walk(folder) for name in files]
    temps = sum(name.endswith(TEMP_SUFFIX) for name in names)
    return len(names) - temps, temps


def _start_and_kill(source, target) -> int:
    """Start a folder job in a subprocess and SIGKILL it while it writes an output."""
    command = [sys.executable, "-m", "punctum", "restore", "--input-dir", str(source),
               "--output-dir", str(target), "--jobs", "1", "--no-progress"]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and process.poll() is None:
        done, temps = _count(target)
        if done >= 2 and temps:
            break
        time.sleep(0.005)
    os.kill(process.pid, signal.SIGKILL)
    return process.wait()


def test_sigkill_leaves_no_partial_output_and_rerun_completes(tmp_path, capsys):
    rng = random.Random(3)
    source = tmp_path / "in"
    for k in range(16):
        _write(source / f"part{k // 6}" / f"talk{k:02d}.txt", _random_text(rng, 80, 20))
    assert _restore_dir(capsys, source, tmp_path / "clean")[0] == 0
    clean = _outputs(tmp_path / "clean")
    out = tmp_path / "out"
    assert _start_and_kill(source, out) == -signal.SIGKILL
    after_kill = _outputs(out)
    finished = {k: v for k, v in after_kill.items() if not k.endswith(TEMP_SUFFIX)}
    assert 2 <= len(finished) < len(clean)
    assert all(clean[name] == text for name, text in finished.items())
    assert all(os.path.basename(k).startswith(".") for k in after_kill if k not in finished)
    code, err = _restore_dir(capsys, source, out)
    assert code == 0 and f"skipping {len(finished)} files" in err
    assert _outputs(out) == clean  # complete, identical, temporary files gone


def test_single_input_output_is_atomic_too(tmp_path, capsys):
    source = tmp_path / "late_error.txt"
    source.write_bytes(("we went home\n" * 200).encode() + b"\xff\n")
    target = tmp_path / "restored.txt"
    assert main(["restore", "-i", str(source), "-o", str(target)]) == 2
    assert "not valid UTF-8" in capsys.readouterr().err
    assert os.listdir(tmp_path) == ["late_error.txt"]


@pytest.mark.parametrize("args, message", [
    (["--input-dir", "IN", "--output-dir", "OUT", "some", "text"], "not both"),
    (["--input-dir", "IN", "--output-dir", "OUT", "-i", "IN/a.txt"], "not both"),
    (["--input-dir", "IN/missing", "--output-dir", "OUT"], "missing: no such folder"),
    (["--input-dir", "IN"], "--input-dir needs --output-dir"),
    (["--output-dir", "OUT"], "--output-dir is for --input-dir"),
    (["--input-dir", "IN", "--output-dir", "IN/out"], "inside the input folder"),
    (["--input-dir", "IN", "--output-dir", "IN/.."], "inside the output folder"),
    (["--jobs", "2", "some", "text"], "--jobs and --overwrite are for --input-dir"),
    (["--input-dir", "IN", "--output-dir", "OUT", "--jobs", "0"], "error: --jobs must be"),
])
def test_folder_errors_are_one_line(tmp_path, capsys, args, message):
    _write(tmp_path / "in" / "a.txt", "we went home\n")
    args = [a.replace("IN", str(tmp_path / "in")).replace("OUT", str(tmp_path / "out"))
            for a in args]
    assert main(["restore", *args]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_an_output_that_resolves_onto_an_input_is_not_written(tmp_path, capsys):
    _write(tmp_path / "in" / "a.txt", "precious input\n")
    _write(tmp_path / "in" / "b.txt", "we went home\n")
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "a.txt").symlink_to(tmp_path / "in" / "a.txt")
    code, err = _restore_dir(capsys, tmp_path / "in", tmp_path / "out", "--overwrite")
    assert code == 1 and "resolves into the input folder" in err
    assert (tmp_path / "in" / "a.txt").read_text() == "precious input\n"
    assert _words(tmp_path / "out" / "b.txt") == ["we", "went", "home"]


def test_an_unreadable_subfolder_is_named_among_the_failures(tmp_path, capsys, monkeypatch):
    _write(tmp_path / "in" / "a.txt", "we went home\n")
    _write(tmp_path / "in" / "locked" / "b.txt", "we see a boat\n")
    scandir = os.scandir

    def refusing(path):
        if str(path).endswith("locked"):
            raise PermissionError(13, "Permission denied", str(path))
        return scandir(path)

    monkeypatch.setattr(os, "scandir", refusing)  # chmod 000 does not stop root
    code, err = _restore_dir(capsys, tmp_path / "in", tmp_path / "out")
    assert code == 1 and "locked: cannot read the folder (Permission denied)" in err
    assert _words(tmp_path / "out" / "a.txt") == ["we", "went", "home"]


def test_two_inputs_for_one_output_are_an_error(tmp_path, capsys):
    _write(tmp_path / "in" / "a.srt", SRT)
    _write(tmp_path / "in" / "a.vtt", "WEBVTT\n\n00:01.000 --> 00:02.000\nhello there\n")
    code, err = _restore_dir(capsys, tmp_path / "in", tmp_path / "out", "--to", "text")
    assert code == 2 and "would both be written to" in err and "a.txt" in err


def test_listing_and_output_names(tmp_path):
    for name in ("b.txt", "a/c.srt", ".git/x", "a/.d.txt", "e.txt~", "#f.txt#", "g.part"):
        _write(tmp_path / name, "x")
    assert list_inputs(str(tmp_path)) == [os.path.join("a", "c.srt"), "b.txt"]
    assert output_name("x/a.txt.gz", "text", "text") == "x/a.txt"
    assert output_name("x/a.json", "whisper", "srt") == "x/a.srt"
    assert output_name("x/a.json", "vosk", "vosk") == "x/a.json"


# ----------------------------------------------------------------------------- Ray

@pytest.fixture(scope="module")
def local_ray():
    """A two-CPU local Ray instance shared by the Ray tests (the CLI uses it as is)."""
    ray = pytest.importorskip("ray", reason="the ray extra is not installed")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()


@pytest.mark.slow
def test_ray_files_match_restore_and_list_failures(local_ray, tmp_path, capsys):
    rng = random.Random(4)
    root = tmp_path / "in"
    for k in range(3):
        _write(root / f"sub{k}" / f"t{k}.txt", _random_text(rng, 3, 15))
    _write(root / "talk.srt", SRT)
    _write(root / "bad.srt", "1\nnot a timing\nhello\n")
    assert _restore_dir(capsys, root, tmp_path / "local")[0] == 1
    code = main(["batch", "--input-dir", str(root), "--output-dir", str(tmp_path / "ray"),
                 "--actors", "2", "--no-progress"])
    err = capsys.readouterr().err
    assert code == 1 and "1 of 5 files failed:" in err and "bad.srt" in err
    assert _outputs(tmp_path / "ray") == _outputs(tmp_path / "local")


@pytest.mark.slow
def test_ray_parquet_restores_a_column(local_ray, tmp_path, capsys):
    import pyarrow
    import pyarrow.parquet

    from punctum import Punctuator

    rng = random.Random(5)
    texts = [_random_text(rng, 1, 12).strip() for _ in range(5)] + [None]
    texts[4] = texts[4] + "\n\nwe see a boat"  # a cell's lines are restored as lines
    source = tmp_path / "in"
    source.mkdir()
    for part in range(2):
        rows = {"id": list(range(part * 3, part * 3 + 3)), "text": texts[part * 3:part * 3 + 3]}
        pyarrow.parquet.write_table(pyarrow.table(rows), source / f"part{part}.parquet")
    # One row per restore_batch call, so that each text is restored alone as below: an int8
    # model's labels can change, at near-ties, with the other texts sharing its ONNX batch
    # (dynamic quantization scales activations per batch; docs/BENCHMARKS.md).
    # default --actors: one per CPU but one, which Ray Data's read and write tasks need
    code = main(["batch", "--parquet", str(source), "--output-dir", str(tmp_path / "out"),
                 "--batch-size", "1", "--no-progress"])
    assert code == 0, capsys.readouterr().err
    rows = sorted(pyarrow.parquet.read_table(tmp_path / "out").to_pylist(),
                  key=lambda row: row["id"])
    punctuator = Punctuator.load()
    expected = ["\n".join(punctuator.restore(line) for line in t.split("\n"))
                for t in texts[:5]] + [None]
    assert rows[4]["restored"].count("\n") == 2
    assert [row["text"] for row in rows] == texts
    assert [row["restored"] for row in rows] == expected
    code = main(["batch", "--parquet", str(source), "--output-dir", str(tmp_path / "commas"),
                 "--batch-size", "1", "--actors", "1", "--bias", "COMMA=30", "--no-progress"])
    assert code == 0, capsys.readouterr().err
    rows = sorted(pyarrow.parquet.read_table(tmp_path / "commas").to_pylist(),
                  key=lambda row: row["id"])
    commas = Punctuator.load(post_bias={"COMMA": 30})
    assert [row["restored"] for row in rows] == [
        "\n".join(commas.restore(line) for line in t.split("\n")) for t in texts[:5]
    ] + [None] != expected
    code = main(["batch", "--parquet", str(source), "--output-dir", str(tmp_path / "clash"),
                 "--output-column", "id", "--no-progress"])
    assert code == 2 and "already has a column 'id'" in capsys.readouterr().err
    code = main(["batch", "--parquet", str(source), "--output-dir", str(tmp_path / "x"),
                 "--column", "transcript"])
    err = capsys.readouterr().err
    assert code == 2 and "no column 'transcript' (columns: id, text)" in err


def test_a_file_that_kills_its_worker_fails_alone(monkeypatch):
    """A dead worker breaks every file not done; those go on in a new pool, the ones that
    break it too are retried one by one, and only the file that kills its worker again is
    reported."""
    from concurrent.futures.process import BrokenProcessPool
    from types import SimpleNamespace

    from punctum import batch

    tasks = [batch.FileTask(f"in/{n}.txt", f"out/{n}.txt") for n in "abcdef"]
    calls = []

    def fake_pool_results(pending, options, model, workers):
        calls.append([t.source[3] for t in pending])
        broken = False  # c kills its worker: the pool breaks for it and every file after
        for task in pending:
            broken = broken or task.source == "in/c.txt"
            yield task, (BrokenProcessPool("a child process terminated abruptly") if broken
                         else batch.FileResult(task.source, task.target))

    monkeypatch.setattr(batch, "_pool_results", fake_pool_results)
    bar = SimpleNamespace(update=lambda: None)
    results = batch._run_pool(tasks, SimpleNamespace(jobs=2), "m", bar)
    assert calls == [list("abcdef"), list("cdef"), ["c"], ["d"], ["e"], ["f"]]
    failed = {r.source: r.error for r in results if not r.ok}
    assert list(failed) == ["in/c.txt"] and "worker process failed" in failed["in/c.txt"]
    assert sorted(r.source for r in results) == [t.source for t in tasks]


def test_ctrl_c_cancels_the_files_not_started_and_a_second_ends_the_workers():
    from punctum import batch

    class Future:
        def __init__(self):
            self.cancelled = False

        def cancel(self):
            self.cancelled = True

    class Process:
        terminated = False

        def terminate(self):
            self.terminated = True

    class Executor:
        def __init__(self, interrupted_again):
            self.interrupted_again, self.calls = interrupted_again, []
            self._processes = {1: Process(), 2: Process()}

        def shutdown(self, wait=True, cancel_futures=False):
            self.calls.append(wait)
            if wait and self.interrupted_again:
                raise KeyboardInterrupt

    futures = [Future(), Future()]
    patient = Executor(interrupted_again=False)
    batch._stop_pool(patient, futures)  # the files in flight are waited for
    assert all(f.cancelled for f in futures) and patient.calls == [True]
    assert not any(p.terminated for p in patient._processes.values())
    hasty = Executor(interrupted_again=True)
    with pytest.raises(KeyboardInterrupt):
        batch._stop_pool(hasty, futures)
    assert hasty.calls == [True, False] and all(p.terminated for p in hasty._processes.values())


def test_ray_dispatch_retires_a_dead_actor_and_retries_its_file():
    """Unit test of the dispatcher with a fake Ray: actor 0 dies on its first file."""
    from types import SimpleNamespace

    from punctum import batch, batch_ray

    class Ref:
        def __init__(self, actor, task):
            self.actor, self.task = actor, task

    class FakeActor:
        def __init__(self, name, dies):
            self.name, self.dies, self.seen = name, dies, []
            self.restore = SimpleNamespace(remote=self.remote)

        def remote(self, task):
            self.seen.append(task.source)
            return Ref(self, task)

    def get(ref):
        if ref.actor.dies:
            raise RuntimeError("The actor died unexpectedly")
        return batch.FileResult(ref.task.source, ref.task.target)

    fake_ray = SimpleNamespace(wait=lambda refs, num_returns: ([refs[0]], refs[1:]), get=get)
    actors = [FakeActor("a0", dies=True), FakeActor("a1", dies=False)]
    tasks = [batch.FileTask(f"in/{n}.txt", f"out/{n}.txt") for n in range(6)]
    bar = SimpleNamespace(update=lambda: None)
    results = batch_ray._dispatch(fake_ray, actors, tasks, bar)
    assert sorted(r.source for r in results) == [t.source for t in tasks]
    assert all(r.ok for r in results)  # each file a0 took was retried on a1
    assert actors[0].seen and set(actors[1].seen) == {t.source for t in tasks}

    actors = [FakeActor("a0", dies=True)]
    results = batch_ray._dispatch(fake_ray, actors, tasks[:3], bar)
    assert len(results) == 3 and not any(r.ok for r in results)


def test_a_file_name_with_a_newline_stays_on_one_summary_line(tmp_path, capsys):
    root = tmp_path / "in"
    _write(root / "good.txt", "we met in town\n")
    _write(root / "two\nlines.txt", b"we see\n\xff a boat\n")
    code, err = _restore_dir(capsys, root, tmp_path / "out")
    lines = err.strip().splitlines()
    failures = lines[lines.index("1 of 2 files failed:") + 1:]
    assert code == 1 and len(failures) == 1
    assert "two\\nlines.txt" in failures[0] and "not valid UTF-8" in failures[0]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
def test_a_named_pipe_in_the_input_folder_is_skipped(tmp_path, capsys):
    root = tmp_path / "in"
    _write(root / "good.txt", "we met in town\n")
    os.mkfifo(root / "pipe.txt")
    code, err = _restore_dir(capsys, root, tmp_path / "out")
    assert code == 0 and "restored 1 file" in err
    assert sorted(_outputs(tmp_path / "out")) == ["good.txt"]


def test_videos_and_unread_subtitle_formats_beside_transcripts_are_left_out(tmp_path, capsys):
    root = tmp_path / "in"
    _write(root / "talk.srt", "1\n00:00:01,000 --> 00:00:02,000\nwe met in town\n")
    _write(root / "talk.mkv", b"\x1aE\xdf\xa3\x00\x00\x01matroska" * 50)
    _write(root / "talk.scc", "Scenarist_SCC V1.0\n\n00:00:00:00\t9420 9420\n")
    _write(root / "notes.txt", "so what\n")
    _write(root / "wide.txt", "we see\n".encode("utf-16-le"))  # text, named as such
    code, err = _restore_dir(capsys, root, tmp_path / "out")
    assert "left out 2 files that are not transcripts" in err
    assert "talk.mkv (binary)" in err and "talk.scc (Scenarist SCC)" in err
    assert sorted(_outputs(tmp_path / "out")) == ["notes.txt", "talk.srt"]
    assert code == 1 and "wide.txt: looks like UTF-16" in err  # a failure, not left out
    code, err = _restore_dir(capsys, root, tmp_path / "out2", "--format", "text")
    assert "left out 1 file that is not a transcript: " in err and "talk.scc" not in err


def test_parquet_cells_keep_speaker_labels_as_file_lines_do(tiny_artifact, tmp_path):
    pytest.importorskip("pyarrow")
    from punctum.batch_ray import ColumnRestorer, ParquetOptions
    from punctum.runtime import RestoreOptions

    options = ParquetOptions(input=str(tmp_path), output_dir=str(tmp_path / "out"))
    restorer = ColumnRestorer(str(tiny_artifact), 1, options)
    cell = "agent: we see a boat\ncustomer: so what [laughs]"
    [restored, empty] = restorer._restore([cell, None])
    lines = restored.split("\n")
    assert lines[0].startswith("agent: ") and lines[1].startswith("customer: ")
    assert lines[1].endswith("[laughs]") and empty is None
    crs = restorer._restore(["we see a boat\rso what\r\nok"])[0]  # breaks kept as written
    assert crs.count("\r") == 2 and crs.count("\r\n") == 1 and len(crs.split("\r")) == 3
    plain = ColumnRestorer(str(tiny_artifact), 1, dataclasses.replace(
        options, restore=RestoreOptions(annotations=False)))._restore([cell])[0]
    assert not plain.startswith("agent: ")  # read as words when asked


def test_parquet_input_that_is_not_parquet_is_named_and_an_empty_one_is_written(tmp_path):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    from punctum.batch_ray import ParquetOptions, RayOptions, run_parquet

    folder = tmp_path / "in"
    folder.mkdir()
    pq.write_table(pa.table({"text": ["so what"]}), folder / "a.parquet")
    (folder / "b.parquet").write_text("garbage", encoding="utf-8")
    with pytest.raises(ValueError, match=r"b.parquet: not a readable Parquet file"):
        run_parquet(ParquetOptions(str(folder), str(tmp_path / "out")), RayOptions())
    empty = tmp_path / "empty.parquet"
    pq.write_table(pa.table({"text": pa.array([], pa.string())}), empty)
    run_parquet(ParquetOptions(str(empty), str(tmp_path / "out2")), RayOptions())
    written = pq.read_table(tmp_path / "out2" / "part-0.parquet")
    assert written.num_rows == 0 and written.schema.names == ["text", "restored"]


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="no symbolic links here")
def test_linked_folders_are_read_once_and_a_loop_ends(tmp_path):
    from punctum.batch import list_inputs

    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "g.txt").write_text("so what\n", encoding="utf-8")
    root = tmp_path / "in"
    (root / "sub").mkdir(parents=True)
    (root / "a.txt").write_text("we see\n", encoding="utf-8")
    os.symlink(outside, root / "linked")
    os.symlink(outside, root / "again")  # the same folder twice: read once
    os.symlink(root, root / "sub" / "up")  # a loop
    found = list_inputs(str(root))
    assert "a.txt" in found and sum(p.endswith("g.txt") for p in found) == 1
    assert len(found) == 2
    (root / "a" / "deep").mkdir(parents=True)  # a link into the tree: files where they are
    (root / "a" / "deep" / "x.txt").write_text("so\n", encoding="utf-8")
    os.symlink(root / "a" / "deep", root / "b")
    (root / "out").mkdir()
    (root / "out" / "old.txt").write_text("old\n", encoding="utf-8")
    os.symlink(root / "out", root / "outlink")  # the output folder, linked: never read
    found = list_inputs(str(root), output_dir=str(root / "out"))
    assert os.path.join("a", "deep", "x.txt") in found and not any(
        p.startswith(("b", "out")) for p in found)


def test_xml_that_is_neither_ttml_nor_elan_is_left_out(tmp_path, capsys):
    root = tmp_path / "in"
    _write(root / "captions.xml", '<?xml version="1.0"?>\n<tt xmlns="http://www.w3.org/ns/ttml">'
           '<body><div><p begin="1s" end="2s">so what</p></div></body></tt>\n')
    _write(root / "v.srv3", '<?xml version="1.0"?><timedtext><body><p t="1">hi there</p>'
           '</body></timedtext>\n')
    code, err = _restore_dir(capsys, root, tmp_path / "out")
    assert code == 0 and "v.srv3 (XML, neither TTML nor ELAN)" in err
    assert sorted(_outputs(tmp_path / "out")) == ["captions.xml"]
