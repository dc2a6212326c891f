"""punctum.models: train-time torch taggers, one config dataclass + one module per file.

Example: build_model("cnn_bilstm", {"vocab_size": 5000, "n_punct": 5, "n_case": 4}).
"""

from dataclasses import MISSING, fields

from torch import nn

from punctum.models.cnn_bilstm import CnnBiLstm, CnnBiLstmConfig
from punctum.models.ctc_encoder import CtcEncoder, CtcEncoderConfig
from punctum.models.losses import tagging_loss, weighted_cross_entropy
from punctum.models.transformer_tagger import TransformerTagger, TransformerTaggerConfig

MODELS = {
    "cnn_bilstm": (CnnBiLstmConfig, CnnBiLstm),
    "transformer_tagger": (TransformerTaggerConfig, TransformerTagger),
    "ctc_encoder": (CtcEncoderConfig, CtcEncoder),
}


def build_model(kind: str, config_dict: dict) -> nn.Module:
    """A freshly initialised model of `kind` from a config dict (e.g. dataclasses.asdict output).

    Loads no weights: load a state dict afterwards, or start a pretrained encoder with
    TransformerTagger.from_pretrained. Raises ValueError for an unknown kind, an unknown key
    or a missing required key.
    """
    if kind not in MODELS:
        raise ValueError(f"kind must be one of {sorted(MODELS)}, got {kind!r}")
    config_cls, model_cls = MODELS[kind]
    names = {f.name for f in fields(config_cls)}
    unknown = sorted(set(config_dict) - names)
    if unknown:
        raise ValueError(f"unknown {kind} config key(s) {unknown}; allowed: {sorted(names)}")
    required = {
        f.name for f in fields(config_cls) if f.default is MISSING and f.default_factory is MISSING
    }
    missing = sorted(required - set(config_dict))
    if missing:
        raise ValueError(f"missing {kind} config key(s) {missing}")
    return model_cls(config_cls(**config_dict))


__all__ = [
    "MODELS",
    "CnnBiLstm",
    "CnnBiLstmConfig",
    "TransformerTagger",
    "TransformerTaggerConfig",
    "build_model",
    "tagging_loss",
    "weighted_cross_entropy",
]
