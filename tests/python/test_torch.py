"""ged.torch.compile against a real daemon: torchvision's resnet18 equals
eager mode within 1e-4 through gRPC and through shared memory; output
structures, dynamic batch, and inputs that need a new compile."""

import os
import unittest
from unittest import mock

import torch
import torchvision

import ged
import ged.torch
from daemon import Daemon


class TwoHeads(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(8, 4)

    def forward(self, x, y):
        h = self.linear(x)
        return h.relu(), {"sum": h + y, "max": torch.max(h, dim=1).values}


class TorchTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        torch.manual_seed(0)
        cls.daemon = Daemon("--shared-memory", unix_socket=True)

    @classmethod
    def tearDownClass(cls):
        log = cls.daemon.log()
        code = cls.daemon.stop()
        if code != 0:
            raise AssertionError(f"ged exited {code} (3: it leaked call state or sessions):\n{log}")

    def test_resnet18_matches_eager_through_grpc_and_shared_memory(self):
        model = torchvision.models.resnet18(weights=None).eval()
        x = torch.randn(1, 3, 224, 224)
        with torch.no_grad():
            expected = model(x)
        for shm in (False, True):
            with self.subTest(shared_memory=shm):
                compiled = ged.torch.compile(model, (x,), client=ged.Client(self.daemon.local_address, shared_memory=shm))
                try:
                    y = compiled(x)
                    self.assertIsInstance(y, torch.Tensor)
                    self.assertEqual(y.shape, (1, 1000))
                    torch.testing.assert_close(y, expected, rtol=0, atol=1e-4)
                    self.assertEqual(compiled.graph.last_run, (1, 1) if shm else (0, 0))
                    x2 = torch.randn(1, 3, 224, 224)
                    with torch.no_grad():
                        torch.testing.assert_close(compiled(x2), model(x2), rtol=0, atol=1e-4)
                finally:
                    compiled.close()

    def test_output_structure_and_dynamic_batch(self):
        module = TwoHeads().eval()
        x, y = torch.randn(2, 8), torch.randn(2, 4)
        compiled = ged.torch.compile(module, (x, y), client=ged.Client(self.daemon.address), dynamic_batch=True)
        try:
            for batch in (2, 5, 1):
                x, y = torch.randn(batch, 8), torch.randn(batch, 4)
                relu, heads = compiled(x, y)
                e_relu, e_heads = module(x, y)
                self.assertEqual(sorted(heads), ["max", "sum"])
                torch.testing.assert_close(relu, e_relu.detach(), rtol=1e-5, atol=1e-5)
                for k in heads:
                    torch.testing.assert_close(heads[k], e_heads[k].detach(), rtol=1e-5, atol=1e-5)
            self.assertEqual(compiled.recompiles, 0)
        finally:
            compiled.close()

    def test_inputs_needing_a_new_compile_say_so(self):
        module = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.ReLU()).eval()
        with mock.patch.dict(os.environ, {"GED_ADDRESS": self.daemon.address}):
            compiled = ged.torch.compile(module, torch.randn(1, 3, 8, 8))  # the default ged.Client()
        strict = ged.torch.compile(module, torch.randn(1, 3, 8, 8), client=ged.Client(self.daemon.address),
                                   recompile=False)
        try:
            x = torch.randn(1, 3, 10, 10)
            with self.assertLogs("ged.torch", "WARNING") as logs:
                y = compiled(x)
            self.assertIn("input 0 is torch.float32[1, 3, 10, 10], compiled for torch.float32[1, 3, 8, 8]",
                          logs.output[0])
            self.assertEqual(compiled.recompiles, 1)
            with torch.no_grad():
                torch.testing.assert_close(y, module(x), rtol=1e-5, atol=1e-5)
            with self.assertRaisesRegex(ged.torch.RecompileRequired, r"input 0 is torch.float32\[1, 3, 10, 10\]"):
                strict(x)
        finally:
            compiled.close()
            strict.close()


if __name__ == "__main__":
    unittest.main()
