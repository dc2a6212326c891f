"""Self-training: discriminative loss, pool overlap check, pseudo labels, rounds."""

import dataclasses
import random
import tomllib

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import torch.nn.functional as F  # noqa: E402
from conftest import TINY_RECIPE, make_document  # noqa: E402

from punctum.models.cnn_bilstm import CnnBiLstm, CnnBiLstmConfig  # noqa: E402
from punctum.models.losses import tagging_loss, weighted_cross_entropy  # noqa: E402
from punctum.text import normalize  # noqa: E402
from punctum.train import selftrain as st  # noqa: E402
from punctum.train.batching import WindowSampler  # noqa: E402
from punctum.train.data import EncodedCorpus  # noqa: E402
from punctum.train.recipe import parse_recipe  # noqa: E402
from punctum.train.trainer import row_settings  # noqa: E402


def test_tensor_smoothing_equals_scalar_smoothing():
    gen = torch.Generator().manual_seed(0)
    logits = torch.randn(3, 7, 4, generator=gen)
    targets = torch.randint(0, 4, (3, 7), generator=gen)
    targets[0, :2] = -100
    expected = weighted_cross_entropy(logits, targets, label_smoothing=0.2)
    got = weighted_cross_entropy(logits, targets, label_smoothing=torch.full((3, 1), 0.2))
    assert torch.allclose(expected, got, atol=1e-6)


def test_per_row_smoothing_is_the_rows_own():
    gen = torch.Generator().manual_seed(1)
    logits = torch.randn(2, 5, 4, generator=gen)
    targets = torch.randint(0, 4, (2, 5), generator=gen)
    betas = torch.tensor([[0.1], [0.3]])
    got = weighted_cross_entropy(logits, targets, label_smoothing=betas)
    rows = [F.cross_entropy(logits[i], targets[i], label_smoothing=float(betas[i]),
                            reduction="sum") for i in range(2)]
    assert torch.allclose(got, sum(rows) / 10, atol=1e-6)


def tiny_model():
    torch.manual_seed(0)
    config = CnnBiLstmConfig(vocab_size=50, n_punct=4, n_case=3, embed_dim=8, conv_channels=8,
                             bilstm_hidden=8, lstm_hidden=8, dropout=0.0)
    return CnnBiLstm(config)


def grads_of(model, ids, lengths, punct, case, weights=None, smoothing=0.0):
    model.zero_grad()
    p, c = model(ids, lengths)
    loss = tagging_loss(p, c, punct, case, weights, weights, smoothing)
    loss.backward()
    return loss.detach(), [q.grad.clone() for q in model.parameters() if q.grad is not None]


def test_alpha_zero_beta_zero_reduce_to_human_only_training():
    """Pseudo rows with alpha = 0 change neither the loss nor the gradients."""
    gen = torch.Generator().manual_seed(2)
    ids = torch.randint(1, 50, (4, 9), generator=gen)
    lengths = torch.full((4,), 9)
    punct = torch.randint(0, 4, (4, 9), generator=gen)
    case = torch.randint(0, 3, (4, 9), generator=gen)
    model = tiny_model()
    human_loss, human_grads = grads_of(model, ids[:2], lengths[:2], punct[:2], case[:2])
    weights = torch.tensor([[1.0], [1.0], [0.0], [0.0]]).expand(4, 9)
    mixed_loss, mixed_grads = grads_of(model, ids, lengths, punct, case, weights,
                                       torch.zeros(4, 1))
    assert torch.allclose(human_loss, mixed_loss, atol=1e-6)
    for a, b in zip(human_grads, mixed_grads):
        assert torch.allclose(a, b, atol=1e-6)


def corpus_of(n_words: int, offset: int) -> EncodedCorpus:
    ids = np.arange(offset, offset + n_words, dtype=np.int32) % 40 + 5
    labels = np.zeros(n_words, dtype=np.int8)
    return EncodedCorpus(ids, labels, labels, np.ones(n_words, bool),
                         np.array([0, n_words], dtype=np.int64))


def test_sampler_rows_carry_their_sources_weight_and_smoothing():
    sampler = WindowSampler([corpus_of(300, 0), corpus_of(300, 1000)], [1.0, 1.0], 20,
                            (1, 2, 0), seed=0, loss_weights=[1.0, 0.5], smoothing=[0.1, 0.2])
    batch = sampler.next_batch(64)
    from_second = batch.row_weight == 0.5
    assert 0 < from_second.sum() < 64
    assert np.allclose(batch.row_smoothing[from_second], 0.2)
    assert np.allclose(batch.row_smoothing[~from_second], 0.1)
    weights, smoothing = row_settings(batch, 0.0, "cpu")
    assert weights.shape == batch.punct.shape and smoothing.shape == (64, 1)
    plain = WindowSampler([corpus_of(300, 0)], [1.0], 20, (1, 2, 0)).next_batch(4)
    assert plain.row_weight is None and plain.row_smoothing is None


def write_lines(path, lines):
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return str(path)


def test_overlap_check_refuses_shared_ngrams(tmp_path):
    rng = random.Random(5)
    evaluation = write_lines(tmp_path / "eval.txt", [make_document(rng, 6) for _ in range(5)])
    leaked = " ".join(normalize(open(evaluation).readline())[:12])
    grams = st.eval_ngrams([evaluation], 8)
    clean_pool = ["completely different words about rivers and mountains and the sea today"]
    assert st.check_overlap(clean_pool, grams) == 0
    with pytest.raises(ValueError, match=r"overlaps the evaluation files: \d+ shared 8-grams"):
        st.check_overlap(clean_pool + [f"hello {leaked.lower()} bye"], grams)
    assert st.check_overlap([leaked.lower()], grams, max_shared=100) > 0


def test_pool_strips_marks_and_case(tmp_path):
    pool = write_lines(tmp_path / "pool.txt", ["Hello, World! How are you?", "", "OK."])
    assert list(st.iter_pool_documents([pool])) == ["hello world how are you", "ok"]


def selftrain_config(tmp_path, **fields):
    rng = random.Random(11)
    pool = write_lines(tmp_path / "pool_src.txt", [make_document(rng, 4) for _ in range(30)])
    return st.SelfTrainConfig(pool=(pool,), chunk_documents=8, threads=1, **fields)


def test_pseudo_labels_are_deterministic_and_resume(tmp_path, tiny_artifact, monkeypatch):
    config = selftrain_config(tmp_path)
    pool = st.build_pool(config, tmp_path)
    clean = st.pseudo_label(tiny_artifact, pool, tmp_path / "a", config, progress=False)
    again = st.pseudo_label(tiny_artifact, pool, tmp_path / "b", config, progress=False)
    assert clean.stat().st_size > 0
    import gzip

    text = gzip.open(clean, "rt").read()
    assert text == gzip.open(again, "rt").read()
    pool_words = [w for line in gzip.open(pool, "rt") for w in line.split()]
    assert [w.lower() for w in normalize(text)] == pool_words  # every word, in order

    calls = {"n": 0}
    real = st.pseudo_label_texts

    def interrupted(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(st, "pseudo_label_texts", interrupted)
    with pytest.raises(KeyboardInterrupt):
        st.pseudo_label(tiny_artifact, pool, tmp_path / "c", config, progress=False)
    assert len(list((tmp_path / "c").glob("part-*.txt"))) == 2
    assert not (tmp_path / "c" / "pseudo.txt.gz").exists()
    monkeypatch.setattr(st, "pseudo_label_texts", real)
    resumed = st.pseudo_label(tiny_artifact, pool, tmp_path / "c", config, progress=False)
    assert gzip.open(resumed, "rt").read() == text
    picky = dataclasses.replace(config, min_confidence=0.999999)
    with pytest.raises(ValueError, match="min_confidence 0.999999 is too high"):
        st.pseudo_label(tiny_artifact, pool, tmp_path / "d", picky, progress=False)


def test_confidence_filter_keeps_whole_sentences(tmp_path, tiny_artifact):
    from punctum.runtime import Punctuator

    punctuator = Punctuator.load(tiny_artifact, threads=1)
    rng = random.Random(3)
    docs = [" ".join(normalize(make_document(rng, 5))).lower() for _ in range(6)]
    everything = st.pseudo_label_texts(punctuator, docs, 0.0)
    strict = st.pseudo_label_texts(punctuator, docs, 0.999999)
    loose = st.pseudo_label_texts(punctuator, docs, 0.01)
    assert len(everything) == 6
    assert sum(len(normalize(t)) for t in strict) < sum(len(normalize(t)) for t in everything)
    assert [w for t in loose for w in normalize(t)] == [w for t in everything
                                                        for w in normalize(t)]


def test_selftrain_round_end_to_end(tmp_path, tiny_corpus, tiny_run):
    raw = tomllib.loads(TINY_RECIPE)
    raw["train"].update(steps=12, eval_every=6, checkpoint_every=6)
    recipe = parse_recipe(raw, tiny_corpus, name="tiny")
    config = selftrain_config(tmp_path, teacher=str(tiny_run / "best.pt"), rounds=1,
                              alpha=0.5, beta_human=0.1, beta_pseudo=0.2,
                              eval_files=(str(tiny_corpus / "dev.che"),), max_shared_ngrams=10**6)
    summary = st.selftrain(recipe, config, tmp_path / "st", progress=False)
    assert [r["round"] for r in summary["rounds"]] == [0, 1]
    assert (tmp_path / "st" / "best.pt").exists()
    student = tmp_path / "st" / "round-1" / "student"
    assert (student / "best.pt").exists()
    from punctum.train.checkpoint import load_checkpoint

    sources = load_checkpoint(student / "best.pt")["recipe"]["data"]["sources"]
    assert sources[-1]["loss_weight"] == 0.5 and sources[-1]["label_smoothing"] == 0.2
    assert sources[0]["label_smoothing"] == 0.1
    # a re-run reuses every finished round
    assert st.selftrain(recipe, config, tmp_path / "st", progress=False)["rounds"] == \
        summary["rounds"]
    other = tmp_path / "other" / "best.pt"  # another checkpoint teacher: refused
    other.parent.mkdir()
    other.write_bytes((tiny_run / "best.pt").read_bytes())
    with pytest.raises(ValueError, match="started with the teacher"):
        st.selftrain(recipe, dataclasses.replace(config, teacher=str(other)), tmp_path / "st",
                     progress=False)
    # another alpha (or pool, or recipe) would reuse the old pool and rounds: refused
    with pytest.raises(ValueError, match=r"other settings \(alpha differ\)"):
        st.selftrain(recipe, dataclasses.replace(config, alpha=1.0), tmp_path / "st",
                     progress=False)
    fresh = tmp_path / "fresh"  # settings may change while nothing is built in a folder
    fresh.mkdir()
    st._check_settings(fresh, recipe, config)
    st._check_settings(fresh, recipe, dataclasses.replace(config, alpha=1.0))
    for field, value in (("max_shared_ngrams", -1), ("max_pool_documents", -1),
                         ("ngram", 100000)):
        with pytest.raises(ValueError, match=f"selftrain.{field}"):
            dataclasses.replace(config, **{field: value})


def test_weights_are_scored_as_their_run_scored_them(tiny_corpus, tiny_run, tiny_artifact):
    from punctum.train.checkpoint import load_checkpoint
    from punctum.train.trainer import score_weights

    recipe = parse_recipe(tomllib.loads(TINY_RECIPE), tiny_corpus, name="tiny")
    recorded = load_checkpoint(tiny_run / "best.pt")["state"]["best_f1"]
    assert score_weights(recipe, tiny_run / "best.pt")["punct_f1"] == pytest.approx(recorded)
    # the int8 artifact of the same run, read back: within int8 noise of the checkpoint
    assert abs(score_weights(recipe, tiny_artifact)["punct_f1"] - recorded) < 0.05


def test_selftrain_from_an_artifact_teacher(tmp_path, tiny_corpus, tiny_artifact):
    from punctum.train.checkpoint import load_checkpoint

    raw = tomllib.loads(TINY_RECIPE)
    raw["train"].update(steps=6, eval_every=6, checkpoint_every=6)
    recipe = parse_recipe(raw, tiny_corpus, name="tiny")
    config = selftrain_config(tmp_path, teacher=str(tiny_artifact), rounds=1,
                              student_init="teacher", max_shared_ngrams=10**6,
                              eval_files=(str(tiny_corpus / "dev.che"),))
    summary = st.selftrain(recipe, config, tmp_path / "st", progress=False)
    assert summary["rounds"][0]["checkpoint"] == str(tiny_artifact)
    assert not (tmp_path / "st" / "round-1" / "teacher").exists()  # labels from the artifact
    student = load_checkpoint(tmp_path / "st" / "round-1" / "student" / "best.pt")
    assert student["recipe"]["train"]["init_from"] == str(tiny_artifact)
    assert (tmp_path / "st" / "best.pt").exists() == (summary["best_round"] == 1)
    again = st.selftrain(recipe, config, tmp_path / "st", progress=False)
    assert again["rounds"] == summary["rounds"]  # round 0 is not measured twice
    other = dataclasses.replace(config, teacher="en-tiny")
    with pytest.raises(ValueError, match="started with the teacher"):
        st.selftrain(recipe, other, tmp_path / "st", progress=False)


def test_an_ensemble_is_no_selftraining_teacher(tmp_path, tiny_corpus):
    recipe = parse_recipe(tomllib.loads(TINY_RECIPE), tiny_corpus, name="tiny")
    config = selftrain_config(tmp_path, teacher="en-ensemble")
    with pytest.raises(ValueError, match="ensemble"):
        st.selftrain(recipe, config, tmp_path / "st", progress=False)


def test_selftrain_recipe_errors(tmp_path, tiny_corpus):
    recipe = tmp_path / "r.toml"
    recipe.write_text(TINY_RECIPE)
    with pytest.raises(ValueError, match="no \\[selftrain\\] table"):
        st.load_selftrain_recipe(recipe, tiny_corpus)
    recipe.write_text(TINY_RECIPE + '\n[selftrain]\npool = ["missing.txt"]\n')
    with pytest.raises(FileNotFoundError, match="selftrain.pool"):
        st.load_selftrain_recipe(recipe, tiny_corpus)
    recipe.write_text(TINY_RECIPE + '\n[selftrain]\npool = ["train.txt"]\nalpah = 1\n')
    with pytest.raises(ValueError, match="unknown key selftrain.alpah"):
        st.load_selftrain_recipe(recipe, tiny_corpus)
    for table, message in (('pool = [5]', "selftrain.pool must be a list of file paths"),
                           ('pool = ["train.txt"]\nalpha = nan',
                            "selftrain.alpha must be a finite number"),
                           ('alpha = 1.0', "selftrain.pool is required"),
                           ('pool = ["train.txt"]\nthreads = 100000',
                            "selftrain.threads must be from 0")):
        recipe.write_text(TINY_RECIPE + f"\n[selftrain]\n{table}\n")
        with pytest.raises(ValueError, match=message):
            st.load_selftrain_recipe(recipe, tiny_corpus)


@pytest.mark.parametrize("content", [torch.zeros(3), [1, 2], {"model": {}}],
                         ids=["tensor", "list", "no-recipe"])
def test_a_teacher_that_is_no_checkpoint_is_one_line(tmp_path, tiny_corpus, content):
    from punctum.train.checkpoint import save_atomic

    save_atomic(content, tmp_path / "teacher.pt")
    recipe = parse_recipe(tomllib.loads(TINY_RECIPE), tiny_corpus, name="tiny")
    config = selftrain_config(tmp_path, teacher=str(tmp_path / "teacher.pt"))
    with pytest.raises(ValueError, match="teacher.pt: not a punctum training checkpoint"):
        st.selftrain(recipe, config, tmp_path / "st", progress=False)


def test_a_folder_begun_with_a_teacher_is_not_continued_without_it(tmp_path, tiny_corpus):
    recipe = parse_recipe(tomllib.loads(TINY_RECIPE), tiny_corpus, name="tiny")
    out = tmp_path / "st"
    (out / "round-0").mkdir(parents=True)
    (out / "round-0" / "round.json").write_text('{"dev_f1": 0.5, "teacher": "en-tiny"}')
    config = selftrain_config(tmp_path)
    with pytest.raises(ValueError, match="started with the teacher en-tiny: give --teacher "
                                         "en-tiny"):
        st._round_zero(recipe, config, out, out / "cache", progress=False)
    (out / "round-0" / "round.json").write_text('{"dev_f1": 0.5}')  # round 0 trained there
    with pytest.raises(ValueError, match="started with a teacher it trained"):
        st._round_zero(recipe, dataclasses.replace(config, teacher="en-tiny"), out,
                       out / "cache", progress=False)


def test_warm_started_students_start_from_their_teacher(tmp_path, tiny_corpus):
    recipe = parse_recipe(tomllib.loads(TINY_RECIPE), tiny_corpus, name="tiny")
    config = selftrain_config(tmp_path, student_init="teacher",
                              student_train={"steps": 7, "lr": 3e-5})
    student = st.student_recipe(recipe, tmp_path / "pseudo.txt.gz", config, "teacher.pt")
    assert student.train.init_from == "teacher.pt"
    assert (student.train.steps, student.train.lr) == (7, 3e-5)
    assert student.train.batch_size == recipe.train.batch_size
    assert student.data.sources[-1].path.endswith("pseudo.txt.gz")
    control = st.student_recipe(recipe, None, config, "teacher.pt")  # labelled data only
    assert len(control.data.sources) == len(recipe.data.sources)
    assert control.train == student.train
    # the paper's setting: students start where the teacher started
    same = st.student_recipe(recipe, None, selftrain_config(tmp_path), "teacher.pt")
    assert same.train.init_from == recipe.train.init_from


def test_student_train_overrides_are_checked(tmp_path, tiny_corpus):
    recipe = tmp_path / "r.toml"
    recipe.write_text(TINY_RECIPE + '\n[selftrain]\npool = ["train.txt"]\n'
                      'student_train = {stpes = 10}\n')
    with pytest.raises(ValueError, match="unknown key selftrain.student_train.stpes"):
        st.load_selftrain_recipe(recipe, tiny_corpus)
    recipe.write_text(TINY_RECIPE + '\n[selftrain]\npool = ["train.txt"]\n'
                      'student_init = "scratch"\n')
    with pytest.raises(ValueError, match="student_init must be one of"):
        st.load_selftrain_recipe(recipe, tiny_corpus)


def test_pool_word_cap_keeps_whole_documents_in_order():
    documents = [" ".join(f"w{i}" for _ in range(n)) for i, n in enumerate([5, 3, 8, 2, 6, 4])]
    kept = st.subsample_words(documents, 12)
    assert sum(len(d.split()) for d in kept) <= 12 and kept
    assert kept == [d for d in documents if d in kept]  # original order, whole documents
    assert st.subsample_words(documents, 12) == kept  # seeded
    assert st.subsample_words(documents, 10**6) == documents


@pytest.mark.parametrize("content", ["", "{}", '{"dev_f1": "high"}', "[1]"])
def test_a_broken_round_record_is_named(tmp_path, content):
    summary = tmp_path / "round.json"
    summary.write_text(content)
    with pytest.raises(ValueError, match="round.json: .*remove it"):
        st._read_round(summary)
