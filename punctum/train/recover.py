"""Trainable weights from an exported artifact, for fine-tuning without its checkpoint.

    # in a recipe: start from the bundled model (its tokenizer comes along)
    [train]
    init_from = "en-tiny"

An artifact's weights.safetensors is used when it has one. Otherwise the weights are read back
from model.onnx: fp32 tensors as they are, int8 ones dequantized ((q - zero_point) * scale),
so the start is the shipped model up to its int8 rounding. Supported: the graphs that
`punctum export` writes for the CNN-BiLSTM (LSTM or DynamicQuantizeLSTM, MatMul or
MatMulInteger heads) and for the Transformer tagger (en-accurate: per-channel int8 MatMuls,
each named after the module in the exporter's node name).
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


def check_language(model: str | Path, language: str, key: str) -> None:
    """A model (a bundled name or a folder) to learn from or start from must be of the
    recipe's `language` (its weights and labels learnt another's marks and words);
    ValueError naming the recipe `key` otherwise."""
    theirs = artifacts.read_artifact(artifacts.resolve(model)).inventory.language
    if theirs != language:
        raise ValueError(f"{key}: {model} is a {theirs!r} model; the recipe trains a "
                         f"{language!r} one")


def model_config(folder: str | Path) -> dict:
    """An artifact's model_config (punctum.json), which rebuilds its model (build_model)."""
    artifact = artifacts.read_artifact(Path(folder))
    if not artifact.meta.get("model_config"):
        raise ValueError(f"{artifact.path}: an ensemble or a model without model_config has no "
                         f"weights to start from")
    return artifact.meta["model_config"]


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
        return meta["kind"], meta["model_config"], _safetensors(artifact.path / meta["weights"])
    unreadable = _unreadable(meta)
    if unreadable:
        raise ValueError(f"{artifact.path}: weights cannot be read back from model.onnx "
                         f"({unreadable}); export it with weights.safetensors "
                         f"(punctum export --with-weights)")
    read = _transformer_from_onnx if meta["kind"] == "transformer_tagger" else _cnn_bilstm_from_onnx
    return meta["kind"], meta["model_config"], read(artifact.model_file, meta["model_config"])


def _safetensors(path: Path) -> dict[str, torch.Tensor]:
    """The tensors of a weights.safetensors file, or a one-line error naming it."""
    from safetensors import SafetensorError
    from safetensors.torch import load_file

    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such file (the weights punctum.json names)")
    try:
        return load_file(str(path))
    except (SafetensorError, OSError, ValueError) as error:
        raise ValueError(f"{path}: not readable ({error})") from None


def _unreadable(meta: dict) -> str:
    """Why the graph readers cannot read this artifact's graph ("" when they can)."""
    config = meta["model_config"]
    if meta["kind"] == "transformer_tagger":
        return ""
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

    graph = _graph(model_file)
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


def _transformer_from_onnx(model_file: Path, config: dict) -> dict[str, torch.Tensor]:
    """A Transformer tagger's state dict: named initializers (embeddings, biases, LayerNorms)
    as they are; each MatMul weight (an anonymous "onnx::MatMul_N" initializer, (in, out))
    transposed and named after the module the exporter's node name gives
    ("/encoder/encoder/layer.0/attention/self/query/MatMul" -> "...query.weight"), with the
    bias added to its product when the exporter merged equal biases under another name.

    Raises:
        ValueError: the tensors found are not those of the model that `config` builds.
    """

    from punctum.models import build_model

    graph = _graph(model_file)
    tensors = _float_initializers(graph)
    state = {name: value for name, value in tensors.items() if not name.startswith("onnx::")
             and not name.endswith(("_scale", "_zero_point"))}
    consumers: dict[str, list] = {}
    for node in graph.node:
        for name in node.input:
            consumers.setdefault(name, []).append(node)
    for node in graph.node:
        weight = node.input[1].removesuffix("_quantized") if len(node.input) > 1 else ""
        if node.op_type in ("MatMul", "MatMulInteger") and weight.startswith("onnx::") \
                and weight in tensors:
            module = _module_path(node.name)
            state[f"{module}.weight"] = tensors[weight].T
            bias = _added_initializer(node, consumers, tensors)
            if bias is not None:
                state.setdefault(f"{module}.bias", tensors[bias])
    expected = build_model("transformer_tagger", config).state_dict()
    missing, extra = sorted(set(expected) - set(state)), sorted(set(state) - set(expected))
    if missing or extra:
        raise ValueError(f"{model_file}: its tensors do not fit the model of its punctum.json "
                         f"(missing: {', '.join(missing[:3]) or '-'}; "
                         f"unexpected: {', '.join(extra[:3]) or '-'})")
    wrong = [key for key, value in expected.items() if state[key].shape != tuple(value.shape)]
    if wrong:
        raise ValueError(f"{model_file}: {wrong[0]} has shape {state[wrong[0]].shape}, the model "
                         f"of its punctum.json {tuple(expected[wrong[0]].shape)}")
    return {key: torch.from_numpy(np.ascontiguousarray(state[key], dtype=np.float32))
            for key in expected}


def _graph(model_file: Path):
    """The ONNX graph of a model file, or a one-line ValueError naming it."""
    import onnx
    from google.protobuf.message import DecodeError

    try:
        return onnx.load(str(model_file)).graph
    except (DecodeError, OSError, ValueError) as error:
        raise ValueError(f"{model_file}: not a readable ONNX model ({error})") from None


def _module_path(node_name: str) -> str:
    """The module a node belongs to from the exporter's scope path: "/encoder/blocks.0/mlp/
    mlp.0/MatMul" -> "encoder.blocks.0.mlp.0" (a called container, "mlp", scopes its child,
    "mlp.0", which already carries its name)."""
    parts = node_name.strip("/").split("/")[:-1]
    kept = [p for p, after in zip(parts, parts[1:] + [""]) if not after.startswith(p + ".")]
    return ".".join(kept)


def _added_initializer(node, consumers: dict[str, list], tensors: dict) -> str | None:
    """The initializer that an Add right after `node` (past the Cast and Mul of a dequantized
    product) adds to its output: the bias of a Linear layer; None when there is none."""
    output = node.output[0]
    for _ in range(4):
        following = consumers.get(output, [])
        if len(following) != 1:
            return None
        step = following[0]
        if step.op_type == "Add":
            biases = [name for name in step.input if name in tensors]
            return biases[0] if biases else None
        if step.op_type not in ("Cast", "Mul"):
            return None
        output = step.output[0]
    return None


def _float_initializers(graph) -> dict[str, np.ndarray]:
    """Every initializer as float32, int8/uint8 ones dequantized when their scale is known.

    Per-channel scales run along the first axis, except for MatMul weights (in, out), whose
    channels are their columns."""
    from onnx import numpy_helper

    raw = {init.name: numpy_helper.to_array(init) for init in graph.initializer}
    by_column = {node.input[1] for node in graph.node if node.op_type == "MatMulInteger"}
    out = {}
    for name, value in raw.items():
        if name.endswith("_quantized"):
            base = name.removesuffix("_quantized")
            zero, scale = raw.get(f"{base}_zero_point", 0.0), raw[f"{base}_scale"]
            out[base] = (dequantize(value.T, scale, zero).T if name in by_column
                         else dequantize(value, scale, zero))
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
