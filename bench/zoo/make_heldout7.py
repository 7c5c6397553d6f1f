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

import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_models as zoo  # noqa: E402

zoo.MODELS.clear()
# The helpers, and (registered by the import) the transformer, MLP, speech and hand-built models.
from heldout7_parts import build, cbr, image  # noqa: E402

model, export_torch = zoo.model, zoo.export_torch
DIM_VALUES = {"batch": 1, "seq": 128, "frames": 200, "steps": 8}


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


if __name__ == "__main__":
    zoo.main_with_dim_values(DIM_VALUES)
