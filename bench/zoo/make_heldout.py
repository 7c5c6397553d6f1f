#!/usr/bin/python3
"""Builds the held-out zoo: models of the zoo's classes that ged was never tuned on.

    /usr/bin/python3 bench/zoo/make_heldout.py OUT [--only NAME,NAME]

The zoo (make_models.py) is what performance work looks at; this set is kept aside
and only measured, to see whether a change holds for the class or only for the
instance (issue 20 is checked with models nobody here has seen). Same format as the
zoo (OUT/<name>.onnx, OUT/manifest.json, batch-1 inputs and torch references under
OUT/data), so `bench/zoo/run.sh --zoo OUT --no-docs ...` times it against ONNX
Runtime and `bench/zoo/check.py --zoo OUT` checks it against torch.

The models: Inception (GoogLeNet, Inception v3: concatenated branches, asymmetric
1x7 / 7x1 convolutions), ResNeXt (grouped 3x3), ConvNeXt (depthwise 7x7, LayerNorm over
channels through permutes, GELU, layer scale), MNASNet and RegNetY (squeeze-excite on
grouped convolutions) from torchvision 0.14 with seeded weights; a ViT of another shape
than the zoo's DeiT, a pre-norm GELU encoder and a causal decoder-only language model
with dynamic batch and sequence; a CRNN (convolutions into a bidirectional LSTM) and a
stacked GRU.
"""
import math
import os
import sys

import torch
import torch.nn as nn
import torchvision

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_models as zoo  # noqa: E402

zoo.MODELS.clear()
model, export_torch, tv = zoo.model, zoo.export_torch, zoo.tv
IMAGE = zoo.IMAGE


@model("googlenet")
def googlenet(path):
    return IMAGE, export_torch(tv(torchvision.models.googlenet, aux_logits=False, init_weights=True), IMAGE, path)


@model("inception_v3")
def inception_v3(path):
    specs = [("image", "float32", ["batch", 3, 299, 299], {"kind": "uniform"})]
    net = tv(torchvision.models.inception_v3, aux_logits=False, init_weights=True, transform_input=False)
    return specs, export_torch(net, specs, path)


@model("resnext50")
def resnext50(path):
    return IMAGE, export_torch(tv(torchvision.models.resnext50_32x4d), IMAGE, path)


@model("convnext_tiny")
def convnext_tiny(path):
    return IMAGE, export_torch(tv(torchvision.models.convnext_tiny), IMAGE, path)


@model("mnasnet0_5")
def mnasnet(path):
    return IMAGE, export_torch(tv(torchvision.models.mnasnet0_5), IMAGE, path)


@model("regnet_y_400mf")
def regnet_y(path):
    return IMAGE, export_torch(tv(torchvision.models.regnet_y_400mf), IMAGE, path)


class Vit(nn.Module):
    """ViT with 8x8 patches on 96x96 images, width 256, 8 heads, 6 blocks, mean pooling."""

    def __init__(self, image=96, patch=8, dim=256, heads=8, depth=6, classes=100):
        super().__init__()
        self.embed = nn.Conv2d(3, dim, patch, patch)
        self.pos = nn.Parameter(torch.randn(1, (image // patch) ** 2, dim) * 0.02)
        layer = nn.TransformerEncoderLayer(dim, heads, dim * 4, dropout=0.0, activation="gelu", batch_first=True,
                                           norm_first=True)
        self.blocks = nn.TransformerEncoder(layer, depth, enable_nested_tensor=False)
        self.norm, self.head = nn.LayerNorm(dim), nn.Linear(dim, classes)

    def forward(self, x):
        x = self.embed(x).flatten(2).transpose(1, 2) + self.pos
        return self.head(self.norm(self.blocks(x)).mean(dim=1))


@model("vit_p8")
def vit(path):
    torch.manual_seed(0)
    specs = [("image", "float32", ["batch", 3, 96, 96], {"kind": "uniform"})]
    return specs, export_torch(Vit(), specs, path)


class Encoder(nn.Module):
    """Token embedding, pre-norm GELU encoder (width 384, 6 heads, 4 layers), CLS head."""

    def __init__(self, vocab=8000, dim=384, heads=6, depth=4):
        super().__init__()
        self.tok, self.pos = nn.Embedding(vocab, dim), nn.Embedding(512, dim)
        layer = nn.TransformerEncoderLayer(dim, heads, dim * 4, dropout=0.0, activation="gelu", batch_first=True,
                                           norm_first=True)
        self.layers = nn.TransformerEncoder(layer, depth, enable_nested_tensor=False)
        self.head = nn.Linear(dim, 3)

    def forward(self, ids):
        positions = torch.arange(ids.shape[1]).unsqueeze(0)
        return self.head(self.layers(self.tok(ids) + self.pos(positions))[:, 0])


@model("encoder_prenorm_dyn")
def encoder(path):
    torch.manual_seed(0)
    specs = [("ids", "int64", ["batch", "seq"], {"kind": "int", "low": 0, "high": 8000})]
    return specs, export_torch(Encoder(), specs, path)


class CausalLm(nn.Module):
    """Decoder-only LM: causal self-attention written out (masked softmax), 4 blocks, width 256."""

    def __init__(self, vocab=4000, dim=256, heads=4, depth=4):
        super().__init__()
        self.heads, self.dim = heads, dim
        self.tok, self.pos = nn.Embedding(vocab, dim), nn.Embedding(256, dim)
        self.ln1 = nn.ModuleList(nn.LayerNorm(dim) for _ in range(depth))
        self.qkv = nn.ModuleList(nn.Linear(dim, 3 * dim) for _ in range(depth))
        self.proj = nn.ModuleList(nn.Linear(dim, dim) for _ in range(depth))
        self.ln2 = nn.ModuleList(nn.LayerNorm(dim) for _ in range(depth))
        self.mlp = nn.ModuleList(nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))
                                 for _ in range(depth))
        self.out = nn.Linear(dim, vocab)

    def forward(self, ids):
        b, t = ids.shape
        x = self.tok(ids) + self.pos(torch.arange(t).unsqueeze(0))
        mask = torch.triu(torch.full((t, t), float("-inf")), diagonal=1)
        hd = self.dim // self.heads
        for ln1, qkv, proj, ln2, mlp in zip(self.ln1, self.qkv, self.proj, self.ln2, self.mlp):
            q, k, v = qkv(ln1(x)).split(self.dim, dim=2)
            q, k, v = (z.reshape(b, t, self.heads, hd).transpose(1, 2) for z in (q, k, v))
            att = torch.softmax(q @ k.transpose(2, 3) / math.sqrt(hd) + mask, dim=-1)
            x = x + proj((att @ v).transpose(1, 2).reshape(b, t, self.dim))
            x = x + mlp(ln2(x))
        return self.out(x[:, -1])


@model("causal_lm_dyn")
def causal_lm(path):
    torch.manual_seed(0)
    specs = [("ids", "int64", ["batch", "seq"], {"kind": "int", "low": 0, "high": 4000})]
    return specs, export_torch(CausalLm(), specs, path)


class Crnn(nn.Module):
    """Text-line recognizer: a conv stack over a 32-pixel-high strip, then a bidirectional LSTM."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Sequential(
            nn.Conv2d(1, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(32, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(64, 128, 3, padding=1), nn.BatchNorm2d(128), nn.ReLU(), nn.MaxPool2d((2, 1)),
            nn.Conv2d(128, 128, 3, padding=1), nn.ReLU(), nn.MaxPool2d((4, 1)))
        self.rnn = nn.LSTM(128, 128, bidirectional=True, batch_first=True)
        self.fc = nn.Linear(256, 40)

    def forward(self, x):
        f = self.conv(x).squeeze(2).transpose(1, 2)
        y, _ = self.rnn(f)
        return self.fc(y).log_softmax(-1)


@model("crnn")
def crnn(path):
    torch.manual_seed(0)
    specs = [("image", "float32", ["batch", 1, 32, 128], {"kind": "uniform"})]
    return specs, export_torch(Crnn(), specs, path)


class StackedGru(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn, self.fc = nn.GRU(40, 256, num_layers=2, batch_first=True), nn.Linear(256, 12)

    def forward(self, x):
        y, _ = self.rnn(x)
        return self.fc(y[:, -1])


@model("gru_stacked")
def gru_stacked(path):
    torch.manual_seed(0)
    specs = [("x", "float32", ["batch", "steps", 40], {"kind": "uniform"})]
    return specs, export_torch(StackedGru(), specs, path)


if __name__ == "__main__":
    zoo.main()
