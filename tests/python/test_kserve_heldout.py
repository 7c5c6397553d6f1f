"""Held-out check of KServe v2 serving (written with the rest, run after
them): an MLP repository model with two versions, dynamic batching and two
instances, compared with numpy under concurrent clients sending batches of
different sizes, and poll mode picking up a model added while ged runs."""

import os
import shutil
import tempfile
import threading
import unittest

import grpc
import numpy as np

import kserve_repo as kr
from daemon import Daemon, poll_until
from kserve_repo import pb


def reference(x, weights):
    w1, w2 = weights
    return np.maximum(x @ w1, 0) @ w2


class HeldOutTest(unittest.TestCase):
    def test_mlp_versions_batches_and_poll(self):
        with tempfile.TemporaryDirectory(prefix="ged-kserve-held-") as root:
            weights = {}
            for version, seed in ((1, 3), (2, 4)):
                graph, weights[version] = kr.mlp_graph(16, seed)
                kr.save(os.path.join(root, "mlp"), version, graph,
                        "max_batch_size: 16\ndynamic_batching { preferred_batch_size: [ 8 ] "
                        "max_queue_delay_microseconds: 20000 }\ninstance_group [ { count: 2 } ]\n"
                        "version_policy { all { } }\n")
            daemon = Daemon("--model-repository", root, "--no-cache", "--model-control-mode", "poll",
                            "--repository-poll-secs", "1", timeout=300)
            client = kr.Client(daemon.address)
            try:
                meta = client.ModelMetadata(pb.ModelMetadataRequest(name="mlp"))
                self.assertEqual(sorted(meta.versions), ["1", "2"])
                errors = []

                def worker(i):
                    rng = np.random.default_rng(i)
                    for j in range(6):
                        rows = 1 + (i + j) % 5
                        version = 1 + (i + j) % 2
                        x = rng.standard_normal((rows, 16)).astype(np.float32)
                        try:
                            reply = client.ModelInfer(kr.raw_request("mlp", {"x": x}, version=str(version)))
                            y = kr.outputs_of(reply)["y"]
                            np.testing.assert_allclose(y, reference(x, weights[version]), rtol=1e-4, atol=1e-4)
                            self.assertEqual(reply.model_version, str(version))
                        except Exception as e:  # collected: asserted below on the main thread
                            errors.append(e)

                threads = [threading.Thread(target=worker, args=(i,)) for i in range(12)]
                for t in threads:
                    t.start()
                for t in threads:
                    t.join()
                self.assertEqual(errors, [])
                # Poll mode: a model copied in later is found and served.
                shutil.copytree(os.path.join(root, "mlp"), os.path.join(root, "mlp_copy"))
                with open(os.path.join(root, "mlp_copy", "config.pbtxt"), "w") as f:
                    f.write("max_batch_size: 16\n")
                def copy_ready():
                    try:
                        return client.ModelReady(pb.ModelReadyRequest(name="mlp_copy")).ready
                    except grpc.RpcError:
                        return False

                self.assertTrue(poll_until(copy_ready, timeout=120))
                x = np.ones((3, 16), dtype=np.float32)
                y = kr.outputs_of(client.ModelInfer(kr.raw_request("mlp_copy", {"x": x})))["y"]
                np.testing.assert_allclose(y, reference(x, weights[2]), rtol=1e-4, atol=1e-4)
            finally:
                client.close()
                self.assertEqual(daemon.stop(), 0)


if __name__ == "__main__":
    unittest.main()
