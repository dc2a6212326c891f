"""Trainable weights from an exported artifact, for fine-tuning without its checkpoint.

    # in a recipe: start from the bundled model (its tokenizer comes along)
    [train]
    init_from = "en-tiny"

An artifact's weights.safetensors is used when it has one. Otherwise the weights are read back
from model.onnx: fp32 tensors as they are, int8 ones dequantized ((q - zero_point) * scale),
so the start is the shipped model up to its int8 rounding. Supported: the CNN-BiLSTM graph
that `punctum export` writes (LSTM or DynamicQuantizeLSTM, MatMul or MatMulInteger heads).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from punctum import artifact as artifacts
from punctum.train.onnx_graph import dequantize

# ONNX stores LSTM gates as (input, output, forget, cell); torch as (input, forget, cell,
# output): torch's gate blocks are ONNX's in this order.
_ONNX_TO_TORCH_GATES = (0, 2, 3, 1)


def is_artifact(name_or_path: str | Path) -> bool:
    """Whether init_from names an artifact (a bundled name or a folder with punctum.json)."""
    path = Path(name_or_path)
    if path.is_dir():
        return (path / artifacts.ARTIFACT_FILE).is_file()
    return str(name_or_path) in artifacts.available_models()


def recover_state_dict(folder: str | Path) -> tuple[str, dict, dict[str, torch.Tensor]]:
    """(kind, model_config, state dict) of an artifact folder.

    Raises:
        ValueError: the artifact is an ensemble, or its graph is not one this module reads.
    """
    artifact = artifacts.read_artifact(Path(folder))
    meta = artifact.meta
    if meta["kind"] == artifacts.ENSEMBLE_KIND or not meta.get("model_config"):
        raise ValueError(f"{artifact.path}: an ensemble or a model without model_config has no "
                         f"weights to start from")
    if meta.get("weights"):
        from safetensors.torch import load_file

        return meta["kind"], meta["model_config"], load_file(str(artifact.path / meta["weights"]))
    unreadable = _unreadable(meta)
    if unreadable:
        raise ValueError(f"{artifact.path}: weights cannot be read back from model.onnx "
                         f"({unreadable}); export it with weights.safetensors "
                         f"(punctum export --with-weights)")
    return meta["kind"], meta["model_config"], _cnn_bilstm_from_onnx(artifact.model_file,
                                                                     meta["model_config"])


def _unreadable(meta: dict) -> str:
    """Why `_cnn_bilstm_from_onnx` cannot read this artifact's graph ("" when it can)."""
    config = meta["model_config"]
    if meta["kind"] != "cnn_bilstm":
        return f"a {meta['kind']} model"
    if config.get("pause_buckets", 0):
        return "a pause-aware model"
    if config.get("head_hidden", 0) or config.get("embed_dim") != config.get("conv_channels"):
        return "hidden head layers or an embedding projection"
    if "per channel" in str(meta["model"].get("precision", "")):
        return "per-channel int8 scales"
    return ""


def _node(graph, op_types: tuple[str, ...], where: str, matches) -> object:
    """The first node of one of `op_types` for which matches(node); ValueError if none."""
    for node in graph.node:
        if node.op_type in op_types and matches(node):
            return node
    raise ValueError(f"model.onnx: no {'/'.join(op_types)} node for {where}: not a graph "
                     f"that punctum export wrote")


def _cnn_bilstm_from_onnx(model_file: Path, config: dict) -> dict[str, torch.Tensor]:
    import onnx

    graph = onnx.load(str(model_file)).graph
    tensors = _float_initializers(graph)
    state: dict[str, np.ndarray] = {"embed.weight": _embedding(graph, tensors)}
    for layer in range(config["n_conv_layers"]):
        prefix = f"convs.{layer}"
        state[f"{prefix}.conv.weight"] = _conv_weight(graph, tensors, prefix)
        for name in ("conv.bias", "norm.weight", "norm.bias"):
            state[f"{prefix}.{name}"] = tensors[f"{prefix}.{name}"]
    lstms = [n for n in graph.node if n.op_type in ("LSTM", "DynamicQuantizeLSTM")]
    names = [f"bilstm.{{}}_l{i}" for i in range(config["n_bilstm_layers"])] + ["lstm.{}_l0"]
    if len(lstms) != len(names):
        raise ValueError(f"{model_file}: {len(lstms)} LSTM nodes, expected {len(names)}")
    for node, name in zip(lstms, names):
        state.update(_lstm(node, tensors, name))
    for head in ("punct_head", "case_head"):
        state[f"{head}.weight"] = _head_weight(graph, tensors, head)
        state[f"{head}.bias"] = tensors[f"{head}.bias"]
    return {key: torch.from_numpy(np.ascontiguousarray(value, dtype=np.float32))
            for key, value in state.items()}


def _float_initializers(graph) -> dict[str, np.ndarray]:
    """Every initializer as float32, int8/uint8 ones dequantized when their scale is known."""
    from onnx import numpy_helper

    raw = {init.name: numpy_helper.to_array(init) for init in graph.initializer}
    out = {}
    for name, value in raw.items():
        if name.endswith("_quantized"):
            base = name.removesuffix("_quantized")
            zero = raw.get(f"{base}_zero_point", 0.0)
            out[base] = dequantize(value, raw[f"{base}_scale"], zero)
        else:
            out[name] = value.astype(np.float32) if value.dtype.kind == "f" else value
    return out


def _embedding(graph, tensors) -> np.ndarray:
    """(vocab, embed_dim): the table the first Gather on "ids" reads."""
    gather = _node(graph, ("Gather",), "the embedding", lambda n: n.input[1] == "ids")
    return tensors[gather.input[0].removesuffix("_quantized")]


def _conv_weight(graph, tensors, prefix: str) -> np.ndarray:
    """(C_out, C_in, k) weight of the Conv (or ConvInteger) inside /{prefix}/."""
    node = _node(graph, ("Conv", "ConvInteger"), prefix,
                 lambda n: f"/{prefix}/" in (n.name + n.output[0]))
    return tensors[node.input[1].removesuffix("_quantized")]


def _head_weight(graph, tensors, head: str) -> np.ndarray:
    """(n_labels, in) weight of a head, stored transposed for MatMul in the graph."""
    node = _node(graph, ("MatMul", "MatMulInteger"), head,
                 lambda n: f"/{head}/" in (n.name + n.output[0]))
    return tensors[node.input[1].removesuffix("_quantized")].T


def _lstm(node, tensors, name: str) -> dict[str, np.ndarray]:
    """torch LSTM parameters of one ONNX LSTM node (one or two directions).

    ONNX LSTM: W (dirs, 4H, in), R (dirs, 4H, H); DynamicQuantizeLSTM stores them transposed,
    (dirs, in, 4H) and (dirs, H, 4H); B (dirs, 8H) holds the input then the recurrent bias.
    """
    w, r = (tensors[node.input[i].removesuffix("_quantized")] for i in (1, 2))
    if node.op_type == "DynamicQuantizeLSTM":
        w, r = w.transpose(0, 2, 1), r.transpose(0, 2, 1)
    bias = tensors[node.input[3]]
    hidden = r.shape[2]
    out = {}
    for direction in range(w.shape[0]):
        suffix = "_reverse" if direction else ""
        b_ih, b_hh = bias[direction, :4 * hidden], bias[direction, 4 * hidden:]
        for key, value in (("weight_ih", w[direction]), ("weight_hh", r[direction]),
                           ("bias_ih", b_ih), ("bias_hh", b_hh)):
            out[name.format(key) + suffix] = _torch_gate_order(value, hidden)
    return out


def _torch_gate_order(value: np.ndarray, hidden: int) -> np.ndarray:
    blocks = [value[i * hidden:(i + 1) * hidden] for i in range(4)]
    return np.concatenate([blocks[i] for i in _ONNX_TO_TORCH_GATES], axis=0)
