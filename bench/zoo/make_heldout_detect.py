#!/usr/bin/python3
"""Builds a held-out zoo of detection, optical-flow and video models.

    /usr/bin/python3 bench/zoo/make_heldout_detect.py OUT [--only NAME,NAME]

Models people bring beyond classification, never tuned on: torchvision 0.14's
detectors with their whole post-processing exported (SSDlite, Faster R-CNN,
RetinaNet, FCOS, Mask R-CNN: image normalization, anchors, box decoding,
batched NonMaxSuppression, RoiAlign over the FPN levels, mask pasting), RAFT
optical flow (correlation volumes, GridSample, a GRU update loop) and 3-D /
(2+1)-D video ResNets. Untrained weights (seeded): the detectors keep hundreds
to thousands of boxes, the worst case for NMS and RoiAlign. Same format as
the zoo (make_models.write_zoo), so `bench/zoo/run.sh --zoo OUT --no-docs ...`
times it against ONNX Runtime. Images are 320x320 (the detectors resize to
it), flow frames 128x128, clips 8x112x112. Building takes about 30 minutes.
"""
import os
import sys

import torch
import torch.nn as nn
import torchvision

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_models as zoo  # noqa: E402

zoo.MODELS.clear()
model, export_torch, tv = zoo.model, zoo.export_torch, zoo.tv

IMAGE_320 = [("image", "float32", [1, 3, 320, 320], {"kind": "uniform"})]


class Detections(nn.Module):
    """A torchvision detector on one image, its first result's tensors as outputs."""

    def __init__(self, net, keys=("boxes", "scores", "labels")):
        super().__init__()
        self.net = net
        self.keys = keys

    def forward(self, image):
        out = self.net([image[0]])[0]
        return tuple(out[k] for k in self.keys)


def detector(ctor, **kw):
    torch.manual_seed(0)
    return ctor(weights=None, weights_backbone=None, **kw)


DET = torchvision.models.detection


@model("ssdlite320")
def ssdlite(path):
    return IMAGE_320, export_torch(Detections(detector(DET.ssdlite320_mobilenet_v3_large)), IMAGE_320, path)


@model("frcnn_mnv3_320")
def frcnn(path):
    net = detector(DET.fasterrcnn_mobilenet_v3_large_320_fpn)
    return IMAGE_320, export_torch(Detections(net), IMAGE_320, path)


@model("retinanet_r50")
def retinanet(path):
    net = detector(DET.retinanet_resnet50_fpn, min_size=320, max_size=320)
    return IMAGE_320, export_torch(Detections(net), IMAGE_320, path)


@model("fcos_r50")
def fcos(path):
    net = detector(DET.fcos_resnet50_fpn, min_size=320, max_size=320)
    return IMAGE_320, export_torch(Detections(net), IMAGE_320, path)


@model("maskrcnn_r50")
def maskrcnn(path):
    net = detector(DET.maskrcnn_resnet50_fpn, min_size=320, max_size=320)
    return IMAGE_320, export_torch(Detections(net, ("boxes", "scores", "labels", "masks")), IMAGE_320, path)


FRAMES = [("image1", "float32", [1, 3, 128, 128], {"kind": "uniform"}),
          ("image2", "float32", [1, 3, 128, 128], {"kind": "uniform"})]


class Flow(nn.Module):
    """RAFT with 4 refinement steps; the last flow estimate."""

    def __init__(self, net):
        super().__init__()
        self.net = net

    def forward(self, a, b):
        return self.net(a, b, num_flow_updates=4)[-1]


@model("raft_small")
def raft(path):
    torch.manual_seed(0)
    return FRAMES, export_torch(Flow(torchvision.models.optical_flow.raft_small(weights=None)), FRAMES, path)


CLIP = [("clip", "float32", ["batch", 3, 8, 112, 112], {"kind": "uniform"})]


@model("r3d_18")
def r3d(path):
    return CLIP, export_torch(tv(torchvision.models.video.r3d_18), CLIP, path)


@model("r2plus1d_18")
def r2plus1d(path):
    return CLIP, export_torch(tv(torchvision.models.video.r2plus1d_18), CLIP, path)


if __name__ == "__main__":
    zoo.main()
