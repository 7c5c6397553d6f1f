#!/usr/bin/python3
"""Builds the benchmark zoo of issue 20: ONNX models chosen for breadth, offline.

    /usr/bin/python3 bench/zoo/make_models.py OUT [--only NAME,NAME] [--subset ci]

Writes OUT/<name>.onnx for every model, OUT/manifest.json describing each
model's inputs (dtype, shape with named dynamic dims, the concrete value of
every dynamic dim to feed, and how to generate the values), and for every
model batch-1 inputs OUT/data/<name>_b1/in_<i>.npy with reference outputs
OUT/data/<name>_b1/ref_<i>.npy computed here: by torch for the torch exports,
by numpy for the hand-built element-wise chains (the NMS head, whose output
depends on ties, has no reference). bench/zoo/run.sh times ged against ONNX
Runtime on them; bench/zoo/check.py compares ged with the references (the CI
subset, `--subset ci`, is the few small models it needs).

Weights are seeded (torch.manual_seed / numpy default_rng per model), so a
build is the same on every machine with Debian's torch 1.13 / torchvision 0.14
and onnx 1.12. Opset 17 throughout. Models torch does not export the way we
want (10,000-op element-wise chains, multi-class NonMaxSuppression with anchors)
are built with onnx.helper. A full build takes a few minutes on 2 cores; the
largest file is resnet50 (~100 MB).

The dynamic dims of a model are listed by name ("batch", "seq"); run.sh feeds
"batch" the batch being measured (1 or N) and every other dim its "value".
A model with no "batch" dim runs at batch 1 only.
"""
import argparse
import json
import os
import sys
import time

import numpy as np
import onnx
import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision
from onnx import TensorProto, helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from zoo_inputs import DIM_VALUES, make_input  # noqa: E402

OPSET = 17
MODELS = {}


def model(name, ci=False):
    def register(fn):
        MODELS[name] = (fn, ci)
        return fn
    return register


# Every model returns its input specs [(name, dtype, dims, gen)] (see
# zoo_inputs.py) and a reference function (input arrays -> output arrays) or None.

def inputs_for(specs, batch, dim_values=None):
    return [make_input(dtype, dims, gen, 1000 + i, batch, dim_values) for i, (_, dtype, dims, gen) in enumerate(specs)]


def export_torch(net, specs, path, opset=None, fold=True):
    """Exports `net` at `opset` (default OPSET), with torch's constant folding unless `fold`
    is false; returns the torch reference function."""
    net.eval()
    args = tuple(torch.from_numpy(a) for a in inputs_for(specs, 2 if any("batch" in s[2] for s in specs) else 1))
    dynamic_axes = {}
    for name, _, dims, _ in specs:
        axes = {i: d for i, d in enumerate(dims) if isinstance(d, str)}
        if axes:
            dynamic_axes[name] = axes
    with torch.no_grad():
        outs = net(*args)
    n_out = len(outs) if isinstance(outs, (tuple, list)) else 1
    out_names = ["out%d" % i for i in range(n_out)]
    for o in out_names:
        if dynamic_axes and any("batch" in s[2] for s in specs):
            dynamic_axes[o] = {0: "batch"}
    torch.onnx.export(net, args, path, opset_version=opset or OPSET, input_names=[s[0] for s in specs],
                      output_names=out_names, dynamic_axes=dynamic_axes or None, do_constant_folding=fold)

    def reference(arrays):
        with torch.no_grad():
            res = net(*(torch.from_numpy(a) for a in arrays))
        res = res if isinstance(res, (tuple, list)) else (res,)
        return [r.numpy() for r in res]
    return reference


# ------------------------------- CNNs ------------------------------------

IMAGE = [("image", "float32", ["batch", 3, 224, 224], {"kind": "uniform"})]
IMAGE_STATIC = [("image", "float32", [1, 3, 224, 224], {"kind": "uniform"})]


def tv(ctor, **kw):
    torch.manual_seed(0)
    net = ctor(weights=None, **kw)
    # Non-trivial batch-norm statistics, so folded weights are not all ones.
    g = torch.Generator().manual_seed(1)
    for m in net.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.running_mean.copy_(torch.rand(m.num_features, generator=g) * 0.2 - 0.1)
            m.running_var.copy_(torch.rand(m.num_features, generator=g) * 0.5 + 0.75)
    return net


@model("resnet18")
def resnet18(path):
    return IMAGE, export_torch(tv(torchvision.models.resnet18), IMAGE, path)


@model("resnet50_static")
def resnet50(path):
    return IMAGE_STATIC, export_torch(tv(torchvision.models.resnet50), IMAGE_STATIC, path)


@model("mobilenet_v2")
def mobilenet_v2(path):
    return IMAGE, export_torch(tv(torchvision.models.mobilenet_v2), IMAGE, path)


@model("mobilenet_v3_small")
def mobilenet_v3_small(path):
    return IMAGE, export_torch(tv(torchvision.models.mobilenet_v3_small), IMAGE, path)


@model("mobilenet_v3_large")
def mobilenet_v3_large(path):
    return IMAGE, export_torch(tv(torchvision.models.mobilenet_v3_large), IMAGE, path)


@model("efficientnet_b0")
def efficientnet_b0(path):
    return IMAGE, export_torch(tv(torchvision.models.efficientnet_b0), IMAGE, path)


@model("squeezenet1_1")
def squeezenet(path):
    return IMAGE, export_torch(tv(torchvision.models.squeezenet1_1), IMAGE, path)


@model("shufflenet_v2")
def shufflenet(path):
    return IMAGE, export_torch(tv(torchvision.models.shufflenet_v2_x1_0), IMAGE, path)


@model("regnet_x_400mf")
def regnet(path):
    return IMAGE, export_torch(tv(torchvision.models.regnet_x_400mf), IMAGE, path)


@model("densenet121")
def densenet(path):
    return IMAGE, export_torch(tv(torchvision.models.densenet121), IMAGE, path)


class SmallCnn(nn.Module):
    """CIFAR-sized CNN with max pooling, dropout and a linear head (ci subset)."""

    def __init__(self):
        super().__init__()
        self.c1, self.c2 = nn.Conv2d(3, 16, 3, padding=1), nn.Conv2d(16, 32, 3, padding=1)
        self.bn = nn.BatchNorm2d(32)
        self.fc = nn.Linear(32 * 8 * 8, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.c1(x)), 2)
        x = F.max_pool2d(F.relu(self.bn(self.c2(x))), 2)
        return F.softmax(self.fc(torch.flatten(x, 1)), dim=1)


@model("small_cnn", ci=True)
def small_cnn(path):
    torch.manual_seed(0)
    specs = [("image", "float32", ["batch", 3, 32, 32], {"kind": "uniform"})]
    return specs, export_torch(SmallCnn(), specs, path)


class UNet(nn.Module):
    """Two-level UNet: Conv, MaxPool, ConvTranspose, Resize (bilinear), Concat."""

    def __init__(self, c=16):
        super().__init__()
        block = lambda i, o: nn.Sequential(nn.Conv2d(i, o, 3, padding=1), nn.BatchNorm2d(o), nn.ReLU(),  # noqa: E731
                                           nn.Conv2d(o, o, 3, padding=1), nn.ReLU())
        self.d1, self.d2, self.mid = block(3, c), block(c, 2 * c), block(2 * c, 4 * c)
        self.up2 = nn.ConvTranspose2d(4 * c, 2 * c, 2, stride=2)
        self.u2 = block(4 * c, 2 * c)
        self.u1 = block(3 * c, c)
        self.head = nn.Conv2d(c, 2, 1)

    def forward(self, x):
        a = self.d1(x)
        b = self.d2(F.max_pool2d(a, 2))
        m = self.mid(F.max_pool2d(b, 2))
        b = self.u2(torch.cat([self.up2(m), b], 1))
        up = F.interpolate(b, scale_factor=2.0, mode="bilinear", align_corners=False)
        return torch.sigmoid(self.head(self.u1(torch.cat([up, a], 1))))


@model("unet", ci=True)
def unet(path):
    torch.manual_seed(0)
    specs = [("image", "float32", ["batch", 3, 128, 128], {"kind": "uniform"})]
    return specs, export_torch(UNet(), specs, path)


class TextCnn(nn.Module):
    """Embedding + Conv1d (three widths) + global max pool over a dynamic sequence."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(5000, 64)
        self.convs = nn.ModuleList([nn.Conv1d(64, 64, k, padding=k // 2) for k in (3, 5, 7)])
        self.fc = nn.Linear(192, 4)

    def forward(self, ids):
        x = self.emb(ids).transpose(1, 2)
        x = torch.cat([F.relu(c(x)).amax(dim=2) for c in self.convs], 1)
        return self.fc(x)


@model("text_cnn_dynseq")
def text_cnn(path):
    torch.manual_seed(0)
    specs = [("ids", "int64", ["batch", "seq"], {"kind": "int", "high": 5000})]
    return specs, export_torch(TextCnn(), specs, path)


class Tcn(nn.Module):
    """Audio-style temporal ConvNet: dilated Conv1d, BatchNorm1d, GELU, residuals."""

    def __init__(self, c=64, layers=6):
        super().__init__()
        self.inp = nn.Conv1d(40, c, 1)
        self.blocks = nn.ModuleList([nn.Sequential(nn.Conv1d(c, c, 3, padding=2 ** i, dilation=2 ** i),
                                                   nn.BatchNorm1d(c), nn.GELU()) for i in range(layers)])
        self.out = nn.Conv1d(c, 30, 1)

    def forward(self, x):
        x = self.inp(x)
        for b in self.blocks:
            x = x + b(x)
        return F.log_softmax(self.out(x), dim=1)


@model("tcn_audio")
def tcn(path):
    torch.manual_seed(0)
    specs = [("features", "float32", ["batch", 40, 400], {"kind": "uniform"})]
    return specs, export_torch(Tcn(), specs, path)


# ----------------------------- attention ---------------------------------

class Attention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads, self.qkv, self.proj = heads, nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)

    def forward(self, x, mask=None):
        b, n, d = x.shape
        qkv = self.qkv(x).reshape(b, n, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        a = (q @ k.transpose(-2, -1)) * (d // self.heads) ** -0.5
        if mask is not None:
            a = a + mask
        x = (a.softmax(-1) @ v).transpose(1, 2).reshape(b, n, d)
        return self.proj(x)


class Block(nn.Module):
    def __init__(self, dim, heads, pre_norm=True):
        super().__init__()
        self.pre = pre_norm
        self.n1, self.n2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.attn = Attention(dim, heads)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x, mask=None):
        if self.pre:
            x = x + self.attn(self.n1(x), mask)
            return x + self.mlp(self.n2(x))
        x = self.n1(x + self.attn(x, mask))
        return self.n2(x + self.mlp(x))


class Vit(nn.Module):
    """DeiT-tiny-shaped ViT: 16x16 patches, class token, 12 pre-norm blocks."""

    def __init__(self, dim=192, depth=12, heads=3, classes=1000):
        super().__init__()
        self.patch = nn.Conv2d(3, dim, 16, stride=16)
        self.cls = nn.Parameter(torch.randn(1, 1, dim) * 0.02)
        self.pos = nn.Parameter(torch.randn(1, 197, dim) * 0.02)
        self.blocks = nn.ModuleList([Block(dim, heads) for _ in range(depth)])
        self.norm, self.head = nn.LayerNorm(dim), nn.Linear(dim, classes)

    def forward(self, x):
        x = self.patch(x).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls.expand(x.shape[0], -1, -1), x], 1) + self.pos
        for b in self.blocks:
            x = b(x)
        return self.head(self.norm(x)[:, 0])


@model("deit_tiny")
def deit_tiny(path):
    torch.manual_seed(0)
    return IMAGE, export_torch(Vit(), IMAGE, path)


class Encoder(nn.Module):
    """BERT-mini-shaped encoder: token+position embeddings, attention mask, post-norm blocks, pooler."""

    def __init__(self, vocab=8000, dim=256, depth=4, heads=4):
        super().__init__()
        self.tok, self.pos = nn.Embedding(vocab, dim), nn.Embedding(512, dim)
        self.norm = nn.LayerNorm(dim)
        self.blocks = nn.ModuleList([Block(dim, heads, pre_norm=False) for _ in range(depth)])
        self.pool = nn.Linear(dim, dim)

    def forward(self, ids, mask):
        pos = torch.arange(ids.shape[1]).unsqueeze(0)
        x = self.norm(self.tok(ids) + self.pos(pos))
        m = ((1.0 - mask.unsqueeze(1).unsqueeze(2)) * -10000.0)
        for b in self.blocks:
            x = b(x, m)
        return x, torch.tanh(self.pool(x[:, 0]))


@model("bert_mini_dynseq")
def bert_mini(path):
    torch.manual_seed(0)
    specs = [("ids", "int64", ["batch", "seq"], {"kind": "int", "high": 8000}),
             ("mask", "float32", ["batch", "seq"], {"kind": "int", "high": 2})]
    return specs, export_torch(Encoder(), specs, path)


@model("encoder_tiny", ci=True)
def encoder_tiny(path):
    torch.manual_seed(0)
    specs = [("ids", "int64", ["batch", "seq"], {"kind": "int", "high": 1000}),
             ("mask", "float32", ["batch", "seq"], {"kind": "int", "high": 2})]
    return specs, export_torch(Encoder(vocab=1000, dim=64, depth=2, heads=2), specs, path)


# -------------------------------- RNNs -----------------------------------

class Lstm(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn, self.fc = nn.LSTM(64, 128, num_layers=2, batch_first=True), nn.Linear(128, 10)

    def forward(self, x):
        y, _ = self.rnn(x)
        return self.fc(y[:, -1])


class Gru(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn, self.fc = nn.GRU(64, 96, bidirectional=True, batch_first=True), nn.Linear(192, 10)

    def forward(self, x):
        y, _ = self.rnn(x)
        return self.fc(y)


@model("lstm_2layer")
def lstm(path):
    torch.manual_seed(0)
    specs = [("x", "float32", ["batch", "steps", 64], {"kind": "uniform"})]
    return specs, export_torch(Lstm(), specs, path)


@model("gru_bidir", ci=True)
def gru(path):
    torch.manual_seed(0)
    specs = [("x", "float32", ["batch", "steps", 64], {"kind": "uniform"})]
    return specs, export_torch(Gru(), specs, path)


# -------------------------------- MLPs -----------------------------------

@model("mlp_wide")
def mlp_wide(path):
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(784, 2048), nn.ReLU(), nn.Linear(2048, 2048), nn.ReLU(), nn.Linear(2048, 10))
    specs = [("x", "float32", ["batch", 784], {"kind": "uniform"})]
    return specs, export_torch(net, specs, path)


@model("mlp_tabular", ci=True)
def mlp_tabular(path):
    torch.manual_seed(0)
    layers = []
    for i in range(6):
        layers += [nn.Linear(32 if i == 0 else 64, 64), nn.LayerNorm(64), nn.SiLU()]
    net = nn.Sequential(*layers, nn.Linear(64, 1), nn.Sigmoid())
    specs = [("x", "float32", ["batch", 32], {"kind": "uniform"})]
    return specs, export_torch(net, specs, path)


# ------------------------- hand-built (onnx.helper) -----------------------

UNARY = ["Relu", "Neg", "Abs", "Sigmoid", "Tanh", "Sin", "Cos", "Floor", "Ceil", "Softsign"]
BINARY = ["Add", "Sub", "Mul", "Div", "Max", "Min"]
NP_UNARY = {"Relu": lambda x: np.maximum(x, 0), "Neg": np.negative, "Abs": np.abs,
            "Sigmoid": lambda x: 1 / (1 + np.exp(-x)), "Tanh": np.tanh, "Sin": np.sin, "Cos": np.cos,
            "Floor": np.floor, "Ceil": np.ceil, "Softsign": lambda x: x / (1 + np.abs(x))}
NP_BINARY = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Div": np.divide,
             "Max": np.maximum, "Min": np.minimum}


def chain(path, dynamic, ops=10000):
    """Seven chains (f32[1], [2], ..., [64]; with a leading dynamic batch dim when dynamic) of
    element-wise ops, 10,000 in all: unary and binary mixed (two in five binary, each with its own
    constant of the chain's width). Constants keep values bounded: Add/Sub in [-0.5, 0.5), Mul/Div
    in [0.5, 1.5), Max/Min in [-1, 1); Floor and Ceil follow a Tanh so the chain does not collapse."""
    rng = np.random.default_rng(7)
    widths = [1, 2, 4, 8, 16, 32, 64]
    per = [ops // len(widths) + (1 if i < ops % len(widths) else 0) for i in range(len(widths))]
    nodes, inits, inputs, outputs, program = [], [], [], [], []
    for w, count in zip(widths, per):
        dims = ["batch", w] if dynamic else [w]
        inputs.append(("x%d" % w, "float32", dims, {"kind": "uniform"}))
        prev, steps = "x%d" % w, []
        for i in range(count):
            out = "w%d_%d" % (w, i)
            if rng.random() < 0.4:
                op = BINARY[rng.integers(len(BINARY))]
                if op in ("Add", "Sub"):
                    c = rng.random(w) - 0.5
                elif op in ("Mul", "Div"):
                    c = rng.random(w) + 0.5
                else:
                    c = rng.random(w) * 2 - 1
                c = c.astype(np.float32)
                cname = "c%d_%d" % (w, i)
                inits.append(helper.make_tensor(cname, TensorProto.FLOAT, [w], c.tolist()))
                nodes.append(helper.make_node(op, [prev, cname], [out], name="n%d_%d" % (w, i)))
                steps.append((op, c))
            else:
                op = UNARY[rng.integers(len(UNARY))]
                if op in ("Floor", "Ceil") and steps and steps[-1][0] != "Tanh":
                    op = "Tanh"
                nodes.append(helper.make_node(op, [prev], [out], name="n%d_%d" % (w, i)))
                steps.append((op, None))
            prev = out
        outputs.append(helper.make_tensor_value_info(prev, TensorProto.FLOAT, ["batch", w] if dynamic else [w]))
        program.append(steps)
    graph = helper.make_graph(nodes, "chain", [helper.make_tensor_value_info(n, TensorProto.FLOAT, d)
                                               for n, _, d, _ in inputs], outputs, initializer=inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="ged-zoo")
    m.ir_version = 8
    onnx.save(m, path)

    def reference(arrays):
        res = []
        for x, steps in zip(arrays, program):
            x = x.astype(np.float32)
            for op, c in steps:
                x = (NP_BINARY[op](x, c) if c is not None else NP_UNARY[op](x)).astype(np.float32)
            res.append(x)
        return res
    return inputs, reference


@model("chain_10k_static", ci=True)
def chain_static(path):
    return chain(path, dynamic=False)


@model("chain_10k_dynbatch")
def chain_dyn(path):
    return chain(path, dynamic=True)


@model("detect_nms")
def detect_nms(path):
    """SSD-style head: conv scoring over a 20x20 feature map with 3 anchors, sigmoid class scores
    (4 classes), box decoding against constant anchors, multi-class NonMaxSuppression, Gather of
    the selected boxes. Its outputs depend on near-ties, so it has no reference."""
    rng = np.random.default_rng(3)
    c_in, h, a, classes = 64, 20, 3, 4
    n = h * h * a
    t = lambda name, arr: helper.make_tensor(name, TensorProto.FLOAT if arr.dtype == np.float32 else  # noqa: E731
                                            TensorProto.INT64, arr.shape, arr.flatten().tolist())
    w1 = (rng.standard_normal((c_in, c_in, 3, 3)) * 0.05).astype(np.float32)
    ws = (rng.standard_normal((a * classes, c_in, 3, 3)) * 0.05).astype(np.float32)
    wb = (rng.standard_normal((a * 4, c_in, 3, 3)) * 0.05).astype(np.float32)
    ys, xs = np.meshgrid(np.arange(h), np.arange(h), indexing="ij")
    centers = np.stack([ys, xs], -1).reshape(-1, 1, 2).repeat(a, 1).reshape(-1, 2) / h
    sizes = np.tile(np.array([[0.1, 0.1], [0.2, 0.1], [0.1, 0.2]]), (h * h, 1))
    anchors = np.concatenate([centers - sizes / 2, centers + sizes / 2], 1).astype(np.float32)[None]
    inits = [t("w1", w1), t("b1", np.zeros(c_in, np.float32)), t("ws", ws), t("wb", wb),
             t("anchors", anchors), t("shape_s", np.array([1, classes, n], np.int64)),
             t("shape_b", np.array([1, n, 4], np.int64)), t("scale", np.array([0.1], np.float32)),
             t("max_out", np.array([50], np.int64)), t("iou", np.array([0.5], np.float32)),
             t("score_th", np.array([0.3], np.float32)), t("col2", np.array([2], np.int64))]
    nodes = [
        helper.make_node("Conv", ["feat", "w1", "b1"], ["f1"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["f1"], ["f2"]),
        helper.make_node("Conv", ["f2", "ws"], ["s1"], pads=[1, 1, 1, 1]),
        helper.make_node("Conv", ["f2", "wb"], ["d1"], pads=[1, 1, 1, 1]),
        # scores [1, A*C, H, W] -> [1, H, W, A*C] -> [1, N, C] -> [1, C, N]
        helper.make_node("Transpose", ["s1"], ["s2"], perm=[0, 2, 3, 1]),
        helper.make_node("Reshape", ["s2", "shape_s"], ["s3"]),
        helper.make_node("Sigmoid", ["s3"], ["scores"]),
        helper.make_node("Transpose", ["d1"], ["d2"], perm=[0, 2, 3, 1]),
        helper.make_node("Reshape", ["d2", "shape_b"], ["d3"]),
        helper.make_node("Mul", ["d3", "scale"], ["d4"]),
        helper.make_node("Add", ["anchors", "d4"], ["boxes"]),
        helper.make_node("NonMaxSuppression", ["boxes", "scores", "max_out", "iou", "score_th"], ["selected"]),
        helper.make_node("Gather", ["selected", "col2"], ["box_index"], axis=1),
        helper.make_node("Squeeze", ["box_index"], ["box_index1"]),
        helper.make_node("Squeeze", ["boxes"], ["boxes2d"], ),
        helper.make_node("Gather", ["boxes2d", "box_index1"], ["selected_boxes"], axis=0),
    ]
    # Squeeze axes as inputs (opset 13+).
    inits += [t("ax1", np.array([1], np.int64)), t("ax0", np.array([0], np.int64))]
    nodes[13].input.append("ax1")
    nodes[14].input.append("ax0")
    specs = [("feat", "float32", [1, c_in, h, h], {"kind": "uniform"})]
    graph = helper.make_graph(
        nodes, "detect_nms", [helper.make_tensor_value_info("feat", TensorProto.FLOAT, [1, c_in, h, h])],
        [helper.make_tensor_value_info("selected", TensorProto.INT64, ["k", 3]),
         helper.make_tensor_value_info("selected_boxes", TensorProto.FLOAT, ["k", 4])], initializer=inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="ged-zoo")
    m.ir_version = 8
    onnx.checker.check_model(m)
    onnx.save(m, path)
    return specs, None


# --------------------------------------------------------------------------

def write_zoo(out, names, models, dim_values):
    """Builds `names` of `models` ({name: (fn, ci)}) into OUT with their batch-1 inputs and
    references, and adds them to OUT/manifest.json (whose other models stay)."""
    os.makedirs(os.path.join(out, "data"), exist_ok=True)
    manifest_path = os.path.join(out, "manifest.json")
    manifest = {"opset": OPSET, "dim_values": dim_values, "models": {}}
    if os.path.exists(manifest_path):
        with open(manifest_path) as f:
            manifest["models"] = json.load(f).get("models", {})
    for name in names:
        start = time.time()
        path = os.path.join(out, name + ".onnx")
        specs, reference = models[name][0](path)
        data = os.path.join(out, "data", name + "_b1")
        os.makedirs(data, exist_ok=True)
        arrays = inputs_for(specs, 1, dim_values)
        for i, a in enumerate(arrays):
            np.save(os.path.join(data, "in_%d.npy" % i), a)
        refs = reference(arrays) if reference else []
        for i, r in enumerate(refs):
            np.save(os.path.join(data, "ref_%d.npy" % i), r)
        manifest["models"][name] = {
            "file": name + ".onnx",
            "ci": models[name][1],
            "batched": any("batch" in s[2] for s in specs),
            "inputs": [{"name": n, "dtype": d, "dims": dims, "seed": 1000 + i, "gen": g,
                        "dynamic": [j for j, x in enumerate(dims) if isinstance(x, str)]}
                       for i, (n, d, dims, g) in enumerate(specs)],
            "references": len(refs),
        }
        print("%-20s %6.1f MB %5.1f s" % (name, os.path.getsize(path) / 1e6, time.time() - start), flush=True)
        # After every model: an export that fails later keeps the ones before.
        with open(manifest_path, "w") as f:
            json.dump(manifest, f, indent=1, sort_keys=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out")
    parser.add_argument("--only", default="", help="comma-separated model names (default: all)")
    parser.add_argument("--subset", choices=["all", "ci"], default="all")
    args = parser.parse_args()
    torch.set_num_threads(max(1, min(2, os.cpu_count() or 1)))
    names = [n for n in MODELS if args.subset == "all" or MODELS[n][1]]
    if args.only:
        wanted = args.only.split(",")
        unknown = [n for n in wanted if n not in MODELS]
        if unknown:
            sys.exit("unknown model(s): %s; known: %s" % (", ".join(unknown), ", ".join(MODELS)))
        names = [n for n in names if n in wanted]
    write_zoo(args.out, names, MODELS, DIM_VALUES)


def main_with_dim_values(dim_values):
    """main() with these concrete dim values in place of the zoo's (the held-out
    scripts' models name dims of their own), restored afterwards."""
    saved = dict(DIM_VALUES)
    DIM_VALUES.clear()
    DIM_VALUES.update(dim_values)
    try:
        main()
    finally:
        DIM_VALUES.clear()
        DIM_VALUES.update(saved)


if __name__ == "__main__":
    main()
