#!/usr/bin/python3
"""Builds the second held-out zoo (vision part): image models of classes neither the zoo nor
the first held-out set (make_heldout.py) covers.

    /usr/bin/python3 bench/zoo/make_heldout2.py OUT [--only NAME,NAME]

Like make_heldout.py this set is kept aside and only measured (issue 20 is checked with
models nobody here has seen). Same format as the zoo (OUT/<name>.onnx, OUT/manifest.json,
batch-1 inputs and torch references under OUT/data), so `bench/zoo/run.sh --zoo OUT
--no-docs ...` times it against ONNX Runtime and `bench/zoo/check.py --zoo OUT` checks it
against torch.

The models: from torchvision 0.14 with seeded weights, EfficientNetV2-S (fused MBConv:
plain 3x3 expansions, squeeze-excite, SiLU), Swin-T (cyclic shifts through Slice/Concat,
window attention with relative position bias), LR-ASPP and DeepLabV3 on MobileNetV3-Large
(dilated convolutions, hard-swish, bilinear Resize, global pooling branch), AlexNet (large
Gemm classifier, 11x11 stride-4 convolution, overlapping max pooling) and ShuffleNetV2 2.0x
(channel shuffle through Reshape/Transpose, Split); hand-built: a small 3-D convolution net
for video clips (Conv3d, BatchNorm3d, MaxPool3d, global average pooling), a convolutional
autoencoder (strided convolutions, ConvTranspose2d, Sigmoid), a fast style-transfer network
(reflection Pad, InstanceNorm, nearest Upsample by 2), an ESPCN-style super-resolution net
(tanh, PixelShuffle = DepthToSpace) and a VGG-style stack on 128x128 images with
batch-norm and a wide classifier.
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


def image(size, channels=3):
    return [("image", "float32", ["batch", channels, size, size], {"kind": "uniform"})]


@model("efficientnet_v2_s")
def efficientnet_v2_s(path):
    return IMAGE, export_torch(tv(torchvision.models.efficientnet_v2_s), IMAGE, path)


@model("swin_t")
def swin_t(path):
    return IMAGE, export_torch(tv(torchvision.models.swin_t), IMAGE, path)


class SegOut(nn.Module):
    """Segmentation models return a dict; the graph keeps its "out" map."""

    def __init__(self, net):
        super().__init__()
        self.net = net

    def forward(self, x):
        return self.net(x)["out"]


@model("lraspp_mbv3")
def lraspp(path):
    net = tv(torchvision.models.segmentation.lraspp_mobilenet_v3_large, weights_backbone=None, num_classes=21)
    return image(256), export_torch(SegOut(net), image(256), path)


@model("deeplabv3_mbv3")
def deeplabv3(path):
    net = tv(torchvision.models.segmentation.deeplabv3_mobilenet_v3_large, weights_backbone=None, num_classes=21,
             aux_loss=False)
    return image(256), export_torch(SegOut(net), image(256), path)


@model("alexnet")
def alexnet(path):
    return IMAGE, export_torch(tv(torchvision.models.alexnet), IMAGE, path)


@model("shufflenet_v2_x2_0")
def shufflenet(path):
    return IMAGE, export_torch(tv(torchvision.models.shufflenet_v2_x2_0), IMAGE, path)


class Video3d(nn.Module):
    """C3D-like clip classifier: 3x3x3 convolutions with batch-norm, 3-D max pooling."""

    def __init__(self, classes=50):
        super().__init__()

        def block(cin, cout, pool):
            return [nn.Conv3d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm3d(cout), nn.ReLU(inplace=True),
                    nn.MaxPool3d(pool)]
        self.features = nn.Sequential(*block(3, 32, (1, 2, 2)), *block(32, 64, 2), *block(64, 128, 2),
                                      *block(128, 192, 2))
        self.head = nn.Linear(192, classes)

    def forward(self, x):
        return self.head(self.features(x).mean(dim=(2, 3, 4)))


@model("video_c3d")
def video_c3d(path):
    torch.manual_seed(0)
    net = Video3d()
    g = torch.Generator().manual_seed(1)
    for m in net.modules():
        if isinstance(m, nn.BatchNorm3d):
            m.running_mean.copy_(torch.rand(m.num_features, generator=g) * 0.2 - 0.1)
            m.running_var.copy_(torch.rand(m.num_features, generator=g) * 0.5 + 0.75)
    specs = [("clip", "float32", ["batch", 3, 16, 64, 64], {"kind": "uniform"})]
    return specs, export_torch(net, specs, path)


class AutoEncoder(nn.Module):
    """Strided-conv encoder to 8x8x128, ConvTranspose2d decoder back to 64x64x3."""

    def __init__(self):
        super().__init__()
        self.enc = nn.Sequential(nn.Conv2d(3, 32, 4, 2, 1), nn.LeakyReLU(0.2), nn.Conv2d(32, 64, 4, 2, 1),
                                 nn.BatchNorm2d(64), nn.LeakyReLU(0.2), nn.Conv2d(64, 128, 4, 2, 1),
                                 nn.BatchNorm2d(128), nn.LeakyReLU(0.2))
        self.dec = nn.Sequential(nn.ConvTranspose2d(128, 64, 4, 2, 1), nn.BatchNorm2d(64), nn.ReLU(),
                                 nn.ConvTranspose2d(64, 32, 4, 2, 1), nn.BatchNorm2d(32), nn.ReLU(),
                                 nn.ConvTranspose2d(32, 3, 4, 2, 1), nn.Sigmoid())

    def forward(self, x):
        return self.dec(self.enc(x))


@model("conv_autoencoder")
def conv_autoencoder(path):
    torch.manual_seed(0)
    return image(64), export_torch(AutoEncoder(), image(64), path)


class StyleNet(nn.Module):
    """Johnson-style transfer net: reflection pad + conv + InstanceNorm, residual blocks,
    nearest x2 upsampling, at 128x128 with half the usual widths."""

    def __init__(self, c=16, blocks=5):
        super().__init__()

        def conv(cin, cout, k, stride=1, norm=True, relu=True):
            layers = [nn.ReflectionPad2d(k // 2), nn.Conv2d(cin, cout, k, stride)]
            if norm:
                layers.append(nn.InstanceNorm2d(cout, affine=True))
            if relu:
                layers.append(nn.ReLU())
            return nn.Sequential(*layers)
        self.down = nn.Sequential(conv(3, c, 9), conv(c, 2 * c, 3, 2), conv(2 * c, 4 * c, 3, 2))
        self.res = nn.ModuleList(nn.Sequential(conv(4 * c, 4 * c, 3), conv(4 * c, 4 * c, 3, relu=False))
                                 for _ in range(blocks))
        self.up1, self.up2 = conv(4 * c, 2 * c, 3), conv(2 * c, c, 3)
        self.out = conv(c, 3, 9, norm=False, relu=False)

    def forward(self, x):
        y = self.down(x)
        for r in self.res:
            y = y + r(y)
        y = self.up1(nn.functional.interpolate(y, scale_factor=2, mode="nearest"))
        y = self.up2(nn.functional.interpolate(y, scale_factor=2, mode="nearest"))
        return self.out(y)


@model("style_transfer")
def style_transfer(path):
    torch.manual_seed(0)
    return image(128), export_torch(StyleNet(), image(128), path)


class Espcn(nn.Module):
    """ESPCN super-resolution (x3) on a luminance plane: tanh convs, PixelShuffle."""

    def __init__(self, scale=3):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(1, 64, 5, padding=2), nn.Tanh(), nn.Conv2d(64, 32, 3, padding=1),
                                  nn.Tanh(), nn.Conv2d(32, scale * scale, 3, padding=1), nn.PixelShuffle(scale))

    def forward(self, x):
        return self.body(x).clamp(0, 1)


@model("espcn")
def espcn(path):
    torch.manual_seed(0)
    return image(96, 1), export_torch(Espcn(), image(96, 1), path)


class VggSmall(nn.Module):
    """VGG-style 3x3 stacks with batch-norm on 128x128 images, 4x4x256 into a 1024-wide classifier."""

    def __init__(self, classes=200):
        super().__init__()
        layers, cin = [], 3
        for v in (32, "M", 64, "M", 128, 128, "M", 256, 256, "M", 256, 256, "M"):
            if v == "M":
                layers.append(nn.MaxPool2d(2))
            else:
                layers += [nn.Conv2d(cin, v, 3, padding=1), nn.BatchNorm2d(v), nn.ReLU(inplace=True)]
                cin = v
        self.features = nn.Sequential(*layers)
        self.classifier = nn.Sequential(nn.Flatten(), nn.Linear(256 * 4 * 4, 1024), nn.ReLU(), nn.Dropout(),
                                        nn.Linear(1024, 1024), nn.ReLU(), nn.Linear(1024, classes))

    def forward(self, x):
        return self.classifier(self.features(x))


@model("vgg_small")
def vgg_small(path):
    net = tv(lambda weights=None: VggSmall())
    return image(128), export_torch(net, image(128), path)


if __name__ == "__main__":
    zoo.main()
