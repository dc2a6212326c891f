"""CTC encoder, its intermediate loss, and greedy / prefix-beam decoding on hand-made cases."""

import itertools
import math

import numpy as np
import pytest

from punctum.decoding import greedy, prefix_beam_search

torch = pytest.importorskip("torch")
from punctum.models.ctc_encoder import (  # noqa: E402
    CtcEncoder,
    CtcEncoderConfig,
    ctc,
    subsampled_lengths,
)


def log(rows):
    return np.log(np.asarray(rows, dtype=np.float64))


def test_greedy_collapses_repeats_and_blanks_with_frames():
    # frames: a a _ a b b _   (blank = 0, a = 1, b = 2)
    rows = [[0.1, 0.8, 0.1], [0.1, 0.8, 0.1], [0.8, 0.1, 0.1], [0.1, 0.8, 0.1],
            [0.1, 0.1, 0.8], [0.1, 0.1, 0.8], [0.8, 0.1, 0.1]]
    decoded = greedy(log(rows))
    assert decoded.ids == (1, 1, 2)
    assert decoded.starts == (0, 3, 4) and decoded.ends == (1, 3, 5)
    assert math.isclose(decoded.score, 6 * math.log(0.8) + math.log(0.8))


def path_probability(rows, labels):
    """Brute force: sum over all frame paths that collapse to labels."""
    total = 0.0
    for path in itertools.product(range(len(rows[0])), repeat=len(rows)):
        collapsed = [k for k, _ in itertools.groupby(path) if k != 0]
        if tuple(collapsed) == tuple(labels):
            total += math.prod(rows[t][k] for t, k in enumerate(path))
    return total


def test_prefix_beam_beats_greedy_where_paths_add_up():
    # Greedy picks blank at every frame (""), but "a" has more total probability.
    rows = [[0.4, 0.3, 0.3], [0.4, 0.3, 0.3]]
    assert greedy(log(rows)).ids == ()
    decoded = prefix_beam_search(log(rows), beam=8, prune=-50)
    assert decoded.ids in ((1,), (2,))
    assert path_probability(rows, decoded.ids) > path_probability(rows, ())
    assert math.isclose(math.exp(decoded.score), path_probability(rows, decoded.ids),
                        rel_tol=1e-9)


def test_prefix_beam_score_matches_brute_force_on_random_cases():
    rng = np.random.default_rng(0)
    for _ in range(5):
        raw = rng.random((4, 3)) + 0.05
        rows = (raw / raw.sum(axis=1, keepdims=True)).tolist()
        decoded = prefix_beam_search(log(rows), beam=50, prune=-50)
        best = max(
            (seq for n in range(5) for seq in itertools.product([1, 2], repeat=n)),
            key=lambda seq: path_probability(rows, seq))
        assert decoded.ids == tuple(best)
        assert math.isclose(math.exp(decoded.score), path_probability(rows, best), rel_tol=1e-9)


def test_prefix_beam_spans_are_those_of_the_best_path_of_its_output():
    # the token ends at frame 1; frame 2 is a near-certain blank (the end was frame 2)
    decoded = prefix_beam_search(log([[0.99, 0.01], [0.01, 0.99], [0.99, 0.01]]))
    assert (decoded.starts, decoded.ends) == ((1,), (1,))
    rng = np.random.default_rng(3)
    for _ in range(200):
        n_frames, n_tokens = int(rng.integers(1, 5)), int(rng.integers(2, 4))
        rows = rng.dirichlet(np.ones(n_tokens) * 0.3, size=n_frames).tolist()
        decoded = prefix_beam_search(log(rows), beam=1000, prune=-1e9)
        paths = [path for path in itertools.product(range(n_tokens), repeat=n_frames)
                 if greedy(log([[1.0 if k == tok else 1e-9 for k in range(n_tokens)]
                                for tok in path])).ids == decoded.ids]
        best = max(paths, key=lambda path: math.prod(rows[t][k] for t, k in enumerate(path)))
        one_hot = log([[1.0 if k == tok else 1e-9 for k in range(n_tokens)] for tok in best])
        spans = greedy(one_hot)
        assert (decoded.starts, decoded.ends) == (spans.starts, spans.ends)


def test_decoders_reject_bad_shapes():
    with pytest.raises(ValueError, match="log_probs must be"):
        greedy(np.zeros(5))
    assert greedy(np.zeros((0, 3))).ids == ()
    assert prefix_beam_search(np.log(np.full((3, 2), 0.5))).ids in ((), (1,))


def test_ctc_loss_equals_brute_force():
    rows = np.random.default_rng(1).random((4, 3)) + 0.1
    rows = rows / rows.sum(axis=1, keepdims=True)
    log_probs = torch.log(torch.tensor(rows, dtype=torch.float32))[None]
    targets = torch.tensor([[1, 2]])
    loss = ctc(log_probs, torch.tensor([4]), targets, torch.tensor([2]))
    expected = -math.log(path_probability(rows.tolist(), (1, 2))) / 2  # mean: / target length
    assert math.isclose(float(loss), expected, rel_tol=1e-5)


def tiny_config(**fields):
    base = dict(vocab_size=12, n_mels=16, d_model=32, n_heads=4, n_layers=4, d_ff=64,
                subsample_channels=8, dropout=0.0)
    return CtcEncoderConfig(**{**base, **fields})


@pytest.mark.parametrize("block", ["transformer", "conformer"])
def test_shapes_lengths_and_padding_independence(block):
    torch.manual_seed(0)
    model = CtcEncoder(tiny_config(block=block)).eval()
    feats = torch.randn(2, 50, 16)
    lengths = torch.tensor([50, 30])
    log_probs, inter, out_lengths = model(feats, lengths)
    assert log_probs.shape == (2, 11, 12) and inter.shape == log_probs.shape
    assert out_lengths.tolist() == subsampled_lengths(lengths).tolist() == [11, 6]
    assert torch.allclose(log_probs.exp().sum(-1), torch.ones(2, 11), atol=1e-5)
    alone, _, _ = model(feats[1:, :30], lengths[1:])
    assert torch.allclose(alone[0, :6], log_probs[1, :6], atol=1e-4)  # padding never leaks


def test_intermediate_head_reads_the_middle_block():
    torch.manual_seed(0)
    model = CtcEncoder(tiny_config(n_layers=4)).eval()
    assert model.config.inter_index == 2
    seen = {}
    model.blocks[1].register_forward_hook(lambda m, i, o: seen.__setitem__("block2", o))
    feats, lengths = torch.randn(1, 40, 16), torch.tensor([40])
    _, inter, _ = model(feats, lengths)
    expected = torch.log_softmax(model.head(model.inter_norm(seen["block2"])), dim=-1)
    assert torch.allclose(inter, expected, atol=1e-5)
    assert CtcEncoder(tiny_config(inter_layer=3)).config.inter_index == 3
    none = CtcEncoder(tiny_config(inter_targets="none")).eval()
    assert none(feats, lengths)[1] is None


def test_intermediate_loss_uses_its_own_targets():
    torch.manual_seed(0)
    model = CtcEncoder(tiny_config(lambda_ctc=0.5, lambda_inter=0.5)).eval()
    feats, lengths = torch.randn(1, 60, 16), torch.tensor([60])
    log_probs, inter, out_lengths = model(feats, lengths)
    punctuated, n_p = torch.tensor([[3, 4, 10, 5]]), torch.tensor([4])  # 10 = a mark token
    plain, n_u = torch.tensor([[3, 4, 5]]), torch.tensor([3])
    total = model.loss(log_probs, inter, out_lengths, punctuated, n_p, plain, n_u)
    expected = 0.5 * ctc(log_probs, out_lengths, punctuated, n_p) + \
        0.5 * ctc(inter, out_lengths, plain, n_u)
    assert torch.allclose(total, expected)
    same = model.loss(log_probs, inter, out_lengths, punctuated, n_p)
    assert torch.allclose(same, 0.5 * ctc(log_probs, out_lengths, punctuated, n_p)
                          + 0.5 * ctc(inter, out_lengths, punctuated, n_p))


def test_tiny_model_overfits_one_utterance_and_decodes_it():
    torch.manual_seed(0)
    model = CtcEncoder(tiny_config(n_layers=2, inter_targets="none"))
    feats, lengths = torch.randn(1, 80, 16), torch.tensor([80])
    targets, n = torch.tensor([[3, 7, 7, 2, 9]]), torch.tensor([5])
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
    for _ in range(150):
        log_probs, inter, out_lengths = model(feats, lengths)
        loss = model.loss(log_probs, inter, out_lengths, targets, n)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    model.eval()
    log_probs, _, _ = model(feats, lengths)
    frames = log_probs[0].detach().numpy()
    assert greedy(frames).ids == (3, 7, 7, 2, 9)
    assert prefix_beam_search(frames).ids == (3, 7, 7, 2, 9)


def test_config_errors_name_the_field():
    with pytest.raises(ValueError, match="inter_targets"):
        tiny_config(inter_targets="sometimes")
    with pytest.raises(ValueError, match="block"):
        tiny_config(block="lstm")
    with pytest.raises(ValueError, match="inter_layer"):
        tiny_config(inter_layer=4)
