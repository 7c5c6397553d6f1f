#!/usr/bin/python3
"""Builds the fifth held-out zoo: families none of the other sets covers.

    /usr/bin/python3 bench/zoo/make_heldout5.py OUT [--only NAME,NAME]
    bench/zoo/run.sh --zoo OUT --threads 1,2 --batches 1,8 --rounds 1 --no-docs

Same format as the zoo (make_models.write_zoo: OUT/<name>.onnx, OUT/manifest.json,
batch-1 inputs and references under OUT/data). The models whose names start with
"aside_" are variants (other widths, depths, block kinds) the work on this set does not
look at; they are measured at the end, as a check that a fix holds for the class.

Quantized models as people bring them (no torch reference: run.py compares them with
ONNX Runtime): ONNX Runtime-style dynamic quantization (`dynamic_quantize`: each MatMul /
Conv with constant weights becomes DynamicQuantizeLinear -> MatMulInteger / ConvInteger
-> Cast -> Mul by the product of the scales, s8 weights per tensor) of a BERT-like
encoder, a token MLP and a small CNN; QDQ models from bench/quantize.py (MobileNetV2, a
transformer encoder; calibrated through ONNX Runtime under --ort-dir); a QOperator CNN
(QuantizeLinear, QLinearConv with the ReLU folded into its output range, MaxPool on u8,
QLinearMatMul, DequantizeLinear), hand-built.

Older exports: opset 11 (Clip with min/max inputs, Resize-11, Split / Squeeze /
Unsqueeze with axes attributes), opset 9 (Upsample, Clip attributes) and an opset-13
export without torch's constant folding (Shape -> Gather -> Unsqueeze -> Concat ->
Reshape chains on dynamic batch and sequence).

Architectures (torch 1.13 exports, seeded weights): a MobileViT-like hybrid, an
HRNet-like multi-branch net with cross-resolution fusion, an EfficientDet-like BiFPN with
normalized weighted fusion, an SSD-lite head (many Reshape / Transpose / Concat), a
CLIP-like two-tower model (causal text tower with the end-token Gather), a top-2
Mixture-of-Experts layer (TopK routing, NonZero, index_select, index_add_), Perceiver-
style cross-attention, a Siamese network (one tower on two inputs), an ALiBi causal
decoder (the bias built in the graph) and a LLaMA-like decoder at sequence 512 (RMSNorm,
rotary embeddings through Sin / Cos / Slice / Neg / Concat, SwiGLU).
"""
import math
import os
import subprocess
import sys

import numpy as np
import onnx
import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_models as zoo  # noqa: E402

zoo.MODELS.clear()
model, export_torch, tv = zoo.model, zoo.export_torch, zoo.tv
IMAGE = zoo.IMAGE
DIM_VALUES = {"batch": 1, "seq": 64, "lseq": 512, "tokens": 16}
ORT_DIR = os.environ.get("GED_ORT_DIR", os.path.join(HERE, "..", "..", "build", "ort"))


def image(size, channels=3):
    return [("image", "float32", ["batch", channels, size, size], {"kind": "uniform"})]


def ids(vocab, seq="seq"):
    return [("ids", "int64", ["batch", seq], {"kind": "int", "high": vocab})]


# ---------------------------------------------------------------- transformer parts

class Attention(nn.Module):
    def __init__(self, dim, heads, causal=False):
        super().__init__()
        self.h, self.causal = heads, causal
        self.q, self.k, self.v, self.o = (nn.Linear(dim, dim) for _ in range(4))

    def forward(self, x, ctx=None, bias=None):
        ctx = x if ctx is None else ctx
        b, n, d = x.shape
        m = ctx.shape[1]
        q = self.q(x).view(b, n, self.h, d // self.h).transpose(1, 2)
        k = self.k(ctx).view(b, m, self.h, d // self.h).transpose(1, 2)
        v = self.v(ctx).view(b, m, self.h, d // self.h).transpose(1, 2)
        s = q @ k.transpose(-1, -2) / math.sqrt(d // self.h)
        if bias is not None:
            s = s + bias
        if self.causal:
            s = s.masked_fill(torch.ones(n, m, dtype=torch.bool).triu(1), float("-inf"))
        return self.o((s.softmax(-1) @ v).transpose(1, 2).reshape(b, n, d))


class Block(nn.Module):
    def __init__(self, dim, heads, causal=False, pre=True, mlp=4):
        super().__init__()
        self.pre = pre
        self.att, self.n1, self.n2 = Attention(dim, heads, causal), nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.ff = nn.Sequential(nn.Linear(dim, mlp * dim), nn.GELU(), nn.Linear(mlp * dim, dim))

    def forward(self, x, bias=None):
        if self.pre:
            x = x + self.att(self.n1(x), bias=bias)
            return x + self.ff(self.n2(x))
        x = self.n1(x + self.att(x, bias=bias))
        return self.n2(x + self.ff(x))


class Bert(nn.Module):
    def __init__(self, vocab=8000, dim=256, depth=4, heads=4, seq=128):
        super().__init__()
        self.emb, self.pos = nn.Embedding(vocab, dim), nn.Parameter(torch.randn(seq, dim) * 0.02)
        self.norm = nn.LayerNorm(dim)
        self.blocks = nn.ModuleList(Block(dim, heads, pre=False) for _ in range(depth))
        self.pool = nn.Linear(dim, dim)

    def forward(self, ids):
        x = self.norm(self.emb(ids) + self.pos[: ids.shape[1]])
        for b in self.blocks:
            x = b(x)
        return x, torch.tanh(self.pool(x[:, 0]))


# ---------------------------------------------------------------- ORT-style dynamic quantization

def dynamic_quantize(path):
    """Rewrites the model at `path` the way ONNX Runtime's quantize_dynamic does (its
    default QInt8 weights, per tensor, symmetric; u8 activations through
    DynamicQuantizeLinear, shared per tensor): MatMul with a constant 2-D B and Conv with
    constant weights. The bias of a Conv becomes an Add of [1, C, 1, 1]."""
    m = onnx.load(path)
    g = m.graph
    inits = {i.name: i for i in g.initializer}
    nodes, dq = [], {}
    counter = [0]

    def add_init(name, arr):
        g.initializer.append(numpy_helper.from_array(arr, name))
        return name

    def quant_input(x):
        if x not in dq:
            outs = [x + "_qu8", x + "_qscale", x + "_qzp"]
            nodes.append(helper.make_node("DynamicQuantizeLinear", [x], outs, name=x + "_dql"))
            dq[x] = outs
        return dq[x]

    def quant_weight(name):
        w = numpy_helper.to_array(inits[name]).astype(np.float32)
        scale = max(float(np.abs(w).max()), 1e-8) / 127.0
        q = np.clip(np.round(w / scale), -127, 127).astype(np.int8)
        return (add_init(name + "_qs8", q), add_init(name + "_wscale", np.array(scale, np.float32)),
                add_init(name + "_wzp", np.array(0, np.int8)))

    for n in g.node:
        wname = n.input[1] if len(n.input) > 1 else ""
        ok = wname in inits and (n.op_type == "MatMul" and len(inits[wname].dims) == 2 or n.op_type == "Conv")
        if not ok:
            nodes.append(n)
            continue
        counter[0] += 1
        tag = "dq%d" % counter[0]
        xq, xs, xz = quant_input(n.input[0])
        wq, ws, wz = quant_weight(wname)
        integer = "MatMulInteger" if n.op_type == "MatMul" else "ConvInteger"
        attrs = {a.name: helper.get_attribute_value(a) for a in n.attribute}
        nodes.append(helper.make_node(integer, [xq, wq, xz, wz], [tag + "_i32"], name=tag + "_int", **attrs))
        nodes.append(helper.make_node("Cast", [tag + "_i32"], [tag + "_f"], to=TensorProto.FLOAT))
        nodes.append(helper.make_node("Mul", [xs, ws], [tag + "_scale"]))
        has_bias = n.op_type == "Conv" and len(n.input) > 2 and n.input[2]
        out = n.output[0]
        nodes.append(helper.make_node("Mul", [tag + "_f", tag + "_scale"], [tag + "_y" if has_bias else out]))
        if has_bias:
            b = numpy_helper.to_array(inits[n.input[2]]).reshape(1, -1, 1, 1)
            nodes.append(helper.make_node("Add", [tag + "_y", add_init(tag + "_bias", b)], [out]))
    del g.node[:]
    g.node.extend(nodes)
    used = {i for n in g.node for i in n.input}
    keep = [i for i in g.initializer if i.name in used]
    del g.initializer[:]
    g.initializer.extend(keep)
    onnx.checker.check_model(m)
    onnx.save(m, path)


@model("qdyn_bert")
def qdyn_bert(path):
    torch.manual_seed(0)
    specs = ids(8000)
    export_torch(Bert(), specs, path)
    dynamic_quantize(path)
    return specs, None


@model("aside_qdyn_bert_wide")
def aside_qdyn_bert(path):
    torch.manual_seed(1)
    specs = ids(5000)
    export_torch(Bert(vocab=5000, dim=384, depth=2, heads=6), specs, path)
    dynamic_quantize(path)
    return specs, None


class TokenMLP(nn.Module):
    def __init__(self, dim=512, hidden=1024, depth=3):
        super().__init__()
        layers = []
        for i in range(depth):
            layers += [nn.Linear(dim if i == 0 else hidden, hidden), nn.ReLU()]
        self.body, self.head = nn.Sequential(*layers), nn.Linear(hidden, 10)

    def forward(self, x):
        return self.head(self.body(x)).mean(1)


@model("qdyn_mlp")
def qdyn_mlp(path):
    torch.manual_seed(0)
    specs = [("x", "float32", ["batch", "tokens", 512], {"kind": "uniform"})]
    export_torch(TokenMLP(), specs, path)
    dynamic_quantize(path)
    return specs, None


class SmallCNN(nn.Module):
    def __init__(self, c=32):
        super().__init__()
        self.f = nn.Sequential(nn.Conv2d(3, c, 3, 2, 1), nn.ReLU(), nn.Conv2d(c, 2 * c, 3, 1, 1), nn.ReLU(),
                               nn.MaxPool2d(2), nn.Conv2d(2 * c, 4 * c, 3, 1, 1), nn.ReLU(),
                               nn.Conv2d(4 * c, 4 * c, 3, 2, 1), nn.ReLU(), nn.AdaptiveAvgPool2d(1))
        self.fc = nn.Linear(4 * c, 10)

    def forward(self, x):
        return self.fc(self.f(x).flatten(1).unsqueeze(1)).squeeze(1)


@model("qdyn_cnn")
def qdyn_cnn(path):
    torch.manual_seed(0)
    export_torch(SmallCNN(), image(96), path)
    dynamic_quantize(path)
    return image(96), None


# ---------------------------------------------------------------- QDQ (bench/quantize.py)

def qdq(path, calibration=4):
    fp32 = path + ".fp32.onnx"
    os.replace(path, fp32)
    r = subprocess.run([sys.executable, os.path.join(HERE, "..", "quantize.py"), fp32, path,
                        "--calibration", str(calibration), "--ort-dir", ORT_DIR], capture_output=True, text=True)
    os.remove(fp32)
    if r.returncode != 0:
        sys.exit("quantize.py failed: " + r.stderr[-2000:])


@model("qdq_mobilenet_v2")
def qdq_mobilenet_v2(path):
    export_torch(tv(torchvision.models.mobilenet_v2), IMAGE, path)
    qdq(path)
    return IMAGE, None


class Encoder(nn.Module):
    def __init__(self, dim=256, depth=4, heads=4):
        super().__init__()
        self.blocks = nn.ModuleList(Block(dim, heads, pre=False) for _ in range(depth))

    def forward(self, x):
        for b in self.blocks:
            x = b(x)
        return x


@model("qdq_encoder")
def qdq_encoder(path):
    torch.manual_seed(0)
    specs = [("x", "float32", ["batch", "seq", 256], {"kind": "uniform"})]
    export_torch(Encoder(), specs, path)
    qdq(path)
    return specs, None


# ---------------------------------------------------------------- QOperator CNN (hand-built)

@model("qop_cnn")
def qop_cnn(path):
    """QuantizeLinear -> QLinearConv x5 (ReLU folded: output zero point 0) with a MaxPool
    on u8 -> DequantizeLinear -> GlobalAveragePool -> QuantizeLinear -> Flatten ->
    QLinearMatMul -> DequantizeLinear. Per-channel s8 weights, u8 activations."""
    rng = np.random.default_rng(11)
    inits, nodes = [], []

    def init(name, arr):
        inits.append(numpy_helper.from_array(arr, name))
        return name

    init("x_s", np.array(1 / 127.5, np.float32))
    init("x_z", np.array(128, np.uint8))
    nodes.append(helper.make_node("QuantizeLinear", ["image", "x_s", "x_z"], ["q0"]))
    chans, strides = [3, 32, 64, 64, 128, 128], [2, 1, 1, 2, 1]
    prev, prev_s, prev_z = "q0", "x_s", "x_z"
    for i in range(5):
        cin, cout = chans[i], chans[i + 1]
        w = rng.standard_normal((cout, cin, 3, 3)).astype(np.float32) * math.sqrt(2.0 / (9 * cin))
        ws = np.abs(w).reshape(cout, -1).max(1) / 127.0
        wq = np.clip(np.round(w / ws[:, None, None, None]), -127, 127).astype(np.int8)
        in_scale = float(numpy_helper.to_array([t for t in inits if t.name == prev_s][0]))
        bias = np.round(rng.standard_normal(cout) * 0.05 / (in_scale * ws)).astype(np.int32)
        init("w%d" % i, wq)
        init("ws%d" % i, ws.astype(np.float32))
        init("wz%d" % i, np.zeros(cout, np.int8))
        init("b%d" % i, bias)
        init("ys%d" % i, np.array(0.02 * (i + 1), np.float32))
        init("yz%d" % i, np.array(0, np.uint8))
        nodes.append(helper.make_node("QLinearConv", [prev, prev_s, prev_z, "w%d" % i, "ws%d" % i, "wz%d" % i,
                                                      "ys%d" % i, "yz%d" % i, "b%d" % i], ["c%d" % i],
                                      pads=[1, 1, 1, 1], strides=[strides[i]] * 2, kernel_shape=[3, 3]))
        prev, prev_s, prev_z = "c%d" % i, "ys%d" % i, "yz%d" % i
        if i == 1:
            nodes.append(helper.make_node("MaxPool", [prev], ["p%d" % i], kernel_shape=[2, 2], strides=[2, 2]))
            prev = "p%d" % i
    nodes.append(helper.make_node("DequantizeLinear", [prev, prev_s, prev_z], ["f"]))
    nodes.append(helper.make_node("GlobalAveragePool", ["f"], ["gap"]))
    init("gs", np.array(0.05, np.float32))
    init("gz", np.array(0, np.uint8))
    nodes.append(helper.make_node("QuantizeLinear", ["gap", "gs", "gz"], ["gq"]))
    nodes.append(helper.make_node("Flatten", ["gq"], ["gflat"]))
    fw = rng.standard_normal((128, 10)).astype(np.float32) * 0.1
    init("fw", np.clip(np.round(fw / 0.01), -127, 127).astype(np.int8))
    init("fws", np.array(0.01, np.float32))
    init("fwz", np.array(0, np.int8))
    init("os", np.array(0.1, np.float32))
    init("oz", np.array(128, np.uint8))
    nodes.append(helper.make_node("QLinearMatMul", ["gflat", "gs", "gz", "fw", "fws", "fwz", "os", "oz"], ["lq"]))
    nodes.append(helper.make_node("DequantizeLinear", ["lq", "os", "oz"], ["out0"]))
    specs = image(96)
    graph = helper.make_graph(nodes, "qop_cnn",
                              [helper.make_tensor_value_info("image", TensorProto.FLOAT, ["batch", 3, 96, 96])],
                              [helper.make_tensor_value_info("out0", TensorProto.FLOAT, ["batch", 10])],
                              initializer=inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="ged-zoo")
    m.ir_version = 7
    onnx.checker.check_model(m)
    onnx.save(m, path)
    return specs, None


# ---------------------------------------------------------------- older opsets

def conv_bn(cin, cout, k=3, s=1, groups=1, act=nn.ReLU6):
    return nn.Sequential(nn.Conv2d(cin, cout, k, s, k // 2, groups=groups, bias=False), nn.BatchNorm2d(cout), act())


class FPNSeg(nn.Module):
    """MobileNet-ish trunk with ReLU6 (Clip), an FPN with bilinear / nearest
    interpolation, a channel split, squeeze / unsqueeze round trips."""

    def __init__(self, c=(16, 32, 64, 128), classes=5):
        super().__init__()
        self.s1 = nn.Sequential(conv_bn(3, c[0], s=2), conv_bn(c[0], c[0], groups=c[0]), conv_bn(c[0], c[1], 1))
        self.s2 = nn.Sequential(conv_bn(c[1], c[1], s=2, groups=c[1]), conv_bn(c[1], c[2], 1))
        self.s3 = nn.Sequential(conv_bn(c[2], c[2], s=2, groups=c[2]), conv_bn(c[2], c[3], 1))
        self.l1, self.l2, self.l3 = nn.Conv2d(c[1], 64, 1), nn.Conv2d(c[2], 64, 1), nn.Conv2d(c[3], 64, 1)
        self.head = nn.Conv2d(32, classes, 3, padding=1)
        self.gate = nn.Linear(32, 32)

    def forward(self, x):
        f1 = self.s1(x)
        f2 = self.s2(f1)
        f3 = self.s3(f2)
        p3 = self.l3(f3)
        p2 = self.l2(f2) + F.interpolate(p3, scale_factor=2.0, mode="nearest")
        p1 = self.l1(f1) + F.interpolate(p2, scale_factor=2.0, mode="bilinear", align_corners=False)
        a, b = torch.split(p1, 32, dim=1)
        g = torch.sigmoid(self.gate(a.mean((2, 3)))).unsqueeze(2).unsqueeze(3)
        y = self.head(F.relu6(a * g + b))
        return F.interpolate(y, scale_factor=2.0, mode="bilinear", align_corners=False), g.squeeze(3).squeeze(2)


@model("opset11_fpn")
def opset11_fpn(path):
    torch.manual_seed(0)
    net = tv(lambda weights=None: FPNSeg())
    return image(128), export_torch(net, image(128), path, opset=11)


@model("opset9_fpn")
def opset9_fpn(path):
    torch.manual_seed(2)
    net = tv(lambda weights=None: FPNSeg(c=(24, 32, 96, 160), classes=3))
    return image(96), export_torch(net, image(96), path, opset=9)


class ViewHeavy(nn.Module):
    """An encoder written with .size() arithmetic everywhere: exported without constant
    folding, every reshape is a Shape -> Gather -> Unsqueeze -> Concat -> Reshape chain."""

    def __init__(self, dim=192, heads=4, depth=3):
        super().__init__()
        self.heads = heads
        self.inp = nn.Linear(64, dim)
        self.layers = nn.ModuleList(nn.ModuleList([nn.Linear(dim, 3 * dim), nn.Linear(dim, dim), nn.LayerNorm(dim),
                                                   nn.Linear(dim, 2 * dim), nn.Linear(2 * dim, dim),
                                                   nn.LayerNorm(dim)]) for _ in range(depth))

    def forward(self, x):
        x = self.inp(x)
        for qkv, o, n1, f1, f2, n2 in self.layers:
            b, t = x.size(0), x.size(1)
            q, k, v = qkv(x).view(b, t, 3, self.heads, x.size(2) // self.heads).permute(2, 0, 3, 1, 4)
            a = torch.softmax(q @ k.transpose(-2, -1) * (q.size(-1) ** -0.5), -1) @ v
            x = n1(x + o(a.transpose(1, 2).contiguous().view(b, t, -1)))
            x = n2(x + f2(F.relu(f1(x))))
        return x.view(x.size(0) * x.size(1), -1).mean(0, keepdim=True).expand(x.size(0), -1)


@model("shape_chain_nofold")
def shape_chain(path):
    torch.manual_seed(0)
    specs = [("x", "float32", ["batch", "seq", 64], {"kind": "uniform"})]
    return specs, export_torch(ViewHeavy(), specs, path, opset=13, fold=False)


# ---------------------------------------------------------------- MobileViT-like

class MV2(nn.Module):
    def __init__(self, cin, cout, s=1, e=4):
        super().__init__()
        h = cin * e
        self.use_res = s == 1 and cin == cout
        self.b = nn.Sequential(conv_bn(cin, h, 1, act=nn.SiLU), conv_bn(h, h, 3, s, groups=h, act=nn.SiLU),
                               nn.Conv2d(h, cout, 1, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        return x + self.b(x) if self.use_res else self.b(x)


class MobileViTBlock(nn.Module):
    def __init__(self, c, d, depth, heads=4, p=2):
        super().__init__()
        self.p = p
        self.local = nn.Sequential(conv_bn(c, c, 3, act=nn.SiLU), nn.Conv2d(c, d, 1, bias=False))
        self.tr = nn.ModuleList(Block(d, heads, mlp=2) for _ in range(depth))
        self.norm = nn.LayerNorm(d)
        self.proj, self.fuse = conv_bn(d, c, 1, act=nn.SiLU), conv_bn(2 * c, c, 3, act=nn.SiLU)

    def forward(self, x):
        y = self.local(x)
        b, d, h, w = y.shape
        p = self.p
        # unfold into p*p pixel groups of (h/p)*(w/p) patches each
        t = y.reshape(b, d, h // p, p, w // p, p).permute(0, 3, 5, 2, 4, 1).reshape(b * p * p, (h // p) * (w // p), d)
        for blk in self.tr:
            t = blk(t)
        t = self.norm(t)
        y = t.reshape(b, p, p, h // p, w // p, d).permute(0, 5, 3, 1, 4, 2).reshape(b, d, h, w)
        return self.fuse(torch.cat([x, self.proj(y)], 1))


class MobileViT(nn.Module):
    def __init__(self, ch=(16, 32, 48, 64, 80), dims=(64, 80, 96), classes=1000):
        super().__init__()
        self.stem = conv_bn(3, ch[0], 3, 2, act=nn.SiLU)
        self.l1 = nn.Sequential(MV2(ch[0], ch[1]), MV2(ch[1], ch[1], 2), MV2(ch[1], ch[1]))
        self.l2 = nn.Sequential(MV2(ch[1], ch[2], 2), MobileViTBlock(ch[2], dims[0], 2))
        self.l3 = nn.Sequential(MV2(ch[2], ch[3], 2), MobileViTBlock(ch[3], dims[1], 4))
        self.l4 = nn.Sequential(MV2(ch[3], ch[4], 2), MobileViTBlock(ch[4], dims[2], 3))
        self.head = nn.Sequential(conv_bn(ch[4], 4 * ch[4], 1, act=nn.SiLU), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                                  nn.Linear(4 * ch[4], classes))

    def forward(self, x):
        return self.head(self.l4(self.l3(self.l2(self.l1(self.stem(x))))))


@model("mobilevit_xs")
def mobilevit(path):
    torch.manual_seed(0)
    net = tv(lambda weights=None: MobileViT())
    return image(256), export_torch(net, image(256), path)


# ---------------------------------------------------------------- HRNet-like

class BasicBlock(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.a, self.b = conv_bn(c, c, act=nn.ReLU), nn.Sequential(nn.Conv2d(c, c, 3, 1, 1, bias=False),
                                                                   nn.BatchNorm2d(c))

    def forward(self, x):
        return F.relu(x + self.b(self.a(x)))


class HRStage(nn.Module):
    """Parallel branches of BasicBlocks, then every branch fuses every other: strided 3x3
    convs downwards, 1x1 conv + nearest upsampling upwards, summed, ReLU."""

    def __init__(self, widths, blocks=2):
        super().__init__()
        self.branches = nn.ModuleList(nn.Sequential(*(BasicBlock(c) for _ in range(blocks))) for c in widths)
        self.fuse = nn.ModuleList()
        for i, ci in enumerate(widths):
            row = nn.ModuleList()
            for j, cj in enumerate(widths):
                if j > i:
                    row.append(nn.Sequential(nn.Conv2d(cj, ci, 1, bias=False), nn.BatchNorm2d(ci),
                                             nn.Upsample(scale_factor=2 ** (j - i), mode="nearest")))
                elif j < i:
                    ops = []
                    for k in range(i - j):
                        last = k == i - j - 1
                        ops += [nn.Conv2d(cj, ci if last else cj, 3, 2, 1, bias=False),
                                nn.BatchNorm2d(ci if last else cj)] + ([] if last else [nn.ReLU()])
                    row.append(nn.Sequential(*ops))
                else:
                    row.append(nn.Identity())
            self.fuse.append(row)

    def forward(self, xs):
        xs = [b(x) for b, x in zip(self.branches, xs)]
        return [F.relu(sum(f(x) for f, x in zip(row, xs))) for row in self.fuse]


class HRNet(nn.Module):
    def __init__(self, w=18, blocks=2, classes=17):
        super().__init__()
        self.stem = nn.Sequential(conv_bn(3, 64, 3, 2, act=nn.ReLU), conv_bn(64, 64, 3, 2, act=nn.ReLU))
        self.t1 = nn.ModuleList([conv_bn(64, w, act=nn.ReLU), conv_bn(64, 2 * w, 3, 2, act=nn.ReLU)])
        self.s2 = HRStage([w, 2 * w], blocks)
        self.t2 = conv_bn(2 * w, 4 * w, 3, 2, act=nn.ReLU)
        self.s3 = HRStage([w, 2 * w, 4 * w], blocks)
        self.s3b = HRStage([w, 2 * w, 4 * w], blocks)
        self.head = nn.Conv2d(w, classes, 1)

    def forward(self, x):
        x = self.stem(x)
        xs = self.s2([t(x) for t in self.t1])
        xs = self.s3b(self.s3(xs + [self.t2(xs[-1])]))
        return self.head(xs[0])


@model("hrnet_pose")
def hrnet(path):
    torch.manual_seed(0)
    net = tv(lambda weights=None: HRNet())
    specs = [("image", "float32", ["batch", 3, 192, 128], {"kind": "uniform"})]
    return specs, export_torch(net, specs, path)


@model("aside_hrnet_w32")
def aside_hrnet(path):
    torch.manual_seed(1)
    net = tv(lambda weights=None: HRNet(w=32, blocks=1, classes=21))
    specs = [("image", "float32", ["batch", 3, 160, 160], {"kind": "uniform"})]
    return specs, export_torch(net, specs, path)


# ---------------------------------------------------------------- EfficientDet-like BiFPN

class SepConv(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.dw, self.pw, self.bn = nn.Conv2d(c, c, 3, 1, 1, groups=c, bias=False), nn.Conv2d(c, c, 1), nn.BatchNorm2d(c)

    def forward(self, x):
        return self.bn(self.pw(self.dw(x)))


class BiFPNLayer(nn.Module):
    """Top-down then bottom-up over P3..P5 with fast normalized fusion (ReLU weights
    divided by their sum + eps), Swish before each separable conv."""

    def __init__(self, c):
        super().__init__()
        self.td = nn.ModuleList(SepConv(c) for _ in range(2))
        self.bu = nn.ModuleList(SepConv(c) for _ in range(2))
        self.w_td = nn.Parameter(torch.rand(2, 2) + 0.5)
        self.w_bu = nn.Parameter(torch.rand(2, 3) + 0.5)

    @staticmethod
    def fuse(w, xs):
        w = F.relu(w)
        w = w / (w.sum() + 1e-4)
        return F.silu(sum(w[i] * x for i, x in enumerate(xs)))

    def forward(self, p3, p4, p5):
        p4_td = self.td[0](self.fuse(self.w_td[0], [p4, F.interpolate(p5, scale_factor=2.0, mode="nearest")]))
        p3_out = self.td[1](self.fuse(self.w_td[1], [p3, F.interpolate(p4_td, scale_factor=2.0, mode="nearest")]))
        p4_out = self.bu[0](self.fuse(self.w_bu[0], [p4, p4_td, F.max_pool2d(p3_out, 3, 2, 1)]))
        p5_out = self.bu[1](self.fuse(self.w_bu[1][:2], [p5, F.max_pool2d(p4_out, 3, 2, 1)]))
        return p3_out, p4_out, p5_out


class EffDet(nn.Module):
    def __init__(self, c=64, layers=3, anchors=9, classes=20):
        super().__init__()
        trunk = torchvision.models.efficientnet_b0(weights=None).features
        self.t3, self.t4, self.t5 = trunk[:4], trunk[4:6], trunk[6:8]
        self.l3, self.l4, self.l5 = nn.Conv2d(40, c, 1), nn.Conv2d(112, c, 1), nn.Conv2d(320, c, 1)
        self.bifpn = nn.ModuleList(BiFPNLayer(c) for _ in range(layers))
        self.cls = nn.Sequential(SepConv(c), nn.SiLU(), SepConv(c), nn.SiLU(), nn.Conv2d(c, anchors * classes, 3, 1, 1))
        self.box = nn.Sequential(SepConv(c), nn.SiLU(), SepConv(c), nn.SiLU(), nn.Conv2d(c, anchors * 4, 3, 1, 1))
        self.classes = classes

    def forward(self, x):
        f3 = self.t3(x)
        f4 = self.t4(f3)
        f5 = self.t5(f4)
        ps = (self.l3(f3), self.l4(f4), self.l5(f5))
        for layer in self.bifpn:
            ps = layer(*ps)
        b = x.shape[0]
        cls = torch.cat([self.cls(p).permute(0, 2, 3, 1).reshape(b, -1, self.classes) for p in ps], 1)
        box = torch.cat([self.box(p).permute(0, 2, 3, 1).reshape(b, -1, 4) for p in ps], 1)
        return cls.sigmoid(), box


@model("effdet_bifpn")
def effdet(path):
    torch.manual_seed(0)
    net = tv(lambda weights=None: EffDet())
    return image(256), export_torch(net, image(256), path)


# ---------------------------------------------------------------- SSD-lite

class SSDLite(nn.Module):
    """MobileNetV2 trunk (stride 16 and 32 taps), four extra stride-2 blocks, a
    depthwise-separable class and box head per level, permute + reshape + concat."""

    def __init__(self, classes=21, anchors=6):
        super().__init__()
        f = torchvision.models.mobilenet_v2(weights=None).features
        self.a, self.b = f[:14], f[14:]
        chans = [96, 1280, 512, 256, 256, 128]
        self.extra = nn.ModuleList(nn.Sequential(conv_bn(cin, cout // 2, 1), conv_bn(cout // 2, cout // 2, 3, 2, cout // 2),
                                                 conv_bn(cout // 2, cout, 1))
                                   for cin, cout in zip(chans[1:-1], chans[2:]))

        def head(c, n):
            return nn.Sequential(conv_bn(c, c, 3, 1, c), nn.Conv2d(c, n, 1))
        self.cls = nn.ModuleList(head(c, anchors * classes) for c in chans)
        self.box = nn.ModuleList(head(c, anchors * 4) for c in chans)
        self.classes = classes

    def forward(self, x):
        feats = [self.a(x)]
        feats.append(self.b(feats[0]))
        for e in self.extra:
            feats.append(e(feats[-1]))
        b = x.shape[0]
        cls = torch.cat([h(f).permute(0, 2, 3, 1).reshape(b, -1, self.classes) for h, f in zip(self.cls, feats)], 1)
        box = torch.cat([h(f).permute(0, 2, 3, 1).reshape(b, -1, 4) for h, f in zip(self.box, feats)], 1)
        return cls.softmax(-1), box


@model("ssdlite_mnv2")
def ssdlite(path):
    torch.manual_seed(0)
    net = tv(lambda weights=None: SSDLite())
    return image(320), export_torch(net, image(320), path)


# ---------------------------------------------------------------- CLIP-like

class ClipLike(nn.Module):
    def __init__(self, dim=256, vdepth=4, tdepth=4, heads=4, vocab=4096, ctx=32, patch=32, size=224, embed=256):
        super().__init__()
        self.patch = nn.Conv2d(3, dim, patch, patch)
        n = (size // patch) ** 2
        self.cls = nn.Parameter(torch.randn(1, 1, dim) * 0.02)
        self.vpos = nn.Parameter(torch.randn(1, n + 1, dim) * 0.02)
        self.vblocks = nn.ModuleList(Block(dim, heads) for _ in range(vdepth))
        self.vnorm, self.vproj = nn.LayerNorm(dim), nn.Linear(dim, embed, bias=False)
        self.tok, self.tpos = nn.Embedding(vocab, dim), nn.Parameter(torch.randn(ctx, dim) * 0.02)
        self.tblocks = nn.ModuleList(Block(dim, heads, causal=True) for _ in range(tdepth))
        self.tnorm, self.tproj = nn.LayerNorm(dim), nn.Linear(dim, embed, bias=False)
        self.scale = nn.Parameter(torch.tensor(math.log(1 / 0.07)))

    def forward(self, image, text):
        x = self.patch(image).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls.expand(x.shape[0], -1, -1), x], 1) + self.vpos
        for b in self.vblocks:
            x = b(x)
        img = self.vproj(self.vnorm(x[:, 0]))
        t = self.tok(text) + self.tpos[: text.shape[1]]
        for b in self.tblocks:
            t = b(t)
        t = self.tnorm(t)
        t = self.tproj(t[torch.arange(t.shape[0]), text.argmax(-1)])
        img = img / img.norm(dim=-1, keepdim=True)
        t = t / t.norm(dim=-1, keepdim=True)
        return self.scale.exp() * img @ t.t()


@model("clip_two_tower")
def clip(path):
    torch.manual_seed(0)
    specs = [("image", "float32", ["batch", 3, 224, 224], {"kind": "uniform"}),
             ("text", "int64", ["batch", 32], {"kind": "int", "high": 4096})]
    return specs, export_torch(ClipLike(), specs, path)


# ---------------------------------------------------------------- Mixture of Experts

class MoE(nn.Module):
    """Top-2 routing over 8 SwiGLU experts: softmax router, TopK, renormalized gates, and
    per expert the tokens routed to it (NonZero), index_select, the expert, index_add_."""

    def __init__(self, dim=256, hidden=512, experts=8, k=2):
        super().__init__()
        self.k = k
        self.router = nn.Linear(dim, experts, bias=False)
        self.w1 = nn.ModuleList(nn.Linear(dim, hidden, bias=False) for _ in range(experts))
        self.w3 = nn.ModuleList(nn.Linear(dim, hidden, bias=False) for _ in range(experts))
        self.w2 = nn.ModuleList(nn.Linear(hidden, dim, bias=False) for _ in range(experts))
        self.norm = nn.LayerNorm(dim)

    def forward(self, x):
        b, t, d = x.shape
        h = self.norm(x).reshape(-1, d)
        probs = self.router(h).softmax(-1)
        gates, idx = probs.topk(self.k, -1)
        gates = gates / gates.sum(-1, keepdim=True)
        out = torch.zeros_like(h)
        for e in range(len(self.w1)):
            tok, slot = torch.where(idx == e)
            xe = h.index_select(0, tok)
            ye = self.w2[e](F.silu(self.w1[e](xe)) * self.w3[e](xe)) * gates[tok, slot].unsqueeze(1)
            out = out.index_add(0, tok, ye)
        return x + out.reshape(b, t, d)


@model("moe_top2")
def moe(path):
    torch.manual_seed(0)
    specs = [("x", "float32", ["batch", "seq", 256], {"kind": "uniform"})]
    return specs, export_torch(nn.Sequential(MoE(), MoE()), specs, path)


# ---------------------------------------------------------------- Perceiver

class Perceiver(nn.Module):
    def __init__(self, in_dim=64, dim=256, latents=64, heads=4, depth=4, classes=100):
        super().__init__()
        self.inp = nn.Linear(in_dim, dim)
        self.latents = nn.Parameter(torch.randn(latents, dim) * 0.02)
        self.cn, self.cx = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.cross = Attention(dim, 1)
        self.cff = nn.Sequential(nn.LayerNorm(dim), nn.Linear(dim, dim), nn.GELU(), nn.Linear(dim, dim))
        self.blocks = nn.ModuleList(Block(dim, heads) for _ in range(depth))
        self.head = nn.Sequential(nn.LayerNorm(dim), nn.Linear(dim, classes))

    def forward(self, x):
        ctx = self.cx(self.inp(x))
        z = self.latents.unsqueeze(0).expand(x.shape[0], -1, -1)
        z = z + self.cross(self.cn(z), ctx)
        z = z + self.cff(z)
        for b in self.blocks:
            z = b(z)
        return self.head(z.mean(1))


@model("perceiver")
def perceiver(path):
    torch.manual_seed(0)
    specs = [("x", "float32", ["batch", 1024, 64], {"kind": "uniform"})]
    return specs, export_torch(Perceiver(), specs, path)


# ---------------------------------------------------------------- Siamese

class Siamese(nn.Module):
    def __init__(self):
        super().__init__()
        r = torchvision.models.resnet18(weights=None)
        r.fc = nn.Identity()
        self.tower = r
        self.proj = nn.Linear(512, 128)
        self.cmp = nn.Sequential(nn.Linear(128, 64), nn.ReLU(), nn.Linear(64, 1))

    def forward(self, a, b):
        ea, eb = self.proj(self.tower(a)), self.proj(self.tower(b))
        return torch.sigmoid(self.cmp(torch.abs(ea - eb))), F.cosine_similarity(ea, eb, -1)


@model("siamese_resnet18")
def siamese(path):
    torch.manual_seed(0)
    net = tv(lambda weights=None: Siamese())
    specs = [("a", "float32", ["batch", 3, 112, 112], {"kind": "uniform"}),
             ("b", "float32", ["batch", 3, 112, 112], {"kind": "uniform"})]
    return specs, export_torch(net, specs, path)


# ---------------------------------------------------------------- ALiBi decoder

class AlibiLM(nn.Module):
    """Causal decoder whose attention bias is ALiBi's, built in the graph from the
    sequence length: slopes 2^(-8 i / heads) times (j - i), plus the causal mask."""

    def __init__(self, vocab=8000, dim=256, depth=4, heads=8):
        super().__init__()
        self.heads = heads
        self.emb = nn.Embedding(vocab, dim)
        self.blocks = nn.ModuleList(Block(dim, heads) for _ in range(depth))
        self.norm, self.out = nn.LayerNorm(dim), nn.Linear(dim, vocab, bias=False)
        self.register_buffer("slopes", torch.tensor([2 ** (-8 * (i + 1) / heads) for i in range(heads)]))

    def forward(self, ids):
        n = ids.shape[1]
        pos = torch.arange(n)
        rel = (pos[None, :] - pos[:, None]).float()
        bias = self.slopes[:, None, None] * rel[None]
        bias = bias.masked_fill(rel[None] > 0, float("-inf"))
        x = self.emb(ids)
        for b in self.blocks:
            x = b(x, bias=bias)
        return self.out(self.norm(x))


@model("alibi_decoder")
def alibi(path):
    torch.manual_seed(0)
    return ids(8000), export_torch(AlibiLM(), ids(8000), path)


# ---------------------------------------------------------------- LLaMA-like (RMSNorm, RoPE, SwiGLU)

class RMSNorm(nn.Module):
    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.eps, self.w = eps, nn.Parameter(torch.ones(d) + torch.randn(d) * 0.1)

    def forward(self, x):
        return self.w * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps))


def rotate_half(x):
    a, b = x.chunk(2, -1)
    return torch.cat([-b, a], -1)


class LlamaBlock(nn.Module):
    def __init__(self, dim, heads, kv_heads, hidden):
        super().__init__()
        self.h, self.kvh, self.hd = heads, kv_heads, dim // heads
        self.q = nn.Linear(dim, dim, bias=False)
        self.k = nn.Linear(dim, kv_heads * self.hd, bias=False)
        self.v = nn.Linear(dim, kv_heads * self.hd, bias=False)
        self.o = nn.Linear(dim, dim, bias=False)
        self.n1, self.n2 = RMSNorm(dim), RMSNorm(dim)
        self.gate, self.up, self.down = (nn.Linear(dim, hidden, bias=False), nn.Linear(dim, hidden, bias=False),
                                         nn.Linear(hidden, dim, bias=False))

    def forward(self, x, cos, sin, mask):
        b, n, d = x.shape
        h = self.n1(x)
        q = self.q(h).view(b, n, self.h, self.hd).transpose(1, 2)
        k = self.k(h).view(b, n, self.kvh, self.hd).transpose(1, 2)
        v = self.v(h).view(b, n, self.kvh, self.hd).transpose(1, 2)
        q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        if self.kvh != self.h:
            r = self.h // self.kvh  # repeat_kv as in LLaMA: expand, then merge the heads
            k = k[:, :, None].expand(b, self.kvh, r, n, self.hd).reshape(b, self.h, n, self.hd)
            v = v[:, :, None].expand(b, self.kvh, r, n, self.hd).reshape(b, self.h, n, self.hd)
        s = q @ k.transpose(-1, -2) / math.sqrt(self.hd) + mask
        x = x + self.o((s.softmax(-1) @ v).transpose(1, 2).reshape(b, n, d))
        h = self.n2(x)
        return x + self.down(F.silu(self.gate(h)) * self.up(h))


class Llama(nn.Module):
    def __init__(self, vocab=8000, dim=256, depth=4, heads=8, kv_heads=8, hidden=688):
        super().__init__()
        self.hd = dim // heads
        self.emb = nn.Embedding(vocab, dim)
        self.blocks = nn.ModuleList(LlamaBlock(dim, heads, kv_heads, hidden) for _ in range(depth))
        self.norm, self.out = RMSNorm(dim), nn.Linear(dim, vocab, bias=False)

    def forward(self, ids):
        n = ids.shape[1]
        inv = 1.0 / (10000 ** (torch.arange(0, self.hd, 2).float() / self.hd))
        f = torch.arange(n).float()[:, None] * inv[None]
        emb = torch.cat([f, f], -1)
        cos, sin = emb.cos()[None, None], emb.sin()[None, None]
        mask = torch.full((n, n), float("-inf")).triu(1)
        x = self.emb(ids)
        for b in self.blocks:
            x = b(x, cos, sin, mask)
        return self.out(self.norm(x)[:, -1])


def llama_specs(vocab):
    return [("ids", "int64", [1, "lseq"], {"kind": "int", "high": vocab})]


@model("llama_rope_512")
def llama(path):
    torch.manual_seed(0)
    return llama_specs(8000), export_torch(Llama(), llama_specs(8000), path)


@model("aside_llama_gqa")
def aside_llama(path):
    torch.manual_seed(1)
    net = Llama(vocab=6000, dim=384, depth=3, heads=6, kv_heads=2, hidden=1024)
    return llama_specs(6000), export_torch(net, llama_specs(6000), path)


# ---------------------------------------------------------------- aside: MobileViT with other widths

@model("aside_mobilevit_s")
def aside_mobilevit(path):
    torch.manual_seed(1)
    net = tv(lambda weights=None: MobileViT(ch=(16, 32, 64, 96, 128), dims=(96, 120, 144)))
    return image(192), export_torch(net, image(192), path)


def main():
    zoo.main_with_dim_values(DIM_VALUES)


if __name__ == "__main__":
    main()
