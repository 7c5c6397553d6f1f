#!/usr/bin/python3
"""Builds the point-cloud / graph held-out zoo: models over points and nodes whose
features come from neighbourhoods (k nearest neighbours, balls, dense adjacency).

    /usr/bin/python3 bench/zoo/make_heldout_points.py OUT [--only NAME,NAME]
    bench/zoo/run.py --zoo OUT --threads 1,2 --batches 1,8 --rounds 3 --no-docs

Same format as the zoo (make_models.write_zoo), torch 1.13 exports at opset 17 with
seeded weights. The class: pairwise distances (a MatMul and squared norms), TopK for the
neighbours, the neighbours gathered (Gather on a flattened [B*N, C] table, or
GatherElements over an expanded index), edge features (neighbour - centre, centre, relative
positions) joined on the channel axis, shared MLPs as 1x1 Conv2d / Linear on [B, *, N, K],
and a reduction over the neighbours (max, or a softmax-weighted sum). The models whose
names start with "aside_" are variants the work on this set does not look at; they are
measured at the end only, as a check that a change holds for the class.

- dgcnn_k10: DGCNN (edge convolutions) with k = 10 and three layers of 64, 1024 points.
- dgcnn_dynk: the point count is a dynamic dim and k = N / 32 is computed in the graph
  (Shape / Div into TopK's K); the edge feature order is (centre, neighbour - centre).
- dgcnn_gather_elements: neighbours through torch.gather on the expanded index
  (GatherElements over [B, C, N, K]), the features channels-first throughout (no Transpose
  before the convolutions).
- pointnet2_ssg: PointNet++ single-scale grouping: centroids by strided slicing, the
  ball query as TopK over squared distances, grouped relative coordinates and features,
  Conv2d 1x1 MLPs and max over the group, a global set abstraction and a classifier.
- gat_dense: three layers of 4-head graph attention over a dense 0/1 adjacency input
  (masked softmax over [B, H, N, N]).
- point_transformer: vector attention over kNN (Point Transformer): q, k, v Linear,
  neighbours of k and v gathered, a position MLP on p_i - p_j, the weight MLP on
  q_i - k_j + pos, softmax over the neighbours, a weighted sum; a strided transition down.
- aside_dgcnn_seg: DGCNN for segmentation (k = 20, 3 edge layers, the global feature
  expanded back to every point and joined to the per-point features, a per-point head).
- aside_pointnet2_msg: PointNet++ multi-scale grouping (two group sizes per level).
- aside_point_transformer_k8: the vector attention with k = 8, wider, three blocks.
"""
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_models as zoo  # noqa: E402

zoo.MODELS.clear()
model, export_torch, tv = zoo.model, zoo.export_torch, zoo.tv
DIM_VALUES = {"batch": 1, "npoints": 512}


def seeded(net):
    """Non-trivial batch-norm statistics in every BatchNorm (1d and 2d), so folded weights
    are not all ones."""
    g = torch.Generator().manual_seed(1)
    for m in net.modules():
        if isinstance(m, (nn.BatchNorm1d, nn.BatchNorm2d)):
            m.running_mean.copy_(torch.rand(m.num_features, generator=g) * 0.2 - 0.1)
            m.running_var.copy_(torch.rand(m.num_features, generator=g) * 0.5 + 0.75)
    return net


def points(n, c=3):
    return [("points", "float32", ["batch", c, n], {"kind": "uniform"})]


def pairwise_neg_dist(a, b):
    """a [B, C, N], b [B, C, M] -> -|a_i - b_j|^2 as [B, N, M]."""
    inner = torch.matmul(a.transpose(2, 1), b)
    return 2 * inner - (a * a).sum(1).unsqueeze(2) - (b * b).sum(1).unsqueeze(1)


def gather_rows(x, idx):
    """x [B, N, C], idx [B, M, K] (indices into N) -> [B, M, K, C] through a flattened
    [B*N, C] table (how DGCNN's reference code gathers)."""
    b, n, c = x.shape
    _, m, k = idx.shape
    base = torch.arange(b).view(-1, 1, 1) * n
    return x.reshape(b * n, c)[(idx + base).view(-1), :].view(b, m, k, c)


def edge_mlp(cin, cout):
    return nn.Sequential(nn.Conv2d(cin, cout, 1, bias=False), nn.BatchNorm2d(cout), nn.LeakyReLU(0.2))


# ---------------------------------------------------------------- DGCNN variants

class DgcnnVariant(nn.Module):
    """DGCNN with a choice of edge-feature form: "flat" (the reference code's flattened
    Gather, (nb - c, c), Transpose to channels-first), "centre_first" ((c, nb - c) with k
    from the point count), "elements" (GatherElements, channels-first throughout)."""

    def __init__(self, k=16, widths=(64, 64, 128), emb=512, classes=40, form="flat", seg=False):
        super().__init__()
        self.k, self.form, self.seg = k, form, seg
        cin, self.edges = 3, nn.ModuleList()
        for w in widths:
            self.edges.append(edge_mlp(2 * cin, w))
            cin = w
        self.fuse = nn.Sequential(nn.Conv1d(sum(widths), emb, 1, bias=False), nn.BatchNorm1d(emb),
                                  nn.LeakyReLU(0.2))
        if seg:
            self.head = nn.Sequential(nn.Conv1d(emb + sum(widths), 256, 1, bias=False), nn.BatchNorm1d(256),
                                      nn.LeakyReLU(0.2), nn.Conv1d(256, classes, 1))
        else:
            self.head = nn.Sequential(nn.Linear(2 * emb, 256), nn.LeakyReLU(0.2), nn.Linear(256, classes))

    def features(self, x):
        b, c, n = x.shape
        k = n // 32 if self.form == "centre_first" else self.k
        idx = pairwise_neg_dist(x, x).topk(k=k, dim=-1)[1]  # b, n, k
        if self.form == "elements":
            nb = torch.gather(x.unsqueeze(2).expand(b, c, n, n), 3, idx.unsqueeze(1).expand(b, c, n, k))
            centre = x.unsqueeze(3).expand(b, c, n, k)
            return torch.cat([nb - centre, centre], dim=1)
        xt = x.transpose(2, 1)
        nb = gather_rows(xt, idx)
        centre = xt.unsqueeze(2).expand(b, n, k, c)
        parts = [centre, nb - centre] if self.form == "centre_first" else [nb - centre, centre]
        return torch.cat(parts, dim=3).permute(0, 3, 1, 2)

    def forward(self, x):
        feats = []
        for e in self.edges:
            x = e(self.features(x)).max(dim=-1)[0]
            feats.append(x)
        local = torch.cat(feats, 1)
        f = self.fuse(local)
        if self.seg:
            g = f.max(dim=2, keepdim=True)[0].expand(-1, -1, f.shape[2])
            return self.head(torch.cat([g, local], 1))
        return self.head(torch.cat([f.max(dim=2)[0], f.mean(dim=2)], 1))


@model("dgcnn_k10")
def dgcnn_k10(path):
    torch.manual_seed(0)
    net = seeded(DgcnnVariant(k=10, widths=(64, 64, 64)))
    return points(1024), export_torch(net, points(1024), path)


@model("dgcnn_dynk")
def dgcnn_dynk(path):
    torch.manual_seed(2)
    net = seeded(DgcnnVariant(widths=(32, 64, 128), emb=256, form="centre_first"))
    specs = points("npoints")
    return specs, export_torch(net, specs, path)


@model("dgcnn_gather_elements")
def dgcnn_gather_elements(path):
    torch.manual_seed(3)
    net = seeded(DgcnnVariant(k=12, widths=(64, 64, 96), emb=384, form="elements"))
    return points(384), export_torch(net, points(384), path)


@model("aside_dgcnn_seg")
def aside_dgcnn_seg(path):
    torch.manual_seed(4)
    net = seeded(DgcnnVariant(k=20, widths=(64, 64, 64), emb=512, classes=13, seg=True))
    return points(512), export_torch(net, points(512), path)


# ---------------------------------------------------------------- PointNet++

class SetAbstraction(nn.Module):
    """Centroids: every `stride`-th point (in place of farthest-point sampling); groups: the
    `ks` nearest points of each centroid (the ball query as TopK over distances); per
    group size a shared MLP (Conv2d 1x1 + BN + ReLU) on [rel_xyz, feats] and max over the
    group; the scales joined on the channels."""

    def __init__(self, stride, ks, cin, mlps):
        super().__init__()
        self.stride, self.ks = stride, ks
        self.mlps = nn.ModuleList()
        for widths in mlps:
            layers, c = [], cin + 3
            for w in widths:
                layers += [nn.Conv2d(c, w, 1, bias=False), nn.BatchNorm2d(w), nn.ReLU()]
                c = w
            self.mlps.append(nn.Sequential(*layers))

    def forward(self, xyz, feats):
        centres = xyz[:, :, ::self.stride]  # b, 3, m
        order = pairwise_neg_dist(centres, xyz).topk(k=max(self.ks), dim=-1)[1]  # b, m, kmax
        xyz_t = xyz.transpose(1, 2)
        rel = gather_rows(xyz_t, order) - centres.transpose(1, 2).unsqueeze(2)  # b, m, kmax, 3
        grouped = torch.cat([rel, gather_rows(feats.transpose(1, 2), order)], dim=3) if feats is not None else rel
        grouped = grouped.permute(0, 3, 1, 2)  # b, c, m, kmax
        outs = [mlp(grouped[:, :, :, :k]).max(dim=3)[0] for k, mlp in zip(self.ks, self.mlps)]
        return centres, torch.cat(outs, 1)


class PointNet2(nn.Module):
    def __init__(self, msg=False, classes=40):
        super().__init__()
        if msg:
            self.sa1 = SetAbstraction(4, (16, 32), 0, ((32, 32, 64), (64, 64, 128)))
            self.sa2 = SetAbstraction(4, (16, 32), 192, ((64, 64, 128), (128, 128, 256)))
            c2 = 384
        else:
            self.sa1 = SetAbstraction(4, (32,), 0, ((64, 64, 128),))
            self.sa2 = SetAbstraction(4, (32,), 128, ((128, 128, 256),))
            c2 = 256
        self.glob = nn.Sequential(nn.Conv1d(c2 + 3, 256, 1, bias=False), nn.BatchNorm1d(256), nn.ReLU(),
                                  nn.Conv1d(256, 512, 1, bias=False), nn.BatchNorm1d(512), nn.ReLU())
        self.head = nn.Sequential(nn.Linear(512, 256), nn.BatchNorm1d(256), nn.ReLU(), nn.Linear(256, classes))

    def forward(self, xyz):
        xyz1, f1 = self.sa1(xyz, None)
        xyz2, f2 = self.sa2(xyz1, f1)
        g = self.glob(torch.cat([xyz2, f2], 1)).max(dim=2)[0]
        return self.head(g)


@model("pointnet2_ssg")
def pointnet2_ssg(path):
    torch.manual_seed(5)
    net = seeded(PointNet2())
    return points(1024), export_torch(net, points(1024), path)


@model("aside_pointnet2_msg")
def aside_pointnet2_msg(path):
    torch.manual_seed(6)
    net = seeded(PointNet2(msg=True))
    return points(1024), export_torch(net, points(1024), path)


# ---------------------------------------------------------------- GAT over a dense adjacency

class GatLayer(nn.Module):
    def __init__(self, fin, fout, heads):
        super().__init__()
        self.heads, self.fout = heads, fout
        self.w = nn.Linear(fin, heads * fout, bias=False)
        self.a_src = nn.Parameter(torch.randn(heads, fout) * 0.1)
        self.a_dst = nn.Parameter(torch.randn(heads, fout) * 0.1)

    def forward(self, x, adj):
        b, n, _ = x.shape
        h = self.w(x).view(b, n, self.heads, self.fout).transpose(1, 2)  # b, H, n, f
        e = (h * self.a_dst[None, :, None]).sum(-1).unsqueeze(3) + (h * self.a_src[None, :, None]).sum(-1).unsqueeze(2)
        e = F.leaky_relu(e, 0.2).masked_fill(adj.unsqueeze(1) == 0, -1e9)
        out = torch.matmul(torch.softmax(e, dim=-1), h)  # b, H, n, f
        return F.elu(out.transpose(1, 2).reshape(b, n, self.heads * self.fout))


class Gat(nn.Module):
    def __init__(self, fin=64, hidden=32, heads=4, layers=3, classes=16):
        super().__init__()
        dims = [fin] + [hidden * heads] * layers
        self.layers = nn.ModuleList(GatLayer(a, hidden, heads) for a in dims[:-1])
        self.out = nn.Linear(dims[-1], classes)

    def forward(self, x, adj):
        n = adj.shape[1]
        adj = adj + torch.eye(n).unsqueeze(0)  # self loops
        for layer in self.layers:
            x = layer(x, adj)
        return self.out(x)


@model("gat_dense")
def gat_dense(path):
    torch.manual_seed(7)
    specs = [("x", "float32", ["batch", 256, 64], {"kind": "uniform"}),
             ("adj", "float32", ["batch", 256, 256], {"kind": "int", "high": 2})]
    return specs, export_torch(Gat(), specs, path)


# ---------------------------------------------------------------- Point Transformer

class VectorAttention(nn.Module):
    def __init__(self, c, k):
        super().__init__()
        self.k = k
        self.q, self.kk, self.v = nn.Linear(c, c), nn.Linear(c, c), nn.Linear(c, c)
        self.pos = nn.Sequential(nn.Linear(3, c), nn.ReLU(), nn.Linear(c, c))
        self.gamma = nn.Sequential(nn.Linear(c, c), nn.ReLU(), nn.Linear(c, c))
        self.proj = nn.Linear(c, c)

    def forward(self, xyz, x):
        """xyz [B, N, 3], x [B, N, C] -> [B, N, C]."""
        idx = pairwise_neg_dist(xyz.transpose(1, 2), xyz.transpose(1, 2)).topk(self.k, dim=-1)[1]
        q, kf, vf = self.q(x), gather_rows(self.kk(x), idx), gather_rows(self.v(x), idx)
        pos = self.pos(xyz.unsqueeze(2) - gather_rows(xyz, idx))  # b, n, k, c
        w = torch.softmax(self.gamma(q.unsqueeze(2) - kf + pos), dim=2)
        return x + self.proj((w * (vf + pos)).sum(2))


class PointTransformer(nn.Module):
    def __init__(self, c=64, k=16, blocks=2, classes=40):
        super().__init__()
        self.inp = nn.Sequential(nn.Linear(3, c), nn.ReLU(), nn.Linear(c, c))
        self.b1 = nn.ModuleList(VectorAttention(c, k) for _ in range(blocks))
        self.down = nn.Sequential(nn.Linear(c, 2 * c), nn.ReLU())
        self.b2 = nn.ModuleList(VectorAttention(2 * c, k) for _ in range(blocks))
        self.head = nn.Sequential(nn.Linear(2 * c, 128), nn.ReLU(), nn.Linear(128, classes))

    def forward(self, pts):
        xyz = pts.transpose(1, 2)  # b, n, 3
        x = self.inp(xyz)
        for blk in self.b1:
            x = blk(xyz, x)
        # transition down: every 4th point, max over its 4-point stride window
        b, n, c = x.shape
        x = self.down(x).view(b, n // 4, 4, 2 * c).max(2)[0]
        xyz = xyz[:, ::4]
        for blk in self.b2:
            x = blk(xyz, x)
        return self.head(x.mean(1))


@model("point_transformer")
def point_transformer(path):
    torch.manual_seed(8)
    return points(512), export_torch(PointTransformer(), points(512), path)


@model("aside_point_transformer_k8")
def aside_point_transformer(path):
    torch.manual_seed(9)
    net = PointTransformer(c=96, k=8, blocks=3)
    return points(512), export_torch(net, points(512), path)


def main():
    zoo.main_with_dim_values(DIM_VALUES)


if __name__ == "__main__":
    main()
