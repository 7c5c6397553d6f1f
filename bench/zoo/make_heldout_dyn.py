#!/usr/bin/python3
"""Builds a held-out zoo of dynamic-dim models: every model has unknown dims besides the batch
(sequence, past length, image height and width), fed concrete values.

    /usr/bin/python3 bench/zoo/make_heldout_dyn.py OUT [--only NAME,NAME]
    bench/zoo/run.sh --zoo OUT --threads 2 --batches 1 --rounds 3 --no-docs [--gem] [--dim seq=128]

Same format as the zoo (OUT/<name>.onnx, OUT/manifest.json, batch-1 inputs and torch
references under OUT/data), so run.py times it against ONNX Runtime, from the .onnx or
(`--gem`) from a compiled .gem, at the dim values of the manifest or others (`--dim`).
The question it asks: does a model whose dims are only known at run time reach the same
static plans as one exported with fixed shapes, from an .onnx and from a .gem, for every
shape it is run with.

The models, torch 1.13 exports with seeded weights (and two hand-built ONNX graphs):
- distilbert_dyn: a DistilBERT-shaped encoder (pre-norm, GELU, learned positions sliced to
  the sequence length, key-padding mask), dynamic batch and sequence;
- cnn_dynhw: a small ResNet-like CNN whose height and width are dynamic, global pooling;
- seg_dynhw: a segmentation net (strided encoder, FPN-style nearest upsampling by 2, bilinear
  Resize back to the input's size taken from Shape), dynamic batch, height and width;
- gpt_past_dyn: a GPT-style decoder step over a key/value cache of dynamic past length
  (Concat of past and present, causal over the whole), dynamic batch, 1 new token;
- resize_sizes_input: one linear Resize whose output sizes are a graph input;
- resize_shape_x2: one linear Resize whose sizes are Shape(x) * [1, 1, 2, 2], dynamic H/W.
Kept aside (measured only at the end): aside_conformer_dyn (a conformer block stack over a
dynamic number of frames) and aside_unet_dynhw (a UNet with dynamic height and width and
bilinear upsampling to the skip connection's size).
"""
import math
import os
import sys

import numpy as np
import onnx
import torch
import torch.nn as nn
import torch.nn.functional as F
from onnx import TensorProto, helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_models as zoo  # noqa: E402

zoo.MODELS.clear()
model, export_torch = zoo.model, zoo.export_torch
DIM_VALUES = {"batch": 1, "seq": 64, "past": 96, "h": 160, "w": 224, "frames": 120}


# ------------------------------ transformers ------------------------------

class DistilLayer(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.q, self.k, self.v, self.o = (nn.Linear(dim, dim) for _ in range(4))
        self.ff1, self.ff2 = nn.Linear(dim, 4 * dim), nn.Linear(4 * dim, dim)

    def forward(self, x, mask_bias):
        b, t, d = x.shape
        h = self.ln1(x)
        q, k, v = (p(h).view(b, -1, self.heads, d // self.heads).transpose(1, 2) for p in (self.q, self.k, self.v))
        s = torch.matmul(q / math.sqrt(d // self.heads), k.transpose(2, 3)) + mask_bias
        a = torch.matmul(s.softmax(-1), v).transpose(1, 2).reshape(b, t, d)
        x = x + self.o(a)
        return x + self.ff2(F.gelu(self.ff1(self.ln2(x))))


class DistilBert(nn.Module):
    def __init__(self, vocab=10000, dim=256, heads=4, depth=4, positions=512):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Parameter(torch.randn(1, positions, dim) * 0.02)
        self.layers = nn.ModuleList(DistilLayer(dim, heads) for _ in range(depth))
        self.ln = nn.LayerNorm(dim)
        self.cls = nn.Linear(dim, 3)

    def forward(self, ids, mask):
        t = ids.shape[1]
        x = self.tok(ids) + self.pos[:, :t]
        bias = (mask[:, None, None, :] - 1.0) * 1e4
        for layer in self.layers:
            x = layer(x, bias)
        x = self.ln(x)
        return x, self.cls(x[:, 0])


@model("distilbert_dyn")
def distilbert(path):
    torch.manual_seed(0)
    specs = [("ids", "int64", ["batch", "seq"], {"kind": "int", "high": 10000}),
             ("mask", "float32", ["batch", "seq"], {"kind": "int", "high": 2})]
    return specs, export_torch(DistilBert(), specs, path)


class PastBlock(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.qkv, self.o = nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)
        self.fc1, self.fc2 = nn.Linear(dim, 4 * dim), nn.Linear(4 * dim, dim)

    def forward(self, x, pk, pv):
        b, t, d = x.shape
        hd = d // self.heads
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
        q, k, v = (z.view(b, t, self.heads, hd).transpose(1, 2) for z in (q, k, v))
        k, v = torch.cat([pk, k], 2), torch.cat([pv, v], 2)
        a = torch.matmul(torch.matmul(q, k.transpose(2, 3)).mul(hd ** -0.5).softmax(-1), v)
        x = x + self.o(a.transpose(1, 2).reshape(b, t, d))
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x)), approximate="tanh")), k, v


class GptPast(nn.Module):
    """One decoding step of a 3-block GPT (width 256, 4 heads) with a key/value cache."""

    def __init__(self, vocab=4000, dim=256, heads=4, depth=3, positions=1024):
        super().__init__()
        self.wte, self.wpe = nn.Embedding(vocab, dim), nn.Embedding(positions, dim)
        self.blocks = nn.ModuleList(PastBlock(dim, heads) for _ in range(depth))
        self.ln = nn.LayerNorm(dim)

    def forward(self, ids, *past):
        start = past[0].shape[2]
        pos = torch.arange(start, start + ids.shape[1]).unsqueeze(0)
        x = self.wte(ids) + self.wpe(pos)
        present = []
        for i, block in enumerate(self.blocks):
            x, k, v = block(x, past[2 * i], past[2 * i + 1])
            present += [k, v]
        return (torch.matmul(self.ln(x), self.wte.weight.t()), *present)


@model("gpt_past_dyn")
def gpt_past(path):
    torch.manual_seed(0)
    specs = [("ids", "int64", ["batch", 1], {"kind": "int", "high": 4000})]
    for i in range(3):
        for kv in "kv":
            specs.append(("past_%s%d" % (kv, i), "float32", ["batch", 4, "past", 64], {"kind": "uniform"}))
    net = GptPast()
    reference = export_torch(net, specs, path)
    # export_torch names only dim 0 of the outputs; the presents' length is past + 1.
    return specs, reference


class ConformerBlock(nn.Module):
    def __init__(self, dim, heads, kernel=15):
        super().__init__()
        self.heads = heads
        self.ff1 = nn.Sequential(nn.LayerNorm(dim), nn.Linear(dim, 4 * dim), nn.SiLU(), nn.Linear(4 * dim, dim))
        self.ff2 = nn.Sequential(nn.LayerNorm(dim), nn.Linear(dim, 4 * dim), nn.SiLU(), nn.Linear(4 * dim, dim))
        self.ln_att, self.qkv, self.o = nn.LayerNorm(dim), nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)
        self.ln_conv = nn.LayerNorm(dim)
        self.pw1, self.dw = nn.Conv1d(dim, 2 * dim, 1), nn.Conv1d(dim, dim, kernel, padding=kernel // 2, groups=dim)
        self.bn, self.pw2 = nn.BatchNorm1d(dim), nn.Conv1d(dim, dim, 1)
        self.ln_out = nn.LayerNorm(dim)

    def forward(self, x):
        x = x + 0.5 * self.ff1(x)
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln_att(x)).chunk(3, -1)
        q, k, v = (z.reshape(b, t, self.heads, -1).transpose(1, 2) for z in (q, k, v))
        a = torch.matmul(torch.matmul(q, k.transpose(2, 3)).softmax(-1), v).transpose(1, 2).reshape(b, t, d)
        x = x + self.o(a)
        c = F.glu(self.pw1(self.ln_conv(x).transpose(1, 2)), dim=1)
        x = x + self.pw2(F.silu(self.bn(self.dw(c)))).transpose(1, 2)
        return self.ln_out(x + 0.5 * self.ff2(x))


class Conformer(nn.Module):
    def __init__(self, feats=80, dim=144, heads=4, depth=4, vocab=128):
        super().__init__()
        self.inp = nn.Linear(feats, dim)
        self.blocks = nn.ModuleList(ConformerBlock(dim, heads) for _ in range(depth))
        self.out = nn.Linear(dim, vocab)

    def forward(self, x):
        x = self.inp(x)
        for b in self.blocks:
            x = b(x)
        return self.out(x).log_softmax(-1)


@model("aside_conformer_dyn")
def aside_conformer(path):
    torch.manual_seed(0)
    net = Conformer()
    g = torch.Generator().manual_seed(1)
    for m in net.modules():
        if isinstance(m, nn.BatchNorm1d):
            m.running_mean.copy_(torch.rand(m.num_features, generator=g) * 0.2 - 0.1)
            m.running_var.copy_(torch.rand(m.num_features, generator=g) * 0.5 + 0.75)
    specs = [("features", "float32", ["batch", "frames", 80], {"kind": "uniform"})]
    return specs, export_torch(net, specs, path)


# ---------------------------------- CNNs ----------------------------------

def seeded_bn(net):
    g = torch.Generator().manual_seed(1)
    for m in net.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.running_mean.copy_(torch.rand(m.num_features, generator=g) * 0.2 - 0.1)
            m.running_var.copy_(torch.rand(m.num_features, generator=g) * 0.5 + 0.75)
    return net


def cbr(i, o, s=1):
    return nn.Sequential(nn.Conv2d(i, o, 3, s, 1, bias=False), nn.BatchNorm2d(o), nn.ReLU())


class Res(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.a, self.b = cbr(c, c), nn.Sequential(nn.Conv2d(c, c, 3, 1, 1, bias=False), nn.BatchNorm2d(c))

    def forward(self, x):
        return F.relu(x + self.b(self.a(x)))


class CnnHw(nn.Module):
    def __init__(self):
        super().__init__()
        self.f = nn.Sequential(cbr(3, 32, 2), Res(32), cbr(32, 64, 2), Res(64), cbr(64, 128, 2), Res(128),
                               cbr(128, 256, 2), Res(256))
        self.fc = nn.Linear(256, 100)

    def forward(self, x):
        return self.fc(F.adaptive_avg_pool2d(self.f(x), 1).flatten(1))


IMAGE_HW = [("image", "float32", ["batch", 3, "h", "w"], {"kind": "uniform"})]


@model("cnn_dynhw")
def cnn_dynhw(path):
    torch.manual_seed(0)
    return IMAGE_HW, export_torch(seeded_bn(CnnHw()), IMAGE_HW, path)


class Seg(nn.Module):
    def __init__(self, classes=12):
        super().__init__()
        self.e1, self.e2, self.e3 = cbr(3, 32, 2), nn.Sequential(cbr(32, 64, 2), Res(64)), cbr(64, 128, 2)
        self.lat2, self.top = nn.Conv2d(64, 64, 1), nn.Conv2d(128, 64, 1)
        self.head = nn.Sequential(cbr(64, 64), nn.Conv2d(64, classes, 1))

    def forward(self, x):
        c1 = self.e1(x)
        c2 = self.e2(c1)
        c3 = self.e3(c2)
        p = self.lat2(c2) + F.interpolate(self.top(c3), scale_factor=2.0, mode="nearest")
        return F.interpolate(self.head(p), size=x.shape[-2:], mode="bilinear", align_corners=False)


@model("seg_dynhw")
def seg_dynhw(path):
    torch.manual_seed(0)
    return IMAGE_HW, export_torch(seeded_bn(Seg()), IMAGE_HW, path)


class UNetHw(nn.Module):
    def __init__(self, c=24):
        super().__init__()
        self.d1, self.d2, self.d3 = cbr(3, c), cbr(c, 2 * c, 2), cbr(2 * c, 4 * c, 2)
        self.mid = Res(4 * c)
        self.u2, self.u1 = cbr(6 * c, 2 * c), cbr(3 * c, c)
        self.out = nn.Conv2d(c, 2, 1)

    def forward(self, x):
        a = self.d1(x)
        b = self.d2(a)
        m = self.mid(self.d3(b))
        u = self.u2(torch.cat([F.interpolate(m, size=b.shape[-2:], mode="bilinear", align_corners=False), b], 1))
        u = self.u1(torch.cat([F.interpolate(u, size=a.shape[-2:], mode="bilinear", align_corners=False), a], 1))
        return torch.sigmoid(self.out(u))


@model("aside_unet_dynhw")
def aside_unet(path):
    torch.manual_seed(0)
    return IMAGE_HW, export_torch(seeded_bn(UNetHw()), IMAGE_HW, path)


# ------------------------- one Resize, hand-built --------------------------

def save(graph, path):
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", zoo.OPSET)], producer_name="ged-zoo")
    m.ir_version = 8
    onnx.checker.check_model(m)
    onnx.save(m, path)


def resize_reference(scale):
    """Bilinear (half-pixel, as ONNX's linear mode) upsampling by an integer `scale`, in torch."""
    def reference(arrays):
        x = torch.from_numpy(arrays[0])
        return [F.interpolate(x, scale_factor=float(scale), mode="bilinear", align_corners=False).numpy()]
    return reference


@model("resize_sizes_input")
def resize_sizes_input(path):
    """A linear Resize whose output sizes are a graph input (x [1, 32, h, w], sizes int64[4])."""
    nodes = [helper.make_node("Resize", ["x", "", "", "sizes"], ["y"], mode="linear")]
    graph = helper.make_graph(
        nodes, "resize_sizes_input",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 32, "h", "w"]),
         helper.make_tensor_value_info("sizes", TensorProto.INT64, [4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 32, "oh", "ow"])])
    save(graph, path)
    specs = [("x", "float32", [1, 32, "h", "w"], {"kind": "uniform"}),
             ("sizes", "int64", [4], {"kind": "dims", "of": [1, 32, "h", "w"], "scale": [1, 1, 2, 2]})]
    return specs, resize_reference(2)


@model("resize_shape_x2")
def resize_shape_x2(path):
    """A linear Resize whose sizes are Shape(x) * [1, 1, 2, 2]: dynamic batch, h and w."""
    mult = helper.make_tensor("mult", TensorProto.INT64, [4], [1, 1, 2, 2])
    nodes = [helper.make_node("Shape", ["x"], ["s"]),
             helper.make_node("Mul", ["s", "mult"], ["sizes"]),
             helper.make_node("Resize", ["x", "", "", "sizes"], ["y"], mode="linear")]
    graph = helper.make_graph(
        nodes, "resize_shape_x2", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 32, "h", "w"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 32, "oh", "ow"])], initializer=[mult])
    save(graph, path)
    specs = [("x", "float32", ["batch", 32, "h", "w"], {"kind": "uniform"})]
    return specs, resize_reference(2)


def main():
    zoo.main_with_dim_values(DIM_VALUES)


if __name__ == "__main__":
    main()
