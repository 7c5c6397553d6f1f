#!/usr/bin/python3
"""Builds a held-out set of mobile (depthwise-separable) CNNs (session 16, branch dwblock).

    /usr/bin/python3 bench/zoo/make_heldout_mobile.py OUT [--only NAME,NAME]
    bench/zoo/run.py --zoo OUT --threads 1,2 --batches 1,8 --rounds 3 --no-docs

Same format as the zoo (OUT/<name>.onnx, OUT/manifest.json, batch-1 inputs and torch
references under OUT/data). Widths, resolutions, kernel sizes (3, 5, 7), strides and
block shapes none of the other sets has, to check that a depthwise rule holds for the
class: torchvision's mobilenet_v2 at width 1.4 on 160x160 images and mnasnet1_0; an
EfficientNet-lite-style net (ReLU6, no squeeze-excite, kernels 3 and 5, expansion 6);
a MobileOne / MobileNet-v1-style net in its deployed form (3x3 depthwise then 1x1, no
expansion, ReLU; the depthwise reads a 1x1's output); a ConvNeXt-style net (7x7
depthwise first in each block, reading the residual sum, then a 4x 1x1 expansion with
GELU, BatchNorm for LayerNorm); a GhostNet-style net (ghost modules: a 1x1 to half the
channels and a cheap 3x3 depthwise of it, concatenated; stride-2 depthwise and
squeeze-excite with hard-sigmoid in the bottlenecks); a mobilenet_v3_large at width
0.75 on 256x256. The two models whose names start with "aside_" (mobilenet_v2 at width
0.75 on 192x192, a wider GhostNet-style net on 256x256 with 5x5 depthwise) are not
looked at while working on the others; they are run at the end as a check.
All weights seeded; batch-norm statistics non-trivial; torch 1.13 export, opset 17.
"""
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_models as zoo  # noqa: E402

zoo.MODELS.clear()
model, export_torch, tv = zoo.model, zoo.export_torch, zoo.tv


def image(size):
    return [("image", "float32", ["batch", 3, size, size], {"kind": "uniform"})]


def seeded(net, seed=0):
    torch.manual_seed(seed)
    for m in net.modules():
        if isinstance(m, (nn.Conv2d, nn.Linear)):
            nn.init.kaiming_uniform_(m.weight, a=1.0)
            if m.bias is not None:
                nn.init.uniform_(m.bias, -0.1, 0.1)
    g = torch.Generator().manual_seed(seed + 1)
    for m in net.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.weight.data.copy_(torch.rand(m.num_features, generator=g) * 0.5 + 0.75)
            m.bias.data.copy_(torch.rand(m.num_features, generator=g) * 0.2 - 0.1)
            m.running_mean.copy_(torch.rand(m.num_features, generator=g) * 0.2 - 0.1)
            m.running_var.copy_(torch.rand(m.num_features, generator=g) * 0.5 + 0.75)
    return net.eval()


def cba(cin, cout, k=1, stride=1, groups=1, act=nn.ReLU6):
    layers = [nn.Conv2d(cin, cout, k, stride, k // 2, groups=groups, bias=False), nn.BatchNorm2d(cout)]
    if act is not None:
        layers.append(act())
    return nn.Sequential(*layers)


def head(cin, classes=1000, hidden=1280):
    return nn.Sequential(cba(cin, hidden, 1), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(hidden, classes))


# ------------------------------------------------------------ torchvision

@model("mobilenet_v2_w140_160")
def mobilenet_v2_w140_160(path):
    spec = image(160)
    return spec, export_torch(tv(torchvision.models.mobilenet_v2, width_mult=1.4), spec, path)


@model("mnasnet1_0")
def mnasnet1_0(path):
    spec = image(224)
    return spec, export_torch(tv(torchvision.models.mnasnet1_0), spec, path)


@model("mnv3_large_w075_256")
def mnv3_large_w075_256(path):
    spec = image(256)
    return spec, export_torch(tv(torchvision.models.mobilenet_v3_large, width_mult=0.75), spec, path)


@model("aside_mobilenet_v2_w075_192")
def aside_mobilenet_v2_w075_192(path):
    spec = image(192)
    return spec, export_torch(tv(torchvision.models.mobilenet_v2, width_mult=0.75), spec, path)


# ------------------------------------------------------------ EfficientNet-lite

class MBConv(nn.Module):
    def __init__(self, cin, cout, k, stride, expand, act=nn.ReLU6):
        super().__init__()
        mid = cin * expand
        layers = [cba(cin, mid, 1, act=act)] if expand != 1 else []
        layers += [cba(mid, mid, k, stride, groups=mid, act=act), cba(mid, cout, 1, act=None)]
        self.body = nn.Sequential(*layers)
        self.residual = stride == 1 and cin == cout

    def forward(self, x):
        y = self.body(x)
        return x + y if self.residual else y


class EfficientLite(nn.Module):
    # (expand, channels, repeats, stride, kernel): EfficientNet-lite0's stages
    STAGES = ((1, 16, 1, 1, 3), (6, 24, 2, 2, 3), (6, 40, 2, 2, 5), (6, 80, 3, 2, 3), (6, 112, 3, 1, 5),
              (6, 192, 4, 2, 5), (6, 320, 1, 1, 3))

    def __init__(self):
        super().__init__()
        layers, cin = [cba(3, 32, 3, 2)], 32
        for e, c, n, s, k in self.STAGES:
            for i in range(n):
                layers.append(MBConv(cin, c, k, s if i == 0 else 1, e))
                cin = c
        self.features = nn.Sequential(*layers)
        self.head = head(cin)

    def forward(self, x):
        return self.head(self.features(x))


@model("effnet_lite0_224")
def effnet_lite0_224(path):
    spec = image(224)
    return spec, export_torch(seeded(EfficientLite(), 3), spec, path)


# ------------------------------------------------------------ MobileOne (deployed)

class MobileOneLike(nn.Module):
    """MobileOne-S0 deployed: each block a 3x3 depthwise + ReLU then a 1x1 + ReLU."""

    STAGES = ((48, 2, 2), (128, 8, 2), (256, 10, 2), (384, 1, 2))

    def __init__(self):
        super().__init__()
        layers, cin = [cba(3, 48, 3, 2, act=nn.ReLU)], 48
        for c, n, s in self.STAGES:
            for i in range(n):
                stride = s if i == 0 else 1
                layers += [cba(cin, cin, 3, stride, groups=cin, act=nn.ReLU), cba(cin, c, 1, act=nn.ReLU)]
                cin = c
        self.features = nn.Sequential(*layers)
        self.fc = nn.Linear(cin, 1000)

    def forward(self, x):
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(self.features(x), 1), 1))


@model("mobileone_s0_224")
def mobileone_s0_224(path):
    spec = image(224)
    return spec, export_torch(seeded(MobileOneLike(), 4), spec, path)


# ------------------------------------------------------------ ConvNeXt-style

class NeXtBlock(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.dw = nn.Conv2d(c, c, 7, 1, 3, groups=c)
        self.norm = nn.BatchNorm2d(c)
        self.pw1 = nn.Conv2d(c, 4 * c, 1)
        self.pw2 = nn.Conv2d(4 * c, c, 1)

    def forward(self, x):
        return x + self.pw2(F.gelu(self.pw1(self.norm(self.dw(x)))))


class NeXtLike(nn.Module):
    def __init__(self, dims=(32, 64, 128, 256), depths=(2, 2, 4, 2)):
        super().__init__()
        layers = [nn.Conv2d(3, dims[0], 4, 4), nn.BatchNorm2d(dims[0])]
        for i, (c, d) in enumerate(zip(dims, depths)):
            if i > 0:
                layers += [nn.BatchNorm2d(dims[i - 1]), nn.Conv2d(dims[i - 1], c, 2, 2)]
            layers += [NeXtBlock(c) for _ in range(d)]
        self.features = nn.Sequential(*layers)
        self.fc = nn.Linear(dims[-1], 1000)

    def forward(self, x):
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(self.features(x), 1), 1))


@model("convnext_like_224")
def convnext_like_224(path):
    spec = image(224)
    return spec, export_torch(seeded(NeXtLike(), 5), spec, path)


# ------------------------------------------------------------ GhostNet-style

class Ghost(nn.Module):
    def __init__(self, cin, cout, relu=True, k=3):
        super().__init__()
        half = cout // 2
        act = nn.ReLU if relu else None
        self.primary = cba(cin, half, 1, act=act)
        self.cheap = cba(half, cout - half, k, groups=half, act=act)

    def forward(self, x):
        y = self.primary(x)
        return torch.cat([y, self.cheap(y)], 1)


class GhostSE(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.fc1 = nn.Conv2d(c, max(8, c // 4), 1)
        self.fc2 = nn.Conv2d(max(8, c // 4), c, 1)

    def forward(self, x):
        return x * F.hardsigmoid(self.fc2(F.relu(self.fc1(F.adaptive_avg_pool2d(x, 1)))))


class GhostBottleneck(nn.Module):
    def __init__(self, cin, mid, cout, k, stride, se, cheap_k=3):
        super().__init__()
        layers = [Ghost(cin, mid, True, cheap_k)]
        if stride > 1:
            layers.append(cba(mid, mid, k, stride, groups=mid, act=None))
        if se:
            layers.append(GhostSE(mid))
        layers.append(Ghost(mid, cout, False, cheap_k))
        self.body = nn.Sequential(*layers)
        self.short = (nn.Identity() if stride == 1 and cin == cout else
                      nn.Sequential(cba(cin, cin, k, stride, groups=cin, act=None), cba(cin, cout, 1, act=None)))

    def forward(self, x):
        return self.body(x) + self.short(x)


class GhostLike(nn.Module):
    # (kernel, mid, out, se, stride): GhostNet 1.0's table
    CFG = ((3, 16, 16, 0, 1), (3, 48, 24, 0, 2), (3, 72, 24, 0, 1), (5, 72, 40, 1, 2), (5, 120, 40, 1, 1),
           (3, 240, 80, 0, 2), (3, 200, 80, 0, 1), (3, 184, 80, 0, 1), (3, 480, 112, 1, 1), (5, 672, 160, 1, 2),
           (5, 960, 160, 0, 1), (5, 960, 160, 1, 1))

    def __init__(self, width=1.0, cheap_k=3):
        super().__init__()

        def w(c):
            return max(8, int(round(c * width / 4)) * 4)
        cin = w(16)
        layers = [cba(3, cin, 3, 2, act=nn.ReLU)]
        for k, mid, out, se, s in self.CFG:
            layers.append(GhostBottleneck(cin, w(mid), w(out), k, s, se, cheap_k))
            cin = w(out)
        self.features = nn.Sequential(*layers)
        self.head = head(cin, hidden=w(960))

    def forward(self, x):
        return self.head(self.features(x))


@model("ghostnet_like_224")
def ghostnet_like_224(path):
    spec = image(224)
    return spec, export_torch(seeded(GhostLike(), 6), spec, path)


@model("aside_ghostnet_w13_k5_256")
def aside_ghostnet_w13_k5_256(path):
    spec = image(256)
    return spec, export_torch(seeded(GhostLike(1.3, cheap_k=5), 7), spec, path)


if __name__ == "__main__":
    zoo.main()
