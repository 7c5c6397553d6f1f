#!/usr/bin/python3
"""Builds a held-out sweep of torchvision 0.14's model families the zoo and the other held-out
sets do not hold (session 16, lead): the sizes people take from torchvision when they do not
pick the small ones, and its segmentation and video families.

    /usr/bin/python3 bench/zoo/make_heldout_tv.py OUT [--only NAME,NAME]
    bench/zoo/run.py --zoo OUT --threads 1,2 --batches 1,4 --rounds 3 --no-docs

Same format as the zoo (OUT/<name>.onnx, OUT/manifest.json, batch-1 inputs and torch
references under OUT/data). Models whose names start with "aside_" are not looked at while
working on the others; they are run at the end as a check.

The models, torch 1.13 exports (opset 17) with seeded weights and non-trivial batch-norm
statistics: vgg16_bn (138 M weights: two large fully connected layers read once per image),
wide_resnet50_2, resnet101, densenet169, mnasnet1_0, regnet_y_1_6gf (squeeze-excite),
regnet_x_3_2gf (grouped convolutions), efficientnet_b3 at 300x300, convnext_small,
vit_b_16, vit_b_32, maxvit_t
(MBConv with block and grid attention), squeezenet1_0, shufflenet_v2_x1_5, fcn_resnet50 and
deeplabv3_resnet50 at 256x256 (dilated ResNet stages, ASPP), mc3_18 on 8-frame
112x112 clips. Asides: regnet_y_800mf, mnasnet1_3, vgg11_bn, densenet201.
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
IMAGE = zoo.IMAGE
M = torchvision.models


def image(h, w):
    return [("image", "float32", ["batch", 3, h, w], {"kind": "uniform"})]


def clip(t, h, w):
    return [("clip", "float32", ["batch", 3, t, h, w], {"kind": "uniform"})]


def classifier(name, ctor, specs=IMAGE):
    @model(name)
    def build(path):
        net = tv(ctor)
        # torchvision starts ViT's head at zero: every output would be 0 whatever the
        # body computed. Seeded small weights instead.
        g = torch.Generator().manual_seed(2)
        for m in net.modules():
            if isinstance(m, nn.Linear) and not m.weight.detach().abs().sum():
                m.weight.data.copy_(torch.randn(m.weight.shape, generator=g) * 0.02)
        return specs, export_torch(net, specs, path)
    return build


class SegOut(nn.Module):
    """torchvision's segmentation models return a dict: the "out" map."""

    def __init__(self, net):
        super().__init__()
        self.net = net

    def forward(self, x):
        return self.net(x)["out"]


def segmentation(name, ctor, specs):
    @model(name)
    def build(path):
        net = tv(ctor, weights_backbone=None, num_classes=21, aux_loss=False)
        return specs, export_torch(SegOut(net), specs, path)
    return build


for name, ctor in [("vgg16_bn", M.vgg16_bn), ("wide_resnet50_2", M.wide_resnet50_2), ("resnet101", M.resnet101),
                   ("densenet169", M.densenet169), ("mnasnet1_0", M.mnasnet1_0),
                   ("regnet_y_1_6gf", M.regnet_y_1_6gf), ("regnet_x_3_2gf", M.regnet_x_3_2gf),
                   ("convnext_small", M.convnext_small), ("vit_b_16", M.vit_b_16), ("vit_b_32", M.vit_b_32),
                   ("maxvit_t", M.maxvit_t), ("squeezenet1_0", M.squeezenet1_0),
                   ("shufflenet_v2_x1_5", M.shufflenet_v2_x1_5),
                   ("aside_regnet_y_800mf", M.regnet_y_800mf), ("aside_mnasnet1_3", M.mnasnet1_3),
                   ("aside_vgg11_bn", M.vgg11_bn), ("aside_densenet201", M.densenet201)]:
    classifier(name, ctor)
classifier("efficientnet_b3_300", M.efficientnet_b3, image(300, 300))
segmentation("fcn_resnet50_256", M.segmentation.fcn_resnet50, image(256, 256))
segmentation("deeplabv3_resnet50_256", M.segmentation.deeplabv3_resnet50, image(256, 256))
classifier("mc3_18_8x112", M.video.mc3_18, clip(8, 112, 112))

if __name__ == "__main__":
    zoo.main()
