#!/usr/bin/python3
"""Builds the eighth held-out zoo (session 17, branch scout8): architecture classes none of the
other sets covers (vision: efficient-attention segmenters, GRN, cosine window attention,
transposed and axial attention, restoration nets, 3-D U-Nets, normalizing flows, local
correlation volumes, capsules; sequence, audio and tabular models in heldout8_parts.py).

    /usr/bin/python3 bench/zoo/make_heldout8.py OUT [--only NAME,NAME]
    bench/zoo/run.py --zoo OUT --threads 1,2 --batches 1,8 --rounds 3 --no-docs

Same format as the zoo (make_models.write_zoo: OUT/<name>.onnx, OUT/manifest.json, batch-1
inputs and torch references under OUT/data). Models whose names start with "aside_" are
variants the work on this set does not look at; they are measured at the end only, as a check
that a fix holds for the class.

Torch 1.13 exports (opset 17) with seeded weights and non-trivial batch-norm statistics:
- segformer: SegFormer (MiT-b0-like): overlapping patch embeddings (Conv k7 s4 p3, k3 s2 p1)
  with LayerNorm, efficient self-attention with spatial reduction, Mix-FFN (Linear, depthwise
  3x3, GELU), the all-MLP decoder (per-stage Linear, bilinear Resize to 1/4, Concat, 1x1 fuse);
- convnext_v2: ConvNeXt-V2-atto-like: channels-first LayerNorm written out (ReduceMean over the
  channels), depthwise 7x7, NHWC LayerNorm through permutes, GELU, GRN (ReduceL2 over H, W,
  divided by its channel mean);
- swinv2_like: Swin-V2-like on 256x256 (cosine attention with a clamped logit scale, a
  continuous position bias MLP gathered per pair, torch.roll shifts, window partition reshapes,
  shifted-window masks, res-post-norm; torchvision's swin_v2_t does not export: aten::zero);
- restormer: Restormer-like (MDTA: transposed attention over channels after L2-normalized
  q / k, depthwise 3x3 on q, k, v; GDFN: GELU-gated depthwise FFN; PixelUnshuffle /
  PixelShuffle) on 128x128;
- nafnet: NAFNet-like (LayerNorm2d over channels written out, SimpleGate, simplified channel
  attention, PixelShuffle up, learned residual scales) on 128x128;
- unet3d: nnU-Net-like 3-D U-Net (Conv3d, InstanceNorm3d, LeakyReLU, MaxPool3d,
  ConvTranspose3d k2 s2, skip Concat) on 32x64x64 volumes;
- glow: Glow-like flow (6-D squeeze Reshape / Transpose, ActNorm, invertible 1x1 convolution,
  affine coupling with sigmoid scales, log-determinant ReduceSums, a split with a learned
  prior);
- pwc_cost: PWC-Net-like local correlation (81 shifted Slice * ReduceMean, Concat) over a
  two-level feature pyramid of two images, flow estimators with dense Concat, ConvTranspose
  flow upsampling;
- axial_attn: axial attention through torch.einsum (Einsum nodes) along rows and columns of a
  32x32 grid;
- capsnet: CapsNet (9x9 convolutions, squash, a broadcast 5-D MatMul for the predictions,
  three routing iterations of softmax and weighted sums);
Asides: aside_segformer_b1 (wider, 224x224), aside_convnext_v2_nano, aside_unet3d_bn
(BatchNorm3d, ReLU, strided Conv3d down, trilinear upsampling).
"""
import math
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_models as zoo  # noqa: E402

from heldout7_parts import build, image  # noqa: E402  (its models are registered: cleared next)

zoo.MODELS.clear()
# Registered by the import: the sequence, audio and tabular models.
import heldout8_parts  # noqa: E402,F401

model = zoo.model
DIM_VALUES = heldout8_parts.DIM_VALUES


# ---------------------------------------------------------------- SegFormer

class EffAttn(nn.Module):
    def __init__(self, dim, heads, sr):
        super().__init__()
        self.h = heads
        self.q, self.kv, self.proj = nn.Linear(dim, dim), nn.Linear(dim, 2 * dim), nn.Linear(dim, dim)
        self.sr = nn.Sequential(nn.Conv2d(dim, dim, sr, sr)) if sr > 1 else None
        self.norm = nn.LayerNorm(dim) if sr > 1 else None

    def forward(self, x, h, w):
        b, n, c = x.shape
        q = self.q(x).reshape(b, n, self.h, c // self.h).permute(0, 2, 1, 3)
        y = x
        if self.sr is not None:
            y = self.norm(self.sr(x.permute(0, 2, 1).reshape(b, c, h, w)).reshape(b, c, -1).permute(0, 2, 1))
        kv = self.kv(y).reshape(b, -1, 2, self.h, c // self.h).permute(2, 0, 3, 1, 4)
        att = (q @ kv[0].transpose(-2, -1) * (c // self.h) ** -0.5).softmax(-1)
        return self.proj((att @ kv[1]).transpose(1, 2).reshape(b, n, c))


class MixFfn(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(dim, hidden), nn.Linear(hidden, dim)
        self.dw = nn.Conv2d(hidden, hidden, 3, 1, 1, groups=hidden)

    def forward(self, x, h, w):
        b, n, _ = x.shape
        y = self.fc1(x)
        y = self.dw(y.transpose(1, 2).reshape(b, -1, h, w)).flatten(2).transpose(1, 2)
        return self.fc2(F.gelu(y))


class MitBlock(nn.Module):
    def __init__(self, dim, heads, sr):
        super().__init__()
        self.n1, self.n2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.attn, self.ffn = EffAttn(dim, heads, sr), MixFfn(dim, 4 * dim)

    def forward(self, x, h, w):
        x = x + self.attn(self.n1(x), h, w)
        return x + self.ffn(self.n2(x), h, w)


class SegFormer(nn.Module):
    def __init__(self, dims=(32, 64, 160, 256), heads=(1, 2, 5, 8), srs=(8, 4, 2, 1), depth=2, dec=256,
                 classes=19):
        super().__init__()
        self.embeds, self.enorms, self.stages, self.norms = (nn.ModuleList() for _ in range(4))
        cin = 3
        for i, (c, hd, sr) in enumerate(zip(dims, heads, srs)):
            k, s = (7, 4) if i == 0 else (3, 2)
            self.embeds.append(nn.Conv2d(cin, c, k, s, k // 2))
            self.enorms.append(nn.LayerNorm(c))
            self.stages.append(nn.ModuleList(MitBlock(c, hd, sr) for _ in range(depth)))
            self.norms.append(nn.LayerNorm(c))
            cin = c
        self.lins = nn.ModuleList(nn.Linear(c, dec) for c in dims)
        self.fuse = nn.Sequential(nn.Conv2d(4 * dec, dec, 1, bias=False), nn.BatchNorm2d(dec), nn.ReLU())
        self.cls = nn.Conv2d(dec, classes, 1)

    def forward(self, x):
        b = x.shape[0]
        feats = []
        for embed, enorm, blocks, norm in zip(self.embeds, self.enorms, self.stages, self.norms):
            x = embed(x)
            h, w = x.shape[2], x.shape[3]
            x = enorm(x.flatten(2).transpose(1, 2))
            for blk in blocks:
                x = blk(x, h, w)
            x = norm(x).transpose(1, 2).reshape(b, -1, h, w)
            feats.append(x)
        size = feats[0].shape[2:]
        outs = []
        for f, lin in zip(feats, self.lins):
            y = lin(f.flatten(2).transpose(1, 2)).transpose(1, 2).reshape(b, -1, f.shape[2], f.shape[3])
            outs.append(F.interpolate(y, size=size, mode="bilinear", align_corners=False) if y.shape[2] != size[0]
                        else y)
        return self.cls(self.fuse(torch.cat(outs[::-1], 1)))


@model("segformer")
def segformer(path):
    return build(SegFormer, image(256), path)


@model("aside_segformer_b1")
def aside_segformer_b1(path):
    return build(lambda: SegFormer(dims=(64, 128, 320, 512), dec=256, classes=150), image(224), path, seed=3)


# ---------------------------------------------------------------- ConvNeXt-V2

class LayerNormCF(nn.Module):
    """LayerNorm over the channels of NCHW written out (as ConvNeXt code does)."""

    def __init__(self, c):
        super().__init__()
        self.weight, self.bias = nn.Parameter(1 + 0.1 * torch.randn(c)), nn.Parameter(0.1 * torch.randn(c))

    def forward(self, x):
        u = x.mean(1, keepdim=True)
        s = (x - u).pow(2).mean(1, keepdim=True)
        x = (x - u) / torch.sqrt(s + 1e-6)
        return self.weight[:, None, None] * x + self.bias[:, None, None]


class Grn(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.gamma, self.beta = nn.Parameter(0.1 * torch.randn(1, 1, 1, c)), nn.Parameter(0.1 * torch.randn(1, 1, 1, c))

    def forward(self, x):
        gx = torch.norm(x, p=2, dim=(1, 2), keepdim=True)
        nx = gx / (gx.mean(dim=-1, keepdim=True) + 1e-6)
        return self.gamma * (x * nx) + self.beta + x


class V2Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.dw = nn.Conv2d(c, c, 7, 1, 3, groups=c)
        self.norm = nn.LayerNorm(c, eps=1e-6)
        self.fc1, self.fc2 = nn.Linear(c, 4 * c), nn.Linear(4 * c, c)
        self.grn = Grn(4 * c)

    def forward(self, x):
        y = self.dw(x).permute(0, 2, 3, 1)
        y = self.fc2(self.grn(F.gelu(self.fc1(self.norm(y)))))
        return x + y.permute(0, 3, 1, 2)


class ConvNeXtV2(nn.Module):
    def __init__(self, dims=(40, 80, 160, 320), depths=(2, 2, 6, 2)):
        super().__init__()
        layers = [nn.Conv2d(3, dims[0], 4, 4), LayerNormCF(dims[0])]
        for i, (c, d) in enumerate(zip(dims, depths)):
            if i:
                layers += [LayerNormCF(dims[i - 1]), nn.Conv2d(dims[i - 1], c, 2, 2)]
            layers += [V2Block(c) for _ in range(d)]
        self.body = nn.Sequential(*layers)
        self.norm, self.head = nn.LayerNorm(dims[-1]), nn.Linear(dims[-1], 1000)

    def forward(self, x):
        return self.head(self.norm(self.body(x).mean((2, 3))))


@model("convnext_v2")
def convnext_v2(path):
    return build(ConvNeXtV2, image(224), path)


@model("aside_convnext_v2_nano")
def aside_convnext_v2_nano(path):
    return build(lambda: ConvNeXtV2((80, 160, 320, 640), (2, 2, 8, 2)), image(224), path, seed=5)


# ---------------------------------------------------------------- Swin-V2-like

def window_partition(x, w):
    b, h, ww, c = x.shape
    x = x.reshape(b, h // w, w, ww // w, w, c).permute(0, 1, 3, 2, 4, 5)
    return x.reshape(-1, w * w, c)


def window_merge(x, w, b, h, ww):
    x = x.reshape(b, h // w, ww // w, w, w, -1).permute(0, 1, 3, 2, 4, 5)
    return x.reshape(b, h, ww, -1)


class CosineWindowAttn(nn.Module):
    """Swin-V2 attention: cosine similarity scaled by a clamped learned logit scale, a position
    bias from an MLP over log-spaced relative coordinates (16 * sigmoid), gathered per pair."""

    def __init__(self, dim, heads, w):
        super().__init__()
        self.h, self.w = heads, w
        self.qkv, self.proj = nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)
        self.logit_scale = nn.Parameter(torch.log(10 * torch.ones(heads, 1, 1)) + 0.1 * torch.randn(heads, 1, 1))
        self.cpb = nn.Sequential(nn.Linear(2, 256), nn.ReLU(), nn.Linear(256, heads, bias=False))
        r = torch.arange(-(w - 1), w, dtype=torch.float32)
        table = torch.stack(torch.meshgrid(r, r, indexing="ij"), -1) / (w - 1) * 8
        self.register_buffer("table", torch.sign(table) * torch.log2(table.abs() + 1.0) / math.log2(8))
        coords = torch.stack(torch.meshgrid(torch.arange(w), torch.arange(w), indexing="ij")).flatten(1)
        rel = (coords[:, :, None] - coords[:, None, :]).permute(1, 2, 0) + (w - 1)
        self.register_buffer("index", (rel[..., 0] * (2 * w - 1) + rel[..., 1]).flatten())

    def forward(self, x, mask):
        bw, n, c = x.shape
        q, k, v = self.qkv(x).reshape(bw, n, 3, self.h, c // self.h).permute(2, 0, 3, 1, 4)
        att = F.normalize(q, dim=-1) @ F.normalize(k, dim=-1).transpose(-2, -1)
        att = att * torch.exp(torch.clamp(self.logit_scale, max=math.log(100.0)))
        bias = self.cpb(self.table).reshape(-1, self.h)[self.index].reshape(n, n, self.h).permute(2, 0, 1)
        att = att + 16 * torch.sigmoid(bias)
        if mask is not None:
            nw = mask.shape[0]
            att = (att.reshape(-1, nw, self.h, n, n) + mask[None, :, None]).reshape(bw, self.h, n, n)
        return self.proj((att.softmax(-1) @ v).transpose(1, 2).reshape(bw, n, c))


class SwinV2Block(nn.Module):
    def __init__(self, dim, heads, w, shift, res):
        super().__init__()
        self.w, self.shift = w, shift
        self.attn = CosineWindowAttn(dim, heads, w)
        self.n1, self.n2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))
        mask = None
        if shift:
            img = torch.zeros(1, res, res, 1)
            cnt = 0
            for hs in (slice(0, -w), slice(-w, -shift), slice(-shift, None)):
                for ws in (slice(0, -w), slice(-w, -shift), slice(-shift, None)):
                    img[:, hs, ws] = cnt
                    cnt += 1
            m = window_partition(img, w).squeeze(-1)
            mask = (m[:, None, :] - m[:, :, None]).ne(0).float() * -100.0
        self.register_buffer("mask", mask)

    def forward(self, x):
        b, h, ww, c = x.shape
        y = torch.roll(x, (-self.shift, -self.shift), (1, 2)) if self.shift else x
        y = window_merge(self.attn(window_partition(y, self.w), self.mask), self.w, b, h, ww)
        if self.shift:
            y = torch.roll(y, (self.shift, self.shift), (1, 2))
        x = x + self.n1(y)
        return x + self.n2(self.mlp(x))


class SwinV2(nn.Module):
    def __init__(self, dims=(48, 96, 192, 384), depths=(2, 2, 4, 2), heads=(2, 4, 8, 16), w=8, size=256):
        super().__init__()
        self.embed, self.enorm = nn.Conv2d(3, dims[0], 4, 4), nn.LayerNorm(dims[0])
        self.stages, self.merges = nn.ModuleList(), nn.ModuleList()
        res = size // 4
        for i, (c, d, hd) in enumerate(zip(dims, depths, heads)):
            ws = min(w, res)
            self.stages.append(nn.Sequential(*[SwinV2Block(c, hd, ws, (ws // 2) if j % 2 and res > ws else 0, res)
                                               for j in range(d)]))
            if i + 1 < len(dims):
                self.merges.append(nn.ModuleDict({"red": nn.Linear(4 * c, 2 * c, bias=False),
                                                  "norm": nn.LayerNorm(2 * c)}))
                res //= 2
        self.norm, self.head = nn.LayerNorm(dims[-1]), nn.Linear(dims[-1], 1000)

    def forward(self, x):
        x = self.enorm(self.embed(x).permute(0, 2, 3, 1))
        for i, stage in enumerate(self.stages):
            x = stage(x)
            if i < len(self.merges):
                x = torch.cat([x[:, 0::2, 0::2], x[:, 1::2, 0::2], x[:, 0::2, 1::2], x[:, 1::2, 1::2]], -1)
                x = self.merges[i]["norm"](self.merges[i]["red"](x))
        return self.head(self.norm(x).mean((1, 2)))


@model("swinv2_like")
def swinv2_like(path):
    return build(SwinV2, image(256), path)


# ---------------------------------------------------------------- restoration

class ChanLN(nn.Module):
    """Restormer's LayerNorm: over the channels of B, HW, C (to_3d / to_4d through reshapes)."""

    def __init__(self, c):
        super().__init__()
        self.norm = nn.LayerNorm(c)

    def forward(self, x):
        b, c, h, w = x.shape
        return self.norm(x.flatten(2).transpose(1, 2)).transpose(1, 2).reshape(b, c, h, w)


class Mdta(nn.Module):
    def __init__(self, c, heads):
        super().__init__()
        self.h = heads
        self.temp = nn.Parameter(1 + 0.1 * torch.randn(heads, 1, 1))
        self.qkv = nn.Conv2d(c, 3 * c, 1, bias=False)
        self.dw = nn.Conv2d(3 * c, 3 * c, 3, 1, 1, groups=3 * c, bias=False)
        self.proj = nn.Conv2d(c, c, 1, bias=False)

    def forward(self, x):
        b, c, h, w = x.shape
        q, k, v = self.dw(self.qkv(x)).chunk(3, 1)
        q, k, v = (t.reshape(b, self.h, c // self.h, h * w) for t in (q, k, v))
        q, k = F.normalize(q, dim=-1), F.normalize(k, dim=-1)
        att = (q @ k.transpose(-2, -1) * self.temp).softmax(-1)
        return self.proj((att @ v).reshape(b, c, h, w))


class Gdfn(nn.Module):
    def __init__(self, c, factor=2.66):
        super().__init__()
        hid = int(c * factor)
        self.pin = nn.Conv2d(c, 2 * hid, 1, bias=False)
        self.dw = nn.Conv2d(2 * hid, 2 * hid, 3, 1, 1, groups=2 * hid, bias=False)
        self.pout = nn.Conv2d(hid, c, 1, bias=False)

    def forward(self, x):
        a, g = self.dw(self.pin(x)).chunk(2, 1)
        return self.pout(F.gelu(a) * g)


class RestormerBlock(nn.Module):
    def __init__(self, c, heads):
        super().__init__()
        self.n1, self.n2, self.attn, self.ffn = ChanLN(c), ChanLN(c), Mdta(c, heads), Gdfn(c)

    def forward(self, x):
        x = x + self.attn(self.n1(x))
        return x + self.ffn(self.n2(x))


class Restormer(nn.Module):
    def __init__(self, c=24, heads=(1, 2, 4), depths=(1, 2, 2)):
        super().__init__()
        self.embed = nn.Conv2d(3, c, 3, 1, 1, bias=False)
        self.enc1 = nn.Sequential(*[RestormerBlock(c, heads[0]) for _ in range(depths[0])])
        self.down1 = nn.Sequential(nn.Conv2d(c, c // 2, 3, 1, 1, bias=False), nn.PixelUnshuffle(2))
        self.enc2 = nn.Sequential(*[RestormerBlock(2 * c, heads[1]) for _ in range(depths[1])])
        self.down2 = nn.Sequential(nn.Conv2d(2 * c, c, 3, 1, 1, bias=False), nn.PixelUnshuffle(2))
        self.latent = nn.Sequential(*[RestormerBlock(4 * c, heads[2]) for _ in range(depths[2])])
        self.up2 = nn.Sequential(nn.Conv2d(4 * c, 8 * c, 3, 1, 1, bias=False), nn.PixelShuffle(2))
        self.red2 = nn.Conv2d(4 * c, 2 * c, 1, bias=False)
        self.dec2 = nn.Sequential(*[RestormerBlock(2 * c, heads[1]) for _ in range(depths[1])])
        self.up1 = nn.Sequential(nn.Conv2d(2 * c, 4 * c, 3, 1, 1, bias=False), nn.PixelShuffle(2))
        self.dec1 = nn.Sequential(*[RestormerBlock(2 * c, heads[0]) for _ in range(depths[0])])
        self.out = nn.Conv2d(2 * c, 3, 3, 1, 1, bias=False)

    def forward(self, img):
        e1 = self.enc1(self.embed(img))
        e2 = self.enc2(self.down1(e1))
        lat = self.latent(self.down2(e2))
        d2 = self.dec2(self.red2(torch.cat([self.up2(lat), e2], 1)))
        d1 = self.dec1(torch.cat([self.up1(d2), e1], 1))
        return self.out(d1) + img


@model("restormer")
def restormer(path):
    return build(Restormer, image(128), path)


class LayerNorm2d(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.weight, self.bias = nn.Parameter(1 + 0.1 * torch.randn(c)), nn.Parameter(0.1 * torch.randn(c))

    def forward(self, x):
        mu = x.mean(1, keepdim=True)
        var = (x - mu).pow(2).mean(1, keepdim=True)
        return self.weight.view(1, -1, 1, 1) * ((x - mu) / (var + 1e-6).sqrt()) + self.bias.view(1, -1, 1, 1)


class NafBlock(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.n1, self.n2 = LayerNorm2d(c), LayerNorm2d(c)
        self.c1, self.dw, self.c3 = nn.Conv2d(c, 2 * c, 1), nn.Conv2d(2 * c, 2 * c, 3, 1, 1, groups=2 * c), nn.Conv2d(c, c, 1)
        self.sca = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Conv2d(c, c, 1))
        self.c4, self.c5 = nn.Conv2d(c, 2 * c, 1), nn.Conv2d(c, c, 1)
        self.beta, self.gamma = nn.Parameter(0.1 * torch.randn(1, c, 1, 1)), nn.Parameter(0.1 * torch.randn(1, c, 1, 1))

    def forward(self, x):
        a, g = self.dw(self.c1(self.n1(x))).chunk(2, 1)
        y = a * g
        y = self.c3(y * self.sca(y))
        x = x + y * self.beta
        a, g = self.c4(self.n2(x)).chunk(2, 1)
        return x + self.c5(a * g) * self.gamma


class NafNet(nn.Module):
    def __init__(self, c=16, enc=(1, 1, 2), mid=2, dec=(1, 1, 1)):
        super().__init__()
        self.intro, self.ending = nn.Conv2d(3, c, 3, 1, 1), nn.Conv2d(c, 3, 3, 1, 1)
        self.encs, self.downs, self.ups, self.decs = (nn.ModuleList() for _ in range(4))
        for n in enc:
            self.encs.append(nn.Sequential(*[NafBlock(c) for _ in range(n)]))
            self.downs.append(nn.Conv2d(c, 2 * c, 2, 2))
            c *= 2
        self.mid = nn.Sequential(*[NafBlock(c) for _ in range(mid)])
        for n in dec:
            self.ups.append(nn.Sequential(nn.Conv2d(c, 2 * c, 1, bias=False), nn.PixelShuffle(2)))
            c //= 2
            self.decs.append(nn.Sequential(*[NafBlock(c) for _ in range(n)]))

    def forward(self, img):
        x, skips = self.intro(img), []
        for enc, down in zip(self.encs, self.downs):
            x = enc(x)
            skips.append(x)
            x = down(x)
        x = self.mid(x)
        for dec, up, skip in zip(self.decs, self.ups, skips[::-1]):
            x = dec(up(x) + skip)
        return self.ending(x) + img


@model("nafnet")
def nafnet(path):
    return build(NafNet, image(128), path)


# ---------------------------------------------------------------- 3-D U-Net

def block3d(cin, cout, bn=False, stride=1):
    norm = (lambda c: nn.BatchNorm3d(c)) if bn else (lambda c: nn.InstanceNorm3d(c, affine=True))
    act = (lambda: nn.ReLU()) if bn else (lambda: nn.LeakyReLU(0.01))
    return nn.Sequential(nn.Conv3d(cin, cout, 3, stride, 1, bias=False), norm(cout), act(),
                         nn.Conv3d(cout, cout, 3, 1, 1, bias=False), norm(cout), act())


class UNet3d(nn.Module):
    def __init__(self, chans=(16, 32, 64, 128), cin=1, classes=3, bn=False):
        super().__init__()
        self.bn = bn
        self.encs, self.ups, self.decs = nn.ModuleList(), nn.ModuleList(), nn.ModuleList()
        c = cin
        for i, ch in enumerate(chans):
            self.encs.append(block3d(c, ch, bn, 2 if bn and i else 1))
            c = ch
        for ch in chans[-2::-1]:
            self.ups.append(nn.Conv3d(c, ch, 1, bias=False) if bn else nn.ConvTranspose3d(c, ch, 2, 2, bias=False))
            self.decs.append(block3d(2 * ch, ch, bn))
            c = ch
        self.out = nn.Conv3d(c, classes, 1)

    def forward(self, x):
        skips = []
        for i, enc in enumerate(self.encs):
            if i and not self.bn:
                x = F.max_pool3d(x, 2)
            x = enc(x)
            skips.append(x)
        for up, dec, skip in zip(self.ups, self.decs, skips[-2::-1]):
            if self.bn:
                x = F.interpolate(up(x), scale_factor=2.0, mode="trilinear", align_corners=False)
            else:
                x = up(x)
            x = dec(torch.cat([x, skip], 1))
        return self.out(x)


@model("unet3d")
def unet3d(path):
    return build(UNet3d, [("volume", "float32", ["batch", 1, 32, 64, 64], {"kind": "uniform"})], path)


@model("aside_unet3d_bn")
def aside_unet3d_bn(path):
    return build(lambda: UNet3d((12, 24, 48), cin=2, classes=4, bn=True),
                 [("volume", "float32", ["batch", 2, 48, 48, 48], {"kind": "uniform"})], path, seed=7)


# ---------------------------------------------------------------- Glow

class ActNorm(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.bias, self.logs = nn.Parameter(0.1 * torch.randn(1, c, 1, 1)), nn.Parameter(0.1 * torch.randn(1, c, 1, 1))

    def forward(self, x):
        return (x + self.bias) * torch.exp(self.logs), self.logs.sum() * x.shape[2] * x.shape[3]


class FlowStep(nn.Module):
    def __init__(self, c, hidden):
        super().__init__()
        self.actnorm = ActNorm(c)
        w = torch.linalg.qr(torch.randn(c, c))[0]
        self.register_buffer("w", w.reshape(c, c, 1, 1))
        self.logdet_w = float(torch.slogdet(w)[1])
        self.nn = nn.Sequential(nn.Conv2d(c // 2, hidden, 3, 1, 1), nn.ReLU(), nn.Conv2d(hidden, hidden, 1), nn.ReLU(),
                                nn.Conv2d(hidden, c, 3, 1, 1))

    def forward(self, x):
        x, ld = self.actnorm(x)
        x = F.conv2d(x, self.w)
        ld = ld + self.logdet_w * x.shape[2] * x.shape[3]
        a, b = x.chunk(2, 1)
        h = self.nn(a)
        shift, scale = h[:, 0::2], torch.sigmoid(h[:, 1::2] + 2.0)
        b = (b + shift) * scale
        return torch.cat([a, b], 1), ld + torch.log(scale).flatten(1).sum(1)


def squeeze2(x):
    b, c, h, w = x.shape
    x = x.reshape(b, c, h // 2, 2, w // 2, 2).permute(0, 1, 3, 5, 2, 4)
    return x.reshape(b, c * 4, h // 2, w // 2)


class Glow(nn.Module):
    def __init__(self, levels=2, steps=4, hidden=96):
        super().__init__()
        self.levels = nn.ModuleList()
        self.priors = nn.ModuleList()
        c = 3
        for i in range(levels):
            c *= 4
            self.levels.append(nn.ModuleList(FlowStep(c, hidden) for _ in range(steps)))
            self.priors.append(nn.Conv2d(c // 2, c, 3, 1, 1))
            c //= 2

    def forward(self, x):
        logdet = torch.zeros_like(x[:, 0, 0, 0])
        logp, zs = 0, []
        for steps, prior in zip(self.levels, self.priors):
            x = squeeze2(x)
            for s in steps:
                x, ld = s(x)
                logdet = logdet + ld
            x, z = x.chunk(2, 1)
            mean, logs = prior(x).chunk(2, 1)
            logp = logp + (-0.5 * (math.log(2 * math.pi) + 2 * logs + (z - mean) ** 2 * torch.exp(-2 * logs))).flatten(1).sum(1)
            zs.append(z.flatten(1))
        zs.append(x.flatten(1))
        return torch.cat(zs, 1), logdet + logp


@model("glow")
def glow(path):
    return build(Glow, image(64), path)


# ---------------------------------------------------------------- PWC-Net local correlation

def local_corr(f1, f2, d):
    h, w = f1.shape[2], f1.shape[3]
    p = F.pad(f2, (d, d, d, d))
    outs = [(f1 * p[:, :, dy:dy + h, dx:dx + w]).mean(1, keepdim=True)
            for dy in range(2 * d + 1) for dx in range(2 * d + 1)]
    return F.leaky_relu(torch.cat(outs, 1), 0.1)


def cl(cin, cout, stride=1):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, stride, 1), nn.LeakyReLU(0.1))


class FlowEstimator(nn.Module):
    def __init__(self, cin):
        super().__init__()
        self.convs = nn.ModuleList()
        c = cin
        for cout in (64, 48, 32):
            self.convs.append(cl(c, cout))
            c += cout
        self.flow = nn.Conv2d(c, 2, 3, 1, 1)

    def forward(self, x):
        for conv in self.convs:
            x = torch.cat([conv(x), x], 1)
        return self.flow(x)


class PwcCost(nn.Module):
    def __init__(self, d=4):
        super().__init__()
        self.d = d
        self.pyr = nn.ModuleList([nn.Sequential(cl(3, 16, 2), cl(16, 16)), nn.Sequential(cl(16, 32, 2), cl(32, 32)),
                                  nn.Sequential(cl(32, 64, 2), cl(64, 64)), nn.Sequential(cl(64, 96, 2), cl(96, 96))])
        n = (2 * d + 1) ** 2
        self.est3 = FlowEstimator(n + 96)
        self.up = nn.ConvTranspose2d(2, 2, 4, 2, 1)
        self.est2 = FlowEstimator(n + 64 + 2)

    def forward(self, im1, im2):
        f1, f2 = [], []
        a, b = im1, im2
        for layer in self.pyr:
            a, b = layer(a), layer(b)
            f1.append(a)
            f2.append(b)
        flow3 = self.est3(torch.cat([local_corr(f1[3], f2[3], self.d), f1[3]], 1))
        up = self.up(flow3)
        flow2 = self.est2(torch.cat([local_corr(f1[2], f2[2], self.d), f1[2], up], 1))
        return flow2, flow3


@model("pwc_cost")
def pwc_cost(path):
    specs = [("image1", "float32", ["batch", 3, 256, 256], {"kind": "uniform"}),
             ("image2", "float32", ["batch", 3, 256, 256], {"kind": "uniform"})]
    return build(PwcCost, specs, path)


# ---------------------------------------------------------------- axial attention (einsum)

class AxialAttn(nn.Module):
    def __init__(self, c, heads):
        super().__init__()
        self.h = heads
        self.qkv = nn.Conv2d(c, 3 * c, 1, bias=False)
        self.out = nn.Conv2d(c, c, 1)
        self.bn = nn.BatchNorm2d(c)

    def attend(self, q, k, v, axis):
        s = q.shape[2] ** -0.5
        if axis == "row":
            att = torch.einsum("bhdxy,bhdxz->bhxyz", q * s, k).softmax(-1)
            return torch.einsum("bhxyz,bhdxz->bhdxy", att, v)
        att = torch.einsum("bhdyx,bhdzx->bhxyz", q * s, k).softmax(-1)
        return torch.einsum("bhxyz,bhdzx->bhdyx", att, v)

    def forward(self, x):
        b, c, hh, ww = x.shape
        q, k, v = (t.reshape(b, self.h, c // self.h, hh, ww) for t in self.qkv(self.bn(x)).chunk(3, 1))
        y = self.attend(q, k, v, "row") + self.attend(q, k, v, "col")
        return x + self.out(y.reshape(b, c, hh, ww))


class AxialNet(nn.Module):
    def __init__(self, c=64, heads=4, depth=4):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, c, 4, 4), nn.BatchNorm2d(c), nn.GELU())
        layers = []
        for _ in range(depth):
            layers += [AxialAttn(c, heads), nn.Sequential(nn.BatchNorm2d(c), nn.Conv2d(c, 2 * c, 1), nn.GELU(),
                                                          nn.Conv2d(2 * c, c, 1))]
        self.layers = nn.ModuleList(layers)
        self.head = nn.Linear(c, 100)

    def forward(self, x):
        x = self.stem(x)
        for i, layer in enumerate(self.layers):
            x = layer(x) if i % 2 == 0 else x + layer(x)
        return self.head(x.mean((2, 3)))


@model("axial_attn")
def axial_attn(path):
    return build(AxialNet, image(128), path)


# ---------------------------------------------------------------- CapsNet

def squash(s, dim=-1):
    n2 = (s * s).sum(dim, keepdim=True)
    return n2 / (1 + n2) * s / torch.sqrt(n2 + 1e-8)


class CapsNet(nn.Module):
    def __init__(self, routing=3):
        super().__init__()
        self.routing = routing
        self.conv = nn.Conv2d(1, 256, 9)
        self.primary = nn.Conv2d(256, 256, 9, 2)
        self.w = nn.Parameter(0.05 * torch.randn(1, 1152, 10, 16, 8))

    def forward(self, x):
        b = x.shape[0]
        u = squash(self.primary(F.relu(self.conv(x))).reshape(b, 32, 8, 36).permute(0, 1, 3, 2).reshape(b, 1152, 8))
        u_hat = (self.w @ u[:, :, None, :, None]).squeeze(-1)
        logits = torch.zeros_like(u_hat[:, :, :, 0])
        for i in range(self.routing):
            c = logits.softmax(2)
            v = squash((c[..., None] * u_hat).sum(1))
            if i + 1 < self.routing:
                logits = logits + (u_hat * v[:, None]).sum(-1)
        return torch.sqrt((v * v).sum(-1))


@model("capsnet")
def capsnet(path):
    return build(CapsNet, image(28, 1), path)


if __name__ == "__main__":
    zoo.main_with_dim_values(DIM_VALUES)
