"""Part of the seventh held-out zoo (bench/zoo/make_heldout7.py, which documents the set and
builds it): the shared helpers, the vision transformers (PVT, LeViT, TimeSformer), the NeRF MLP,
the VAE decoder, DeepSpeech2 and the hand-built models (FNet over DFT, the STFT / mel front
end, the ConvLSTM over Scan). Importing it registers these models in make_models.MODELS.
"""
import math
import os
import sys

import numpy as np
import onnx
import torch
import torch.nn as nn
import torch.nn.functional as F
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_models as zoo  # noqa: E402

model, export_torch = zoo.model, zoo.export_torch
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
