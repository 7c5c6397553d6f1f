#!/usr/bin/python3
"""Held-out models of one class (session 17, branch chlast): element-wise and normalization work
between channels-last convolutions that ran in the plain layout (group normalization, attention
weights over branches, per-channel time embeddings). All names start with "aside_": the work on
the class (sknet, vae_decoder of make_heldout7.py) did not look at them; they are measured once at
the end, as a check that the fix holds for the class.

    /usr/bin/python3 bench/zoo/make_heldout_chlast.py OUT [--only NAME,NAME]
    bench/zoo/run.py --zoo OUT --threads 1,2 --batches 1,8 --rounds 3 --no-docs

Torch 1.13 exports with seeded weights (opset 17), dynamic batch:
- aside_resnest: ResNeSt-like bottlenecks with split attention (radix 2, cardinality 2: the
  logits viewed [N, card, radix, -1], transposed, softmax over the radix, reshaped back and split),
  BatchNorm, 128x128 input;
- aside_diffusion_res: a diffusion UNet's residual blocks (GroupNorm(32) + SiLU, a time
  embedding's Linear added as [N, C, 1, 1], 96 and 192 channels at 32x32 and 16x16, a strided
  down and a nearest up with a skip Concat), inputs a 4x32x32 latent and a 128-wide embedding;
- aside_gn_resnet: a ResNet-18-like trunk with GroupNorm (groups 8, 48-channel stem: channels
  not in 16s) and ReLU on 128x128.
"""
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_models as zoo  # noqa: E402

zoo.MODELS.clear()
from heldout7_parts import build, image  # noqa: E402

model = zoo.model
zoo.MODELS.clear()  # heldout7_parts registers its own models on import; this set is only the asides
DIM_VALUES = {"batch": 1}


class SplitAttn(nn.Module):
    def __init__(self, c, radix=2, card=2, r=4):
        super().__init__()
        self.radix, self.card = radix, card
        self.conv = nn.Sequential(nn.Conv2d(c, c * radix, 3, 1, 1, groups=card * radix, bias=False),
                                  nn.BatchNorm2d(c * radix), nn.ReLU())
        inter = max(c * radix // r, 32)
        self.fc1 = nn.Sequential(nn.Conv2d(c, inter, 1, groups=card), nn.BatchNorm2d(inter), nn.ReLU())
        self.fc2 = nn.Conv2d(inter, c * radix, 1, groups=card)

    def forward(self, x):
        x = self.conv(x)
        b = x.shape[0]
        splits = torch.split(x, x.shape[1] // self.radix, 1)
        gap = self.fc2(self.fc1(F.adaptive_avg_pool2d(sum(splits), 1)))
        att = gap.view(b, self.card, self.radix, -1).transpose(1, 2)
        att = torch.softmax(att, 1).reshape(b, -1).view(b, -1, 1, 1)
        atts = torch.split(att, x.shape[1] // self.radix, 1)
        return sum(a * s for a, s in zip(atts, splits))


class ResNeStBlock(nn.Module):
    def __init__(self, cin, c, stride):
        super().__init__()
        self.a = nn.Sequential(nn.Conv2d(cin, c, 1, bias=False), nn.BatchNorm2d(c), nn.ReLU())
        self.attn = SplitAttn(c)
        self.pool = nn.AvgPool2d(3, stride, 1) if stride > 1 else nn.Identity()
        self.b = nn.Sequential(nn.Conv2d(c, 4 * c, 1, bias=False), nn.BatchNorm2d(4 * c))
        self.short = (nn.Sequential(nn.AvgPool2d(stride, stride) if stride > 1 else nn.Identity(),
                                    nn.Conv2d(cin, 4 * c, 1, bias=False), nn.BatchNorm2d(4 * c))
                      if stride > 1 or cin != 4 * c else nn.Identity())

    def forward(self, x):
        return F.relu(self.b(self.pool(self.attn(self.a(x)))) + self.short(x))


class ResNeSt(nn.Module):
    def __init__(self, widths=(32, 64, 128), depths=(2, 2, 2)):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 32, 3, 2, 1, bias=False), nn.BatchNorm2d(32), nn.ReLU(),
                                  nn.Conv2d(32, 64, 3, 1, 1, bias=False), nn.BatchNorm2d(64), nn.ReLU(),
                                  nn.MaxPool2d(3, 2, 1))
        blocks, cin = [], 64
        for i, (c, d) in enumerate(zip(widths, depths)):
            for j in range(d):
                blocks.append(ResNeStBlock(cin, c, 2 if j == 0 and i else 1))
                cin = 4 * c
        self.blocks = nn.Sequential(*blocks)
        self.fc = nn.Linear(cin, 100)

    def forward(self, x):
        return self.fc(self.blocks(self.stem(x)).mean((2, 3)))


@model("aside_resnest")
def aside_resnest(path):
    return build(ResNeSt, image(128), path)


class DiffRes(nn.Module):
    def __init__(self, cin, cout, temb):
        super().__init__()
        self.n1, self.c1 = nn.GroupNorm(32, cin), nn.Conv2d(cin, cout, 3, 1, 1)
        self.t = nn.Linear(temb, cout)
        self.n2, self.c2 = nn.GroupNorm(32, cout), nn.Conv2d(cout, cout, 3, 1, 1)
        self.short = nn.Conv2d(cin, cout, 1) if cin != cout else nn.Identity()

    def forward(self, x, emb):
        h = self.c1(F.silu(self.n1(x)))
        h = h + self.t(F.silu(emb))[:, :, None, None]
        h = self.c2(F.silu(self.n2(h)))
        return self.short(x) + h


class DiffUNet(nn.Module):
    def __init__(self, c=96, temb=128):
        super().__init__()
        self.temb = nn.Sequential(nn.Linear(temb, temb), nn.SiLU(), nn.Linear(temb, temb))
        self.inp = nn.Conv2d(4, c, 3, 1, 1)
        self.d1 = nn.ModuleList([DiffRes(c, c, temb), DiffRes(c, c, temb)])
        self.down = nn.Conv2d(c, c, 3, 2, 1)
        self.d2 = nn.ModuleList([DiffRes(c, 2 * c, temb), DiffRes(2 * c, 2 * c, temb)])
        self.mid = DiffRes(2 * c, 2 * c, temb)
        self.up = nn.Conv2d(2 * c, c, 3, 1, 1)
        self.u1 = nn.ModuleList([DiffRes(2 * c, c, temb), DiffRes(c, c, temb)])
        self.out = nn.Sequential(nn.GroupNorm(32, c), nn.SiLU(), nn.Conv2d(c, 4, 3, 1, 1))

    def forward(self, x, t):
        emb = self.temb(t)
        h = self.inp(x)
        for m in self.d1:
            h = m(h, emb)
        skip = h
        h = self.down(h)
        for m in self.d2:
            h = m(h, emb)
        h = self.mid(h, emb)
        h = self.up(F.interpolate(h, scale_factor=2.0, mode="nearest"))
        h = torch.cat([h, skip], 1)
        for m in self.u1:
            h = m(h, emb)
        return self.out(h)


@model("aside_diffusion_res")
def aside_diffusion_res(path):
    specs = [("latent", "float32", ["batch", 4, 32, 32], {"kind": "uniform"}),
             ("temb", "float32", ["batch", 128], {"kind": "uniform"})]
    return build(DiffUNet, specs, path)


class GnBlock(nn.Module):
    def __init__(self, cin, cout, stride, groups):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.GroupNorm(groups, cout),
                                  nn.ReLU(), nn.Conv2d(cout, cout, 3, 1, 1, bias=False),
                                  nn.GroupNorm(groups, cout))
        self.short = (nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.GroupNorm(groups, cout))
                      if stride > 1 or cin != cout else nn.Identity())

    def forward(self, x):
        return F.relu(self.body(x) + self.short(x))


class GnResNet(nn.Module):
    def __init__(self, widths=(48, 96, 192, 384), groups=8):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, widths[0], 7, 2, 3, bias=False), nn.GroupNorm(groups, widths[0]),
                                  nn.ReLU(), nn.MaxPool2d(3, 2, 1))
        blocks, cin = [], widths[0]
        for i, c in enumerate(widths):
            blocks += [GnBlock(cin, c, 2 if i else 1, groups), GnBlock(c, c, 1, groups)]
            cin = c
        self.blocks = nn.Sequential(*blocks)
        self.fc = nn.Linear(cin, 100)

    def forward(self, x):
        return self.fc(self.blocks(self.stem(x)).mean((2, 3)))


@model("aside_gn_resnet")
def aside_gn_resnet(path):
    return build(GnResNet, image(128), path)


if __name__ == "__main__":
    zoo.main_with_dim_values(DIM_VALUES)
