#!/usr/bin/env python3
"""Writes examples/models/sample_cnn.onnx, the small model ./scripts/run.sh runs.

A 28x28 single-channel classifier (Conv, BatchNormalization, Relu, MaxPool,
GlobalAveragePool, Flatten, Gemm, Softmax) with seeded random weights, so the
file is reproducible. Run: /usr/bin/python3 scripts/make_sample_model.py
"""
import os
import warnings

import torch


class SampleCnn(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(1, 8, 3, padding=1)
        self.bn1 = torch.nn.BatchNorm2d(8)
        self.conv2 = torch.nn.Conv2d(8, 16, 3, padding=1)
        self.fc = torch.nn.Linear(16, 10)

    def forward(self, x):
        x = torch.nn.functional.max_pool2d(torch.relu(self.bn1(self.conv1(x))), 2)
        x = torch.relu(self.conv2(x))
        x = torch.flatten(torch.nn.functional.adaptive_avg_pool2d(x, 1), 1)
        return torch.softmax(self.fc(x), dim=1)


def main():
    torch.manual_seed(7)
    net = SampleCnn().eval()
    with torch.no_grad():  # non-trivial batch-norm statistics
        net.bn1.running_mean.uniform_(-0.1, 0.1)
        net.bn1.running_var.uniform_(0.5, 1.5)
    out = os.path.join(os.path.dirname(__file__), "..", "examples", "models", "sample_cnn.onnx")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(net, (torch.randn(1, 1, 28, 28),), out, opset_version=17,
                          input_names=["image"], output_names=["probabilities"],
                          dynamic_axes={"image": {0: "batch"}, "probabilities": {0: "batch"}},
                          do_constant_folding=False)


if __name__ == "__main__":
    main()
