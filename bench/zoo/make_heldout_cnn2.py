#!/usr/bin/python3
"""Builds a held-out CNN zoo (session 14, branch vision2): convolutional classes and input
shapes no other set covers.

    /usr/bin/python3 bench/zoo/make_heldout_cnn2.py OUT [--only NAME,NAME]
    bench/zoo/run.sh --zoo OUT --threads 1,2 --batches 1,8 --rounds 1 --no-docs

Same format as the zoo (OUT/<name>.onnx, OUT/manifest.json, batch-1 inputs and torch
references under OUT/data). Kept aside and only measured: a change should hold for the
class, not for these instances. The two models whose names start with "aside_" are not
looked at while working on the others; they are run at the end as a check.

The models, torch 1.13 exports with seeded weights and non-trivial batch-norm statistics:
torchvision's resnet34 (basic blocks, four stages), mobilenet_v2 at width 0.5 (narrow
depthwise stages, 8-16 channel projections), a grouped-convolution net (ResNeXt-style
bottlenecks with 32 groups of 4-8 channels and wide 1x1s, no torchvision counterpart at
this width), an Inception-v1-style net whose "5x5" branches really are 5x5 (torchvision's
GoogLeNet uses 3x3 there) with 3x3 max-pool projections, a MobileNetV3-style net with
squeeze-excite and hard-swish on non-square 192x320 images, and M5, a 1-D convolutional
audio classifier on raw 16 kHz waveforms (kernel 80 stride 4, BatchNorm1d, MaxPool1d,
global average over time). Asides: an SE-ResNeXt (grouped 3x3 plus squeeze-excite with
sigmoid gates) and a deeper, wider 1-D audio net with dilated convolutions.
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


def seeded(net, seed=0):
    """Non-trivial BatchNorm1d/2d statistics (make_models.tv covers 2-D only)."""
    g = torch.Generator().manual_seed(seed + 1)
    for m in net.modules():
        if isinstance(m, (nn.BatchNorm1d, nn.BatchNorm2d)):
            m.running_mean.copy_(torch.rand(m.num_features, generator=g) * 0.2 - 0.1)
            m.running_var.copy_(torch.rand(m.num_features, generator=g) * 0.5 + 0.75)
    return net


def cbr(cin, cout, k, stride=1, groups=1, dilation=1, act=nn.ReLU):
    pad = dilation * (k - 1) // 2
    return nn.Sequential(nn.Conv2d(cin, cout, k, stride, pad, dilation=dilation, groups=groups, bias=False),
                         nn.BatchNorm2d(cout), act())


@model("resnet34")
def resnet34(path):
    return IMAGE, export_torch(tv(torchvision.models.resnet34), IMAGE, path)


@model("mobilenet_v2_w050")
def mobilenet_v2_w050(path):
    return IMAGE, export_torch(tv(torchvision.models.mobilenet_v2, width_mult=0.5), IMAGE, path)


# ------------------------------------------------------------ grouped convolutions

class SE(nn.Module):
    def __init__(self, c, r=16, gate=nn.Sigmoid):
        super().__init__()
        self.fc1 = nn.Conv2d(c, max(8, c // r), 1)
        self.fc2 = nn.Conv2d(max(8, c // r), c, 1)
        self.gate = gate()

    def forward(self, x):
        s = F.adaptive_avg_pool2d(x, 1)
        return x * self.gate(self.fc2(F.relu(self.fc1(s))))


class GroupedBottleneck(nn.Module):
    def __init__(self, cin, width, cout, stride, groups, se=False):
        super().__init__()
        self.body = nn.Sequential(cbr(cin, width, 1), cbr(width, width, 3, stride, groups=groups),
                                  nn.Conv2d(width, cout, 1, bias=False), nn.BatchNorm2d(cout))
        self.se = SE(cout) if se else nn.Identity()
        self.short = (nn.Identity() if stride == 1 and cin == cout else
                      nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout)))

    def forward(self, x):
        return F.relu(self.se(self.body(x)) + self.short(x))


class GroupedNet(nn.Module):
    """ResNeXt-style: stages of (1x1, grouped 3x3, 1x1) with 32 groups."""

    def __init__(self, stages=((128, 256, 2), (256, 512, 2), (512, 1024, 2)), groups=32, se=False,
                 classes=100):
        super().__init__()
        layers = [cbr(3, 64, 7, 2), nn.MaxPool2d(3, 2, 1)]
        cin = 64
        for i, (width, cout, blocks) in enumerate(stages):
            for b in range(blocks):
                layers.append(GroupedBottleneck(cin, width, cout, 2 if b == 0 and i > 0 else 1, groups, se))
                cin = cout
        self.features = nn.Sequential(*layers)
        self.fc = nn.Linear(cin, classes)

    def forward(self, x):
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(self.features(x), 1), 1))


@model("grouped_net")
def grouped_net(path):
    torch.manual_seed(0)
    return IMAGE, export_torch(seeded(GroupedNet()), IMAGE, path)


@model("aside_se_resnext")
def aside_se_resnext(path):
    torch.manual_seed(3)
    net = seeded(GroupedNet(stages=((96, 192, 1), (192, 384, 2), (384, 768, 2), (768, 1536, 1)), se=True), 3)
    return IMAGE, export_torch(net, IMAGE, path)


# ------------------------------------------------------------ inception with 5x5

class Inception(nn.Module):
    def __init__(self, cin, c1, c3r, c3, c5r, c5, cp):
        super().__init__()
        self.b1 = cbr(cin, c1, 1)
        self.b3 = nn.Sequential(cbr(cin, c3r, 1), cbr(c3r, c3, 3))
        self.b5 = nn.Sequential(cbr(cin, c5r, 1), cbr(c5r, c5, 5))
        self.bp = nn.Sequential(nn.MaxPool2d(3, 1, 1), cbr(cin, cp, 1))

    def forward(self, x):
        return torch.cat([self.b1(x), self.b3(x), self.b5(x), self.bp(x)], 1)


class InceptionNet(nn.Module):
    def __init__(self, classes=100):
        super().__init__()
        self.stem = nn.Sequential(cbr(3, 64, 7, 2), nn.MaxPool2d(3, 2, 1), cbr(64, 64, 1), cbr(64, 192, 3),
                                  nn.MaxPool2d(3, 2, 1))
        self.a = nn.Sequential(Inception(192, 64, 96, 128, 16, 32, 32), Inception(256, 128, 128, 192, 32, 96, 64),
                               nn.MaxPool2d(3, 2, 1))
        self.b = nn.Sequential(Inception(480, 192, 96, 208, 16, 48, 64), Inception(512, 160, 112, 224, 24, 64, 64),
                               nn.MaxPool2d(3, 2, 1))
        self.c = Inception(512, 256, 160, 320, 32, 128, 128)
        self.fc = nn.Linear(832, classes)

    def forward(self, x):
        x = self.c(self.b(self.a(self.stem(x))))
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


@model("inception_5x5")
def inception_5x5(path):
    torch.manual_seed(0)
    return IMAGE, export_torch(seeded(InceptionNet()), IMAGE, path)


# ------------------------------------------------------------ non-square images

class InvertedResidual(nn.Module):
    def __init__(self, cin, exp, cout, k, stride, se, act):
        super().__init__()
        layers = [] if exp == cin else [cbr(cin, exp, 1, act=act)]
        layers += [cbr(exp, exp, k, stride, groups=exp, act=act)]
        if se:
            layers.append(SE(exp, 4, nn.Hardsigmoid))
        layers += [nn.Conv2d(exp, cout, 1, bias=False), nn.BatchNorm2d(cout)]
        self.body = nn.Sequential(*layers)
        self.res = stride == 1 and cin == cout

    def forward(self, x):
        y = self.body(x)
        return x + y if self.res else y


class MobileWide(nn.Module):
    """A MobileNetV3-style net for 192x320 (height x width) frames."""

    def __init__(self, classes=10):
        super().__init__()
        hs, re = nn.Hardswish, nn.ReLU
        cfg = [(16, 16, 16, 3, 1, False, re), (16, 64, 24, 3, 2, False, re), (24, 72, 24, 3, 1, False, re),
               (24, 72, 40, 5, 2, True, re), (40, 120, 40, 5, 1, True, re), (40, 240, 80, 3, 2, False, hs),
               (80, 200, 80, 3, 1, False, hs), (80, 480, 112, 3, 1, True, hs), (112, 672, 160, 5, 2, True, hs),
               (160, 960, 160, 5, 1, True, hs)]
        layers = [cbr(3, 16, 3, 2, act=hs)]
        layers += [InvertedResidual(*c) for c in cfg]
        layers.append(cbr(160, 960, 1, act=hs))
        self.features = nn.Sequential(*layers)
        self.head = nn.Sequential(nn.Linear(960, 1280), nn.Hardswish(), nn.Linear(1280, classes))

    def forward(self, x):
        return self.head(torch.flatten(F.adaptive_avg_pool2d(self.features(x), 1), 1))


WIDE = [("image", "float32", ["batch", 3, 192, 320], {"kind": "uniform"})]


@model("mobile_wide_192x320")
def mobile_wide(path):
    torch.manual_seed(0)
    return WIDE, export_torch(seeded(MobileWide()), WIDE, path)


# ------------------------------------------------------------ 1-D audio

class M5(nn.Module):
    """M5 (Dai et al. 2017) on raw waveforms."""

    def __init__(self, classes=35, c=64):
        super().__init__()

        def block(cin, cout, k, stride=1):
            return nn.Sequential(nn.Conv1d(cin, cout, k, stride, padding=k // 2 if stride == 1 else 0),
                                 nn.BatchNorm1d(cout), nn.ReLU(), nn.MaxPool1d(4))
        self.net = nn.Sequential(block(1, c, 80, 4), block(c, c, 3), block(c, 2 * c, 3), block(2 * c, 2 * c, 3))
        self.fc = nn.Linear(2 * c, classes)

    def forward(self, x):
        return F.log_softmax(self.fc(self.net(x).mean(dim=2)), dim=1)


class DilatedAudio(nn.Module):
    def __init__(self, classes=35, c=128, layers=8):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv1d(1, c, 160, 8, padding=76), nn.BatchNorm1d(c), nn.ReLU())
        self.blocks = nn.ModuleList(nn.Sequential(nn.Conv1d(c, c, 3, padding=2 ** (i % 4), dilation=2 ** (i % 4)),
                                                  nn.BatchNorm1d(c), nn.ReLU()) for i in range(layers))
        self.fc = nn.Linear(2 * c, classes)

    def forward(self, x):
        x = self.stem(x)
        for b in self.blocks:
            x = x + b(x)
        return self.fc(torch.cat([x.mean(dim=2), x.amax(dim=2)], 1))


AUDIO = [("audio", "float32", ["batch", 1, 16000], {"kind": "uniform"})]


@model("m5_audio")
def m5_audio(path):
    torch.manual_seed(0)
    return AUDIO, export_torch(seeded(M5()), AUDIO, path)


@model("aside_dilated_audio")
def aside_dilated_audio(path):
    torch.manual_seed(5)
    return AUDIO, export_torch(seeded(DilatedAudio(), 5), AUDIO, path)


if __name__ == "__main__":
    zoo.main()
