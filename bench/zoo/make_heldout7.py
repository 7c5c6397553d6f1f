#!/usr/bin/python3
"""Builds the seventh held-out zoo (session 16, branch scout7): architecture classes none of the
other sets covers (generative convolution stacks, attention modules on ResNets, large-kernel
and pooling token mixers, detection heads with in-graph peak picking, spectral ops, recurrent
convolution over Scan, coordinate MLPs, video attention).

    /usr/bin/python3 bench/zoo/make_heldout7.py OUT [--only NAME,NAME]
    bench/zoo/run.py --zoo OUT --threads 1,2 --batches 1,8 --rounds 3 --no-docs

Same format as the zoo (make_models.write_zoo: OUT/<name>.onnx, OUT/manifest.json, batch-1
inputs and references under OUT/data). Models whose names start with "aside_" are variants
(other widths, depths, normalizations) the work on this set does not look at; they are measured
at the end, as a check that a fix holds for the class.

Torch 1.13 exports with seeded weights and non-trivial batch-norm statistics (opset 17):
- dcgan_gen: DCGAN generator (latent 1x1 -> 64x64, ConvTranspose k4 s2 p1, BatchNorm, ReLU, Tanh);
- pix2pix_unet: pix2pix U-Net generator on 128x128 (Conv k4 s2 p1, InstanceNorm, LeakyReLU,
  ConvTranspose k4 s2 p1, skip Concat, Tanh);
- stylegan_modconv: StyleGAN2-like synthesis at a fixed batch of 4: a mapping MLP, per-sample
  modulated and demodulated weights run as one grouped Conv over the batch (weights computed in
  the graph), noise injection, bilinear upsampling, toRGB skips;
- wavenet: dilated causal Conv1d (left Pad), tanh * sigmoid gates, residual and skip sums;
- cbam_resnet: ResNet basic blocks with CBAM (avg / max pooled channel MLP, a 7x7 spatial gate
  over the channel mean and max);
- sknet: selective-kernel units (3x3 and dilated 3x3 grouped branches, softmax over branches);
- replknet: RepLKNet-like stages (depthwise 31x31 .. 13x13 with a parallel 5x5 and a dilated
  branch, BatchNorm, 1x1 GELU FFN);
- van: Visual Attention Network (large-kernel attention: depthwise 5x5, depthwise 7x7 dilation 3,
  1x1, gating product; depthwise 3x3 in the MLP);
- poolformer: PoolFormer (AvgPool 3x3 minus identity as token mixer, GroupNorm(1), layer scale);
- pvt_sra: PVT stages with spatial-reduction attention (keys / values from a strided Conv and a
  LayerNorm) over 56x56 tokens;
- levit: LeViT-like (conv stem with Hardswish, attention with BatchNorm'd projections, learned
  attention biases, a subsampling attention block);
- centernet: CenterNet on a ResNet-18 trunk (three ConvTranspose upsamplings, MaxPool 3x3 peak
  picking, TopK 50 over the flattened heat map, GatherElements of sizes and offsets);
- dbnet: DBNet text detection (ResNet-18 FPN, probability and threshold heads through two
  ConvTranspose k2 s2, differentiable binarization);
- xception: Xception-like separable convolutions with strided residual 1x1s and max pooling;
- res2net: Res2Net bottlenecks (Split into 4 scales, hierarchical 3x3s, Concat);
- nerf_mlp: NeRF MLP over 1024 rays' samples (sin / cos positional encoding, skip Concat, density
  and view-dependent colour heads);
- vae_decoder: a latent-diffusion VAE decoder (GroupNorm, SiLU, mid-block pixel attention,
  nearest upsampling) from 4x32x32 latents to 128x128;
- deepspeech2: DeepSpeech2-like (2-D convolutions over a spectrogram with Hardtanh, a
  2-layer bidirectional GRU over a dynamic number of frames, log-softmax);
- timesformer: divided space-time attention on 8x112x112 clips (Conv3d patches, time attention
  over (batch x patches, frames), space attention over (batch x frames, patches));
- gated_inpaint: gated-convolution inpainting (image and mask in, ELU(feature) * sigmoid(gate),
  dilated gated convolutions, nearest upsampling, Tanh).
Hand-built with onnx.helper (no reference: run.py compares with ONNX Runtime):
- fnet_dft: FNet encoder whose token mixing is two ONNX DFTs (hidden, then sequence) and the real
  part, dynamic batch and sequence;
- stft_mel: an audio front end (opset-17 STFT with a Hann window, power spectrum,
  MelWeightMatrix, log) into a small CNN classifier;
- convlstm_scan: a ConvLSTM (gates from one Conv over Concat(x_t, h)) as a Scan over 8 frames.
Asides: aside_pix2pix_bn (BatchNorm and ReLU decoder on 256x256), aside_eca_resnet (ECA gates:
Conv1d over the pooled channels), aside_van_wide, aside_wavenet_wide (two stacks, 64 residual
channels), aside_dcgan_cifar (32x32, LeakyReLU, biased ConvTranspose), aside_poolformer_deep.
"""
import math
import os
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
model, export_torch = zoo.model, zoo.export_torch
DIM_VALUES = {"batch": 1, "seq": 128, "frames": 200, "steps": 8}
F32, I64 = TensorProto.FLOAT, TensorProto.INT64


def image(size, channels=3):
    return [("image", "float32", ["batch", channels, size, size], {"kind": "uniform"})]


def seeded(net, seed=0):
    """Seeds the weights' RNG first; non-trivial batch-norm statistics after construction."""
    g = torch.Generator().manual_seed(seed + 1)
    for m in net.modules():
        if isinstance(m, (nn.BatchNorm1d, nn.BatchNorm2d, nn.BatchNorm3d)):
            m.running_mean.copy_(torch.rand(m.num_features, generator=g) * 0.2 - 0.1)
            m.running_var.copy_(torch.rand(m.num_features, generator=g) * 0.5 + 0.75)
    return net


def build(ctor, specs, path, seed=0):
    torch.manual_seed(seed)
    return specs, export_torch(seeded(ctor(), seed), specs, path)


def cbr(cin, cout, k, stride=1, act=nn.ReLU, groups=1, dilation=1):
    pad = dilation * (k - 1) // 2
    return nn.Sequential(nn.Conv2d(cin, cout, k, stride, pad, dilation=dilation, groups=groups, bias=False),
                         nn.BatchNorm2d(cout), act())


# ---------------------------------------------------------------- generators

class DcganGen(nn.Module):
    def __init__(self, nz=100, ngf=64, layers=4, act=nn.ReLU, bias=False):
        super().__init__()
        mult = 2 ** (layers - 1)
        seq = [nn.ConvTranspose2d(nz, ngf * mult, 4, 1, 0, bias=bias), nn.BatchNorm2d(ngf * mult), act()]
        for i in range(layers - 1):
            c = ngf * mult // 2 ** i
            seq += [nn.ConvTranspose2d(c, c // 2, 4, 2, 1, bias=bias), nn.BatchNorm2d(c // 2), act()]
        seq += [nn.ConvTranspose2d(ngf * mult // 2 ** (layers - 1), 3, 4, 2, 1, bias=bias), nn.Tanh()]
        self.net = nn.Sequential(*seq)

    def forward(self, z):
        return self.net(z)


@model("dcgan_gen")
def dcgan_gen(path):
    specs = [("z", "float32", ["batch", 100, 1, 1], {"kind": "uniform"})]
    return build(lambda: DcganGen(), specs, path)


@model("aside_dcgan_cifar")
def aside_dcgan_cifar(path):
    specs = [("z", "float32", ["batch", 128, 1, 1], {"kind": "uniform"})]
    return build(lambda: DcganGen(128, 96, 3, lambda: nn.LeakyReLU(0.2), True), specs, path, 1)


class Pix2Pix(nn.Module):
    """U-Net generator: depth levels of Conv k4 s2 p1 down and ConvTranspose k4 s2 p1 up."""

    def __init__(self, depth=6, ngf=32, norm=nn.InstanceNorm2d, up_act=nn.ReLU, cap=256):
        super().__init__()
        chans = [min(ngf * 2 ** i, cap) for i in range(depth)]
        self.down = nn.ModuleList()
        cin = 3
        for i, c in enumerate(chans):
            layers = [nn.LeakyReLU(0.2)] if i else []
            layers.append(nn.Conv2d(cin, c, 4, 2, 1, bias=False))
            if 0 < i < depth - 1:
                layers.append(norm(c))
            self.down.append(nn.Sequential(*layers))
            cin = c
        self.up = nn.ModuleList()
        for i in reversed(range(depth)):
            cout = chans[i - 1] if i else 3
            cin_up = chans[i] * (1 if i == depth - 1 else 2)
            layers = [up_act(), nn.ConvTranspose2d(cin_up, cout, 4, 2, 1, bias=(i == 0))]
            layers.append(nn.Tanh() if i == 0 else norm(cout))
            self.up.append(nn.Sequential(*layers))

    def forward(self, x):
        skips = []
        for d in self.down:
            x = d(x)
            skips.append(x)
        skips.pop()
        for i, u in enumerate(self.up):
            x = u(x)
            if skips:
                x = torch.cat([x, skips.pop()], 1)
        return x


@model("pix2pix_unet")
def pix2pix_unet(path):
    return build(lambda: Pix2Pix(6, 32, lambda c: nn.InstanceNorm2d(c, affine=True)), image(128), path)


@model("aside_pix2pix_bn")
def aside_pix2pix_bn(path):
    return build(lambda: Pix2Pix(7, 24, nn.BatchNorm2d), image(256), path, 2)


STYLE_BATCH = 4


class ModConv(nn.Module):
    """StyleGAN2 modulated convolution: per-sample weights, demodulated, one grouped Conv."""

    def __init__(self, cin, cout, k, wdim, demod=True):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(cout, cin, k, k) / math.sqrt(cin * k * k))
        self.affine = nn.Linear(wdim, cin)
        self.demod, self.k, self.cin, self.cout = demod, k, cin, cout

    def forward(self, x, w):
        # The model's batch is fixed (BATCH): the grouped Conv's weight shape is a constant.
        b, c, (h, wd) = STYLE_BATCH, self.cin, x.shape[2:]
        s = self.affine(w) + 1
        wt = self.weight[None] * s[:, None, :, None, None]
        if self.demod:
            wt = wt * torch.rsqrt((wt * wt).sum([2, 3, 4]) + 1e-8)[:, :, None, None, None]
        out = F.conv2d(x.reshape(1, b * c, h, wd), wt.reshape(b * self.cout, c, self.k, self.k),
                       padding=self.k // 2, groups=b)
        return out.reshape(b, self.cout, h, wd)


class StyleGanSynth(nn.Module):
    def __init__(self, zdim=128, chans=(128, 128, 64, 32, 16)):
        super().__init__()
        self.mapping = nn.Sequential(*[m for _ in range(4) for m in (nn.Linear(zdim, zdim), nn.LeakyReLU(0.2))])
        self.const = nn.Parameter(torch.randn(1, chans[0], 4, 4))
        self.convs = nn.ModuleList()
        self.rgbs = nn.ModuleList()
        self.noise_w = nn.ParameterList()
        for i, c in enumerate(chans):
            cin = chans[i - 1] if i else chans[0]
            self.convs.append(nn.ModuleList([ModConv(cin, c, 3, zdim), ModConv(c, c, 3, zdim)]))
            self.rgbs.append(ModConv(c, 3, 1, zdim, demod=False))
            self.noise_w.append(nn.Parameter(torch.full((1, c, 1, 1), 0.1)))

    def forward(self, z, noise):
        w = self.mapping(z / torch.sqrt((z * z).mean(1, keepdim=True) + 1e-8))
        x = self.const.expand(STYLE_BATCH, -1, -1, -1)
        rgb = None
        for i, (convs, to_rgb) in enumerate(zip(self.convs, self.rgbs)):
            if i:
                x = F.interpolate(x, scale_factor=2.0, mode="bilinear", align_corners=False)
            for conv in convs:
                x = conv(x, w)
                n = F.interpolate(noise, size=x.shape[2:], mode="nearest")
                x = F.leaky_relu(x + self.noise_w[i] * n, 0.2)
            y = to_rgb(x, w)
            rgb = y if rgb is None else y + F.interpolate(rgb, scale_factor=2.0, mode="bilinear",
                                                         align_corners=False)
        return rgb


@model("stylegan_modconv")
def stylegan_modconv(path):
    specs = [("z", "float32", [STYLE_BATCH, 128], {"kind": "uniform"}),
             ("noise", "float32", [STYLE_BATCH, 1, 64, 64], {"kind": "uniform"})]
    return build(StyleGanSynth, specs, path)


class WaveNet(nn.Module):
    def __init__(self, res=32, skip=64, layers=10, stacks=1, classes=64):
        super().__init__()
        self.inp = nn.Conv1d(1, res, 1)
        self.dil = [2 ** i for i in range(layers)] * stacks
        self.filt = nn.ModuleList(nn.Conv1d(res, 2 * res, 2, dilation=d) for d in self.dil)
        self.res = nn.ModuleList(nn.Conv1d(res, res, 1) for _ in self.dil)
        self.skip = nn.ModuleList(nn.Conv1d(res, skip, 1) for _ in self.dil)
        self.out = nn.Sequential(nn.ReLU(), nn.Conv1d(skip, skip, 1), nn.ReLU(), nn.Conv1d(skip, classes, 1))

    def forward(self, x):
        x = self.inp(x)
        total = 0
        for d, f, r, s in zip(self.dil, self.filt, self.res, self.skip):
            y = f(F.pad(x, (d, 0)))
            a, b = y.chunk(2, 1)
            z = torch.tanh(a) * torch.sigmoid(b)
            total = total + s(z)
            x = x + r(z)
        return F.log_softmax(self.out(total), 1)


@model("wavenet")
def wavenet(path):
    specs = [("audio", "float32", ["batch", 1, 4000], {"kind": "uniform"})]
    return build(WaveNet, specs, path)


@model("aside_wavenet_wide")
def aside_wavenet_wide(path):
    specs = [("audio", "float32", ["batch", 1, 3000], {"kind": "uniform"})]
    return build(lambda: WaveNet(64, 128, 8, 2, 256), specs, path, 3)


# ---------------------------------------------------------------- attention modules on CNNs

class Cbam(nn.Module):
    def __init__(self, c, r=8):
        super().__init__()
        self.mlp = nn.Sequential(nn.Conv2d(c, c // r, 1), nn.ReLU(), nn.Conv2d(c // r, c, 1))
        self.spatial = nn.Conv2d(2, 1, 7, padding=3)

    def forward(self, x):
        gate = torch.sigmoid(self.mlp(F.adaptive_avg_pool2d(x, 1)) + self.mlp(F.adaptive_max_pool2d(x, 1)))
        x = x * gate
        s = torch.cat([x.mean(1, keepdim=True), x.amax(1, keepdim=True)], 1)
        return x * torch.sigmoid(self.spatial(s))


class Eca(nn.Module):
    def __init__(self, c, k=5):
        super().__init__()
        self.conv = nn.Conv1d(1, 1, k, padding=k // 2, bias=False)

    def forward(self, x):
        y = F.adaptive_avg_pool2d(x, 1).squeeze(-1).transpose(1, 2)
        return x * torch.sigmoid(self.conv(y).transpose(1, 2).unsqueeze(-1))


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride, gate):
        super().__init__()
        self.body = nn.Sequential(cbr(cin, cout, 3, stride), nn.Conv2d(cout, cout, 3, 1, 1, bias=False),
                                  nn.BatchNorm2d(cout))
        self.gate = gate(cout)
        self.short = (nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))
                      if stride != 1 or cin != cout else nn.Identity())

    def forward(self, x):
        return F.relu(self.gate(self.body(x)) + self.short(x))


class GatedResNet(nn.Module):
    def __init__(self, gate, widths=(64, 128, 256, 512), depth=2, classes=1000):
        super().__init__()
        self.stem = nn.Sequential(cbr(3, widths[0], 7, 2), nn.MaxPool2d(3, 2, 1))
        blocks, cin = [], widths[0]
        for i, c in enumerate(widths):
            for j in range(depth):
                blocks.append(BasicBlock(cin, c, 2 if j == 0 and i else 1, gate))
                cin = c
        self.blocks = nn.Sequential(*blocks)
        self.fc = nn.Linear(cin, classes)

    def forward(self, x):
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(self.blocks(self.stem(x)), 1), 1))


@model("cbam_resnet")
def cbam_resnet(path):
    return build(lambda: GatedResNet(Cbam), image(224), path)


@model("aside_eca_resnet")
def aside_eca_resnet(path):
    return build(lambda: GatedResNet(Eca, (48, 96, 192, 384), 3), image(224), path, 4)


class SkUnit(nn.Module):
    def __init__(self, cin, c, stride, groups=16, r=4):
        super().__init__()
        self.inp = cbr(cin, c, 1)
        self.b3 = cbr(c, c, 3, stride, groups=groups)
        self.b5 = cbr(c, c, 3, stride, groups=groups, dilation=2)
        self.fc = nn.Sequential(nn.Conv2d(c, c // r, 1, bias=False), nn.BatchNorm2d(c // r), nn.ReLU())
        self.attn = nn.Conv2d(c // r, 2 * c, 1)
        self.out = nn.Sequential(nn.Conv2d(c, 2 * c, 1, bias=False), nn.BatchNorm2d(2 * c))
        self.short = (nn.Sequential(nn.Conv2d(cin, 2 * c, 1, stride, bias=False), nn.BatchNorm2d(2 * c))
                      if stride != 1 or cin != 2 * c else nn.Identity())

    def forward(self, x):
        y = self.inp(x)
        a, b = self.b3(y), self.b5(y)
        z = self.attn(self.fc(F.adaptive_avg_pool2d(a + b, 1)))
        w = torch.softmax(z.reshape(z.shape[0], 2, -1, 1, 1), 1)
        y = a * w[:, 0] + b * w[:, 1]
        return F.relu(self.out(y) + self.short(x))


class SkNet(nn.Module):
    def __init__(self, widths=(64, 128, 256, 512), depths=(1, 2, 2, 1)):
        super().__init__()
        self.stem = nn.Sequential(cbr(3, 64, 7, 2), nn.MaxPool2d(3, 2, 1))
        blocks, cin = [], 64
        for i, (c, d) in enumerate(zip(widths, depths)):
            for j in range(d):
                blocks.append(SkUnit(cin, c, 2 if j == 0 and i else 1))
                cin = 2 * c
        self.blocks = nn.Sequential(*blocks)
        self.fc = nn.Linear(cin, 1000)

    def forward(self, x):
        return self.fc(self.blocks(self.stem(x)).mean((2, 3)))


@model("sknet")
def sknet(path):
    return build(SkNet, image(224), path)


# ---------------------------------------------------------------- large-kernel / pooling mixers

class RepLkBlock(nn.Module):
    def __init__(self, c, k):
        super().__init__()
        self.pre = nn.Sequential(nn.BatchNorm2d(c), nn.Conv2d(c, c, 1), nn.ReLU())
        self.large = nn.Sequential(nn.Conv2d(c, c, k, padding=k // 2, groups=c, bias=False), nn.BatchNorm2d(c))
        self.small = nn.Sequential(nn.Conv2d(c, c, 5, padding=2, groups=c, bias=False), nn.BatchNorm2d(c))
        self.dilated = nn.Sequential(nn.Conv2d(c, c, 3, padding=3, dilation=3, groups=c, bias=False),
                                     nn.BatchNorm2d(c))
        self.post = nn.Conv2d(c, c, 1)
        self.ffn = nn.Sequential(nn.BatchNorm2d(c), nn.Conv2d(c, 4 * c, 1), nn.GELU(), nn.Conv2d(4 * c, c, 1))

    def forward(self, x):
        y = self.pre(x)
        x = x + self.post(F.relu(self.large(y) + self.small(y) + self.dilated(y)))
        return x + self.ffn(x)


class RepLkNet(nn.Module):
    def __init__(self, widths=(32, 64, 128, 256), kernels=(31, 29, 27, 13)):
        super().__init__()
        self.stem = nn.Sequential(cbr(3, widths[0], 3, 2), cbr(widths[0], widths[0], 3, 1, groups=widths[0]),
                                  cbr(widths[0], widths[0], 3, 2, groups=widths[0]))
        stages = []
        for i, (c, k) in enumerate(zip(widths, kernels)):
            if i:
                stages.append(nn.Sequential(cbr(widths[i - 1], c, 1), cbr(c, c, 3, 2, groups=c)))
            stages.append(RepLkBlock(c, k))
        self.stages = nn.Sequential(*stages)
        self.fc = nn.Linear(widths[-1], 1000)

    def forward(self, x):
        return self.fc(self.stages(self.stem(x)).mean((2, 3)))


@model("replknet")
def replknet(path):
    return build(RepLkNet, image(224), path)


class Lka(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.dw = nn.Conv2d(c, c, 5, padding=2, groups=c)
        self.dwd = nn.Conv2d(c, c, 7, padding=9, groups=c, dilation=3)
        self.pw = nn.Conv2d(c, c, 1)

    def forward(self, x):
        return x * self.pw(self.dwd(self.dw(x)))


class VanBlock(nn.Module):
    def __init__(self, c, ratio=4):
        super().__init__()
        self.n1 = nn.BatchNorm2d(c)
        self.attn = nn.Sequential(nn.Conv2d(c, c, 1), nn.GELU(), Lka(c), nn.Conv2d(c, c, 1))
        self.n2 = nn.BatchNorm2d(c)
        h = c * ratio
        self.mlp = nn.Sequential(nn.Conv2d(c, h, 1), nn.Conv2d(h, h, 3, padding=1, groups=h), nn.GELU(),
                                 nn.Conv2d(h, c, 1))
        self.s1 = nn.Parameter(torch.full((c, 1, 1), 0.1))
        self.s2 = nn.Parameter(torch.full((c, 1, 1), 0.1))

    def forward(self, x):
        y = self.n1(x)
        x = x + self.s1 * self.attn(y)
        return x + self.s2 * self.mlp(self.n2(x))


class Van(nn.Module):
    def __init__(self, dims=(32, 64, 160, 256), depths=(2, 2, 3, 2)):
        super().__init__()
        layers, cin = [], 3
        for i, (c, d) in enumerate(zip(dims, depths)):
            k, s = (7, 4) if i == 0 else (3, 2)
            layers += [nn.Conv2d(cin, c, k, s, k // 2), nn.BatchNorm2d(c)] + [VanBlock(c) for _ in range(d)]
            layers.append(nn.Sequential())
            cin = c
        self.body = nn.Sequential(*layers)
        self.norm = nn.LayerNorm(cin)
        self.fc = nn.Linear(cin, 1000)

    def forward(self, x):
        return self.fc(self.norm(self.body(x).mean((2, 3))))


@model("van")
def van(path):
    return build(Van, image(224), path)


@model("aside_van_wide")
def aside_van_wide(path):
    return build(lambda: Van((64, 128, 320, 512), (1, 1, 2, 1)), image(192), path, 5)


class PoolBlock(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.n1, self.n2 = nn.GroupNorm(1, c), nn.GroupNorm(1, c)
        self.pool = nn.AvgPool2d(3, 1, 1, count_include_pad=False)
        self.mlp = nn.Sequential(nn.Conv2d(c, 4 * c, 1), nn.GELU(), nn.Conv2d(4 * c, c, 1))
        self.s1 = nn.Parameter(torch.full((c, 1, 1), 0.1))
        self.s2 = nn.Parameter(torch.full((c, 1, 1), 0.1))

    def forward(self, x):
        y = self.n1(x)
        x = x + self.s1 * (self.pool(y) - y)
        return x + self.s2 * self.mlp(self.n2(x))


class PoolFormer(nn.Module):
    def __init__(self, dims=(64, 128, 320, 512), depths=(2, 2, 6, 2)):
        super().__init__()
        layers, cin = [], 3
        for i, (c, d) in enumerate(zip(dims, depths)):
            k, s, p = (7, 4, 2) if i == 0 else (3, 2, 1)
            layers += [nn.Conv2d(cin, c, k, s, p)] + [PoolBlock(c) for _ in range(d)]
            cin = c
        self.body = nn.Sequential(*layers)
        self.norm = nn.GroupNorm(1, cin)
        self.fc = nn.Linear(cin, 1000)

    def forward(self, x):
        return self.fc(self.norm(self.body(x)).mean((2, 3)))


@model("poolformer")
def poolformer(path):
    return build(PoolFormer, image(224), path)


@model("aside_poolformer_deep")
def aside_poolformer_deep(path):
    return build(lambda: PoolFormer((48, 96, 192, 384), (3, 3, 9, 3)), image(224), path, 6)


# ---------------------------------------------------------------- vision transformers

class Sra(nn.Module):
    """Spatial-reduction attention: keys and values from a stride-`sr` Conv of the token grid."""

    def __init__(self, dim, heads, sr):
        super().__init__()
        self.h, self.sr = heads, sr
        self.q, self.kv, self.proj = nn.Linear(dim, dim), nn.Linear(dim, 2 * dim), nn.Linear(dim, dim)
        self.reduce = nn.Conv2d(dim, dim, sr, sr) if sr > 1 else None
        self.norm = nn.LayerNorm(dim)

    def forward(self, x, hw):
        b, n, c = x.shape
        q = self.q(x).reshape(b, n, self.h, c // self.h).transpose(1, 2)
        if self.reduce is not None:
            y = self.reduce(x.transpose(1, 2).reshape(b, c, hw, hw)).flatten(2).transpose(1, 2)
            y = self.norm(y)
        else:
            y = x
        kv = self.kv(y).reshape(b, -1, 2, self.h, c // self.h).permute(2, 0, 3, 1, 4)
        att = torch.softmax(q @ kv[0].transpose(-2, -1) * (c // self.h) ** -0.5, -1)
        return self.proj((att @ kv[1]).transpose(1, 2).reshape(b, n, c))


class PvtBlock(nn.Module):
    def __init__(self, dim, heads, sr):
        super().__init__()
        self.n1, self.n2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.attn = Sra(dim, heads, sr)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x, hw):
        x = x + self.attn(self.n1(x), hw)
        return x + self.mlp(self.n2(x))


class Pvt(nn.Module):
    def __init__(self, dims=(64, 128, 256), heads=(1, 2, 4), srs=(8, 4, 2), depths=(2, 2, 2)):
        super().__init__()
        self.embeds, self.stages, self.norms = nn.ModuleList(), nn.ModuleList(), nn.ModuleList()
        cin = 3
        for i, (c, h, sr, d) in enumerate(zip(dims, heads, srs, depths)):
            k = 4 if i == 0 else 2
            self.embeds.append(nn.Conv2d(cin, c, k, k))
            self.norms.append(nn.LayerNorm(c))
            self.stages.append(nn.ModuleList(PvtBlock(c, h, sr) for _ in range(d)))
            cin = c
        self.fc = nn.Linear(cin, 1000)

    def forward(self, x):
        b = x.shape[0]
        for embed, norm, blocks in zip(self.embeds, self.norms, self.stages):
            x = embed(x)
            hw = x.shape[-1]
            x = norm(x.flatten(2).transpose(1, 2))
            for blk in blocks:
                x = blk(x, hw)
            x = x.transpose(1, 2).reshape(b, -1, hw, hw)
        return self.fc(x.mean((2, 3)))


@model("pvt_sra")
def pvt_sra(path):
    return build(Pvt, image(224), path)


class BnLinear(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.lin, self.bn = nn.Linear(cin, cout, bias=False), nn.BatchNorm1d(cout)

    def forward(self, x):
        return self.bn(self.lin(x).flatten(0, 1)).reshape(x.shape[0], x.shape[1], -1)


class LevitAttn(nn.Module):
    def __init__(self, dim, out, heads, kd, res, stride=1):
        super().__init__()
        self.h, self.kd, self.stride, self.res = heads, kd, stride, res
        self.dv = 2 * kd if stride == 1 else 4 * kd
        self.q = BnLinear(dim, heads * kd)
        self.kv = BnLinear(dim, heads * (kd + self.dv))
        self.proj = nn.Sequential(nn.Hardswish(), BnLinear(heads * self.dv, out))
        rq = (res - 1) // stride + 1
        self.bias = nn.Parameter(torch.randn(heads, rq * rq, res * res) * 0.1)

    def forward(self, x):
        b, n, _ = x.shape
        kv = self.kv(x).reshape(b, n, self.h, self.kd + self.dv).transpose(1, 2)
        k, v = kv[..., :self.kd], kv[..., self.kd:]
        if self.stride > 1:
            x = x.reshape(b, self.res, self.res, -1)[:, ::self.stride, ::self.stride].reshape(b, -1, x.shape[-1])
        q = self.q(x).reshape(b, x.shape[1], self.h, self.kd).transpose(1, 2)
        att = torch.softmax(q @ k.transpose(-2, -1) * self.kd ** -0.5 + self.bias, -1)
        return self.proj((att @ v).transpose(1, 2).reshape(b, x.shape[1], -1))


class Levit(nn.Module):
    def __init__(self, dims=(128, 256), heads=(4, 8), res=14):
        super().__init__()
        c = dims[0]
        self.stem = nn.Sequential(cbr(3, c // 8, 3, 2, nn.Hardswish), cbr(c // 8, c // 4, 3, 2, nn.Hardswish),
                                  cbr(c // 4, c // 2, 3, 2, nn.Hardswish), cbr(c // 2, c, 3, 2, nn.Identity))
        mlp = lambda d: nn.Sequential(BnLinear(d, 2 * d), nn.Hardswish(), BnLinear(2 * d, d))  # noqa: E731
        self.a1 = nn.ModuleList([LevitAttn(c, c, heads[0], 16, res), LevitAttn(c, c, heads[0], 16, res)])
        self.m1 = nn.ModuleList([mlp(c), mlp(c)])
        self.down = LevitAttn(c, dims[1], heads[1], 16, res, 2)
        self.m_down = mlp(dims[1])
        r2 = (res - 1) // 2 + 1
        self.a2 = nn.ModuleList([LevitAttn(dims[1], dims[1], heads[1], 16, r2) for _ in range(2)])
        self.m2 = nn.ModuleList([mlp(dims[1]) for _ in range(2)])
        self.head = nn.Sequential(nn.BatchNorm1d(dims[1]), nn.Linear(dims[1], 1000))

    def forward(self, x):
        x = self.stem(x).flatten(2).transpose(1, 2)
        for a, m in zip(self.a1, self.m1):
            x = x + a(x)
            x = x + m(x)
        x = self.down(x)
        x = x + self.m_down(x)
        for a, m in zip(self.a2, self.m2):
            x = x + a(x)
            x = x + m(x)
        return self.head(x.mean(1))


@model("levit")
def levit(path):
    return build(Levit, image(224), path)


class DividedAttnBlock(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.h = heads
        self.nt, self.ns, self.nm = nn.LayerNorm(dim), nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.qkv_t, self.qkv_s = nn.Linear(dim, 3 * dim), nn.Linear(dim, 3 * dim)
        self.out_t, self.out_s = nn.Linear(dim, dim), nn.Linear(dim, dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def attend(self, x, qkv, out):
        b, n, c = x.shape
        q, k, v = qkv(x).reshape(b, n, 3, self.h, c // self.h).permute(2, 0, 3, 1, 4)
        att = torch.softmax(q @ k.transpose(-2, -1) * (c // self.h) ** -0.5, -1)
        return out((att @ v).transpose(1, 2).reshape(b, n, c))

    def forward(self, x):
        b, t, p, c = x.shape
        xt = x.transpose(1, 2).reshape(b * p, t, c)
        xt = xt + self.attend(self.nt(xt), self.qkv_t, self.out_t)
        x = xt.reshape(b, p, t, c).transpose(1, 2).reshape(b * t, p, c)
        x = x + self.attend(self.ns(x), self.qkv_s, self.out_s)
        x = x + self.mlp(self.nm(x))
        return x.reshape(b, t, p, c)


class TimeSformer(nn.Module):
    def __init__(self, dim=192, heads=3, depth=4, frames=8, patches=49):
        super().__init__()
        self.embed = nn.Conv3d(3, dim, (1, 16, 16), (1, 16, 16))
        self.pos = nn.Parameter(torch.randn(1, 1, patches, dim) * 0.02)
        self.time = nn.Parameter(torch.randn(1, frames, 1, dim) * 0.02)
        self.blocks = nn.Sequential(*[DividedAttnBlock(dim, heads) for _ in range(depth)])
        self.norm = nn.LayerNorm(dim)
        self.fc = nn.Linear(dim, 400)

    def forward(self, x):
        x = self.embed(x).flatten(3).permute(0, 2, 3, 1)
        x = self.blocks(x + self.pos + self.time)
        return self.fc(self.norm(x.mean((1, 2))))


@model("timesformer")
def timesformer(path):
    specs = [("clip", "float32", ["batch", 3, 8, 112, 112], {"kind": "uniform"})]
    return build(TimeSformer, specs, path)


# ---------------------------------------------------------------- detection heads

def resnet18_trunk():
    net = torchvision.models.resnet18(weights=None)
    return nn.Sequential(net.conv1, net.bn1, net.relu, net.maxpool), net.layer1, net.layer2, net.layer3, net.layer4


class CenterNet(nn.Module):
    def __init__(self, classes=20, k=50):
        super().__init__()
        self.stem, *self.layers = resnet18_trunk()
        self.layers = nn.Sequential(*self.layers)
        ups, cin = [], 512
        for c in (256, 128, 64):
            ups += [nn.Conv2d(cin, c, 3, 1, 1, bias=False), nn.BatchNorm2d(c), nn.ReLU(),
                    nn.ConvTranspose2d(c, c, 4, 2, 1, bias=False), nn.BatchNorm2d(c), nn.ReLU()]
            cin = c
        self.up = nn.Sequential(*ups)
        head = lambda o: nn.Sequential(nn.Conv2d(64, 64, 3, 1, 1), nn.ReLU(), nn.Conv2d(64, o, 1))  # noqa: E731
        self.heat, self.wh, self.reg = head(classes), head(2), head(2)
        self.k = k

    def forward(self, x):
        f = self.up(self.layers(self.stem(x)))
        heat = torch.sigmoid(self.heat(f))
        keep = (F.max_pool2d(heat, 3, 1, 1) == heat).float()
        heat = heat * keep
        b, c, h, w = heat.shape
        scores, idx = torch.topk(heat.reshape(b, -1), self.k)
        classes = torch.div(idx, h * w, rounding_mode="floor")
        pix = idx - classes * (h * w)
        wh = torch.gather(self.wh(f).reshape(b, 2, -1), 2, pix[:, None].expand(b, 2, self.k))
        reg = torch.gather(self.reg(f).reshape(b, 2, -1), 2, pix[:, None].expand(b, 2, self.k))
        ys = torch.div(pix, w, rounding_mode="floor").float() + reg[:, 1]
        xs = (pix % w).float() + reg[:, 0]
        boxes = torch.stack([xs - wh[:, 0] / 2, ys - wh[:, 1] / 2, xs + wh[:, 0] / 2, ys + wh[:, 1] / 2], -1)
        return scores, classes, boxes


@model("centernet")
def centernet(path):
    return build(CenterNet, image(256), path)


class DbNet(nn.Module):
    def __init__(self, inner=128, k=50.0):
        super().__init__()
        self.stem, self.l1, self.l2, self.l3, self.l4 = resnet18_trunk()
        self.lat = nn.ModuleList(nn.Conv2d(c, inner, 1, bias=False) for c in (64, 128, 256, 512))
        self.smooth = nn.ModuleList(nn.Conv2d(inner, inner // 4, 3, 1, 1, bias=False) for _ in range(4))
        head = lambda: nn.Sequential(  # noqa: E731
            nn.Conv2d(inner, inner // 4, 3, 1, 1, bias=False), nn.BatchNorm2d(inner // 4), nn.ReLU(),
            nn.ConvTranspose2d(inner // 4, inner // 4, 2, 2), nn.BatchNorm2d(inner // 4), nn.ReLU(),
            nn.ConvTranspose2d(inner // 4, 1, 2, 2), nn.Sigmoid())
        self.prob, self.thresh = head(), head()
        self.k = k

    def forward(self, x):
        c1 = self.l1(self.stem(x))
        c2 = self.l2(c1)
        c3 = self.l3(c2)
        c4 = self.l4(c3)
        p4 = self.lat[3](c4)
        p3 = self.lat[2](c3) + F.interpolate(p4, scale_factor=2.0, mode="nearest")
        p2 = self.lat[1](c2) + F.interpolate(p3, scale_factor=2.0, mode="nearest")
        p1 = self.lat[0](c1) + F.interpolate(p2, scale_factor=2.0, mode="nearest")
        outs = [self.smooth[0](p1)]
        for i, p in enumerate((p2, p3, p4), 1):
            outs.append(F.interpolate(self.smooth[i](p), scale_factor=float(2 ** i), mode="nearest"))
        fuse = torch.cat(outs, 1)
        prob, thresh = self.prob(fuse), self.thresh(fuse)
        return torch.cat([prob, thresh, torch.reciprocal(1 + torch.exp(-self.k * (prob - thresh)))], 1)


@model("dbnet")
def dbnet(path):
    return build(DbNet, image(320), path)


# ---------------------------------------------------------------- CNN variants

class SepConv(nn.Sequential):
    def __init__(self, cin, cout, relu_first=True):
        layers = [nn.ReLU()] if relu_first else []
        layers += [nn.Conv2d(cin, cin, 3, 1, 1, groups=cin, bias=False), nn.Conv2d(cin, cout, 1, bias=False),
                   nn.BatchNorm2d(cout)]
        super().__init__(*layers)


class XceptionBlock(nn.Module):
    def __init__(self, cin, cout, reps, stride):
        super().__init__()
        layers = [SepConv(cin if i == 0 else cout, cout) for i in range(reps)]
        if stride > 1:
            layers.append(nn.MaxPool2d(3, stride, 1))
        self.body = nn.Sequential(*layers)
        self.skip = (nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))
                     if stride > 1 or cin != cout else nn.Identity())

    def forward(self, x):
        return self.body(x) + self.skip(x)


class Xception(nn.Module):
    def __init__(self, mid=256, middle=4):
        super().__init__()
        self.entry = nn.Sequential(cbr(3, 32, 3, 2), cbr(32, 64, 3), XceptionBlock(64, 128, 2, 2),
                                   XceptionBlock(128, mid, 2, 2), XceptionBlock(mid, mid, 2, 2))
        self.middle = nn.Sequential(*[XceptionBlock(mid, mid, 3, 1) for _ in range(middle)])
        self.exit = nn.Sequential(XceptionBlock(mid, 384, 2, 2), SepConv(384, 512), nn.ReLU(),
                                  SepConv(512, 768, False), nn.ReLU())
        self.fc = nn.Linear(768, 1000)

    def forward(self, x):
        return self.fc(self.exit(self.middle(self.entry(x))).mean((2, 3)))


@model("xception")
def xception(path):
    return build(Xception, image(224), path)


class Res2Block(nn.Module):
    def __init__(self, cin, planes, stride, width=26, scale=4):
        super().__init__()
        self.width, self.scale, self.stride = width, scale, stride
        self.inp = cbr(cin, width * scale, 1)
        self.convs = nn.ModuleList(cbr(width, width, 3, stride) for _ in range(scale - 1))
        self.pool = nn.AvgPool2d(3, stride, 1) if stride > 1 else None
        self.out = nn.Sequential(nn.Conv2d(width * scale, planes * 4, 1, bias=False), nn.BatchNorm2d(planes * 4))
        self.short = (nn.Sequential(nn.Conv2d(cin, planes * 4, 1, stride, bias=False), nn.BatchNorm2d(planes * 4))
                      if stride != 1 or cin != planes * 4 else nn.Identity())

    def forward(self, x):
        parts = torch.split(self.inp(x), self.width, 1)
        ys, y = [], None
        for i, conv in enumerate(self.convs):
            y = conv(parts[i] if i == 0 or self.stride > 1 else parts[i] + y)
            ys.append(y)
        ys.append(self.pool(parts[-1]) if self.pool is not None else parts[-1])
        return F.relu(self.out(torch.cat(ys, 1)) + self.short(x))


class Res2Net(nn.Module):
    def __init__(self, depths=(2, 2, 2, 2)):
        super().__init__()
        self.stem = nn.Sequential(cbr(3, 32, 3, 2), cbr(32, 32, 3), cbr(32, 64, 3), nn.MaxPool2d(3, 2, 1))
        blocks, cin = [], 64
        for i, d in enumerate(depths):
            planes = 64 * 2 ** i
            for j in range(d):
                blocks.append(Res2Block(cin, planes, 2 if j == 0 and i else 1, 26 * 2 ** i))
                cin = planes * 4
        self.blocks = nn.Sequential(*blocks)
        self.fc = nn.Linear(cin, 1000)

    def forward(self, x):
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(self.blocks(self.stem(x)), 1), 1))


@model("res2net")
def res2net(path):
    return build(Res2Net, image(224), path)


class GatedConv(nn.Module):
    def __init__(self, cin, cout, k, stride=1, dilation=1, act=True):
        super().__init__()
        self.conv = nn.Conv2d(cin, 2 * cout, k, stride, dilation * (k - 1) // 2, dilation=dilation)
        self.act = act

    def forward(self, x):
        f, g = self.conv(x).chunk(2, 1)
        return (F.elu(f) if self.act else f) * torch.sigmoid(g)


class GatedInpaint(nn.Module):
    def __init__(self, c=32):
        super().__init__()
        self.enc = nn.Sequential(GatedConv(4, c, 5), GatedConv(c, 2 * c, 3, 2), GatedConv(2 * c, 2 * c, 3),
                                 GatedConv(2 * c, 4 * c, 3, 2), GatedConv(4 * c, 4 * c, 3))
        self.dil = nn.Sequential(*[GatedConv(4 * c, 4 * c, 3, 1, d) for d in (2, 4, 8, 16)])
        self.dec1 = nn.Sequential(GatedConv(4 * c, 4 * c, 3), GatedConv(4 * c, 4 * c, 3))
        self.dec2 = GatedConv(4 * c, 2 * c, 3)
        self.dec3 = nn.Sequential(GatedConv(2 * c, c, 3), GatedConv(c, c // 2, 3))
        self.out = nn.Conv2d(c // 2, 3, 3, 1, 1)

    def forward(self, img, mask):
        x = torch.cat([img * (1 - mask), mask], 1)
        x = self.dec1(self.dil(self.enc(x)))
        x = self.dec2(F.interpolate(x, scale_factor=2.0, mode="nearest"))
        x = self.dec3(F.interpolate(x, scale_factor=2.0, mode="nearest"))
        return torch.tanh(self.out(x)) * mask + img * (1 - mask)


@model("gated_inpaint")
def gated_inpaint(path):
    specs = [("image", "float32", ["batch", 3, 256, 256], {"kind": "uniform"}),
             ("mask", "float32", ["batch", 1, 256, 256], {"kind": "int", "high": 2})]
    return build(GatedInpaint, specs, path)


# ---------------------------------------------------------------- coordinate MLP, VAE, speech

class Nerf(nn.Module):
    def __init__(self, width=256, depth=8, freqs=10, dir_freqs=4):
        super().__init__()
        self.freqs = nn.Parameter(2.0 ** torch.arange(freqs) * math.pi, requires_grad=False)
        self.dfreqs = nn.Parameter(2.0 ** torch.arange(dir_freqs) * math.pi, requires_grad=False)
        pin, din = 3 + 6 * freqs, 3 + 6 * dir_freqs
        self.layers = nn.ModuleList()
        for i in range(depth):
            cin = pin if i == 0 else width + (pin if i == depth // 2 else 0)
            self.layers.append(nn.Linear(cin, width))
        self.sigma = nn.Linear(width, 1)
        self.feat = nn.Linear(width, width)
        self.rgb = nn.Sequential(nn.Linear(width + din, width // 2), nn.ReLU(), nn.Linear(width // 2, 3), nn.Sigmoid())
        self.skip = depth // 2

    @staticmethod
    def encode(x, freqs):
        y = (x[..., None] * freqs).flatten(-2)
        return torch.cat([x, torch.sin(y), torch.cos(y)], -1)

    def forward(self, pts, dirs):
        p = self.encode(pts, self.freqs)
        h = p
        for i, lin in enumerate(self.layers):
            if i == self.skip:
                h = torch.cat([h, p], -1)
            h = F.relu(lin(h))
        sigma = F.softplus(self.sigma(h))
        d = dirs / torch.linalg.norm(dirs, dim=-1, keepdim=True)
        rgb = self.rgb(torch.cat([self.feat(h), self.encode(d, self.dfreqs)], -1))
        return torch.cat([rgb, sigma], -1)


@model("nerf_mlp")
def nerf_mlp(path):
    specs = [("pts", "float32", ["batch", 1024, 3], {"kind": "uniform"}),
             ("dirs", "float32", ["batch", 1024, 3], {"kind": "uniform"})]
    return build(Nerf, specs, path)


class VaeRes(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.body = nn.Sequential(nn.GroupNorm(32, cin), nn.SiLU(), nn.Conv2d(cin, cout, 3, 1, 1),
                                  nn.GroupNorm(32, cout), nn.SiLU(), nn.Conv2d(cout, cout, 3, 1, 1))
        self.short = nn.Conv2d(cin, cout, 1) if cin != cout else nn.Identity()

    def forward(self, x):
        return self.short(x) + self.body(x)


class VaeAttn(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.norm = nn.GroupNorm(32, c)
        self.qkv = nn.Conv2d(c, 3 * c, 1)
        self.out = nn.Conv2d(c, c, 1)

    def forward(self, x):
        b, c, h, w = x.shape
        q, k, v = self.qkv(self.norm(x)).reshape(b, 3, c, h * w).unbind(1)
        att = torch.softmax(q.transpose(1, 2) @ k * c ** -0.5, -1)
        return x + self.out((v @ att.transpose(1, 2)).reshape(b, c, h, w))


class VaeDecoder(nn.Module):
    def __init__(self, chans=(128, 64, 32)):
        super().__init__()
        self.inp = nn.Conv2d(4, chans[0], 3, 1, 1)
        self.mid = nn.Sequential(VaeRes(chans[0], chans[0]), VaeAttn(chans[0]), VaeRes(chans[0], chans[0]))
        ups, cin = [], chans[0]
        for i, c in enumerate(chans):
            ups += [VaeRes(cin, c), VaeRes(c, c)]
            if i < len(chans) - 1:
                ups += [nn.Upsample(scale_factor=2.0, mode="nearest"), nn.Conv2d(c, c, 3, 1, 1)]
            cin = c
        self.up = nn.Sequential(*ups)
        self.out = nn.Sequential(nn.GroupNorm(32, cin), nn.SiLU(), nn.Conv2d(cin, 3, 3, 1, 1))

    def forward(self, z):
        return self.out(self.up(self.mid(self.inp(z / 0.18215))))


@model("vae_decoder")
def vae_decoder(path):
    specs = [("latent", "float32", ["batch", 4, 32, 32], {"kind": "uniform"})]
    return build(VaeDecoder, specs, path)


class DeepSpeech2(nn.Module):
    def __init__(self, freq=81, hidden=256, layers=2, classes=29):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv2d(1, 32, (41, 11), (2, 2), (20, 5), bias=False), nn.BatchNorm2d(32),
                                  nn.Hardtanh(0, 20),
                                  nn.Conv2d(32, 32, (21, 11), (2, 1), (10, 5), bias=False), nn.BatchNorm2d(32),
                                  nn.Hardtanh(0, 20))
        f = (freq + 1) // 2
        f = (f + 1) // 2
        self.rnn = nn.GRU(32 * f, hidden, layers, bidirectional=True)
        self.fc = nn.Sequential(nn.LayerNorm(2 * hidden), nn.Linear(2 * hidden, classes, bias=False))

    def forward(self, spec):
        x = self.conv(spec)
        b, c, f, t = x.shape
        x = x.reshape(b, c * f, t).permute(2, 0, 1)
        y, _ = self.rnn(x)
        return F.log_softmax(self.fc(y), -1)


@model("deepspeech2")
def deepspeech2(path):
    specs = [("spec", "float32", ["batch", 1, 81, "frames"], {"kind": "uniform"})]
    torch.manual_seed(0)
    net = seeded(DeepSpeech2())
    ref = export_torch(net, specs, path)
    return specs, ref


# ---------------------------------------------------------------- hand-built: DFT, STFT, Scan

def const(name, arr):
    return numpy_helper.from_array(np.asarray(arr), name)


def save(graph, path):
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="ged-zoo")
    m.ir_version = 8
    onnx.checker.check_model(m)
    onnx.save(m, path)


@model("fnet_dft")
def fnet_dft(path):
    """FNet: x + Re(DFT_seq(DFT_hidden(x))), LayerNorm, FFN (GELU as Erf), LayerNorm; 4 layers."""
    rng = np.random.default_rng(11)
    d, ff, layers = 256, 1024, 4
    vi = helper.make_tensor_value_info
    inits = [const("ax_last", np.array([-1], np.int64)), const("zero", np.array([0], np.int64)),
             const("one", np.array([1], np.int64)), const("half", np.float32(0.5)),
             const("one_f", np.float32(1.0)), const("rsqrt2", np.float32(1 / math.sqrt(2)))]
    nodes = []
    cur = "x"
    for i in range(layers):
        p = "l%d_" % i
        inits += [const(p + "g1", (1 + 0.1 * rng.standard_normal(d)).astype(np.float32)),
                  const(p + "b1", (0.1 * rng.standard_normal(d)).astype(np.float32)),
                  const(p + "g2", (1 + 0.1 * rng.standard_normal(d)).astype(np.float32)),
                  const(p + "b2", (0.1 * rng.standard_normal(d)).astype(np.float32)),
                  const(p + "w1", (rng.standard_normal((d, ff)) / math.sqrt(d)).astype(np.float32)),
                  const(p + "c1", (0.02 * rng.standard_normal(ff)).astype(np.float32)),
                  const(p + "w2", (rng.standard_normal((ff, d)) / math.sqrt(ff)).astype(np.float32)),
                  const(p + "c2", (0.02 * rng.standard_normal(d)).astype(np.float32))]
        nodes += [
            helper.make_node("Unsqueeze", [cur, "ax_last"], [p + "re"]),
            helper.make_node("DFT", [p + "re"], [p + "f_hidden"], axis=2),
            helper.make_node("DFT", [p + "f_hidden"], [p + "f_both"], axis=1),
            helper.make_node("Slice", [p + "f_both", "zero", "one", "ax_last"], [p + "real4"]),
            helper.make_node("Squeeze", [p + "real4", "ax_last"], [p + "mix"]),
            helper.make_node("Add", [cur, p + "mix"], [p + "r1"]),
            helper.make_node("LayerNormalization", [p + "r1", p + "g1", p + "b1"], [p + "n1"], axis=-1),
            helper.make_node("MatMul", [p + "n1", p + "w1"], [p + "m1"]),
            helper.make_node("Add", [p + "m1", p + "c1"], [p + "a1"]),
            helper.make_node("Mul", [p + "a1", "rsqrt2"], [p + "e0"]),
            helper.make_node("Erf", [p + "e0"], [p + "e1"]),
            helper.make_node("Add", [p + "e1", "one_f"], [p + "e2"]),
            helper.make_node("Mul", [p + "a1", p + "e2"], [p + "e3"]),
            helper.make_node("Mul", [p + "e3", "half"], [p + "gelu"]),
            helper.make_node("MatMul", [p + "gelu", p + "w2"], [p + "m2"]),
            helper.make_node("Add", [p + "m2", p + "c2"], [p + "a2"]),
            helper.make_node("Add", [p + "n1", p + "a2"], [p + "r2"]),
            helper.make_node("LayerNormalization", [p + "r2", p + "g2", p + "b2"], [p + "out"], axis=-1)]
        cur = p + "out"
    nodes.append(helper.make_node("ReduceMean", [cur], ["pooled"], axes=[1], keepdims=0))
    graph = helper.make_graph(nodes, "fnet_dft", [vi("x", F32, ["batch", "seq", d])],
                              [vi("pooled", F32, ["batch", d]), vi(cur, F32, ["batch", "seq", d])], inits)
    save(graph, path)
    return [("x", "float32", ["batch", "seq", d], {"kind": "uniform"})], None


@model("stft_mel")
def stft_mel(path):
    """STFT (512-point frames, hop 160, Hann window) -> power -> 64 mel bins -> log -> CNN."""
    rng = np.random.default_rng(12)
    vi = helper.make_tensor_value_info
    n_fft, hop, mels, samples = 512, 160, 64, 16000
    w = lambda name, shape, s: const(name, (rng.standard_normal(shape) * s).astype(np.float32))  # noqa: E731
    inits = [const("hop", np.array(hop, np.int64)), const("ax_last", np.array([-1], np.int64)),
             const("ax1", np.array([1], np.int64)), const("n_mels", np.array(mels, np.int64)),
             const("n_fft", np.array(n_fft, np.int64)), const("rate", np.array(16000, np.int64)),
             const("f_lo", np.float32(20.0)), const("f_hi", np.float32(8000.0)),
             const("n_win", np.array(n_fft, np.int64)), const("eps", np.float32(1e-6)),
             w("c1", [32, 1, 3, 3], 0.3), w("c2", [64, 32, 3, 3], 0.06), w("c3", [128, 64, 3, 3], 0.04),
             w("cb1", [32], 0.1), w("cb2", [64], 0.1), w("cb3", [128], 0.1), w("fc", [128, 35], 0.1),
             w("fcb", [35], 0.1)]
    nodes = [
        helper.make_node("Unsqueeze", ["audio", "ax_last"], ["sig"]),
        helper.make_node("HannWindow", ["n_win"], ["window"], periodic=1),
        helper.make_node("STFT", ["sig", "hop", "window"], ["spec"], onesided=1),
        helper.make_node("Mul", ["spec", "spec"], ["sq"]),
        helper.make_node("ReduceSum", ["sq", "ax_last"], ["power"], keepdims=0),
        helper.make_node("MelWeightMatrix", ["n_mels", "n_fft", "rate", "f_lo", "f_hi"], ["melw"]),
        helper.make_node("MatMul", ["power", "melw"], ["mel"]),
        helper.make_node("Add", ["mel", "eps"], ["mel_eps"]),
        helper.make_node("Log", ["mel_eps"], ["logmel"]),
        helper.make_node("Unsqueeze", ["logmel", "ax1"], ["img"]),
    ]
    cur = "img"
    for i, c in enumerate(("c1", "c2", "c3")):
        nodes += [helper.make_node("Conv", [cur, c, "cb%d" % (i + 1)], ["conv%d" % i], pads=[1, 1, 1, 1]),
                  helper.make_node("Relu", ["conv%d" % i], ["relu%d" % i]),
                  helper.make_node("MaxPool", ["relu%d" % i], ["pool%d" % i], kernel_shape=[2, 2], strides=[2, 2])]
        cur = "pool%d" % i
    nodes += [helper.make_node("GlobalAveragePool", [cur], ["gap"]),
              helper.make_node("Flatten", ["gap"], ["flat"]),
              helper.make_node("Gemm", ["flat", "fc", "fcb"], ["logits"])]
    graph = helper.make_graph(nodes, "stft_mel", [vi("audio", F32, ["batch", samples])],
                              [vi("logits", F32, ["batch", 35]), vi("logmel", F32, ["batch", None, mels])], inits)
    save(graph, path)
    return [("audio", "float32", ["batch", samples], {"kind": "uniform"})], None


@model("convlstm_scan")
def convlstm_scan(path):
    """ConvLSTM (hidden 32, 3x3 gates over Concat(x_t, h)) as a Scan over [steps, batch, 8, 32, 32]."""
    rng = np.random.default_rng(13)
    vi = helper.make_tensor_value_info
    cin, hid, hw = 8, 32, 32
    body = helper.make_graph(
        [helper.make_node("Concat", ["x_t", "h_in"], ["xh"], axis=1),
         helper.make_node("Conv", ["xh", "Wg", "bg"], ["gates"], pads=[1, 1, 1, 1]),
         helper.make_node("Split", ["gates", "split4"], ["gi", "gf", "go", "gg"], axis=1),
         helper.make_node("Sigmoid", ["gi"], ["i"]),
         helper.make_node("Sigmoid", ["gf"], ["f"]),
         helper.make_node("Sigmoid", ["go"], ["o"]),
         helper.make_node("Tanh", ["gg"], ["g"]),
         helper.make_node("Mul", ["f", "c_in"], ["fc"]),
         helper.make_node("Mul", ["i", "g"], ["ig"]),
         helper.make_node("Add", ["fc", "ig"], ["c_out"]),
         helper.make_node("Tanh", ["c_out"], ["tc"]),
         helper.make_node("Mul", ["o", "tc"], ["h_out"]),
         helper.make_node("Identity", ["h_out"], ["y_t"])],
        "body", [vi("h_in", F32, [None, hid, hw, hw]), vi("c_in", F32, [None, hid, hw, hw]),
                 vi("x_t", F32, [None, cin, hw, hw])],
        [vi("h_out", F32, [None, hid, hw, hw]), vi("c_out", F32, [None, hid, hw, hw]),
         vi("y_t", F32, [None, hid, hw, hw])])
    nodes = [
        helper.make_node("Shape", ["x"], ["xs"]),
        helper.make_node("Gather", ["xs", "one"], ["nb"], axis=0),
        helper.make_node("Concat", ["nb", "state_tail"], ["state_shape"], axis=0),
        helper.make_node("ConstantOfShape", ["state_shape"], ["zeros"],
                         value=helper.make_tensor("v", F32, [1], [0.0])),
        helper.make_node("Scan", ["zeros", "zeros", "x"], ["h", "c", "ys"], body=body, num_scan_inputs=1),
        helper.make_node("Conv", ["h", "Wo", "bo"], ["out"], pads=[1, 1, 1, 1]),
        helper.make_node("Sigmoid", ["out"], ["pred"]),
    ]
    inits = [const("one", np.array([1], np.int64)), const("state_tail", np.array([hid, hw, hw], np.int64)),
             const("split4", np.array([hid] * 4, np.int64)),
             const("Wg", (rng.standard_normal((4 * hid, cin + hid, 3, 3)) * 0.05).astype(np.float32)),
             const("bg", (rng.standard_normal(4 * hid) * 0.1).astype(np.float32)),
             const("Wo", (rng.standard_normal((cin, hid, 3, 3)) * 0.05).astype(np.float32)),
             const("bo", np.zeros(cin, np.float32))]
    graph = helper.make_graph(nodes, "convlstm_scan", [vi("x", F32, ["steps", "batch", cin, hw, hw])],
                              [vi("pred", F32, ["batch", cin, hw, hw]), vi("ys", F32, ["steps", "batch", hid, hw, hw])],
                              inits)
    save(graph, path)
    return [("x", "float32", ["steps", "batch", cin, hw, hw], {"kind": "uniform"})], None


if __name__ == "__main__":
    zoo.main_with_dim_values(DIM_VALUES)
