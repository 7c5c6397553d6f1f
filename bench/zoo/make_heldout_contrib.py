#!/usr/bin/python3
"""Builds a held-out set of quantized and ONNX Runtime-optimized models: the com.microsoft
contrib ops ONNX Runtime's tools write (classes none of make_heldout5.py's models cover).

    /usr/bin/python3 bench/zoo/make_heldout_contrib.py OUT [--only NAME,NAME]
    bench/zoo/run.sh --zoo OUT --threads 1,2 --batches 1,4 --rounds 1 --no-docs

Same format as the zoo (make_models.write_zoo). No torch references: bench/zoo/run.py
compares every model with ONNX Runtime (whose CPU provider runs the contrib ops itself).
Models whose names start with "aside_" are kept for a last check only.

QOperator models ("qop_*"): ONNX Runtime's quantizer is not packaged here, so `qoperator`
below writes the form its QOperator mode emits, from a torch export and activation ranges
calibrated through ONNX Runtime (bench/quantize.py's `calibrate`, seeded inputs): QLinearConv
with s8 weights (per output channel or per tensor) and an int32 bias, the ReLU after a Conv or
an Add folded into the output's range; com.microsoft QLinearAdd, QLinearMul, QLinearSigmoid,
QLinearLeakyRelu, QLinearGlobalAveragePool, QLinearAveragePool, QLinearConcat, QLinearSoftmax
and QGemm; QLinearMatMul; MaxPool / Flatten / Reshape / Transpose on the integers; everything
else in float between a DequantizeLinear and a QuantizeLinear. Activations u8 (asymmetric) or
s8 (ONNX Runtime's QInt8 activation type), per tensor.

Transformer-optimizer models ("ortopt_*"): BERT-like encoders written in the form
onnxruntime.transformers' optimizer saves (seeded weights): EmbedLayerNormalization whose
mask_index (sequence lengths) feeds Attention (merged QKV weights), or Gather embeddings with
the default-domain LayerNormalization ONNX Runtime registers before opset 17 and Attention on
the raw 0/1 mask (ortopt_gpt_causal: unidirectional, GPT-2 without past);
SkipLayerNormalization with its bias, BiasGelu or FastGelu.

QDQ: qdq_resnet18 through bench/quantize.py (the form ONNX Runtime's QDQ mode writes).
"""
import os
import subprocess
import sys

import numpy as np
import onnx
import torch
import torchvision
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, ".."))
import make_models as zoo  # noqa: E402
import quantize as qdq_tool  # noqa: E402

zoo.MODELS.clear()
model, export_torch, tv = zoo.model, zoo.export_torch, zoo.tv
DIM_VALUES = {"batch": 1, "seq": 128}
ORT_DIR = os.environ.get("GED_ORT_DIR", os.path.join(HERE, "..", "..", "build", "ort"))
MS = "com.microsoft"


def image(size, channels=3):
    return [("image", "float32", ["batch", channels, size, size], {"kind": "uniform"})]


# ---------------------------------------------------------------- QOperator quantizer

def act_params(lo, hi, s8):
    lo, hi = min(lo, 0.0), max(hi, 0.0)
    scale = (hi - lo) / 255.0 if hi > lo else 1.0
    if s8:
        return np.float32(scale), np.int8(np.clip(np.round(-128 - lo / scale), -128, 127))
    return np.float32(scale), np.uint8(np.clip(np.round(-lo / scale), 0, 255))


def qoperator(path, s8=False, per_channel=True, calibration=4):
    m = onnx.load(path)
    m = onnx.shape_inference.infer_shapes(m)
    g = m.graph
    inits = {i.name: numpy_helper.to_array(i) for i in g.initializer}
    consumers = {}
    for n in g.node:
        for i in n.input:
            consumers.setdefault(i, []).append(n)
    outputs = {o.name for o in g.output}
    types = {v.name: v.type.tensor_type.elem_type for v in list(g.value_info) + list(g.input) + list(g.output)}
    float_names = [i.name for i in g.input if i.name not in inits]
    for n in g.node:
        float_names += [o for o in n.output if o and types.get(o) == TensorProto.FLOAT]
    ranges = qdq_tool.calibrate(m, float_names, calibration, 0, 4, ORT_DIR)

    nodes, new_inits = [], []
    qt = {}  # float tensor name -> (quantized name, scale name, zero name)
    fl = {}  # float tensor name -> name of its float value in the new graph
    counter = [0]

    def init(name, arr):
        counter[0] += 1
        full = f"{name}_c{counter[0]}"
        new_inits.append(numpy_helper.from_array(np.asarray(arr), full))
        return full

    def params_of(name):
        lo, hi = ranges[name]
        s, z = act_params(lo, hi, s8)
        return init(name + "_scale", s), init(name + "_zp", z)

    def getq(name):
        if name not in qt:
            if name in inits:  # a constant operand: quantized with its own range
                w = inits[name].astype(np.float32)
                s, z = act_params(float(w.min()), float(w.max()), s8)
                q = np.clip(np.round(w / s) + z, -128 if s8 else 0, 127 if s8 else 255).astype(np.int8 if s8 else np.uint8)
                qt[name] = (init(name + "_q", q), init(name + "_scale", s), init(name + "_zp", z))
            else:
                s, z = params_of(name)
                qn = name + "_quantized"
                nodes.append(helper.make_node("QuantizeLinear", [fl.get(name, name), s, z], [qn]))
                qt[name] = (qn, s, z)
        return qt[name]

    def getf(name):
        if name in fl or name in inits:
            return fl.get(name, name)
        if name in qt:
            q, s, z = qt[name]
            fn = name + "_dequantized"
            nodes.append(helper.make_node("DequantizeLinear", [q, s, z], [fn]))
            fl[name] = fn
            return fn
        return name  # a graph input

    def fold_relu(out):
        """The tensor whose range the output takes: a sole Relu consumer's output."""
        cs = consumers.get(out, [])
        if len(cs) == 1 and cs[0].op_type == "Relu" and out not in outputs:
            return cs[0].output[0], cs[0]
        return out, None

    def weights(w, axis):
        if per_channel:
            q, s = qdq_tool.quantize_weights(w, axis, 127)
        else:
            amax = max(float(np.abs(w).max()), 1e-8)
            s = np.float32(amax / 127)
            q = np.clip(np.round(w / s), -127, 127).astype(np.int8)
            s = np.array(s, np.float32)
        return q, s

    skipped = set()
    for n in g.node:  # torch's Identity of a shared initializer: an initializer of its own
        if n.op_type == "Identity" and n.input[0] in inits:
            inits[n.output[0]] = inits[n.input[0]]
            new_inits.append(numpy_helper.from_array(inits[n.input[0]], n.output[0]))
            skipped.add(id(n))
    for n in g.node:
        if id(n) in skipped:
            continue
        op = n.op_type
        if op == "Conv" and n.input[1] in inits:
            out, relu = fold_relu(n.output[0])
            if relu is not None:
                skipped.add(id(relu))
            x, xs, xz = getq(n.input[0])
            q, ws = weights(inits[n.input[1]], 0)
            ys, yz = params_of(out)
            ins = [x, xs, xz, init(n.input[1] + "_q", q), init(n.input[1] + "_scale", ws),
                   init(n.input[1] + "_zp", np.zeros(ws.shape, np.int8)), ys, yz]
            if len(n.input) > 2 and n.input[2]:
                xs_val = numpy_helper.to_array([i for i in new_inits if i.name == xs][0])
                b = np.round(inits[n.input[2]] / (xs_val * ws)).astype(np.int32)
                ins.append(init(n.input[2] + "_q", b))
            qn = out + "_quantized"
            nodes.append(helper.make_node("QLinearConv", ins, [qn], name=n.name, **{a.name: helper.get_attribute_value(a) for a in n.attribute}))
            qt[out] = (qn, ys, yz)
        elif op in ("Add", "Mul") and all(i in ranges or i in inits for i in n.input) and not all(i in inits for i in n.input):
            out, relu = fold_relu(n.output[0]) if op == "Add" else (n.output[0], None)
            if relu is not None:
                skipped.add(id(relu))
            a, b = getq(n.input[0]), getq(n.input[1])
            ys, yz = params_of(out)
            qn = out + "_quantized"
            nodes.append(helper.make_node("QLinear" + op, [*a, *b, ys, yz], [qn], name=n.name, domain=MS))
            qt[out] = (qn, ys, yz)
        elif op in ("Sigmoid", "LeakyRelu", "GlobalAveragePool", "AveragePool", "Softmax") and n.input[0] in ranges:
            x = getq(n.input[0])
            ys, yz = params_of(n.output[0])
            attrs = {a.name: helper.get_attribute_value(a) for a in n.attribute}
            if op == "Softmax":
                attrs["opset"] = 13
            qn = n.output[0] + "_quantized"
            nodes.append(helper.make_node("QLinear" + op, [*x, ys, yz], [qn], name=n.name, domain=MS, **attrs))
            qt[n.output[0]] = (qn, ys, yz)
        elif op == "Concat" and all(i in ranges for i in n.input):
            ys, yz = params_of(n.output[0])
            ins = [ys, yz]
            for i in n.input:
                ins += list(getq(i))
            qn = n.output[0] + "_quantized"
            nodes.append(helper.make_node("QLinearConcat", ins, [qn], name=n.name, domain=MS,
                                          **{a.name: helper.get_attribute_value(a) for a in n.attribute}))
            qt[n.output[0]] = (qn, ys, yz)
        elif op == "Gemm" and n.input[1] in inits:
            attrs = {a.name: helper.get_attribute_value(a) for a in n.attribute}
            if attrs.get("transA", 0) or attrs.get("alpha", 1.0) != 1.0 or attrs.get("beta", 1.0) != 1.0:
                raise SystemExit("Gemm form not handled")
            trans_b = attrs.get("transB", 0)
            a, as_, az = getq(n.input[0])
            q, ws = weights(inits[n.input[1]], 0 if trans_b else 1)
            ys, yz = params_of(n.output[0])
            ins = [a, as_, az, init(n.input[1] + "_q", q), init(n.input[1] + "_scale", ws),
                   init(n.input[1] + "_zp", np.zeros(ws.shape, np.int8))]
            if len(n.input) > 2 and n.input[2]:
                as_val = numpy_helper.to_array([i for i in new_inits if i.name == as_][0])
                ins.append(init(n.input[2] + "_q", np.round(inits[n.input[2]] / (as_val * ws)).astype(np.int32)))
            else:
                ins.append("")
            qn = n.output[0] + "_quantized"
            nodes.append(helper.make_node("QGemm", ins + [ys, yz], [qn], name=n.name, domain=MS, transB=trans_b))
            qt[n.output[0]] = (qn, ys, yz)
        elif op == "MatMul" and n.input[1] in inits and inits[n.input[1]].ndim == 2 and n.input[0] in ranges:
            a = getq(n.input[0])
            q, ws = weights(inits[n.input[1]], 1)
            if per_channel:  # QLinearMatMul's b_scale per column is 1-D [N]
                ws = ws.reshape(-1)
            ys, yz = params_of(n.output[0])
            qn = n.output[0] + "_quantized"
            nodes.append(helper.make_node("QLinearMatMul", [*a, init(n.input[1] + "_q", q), init(n.input[1] + "_scale", ws),
                                                             init(n.input[1] + "_zp", np.zeros(ws.shape, np.int8)), ys, yz],
                                          [qn], name=n.name))
            qt[n.output[0]] = (qn, ys, yz)
        elif op in ("MaxPool", "Flatten", "Reshape", "Transpose", "Squeeze", "Unsqueeze") and n.input[0] in qt:
            q, s, z = qt[n.input[0]]
            qn = n.output[0] + "_quantized"
            rest = [fl.get(i, i) for i in n.input[1:]]
            nodes.append(helper.make_node(op, [q] + rest, [qn], name=n.name,
                                          **{a.name: helper.get_attribute_value(a) for a in n.attribute}))
            qt[n.output[0]] = (qn, s, z)
        else:
            new = onnx.NodeProto()
            new.CopyFrom(n)
            del new.input[:]
            new.input.extend([getf(i) if i else "" for i in n.input])
            nodes.append(new)
    for o in g.output:
        if o.name in qt and o.name not in fl:
            q, s, z = qt[o.name]
            nodes.append(helper.make_node("DequantizeLinear", [q, s, z], [o.name]))
        elif o.name in fl and fl[o.name] != o.name:
            nodes.append(helper.make_node("Identity", [fl[o.name]], [o.name]))
    used = {i for nd in nodes for i in nd.input}
    del g.node[:]
    g.node.extend(nodes)
    keep = [i for i in g.initializer if i.name in used]
    del g.initializer[:]
    g.initializer.extend(keep + [i for i in new_inits if i.name in used])
    del g.value_info[:]
    m.opset_import.append(helper.make_opsetid(MS, 1))
    onnx.save(m, path)


def qop(path, net, specs, **kw):
    export_torch(net, specs, path, opset=13)
    qoperator(path, **kw)
    return specs, None


@model("qop_resnet18")
def qop_resnet18(path):
    return qop(path, tv(torchvision.models.resnet18), image(224))


@model("qop_mobilenet_v3_small_s8")
def qop_mobilenet_v3_small_s8(path):
    return qop(path, tv(torchvision.models.mobilenet_v3_small), image(224), s8=True, per_channel=False)


@model("qop_squeezenet")
def qop_squeezenet(path):
    return qop(path, tv(torchvision.models.squeezenet1_1), image(224))


@model("aside_qop_shufflenet_s8")
def aside_qop_shufflenet(path):
    return qop(path, tv(torchvision.models.shufflenet_v2_x1_0), image(224), s8=True)


class TokenEncoder(torch.nn.Module):
    """Two pre-norm transformer blocks on float tokens (a ViT's body after the patch
    embedding): MatMul with constant weights, broadcast bias Adds, residual Adds,
    Softmax, GELU and LayerNorm (decomposed at opset 13)."""

    def __init__(self, dim=256, heads=4, depth=2):
        super().__init__()
        torch.manual_seed(2)
        layer = torch.nn.TransformerEncoderLayer(dim, heads, 2 * dim, dropout=0.0, activation="gelu",
                                                 batch_first=True, norm_first=True)
        self.body = torch.nn.TransformerEncoder(layer, depth, enable_nested_tensor=False)

    def forward(self, x):
        return self.body(x)


@model("qop_token_encoder")
def qop_token_encoder(path):
    specs = [("tokens", "float32", ["batch", 64, 256], {"kind": "uniform"})]
    return qop(path, TokenEncoder(), specs)


@model("qdq_resnet18")
def qdq_resnet18(path):
    export_torch(tv(torchvision.models.resnet18), image(224), path)
    fp32 = path + ".fp32.onnx"
    os.replace(path, fp32)
    r = subprocess.run([sys.executable, os.path.join(HERE, "..", "quantize.py"), fp32, path, "--calibration", "4",
                        "--weight-bits", "8", "--ort-dir", ORT_DIR], capture_output=True, text=True)
    os.remove(fp32)
    if r.returncode != 0:
        sys.exit("quantize.py failed: " + r.stderr[-2000:])
    return image(224), None


# ---------------------------------------------------------------- transformer-optimizer form

def ortopt_bert(path, vocab=8000, dim=256, depth=4, heads=4, gelu="BiasGelu", seed=0, embed_ln=True,
                dynamic=False, causal=False):
    """dynamic: what ONNX Runtime's quantize_dynamic writes on the optimized model (s8 weights
    per tensor; DynamicQuantizeLinear -> QAttention, and MatMulInteger -> Cast -> Mul by the
    scales for each MatMul)."""
    rng = np.random.default_rng(seed)
    inits, nodes = [], []

    def w(name, *shape, scale=None, offset=0.0):
        scale = scale if scale is not None else 1.0 / np.sqrt(shape[0])
        inits.append(numpy_helper.from_array((rng.standard_normal(shape) * scale + offset).astype(np.float32), name))
        return name

    def const(name, arr):
        inits.append(numpy_helper.from_array(np.asarray(arr), name))
        return name

    if embed_ln:
        # EmbedLayerNormalization (int32 ids and mask), its mask_index (lengths) to Attention.
        nodes += [helper.make_node("Cast", ["ids"], ["ids32"], to=TensorProto.INT32),
                  helper.make_node("Cast", ["mask"], ["mask_in32"], to=TensorProto.INT32),
                  helper.make_node("EmbedLayerNormalization",
                                   ["ids32", "", w("word", vocab, dim, scale=0.05), w("pos", 512, dim, scale=0.02), "",
                                    w("emb_g", dim, scale=0.1, offset=1.0), w("emb_b", dim, scale=0.1), "mask_in32"],
                                   ["x0", "mask32"], domain=MS, epsilon=1e-12)]
    # Or: word + position (Gather of a Range over the sequence) -> LayerNormalization.
    nodes += [] if embed_ln else [helper.make_node("Gather", [w("word", vocab, dim, scale=0.05), "ids"], ["we"]),
              helper.make_node("Shape", ["ids"], ["ids_shape"]),
              helper.make_node("Gather", ["ids_shape", const("one_i", np.array(1, np.int64))], ["seq_len"]),
              helper.make_node("Range", [const("zero_i", np.array(0, np.int64)), "seq_len",
                                         const("step_i", np.array(1, np.int64))], ["positions"]),
              helper.make_node("Gather", [w("pos", 512, dim, scale=0.02), "positions"], ["pe"]),
              helper.make_node("Add", ["we", "pe"], ["emb"]),
              helper.make_node("LayerNormalization", ["emb", w("emb_g", dim, scale=0.1, offset=1.0),
                                                      w("emb_b", dim, scale=0.1)], ["x0"], axis=-1, epsilon=1e-12),
              helper.make_node("Cast", ["mask"], ["mask32"], to=TensorProto.INT32)]
    def s8(name):
        """The initializer `name` as s8 per tensor: (quantized, scale)."""
        arr = numpy_helper.to_array([i for i in inits if i.name == name][0])
        scale = np.float32(max(float(np.abs(arr).max()), 1e-8) / 127)
        return (const(name + "_q", np.clip(np.round(arr / scale), -127, 127).astype(np.int8)),
                const(name + "_s", np.array(scale, np.float32)))

    def matmul(a, weight, out):
        if not dynamic:
            nodes.append(helper.make_node("MatMul", [a, weight], [out]))
            return
        q, s = s8(weight)
        nodes.extend([helper.make_node("DynamicQuantizeLinear", [a], [a + "_q", a + "_s", a + "_z"]),
                  helper.make_node("MatMulInteger", [a + "_q", q, a + "_z", const(weight + "_z", np.array(0, np.int8))],
                                   [out + "_i32"]),
                  helper.make_node("Cast", [out + "_i32"], [out + "_f"], to=TensorProto.FLOAT),
                  helper.make_node("Mul", [a + "_s", s], [out + "_scale"]),
                  helper.make_node("Mul", [out + "_f", out + "_scale"], [out])])

    x = "x0"
    for layer in range(depth):
        p = f"l{layer}_"
        qkv_w, qkv_b = w(p + "qkv_w", dim, 3 * dim), w(p + "qkv_b", 3 * dim, scale=0.1)
        if dynamic:
            q, s = s8(qkv_w)
            nodes.append(helper.make_node("DynamicQuantizeLinear", [x], [x + "_q", x + "_s", x + "_z"]))
            nodes.append(helper.make_node("QAttention", [x + "_q", q, qkv_b, x + "_s", s, "mask32", x + "_z"],
                                          [p + "att"], domain=MS, num_heads=heads))
        else:
            nodes.append(helper.make_node("Attention", [x, qkv_w, qkv_b, "mask32"], [p + "att"], domain=MS,
                                          num_heads=heads, unidirectional=int(causal)))
        matmul(p + "att", w(p + "o_w", dim, dim), p + "o")
        nodes.append(helper.make_node("SkipLayerNormalization",
                                      [p + "o", x, w(p + "ln1_g", dim, scale=0.1, offset=1.0), w(p + "ln1_b", dim, scale=0.1),
                                       w(p + "o_b", dim, scale=0.1)], [p + "ln1"], domain=MS, epsilon=1e-12))
        matmul(p + "ln1", w(p + "f1_w", dim, 4 * dim), p + "f1")
        nodes.append(helper.make_node(gelu, [p + "f1", w(p + "f1_b", 4 * dim, scale=0.1)], [p + "act"], domain=MS))
        matmul(p + "act", w(p + "f2_w", 4 * dim, dim), p + "f2")
        nodes.append(helper.make_node("SkipLayerNormalization",
                                      [p + "f2", p + "ln1", w(p + "ln2_g", dim, scale=0.1, offset=1.0),
                                       w(p + "ln2_b", dim, scale=0.1), w(p + "f2_b", dim, scale=0.1)],
                                      [p + "out"], domain=MS, epsilon=1e-12))
        x = p + "out"
    nodes.append(helper.make_node("Identity", [x], ["hidden"]))
    used = {i for n in nodes for i in n.input}
    inits = [i for i in inits if i.name in used]
    graph = helper.make_graph(
        nodes, "ortopt_bert",
        [helper.make_tensor_value_info("ids", TensorProto.INT64, ["batch", "seq"]),
         helper.make_tensor_value_info("mask", TensorProto.INT64, ["batch", "seq"])],
        [helper.make_tensor_value_info("hidden", TensorProto.FLOAT, ["batch", "seq", dim])], inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid(MS, 1)],
                          producer_name="ged-heldout-contrib")
    m.ir_version = 8
    onnx.save(m, path)
    return [("ids", "int64", ["batch", "seq"], {"kind": "int", "high": vocab}),
            ("mask", "int64", ["batch", "seq"], {"kind": "int", "high": 2})], None


@model("ortopt_bert")
def ortopt_bert_small(path):
    return ortopt_bert(path)


@model("qdyn_ortopt_bert")
def qdyn_ortopt_bert(path):
    return ortopt_bert(path, vocab=5000, dim=384, depth=2, heads=6, seed=5, dynamic=True)


@model("ortopt_gpt_causal")
def ortopt_gpt_causal(path):
    """A GPT-2-like stack as the optimizer writes it without past: Attention unidirectional 1."""
    return ortopt_bert(path, vocab=6000, dim=256, depth=3, heads=4, gelu="FastGelu", seed=7, embed_ln=False,
                       causal=True)


@model("aside_ortopt_bert_fastgelu")
def aside_ortopt_bert(path):
    return ortopt_bert(path, vocab=6000, dim=384, depth=3, heads=6, gelu="FastGelu", seed=3, embed_ln=False)


def main():
    zoo.main_with_dim_values(DIM_VALUES)


if __name__ == "__main__":
    main()
