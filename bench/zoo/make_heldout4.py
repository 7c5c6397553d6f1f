#!/usr/bin/python3
"""Builds the fourth held-out zoo: model classes none of the other sets covers.

    /usr/bin/python3 bench/zoo/make_heldout4.py OUT [--only NAME,NAME]
    bench/zoo/run.sh --zoo OUT --threads 1,2 --batches 1,8 --rounds 3 --no-docs

Same format as the zoo (make_models.write_zoo: OUT/<name>.onnx, OUT/manifest.json,
batch-1 inputs and torch references under OUT/data), so run.sh times it against ONNX
Runtime and check.py checks it against torch. Kept aside and only measured: a change
should hold for the class, not for these instances. The models whose names start with
"aside_" are variants of the others (other widths, depths and block kinds) that the
work on this set does not look at; they are run at the end, as a check that a fix
holds for the class.

The models, torch 1.13 exports with seeded weights: a diffusion UNet block (GroupNorm,
SiLU, self-attention over pixels, a sinusoidal timestep embedding computed in the graph,
nearest Resize), a YOLOv8-style detector (C2f blocks through Split, SPPF max pooling,
nearest upsampling, the decode head: DFL softmax, anchor points, Sigmoid, Slice, Concat),
PointNet (conv1d, max over points) and DGCNN (pairwise distances, TopK k-NN, neighbour
Gather, edge convolutions, max over neighbours), a message-passing GNN (index_add_ and
index_put_ with accumulate: ScatterElements / ScatterND with reduction), MLP-Mixer
(token mixing through Transposes), an ESRGAN-like super-resolution net (residual-in-
residual dense blocks, LeakyReLU, PixelShuffle), an EmbeddingBag recommender, a DETR-like
detector (ResNet trunk, transformer encoder / decoder with learned queries), a Whisper-
like audio encoder (conv1d + GELU, sinusoidal positions, pre-norm transformer), BERT with
an attention_mask input (the Cast / Sub / Mul / Where mask path), a classic U-Net
(ConvTranspose2d, skip Concat) and torchvision's wide_resnet50_2 and vgg16.
"""
import math
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
DIM_VALUES = {"batch": 1, "seq": 64, "nodes": 2000, "edges": 10000, "frames": 1000}


def image(size, channels=3):
    return [("image", "float32", ["batch", channels, size, size], {"kind": "uniform"})]


# ---------------------------------------------------------------- diffusion UNet block

def timestep_embedding(t, dim):
    half = dim // 2
    freqs = torch.exp(-math.log(10000.0) * torch.arange(half, dtype=torch.float32) / half)
    args = t[:, None] * 1000.0 * freqs[None]
    return torch.cat([torch.cos(args), torch.sin(args)], dim=1)


class ResBlock(nn.Module):
    def __init__(self, cin, cout, tdim, groups=8):
        super().__init__()
        self.n1, self.c1 = nn.GroupNorm(groups, cin), nn.Conv2d(cin, cout, 3, padding=1)
        self.t = nn.Linear(tdim, cout)
        self.n2, self.c2 = nn.GroupNorm(groups, cout), nn.Conv2d(cout, cout, 3, padding=1)
        self.skip = nn.Conv2d(cin, cout, 1) if cin != cout else nn.Identity()

    def forward(self, x, temb):
        h = self.c1(F.silu(self.n1(x)))
        h = h + self.t(F.silu(temb))[:, :, None, None]
        h = self.c2(F.silu(self.n2(h)))
        return self.skip(x) + h


class AttnBlock(nn.Module):
    def __init__(self, c, heads, groups=8):
        super().__init__()
        self.heads = heads
        self.norm, self.qkv, self.proj = nn.GroupNorm(groups, c), nn.Conv2d(c, 3 * c, 1), nn.Conv2d(c, c, 1)

    def forward(self, x):
        b, c, h, w = x.shape
        q, k, v = self.qkv(self.norm(x)).reshape(b, 3, self.heads, c // self.heads, h * w).unbind(1)
        att = torch.softmax(torch.einsum("bhdi,bhdj->bhij", q, k) / math.sqrt(c // self.heads), dim=-1)
        out = torch.einsum("bhij,bhdj->bhdi", att, v).reshape(b, c, h, w)
        return x + self.proj(out)


class UNetSmall(nn.Module):
    """Two resolution levels of a latent-diffusion UNet: res blocks with the timestep
    embedding, attention at the lower level, nearest x2 upsampling, skip Concat."""

    def __init__(self, cin=4, c=64, tdim=128, heads=4, groups=8):
        super().__init__()
        self.tdim = tdim
        self.temb = nn.Sequential(nn.Linear(tdim, 4 * tdim), nn.SiLU(), nn.Linear(4 * tdim, 4 * tdim))
        self.inp = nn.Conv2d(cin, c, 3, padding=1)
        self.d1 = ResBlock(c, c, 4 * tdim, groups)
        self.down = nn.Conv2d(c, c, 3, stride=2, padding=1)
        self.d2, self.a2 = ResBlock(c, 2 * c, 4 * tdim, groups), AttnBlock(2 * c, heads, groups)
        self.m1, self.ma = ResBlock(2 * c, 2 * c, 4 * tdim, groups), AttnBlock(2 * c, heads, groups)
        self.u2, self.ua = ResBlock(4 * c, 2 * c, 4 * tdim, groups), AttnBlock(2 * c, heads, groups)
        self.upc = nn.Conv2d(2 * c, 2 * c, 3, padding=1)
        self.u1 = ResBlock(3 * c, c, 4 * tdim, groups)
        self.out_norm, self.out = nn.GroupNorm(groups, c), nn.Conv2d(c, cin, 3, padding=1)

    def forward(self, x, t):
        temb = self.temb(timestep_embedding(t, self.tdim))
        h1 = self.d1(self.inp(x), temb)
        h2 = self.a2(self.d2(self.down(h1), temb))
        m = self.ma(self.m1(h2, temb))
        u = self.ua(self.u2(torch.cat([m, h2], 1), temb))
        u = self.upc(F.interpolate(u, scale_factor=2.0, mode="nearest"))
        u = self.u1(torch.cat([u, h1], 1), temb)
        return self.out(F.silu(self.out_norm(u)))


def unet_specs(size, ch=4):
    return [("latent", "float32", ["batch", ch, size, size], {"kind": "uniform"}),
            ("t", "float32", ["batch"], {"kind": "uniform"})]


@model("unet_diffusion")
def unet_diffusion(path):
    torch.manual_seed(0)
    return unet_specs(32), export_torch(UNetSmall(), unet_specs(32), path)


@model("aside_unet_diffusion_wide")
def aside_unet_diffusion(path):
    torch.manual_seed(1)
    return unet_specs(24), export_torch(UNetSmall(c=96, heads=8, groups=32), unet_specs(24), path)


# ---------------------------------------------------------------- YOLOv8-style detector

def conv_bn_silu(cin, cout, k=1, s=1):
    return nn.Sequential(nn.Conv2d(cin, cout, k, s, k // 2, bias=False), nn.BatchNorm2d(cout), nn.SiLU())


class Bottleneck(nn.Module):
    def __init__(self, c, shortcut=True):
        super().__init__()
        self.cv1, self.cv2, self.add = conv_bn_silu(c, c, 3), conv_bn_silu(c, c, 3), shortcut

    def forward(self, x):
        y = self.cv2(self.cv1(x))
        return x + y if self.add else y


class C2f(nn.Module):
    def __init__(self, cin, cout, n=1, shortcut=True):
        super().__init__()
        self.c = cout // 2
        self.cv1, self.cv2 = conv_bn_silu(cin, 2 * self.c), conv_bn_silu((2 + n) * self.c, cout)
        self.m = nn.ModuleList(Bottleneck(self.c, shortcut) for _ in range(n))

    def forward(self, x):
        y = list(self.cv1(x).split((self.c, self.c), 1))
        for m in self.m:
            y.append(m(y[-1]))
        return self.cv2(torch.cat(y, 1))


class C3(nn.Module):
    """YOLOv5's block: two 1x1 branches, bottlenecks on one, Concat, 1x1."""

    def __init__(self, cin, cout, n=1, shortcut=True):
        super().__init__()
        c = cout // 2
        self.cv1, self.cv2, self.cv3 = conv_bn_silu(cin, c), conv_bn_silu(cin, c), conv_bn_silu(2 * c, cout)
        self.m = nn.Sequential(*(Bottleneck(c, shortcut) for _ in range(n)))

    def forward(self, x):
        return self.cv3(torch.cat([self.m(self.cv1(x)), self.cv2(x)], 1))


class SPPF(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.cv1, self.cv2 = conv_bn_silu(cin, cin // 2), conv_bn_silu(cin * 2, cout)
        self.m = nn.MaxPool2d(5, 1, 2)

    def forward(self, x):
        x = self.cv1(x)
        y1 = self.m(x)
        y2 = self.m(y1)
        return self.cv2(torch.cat([x, y1, y2, self.m(y2)], 1))


class Yolo(nn.Module):
    """YOLOv8n-like (or v5 with block=C3): backbone to stride 32, PAN neck, anchor-free
    decode head (DFL over 16 bins, anchor points, strides, class Sigmoid)."""

    def __init__(self, w=(16, 32, 64, 128, 256), nc=80, block=C2f, reg=16):
        super().__init__()
        self.nc, self.reg = nc, reg
        self.stem = nn.Sequential(conv_bn_silu(3, w[0], 3, 2), conv_bn_silu(w[0], w[1], 3, 2), block(w[1], w[1]))
        self.p3 = nn.Sequential(conv_bn_silu(w[1], w[2], 3, 2), block(w[2], w[2], 2))
        self.p4 = nn.Sequential(conv_bn_silu(w[2], w[3], 3, 2), block(w[3], w[3], 2))
        self.p5 = nn.Sequential(conv_bn_silu(w[3], w[4], 3, 2), block(w[4], w[4]), SPPF(w[4], w[4]))
        self.n4 = block(w[4] + w[3], w[3], shortcut=False)
        self.n3 = block(w[3] + w[2], w[2], shortcut=False)
        self.d3, self.o4 = conv_bn_silu(w[2], w[2], 3, 2), block(w[2] + w[3], w[3], shortcut=False)
        self.d4, self.o5 = conv_bn_silu(w[3], w[3], 3, 2), block(w[3] + w[4], w[4], shortcut=False)
        self.box = nn.ModuleList(nn.Sequential(conv_bn_silu(c, 64, 3), conv_bn_silu(64, 64, 3), nn.Conv2d(64, 4 * reg, 1))
                                 for c in (w[2], w[3], w[4]))
        self.cls = nn.ModuleList(nn.Sequential(conv_bn_silu(c, 80, 3), conv_bn_silu(80, 80, 3), nn.Conv2d(80, nc, 1))
                                 for c in (w[2], w[3], w[4]))
        self.register_buffer("proj", torch.arange(reg, dtype=torch.float32).view(1, reg, 1, 1))

    def forward(self, x):
        p3 = self.p3(self.stem(x))
        p4 = self.p4(p3)
        p5 = self.p5(p4)
        up = lambda t: F.interpolate(t, scale_factor=2.0, mode="nearest")  # noqa: E731
        n4 = self.n4(torch.cat([up(p5), p4], 1))
        n3 = self.n3(torch.cat([up(n4), p3], 1))
        o4 = self.o4(torch.cat([self.d3(n3), n4], 1))
        o5 = self.o5(torch.cat([self.d4(o4), p5], 1))
        b = x.shape[0]
        boxes, scores = [], []
        for i, (f, stride) in enumerate(((n3, 8), (o4, 16), (o5, 32))):
            h, w = f.shape[2], f.shape[3]
            d = self.box[i](f).view(b, 4, self.reg, h * w).transpose(1, 2)  # b, reg, 4, hw
            dist = (torch.softmax(d, dim=1) * self.proj.view(1, self.reg, 1, 1)).sum(1)  # b, 4, hw
            ys, xs = torch.meshgrid(torch.arange(h, dtype=torch.float32) + 0.5,
                                    torch.arange(w, dtype=torch.float32) + 0.5, indexing="ij")
            anchor = torch.stack([xs.reshape(-1), ys.reshape(-1)], 0).unsqueeze(0)  # 1, 2, hw
            lt, rb = dist[:, :2], dist[:, 2:]
            xy = (anchor + (rb - lt) / 2) * stride
            wh = (lt + rb) * stride
            boxes.append(torch.cat([xy, wh], 1))
            scores.append(torch.sigmoid(self.cls[i](f).view(b, self.nc, h * w)))
        return torch.cat([torch.cat(boxes, 2), torch.cat(scores, 2)], 1)


@model("yolov8_like")
def yolov8_like(path):
    torch.manual_seed(0)
    net = tv(lambda weights=None: Yolo())
    return image(320), export_torch(net, image(320), path)


@model("aside_yolov5_like")
def aside_yolov5_like(path):
    torch.manual_seed(1)
    net = tv(lambda weights=None: Yolo(w=(24, 48, 96, 192, 384), block=C3))
    return image(256), export_torch(net, image(256), path)


# ---------------------------------------------------------------- point clouds

class PointNet(nn.Module):
    """PointNet classifier: shared MLP as conv1d + BatchNorm1d, max over points."""

    def __init__(self, classes=40):
        super().__init__()
        dims = (3, 64, 64, 128, 1024)
        layers = []
        for a, b in zip(dims, dims[1:]):
            layers += [nn.Conv1d(a, b, 1), nn.BatchNorm1d(b), nn.ReLU()]
        self.mlp = nn.Sequential(*layers)
        self.head = nn.Sequential(nn.Linear(1024, 512), nn.BatchNorm1d(512), nn.ReLU(), nn.Linear(512, 256),
                                  nn.ReLU(), nn.Linear(256, classes))

    def forward(self, x):
        return self.head(self.mlp(x).max(dim=2)[0])


def points(n=1024):
    return [("points", "float32", ["batch", 3, n], {"kind": "uniform"})]


@model("pointnet")
def pointnet(path):
    torch.manual_seed(0)
    net = tv(lambda weights=None: PointNet())
    return points(), export_torch(net, points(), path)


def knn_features(x, k):
    """x [b, c, n] -> edge features [b, 2c, n, k]: (neighbour - centre, centre)."""
    b, c, n = x.shape
    inner = -2 * torch.matmul(x.transpose(2, 1), x)
    xx = (x * x).sum(dim=1, keepdim=True)
    dist = -xx - inner - xx.transpose(2, 1)
    idx = dist.topk(k=k, dim=-1)[1]  # b, n, k
    base = torch.arange(b).view(-1, 1, 1) * n
    idx = (idx + base).view(-1)
    xt = x.transpose(2, 1).reshape(b * n, c)
    nb = xt[idx, :].view(b, n, k, c)
    centre = xt.view(b, n, 1, c).expand(b, n, k, c)
    return torch.cat([nb - centre, centre], dim=3).permute(0, 3, 1, 2)


class Dgcnn(nn.Module):
    def __init__(self, k=16, classes=40, widths=(64, 64, 128), emb=512):
        super().__init__()
        self.k = k
        cin, self.edges = 3, nn.ModuleList()
        for w in widths:
            self.edges.append(nn.Sequential(nn.Conv2d(2 * cin, w, 1, bias=False), nn.BatchNorm2d(w),
                                            nn.LeakyReLU(0.2)))
            cin = w
        self.fuse = nn.Sequential(nn.Conv1d(sum(widths), emb, 1, bias=False), nn.BatchNorm1d(emb), nn.LeakyReLU(0.2))
        self.head = nn.Sequential(nn.Linear(2 * emb, 256), nn.LeakyReLU(0.2), nn.Linear(256, classes))

    def forward(self, x):
        feats = []
        for e in self.edges:
            x = e(knn_features(x, self.k)).max(dim=-1)[0]
            feats.append(x)
        f = self.fuse(torch.cat(feats, 1))
        return self.head(torch.cat([f.max(dim=2)[0], f.mean(dim=2)], 1))


@model("dgcnn")
def dgcnn(path):
    torch.manual_seed(0)
    net = tv(lambda weights=None: Dgcnn())
    return points(512), export_torch(net, points(512), path)


@model("aside_dgcnn_k20")
def aside_dgcnn(path):
    torch.manual_seed(1)
    net = tv(lambda weights=None: Dgcnn(k=20, widths=(64, 64, 128, 256), emb=1024))
    return points(768), export_torch(net, points(768), path)


# ---------------------------------------------------------------- GNN message passing

class Gnn(nn.Module):
    """GIN / GCN-like message passing: messages gathered along edges and summed into their
    target nodes, mean over the in-degree. With scatter=True the sums are scatter_add_
    (ScatterElements with reduction add) and the degree scatter_add_ of ones; otherwise
    index_add_ and index_put_(accumulate=True), which torch 1.13 exports as a
    ScatterElements / ScatterND without reduction into zeros plus an Add (exact only
    without repeated targets; ORT and ged agree on it, torch does not)."""

    def __init__(self, fin=32, hidden=128, layers=3, classes=16, scatter=True):
        super().__init__()
        self.scatter, self.hidden = scatter, hidden
        self.inp = nn.Linear(fin, hidden)
        self.msg = nn.ModuleList(nn.Linear(hidden, hidden) for _ in range(layers))
        self.upd = nn.ModuleList(nn.Sequential(nn.Linear(2 * hidden, hidden), nn.ReLU(), nn.Linear(hidden, hidden))
                                 for _ in range(layers))
        self.out = nn.Linear(hidden, classes)

    def forward(self, x, edges):
        src, dst = edges[0], edges[1]
        n = x.shape[0]
        h = F.relu(self.inp(x))
        ones = torch.ones_like(dst, dtype=torch.float32)
        if self.scatter:
            deg = torch.zeros(n, dtype=torch.float32).scatter_add_(0, dst, ones)
        else:
            deg = torch.zeros(n, dtype=torch.float32).index_put_((dst,), ones, accumulate=True)
        inv = 1.0 / deg.clamp(min=1.0)
        for msg, upd in zip(self.msg, self.upd):
            m = F.relu(msg(h))[src]
            if self.scatter:
                agg = torch.zeros_like(h).scatter_add_(0, dst[:, None].expand(-1, self.hidden), m)
            else:
                agg = torch.zeros_like(h).index_add_(0, dst, m)
            agg = agg * inv[:, None]
            h = h + upd(torch.cat([h, agg], 1))
        return self.out(h)


def gnn_specs(fin):
    return [("x", "float32", ["nodes", fin], {"kind": "uniform"}),
            ("edges", "int64", [2, "edges"], {"kind": "int", "high": DIM_VALUES["nodes"]})]


@model("gnn_mpnn")
def gnn_mpnn(path):
    torch.manual_seed(0)
    return gnn_specs(32), export_torch(Gnn(), gnn_specs(32), path)


@model("gnn_index_add")
def gnn_index_add(path):
    torch.manual_seed(0)
    return gnn_specs(32), export_torch(Gnn(scatter=False), gnn_specs(32), path)


@model("aside_gnn_deep")
def aside_gnn(path):
    torch.manual_seed(1)
    return gnn_specs(64), export_torch(Gnn(fin=64, hidden=96, layers=5), gnn_specs(64), path)


# ---------------------------------------------------------------- MLP-Mixer

class MixerBlock(nn.Module):
    def __init__(self, tokens, dim, tok_hidden, ch_hidden):
        super().__init__()
        self.n1, self.n2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.tok = nn.Sequential(nn.Linear(tokens, tok_hidden), nn.GELU(), nn.Linear(tok_hidden, tokens))
        self.ch = nn.Sequential(nn.Linear(dim, ch_hidden), nn.GELU(), nn.Linear(ch_hidden, dim))

    def forward(self, x):
        x = x + self.tok(self.n1(x).transpose(1, 2)).transpose(1, 2)
        return x + self.ch(self.n2(x))


class Mixer(nn.Module):
    def __init__(self, size=224, patch=16, dim=384, depth=8, classes=1000):
        super().__init__()
        tokens = (size // patch) ** 2
        self.stem = nn.Conv2d(3, dim, patch, patch)
        self.blocks = nn.Sequential(*(MixerBlock(tokens, dim, dim // 2, 4 * dim) for _ in range(depth)))
        self.norm, self.head = nn.LayerNorm(dim), nn.Linear(dim, classes)

    def forward(self, x):
        x = self.stem(x).flatten(2).transpose(1, 2)
        return self.head(self.norm(self.blocks(x)).mean(dim=1))


@model("mlp_mixer")
def mlp_mixer(path):
    torch.manual_seed(0)
    return IMAGE, export_torch(Mixer(), IMAGE, path)


# ---------------------------------------------------------------- ESRGAN-like

class DenseBlock(nn.Module):
    def __init__(self, c, g):
        super().__init__()
        self.convs = nn.ModuleList(nn.Conv2d(c + i * g, g if i < 4 else c, 3, padding=1) for i in range(5))

    def forward(self, x):
        feats = [x]
        for i, conv in enumerate(self.convs):
            y = conv(torch.cat(feats, 1))
            if i < 4:
                feats.append(F.leaky_relu(y, 0.2))
        return x + 0.2 * y


class Rrdb(nn.Module):
    def __init__(self, c, g):
        super().__init__()
        self.blocks = nn.Sequential(DenseBlock(c, g), DenseBlock(c, g), DenseBlock(c, g))

    def forward(self, x):
        return x + 0.2 * self.blocks(x)


class Esrgan(nn.Module):
    """ESRGAN's generator at small width: RRDB trunk, x4 by two PixelShuffle stages."""

    def __init__(self, c=32, g=16, blocks=3):
        super().__init__()
        self.first = nn.Conv2d(3, c, 3, padding=1)
        self.trunk = nn.Sequential(*(Rrdb(c, g) for _ in range(blocks)))
        self.trunk_conv = nn.Conv2d(c, c, 3, padding=1)
        self.up = nn.Sequential(nn.Conv2d(c, 4 * c, 3, padding=1), nn.PixelShuffle(2), nn.LeakyReLU(0.2),
                                nn.Conv2d(c, 4 * c, 3, padding=1), nn.PixelShuffle(2), nn.LeakyReLU(0.2))
        self.hr, self.last = nn.Conv2d(c, c, 3, padding=1), nn.Conv2d(c, 3, 3, padding=1)

    def forward(self, x):
        f = self.first(x)
        f = f + self.trunk_conv(self.trunk(f))
        return self.last(F.leaky_relu(self.hr(self.up(f)), 0.2))


@model("esrgan_small")
def esrgan_small(path):
    torch.manual_seed(0)
    return image(64), export_torch(Esrgan(), image(64), path)


# ---------------------------------------------------------------- EmbeddingBag recommender

class BagRec(nn.Module):
    """Wide-and-deep-like recommender: per-field EmbeddingBag (sum / mean over a
    multi-hot bag of ids) of several tables, dense features, MLP."""

    def __init__(self, fields=8, vocab=20000, dim=32, dense=13):
        super().__init__()
        self.bags = nn.ModuleList(nn.EmbeddingBag(vocab, dim, mode="sum" if i % 2 == 0 else "mean")
                                  for i in range(fields))
        self.mlp = nn.Sequential(nn.Linear(fields * dim + dense, 256), nn.ReLU(), nn.Linear(256, 64), nn.ReLU(),
                                 nn.Linear(64, 1))

    def forward(self, ids, dense):
        embs = [bag(ids[:, i]) for i, bag in enumerate(self.bags)]
        return torch.sigmoid(self.mlp(torch.cat(embs + [dense], 1)))


@model("embbag_rec")
def embbag_rec(path):
    torch.manual_seed(0)
    specs = [("ids", "int64", ["batch", 8, 20], {"kind": "int", "high": 20000}),
             ("dense", "float32", ["batch", 13], {"kind": "uniform"})]
    return specs, export_torch(BagRec(), specs, path)


# ---------------------------------------------------------------- DETR-like

class Detr(nn.Module):
    """DETR's structure: ResNet-18 trunk, 1x1 projection, sine positions, transformer
    encoder / decoder with learned object queries, class and box heads."""

    def __init__(self, dim=128, heads=8, enc=3, dec=3, queries=50, classes=92):
        super().__init__()
        r = torchvision.models.resnet18()
        self.trunk = nn.Sequential(r.conv1, r.bn1, r.relu, r.maxpool, r.layer1, r.layer2, r.layer3, r.layer4)
        self.proj = nn.Conv2d(512, dim, 1)
        self.tr = nn.Transformer(dim, heads, enc, dec, 4 * dim, dropout=0.0, batch_first=True)
        self.query = nn.Parameter(torch.randn(1, queries, dim))
        self.cls, self.box = nn.Linear(dim, classes), nn.Sequential(nn.Linear(dim, dim), nn.ReLU(), nn.Linear(dim, 4))
        self.dim = dim

    def forward(self, x):
        f = self.proj(self.trunk(x))
        b, c, h, w = f.shape
        ys = torch.arange(h, dtype=torch.float32).view(h, 1).expand(h, w).reshape(1, h * w, 1)
        xs = torch.arange(w, dtype=torch.float32).view(1, w).expand(h, w).reshape(1, h * w, 1)
        freq = torch.exp(-math.log(10000.0) * torch.arange(c // 4, dtype=torch.float32) / (c // 4)).view(1, 1, -1)
        pos = torch.cat([torch.sin(xs * freq), torch.cos(xs * freq), torch.sin(ys * freq), torch.cos(ys * freq)], 2)
        src = f.flatten(2).transpose(1, 2) + pos
        hs = self.tr(src, self.query.expand(b, -1, -1))
        return self.cls(hs), torch.sigmoid(self.box(hs))


@model("detr_like")
def detr_like(path):
    torch.manual_seed(0)
    net = tv(lambda weights=None: Detr())
    return image(320), export_torch(net, image(320), path)


# ---------------------------------------------------------------- Whisper-like audio encoder

class WhisperEnc(nn.Module):
    def __init__(self, mels=80, dim=256, heads=4, depth=4, frames=1000):
        super().__init__()
        self.c1, self.c2 = nn.Conv1d(mels, dim, 3, padding=1), nn.Conv1d(dim, dim, 3, stride=2, padding=1)
        t = torch.arange(frames // 2, dtype=torch.float32)[:, None]
        inv = torch.exp(-math.log(10000.0) * torch.arange(dim // 2, dtype=torch.float32) / (dim // 2 - 1))[None]
        self.register_buffer("pos", torch.cat([torch.sin(t * inv), torch.cos(t * inv)], 1))
        layer = nn.TransformerEncoderLayer(dim, heads, 4 * dim, dropout=0.0, activation="gelu", batch_first=True,
                                           norm_first=True)
        self.enc = nn.TransformerEncoder(layer, depth, enable_nested_tensor=False)
        self.ln = nn.LayerNorm(dim)

    def forward(self, mel):
        x = F.gelu(self.c2(F.gelu(self.c1(mel)))).transpose(1, 2)
        return self.ln(self.enc(x + self.pos))


@model("whisper_enc")
def whisper_enc(path):
    torch.manual_seed(0)
    specs = [("mel", "float32", ["batch", 80, 1000], {"kind": "uniform"})]
    return specs, export_torch(WhisperEnc(), specs, path)


# ---------------------------------------------------------------- BERT with attention_mask

class BertLayer(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.q, self.k, self.v, self.o = (nn.Linear(dim, dim) for _ in range(4))
        self.ln1, self.ln2 = nn.LayerNorm(dim, eps=1e-12), nn.LayerNorm(dim, eps=1e-12)
        self.ff1, self.ff2 = nn.Linear(dim, 4 * dim), nn.Linear(4 * dim, dim)

    def forward(self, x, ext_mask):
        b, t, d = x.shape
        hd = d // self.heads

        def split(z):
            return z.view(b, t, self.heads, hd).permute(0, 2, 1, 3)
        q, k, v = split(self.q(x)), split(self.k(x)), split(self.v(x))
        s = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(hd) + ext_mask
        a = torch.matmul(torch.softmax(s, dim=-1), v).permute(0, 2, 1, 3).reshape(b, t, d)
        x = self.ln1(x + self.o(a))
        return self.ln2(x + self.ff2(F.gelu(self.ff1(x))))


class BertMasked(nn.Module):
    """HF BERT's structure: word + position + token-type embeddings, the extended
    attention mask (1 - mask) * finfo.min broadcast over heads, post-norm layers, pooler."""

    def __init__(self, vocab=8000, dim=256, heads=4, depth=4, positions=512):
        super().__init__()
        self.word, self.pos, self.ttype = nn.Embedding(vocab, dim), nn.Embedding(positions, dim), nn.Embedding(2, dim)
        self.ln = nn.LayerNorm(dim, eps=1e-12)
        self.layers = nn.ModuleList(BertLayer(dim, heads) for _ in range(depth))
        self.pool = nn.Linear(dim, dim)

    def forward(self, ids, mask):
        t = ids.shape[1]
        x = self.word(ids) + self.pos(torch.arange(t).unsqueeze(0)) + self.ttype(torch.zeros_like(ids))
        x = self.ln(x)
        ext = (1.0 - mask[:, None, None, :].to(torch.float32)) * torch.finfo(torch.float32).min
        for layer in self.layers:
            x = layer(x, ext)
        return x, torch.tanh(self.pool(x[:, 0]))


def bert_specs(vocab):
    return [("ids", "int64", ["batch", "seq"], {"kind": "int", "high": vocab}),
            ("mask", "int64", ["batch", "seq"], {"kind": "int", "high": 2})]


@model("bert_mask")
def bert_mask(path):
    torch.manual_seed(0)
    return bert_specs(8000), export_torch(BertMasked(), bert_specs(8000), path)


class WhereMask(BertMasked):
    """The other common mask form: a bool mask through Where (masked_fill)."""

    def forward(self, ids, mask):
        t = ids.shape[1]
        x = self.ln(self.word(ids) + self.pos(torch.arange(t).unsqueeze(0)))
        keep = mask[:, None, None, :].to(torch.bool).expand(-1, 1, t, -1)
        ext = torch.zeros(keep.shape).masked_fill(~keep, -1e9)
        for layer in self.layers:
            x = layer(x, ext)
        return x, torch.tanh(self.pool(x[:, 0]))


@model("aside_bert_where_mask")
def aside_bert(path):
    torch.manual_seed(1)
    return bert_specs(5000), export_torch(WhereMask(vocab=5000, dim=384, heads=6, depth=3), bert_specs(5000), path)


# ---------------------------------------------------------------- classic U-Net, torchvision

class UNetSeg(nn.Module):
    """Ronneberger's U-Net at quarter width on 128x128: double 3x3 conv + BN + ReLU,
    max-pool down, ConvTranspose2d up, skip Concat, 1x1 head."""

    def __init__(self, c=16, classes=4):
        super().__init__()

        def dbl(a, b):
            return nn.Sequential(nn.Conv2d(a, b, 3, padding=1), nn.BatchNorm2d(b), nn.ReLU(),
                                 nn.Conv2d(b, b, 3, padding=1), nn.BatchNorm2d(b), nn.ReLU())
        ws = [c, 2 * c, 4 * c, 8 * c, 16 * c]
        self.downs = nn.ModuleList([dbl(3, ws[0])] + [dbl(ws[i], ws[i + 1]) for i in range(4)])
        self.ups = nn.ModuleList(nn.ConvTranspose2d(ws[i + 1], ws[i], 2, 2) for i in range(4))
        self.dec = nn.ModuleList(dbl(2 * ws[i], ws[i]) for i in range(4))
        self.head = nn.Conv2d(c, classes, 1)

    def forward(self, x):
        skips = []
        for i, d in enumerate(self.downs):
            x = d(x if i == 0 else F.max_pool2d(x, 2))
            skips.append(x)
        x = skips.pop()
        for i in reversed(range(4)):
            x = self.dec[i](torch.cat([self.ups[i](x), skips[i]], 1))
        return self.head(x)


@model("unet_seg")
def unet_seg(path):
    torch.manual_seed(0)
    net = tv(lambda weights=None: UNetSeg())
    return image(128), export_torch(net, image(128), path)


@model("wide_resnet50_2")
def wide_resnet50_2(path):
    return IMAGE, export_torch(tv(torchvision.models.wide_resnet50_2), IMAGE, path)


@model("vgg16")
def vgg16(path):
    return IMAGE, export_torch(tv(torchvision.models.vgg16), IMAGE, path)


def main():
    zoo.main_with_dim_values(DIM_VALUES)


if __name__ == "__main__":
    main()
