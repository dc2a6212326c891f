"""Ensembles: several models restoring as one (punctum.ensemble, `punctum ensemble`)."""

import json
import shutil

import numpy as np
import pytest

from punctum.calibration import bias_vector
from punctum.cli import main
from punctum.ensemble import EnsemblePunctuator, write_ensemble
from punctum.runtime import Punctuator
from punctum.text import normalize

TEXT = "so what do you think i think it's great we met in new york last week"


@pytest.fixture(scope="module")
def pair(tiny_artifact, tmp_path_factory):
    """An ensemble of the tiny test model and the bundled en-tiny (same labels)."""
    return write_ensemble([str(tiny_artifact), "en-tiny"],
                          tmp_path_factory.mktemp("ensembles") / "pair")


def test_the_ensemble_averages_its_members(pair, tiny_artifact):
    ensemble = Punctuator.load(pair, threads=1)
    assert isinstance(ensemble, EnsemblePunctuator)
    members = [Punctuator.load(tiny_artifact, threads=1, post_bias={}),
               Punctuator.load("en-tiny", threads=1, post_bias={})]
    words = normalize(TEXT)
    got = ensemble.predict(words)
    alone = [m.predict(words) for m in members]
    np.testing.assert_allclose(got.post_probs, (alone[0].post_probs + alone[1].post_probs) / 2,
                               atol=1e-6)
    np.testing.assert_allclose(got.case_probs, (alone[0].case_probs + alone[1].case_probs) / 2,
                               atol=1e-6)
    assert got.post == tuple(ensemble.post_labels[i] for i in got.post_probs.argmax(-1))
    assert len(ensemble.model_files) == 2


def test_an_ensemble_restores_like_any_model(pair):
    ensemble = Punctuator.load(pair, threads=1)
    restored = ensemble.restore(TEXT)
    assert normalize(restored) == TEXT.split()
    assert ensemble.restore_batch([TEXT, ""]) == [restored, ""]
    stream = ensemble.stream(lookahead=3)
    pieces = [w for word in TEXT.split() for w in stream.feed(word)] + stream.flush()
    assert normalize(" ".join(pieces)) == TEXT.split()
    long_line = " ".join([TEXT] * 400)
    assert normalize(next(ensemble.restore_lines([long_line]))) == long_line.split()


def test_calibrate_and_restore_an_ensemble_folder(pair, tmp_path, capsys):
    folder = shutil.copytree(pair, tmp_path / "pair")
    # move-safe: the tiny member is stored relative to the ensemble folder
    meta = json.loads((folder / "punctum.json").read_text())
    assert meta["members"][1] == "en-tiny" and not meta["members"][0].startswith("/")
    dev = tmp_path / "dev.txt"
    dev.write_text("So, what do you think? I think it's great. We met in New York.\n" * 20)
    assert main(["calibrate", str(folder), "--dev", str(dev), "--threads", "1"]) == 0
    decision = json.loads((folder / "punctum.json").read_text())["decision"]
    loaded = Punctuator.load(folder)
    assert set(decision["post_bias"]) == set(loaded.post_labels[1:])
    expected = bias_vector(loaded.post_labels, decision["post_bias"])
    if expected.any():
        np.testing.assert_array_equal(loaded.post_bias, expected)
    capsys.readouterr()
    assert main(["restore", "--model", str(folder), TEXT]) == 0
    assert normalize(capsys.readouterr().out) == TEXT.split()


def test_bad_ensembles_fail_with_one_line(pair, tiny_artifact, tmp_path, capsys):
    assert main(["ensemble", "en-tiny", "--out", str(tmp_path / "one")]) == 2
    assert "at least two" in capsys.readouterr().err
    assert main(["ensemble", "en-tiny", "en-tiny", "--out", ""]) == 2
    assert "needs an output folder" in capsys.readouterr().err
    assert main(["ensemble", "en-tiny", str(pair), "--out", str(tmp_path / "nested")]) == 2
    assert "itself an ensemble" in capsys.readouterr().err
    other = shutil.copytree(tiny_artifact, tmp_path / "other")
    meta = json.loads((other / "punctum.json").read_text())
    meta["inventory"]["post_marks"] = meta["inventory"]["post_marks"][:2]
    (other / "punctum.json").write_text(json.dumps(meta))
    assert main(["ensemble", "en-tiny", str(other), "--out", str(tmp_path / "mixed")]) == 2
    assert "other labels" in capsys.readouterr().err
    # a member that has gone missing is named when the ensemble is loaded
    member = shutil.copytree(tiny_artifact, tmp_path / "member")
    folder = write_ensemble([str(member), "en-tiny"], tmp_path / "gone")
    shutil.rmtree(member)
    assert main(["restore", "--model", str(folder), TEXT]) == 2
    error = capsys.readouterr().err
    assert "member" in error and len(error.strip().splitlines()) == 1
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "punctum.json").write_text(json.dumps({**meta, "kind": "ensemble",
                                                      "members": ["en-tiny"]}))
    assert main(["restore", "--model", str(broken), TEXT]) == 2
    assert "two or more" in capsys.readouterr().err
    swapped = shutil.copytree(tiny_artifact, tmp_path / "swapped")  # made a member, then
    folder = write_ensemble([str(swapped), "en-tiny"], tmp_path / "swap")  # replaced by a
    meta = json.loads((swapped / "punctum.json").read_text())  # model of another language
    meta["inventory"]["language"] = "xx"
    (swapped / "punctum.json").write_text(json.dumps(meta))
    assert main(["restore", "--model", str(folder), TEXT]) == 2
    assert "is a 'xx' model" in capsys.readouterr().err


def test_an_ensemble_never_replaces_a_model_folder(pair, tiny_artifact, tmp_path, capsys):
    member = shutil.copytree(tiny_artifact, tmp_path / "member")
    before = (member / "punctum.json").read_text()
    assert main(["ensemble", "en-tiny", str(member), "--out", str(member)]) == 2
    assert "would replace" in capsys.readouterr().err
    assert (member / "punctum.json").read_text() == before
    again = shutil.copytree(pair, tmp_path / "again")  # an ensemble folder may be rewritten
    assert main(["ensemble", "en-tiny", str(member), "--out", str(again)]) == 0
    meta = json.loads((again / "punctum.json").read_text())  # unless it holds fitted biases
    (again / "punctum.json").write_text(json.dumps({**meta, "decision": {"post_bias": {}}}))
    capsys.readouterr()
    assert main(["ensemble", "en-tiny", str(member), "--out", str(again)]) == 2
    assert "fitted decision biases" in capsys.readouterr().err


def test_an_ensemble_pins_its_members_windows(pair, tmp_path):
    from punctum.artifact import update_meta
    from punctum.windows import WindowConfig

    pinned = tmp_path / "pinned"
    shutil.copytree(pair, pinned)
    update_meta(pinned, {"member_windows": {"en-tiny": {"size": 64, "left": 8, "right": 4}}})
    members = Punctuator.load(pinned, threads=1).members
    assert members[1].windows == WindowConfig(64, 8, 4)
    assert members[0].windows == Punctuator.load(members[0].artifact.path).windows  # its own
    given = Punctuator.load(pinned, threads=1, windows=WindowConfig(32, 4, 2))
    assert {m.windows for m in given.members} == {WindowConfig(32, 4, 2)}  # given wins
    assert Punctuator.load("en-ensemble").members[1].windows == WindowConfig(400, 16, 8)
    update_meta(pinned, {"member_windows": {"en-tiny": {"size": 64}}})
    with pytest.raises(ValueError, match=r"pinned/punctum.json: member_windows.en-tiny must be"):
        Punctuator.load(pinned)
    update_meta(pinned, {"member_windows": [1]})
    with pytest.raises(ValueError, match=r"pinned/punctum.json: member_windows must be an obj"):
        Punctuator.load(pinned)


def test_a_member_that_cannot_load_is_refused_at_once(tiny_artifact, tmp_path):
    import shutil

    broken = tmp_path / "broken"
    shutil.copytree(tiny_artifact, broken)
    (broken / "model.onnx").write_bytes((broken / "model.onnx").read_bytes()[:1000])
    with pytest.raises(ValueError, match="model.onnx"):
        write_ensemble([str(tiny_artifact), str(broken)], tmp_path / "ensemble")
    assert not (tmp_path / "ensemble").exists()
