#!/usr/bin/python3
"""Builds a held-out set of image heads: networks whose convolutions have few output channels at
high resolution, the class of ESPCN's and style transfer's last layers (issue 20, session 13).

    /usr/bin/python3 bench/zoo/make_heldout_heads.py OUT [--only NAME,NAME]

Same format as the zoo (OUT/<name>.onnx, OUT/manifest.json, batch-1 inputs and torch references
under OUT/data): `bench/zoo/run.sh --zoo OUT --no-docs ...` times it against ONNX Runtime,
`bench/zoo/check.py --zoo OUT` checks it against torch. Kept aside and only measured: the
few-output-channel convolution path was tuned on ESPCN and single convolutions, not on these.

The models (hand-built, seeded): SRCNN (9x9 / 1x1 / 5x5 on a 256x256 luminance plane, one
output channel), FSRCNN (5x5 feature extraction, 1x1 shrink to 12, 3x3 mapping, PReLU, a 9x9
stride-3 ConvTranspose to one channel), an RGB refinement head (32 -> 3 at 512x512), a
monocular-depth decoder (nearest upsampling, skip concatenation, a 1-channel sigmoid output at
224x224), a dilated context head (3x3 convolutions with dilation 2, 4 and 6 on 64 channels, 21
classes, bilinear upsampling to 256x256), a binary segmentation head (one-channel mask at
224x224) and an ESRGAN-style x4 upsampler (two PixelShuffle stages, LeakyReLU, a 64 -> 3 output
at 256x256).
"""
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_models as zoo  # noqa: E402

zoo.MODELS.clear()
model, export_torch = zoo.model, zoo.export_torch


def image(size, channels=3):
    return [("image", "float32", ["batch", channels, size, size], {"kind": "uniform"})]


def build(net, specs, path):
    torch.manual_seed(0)
    return specs, export_torch(net, specs, path)


class Srcnn(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(1, 64, 9, padding=4), nn.ReLU(), nn.Conv2d(64, 32, 1), nn.ReLU(),
                                  nn.Conv2d(32, 1, 5, padding=2))

    def forward(self, x):
        return self.body(x)


@model("srcnn")
def srcnn(path):
    torch.manual_seed(0)
    return build(Srcnn(), image(256, 1), path)


class Fsrcnn(nn.Module):
    def __init__(self, scale=3):
        super().__init__()
        layers = [nn.Conv2d(1, 56, 5, padding=2), nn.PReLU(56), nn.Conv2d(56, 12, 1), nn.PReLU(12)]
        for _ in range(4):
            layers += [nn.Conv2d(12, 12, 3, padding=1), nn.PReLU(12)]
        layers += [nn.Conv2d(12, 56, 1), nn.PReLU(56)]
        self.body = nn.Sequential(*layers)
        self.up = nn.ConvTranspose2d(56, 1, 9, stride=scale, padding=4, output_padding=scale - 1)

    def forward(self, x):
        return self.up(self.body(x))


@model("fsrcnn")
def fsrcnn(path):
    torch.manual_seed(0)
    return build(Fsrcnn(), image(128, 1), path)


class RgbRefine(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(), nn.Conv2d(32, 32, 3, padding=1),
                                  nn.ReLU(), nn.Conv2d(32, 3, 3, padding=1))

    def forward(self, x):
        return x + self.body(x)


@model("rgb_refine_512")
def rgb_refine(path):
    torch.manual_seed(0)
    return build(RgbRefine(), image(512), path)


class DepthDecoder(nn.Module):
    """A small encoder, then a decoder with skips and a sigmoid depth map at full resolution."""

    def __init__(self):
        super().__init__()
        self.e1 = nn.Sequential(nn.Conv2d(3, 32, 3, stride=2, padding=1), nn.ReLU())
        self.e2 = nn.Sequential(nn.Conv2d(32, 64, 3, stride=2, padding=1), nn.ReLU())
        self.e3 = nn.Sequential(nn.Conv2d(64, 128, 3, stride=2, padding=1), nn.ReLU())
        self.d3 = nn.Sequential(nn.Conv2d(128 + 64, 64, 3, padding=1), nn.ELU())
        self.d2 = nn.Sequential(nn.Conv2d(64 + 32, 32, 3, padding=1), nn.ELU())
        self.d1 = nn.Sequential(nn.Conv2d(32, 16, 3, padding=1), nn.ELU())
        self.out = nn.Conv2d(16, 1, 3, padding=1)

    def forward(self, x):
        a = self.e1(x)
        b = self.e2(a)
        c = self.e3(b)
        y = self.d3(torch.cat([F.interpolate(c, scale_factor=2.0, mode="nearest"), b], 1))
        y = self.d2(torch.cat([F.interpolate(y, scale_factor=2.0, mode="nearest"), a], 1))
        y = self.d1(F.interpolate(y, scale_factor=2.0, mode="nearest"))
        return torch.sigmoid(self.out(y))


@model("depth_decoder")
def depth_decoder(path):
    torch.manual_seed(0)
    return build(DepthDecoder(), image(224), path)


class DilatedHead(nn.Module):
    def __init__(self, classes=21):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 32, 3, stride=2, padding=1), nn.ReLU(),
                                  nn.Conv2d(32, 64, 3, stride=2, padding=1), nn.ReLU())
        self.context = nn.Sequential(*[m for d in (2, 4, 6) for m in
                                       (nn.Conv2d(64, 64, 3, padding=d, dilation=d), nn.BatchNorm2d(64), nn.ReLU())])
        self.cls = nn.Conv2d(64, classes, 1)

    def forward(self, x):
        y = self.cls(self.context(self.stem(x)))
        return F.interpolate(y, size=x.shape[-2:], mode="bilinear", align_corners=False)


@model("dilated_head")
def dilated_head(path):
    torch.manual_seed(0)
    return build(DilatedHead(), image(256), path)


class MaskHead(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.Conv2d(16, 32, 3, padding=1),
                                  nn.ReLU(), nn.Conv2d(32, 1, 1))

    def forward(self, x):
        return torch.sigmoid(self.body(x))


@model("mask_head")
def mask_head(path):
    torch.manual_seed(0)
    return build(MaskHead(), image(224), path)


class EsrganUp(nn.Module):
    def __init__(self):
        super().__init__()
        self.head = nn.Conv2d(3, 64, 3, padding=1)
        self.body = nn.Sequential(nn.Conv2d(64, 64, 3, padding=1), nn.LeakyReLU(0.2), nn.Conv2d(64, 64, 3, padding=1))
        self.up = nn.Sequential(nn.Conv2d(64, 256, 3, padding=1), nn.PixelShuffle(2), nn.LeakyReLU(0.2),
                                nn.Conv2d(64, 256, 3, padding=1), nn.PixelShuffle(2), nn.LeakyReLU(0.2))
        self.out = nn.Sequential(nn.Conv2d(64, 64, 3, padding=1), nn.LeakyReLU(0.2), nn.Conv2d(64, 3, 3, padding=1))

    def forward(self, x):
        f = self.head(x)
        return self.out(self.up(f + self.body(f)))


@model("esrgan_up")
def esrgan_up(path):
    torch.manual_seed(0)
    return build(EsrganUp(), image(64), path)


if __name__ == "__main__":
    zoo.main()
