"""ONNX graph rewrites applied after export (needs the `onnx` package of punctum[train]).

    python scripts/float_convs.py punctum/assets/en-tiny     # rewrite a bundled artifact

ONNX Runtime's dynamic int8 quantization turns every Conv into DynamicQuantizeLinear +
ConvInteger + rescaling. For the CNN-BiLSTM's three 100-channel convolutions this costs 17%
of a forward pass on this CPU while they hold about 1% of the model's 7.4M parameters:
ConvInteger has no fast kernel, fp32 Conv does (docs/BENCHMARKS.md, restore speed). New
exports therefore leave Conv in fp32 (`QUANTIZED_OP_TYPES`); `float_convs` rewrites an artifact
that was quantized before, using its own int8 weights, so no training checkpoint is needed.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import helper, numpy_helper

# Op types that `quantize_dynamic` quantizes in punctum's exports: its defaults but Conv.
QUANTIZED_OP_TYPES = ("MatMul", "Attention", "LSTM", "Gather", "Transpose",
                      "EmbedLayerNormalization")

_CONV_ATTRIBUTES = ("dilations", "group", "kernel_shape", "pads", "strides", "auto_pad")


def float_convs(model: onnx.ModelProto) -> int:
    """Replace each dynamically quantized convolution by an fp32 Conv, in place.

    The pattern is the one `quantize_dynamic` writes: x -> DynamicQuantizeLinear ->
    ConvInteger(w_int8) -> Cast -> Mul(x_scale * w_scale). The Conv gets the dequantized
    weight (w_int8 - zero_point) * scale (per tensor or per output channel); the rest of the
    graph (the bias Add that follows) is unchanged.

    Returns:
        the number of convolutions rewritten.
    """
    graph = model.graph
    producer = {out: node for node in graph.node for out in node.output}
    inits = {init.name: init for init in graph.initializer}
    removed, rewritten = set(), 0
    for conv in [n for n in graph.node if n.op_type == "ConvInteger"]:
        found = _match(conv, graph, producer)
        if found is None:
            continue
        quantize, cast, rescale = found
        weight = _dequantized_weight(conv, inits)
        name = conv.name or conv.output[0]
        graph.initializer.append(numpy_helper.from_array(weight, f"{name}_float_weight"))
        attributes = {a.name: helper.get_attribute_value(a) for a in conv.attribute
                      if a.name in _CONV_ATTRIBUTES}
        float_conv = helper.make_node("Conv", [quantize.input[0], f"{name}_float_weight"],
                                      [rescale.output[0]], name=f"{name}_float", **attributes)
        graph.node.insert(list(graph.node).index(rescale), float_conv)
        removed.update(id(n) for n in (conv, cast, rescale))
        rewritten += 1
    kept = [n for n in graph.node if id(n) not in removed]
    del graph.node[:]
    graph.node.extend(kept)
    _drop_dead_nodes(graph)  # the quantizers and scale products nothing reads any more
    _drop_unused_initializers(graph)
    return rewritten


def _match(conv, graph, producer):
    """(DynamicQuantizeLinear, Cast, Mul) around a ConvInteger, or None for another shape."""
    quantize = producer.get(conv.input[0])
    if quantize is None or quantize.op_type != "DynamicQuantizeLinear":
        return None
    cast = next((n for n in graph.node if n.op_type == "Cast" and conv.output[0] in n.input),
                None)
    if cast is None:
        return None
    rescale = next((n for n in graph.node if n.op_type == "Mul" and cast.output[0] in n.input),
                   None)
    return None if rescale is None else (quantize, cast, rescale)


def dequantize(q: np.ndarray, scale: np.ndarray, zero=0.0) -> np.ndarray:
    """(q - zero) * scale as float32, with a scalar scale and zero point or one per entry of
    the first axis (per output channel, per LSTM direction)."""
    shape = (-1,) + (1,) * (q.ndim - 1)
    scale = np.reshape(scale, shape) if np.ndim(scale) else scale
    zero = np.reshape(zero, shape) if np.ndim(zero) else zero
    return ((q.astype(np.float32) - np.asarray(zero, np.float32)) * scale).astype(np.float32)


def _dequantized_weight(conv, inits) -> np.ndarray:
    """(C_out, C_in, k) float32 weight of a ConvInteger: (w - zero_point) * scale."""
    zero_name = conv.input[3] if len(conv.input) > 3 else ""
    scale_name = conv.input[1].removesuffix("_quantized") + "_scale"
    if scale_name not in inits:
        raise ValueError(f"no scale initializer {scale_name!r} for {conv.input[1]!r}")
    return dequantize(numpy_helper.to_array(inits[conv.input[1]]),
                      numpy_helper.to_array(inits[scale_name]),
                      numpy_helper.to_array(inits[zero_name]) if zero_name else 0.0)


def _drop_dead_nodes(graph) -> None:
    """Remove nodes none of whose outputs reaches a graph output (walked from the end, so
    chains of dead nodes go too)."""
    needed = {out.name for out in graph.output}
    kept = []
    for node in reversed(list(graph.node)):
        if any(name in needed for name in node.output):
            kept.append(node)
            needed.update(name for name in node.input if name)
    del graph.node[:]
    graph.node.extend(reversed(kept))


def _drop_unused_initializers(graph) -> None:
    used = {name for node in graph.node for name in node.input}
    used.update(out.name for out in graph.output)
    kept = [init for init in graph.initializer if init.name in used]
    del graph.initializer[:]
    graph.initializer.extend(kept)
