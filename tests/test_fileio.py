"""Atomic writes: all or nothing, text/gzip/binary, stale temporary files."""

import gzip
import os

import pytest

from punctum.fileio import TEMP_SUFFIX, atomic_writer, remove_stale


def test_complete_file_or_the_old_one(tmp_path):
    target = tmp_path / "sub" / "out.txt"
    with atomic_writer(target) as handle:
        handle.write("first\r\nline\n")
    assert target.read_bytes() == b"first\r\nline\n"  # newlines written as given
    with pytest.raises(RuntimeError), atomic_writer(target) as handle:
        handle.write("half")
        raise RuntimeError("killed")
    assert target.read_bytes() == b"first\r\nline\n"
    assert os.listdir(target.parent) == ["out.txt"]  # no temporary file left


def test_gzip_binary_and_links(tmp_path):
    with atomic_writer(tmp_path / "a.txt.gz") as handle:
        handle.write("zipped\n")
    assert gzip.open(tmp_path / "a.txt.gz", "rt").read() == "zipped\n"
    with atomic_writer(tmp_path / "b.bin", binary=True) as handle:
        handle.write(b"\x00\xff")
    assert (tmp_path / "b.bin").read_bytes() == b"\x00\xff"
    (tmp_path / "link.txt").symlink_to(tmp_path / "b.bin")
    with atomic_writer(tmp_path / "link.txt") as handle:
        handle.write("new")
    assert (tmp_path / "link.txt").is_symlink() and (tmp_path / "b.bin").read_text() == "new"


def test_remove_stale_only_touches_the_targets_temporaries(tmp_path):
    (tmp_path / f".last.pt.1234abcd{TEMP_SUFFIX}").write_text("dead")
    (tmp_path / f".other.pt.1234abcd{TEMP_SUFFIX}").write_text("someone else's")
    (tmp_path / "last.pt").write_text("ok")
    assert remove_stale(tmp_path / "last.pt") == 1
    assert sorted(os.listdir(tmp_path)) == [f".other.pt.1234abcd{TEMP_SUFFIX}", "last.pt"]


def test_an_unwritable_target_is_named_not_its_temporary_file(tmp_path, monkeypatch):
    def refuse(path, *args):
        raise PermissionError(13, "Permission denied", path)

    monkeypatch.setattr(os, "open", refuse)
    with pytest.raises(PermissionError) as caught:
        with atomic_writer(tmp_path / "out.txt") as handle:
            handle.write("x")
    assert caught.value.filename == os.path.realpath(tmp_path / "out.txt")
    assert TEMP_SUFFIX not in str(caught.value)


def test_a_file_in_the_folder_path_is_named(tmp_path):
    (tmp_path / "a.txt").write_text("x", encoding="utf-8")
    with pytest.raises(NotADirectoryError, match=r"a.txt is a file, not a folder"):
        with atomic_writer(tmp_path / "a.txt" / "deeper" / "out.txt") as handle:
            handle.write("x")


def test_an_upper_case_gz_name_is_gzipped_too(tmp_path):
    import gzip

    from punctum.batch import output_name

    with atomic_writer(tmp_path / "out.TXT.GZ") as handle:
        handle.write("so what\n")
    assert gzip.decompress((tmp_path / "out.TXT.GZ").read_bytes()) == b"so what\n"
    assert output_name("a.txt.GZ", "text", "text") == "a.txt"
