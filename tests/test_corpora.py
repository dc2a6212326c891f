"""Readers: Che token format, one-document-per-line text, TSV, IWSLT XML (.gz transparent)."""

import gzip

import pytest

from punctum.corpora import (
    head_texts,
    is_validation,
    iter_documents,
    iter_lines,
    iter_tsv,
    iter_xml_segments,
    read_che,
    without_annotations,
)

CHE = "i\tO\n'm\tO\nhere\tCOMMA\nyou\tO\ndo\tO\nn't\tO\nknow\tQUESTION\nit\tO\n's\tPERIOD\n"


def _write(path, content: str, gz: bool = False):
    if gz:
        with gzip.open(path, "wt", encoding="utf-8") as handle:
            handle.write(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


@pytest.mark.parametrize("gz", [False, True])
def test_che_merges_contractions_and_maps_back(tmp_path, gz):
    path = _write(tmp_path / ("x.gz" if gz else "x"), CHE, gz)
    document = read_che(path)
    assert document.tokens[:2] == ("i", "'m")
    labelled = document.labelled()
    assert labelled.words == ("i'm", "here", "you", "don't", "know", "it's")
    assert labelled.post == ("O", "COMMA", "O", "O", "QUESTION", "PERIOD")
    assert document.expand(labelled.post) == document.labels
    with pytest.raises(ValueError, match="expected 6 word labels"):
        document.expand(("O",))


def test_che_empty_token_gives_its_mark_to_the_previous_token(tmp_path):
    document = read_che(_write(tmp_path / "x", "a\tO\n\tCOMMA\nb\tPERIOD\n"))
    assert document.tokens == ("a", "b") and document.labels == ("COMMA", "PERIOD")


@pytest.mark.parametrize(
    "content, message",
    [("a\tO\nb COMMA\n", "x:2: expected 'word<TAB>LABEL'"),
     ("a\tO\nb\tSEMICOLON\n", "x:2: unknown label 'SEMICOLON'")],
)
def test_che_errors_name_file_and_line(tmp_path, content, message):
    with pytest.raises(ValueError, match=message):
        read_che(_write(tmp_path / "x", content))


def test_missing_binary_and_bad_gzip_files(tmp_path):
    with pytest.raises(FileNotFoundError, match="no such file"):
        list(iter_lines(tmp_path / "missing.txt"))
    (tmp_path / "bin.txt").write_bytes(b"ok\n\xff\xfe\x00bad\n")
    with pytest.raises(ValueError, match="bin.txt:2: looks like a binary file"):
        list(iter_lines(tmp_path / "bin.txt"))
    (tmp_path / "plain.gz").write_bytes(b"not gzip at all\n")  # known by its bytes
    assert list(iter_lines(tmp_path / "plain.gz")) == ["not gzip at all"]
    (tmp_path / "zipped.txt").write_bytes(gzip.compress(b"so\nwhat\n"))
    assert list(iter_lines(tmp_path / "zipped.txt")) == ["so", "what"]
    (tmp_path / "bad.gz").write_bytes(gzip.compress(b"so what now " * 100)[:30])
    with pytest.raises(ValueError, match="bad.gz: cannot be read"):
        list(iter_lines(tmp_path / "bad.gz"))
    with pytest.raises(ValueError, match="is a directory"):
        list(iter_lines(tmp_path))


def test_documents_stream_lines(tmp_path):
    path = _write(tmp_path / "t.txt.gz", "Hello there. How are you?\n\nFine, thanks!\n", gz=True)
    documents = list(iter_documents(path))
    assert len(documents) == 2
    assert documents[1].words == ("fine", "thanks")
    assert documents[1].post == ("COMMA", "EXCLAMATION")


@pytest.mark.parametrize("line, cleaned", [
    ("Can you? AUDIENCE: No! THE PRESIDENT: You think so? (Applause.) Did you hear?",
     "Can you? No! You think so? Did you hear?"),
    ("THE PRESIDENT. Thank you. MR. SMITH. Well, I think so. Q (Inaudible.) THE PRESIDENT: Ok.",
     "Thank you. Well, I think so. Ok."),
    ("That was funny. (Laughter) So we went on. (Music: piano) Yes.",
     "That was funny. So we went on. Yes."),
    ("He met Mr. Smith at NASA: the U.S. team. I said OK. THE END",
     "He met Mr. Smith at NASA: the U.S. team. I said OK. THE END"),  # nothing to drop
])
def test_stage_directions_and_speaker_labels_are_dropped(line, cleaned):
    assert without_annotations(line) == cleaned


def test_clean_documents_skip_annotations(tmp_path):
    path = _write(tmp_path / "t.txt", "THE PRESIDENT: Thank you. (Laughter) So.\n")
    assert list(next(iter_documents(path, clean=True)).words) == ["thank", "you", "so"]
    assert "president" in next(iter_documents(path)).words


def test_tsv_rows_and_errors(tmp_path):
    path = _write(tmp_path / "t.tsv", "utt_id\tspeaker\ttext\nu1\ts1\tHi, you.\nu2\ts2\tYes?\n")
    rows = list(iter_tsv(path))
    assert [(r.id, r.speaker, r.text) for r in rows] == [("u1", "s1", "Hi, you."),
                                                          ("u2", "s2", "Yes?")]
    bad = _write(tmp_path / "b.tsv", "utt_id\ttext\nu1\tone\textra\n")
    with pytest.raises(ValueError, match="b.tsv:2: expected 2 columns"):
        list(iter_tsv(bad))
    with pytest.raises(ValueError, match="no 'utt_id' column"):
        list(iter_tsv(_write(tmp_path / "c.tsv", "id\tsentence\n")))


def test_xml_segments(tmp_path):
    xml = ('<mteval><srcset><doc docid="1"><seg id="1">  I\'m here,  now. </seg>\n'
           '<seg id="2">Why?</seg></doc></srcset></mteval>\n')
    assert list(iter_xml_segments(_write(tmp_path / "a.xml", xml))) == ["I'm here, now.", "Why?"]
    with pytest.raises(ValueError, match="no <seg> elements"):
        list(iter_xml_segments(_write(tmp_path / "b.xml", "<a></a>")))
    with pytest.raises(ValueError, match="malformed XML"):
        list(iter_xml_segments(_write(tmp_path / "c.xml", "<seg>open")))


def test_gzip_is_read_from_a_pipe_once(tmp_path):
    import os
    import threading

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    writer = threading.Thread(target=lambda: fifo.write_bytes(gzip.compress(b"so\nwhat\n")))
    writer.start()
    assert list(iter_lines(fifo)) == ["so", "what"]  # the bytes peeked at are not lost
    writer.join()


def test_head_texts_leave_out_the_validation_documents(tmp_path):
    path = tmp_path / "docs.txt"
    path.write_text("".join(f"document {i}.\n" for i in range(200)), encoding="utf-8")
    held = [i for i in range(150) if is_validation(i, str(path), 0.2)]
    texts = head_texts([{"path": str(path)}], 150, val_fraction=0.2)
    assert 0 < len(held) < 150 and len(texts) == 150 - len(held)
    assert not {f"document {i}." for i in held} & set(texts)
    assert head_texts([{"path": str(path)}], 150) == [f"document {i}." for i in range(150)]


def test_carriage_returns_alone_end_lines_and_stray_ones_stay(tmp_path):
    from punctum.corpora import iter_lines

    mac = tmp_path / "mac.txt"
    mac.write_bytes(b"one two\rthree\r\rfour\r")
    assert list(iter_lines(mac, keep_blank=True)) == ["one two", "three", "", "four"]
    mixed = tmp_path / "mixed.txt"
    mixed.write_bytes(b"one\rtwo\nthree\n")  # a line feed somewhere: a stray CR stays
    assert list(iter_lines(mixed)) == ["one\rtwo", "three"]
