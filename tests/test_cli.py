"""The `punctum` command line: restore and export, errors as one line with exit code 2."""

import gzip
import io
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from punctum.cli import main
from punctum.text import normalize

SAMPLE = "do you like the house well i see my car and we visit new york"


def _restore(args, tiny_artifact, capsys):
    code = main(["restore", "--model", str(tiny_artifact), *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_arguments_that_are_not_utf8_follow_errors(tiny_artifact, capsys):
    undecodable = "caf\udce9 ok"  # how Python passes the byte 0xE9 of a Latin-1 shell
    code, _, err = _restore([undecodable], tiny_artifact, capsys)
    assert code == 2 and "<arguments>: not valid UTF-8" in err and err.count("\n") == 1
    code, out, _ = _restore(["--errors", "replace", undecodable], tiny_artifact, capsys)
    assert code == 0 and normalize(out) == ["caf\ufffd", "ok"]


@pytest.mark.parametrize("encoding, text", [("utf-16-le", "hello there\nhow are you\n"),
                                            ("utf-16-be", "hello there\nhow are you\n"),
                                            ("utf-16-le", "\nhello there how are you\n")])
def test_utf16_text_is_named_not_restored_as_letters(tiny_artifact, tmp_path, capsys,
                                                      encoding, text):
    source = tmp_path / "u16.txt"
    source.write_bytes(text.encode(encoding))
    code, out, err = _restore(["-i", str(source)], tiny_artifact, capsys)
    assert code == 2 and out == "" and "looks like UTF-16 text" in err
    assert err.count("\n") == 1


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-be"])
@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_utf16_text_with_a_byte_order_mark_is_restored_as_utf8(tiny_artifact, tmp_path,
                                                               capsys, monkeypatch,
                                                               encoding, newline):
    source = tmp_path / "u16.txt"
    text = f"hello there caf\u00e9{newline}\U0001f600 how are you{newline}"
    bom = "\ufeff" if encoding == "utf-16-be" else ""  # (utf-16 writes its own)
    source.write_bytes((bom + text).encode(encoding))
    code, out, err = _restore(["-i", str(source)], tiny_artifact, capsys)
    assert code == 0 and err == ""
    assert normalize(out) == normalize(text) and out.count(newline) == 2
    target = tmp_path / "out.txt"
    code, _, _ = _restore(["-i", str(source), "-o", str(target)], tiny_artifact, capsys)
    written = target.read_bytes()
    assert code == 0 and written.decode("utf-8").count(newline) == 2
    assert normalize(written.decode("utf-8")) == normalize(text)
    stdin = io.BufferedReader(io.BytesIO(source.read_bytes()))  # peeks, as a pipe
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(stdin))
    code, out, _ = _restore([], tiny_artifact, capsys)
    assert code == 0 and normalize(out) == normalize(text) and out.count(newline) == 2


def test_utf16_subtitles_saved_as_txt_are_read_as_subtitles(tiny_artifact, tmp_path, capsys):
    source = tmp_path / "u16.txt"
    source.write_bytes("1\r\n00:00:01,000 --> 00:00:02,000\r\nhello there\r\n"
                       .encode("utf-16"))
    code, out, _ = _restore(["-i", str(source)], tiny_artifact, capsys)
    assert code == 0 and out.startswith("1\r\n00:00:01,000 --> 00:00:02,000\r\n")
    assert normalize(out.split("\n")[2]) == ["hello", "there"]


def test_broken_utf16_after_its_byte_order_mark_names_the_line(tiny_artifact, tmp_path,
                                                               capsys):
    source = tmp_path / "u16.txt"
    source.write_bytes("one\ntwo\n".encode("utf-16") + b"\x00\xd8a\x00\n\x00")
    code, out, err = _restore(["-i", str(source)], tiny_artifact, capsys)
    assert code == 2 and "u16.txt:3: not valid UTF-16" in err and err.count("\n") == 1
    code, out, _ = _restore(["-i", str(source), "--errors", "replace"], tiny_artifact, capsys)
    assert code == 0 and "\ufffd" in out


@pytest.mark.parametrize("encoding", ["utf-16", "utf-32"])
def test_bom_text_with_carriage_returns_alone_keeps_its_lines(tiny_artifact, tmp_path, capsys,
                                                              encoding):
    source = tmp_path / "mac.txt"
    source.write_bytes("hello there\rhow are you\r".encode(encoding))
    code, out, _ = _restore(["-i", str(source)], tiny_artifact, capsys)
    assert code == 0 and out.count("\r") == 2 and "\n" not in out
    assert normalize(out) == ["hello", "there", "how", "are", "you"]


def test_a_binary_file_is_named_so_not_utf16(tiny_artifact, tmp_path, capsys):
    source = tmp_path / "program"
    source.write_bytes(b"\x7fELF\x02\x01\x01" + bytes(9) + b"\x03\x00>\x00\x01" + bytes(7)
                       + b"\xd0\x8f\x00\x00\xc8\xff" + bytes(30) + b"@\x008\x00\r\x00")
    code, out, err = _restore(["-i", str(source)], tiny_artifact, capsys)
    assert code == 2 and out == "" and "looks like a binary file" in err
    assert err.count("\n") == 1


def test_restore_arguments(tiny_artifact, capsys):
    code, out, _ = _restore([SAMPLE], tiny_artifact, capsys)
    assert code == 0 and normalize(out) == SAMPLE.split()


def test_a_file_name_given_as_text_gets_a_note(tiny_artifact, tmp_path, capsys):
    talk = tmp_path / "talk.srt"
    talk.write_text("1\n00:00:01,000 --> 00:00:02,000\nhello there\n")
    assert main(["restore", "--model", str(tiny_artifact), str(talk)]) == 0
    captured = capsys.readouterr()
    assert "talk.srt" in captured.out.lower()  # restored as text, as asked
    assert f"-i {talk} reads the file" in captured.err
    assert main(["restore", "--model", str(tiny_artifact), "we", "like", "u.s.", "cars"]) == 0
    assert capsys.readouterr().err == ""


def test_restore_stdin_keeps_lines_and_blank_lines(tiny_artifact, capsys, monkeypatch):
    data = f"{SAMPLE}\n\nwe see a boat\n".encode()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    code, out, _ = _restore([], tiny_artifact, capsys)
    lines = out.split("\n")
    assert code == 0 and lines[1] == "" and normalize(lines[2]) == ["we", "see", "a", "boat"]


@pytest.mark.parametrize("damage", ["cut", "flipped", "magic only", "header", "first block"])
def test_restore_names_stdin_when_its_gzip_is_damaged(tiny_artifact, capsys, monkeypatch,
                                                      damage):
    data = bytearray(gzip.compress(f"{SAMPLE}\n".encode() * 400))
    if damage == "cut":
        data = data[:len(data) // 2]
    elif damage == "flipped":
        data[-6] ^= 0xFF  # the CRC
    elif damage == "magic only":
        data = data[:2]
    elif damage == "header":
        data[2] = 0x63  # compression method: unknown
    else:
        data[10] = 0xFF  # the first deflate block's header: an invalid block type
    stdin = io.TextIOWrapper(io.BufferedReader(io.BytesIO(bytes(data))))  # peeks, as a pipe
    monkeypatch.setattr(sys, "stdin", stdin)
    code, _, err = _restore([], tiny_artifact, capsys)
    assert code == 2 and err.count("\n") == 1 and "<stdin>: cannot be read as gzip" in err


def test_restore_files_to_folder_and_json(tiny_artifact, tmp_path, capsys):
    a = tmp_path / "a.txt"
    a.write_text(SAMPLE + "\n", encoding="utf-8")
    b = tmp_path / "b.txt.gz"
    with gzip.open(b, "wt", encoding="utf-8") as handle:
        handle.write("we see a boat\n")
    out_dir = tmp_path / "out"
    code, _, _ = _restore(["-i", str(a), "-i", str(b), "-o", str(out_dir)], tiny_artifact,
                          capsys)
    assert code == 0
    assert normalize((out_dir / "a.txt").read_text()) == SAMPLE.split()
    assert normalize((out_dir / "b.txt").read_text()) == ["we", "see", "a", "boat"]
    code, _, _ = _restore(["-i", str(a), "-o", str(tmp_path / "a.out.gz")], tiny_artifact,
                          capsys)
    with gzip.open(tmp_path / "a.out.gz", "rt", encoding="utf-8") as handle:
        assert code == 0 and normalize(handle.read()) == SAMPLE.split()
    code, _, err = _restore(["-i", str(a), "-o", ""], tiny_artifact, capsys)
    assert code == 2 and "-o/--output needs a path" in err
    code, out, _ = _restore(["--json", "-i", str(a)], tiny_artifact, capsys)
    record = json.loads(out.splitlines()[0])
    assert [w["word"] for w in record["words"]] == SAMPLE.split()
    assert {"mark", "case", "mark_prob", "case_prob"} <= set(record["words"][0])


def test_gzipped_subtitles_are_read_as_subtitles(tiny_artifact, tmp_path, capsys):
    srt = tmp_path / "talk.srt.gz"
    with gzip.open(srt, "wt", encoding="utf-8") as handle:
        handle.write("1\n00:00:01,000 --> 00:00:02,500\nwe see a boat\n")
    code, out, _ = _restore(["-i", str(srt)], tiny_artifact, capsys)
    assert code == 0 and out.startswith("1\n00:00:01,000 --> 00:00:02,500\n")
    assert normalize(out.split("\n", 2)[2]) == ["we", "see", "a", "boat"]


def test_output_to_a_folder_for_one_input(tiny_artifact, tmp_path, capsys):
    source = tmp_path / "talk.txt"
    source.write_text("we see a boat\n", encoding="utf-8")
    for output in (tmp_path / "existing", str(tmp_path / "new") + "/"):
        (tmp_path / "existing").mkdir(exist_ok=True)
        code, _, _ = _restore(["-i", str(source), "-o", str(output)], tiny_artifact, capsys)
        assert code == 0 and (Path(str(output)) / "talk.txt").is_file()
    code, _, err = _restore(["-o", str(tmp_path / "new") + "/", "we see a boat"], tiny_artifact,
                            capsys)
    assert code == 2 and "is a folder; give a file path for <arguments>" in err
    before = source.read_bytes()  # -o the input's own folder would write over it
    code, _, err = _restore(["-i", str(source), "-o", str(tmp_path)], tiny_artifact, capsys)
    assert code == 2 and "is an input" in err and source.read_bytes() == before


def test_several_inputs_to_standard_output_or_a_file(tiny_artifact, tmp_path, capsys,
                                                     monkeypatch):
    monkeypatch.chdir(tmp_path)
    for name, text in (("a.txt", "we see a boat\n"), ("b.txt", "so what do you think\n")):
        (tmp_path / name).write_text(text, encoding="utf-8")
    code, out, _ = _restore(["-i", "a.txt", "-i", "b.txt", "-o", "-"], tiny_artifact, capsys)
    assert code == 0 and not (tmp_path / "-").exists()
    assert [normalize(line) for line in out.splitlines()] == [
        ["we", "see", "a", "boat"], ["so", "what", "do", "you", "think"]]
    code, _, err = _restore(["-i", "a.txt", "-i", "b.txt", "-o", "b.txt"], tiny_artifact,
                            capsys)
    assert code == 2 and "is a file; several inputs need a folder" in err


def test_an_output_named_as_another_subtitle_format_is_refused(tiny_artifact, tmp_path,
                                                                capsys):
    srt = tmp_path / "a.srt"
    srt.write_text("1\n00:00:01,000 --> 00:00:02,000\nwe see a boat\n", encoding="utf-8")
    code, _, err = _restore(["-i", str(srt), "-o", str(tmp_path / "out.vtt")], tiny_artifact,
                            capsys)
    assert code == 2 and "is srt, not vtt; add --to vtt" in err
    code, _, _ = _restore(["-i", str(srt), "-o", str(tmp_path / "out.vtt"), "--to", "vtt"],
                          tiny_artifact, capsys)
    assert code == 0 and (tmp_path / "out.vtt").read_text().startswith("WEBVTT")


@pytest.mark.parametrize("name, content, add", [
    ("a.txt", "we see a boat\n", "--json"),
    ("a.srt", "1\n00:00:01,000 --> 00:00:02,000\nwe see a boat\n", "--to json")])
def test_an_output_named_json_holds_json(tiny_artifact, tmp_path, capsys, name, content, add):
    source = tmp_path / name
    source.write_text(content, encoding="utf-8")
    target = tmp_path / "out.json"
    code, _, err = _restore(["-i", str(source), "-o", str(target)], tiny_artifact, capsys)
    assert code == 2 and f"not JSON; add {add}" in err and not target.exists()
    code, _, _ = _restore(["-i", str(source), "-o", str(target), *add.split()],
                          tiny_artifact, capsys)
    assert code == 0 and json.loads(target.read_text().splitlines()[0] if name == "a.txt"
                                    else target.read_text())


def test_text_restored_as_json_lines_is_named_jsonl(tiny_artifact, tmp_path, capsys):
    source = tmp_path / "talk.txt"
    source.write_text("we see a boat\n", encoding="utf-8")
    code, _, _ = _restore(["-i", str(source), "--json", "-o", str(tmp_path / "out") + "/"],
                          tiny_artifact, capsys)
    assert code == 0 and (tmp_path / "out" / "talk.jsonl").is_file()


def test_flag_conflicts_and_gz_siblings_are_refused(tiny_artifact, tmp_path, capsys,
                                                     monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, _, err = _restore(["--json", "--to", "text", "we see"], tiny_artifact, capsys)
    assert code == 2 and "give one of them" in err
    with pytest.raises(SystemExit):
        main(["restore", "--model", str(tiny_artifact), "--bias", "PERIOD=1e308", "hi"])
    assert "from -50 to 50" in capsys.readouterr().err
    with gzip.open(tmp_path / "talk.txt.gz", "wt", encoding="utf-8") as handle:
        handle.write("we see a boat\n")
    (tmp_path / "talk.txt").write_text("kept by hand\n", encoding="utf-8")
    code, _, err = _restore(["-i", "talk.txt.gz", "-o", "./"], tiny_artifact, capsys)
    assert code == 2 and "exists beside the input" in err
    assert (tmp_path / "talk.txt").read_text() == "kept by hand\n"


def test_two_inputs_for_one_output_file_are_refused(tiny_artifact, tmp_path, capsys):
    for folder in ("d1", "d2"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "x.txt").write_text("we see a boat\n", encoding="utf-8")
    out = tmp_path / "out"
    code, _, err = _restore(["-i", str(tmp_path / "d1" / "x.txt"), "-i",
                             str(tmp_path / "d2" / "x.txt"), "-o", str(out)], tiny_artifact,
                            capsys)
    assert code == 2 and "would both be written to" in err and not out.exists()


def test_json_of_a_very_long_line_is_streamed_and_whole(tiny_artifact, tmp_path, capsys,
                                                        monkeypatch):
    """A line over LONG_LINE_WORDS words is written in parts: one valid JSON object whose
    words are the input's and whose labels re-render to its text."""
    from punctum import runtime
    from punctum.text import Labelled, render

    monkeypatch.setattr(runtime, "LONG_LINE_WORDS", 100)
    words = ("so what do you think i think it's great we went home " * 60).split()
    source = tmp_path / "long.txt"
    source.write_text("we see a boat\n" + " ".join(words) + "\n", encoding="utf-8")
    code, out, _ = _restore(["--json", "-i", str(source)], tiny_artifact, capsys)
    assert code == 0
    short, long = (json.loads(line) for line in out.splitlines())
    assert [w["word"] for w in short["words"]] == ["we", "see", "a", "boat"]
    assert list(long) == ["words", "text"]
    entries = long["words"]
    assert [w["word"] for w in entries] == words
    labelled = Labelled(tuple(words), tuple(w["mark"] for w in entries),
                        tuple(w["case"] for w in entries))
    assert render(labelled) == long["text"]
    assert normalize(long["text"]) == words


def test_restore_empty_input_is_empty_output(tiny_artifact, tmp_path, capsys):
    empty = tmp_path / "empty.txt"
    empty.write_text("", encoding="utf-8")
    code, out, err = _restore(["-i", str(empty)], tiny_artifact, capsys)
    assert code == 0 and out == "" and err == ""


@pytest.mark.parametrize(
    "setup, message",
    [("missing", "missing.txt: no such file"),
     ("newline", "a\\nb.txt: no such file"),
     ("binary", "not valid UTF-8 (invalid start byte at byte 0); --errors replace substitutes"),
     ("model", "no model"),
     ("folder", "is a folder (--input-dir restores the files under it)"),
     ("fill", "--fill is for --keep-existing")],
)
def test_restore_errors_are_one_line(tiny_artifact, tmp_path, capsys, setup, message):
    path = tmp_path / {"missing": "missing.txt", "newline": "a\nb.txt"}.get(setup, "bin.txt")
    if setup == "folder":
        path.mkdir()
    if setup == "binary":
        path.write_bytes(b"hello\n\xff\xfe world\n")
    elif setup in ("model", "fill"):
        path.write_text("hello world\n", encoding="utf-8")
    model = "no-such-model" if setup == "model" else str(tiny_artifact)
    fill = ["--fill", "all"] if setup == "fill" else []
    code = main(["restore", "--model", model, "-i", str(path), *fill])
    err = capsys.readouterr().err
    assert code == 2 and message in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


@pytest.mark.parametrize("args", [["--threads", "-3"], ["--threads", "-1"]])
def test_restore_rejects_negative_counts(tiny_artifact, capsys, args):
    with pytest.raises(SystemExit) as exit_info:
        main(["restore", "--model", str(tiny_artifact), *args, "hello"])
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and "must be at least" in err.splitlines()[-1]


@pytest.mark.parametrize("argv, message", [
    (["restore", "--threads", "100000", "hello"], "--threads must be a whole number"),
    (["restore", "-i", "IN.jsonl", "--format", "nemo", "--text-key", ""],
     "--text-key and --output-key must not be empty"),
    (["eval", "--ref", "IN.jsonl", "--hyp", "IN.jsonl", "--samples", "0"],
     "--samples must be in [1, "),
    (["restore", "--bias", "FOO=1", "hello"], "--bias: unknown label 'FOO'"),
    (["timings", "IN.jsonl", "--out", "OUT.jsonl", "--rate-range", "2", "1"],
     "--rate-range must be"), (["timings", "IN.jsonl", "--out", "OUT.jsonl", "--jobs", "0"],
                               "--jobs must be >= 1"),
])
def test_errors_name_the_flags_not_the_option_fields(tiny_artifact, tmp_path, capsys, argv,
                                                     message):
    source = tmp_path / "in.jsonl"
    source.write_text('{"pred_text": "we see a boat"}\n', encoding="utf-8")
    argv = [a.replace("IN.jsonl", str(source)).replace("OUT.jsonl", str(tmp_path / "o.jsonl"))
            for a in argv]
    assert main(argv[:1] + ["--model", str(tiny_artifact)] * (argv[0] == "restore")
                + argv[1:]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1 and "Options" not in err
    assert "Config." not in err


def test_dash_input_is_stdin_alone(tiny_artifact, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(f"{SAMPLE}\n".encode())))
    code, out, _ = _restore(["-i", "-"], tiny_artifact, capsys)
    assert code == 0 and normalize(out) == SAMPLE.split()
    other = tmp_path / "a.txt"
    other.write_text("we see a boat\n", encoding="utf-8")
    code, _, err = _restore(["-i", "-", "-i", str(other)], tiny_artifact, capsys)
    assert code == 2 and "cannot be given with other inputs" in err


def test_errors_replace_substitutes_bad_bytes(tiny_artifact, tmp_path, capsys):
    path = tmp_path / "bin.txt"
    path.write_bytes(b"we see\xff a boat\n")
    code, out, _ = _restore(["--errors", "replace", "-i", str(path)], tiny_artifact, capsys)
    assert code == 0 and "\ufffd" in out


def test_python_dash_m_entry_point():
    result = subprocess.run([sys.executable, "-m", "punctum", "--version"],
                            capture_output=True, text=True)
    assert result.returncode == 0 and result.stdout.startswith("punctum ")


def test_a_reader_that_stops_early_gets_no_traceback(tiny_artifact, tmp_path):
    # `punctum restore big.txt | head -1`: the pipe closes while punctum still writes
    path = tmp_path / "many.txt"
    path.write_text(f"{SAMPLE}\n" * 5000)
    command = [sys.executable, "-m", "punctum", "restore", "--model", str(tiny_artifact),
               "-i", str(path)]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    first = process.stdout.readline()
    process.stdout.close()
    error = process.stderr.read().decode()
    assert process.wait(timeout=120) == 141
    assert normalize(first.decode()) == SAMPLE.split() and error == ""


@pytest.mark.parametrize("target", ["/dev/stdout", "-"])
def test_output_to_stdout_keeps_what_the_shell_wrote_around_it(tiny_artifact, tmp_path, target):
    # { echo header; punctum restore -o /dev/stdout ...; echo footer; } > log.txt
    log = tmp_path / "log.txt"
    with open(log, "w", encoding="utf-8") as handle:
        handle.write("header\n")
        handle.flush()
        subprocess.run([sys.executable, "-m", "punctum", "restore", "--model",
                        str(tiny_artifact), "-o", target, SAMPLE], stdout=handle, check=True,
                       cwd=tmp_path)
        handle.write("footer\n")
    lines = log.read_text(encoding="utf-8").splitlines()
    assert lines[0] == "header" and normalize(lines[1]) == SAMPLE.split()
    assert lines[2:] == ["footer"] and not (tmp_path / "-").exists()


def test_export_cli(tiny_run, tmp_path, capsys, caplog):
    out = tmp_path / "fp32"
    code = main(["export", str(tiny_run / "best.pt"), str(out), "--no-int8", "--name", "t"])
    assert code == 0, capsys.readouterr().err
    meta = json.loads((out / "punctum.json").read_text())
    assert meta["model"]["precision"] == "fp32" and meta["name"] == "t"
    meta["decision"] = {"post_bias": {"COMMA": 0.5}}  # fitted by punctum calibrate
    (out / "punctum.json").write_text(json.dumps(meta))
    code = main(["export", str(tiny_run / "best.pt"), str(out), "--no-int8", "--name", "t"])
    assert code == 0 and "decision biases punctum calibrate fitted" in caplog.text
    (out / "notes.txt").write_text("mine")  # a folder of other files is not a model's
    code = main(["export", str(tiny_run / "best.pt"), str(out), "--no-int8", "--name", "t"])
    assert code == 2 and "holds other files than a model's (notes.txt)" in \
        capsys.readouterr().err
    (out / "notes.txt").unlink()
    code = main(["export", str(tmp_path / "missing.pt"), str(tmp_path / "x")])
    assert code == 2 and "missing.pt" in capsys.readouterr().err
    import torch

    saved = torch.load(tiny_run / "best.pt", weights_only=False)
    del saved["model"][next(iter(saved["model"]))]
    for name, content in (("dict.pt", {"a": 1}), ("list.pt", [1, 2]), ("cut.pt", saved)):
        torch.save(content, tmp_path / name)
        code = main(["export", str(tmp_path / name), str(tmp_path / "z"), "--tokenizer",
                     str(tiny_run / "tokenizer.json")])
        err = capsys.readouterr().err
        assert code == 2 and f"{name}: " in err and len(err.strip().splitlines()) == 1
        assert "not a punctum training checkpoint" in err or "do not fit its model" in err
    other = tmp_path / "other_tokenizer.json"
    from punctum.tokenizer import train_bpe

    train_bpe(iter([["a", "b", "c"]] * 3), vocab_size=40).save(other)
    code = main(["export", str(tiny_run / "best.pt"), str(tmp_path / "t"), "--tokenizer",
                 str(other)])
    assert code == 2 and "not the tokenizer of its run" in capsys.readouterr().err
    for content in ("{not json", "[1, 2]"):
        (tmp_path / "scores.json").write_text(content, encoding="utf-8")
        code = main(["export", str(tiny_run / "best.pt"), str(tmp_path / "y"), "--scores",
                     str(tmp_path / "scores.json")])
        assert code == 2 and "scores.json: " in capsys.readouterr().err
    for window, flag in ((["1", "0", "0"], "SIZE"), (["20", "-5", "10"], "LEFT")):
        code = main(["export", str(tiny_run / "best.pt"), str(tmp_path / "w"), "--window",
                     *window])  # what loading would refuse
        assert code == 2 and f"--window {flag} must be" in capsys.readouterr().err
        assert not (tmp_path / "w").exists()
    from punctum.train.export import ExportOptions, export_artifact, parity_texts

    (out / "capitalised.json").write_text('{"words": ["stale"]}')  # an earlier export's list
    export_artifact(tiny_run / "best.pt", out, tiny_run / "tokenizer.json",
                    ExportOptions(int8=False, lexicon_documents=0),
                    parity_texts(tiny_run / "best.pt"))
    assert not (out / "capitalised.json").exists()


def test_selftrain_cli_takes_a_model_as_teacher(tiny_corpus, tiny_artifact, tmp_path, capsys):
    pytest.importorskip("torch")
    from conftest import TINY_RECIPE

    recipe = tmp_path / "st.toml"
    recipe.write_text(TINY_RECIPE.replace("steps = 80", "steps = 4")
                      + '\n[selftrain]\npool = ["train.txt"]\nstudent_init = "teacher"\n'
                        'max_pool_documents = 8\n')
    out = tmp_path / "out"
    args = ["selftrain", str(recipe), "--data-root", str(tiny_corpus), "--out", str(out),
            "--no-progress", "--teacher"]
    assert main(args + [str(tmp_path / "nothing")]) == 2
    assert "--teacher" in capsys.readouterr().err
    assert main(args + [str(tiny_artifact)]) == 0, capsys.readouterr().err
    summary = json.loads((out / "selftrain.json").read_text())
    assert summary["rounds"][0]["checkpoint"] == str(tiny_artifact)
    printed = capsys.readouterr().out
    assert "round 0" in printed and "round 1" in printed


def test_a_text_file_keeps_its_byte_order_mark_and_crlf(tiny_artifact, tmp_path, capsys):
    source = tmp_path / "crlf.txt"
    source.write_bytes("\ufeffwe see a boat\r\n\r\nso what do you think\r\n".encode())
    code, _, _ = _restore(["-i", str(source), "-o", str(tmp_path / "out.txt")], tiny_artifact,
                          capsys)
    data = (tmp_path / "out.txt").read_bytes()
    assert code == 0 and data.startswith(b"\xef\xbb\xbf") and data.count(b"\r\n") == 3
    assert b"\n" not in data.replace(b"\r\n", b"")
    assert normalize(data.decode("utf-8-sig")) == "we see a boat so what do you think".split()


@pytest.mark.parametrize("ending", [b"\r\n", b"\r", b"\n"])
def test_text_piped_in_keeps_its_line_endings(tiny_artifact, tmp_path, capsys, monkeypatch,
                                              ending):
    data = ending.join([b"we see a boat", b"", b"so what do you think", b""])
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    code, _, _ = _restore(["-o", str(tmp_path / "out.txt")], tiny_artifact, capsys)
    written = (tmp_path / "out.txt").read_bytes()
    assert code == 0 and written.count(ending) == 3
    assert normalize(written.decode()) == "we see a boat so what do you think".split()


def test_a_text_file_with_carriage_returns_alone_keeps_its_lines(tiny_artifact, tmp_path,
                                                                   capsys):
    source = tmp_path / "mac.txt"
    source.write_bytes(b"we see a boat\r\rso what do you think\r")
    code, _, _ = _restore(["-i", str(source), "-o", str(tmp_path / "out.txt")], tiny_artifact,
                          capsys)
    lines = (tmp_path / "out.txt").read_bytes().split(b"\r")
    assert code == 0 and len(lines) == 4 and b"\n" not in b"".join(lines)
    assert [normalize(line.decode()) for line in lines] == [
        "we see a boat".split(), [], "so what do you think".split(), []]
    source.write_bytes(b"we see\nthe boat\rsails away\nso what\n")  # a stray CR: one line
    code, _, _ = _restore(["-i", str(source), "-o", str(tmp_path / "out.txt")], tiny_artifact,
                          capsys)
    assert code == 0 and (tmp_path / "out.txt").read_bytes().count(b"\n") == 3


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
def test_a_named_pipe_is_read_once_as_text(tiny_artifact, tmp_path, capsys):
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)

    def feed():
        with open(pipe, "w", encoding="utf-8") as handle:
            handle.write("we see a boat\nso what do you think\n")

    writer = threading.Thread(target=feed)
    writer.start()
    code, out, _ = _restore(["-i", str(pipe)], tiny_artifact, capsys)
    writer.join()
    lines = out.splitlines()
    assert code == 0 and len(lines) == 2 and normalize(lines[0]) == ["we", "see", "a", "boat"]


def test_dialogue_dashes_against_the_word_survive_a_restore(tiny_artifact, tmp_path, capsys):
    source = tmp_path / "d.srt"
    source.write_text("1\n00:00:01,000 --> 00:00:03,000\n-where are you going\n-home\n",
                      encoding="utf-8")
    code, out, _ = _restore(["-i", str(source)], tiny_artifact, capsys)
    lines = out.splitlines()
    assert code == 0 and lines[2].startswith("-W") and lines[3].startswith("-H")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
def test_a_named_pipe_is_told_apart_as_standard_input_is(tiny_artifact, tmp_path, capsys):
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    srt = "1\n00:00:01,000 --> 00:00:02,500\nwe see a boat\n"
    writer = threading.Thread(target=lambda: pipe.write_text(srt, encoding="utf-8"))
    writer.start()
    code, out, _ = _restore(["-i", str(pipe)], tiny_artifact, capsys)  # -i <(cat talk.srt)
    writer.join()
    assert code == 0 and out.splitlines()[:2] == ["1", "00:00:01,000 --> 00:00:02,500"]


@pytest.mark.parametrize("name", ["talk.sub", "talk.stl", "talk.scc.gz"])
def test_timed_text_formats_punctum_does_not_read_are_refused(tiny_artifact, tmp_path,
                                                               capsys, name):
    source = tmp_path / name
    source.write_bytes(b"0:00:00.000,0:00:02.000\nwe see a boat\n")
    code, out, err = _restore(["-i", str(source)], tiny_artifact, capsys)
    assert code == 2 and out == "" and "is not a format punctum reads" in err
    assert len(err.strip().splitlines()) == 1
    if not name.endswith(".gz"):
        code, out, _ = _restore(["-i", str(source), "--format", "text"], tiny_artifact, capsys)
        assert code == 0 and "boat" in out.lower()


def test_one_unreadable_file_among_several_does_not_stop_the_others(tiny_artifact, tmp_path,
                                                                      capsys):
    good, bad, other = (tmp_path / name for name in ("a.txt", "b.txt", "c.txt"))
    good.write_text(SAMPLE + "\n", encoding="utf-8")
    bad.write_bytes(b"caf\xe9 ok\n")  # Latin-1
    other.write_text("we see a boat\n", encoding="utf-8")
    out = tmp_path / "out"
    code, _, err = _restore(["-i", str(good), "-i", str(bad), "-i", str(other), "-o",
                             f"{out}/"], tiny_artifact, capsys)
    assert code == 1 and sorted(p.name for p in out.iterdir()) == ["a.txt", "c.txt"]
    assert "b.txt:1: not valid UTF-8" in err and "1 of 3 files failed" in err


def test_a_file_failing_half_way_among_several_to_stdout_writes_nothing(tiny_artifact,
                                                                         tmp_path, capsys):
    good, bad = tmp_path / "a.txt", tmp_path / "b.txt"
    good.write_text("we see a boat\r\n", encoding="utf-8")
    bad.write_bytes(b"so what do you think\n" * 300 + b"caf\xe9 ok\n")  # bad at line 301
    code, out, err = _restore(["-i", str(bad), "-i", str(good)], tiny_artifact, capsys)
    assert code == 1 and "b.txt:301: not valid UTF-8" in err
    assert normalize(out) == ["we", "see", "a", "boat"] and out.endswith("\r\n")
