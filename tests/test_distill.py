"""Knowledge distillation: teacher probabilities in the encoded data, batches and the loss."""

import tomllib

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from conftest import TINY_RECIPE  # noqa: E402

from punctum.models.losses import soft_cross_entropy  # noqa: E402
from punctum.text import CASES, get_inventory, parse  # noqa: E402
from punctum.train.batching import WindowSampler, collate  # noqa: E402
from punctum.train.data import encode_documents  # noqa: E402
from punctum.train.distill import DistillConfig, Teacher  # noqa: E402
from punctum.train.recipe import parse_recipe  # noqa: E402
from punctum.train.trainer import TaggingTask, init_distributed, make_task, train  # noqa: E402

TEXTS = ["Well, we visit New York. Do you like the garden?",
         "They paint the old bridge, and I see it."]


@pytest.fixture(scope="module")
def teacher(tiny_artifact):
    return Teacher(DistillConfig(model=str(tiny_artifact), threads=1),
                   get_inventory("en").post_labels)


def test_soft_cross_entropy_of_one_hot_targets_is_cross_entropy():
    logits = torch.randn(2, 5, 4)
    labels = torch.randint(0, 4, (2, 5))
    one_hot = torch.nn.functional.one_hot(labels, 4).float()
    one_hot[1, 3] = float("nan")  # no target there
    expected = torch.nn.functional.cross_entropy(
        logits.reshape(-1, 4), torch.where(torch.isnan(one_hot[..., 0]), -100, labels).reshape(-1),
        ignore_index=-100)
    assert torch.allclose(soft_cross_entropy(logits, one_hot), expected, atol=1e-6)


def test_soft_cross_entropy_without_targets_is_zero_with_a_graph():
    logits = torch.randn(1, 3, 4, requires_grad=True)
    loss = soft_cross_entropy(logits, torch.full((1, 3, 4), float("nan")))
    loss.backward()
    assert float(loss.detach()) == 0.0 and logits.grad is not None


def test_teacher_probabilities_sit_at_label_positions(tiny_run, teacher):
    from punctum.tokenizer import SubwordTokenizer

    tokenizer = SubwordTokenizer.load(tiny_run / "tokenizer.json")
    documents = [parse(t) for t in TEXTS]
    corpus = encode_documents(documents, tokenizer, get_inventory("en"), teacher=teacher)
    n_post = len(get_inventory("en").post_labels)
    assert corpus.soft.shape == (len(corpus.ids), n_post + len(CASES))
    labelled = corpus.punct >= 0
    assert not np.isnan(corpus.soft[labelled]).any()
    assert np.isnan(corpus.soft[~labelled]).all()
    sums = corpus.soft[labelled].astype(np.float32)
    np.testing.assert_allclose(sums[:, :n_post].sum(1), 1.0, atol=2e-3)
    np.testing.assert_allclose(sums[:, n_post:].sum(1), 1.0, atol=2e-3)
    # The teacher's own prediction for the first document (int8 activations are quantized
    # per batch, so batching changes the probabilities a little).
    probs = teacher([documents[0].words])[0].astype(np.float32)
    np.testing.assert_allclose(sums[:len(documents[0])], probs, atol=0.02)


def test_batches_carry_soft_targets_only_where_labels_count(tiny_run, teacher):
    from punctum.tokenizer import SubwordTokenizer

    tokenizer = SubwordTokenizer.load(tiny_run / "tokenizer.json")
    corpus = encode_documents([parse(" ".join(TEXTS))], tokenizer, get_inventory("en"),
                              teacher=teacher)
    batch = collate([(corpus, 0, 12), (corpus, 3, 15)], 1, 2, 0, ignore_from=[12, 7])
    has_soft = ~np.isnan(batch.soft[..., 0])
    assert np.array_equal(has_soft, batch.punct != -100)


def test_distillation_weight_zero_is_plain_training(tiny_corpus, tiny_artifact, tmp_path):
    """weight 0 gives exactly the loss without a teacher; weight 1 adds the teacher term."""
    losses = {}
    for weight in (None, 0.0, 1.0):
        raw = tomllib.loads(TINY_RECIPE)
        if weight is not None:
            raw["data"]["distill"] = {"model": str(tiny_artifact), "weight": weight,
                                      "threads": 1}
        recipe = parse_recipe(raw, tiny_corpus, name="tiny")
        out = tmp_path / f"run-{weight}"
        out.mkdir()
        torch.manual_seed(0)
        task = make_task(recipe, out, init_distributed("cpu"), "cpu")
        assert isinstance(task, TaggingTask)
        batch = task.sampler.next_batch(4)
        assert (batch.soft is None) == (weight is None)
        losses[weight] = float(task.loss(task.model.eval(), batch).detach())
    assert losses[0.0] == pytest.approx(losses[None])
    assert losses[1.0] > losses[0.0]


def test_a_distilled_run_trains_and_keeps_the_teacher_in_its_cache(tiny_corpus, tiny_artifact,
                                                                   tmp_path):
    raw = tomllib.loads(TINY_RECIPE)
    raw["train"].update(steps=20, eval_every=20, checkpoint_every=20)
    raw["data"]["distill"] = {"model": str(tiny_artifact), "weight": 0.5, "threads": 1}
    train(parse_recipe(raw, tiny_corpus, name="tiny"), tmp_path / "run", progress=False)
    assert (tmp_path / "run" / "best.pt").exists()
    cached = list((tmp_path / "run" / "cache").glob("train.txt.train.*.npz"))
    assert len(cached) == 1 and "soft" in np.load(cached[0]).files


def test_distill_recipe_errors(tiny_corpus):
    raw = tomllib.loads(TINY_RECIPE)
    raw["data"]["distill"] = {"model": "x", "weight": -1}
    with pytest.raises(ValueError, match="weight"):
        parse_recipe(raw, tiny_corpus)
    raw["data"]["distill"] = {"modle": "x"}
    with pytest.raises(ValueError, match="modle"):
        parse_recipe(raw, tiny_corpus)
    raw["data"]["distill"] = {"model": "x", "threads": 100000}  # (before any training)
    with pytest.raises(ValueError, match="data.distill.threads must be from 0 to 256"):
        parse_recipe(raw, tiny_corpus)
    for weight in (float("nan"), float("inf")):
        raw["data"]["distill"] = {"model": "x", "weight": weight}
        with pytest.raises(ValueError, match="data.distill.weight must be a finite number"):
            parse_recipe(raw, tiny_corpus)


def test_sampler_rows_without_a_teacher_have_no_soft_targets(tiny_run, teacher):
    from punctum.tokenizer import SubwordTokenizer

    tokenizer = SubwordTokenizer.load(tiny_run / "tokenizer.json")
    docs = [parse(" ".join(TEXTS * 5))]
    with_teacher = encode_documents(docs, tokenizer, get_inventory("en"), teacher=teacher)
    without = encode_documents(docs, tokenizer, get_inventory("en"))
    sampler = WindowSampler([with_teacher, without], [1.0, 1.0], 24,
                            (tokenizer.bos_id, tokenizer.eos_id, tokenizer.pad_id), seed=0)
    batch = sampler.next_batch(8)
    rows_with_soft = ~np.isnan(batch.soft[..., 0]).all(axis=1)
    assert rows_with_soft.any() and not rows_with_soft.all()


def test_an_ensemble_teacher_averages_its_members(tiny_artifact, teacher):
    """A list of models is one teacher whose distributions are the members' mean; its cache
    key differs from each member's, while a single model keeps the key of its ONNX file."""
    import hashlib

    labels = get_inventory("en").post_labels
    bundled = Teacher(DistillConfig(model="en-tiny", threads=1), labels)
    pair = Teacher(DistillConfig(model=[str(tiny_artifact), "en-tiny"], threads=1), labels)
    documents = [parse(t).words for t in TEXTS] + [()]
    for mine, theirs, both in zip(teacher(documents), bundled(documents), pair(documents)):
        expected = (mine.astype(np.float32) + theirs.astype(np.float32)) / 2
        np.testing.assert_allclose(both.astype(np.float32), expected, atol=2e-3)
    assert pair(documents)[-1].shape == (0, len(labels) + len(CASES))
    with open(teacher.punctuator.model_files[0], "rb") as handle:
        assert teacher.key == hashlib.md5(handle.read()).hexdigest()[:16]
    assert len({teacher.key, bundled.key, pair.key}) == 3


def test_distill_model_lists_in_recipes(tiny_corpus):
    raw = tomllib.loads(TINY_RECIPE)
    raw["data"]["distill"] = {"model": ["a", "b"]}
    assert parse_recipe(raw, tiny_corpus).data.distill.members == ("a", "b")
    raw["data"]["distill"] = {"model": "a"}
    assert parse_recipe(raw, tiny_corpus).data.distill.members == ("a",)
    for bad in ([], ["a", 3], ["a", ""]):
        raw["data"]["distill"] = {"model": bad}
        with pytest.raises(ValueError, match="data.distill.model"):
            parse_recipe(raw, tiny_corpus)


def test_models_of_another_language_are_refused_as_teachers_and_starting_points(
        tiny_artifact, tmp_path):
    import json
    import shutil

    from punctum.train.recover import check_language

    other = tmp_path / "other"
    shutil.copytree(tiny_artifact, other)
    meta = json.loads((other / "punctum.json").read_text(encoding="utf-8"))
    meta["inventory"]["language"] = "xx"
    (other / "punctum.json").write_text(json.dumps(meta), encoding="utf-8")
    with pytest.raises(ValueError, match="data.distill.model: .* is a 'xx' model; the recipe "
                                         "trains a 'en' one"):
        Teacher(DistillConfig(model=str(other)), get_inventory("en").post_labels, "en")
    with pytest.raises(ValueError, match="train.init_from: .* is a 'xx' model"):
        check_language(str(other), "en", "train.init_from")
    check_language(str(tiny_artifact), "en", "train.init_from")  # its own language: fine
