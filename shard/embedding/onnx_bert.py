"""The BERT encoder as an ONNX graph of onnxruntime's fused transformer kernels, from the same weights.

The graph is written with the ``onnx`` helper API straight in the fused form onnxruntime's own
transformer optimiser produces for BERT (``com.microsoft`` EmbedLayerNormalization, Attention,
SkipLayerNormalization, BiasGelu), so no export, no optimiser pass, nothing written to disk. The
token-type embedding is folded into the position embeddings (every token has type 0).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

from shard.embedding.bert import BertEncoder

_CONTRIB = "com.microsoft"


class OnnxBertEncoder:
    """Called as ``BertEncoder``: ids, mask ``(batch, length)`` -> hidden ``(batch, length, hidden)``."""

    def __init__(self, encoder: BertEncoder, threads: int) -> None:
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        self._session = ort.InferenceSession(
            _graph(encoder).SerializeToString(), options, providers=["CPUExecutionProvider"]
        )

    def __call__(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        inputs = {"ids": ids.astype(np.int32), "mask": mask.astype(np.int32)}
        return np.asarray(self._session.run(None, inputs)[0])


class _Graph:
    def __init__(self) -> None:
        self.nodes: list[onnx.NodeProto] = []
        self.weights: list[onnx.TensorProto] = []

    def weight(self, name: str, value: np.ndarray) -> str:
        self.weights.append(numpy_helper.from_array(np.ascontiguousarray(value, dtype=np.float32), name))
        return name

    def op(
        self, kind: str, inputs: list[str], outputs: int = 1, fused: bool = True, **attributes: Any
    ) -> list[str]:
        names = [f"{kind}_{len(self.nodes)}_{i}" for i in range(outputs)]
        domain = _CONTRIB if fused else None
        self.nodes.append(helper.make_node(kind, inputs, names, domain=domain, **attributes))
        return names


def _graph(encoder: BertEncoder) -> onnx.ModelProto:
    g = _Graph()
    eps = float(encoder.eps)
    # mask_index: each row's length (right padding), which Attention uses to ignore the padding.
    x, mask_index = g.op(
        "EmbedLayerNormalization",
        [
            "ids",
            "",  # segment ids: none, the type-0 embedding is in the positions below
            g.weight("words", encoder.words),
            g.weight("positions", encoder.positions + encoder.token_type),
            "",
            g.weight("embeddings.gamma", encoder.embedding_norm[0]),
            g.weight("embeddings.beta", encoder.embedding_norm[1]),
            "mask",
        ],
        outputs=2,
        epsilon=eps,
    )
    for i, layer in enumerate(encoder.layers):
        p = f"layer{i}."
        (attended,) = g.op(
            "Attention",
            [x, g.weight(p + "qkv", layer.qkv), g.weight(p + "qkv.bias", layer.qkv_bias), mask_index],
            num_heads=encoder.heads,
        )
        (out,) = g.op("MatMul", [attended, g.weight(p + "out", layer.out)], fused=False)
        x = _skip_norm(g, out, x, p + "norm1", layer.norm1, g.weight(p + "out.bias", layer.out_bias), eps)
        (up,) = g.op("MatMul", [x, g.weight(p + "up", layer.up)], fused=False)
        (gelu,) = g.op("BiasGelu", [up, g.weight(p + "up.bias", layer.up_bias)])
        (down,) = g.op("MatMul", [gelu, g.weight(p + "down", layer.down)], fused=False)
        x = _skip_norm(g, down, x, p + "norm2", layer.norm2, g.weight(p + "down.bias", layer.down_bias), eps)
    g.nodes.append(helper.make_node("Identity", [x], ["hidden"]))
    graph = helper.make_graph(
        g.nodes,
        "bert",
        [
            helper.make_tensor_value_info("ids", TensorProto.INT32, ["batch", "length"]),
            helper.make_tensor_value_info("mask", TensorProto.INT32, ["batch", "length"]),
        ],
        [helper.make_tensor_value_info("hidden", TensorProto.FLOAT, ["batch", "length", encoder.hidden])],
        g.weights,
    )
    return helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(_CONTRIB, 1)]
    )


def _skip_norm(
    g: _Graph, x: str, skip: str, name: str, norm: tuple[np.ndarray, np.ndarray], bias: str, eps: float
) -> str:
    """``LayerNorm(x + bias + skip)`` in one kernel."""
    gamma, beta = g.weight(name + ".gamma", norm[0]), g.weight(name + ".beta", norm[1])
    (output,) = g.op("SkipLayerNormalization", [x, skip, gamma, beta, bias], epsilon=eps)
    return output
