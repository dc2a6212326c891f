"""Decision biases: fitting on a dev set, applying them in the runtime, `punctum calibrate`."""

import json
import shutil

import numpy as np
import pytest

from punctum import metrics
from punctum.calibration import bias_vector, decide, fit_post_bias, micro_f1
from punctum.cli import main
from punctum.runtime import Punctuator

LABELS = ("O", "COMMA", "PERIOD", "QUESTION", "EXCLAMATION")


def _timid_model(n: int = 4000, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Probabilities of a model that knows where commas go but under-predicts them:
    at every true comma, COMMA gets 0.4 and O 0.6 (argmax misses them all)."""
    rng = np.random.default_rng(seed)
    ref = rng.choice(len(LABELS) - 1, size=n, p=[0.8, 0.1, 0.08, 0.02])
    probs = np.full((n, len(LABELS)), 0.01, dtype=np.float32)
    probs[np.arange(n), ref] = 0.9
    comma = ref == 1
    probs[comma, 0], probs[comma, 1] = 0.55, 0.4
    return probs / probs.sum(1, keepdims=True), ref


def test_micro_f1_matches_the_scorer():
    rng = np.random.default_rng(1)
    ref, hyp = rng.integers(0, 4, 500), rng.integers(0, 4, 500)
    names = np.asarray(LABELS[:4])
    expected = metrics.score_labels(names[ref], names[hyp], LABELS[:4], "O").overall.f1
    assert micro_f1(hyp, ref) == pytest.approx(expected)


def test_fit_recovers_the_missed_marks_and_never_lowers_f1():
    probs, ref = _timid_model()
    fit = fit_post_bias(probs, ref, LABELS)
    assert fit.f1_before < 0.9 and fit.f1_after == pytest.approx(1.0)
    assert fit.bias["COMMA"] > np.log(0.55 / 0.4)  # enough to flip every true comma
    held_out, held_ref = _timid_model(seed=5)
    assert micro_f1(decide(held_out, bias_vector(LABELS, fit.bias)), held_ref) == 1.0


def test_fixed_labels_keep_zero_and_scored_as_maps_classes():
    probs, ref = _timid_model()
    probs[:50, 4] = 0.99  # EXCLAMATION where the dev set says PERIOD or O
    fit = fit_post_bias(probs, ref, LABELS, scored_as=[0, 1, 2, 3, 2], fixed={"EXCLAMATION"})
    assert fit.bias["EXCLAMATION"] == 0.0
    with pytest.raises(ValueError, match="no marks"):
        fit_post_bias(probs, np.zeros(len(probs), dtype=int), LABELS)


def test_zero_bias_is_plain_argmax():
    probs, _ = _timid_model()
    assert (decide(probs, None) == probs.argmax(-1)).all()
    assert (decide(probs, np.zeros(len(LABELS), np.float32)) == probs.argmax(-1)).all()


@pytest.mark.parametrize("bias, message", [
    ({"SEMICOLON": 1.0}, "unknown label 'SEMICOLON'"),
    ({"COMMA": "a lot"}, "COMMA must be a finite number"),
    ({"COMMA": float("nan")}, "COMMA must be a finite number"),
    ({"O": 1.0}, "the null label O"),
])
def test_bad_biases_are_one_line_errors(bias, message):
    with pytest.raises(ValueError, match=message):
        bias_vector(LABELS, bias)


def _copy(artifact, target):
    shutil.copytree(artifact, target)
    return target


def _set_decision(folder, decision) -> None:
    path = folder / "punctum.json"
    meta = json.loads(path.read_text())
    meta["decision"] = decision
    path.write_text(json.dumps(meta))


def test_runtime_applies_the_artifacts_bias(tiny_artifact, tmp_path):
    text = "so what do you think i think it's great we went home and then we slept"
    plain = Punctuator.load(tiny_artifact, threads=1)
    folder = _copy(tiny_artifact, tmp_path / "biased")
    _set_decision(folder, {"post_bias": {"COMMA": 30.0}})
    biased = Punctuator.load(folder, threads=1)
    words = plain.predict(text.split())
    marks = biased.predict(text.split())
    assert np.array_equal(marks.post_probs, words.post_probs)  # probabilities unchanged
    assert set(marks.post) == {"COMMA"} and set(words.post) != {"COMMA"}
    assert Punctuator.load(folder, threads=1, post_bias={}).predict(text.split()).post \
        == words.post


def test_bad_decision_in_punctum_json_names_the_file(tiny_artifact, tmp_path):
    folder = _copy(tiny_artifact, tmp_path / "bad")
    _set_decision(folder, {"post_bias": {"SEMICOLON": 1}})
    with pytest.raises(ValueError, match=r"punctum.json: decision.post_bias: unknown label"):
        Punctuator.load(folder)
    for decision in ({"post_bias": [1, 2]}, "biased"):
        _set_decision(folder, decision)
        with pytest.raises(ValueError, match="must be an object"):
            Punctuator.load(folder)


def test_calibrate_cli_fits_writes_and_never_loses_scores(tiny_artifact, tmp_path, capsys):
    folder = _copy(tiny_artifact, tmp_path / "model")
    dev = tmp_path / "dev.txt"
    dev.write_text("So, what do you think? I think it's great. We went home, and then we "
                   "slept. Do you like the house? Well, I see my car.\n" * 40)
    before = json.loads((folder / "punctum.json").read_text())
    assert main(["calibrate", str(folder), "--dev", str(dev), "--dry-run"]) == 0
    assert "decision" not in json.loads((folder / "punctum.json").read_text())
    assert main(["calibrate", str(folder), "--dev", str(dev)]) == 0
    out = capsys.readouterr().out
    meta = json.loads((folder / "punctum.json").read_text())
    decision = meta.pop("decision")
    assert meta == before
    assert decision["fitted_on"] == "dev.txt" and decision["words"] == 40 * 26
    assert decision["dev_f1_after"] >= decision["dev_f1_before"]
    assert f"{decision['dev_f1_after']:.2f}" in out
    assert ("out of date" in out) == bool(before.get("scores"))  # (said where scores are)
    Punctuator.load(folder)  # what it wrote loads


@pytest.mark.parametrize("setup, message", [
    ("bundled", "not a model folder"),
    ("unmarked", "no marks to fit"),
    ("missing", "no such file"),
])
def test_calibrate_errors_are_one_line(tiny_artifact, tmp_path, capsys, setup, message):
    folder = _copy(tiny_artifact, tmp_path / "model")
    dev = tmp_path / "dev.txt"
    dev.write_text("no marks at all here just words\n")
    args = ["calibrate", str(folder), "--dev", str(dev)]
    if setup == "bundled":
        args[1] = "en-tiny"
    elif setup == "missing":
        args[3] = str(tmp_path / "nope.txt")
    assert main(args) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


def test_restore_cli_bias_and_no_bias(tiny_artifact, tmp_path, capsys):
    folder = _copy(tiny_artifact, tmp_path / "biased")
    _set_decision(folder, {"post_bias": {"COMMA": 30.0}})
    text = "so what do you think i think it's great we went home and then we slept"
    plain = Punctuator.load(folder, threads=1, post_bias={}).restore(text)
    assert main(["restore", "-m", str(folder), "--threads", "1", "--no-bias", text]) == 0
    assert capsys.readouterr().out.strip() == plain
    assert main(["restore", "-m", str(tiny_artifact), "--threads", "1", "--bias", "comma=30",
                 text]) == 0
    out = capsys.readouterr().out.strip()
    assert out.count(",") == len(text.split()) - 1 and plain.count(",") < out.count(",")


def test_folder_workers_get_the_bias(tiny_artifact, tmp_path, capsys):
    source = tmp_path / "in"
    source.mkdir()
    for name in ("a", "b"):
        (source / f"{name}.txt").write_text("we went home and then we slept it was late\n")
    code = main(["restore", "-m", str(tiny_artifact), "--input-dir", str(source),
                 "--output-dir", str(tmp_path / "out"), "--jobs", "2", "--bias", "COMMA=30",
                 "--no-progress"])
    assert code == 0, capsys.readouterr().err
    for name in ("a", "b"):
        assert (tmp_path / "out" / f"{name}.txt").read_text().count(",") == 9


@pytest.mark.parametrize("args, message", [
    (["--bias", "COMMA=1", "--no-bias"], "give one of them"),
    (["--bias", "COMMA=1", "--bias", "comma=2"], "a mark is given twice"),
    (["--bias", "SEMICOLON=1"], "unknown label 'SEMICOLON'"),
])
def test_bias_errors_are_one_line(tiny_artifact, tmp_path, capsys, args, message):
    assert main(["restore", "-m", str(tiny_artifact), *args, "some words"]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.txt").write_text("some words\n")
    code = main(["restore", "-m", str(tiny_artifact), *args, "--input-dir", str(tmp_path / "in"),
                 "--output-dir", str(tmp_path / "out")])
    assert code == 2 and message in capsys.readouterr().err


@pytest.mark.parametrize("value", ["COMMA", "COMMA=x", "=1", "COMMA=inf"])
def test_malformed_bias_is_a_usage_error(value, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["restore", "--bias", value, "some words"])
    assert exit_info.value.code == 2 and "MARK=OFFSET" in capsys.readouterr().err


def test_the_dev_score_is_the_score_of_restoring_its_lines(tiny_artifact, tmp_path):
    from punctum.calibration import fit_on_dev
    from punctum.evaluation import EvalOptions, evaluate_files, load_scored
    from punctum.text import normalize

    lines = ["So, what do you think? I think it is great.",
             "We met in New York last week, it was raining.",
             "Well, I think that in the end we should just try it and see what happens."]
    dev = tmp_path / "dev.txt"
    dev.write_text("\n".join(lines) + "\n", encoding="utf-8")
    punctuator = Punctuator.load(tiny_artifact, threads=1, post_bias={})
    fit = fit_on_dev(punctuator, load_scored(dev))
    hyp = tmp_path / "hyp.txt"
    hyp.write_text("\n".join(punctuator.restore_batch([" ".join(normalize(line))
                                                       for line in lines])) + "\n")
    scores = evaluate_files(dev, hyp, EvalOptions())
    assert fit.f1_before == pytest.approx(scores.punct.overall.f1)


def test_the_ascent_also_starts_from_given_offsets_and_keeps_the_best_end():
    rng = np.random.default_rng(3)
    labels = ("O", "COMMA", "PERIOD", "QUESTION")
    probs = rng.dirichlet([4, 1, 1, 0.3], size=400)
    ref = np.where(rng.random(400) < 0.7, probs.argmax(-1), rng.integers(0, 4, 400))
    start = {"COMMA": 0.9, "PERIOD": -0.4, "QUESTION": 1.7}
    alone = fit_post_bias(probs, ref, labels)
    both = fit_post_bias(probs, ref, labels, starts=[start])
    at_start = micro_f1((np.log(probs) + bias_vector(labels, start)).argmax(-1), ref)
    assert both.f1_after >= max(alone.f1_after, at_start)
    assert both.f1_before == alone.f1_before  # still measured without offsets


@pytest.mark.parametrize("decision", [{"post_bias": {"COMMA": float("nan")}},
                                      {"post_bias": [1, 2]}])
def test_calibrate_refits_over_broken_biases(tiny_artifact, tmp_path, caplog, decision):
    folder = _copy(tiny_artifact, tmp_path / "model")
    _set_decision(folder, decision)
    dev = tmp_path / "dev.txt"
    dev.write_text("So, what do you think? I think it's great. We went home.\n" * 20)
    assert main(["calibrate", str(folder), "--dev", str(dev)]) == 0
    assert "punctum.json: decision.post_bias" in caplog.text
    Punctuator.load(folder)  # the biases written in their place load
