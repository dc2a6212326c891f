"""Tests for punctum.metrics: hand-computed scores, alignment exactness, WER/CER, bootstrap."""

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from punctum import metrics
from punctum.metrics import (
    PRF,
    Alignment,
    ClassScores,
    align_words,
    char_error_rate,
    confusion_matrix,
    format_table,
    paired_bootstrap,
    project_labels,
    score_aligned,
    score_labels,
    score_mid_final,
    sentence_units,
    word_error_rate,
)

PUNCT = ("O", "COMMA", "PERIOD", "QUESTION")
# Pairs: (O,O) (C,C) (O,C) (P,C) (C,O) (O,O) (Q,P) (P,P)
REF = ["O", "COMMA", "O", "PERIOD", "COMMA", "O", "QUESTION", "PERIOD"]
HYP = ["O", "COMMA", "COMMA", "COMMA", "O", "O", "PERIOD", "PERIOD"]

SMALL_WORDS = st.lists(st.sampled_from("abcd"), max_size=12)


def slow_edit_distance(ref, hyp):
    """The obvious O(n*m) Levenshtein table, for reference."""
    table = [
        [i + j if i == 0 or j == 0 else 0 for j in range(len(hyp) + 1)] for i in range(len(ref) + 1)
    ]
    for i in range(1, len(ref) + 1):
        for j in range(1, len(hyp) + 1):
            table[i][j] = min(
                table[i - 1][j] + 1,
                table[i][j - 1] + 1,
                table[i - 1][j - 1] + (ref[i - 1] != hyp[j - 1]),
            )
    return table[len(ref)][len(hyp)]


def ops_of(alignment, ref_words, hyp_words):
    """Alignment -> list of 'M', 'S', 'D', 'I' codes."""
    codes = []
    for i, j in zip(alignment.ref_index.tolist(), alignment.hyp_index.tolist(), strict=True):
        if i < 0:
            codes.append("I")
        elif j < 0:
            codes.append("D")
        else:
            codes.append("M" if ref_words[i] == hyp_words[j] else "S")
    return codes


def check_valid(alignment, ref_words, hyp_words):
    """Every word appears exactly once, in order, and the counts agree with the words."""
    ref_side = alignment.ref_index[alignment.ref_index >= 0]
    hyp_side = alignment.hyp_index[alignment.hyp_index >= 0]
    assert ref_side.tolist() == list(range(len(ref_words)))
    assert hyp_side.tolist() == list(range(len(hyp_words)))
    assert not ((alignment.ref_index < 0) & (alignment.hyp_index < 0)).any()
    codes = ops_of(alignment, ref_words, hyp_words)
    assert (alignment.n_match, alignment.n_sub, alignment.n_del, alignment.n_ins) == (
        codes.count("M"),
        codes.count("S"),
        codes.count("D"),
        codes.count("I"),
    )


def zipf_words(rng, n_words, n_vocab=5000):
    """Synthetic words with Zipf (1/rank) frequencies."""
    weights = 1.0 / np.arange(1, n_vocab + 1)
    ranks = rng.choice(n_vocab, size=n_words, p=weights / weights.sum())
    return [f"w{rank}" for rank in ranks]


def inject_errors(rng, ref, n_errors, n_vocab=5000):
    """Hypothesis with n_errors substitutions, insertions and deletions in equal parts."""
    positions = rng.choice(len(ref), size=n_errors, replace=False)
    kinds = dict(zip(positions.tolist(), (np.arange(n_errors) % 3).tolist(), strict=True))
    fillers = zipf_words(rng, n_errors, n_vocab)
    hyp = []
    for position, word in enumerate(ref):
        kind = kinds.get(position)
        if kind is None:
            hyp.append(word)
        elif kind == 0:
            hyp.append(fillers[len(hyp) % n_errors] + "x")  # a word that differs
        elif kind == 1:
            hyp.extend([fillers[len(hyp) % n_errors], word])
    return hyp


# ---------------------------------------------------------------------------------------------
# P/R/F1
# ---------------------------------------------------------------------------------------------


def test_prf_zero_denominators_give_zero():
    prf = PRF(0, 0, 0)
    assert (prf.precision, prf.recall, prf.f1, prf.support) == (0.0, 0.0, 0.0, 0)


def test_prf_values():
    prf = PRF(tp=3, fp=1, fn=2)
    assert prf.precision == 0.75
    assert prf.recall == 0.6
    assert prf.f1 == pytest.approx(2 * 0.75 * 0.6 / 1.35)
    assert prf.support == 5


def test_prf_rejects_negative_counts():
    with pytest.raises(ValueError, match="PRF.fp"):
        PRF(1, -1, 0)


def test_confusion_matrix_hand_case():
    expected = np.array(
        [
            [2, 1, 0, 0],  # O     -> O, COMMA
            [1, 1, 0, 0],  # COMMA -> O, COMMA
            [0, 1, 1, 0],  # PERIOD -> COMMA, PERIOD
            [0, 0, 1, 0],  # QUESTION -> PERIOD
        ]
    )
    confusion = confusion_matrix(REF, HYP, PUNCT)
    assert confusion.dtype == np.int64
    np.testing.assert_array_equal(confusion, expected)


def test_score_labels_hand_case_with_mark_for_mark_confusion():
    scores = score_labels(REF, HYP, PUNCT, "O")
    per_label = scores.per_label
    assert list(per_label) == ["COMMA", "PERIOD", "QUESTION"]
    # PERIOD predicted as COMMA: fp for COMMA, fn for PERIOD (and vice versa for QUESTION).
    assert per_label["COMMA"] == PRF(tp=1, fp=2, fn=1)
    assert per_label["PERIOD"] == PRF(tp=1, fp=1, fn=1)
    assert per_label["QUESTION"] == PRF(tp=0, fp=0, fn=1)
    assert per_label["COMMA"].precision == pytest.approx(1 / 3)
    assert per_label["COMMA"].recall == 0.5
    assert per_label["COMMA"].f1 == pytest.approx(0.4)
    assert per_label["PERIOD"].f1 == 0.5
    assert per_label["QUESTION"].f1 == 0.0
    overall = scores.overall
    assert overall == PRF(tp=2, fp=3, fn=3)
    assert (overall.precision, overall.recall, overall.f1) == (0.4, 0.4, 0.4)
    assert scores.n_positions == 8


def test_all_negative_hypothesis():
    scores = score_labels(REF, ["O"] * len(REF), PUNCT, "O")
    assert scores.overall == PRF(tp=0, fp=0, fn=5)
    assert (scores.overall.precision, scores.overall.recall, scores.overall.f1) == (0, 0, 0)
    assert {k: v.fn for k, v in scores.per_label.items()} == {
        "COMMA": 2,
        "PERIOD": 2,
        "QUESTION": 1,
    }


def test_perfect_hypothesis():
    overall = score_labels(REF, REF, PUNCT, "O").overall
    assert (overall.precision, overall.recall, overall.f1) == (1.0, 1.0, 1.0)


def test_casing_labels_with_lower_negative():
    labels = ("LOWER", "CAP", "UPPER", "MIX")
    scores = score_labels(
        ["CAP", "LOWER", "UPPER", "MIX"], ["CAP", "CAP", "CAP", "MIX"], labels, "LOWER"
    )
    assert scores.per_label["CAP"] == PRF(tp=1, fp=2, fn=0)
    assert scores.per_label["UPPER"] == PRF(tp=0, fp=0, fn=1)
    assert scores.overall == PRF(tp=2, fp=2, fn=1)


def test_confusion_matrix_matches_slow_loop_on_random_labels():
    rng = np.random.default_rng(1)
    ref = rng.choice(PUNCT, size=5000).tolist()
    hyp = rng.choice(PUNCT, size=5000).tolist()
    slow = np.zeros((4, 4), dtype=np.int64)
    for r, h in zip(ref, hyp, strict=True):
        slow[PUNCT.index(r), PUNCT.index(h)] += 1
    np.testing.assert_array_equal(confusion_matrix(ref, hyp, PUNCT), slow)


def test_empty_input_gives_zero_scores():
    scores = score_labels([], [], PUNCT, "O")
    assert scores.overall == PRF(0, 0, 0)
    assert scores.confusion.shape == (4, 4)


def test_to_dict_is_json_ready():
    data = score_labels(REF, HYP, PUNCT, "O").to_dict()
    round_trip = json.loads(json.dumps(data))
    assert round_trip["confusion"][2] == [0, 1, 1, 0]
    assert round_trip["overall"]["tp"] == 2
    assert round_trip["per_label"]["COMMA"]["fp"] == 2
    is_final = [False, True] * 4
    mid_final = json.loads(json.dumps(score_mid_final(REF, HYP, is_final, PUNCT, "O").to_dict()))
    assert set(mid_final) == {"mid", "final", "weighted_f1"}
    aligned = score_aligned(["a", "b"], ["O", "PERIOD"], ["a"], ["PERIOD"], PUNCT, "O")
    assert json.loads(json.dumps(aligned.to_dict()))["n_del"] == 1


def test_class_scores_is_frozen_and_read_only():
    scores = score_labels(REF, HYP, PUNCT, "O")
    with pytest.raises(AttributeError):
        scores.negative = "COMMA"
    with pytest.raises(ValueError):
        scores.confusion[0, 0] = 5


def test_format_table():
    table = format_table(score_labels(REF, HYP, PUNCT, "O"), "dev")
    assert table == "\n".join(
        [
            "dev",
            "Label          P       R      F1   Support",
            "COMMA       33.3    50.0    40.0         2",
            "PERIOD      50.0    50.0    50.0         2",
            "QUESTION     0.0     0.0     0.0         1",
            "Overall     40.0    40.0    40.0         5",
        ]
    )


def test_length_mismatch_raises():
    with pytest.raises(ValueError, match="same length, got 8 and 7"):
        score_labels(REF, HYP[:-1], PUNCT, "O")


def test_unknown_label_names_label_and_position():
    hyp = list(HYP)
    hyp[5] = "COLON"
    with pytest.raises(ValueError, match=r"hyp\[5\] = 'COLON' is not in labels"):
        score_labels(REF, hyp, PUNCT, "O")
    with pytest.raises(ValueError, match=r"ref\[0\] = 'o'"):
        confusion_matrix(["o"], ["O"], PUNCT)


def test_bad_label_inventories_raise():
    with pytest.raises(ValueError, match="negative label 'NONE'"):
        score_labels(REF, HYP, PUNCT, "NONE")
    with pytest.raises(ValueError, match="unique"):
        score_labels(REF, HYP, PUNCT + ("O",), "O")
    with pytest.raises(ValueError, match="must not be empty"):
        confusion_matrix([], [], [])
    with pytest.raises(TypeError, match="not the string"):
        score_labels("O", "O", PUNCT, "O")


def test_class_scores_rejects_wrong_shape():
    with pytest.raises(ValueError, match="shape"):
        ClassScores(PUNCT, "O", np.zeros((3, 3), dtype=np.int64))


# ---------------------------------------------------------------------------------------------
# Alignment and WER
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ref", "hyp", "expected_ref", "expected_hyp", "expected_ops"),
    [
        ("a b c d", "a x c d", [0, 1, 2, 3], [0, 1, 2, 3], "MSMM"),
        ("a b c", "a b x c", [0, 1, -1, 2], [0, 1, 2, 3], "MMIM"),
        ("a b c d", "a c d", [0, 1, 2, 3], [0, -1, 1, 2], "MDMM"),
        ("a b c d e", "x a b d e y", [-1, 0, 1, 2, 3, 4, -1], [0, 1, 2, -1, 3, 4, 5], "IMMDMMI"),
        # A tie between substitutions and a deletion + insertion (2 edits each) is resolved
        # as the alignment with more matches; one substitution beats a deletion + insertion.
        (
            "the cat sat on the mat",
            "the cat sat on mat today",
            [0, 1, 2, 3, 4, 5, -1],
            [0, 1, 2, 3, -1, 4, 5],
            "MMMMDMI",
        ),
        ("how are you", "how you yes", [0, 1, 2, -1], [0, -1, 1, 2], "MDMI"),
        ("a b c", "a x c", [0, 1, 2], [0, 1, 2], "MSM"),
    ],
)
def test_align_words_hand_cases(ref, hyp, expected_ref, expected_hyp, expected_ops):
    ref_words, hyp_words = ref.split(), hyp.split()
    alignment = align_words(ref_words, hyp_words)
    assert alignment.ref_index.tolist() == expected_ref
    assert alignment.hyp_index.tolist() == expected_hyp
    assert "".join(ops_of(alignment, ref_words, hyp_words)) == expected_ops
    check_valid(alignment, ref_words, hyp_words)


def test_alignment_counts_and_wer():
    alignment = align_words("a b c d e".split(), "x a b d e y".split())
    assert (alignment.n_match, alignment.n_sub, alignment.n_del, alignment.n_ins) == (4, 0, 1, 2)
    assert alignment.wer == 3 / 5
    assert (alignment.n_ref, alignment.n_hyp, len(alignment)) == (5, 6, 7)


def test_wer_with_empty_sides():
    assert word_error_rate([], []) == 0.0
    assert word_error_rate([], ["uh", "um", "er"]) == 3.0  # insertions / max(N_ref, 1)
    assert word_error_rate(["a", "b"], []) == 1.0
    assert len(align_words([], [])) == 0


@settings(max_examples=300, deadline=None)
@given(SMALL_WORDS, SMALL_WORDS)
def test_alignment_is_minimal_on_random_short_sequences(ref, hyp):
    alignment = align_words(ref, hyp)
    check_valid(alignment, ref, hyp)
    assert alignment.n_errors == slow_edit_distance(ref, hyp)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.sampled_from("abcdefgh"), max_size=30),
    st.lists(st.sampled_from("abcdefgh"), max_size=30),
)
def test_anchor_splitting_gives_valid_alignments(ref, hyp):
    # With the exact-DP threshold at zero every segment goes through the anchor code.
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(metrics.alignment, "EXACT_ALIGN_CELLS", 0)
        alignment = align_words(ref, hyp)
    check_valid(alignment, ref, hyp)
    assert alignment.n_errors >= slow_edit_distance(ref, hyp)


def test_anchor_splitting_handles_repeats_without_unique_words(monkeypatch):
    monkeypatch.setattr(metrics.alignment, "EXACT_ALIGN_CELLS", 0)
    ref, hyp = ["a"] * 50, ["a"] * 45 + ["b"] * 3
    alignment = align_words(ref, hyp)
    check_valid(alignment, ref, hyp)
    assert alignment.n_errors == 5


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from("abc"), max_size=25), st.lists(st.sampled_from("abc"), max_size=25))
def test_middle_split_path_is_exact(ref, hyp):
    # Without anchor runs and with no exact-DP budget, segments are split by Hirschberg only.
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(metrics.alignment, "EXACT_ALIGN_CELLS", 0)
        patch.setattr(metrics.alignment, "_ANCHOR_RUN_LENGTHS", ())
        alignment = align_words(ref, hyp)
    check_valid(alignment, ref, hyp)
    assert alignment.n_errors == slow_edit_distance(ref, hyp)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from("abc"), max_size=25), st.lists(st.sampled_from("abc"), max_size=25))
def test_rank_anchor_path_gives_valid_alignments(ref, hyp):
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(metrics.alignment, "EXACT_ALIGN_CELLS", 0)
        patch.setattr(metrics.alignment, "MIDDLE_SPLIT_CELLS", 0)
        patch.setattr(metrics.alignment, "_ANCHOR_RUN_LENGTHS", ())
        alignment = align_words(ref, hyp)
    check_valid(alignment, ref, hyp)
    assert alignment.n_errors >= slow_edit_distance(ref, hyp)


def test_large_segment_without_shared_words_is_paired_positionally():
    ref = [f"r{k}" for k in range(2000)]
    hyp = [f"h{k}" for k in range(1500)]  # 3e6 cells: above EXACT_ALIGN_CELLS
    alignment = align_words(ref, hyp)
    check_valid(alignment, ref, hyp)
    assert (alignment.n_sub, alignment.n_del, alignment.n_ins) == (1500, 500, 0)


def test_identity_alignment_matches_score_labels():
    rng = np.random.default_rng(3)
    words = zipf_words(rng, 500)
    labels = rng.choice(PUNCT, size=500).tolist()
    hyp_labels = rng.choice(PUNCT, size=500).tolist()
    alignment = align_words(words, words)
    assert alignment.wer == 0.0
    assert alignment.ref_index.tolist() == list(range(500))
    aligned = score_aligned(words, labels, words, hyp_labels, PUNCT, "O")
    assert aligned.wer == 0.0
    assert aligned.scores == score_labels(labels, hyp_labels, PUNCT, "O")


def test_projection_marks_on_inserted_and_deleted_words():
    ref_words = ["we", "can", "go", "home", "now"]
    ref_labels = ["O", "O", "O", "COMMA", "PERIOD"]
    hyp_words = ["we", "um", "can", "go", "now"]
    hyp_labels = ["O", "COMMA", "O", "O", "PERIOD"]
    alignment = align_words(ref_words, hyp_words)
    assert "".join(ops_of(alignment, ref_words, hyp_words)) == "MIMMDM"
    ref_seq, hyp_seq = project_labels(alignment, ref_labels, hyp_labels, "O")
    assert ref_seq == ["O", "O", "O", "O", "COMMA", "PERIOD"]
    assert hyp_seq == ["O", "COMMA", "O", "O", "O", "PERIOD"]
    aligned = score_aligned(ref_words, ref_labels, hyp_words, hyp_labels, PUNCT, "O")
    # The COMMA on inserted "um" is an fp; the COMMA on deleted "home" is an fn.
    assert aligned.scores.per_label["COMMA"] == PRF(tp=0, fp=1, fn=1)
    assert aligned.scores.per_label["PERIOD"] == PRF(tp=1, fp=0, fn=0)
    assert aligned.scores.overall.f1 == 0.5
    assert aligned.wer == 2 / 5


def test_project_labels_checks_lengths():
    alignment = align_words(["a", "b"], ["a"])
    with pytest.raises(ValueError, match="ref_labels has 1 labels"):
        project_labels(alignment, ["O"], ["O"], "O")
    with pytest.raises(ValueError, match="hyp_words and hyp_labels"):
        score_aligned(["a"], ["O"], ["a"], [], PUNCT, "O")


def test_words_must_be_sequences_of_strings():
    with pytest.raises(TypeError, match="not the string"):
        align_words("a b", ["a", "b"])
    with pytest.raises(TypeError, match=r"hyp_words\[1\]"):
        align_words(["a"], ["a", 3])


def test_alignment_rejects_inconsistent_counts():
    with pytest.raises(ValueError, match="n_del"):
        Alignment(np.array([0]), np.array([-1]), n_match=1, n_sub=0, n_del=0, n_ins=0)
    with pytest.raises(ValueError, match="equal length"):
        Alignment(np.array([0, 1]), np.array([0]), n_match=1, n_sub=0, n_del=0, n_ins=0)


def test_moderate_document_recovers_injected_edits():
    rng = np.random.default_rng(0)
    ref = zipf_words(rng, 20_000)
    hyp = inject_errors(rng, ref, 2_000)
    alignment = align_words(ref, hyp)
    check_valid(alignment, ref, hyp)
    # The injected edits are one valid script: the minimum can be lower, never higher.
    assert 1_800 <= alignment.n_errors <= 2_000


def test_moderate_document_without_unique_words():
    rng = np.random.default_rng(1)
    ref = rng.choice(["a", "b", "c"], size=3000).tolist()
    hyp = inject_errors(rng, ref, 150, n_vocab=3)
    hyp = [word.rstrip("x") or "d" for word in hyp]  # keep the vocabulary tiny
    alignment = align_words(ref, hyp)
    check_valid(alignment, ref, hyp)
    assert alignment.n_errors <= 150


# ---------------------------------------------------------------------------------------------
# CER
# ---------------------------------------------------------------------------------------------

CHAR_WORDS = st.lists(st.sampled_from(["a", "b", "ab", "ba", "abc", "c", "é"]), max_size=20)


@settings(max_examples=200, deadline=None)
@given(CHAR_WORDS, CHAR_WORDS)
def test_cer_is_exact_on_short_inputs(ref, hyp):
    ref_text, hyp_text = " ".join(ref), " ".join(hyp)
    expected = slow_edit_distance(ref_text, hyp_text) / max(len(ref_text), 1)
    assert char_error_rate(ref, hyp) == expected


@settings(max_examples=100, deadline=None)
@given(st.text(alphabet="abcé", min_size=1, max_size=150), st.text(alphabet="abcé", max_size=150))
def test_cer_is_exact_on_long_words(ref, hyp):
    # Strings longer than 64 characters cross machine-word boundaries in the bit-parallel DP.
    hyp_words = [hyp] if hyp else []
    expected = slow_edit_distance(ref, hyp) / len(ref)
    assert char_error_rate([ref], hyp_words) == expected


@settings(max_examples=200, deadline=None)
@given(CHAR_WORDS, CHAR_WORDS)
def test_cer_by_region_is_an_upper_bound(ref, hyp):
    ref_text, hyp_text = " ".join(ref), " ".join(hyp)
    exact = slow_edit_distance(ref_text, hyp_text) / max(len(ref_text), 1)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(metrics.error_rates, "EXACT_CER_CELLS", 0)
        assert char_error_rate(ref, hyp) >= exact


@pytest.mark.parametrize(
    ("ref", "hyp", "edits"),
    [
        ("a XY b", "a b", 3),
        ("XY a b", "a b", 3),
        ("a b XY", "a b", 3),
        ("a horse b", "a house b", 1),
        ("a b", "a new b", 4),
        ("XY", "", 2),
        ("", "XY", 2),
    ],
)
def test_cer_by_region_equals_exact_on_hand_cases(monkeypatch, ref, hyp, edits):
    ref_words, hyp_words = ref.split(), hyp.split()
    exact = char_error_rate(ref_words, hyp_words)
    monkeypatch.setattr(metrics.error_rates, "EXACT_CER_CELLS", 0)
    assert char_error_rate(ref_words, hyp_words) == exact == edits / max(len(ref), 1)


def test_cer_by_region_equals_exact_on_a_document():
    rng = np.random.default_rng(2)
    ref = zipf_words(rng, 800)
    hyp = inject_errors(rng, ref, 80)
    exact = char_error_rate(ref, hyp)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(metrics.error_rates, "EXACT_CER_CELLS", 0)
        assert 0.0 < char_error_rate(ref, hyp) == exact


def test_cer_of_a_giant_unmatched_word_is_bounded_not_computed(monkeypatch):
    ref, hyp = ["so", "a" * 3_000, "we", "go"], ["so", "a" * 2_000, "we", "go"]
    text = " ".join(ref)
    monkeypatch.setattr(metrics.error_rates, "EXACT_CER_CELLS", 0)
    assert char_error_rate(ref, hyp) == 1_000 / len(text)  # by windows, each computed
    monkeypatch.setattr(metrics.error_rates, "WINDOW_CER_CELLS", 1_000_000)
    assert char_error_rate(ref, hyp) == 1.0  # over the cap: the cost of rewriting the window
    assert char_error_rate([ref[1]], [hyp[1]]) == 1.0  # no matched word: the whole text


# ---------------------------------------------------------------------------------------------
# Mid/final split
# ---------------------------------------------------------------------------------------------


def test_score_mid_final_hand_case():
    ref = ["O", "COMMA", "O", "PERIOD", "O", "QUESTION"]
    hyp = ["O", "COMMA", "COMMA", "O", "O", "QUESTION"]
    is_final = [False, False, False, True, False, True]
    result = score_mid_final(ref, hyp, is_final, PUNCT, "O")
    assert result.mid.overall == PRF(tp=1, fp=1, fn=0)  # P 1/2, R 1, F1 2/3
    assert result.final.overall == PRF(tp=1, fp=0, fn=1)  # P 1, R 1/2, F1 2/3
    assert result.mid.overall.f1 == pytest.approx(2 / 3)
    # support: mid 1, final 2 -> (2/3 * 1 + 2/3 * 2) / 3
    assert result.weighted_f1 == pytest.approx(2 / 3)
    uneven = score_mid_final(ref, ["O"] * 3 + ["PERIOD", "O", "QUESTION"], is_final, PUNCT, "O")
    assert uneven.mid.overall.f1 == 0.0
    assert uneven.final.overall.f1 == 1.0
    assert uneven.weighted_f1 == pytest.approx(2 / 3)


def test_score_mid_final_checks_mask():
    with pytest.raises(ValueError, match="is_final must have shape"):
        score_mid_final(["O"], ["O"], [True, False], PUNCT, "O")
    with pytest.raises(ValueError, match="booleans"):
        score_mid_final(["O"], ["O"], ["yes"], PUNCT, "O")


# ---------------------------------------------------------------------------------------------
# Bootstrap
# ---------------------------------------------------------------------------------------------


def bootstrap_data(n_sentences=200, seed=0):
    rng = np.random.default_rng(seed)
    ref = rng.choice(PUNCT, size=n_sentences * 10, p=[0.7, 0.15, 0.1, 0.05]).tolist()
    noisy_a = rng.random(len(ref)) < 0.4
    noisy_b = rng.random(len(ref)) < 0.1
    random_labels = rng.choice(PUNCT, size=len(ref)).tolist()
    hyp_a = [r if not n else x for r, n, x in zip(ref, noisy_a, random_labels, strict=True)]
    hyp_b = [r if not n else x for r, n, x in zip(ref, noisy_b, random_labels, strict=True)]
    units = np.repeat(np.arange(n_sentences), 10)
    return ref, hyp_a, hyp_b, units


def test_bootstrap_is_deterministic_and_finds_a_clear_winner():
    ref, hyp_a, hyp_b, units = bootstrap_data()
    first = paired_bootstrap(ref, hyp_a, hyp_b, PUNCT, "O", units, n_samples=500, seed=7)
    second = paired_bootstrap(ref, hyp_a, hyp_b, PUNCT, "O", units, n_samples=500, seed=7)
    assert first == second
    assert first.f1_a == score_labels(ref, hyp_a, PUNCT, "O").overall.f1
    assert first.f1_b == score_labels(ref, hyp_b, PUNCT, "O").overall.f1
    assert first.delta == first.f1_b - first.f1_a > 0
    assert first.p_value < 0.01
    assert first.ci_a[0] <= first.f1_a <= first.ci_a[1]
    assert first.ci_b[0] <= first.f1_b <= first.ci_b[1]
    assert first.ci_a[1] < first.ci_b[0]
    assert first.n_units == 200
    assert json.loads(json.dumps(first.to_dict()))["ci_a"] == list(first.ci_a)
    other_seed = paired_bootstrap(ref, hyp_a, hyp_b, PUNCT, "O", units, n_samples=500, seed=8)
    assert other_seed.ci_a != first.ci_a


def test_bootstrap_identical_systems():
    ref, hyp_a, _, units = bootstrap_data()
    result = paired_bootstrap(ref, hyp_a, hyp_a, PUNCT, "O", units, n_samples=200)
    assert result.delta == 0.0
    assert result.p_value == 1.0  # b is never better than itself
    assert result.ci_a == result.ci_b


def test_bootstrap_reversed_systems():
    ref, hyp_a, hyp_b, units = bootstrap_data()
    result = paired_bootstrap(ref, hyp_b, hyp_a, PUNCT, "O", units, n_samples=200)
    assert result.p_value > 0.99


def test_bootstrap_rejects_bad_options():
    ref, hyp_a, hyp_b, units = bootstrap_data(10)
    with pytest.raises(ValueError, match="n_samples"):
        paired_bootstrap(ref, hyp_a, hyp_b, PUNCT, "O", units, n_samples=0)
    with pytest.raises(ValueError, match="confidence"):
        paired_bootstrap(ref, hyp_a, hyp_b, PUNCT, "O", units, confidence=1.0)
    with pytest.raises(ValueError, match="units must have shape"):
        paired_bootstrap(ref, hyp_a, hyp_b, PUNCT, "O", units[:-1])
    with pytest.raises(ValueError, match="hyp_b must have the same length"):
        paired_bootstrap(ref, hyp_a, hyp_b[:-1], PUNCT, "O", units)


def test_bootstrap_empty_input():
    result = paired_bootstrap([], [], [], PUNCT, "O", [], n_samples=10)
    assert (result.f1_a, result.f1_b, result.p_value, result.n_units) == (0.0, 0.0, 1.0, 0)


def test_sentence_units():
    ref = ["O", "PERIOD", "O", "COMMA", "QUESTION", "O"]
    units = sentence_units(ref, {"PERIOD", "QUESTION"})
    assert units.tolist() == [0, 0, 1, 1, 1, 2]
    assert units.dtype == np.int64
    assert sentence_units(ref, "PERIOD").tolist() == [0, 0, 1, 1, 1, 1]
    assert sentence_units([], "PERIOD").tolist() == []


def _mostly_wrong_utterances(n: int, seed: int = 0) -> tuple[list[list[str]], list[list[str]]]:
    """Utterances whose hypotheses get ~80% of words wrong: garbage words, some of which
    happen to be reference words of other utterances (the trap for anchor alignment)."""
    rng = np.random.default_rng(seed)
    lexicon = [f"w{i}" for i in range(400)]
    refs, hyps = [], []
    for _ in range(n):
        ref = list(rng.choice(lexicon, size=int(rng.integers(5, 15))))
        hyp = [w if rng.random() < 0.2 else str(rng.choice(lexicon)) for w in ref]
        hyp += [str(rng.choice(lexicon)) for _ in range(int(rng.integers(0, 4)))]
        refs.append([str(w) for w in ref])
        hyps.append(hyp)
    return refs, hyps


def test_align_segments_is_exact_per_utterance_at_any_error_rate():
    refs, hyps = _mostly_wrong_utterances(300)
    joined = metrics.align_segments(refs, hyps)
    exact = sum(metrics.align_words(r, h).n_errors for r, h in zip(refs, hyps))
    n_ref = sum(len(r) for r in refs)
    assert joined.n_errors == exact and joined.n_ref == n_ref
    assert joined.wer == pytest.approx(exact / n_ref) and joined.wer < 1.0
    # indices point into the concatenated words, in order, each word once
    flat_ref = [w for r in refs for w in r]
    flat_hyp = [w for h in hyps for w in h]
    assert sorted(i for i in joined.ref_index if i >= 0) == list(range(len(flat_ref)))
    assert sorted(i for i in joined.hyp_index if i >= 0) == list(range(len(flat_hyp)))
    paired = (joined.ref_index >= 0) & (joined.hyp_index >= 0)
    matches = sum(flat_ref[r] == flat_hyp[h]
                  for r, h in zip(joined.ref_index[paired], joined.hyp_index[paired]))
    assert matches == joined.n_match


def test_align_segments_empty_and_mismatched():
    a = metrics.align_segments([["a", "b"], ["c"]], [[], ["c", "d"]])
    assert (a.n_match, a.n_del, a.n_ins) == (1, 2, 1)
    assert metrics.align_segments([], []).n_ref == 0
    with pytest.raises(ValueError, match="segments"):
        metrics.align_segments([["a"]], [])


def test_a_long_document_with_anchors_out_of_order_aligns_exactly():
    body = ["the", "cat", "sat", "on", "mat"] * 240
    alignment = align_words(["alpha", "beta"] + body, body + ["alpha", "beta"])
    assert alignment.n_sub + alignment.n_del + alignment.n_ins == 4
