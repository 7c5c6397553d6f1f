#!/usr/bin/python3
"""Builds a third held-out CNN zoo (session 15, branch vision3): the classes of the zoo's
slowest CNN rows on AVX-512 hosts (SiLU after convolutions, channels-last skip joins,
stride-2 ConvTranspose upsampling, channel shuffles, narrow depthwise stages) at other
widths, depths and input sizes.

    /usr/bin/python3 bench/zoo/make_heldout_cnn3.py OUT [--only NAME,NAME]
    bench/zoo/run.sh --zoo OUT --threads 1,2 --batches 1,8 --rounds 1 --no-docs

Same format as the zoo (OUT/<name>.onnx, OUT/manifest.json, batch-1 inputs and torch
references under OUT/data). Models whose names start with "aside_" are not looked at while
working on the others; they are run at the end as a check.

The models, torch 1.13 exports with seeded weights and non-trivial batch-norm statistics:
torchvision's efficientnet_b1 at 240x240 (SiLU, squeeze-excite, 5x5 depthwise), mnasnet0_5
(ReLU inverted residuals at width 0.5), shufflenet_v2_x0_5 (channel shuffles between
1x1 and depthwise convolutions), a three-level UNet on 96x160 frames (24 base channels,
2x2 stride-2 ConvTranspose without bias, channel Concat joins, ReLU), and a YOLO-style
SiLU network on 256x256 (CSP blocks joined by Concat, an SPPF max-pool pyramid, 2x nearest
upsampling). Asides: torchvision's efficientnet_b2 at 224x224, and a four-level UNet on
128x192 with SiLU BatchNorm blocks, biased ConvTranspose and a Sigmoid head.
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
IMAGE = zoo.IMAGE


def image(h, w):
    return [("image", "float32", ["batch", 3, h, w], {"kind": "uniform"})]


def seeded(net, seed=0):
    g = torch.Generator().manual_seed(seed + 1)
    for m in net.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.running_mean.copy_(torch.rand(m.num_features, generator=g) * 0.2 - 0.1)
            m.running_var.copy_(torch.rand(m.num_features, generator=g) * 0.5 + 0.75)
    return net


def cba(cin, cout, k, stride=1, act=nn.SiLU):
    return nn.Sequential(nn.Conv2d(cin, cout, k, stride, (k - 1) // 2, bias=False), nn.BatchNorm2d(cout), act())


@model("efficientnet_b1_240")
def efficientnet_b1(path):
    return image(240, 240), export_torch(tv(torchvision.models.efficientnet_b1), image(240, 240), path)


@model("mnasnet0_5")
def mnasnet0_5(path):
    return IMAGE, export_torch(tv(torchvision.models.mnasnet0_5), IMAGE, path)


@model("shufflenet_v2_x0_5")
def shufflenet_v2_x0_5(path):
    return IMAGE, export_torch(tv(torchvision.models.shufflenet_v2_x0_5), IMAGE, path)


# ------------------------------------------------------------ UNets

class UNet(nn.Module):
    """`levels` down / up levels; ConvTranspose 2x2 stride 2 up, Concat joins."""

    def __init__(self, levels=3, c=24, act=nn.ReLU, up_bias=False, sigmoid=False):
        super().__init__()

        def block(i, o):
            return nn.Sequential(nn.Conv2d(i, o, 3, padding=1, bias=False), nn.BatchNorm2d(o), act(),
                                 nn.Conv2d(o, o, 3, padding=1, bias=False), nn.BatchNorm2d(o), act())
        widths = [c * 2 ** i for i in range(levels + 1)]
        self.down = nn.ModuleList([block(3, widths[0])] + [block(widths[i - 1], widths[i]) for i in range(1, levels + 1)])
        self.ups = nn.ModuleList(nn.ConvTranspose2d(widths[i + 1], widths[i], 2, stride=2, bias=up_bias)
                                 for i in reversed(range(levels)))
        self.blocks = nn.ModuleList(block(2 * widths[i], widths[i]) for i in reversed(range(levels)))
        self.head = nn.Conv2d(widths[0], 3, 1)
        self.sigmoid = sigmoid

    def forward(self, x):
        skips = []
        for i, d in enumerate(self.down):
            x = d(x if i == 0 else F.max_pool2d(x, 2))
            skips.append(x)
        skips.pop()
        for up, block in zip(self.ups, self.blocks):
            x = block(torch.cat([up(x), skips.pop()], 1))
        y = self.head(x)
        return torch.sigmoid(y) if self.sigmoid else y


@model("unet3_96x160")
def unet3(path):
    torch.manual_seed(0)
    return image(96, 160), export_torch(seeded(UNet()), image(96, 160), path)


@model("aside_unet4_silu_128x192")
def aside_unet4(path):
    torch.manual_seed(7)
    net = seeded(UNet(levels=4, c=16, act=nn.SiLU, up_bias=True, sigmoid=True), 7)
    return image(128, 192), export_torch(net, image(128, 192), path)


# ------------------------------------------------------------ YOLO-style SiLU net

class Csp(nn.Module):
    def __init__(self, cin, cout, n=1):
        super().__init__()
        h = cout // 2
        self.a, self.b = cba(cin, h, 1), cba(cin, h, 1)
        self.m = nn.Sequential(*[nn.Sequential(cba(h, h, 1), cba(h, h, 3)) for _ in range(n)])
        self.out = cba(2 * h, cout, 1)

    def forward(self, x):
        return self.out(torch.cat([self.m(self.a(x)), self.b(x)], 1))


class Sppf(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.a, self.out = cba(c, c // 2, 1), cba(2 * c, c, 1)

    def forward(self, x):
        x = self.a(x)
        y1 = F.max_pool2d(x, 5, 1, 2)
        y2 = F.max_pool2d(y1, 5, 1, 2)
        return self.out(torch.cat([x, y1, y2, F.max_pool2d(y2, 5, 1, 2)], 1))


class YoloSilu(nn.Module):
    def __init__(self, c=16, classes=20):
        super().__init__()
        self.stem = cba(3, c, 6, 2)
        self.s2 = nn.Sequential(cba(c, 2 * c, 3, 2), Csp(2 * c, 2 * c))
        self.s3 = nn.Sequential(cba(2 * c, 4 * c, 3, 2), Csp(4 * c, 4 * c, 2))
        self.s4 = nn.Sequential(cba(4 * c, 8 * c, 3, 2), Csp(8 * c, 8 * c, 2), Sppf(8 * c))
        self.lat = cba(8 * c, 4 * c, 1)
        self.fuse = Csp(8 * c, 4 * c)
        self.head = nn.Conv2d(4 * c, 3 * (5 + classes), 1)

    def forward(self, x):
        p3 = self.s3(self.s2(self.stem(x)))
        p4 = self.s4(p3)
        u = F.interpolate(self.lat(p4), scale_factor=2.0, mode="nearest")
        return self.head(self.fuse(torch.cat([u, p3], 1)))


@model("yolo_silu_256")
def yolo_silu(path):
    torch.manual_seed(0)
    return image(256, 256), export_torch(seeded(YoloSilu()), image(256, 256), path)


@model("aside_efficientnet_b2")
def aside_efficientnet_b2(path):
    return IMAGE, export_torch(tv(torchvision.models.efficientnet_b2), IMAGE, path)


if __name__ == "__main__":
    zoo.main()
