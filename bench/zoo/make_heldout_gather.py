#!/usr/bin/python3
"""Builds a held-out set for graphs that leave the fast engines: selection (TopK, ArgMin /
ArgMax) and gathers / scatters over expanded indices, built differently from the point-cloud
set (make_heldout_points.py) that the work on issue 20's TopK and GatherElements rewrite
looked at. Every model here is an "aside_" model: measured only at the end, as a check that
the change holds for the class and not for the instances.

    /usr/bin/python3 bench/zoo/make_heldout_gather.py OUT [--only NAME,NAME]
    bench/zoo/run.py --zoo OUT --threads 1,2 --batches 1,8 --rounds 3 --no-docs

Same format as the zoo (make_models.write_zoo), torch 1.13 exports at opset 17, seeded.

- aside_knn_channels_last: kNN over points kept channels-last [B, N, C]: the k smallest
  distances (TopK largest=0), neighbours through torch.gather on axis 2 of the features
  expanded on axis 1 ([B, N, N, C], the gathered axis not the last), indices expanded on the
  last axis; an edge MLP (Linear) and max over the neighbours; the nearest centroid of each
  point as ArgMin over a learned codebook's distances, embedded and added; three layers.
- aside_gnn_scatter_knn: a kNN graph built in the model (TopK over feature similarity), whose
  messages are gathered (GatherElements over expanded indices) and aggregated into their
  targets with scatter_add_ (ScatterElements, reduction add) and a softmax attention weight;
  the class GNNs export (PyG-style scatter aggregation without PyG).
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
DIM_VALUES = {"batch": 1}


def sq_dist(a, b):
    """a [B, N, C], b [B, M, C] -> |a_i - b_j|^2 as [B, N, M]."""
    return (a * a).sum(-1, keepdim=True) - 2 * torch.matmul(a, b.transpose(1, 2)) + (b * b).sum(-1).unsqueeze(1)


class KnnChannelsLast(nn.Module):
    def __init__(self, k=10, widths=(48, 64, 96), codes=32, classes=24):
        super().__init__()
        self.k = k
        cin, self.edges, self.codebooks, self.code_emb = 3, nn.ModuleList(), nn.ParameterList(), nn.ModuleList()
        for w in widths:
            self.edges.append(nn.Sequential(nn.Linear(2 * cin, w), nn.ReLU(), nn.Linear(w, w)))
            self.codebooks.append(nn.Parameter(torch.randn(codes, w) * 0.5))
            self.code_emb.append(nn.Embedding(codes, w))
            cin = w
        self.head = nn.Sequential(nn.Linear(2 * cin, 128), nn.ReLU(), nn.Linear(128, classes))

    def forward(self, pts):
        x = pts.transpose(1, 2)  # b, n, 3
        b, n, _ = x.shape
        for edge, book, emb in zip(self.edges, self.codebooks, self.code_emb):
            c = x.shape[2]
            idx = sq_dist(x, x).topk(self.k, dim=-1, largest=False)[1]  # b, n, k
            nb = torch.gather(x.unsqueeze(1).expand(b, n, n, c), 2, idx.unsqueeze(-1).expand(b, n, self.k, c))
            centre = x.unsqueeze(2).expand(b, n, self.k, c)
            y = edge(torch.cat([nb - centre, centre], -1)).max(2)[0]  # b, n, w
            code = sq_dist(y, book.unsqueeze(0).expand(b, -1, -1)).argmin(-1)  # b, n
            x = y + emb(code)
        return self.head(torch.cat([x.max(1)[0], x.mean(1)], -1))


@model("aside_knn_channels_last")
def aside_knn_channels_last(path):
    torch.manual_seed(11)
    specs = [("points", "float32", ["batch", 3, 256], {"kind": "uniform"})]
    return specs, export_torch(KnnChannelsLast(), specs, path)


class GnnScatterKnn(nn.Module):
    def __init__(self, fin=32, hidden=64, k=8, layers=3, classes=10):
        super().__init__()
        self.k, self.hidden = k, hidden
        self.inp = nn.Linear(fin, hidden)
        self.msg = nn.ModuleList(nn.Linear(hidden, hidden) for _ in range(layers))
        self.att = nn.ModuleList(nn.Linear(hidden, 1) for _ in range(layers))
        self.upd = nn.ModuleList(nn.Sequential(nn.Linear(2 * hidden, hidden), nn.ReLU()) for _ in range(layers))
        self.out = nn.Linear(hidden, classes)

    def forward(self, feats):
        h = F.relu(self.inp(feats))  # b, n, hd
        b, n, hd = h.shape
        for msg, att, upd in zip(self.msg, self.att, self.upd):
            sim = torch.matmul(h, h.transpose(1, 2))  # b, n, n
            src = sim.topk(self.k, dim=-1)[1]  # b, n, k: the k most similar sources of each node
            m = F.relu(msg(h))  # b, n, hd
            gathered = torch.gather(m.unsqueeze(1).expand(b, n, n, hd), 2, src.unsqueeze(-1).expand(b, n, self.k, hd))
            w = torch.softmax(att(gathered), dim=2)  # b, n, k, 1
            # scatter each target's weighted messages back onto their sources (reverse edges)
            contrib = (w * gathered).reshape(b, n * self.k, hd)
            targets = src.reshape(b, n * self.k, 1).expand(b, n * self.k, hd)
            agg = torch.zeros_like(h).scatter_add_(1, targets, contrib)
            h = h + upd(torch.cat([h, agg], -1))
        return self.out(h.mean(1))


@model("aside_gnn_scatter_knn")
def aside_gnn_scatter_knn(path):
    torch.manual_seed(12)
    specs = [("feats", "float32", ["batch", 192, 32], {"kind": "uniform"})]
    return specs, export_torch(GnnScatterKnn(), specs, path)


def main():
    zoo.main_with_dim_values(DIM_VALUES)


if __name__ == "__main__":
    main()
