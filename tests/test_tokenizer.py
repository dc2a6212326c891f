"""Subword tokenizers and word <-> subword alignment."""

import numpy as np
import pytest

from punctum.tokenizer import SubwordTokenizer, label_positions, train_bpe

WORDS = [["hello", "world", "don't", "u.s", "3.5", "hello"], ["the", "hello", "a"]] * 50


@pytest.fixture(scope="module")
def bpe():
    return train_bpe(WORDS, vocab_size=120)


def test_label_positions_first_and_last():
    word_index = np.array([-1, 0, 0, 1, 2, 2, 2, -1])
    assert label_positions(word_index, 4, "first").tolist() == [1, 3, 4, -1]
    assert label_positions(word_index, 4, "last").tolist() == [2, 3, 6, -1]
    assert label_positions(np.array([-1, -1]), 0).tolist() == []


def test_bpe_alignment_has_special_tokens_and_one_label_slot_per_word(bpe):
    encoding = bpe.encode_words(["hello", "world", "zzzz"])
    assert encoding.ids[0] == bpe.bos_id and encoding.ids[-1] == bpe.eos_id
    assert encoding.word_index[0] == -1 and encoding.word_index[-1] == -1
    positions = encoding.label_positions
    assert (encoding.word_index[positions] == np.arange(3)).all()
    assert len(bpe.encode_words([])) == 2


def test_save_load_round_trip(bpe, tmp_path):
    bpe.save(tmp_path / "tokenizer.json")
    again = SubwordTokenizer.load(tmp_path, label_position="last")
    words = ["hello", "don't", "3.5"]
    assert again.encode_words(words).ids.tolist() == bpe.encode_words(words).ids.tolist()
    assert again.label_position == "last"


def test_load_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="no tokenizer.json or vocab.txt"):
        SubwordTokenizer.load(tmp_path)
    (tmp_path / "tokenizer.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(ValueError, match="not a valid tokenizer"):
        SubwordTokenizer.load(tmp_path)
    with pytest.raises(ValueError, match="label_position"):
        SubwordTokenizer(None, "middle")


def test_wordpiece_from_vocab_txt(tmp_path):
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "hello", "world", "##s", "do", "##n"]
    (tmp_path / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    tokenizer = SubwordTokenizer.load(tmp_path)
    encoding = tokenizer.encode_words(["hello", "worlds", "xyz"])
    assert encoding.ids.tolist() == [2, 4, 5, 6, 1, 3]
    assert encoding.label_positions.tolist() == [1, 2, 4]
    assert tokenizer.pad_id == 0


def _plain(tokenizer: SubwordTokenizer, batch):
    """The library's own encoding of whole word lists: the reference for the word cache."""
    encoded = tokenizer.tokenizer.encode_batch([list(w) for w in batch], is_pretokenized=True,
                                               add_special_tokens=False)
    return [tokenizer._to_encoding(e, len(w)) for e, w in zip(encoded, batch)]


def _wordpiece(folder):
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "hello", "world", "##s", "do", "##n", "'",
             "t", "u", ".", "s", "3", "5", "a"]
    (folder / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    return SubwordTokenizer.load(folder).tokenizer


@pytest.mark.parametrize("kind", ["bpe", "wordpiece"])
@pytest.mark.parametrize("which", ["first", "last"])
def test_word_cache_equals_whole_list_encoding(bpe, kind, which, monkeypatch, tmp_path):
    """Against the library's encoding of whole lists, also for WordPiece, which cuts one
    word into several pieces at apostrophes and periods ("don't", "u.s")."""
    import punctum.tokenizer as tokenizer_module

    monkeypatch.setattr(tokenizer_module, "CHUNK_WORDS", 7)  # several pieces per list
    monkeypatch.setattr(tokenizer_module, "CACHE_WORDS", 20)  # the cache is cleared too
    library = bpe.tokenizer if kind == "bpe" else _wordpiece(tmp_path)
    tokenizer = SubwordTokenizer(library, which)
    assert tokenizer.chunkable
    rng = np.random.default_rng(0)
    vocabulary = ["hello", "world", "don't", "u.s", "3.5", "zzqx", "a", "ü", "\u200b", "日本"]
    for _ in range(5):
        batch = [[vocabulary[i] for i in rng.integers(0, len(vocabulary), n)]
                 for n in rng.integers(0, 40, 4)] + [[]]
        batch += [[f"w{i}" for i in rng.integers(0, 100, 30)]]  # new words each round
        for got, expected in zip(tokenizer.encode_batch(batch, add_special_tokens=False),
                                 _plain(tokenizer, batch), strict=True):
            assert got.ids.tolist() == expected.ids.tolist()
            assert got.word_index.tolist() == expected.word_index.tolist()
            assert got.label_positions.tolist() == expected.label_positions.tolist()


def test_word_cache_is_bounded(bpe, monkeypatch):
    import punctum.tokenizer as tokenizer_module

    monkeypatch.setattr(tokenizer_module, "CACHE_WORDS", 20)
    tokenizer = SubwordTokenizer(bpe.tokenizer)
    tokenizer.encode_batch([[f"a{i}" for i in range(15)]], add_special_tokens=False)
    assert len(tokenizer._cache) == 15
    tokenizer.encode_batch([[f"b{i}" for i in range(10)]], add_special_tokens=False)
    assert sorted(tokenizer._cache) == sorted(f"b{i}" for i in range(10))  # cleared first


def test_a_first_word_only_metaspace_is_not_cached(bpe, tmp_path):
    from tokenizers import pre_tokenizers

    bpe.save(tmp_path / "tokenizer.json")
    tokenizer = SubwordTokenizer.load(tmp_path)
    tokenizer.tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(prepend_scheme="first")
    assert not SubwordTokenizer(tokenizer.tokenizer).chunkable
