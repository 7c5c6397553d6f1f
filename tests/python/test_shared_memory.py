"""The local fast path against a daemon started with --shared-memory: runs
whose tensors travel through a registered POSIX shared-memory region, the
region's life, outputs that outgrow it, and the daemon's checks on every
reference (unknown regions, bad keys, ranges past the end, a shrunk
object)."""

import os
import threading
import unittest
from multiprocessing import shared_memory

import grpc
import numpy as np
from onnx import TensorProto

import ged
from ged._proto import service_pb2
from daemon import Daemon
import models


class SharedMemoryTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.daemon = Daemon("--shared-memory", unix_socket=True)
        cls.client = ged.Client(cls.daemon.local_address)

    @classmethod
    def tearDownClass(cls):
        cls.client.close()
        log = cls.daemon.log()
        code = cls.daemon.stop()
        if code != 0:
            raise AssertionError(f"ged exited {code} (3: it leaked call state or sessions):\n{log}")

    def test_runs_go_through_shared_memory(self):
        self.assertTrue(self.client.status().shared_memory)
        self.assertTrue(self.client.uses_shared_memory)
        a = np.arange(12, dtype=np.float32).reshape(3, 4)
        b = np.full([3, 4], 0.5, np.float32)
        with self.client.session() as s:
            g = s.add_graph(models.add_mul([3, 4]))
            g.compile()
            for _ in range(3):
                a += 1  # the region is reused: every run must see its own inputs
                total, product = g.run([a, b])
                np.testing.assert_array_equal(total, a + b)
                np.testing.assert_array_equal(product, a * b)
                self.assertEqual(g.last_run, (2, 2))
            regions = self.client.shared_memory_status()
            self.assertEqual(len(regions), 1)
            key = regions[0].key
            self.assertTrue(os.path.exists("/dev/shm" + key))
        # Closing the session unregisters and unlinks the region.
        self.assertEqual(self.client.shared_memory_status(), [])
        self.assertFalse(os.path.exists("/dev/shm" + key))

    def test_outputs_that_outgrow_the_region_come_back_in_the_message(self):
        with self.client.session() as s:
            g = s.add_graph(models.identity(TensorProto.INT32, ["n", 8]))
            small, large = np.ones([1, 8], np.int32), np.arange(4000 * 8, dtype=np.int32).reshape(4000, 8)
            np.testing.assert_array_equal(g.run([small])[0], small)
            self.assertEqual(g.last_run, (1, 0))  # the output size is unknown before the first run
            np.testing.assert_array_equal(g.run([small])[0], small)
            self.assertEqual(g.last_run, (1, 1))
            np.testing.assert_array_equal(g.run([large])[0], large)  # larger than the output's slot
            self.assertEqual(g.last_run, (1, 0))
            np.testing.assert_array_equal(g.run([large])[0], large)  # the region grew
            self.assertEqual(g.last_run, (1, 1))

    def test_threads_sharing_a_graph_get_their_own_results(self):
        with self.client.session() as s:
            g = s.add_graph(models.add_mul([64, 64]))
            g.compile()
            errors, used = [], []

            def worker(seed):
                rng = np.random.default_rng(seed)
                for _ in range(20):
                    a, b = rng.random([64, 64], np.float32), rng.random([64, 64], np.float32)
                    total, product = g.run([a, b])
                    if not (np.array_equal(total, a + b) and np.array_equal(product, a * b)):
                        errors.append(seed)
                    used.append(g.last_run)

            threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            self.assertEqual(errors, [])
            self.assertIn((2, 2), used)  # some runs took the region, the others gRPC

    def run_request(self, session, graph, tensor):
        request = service_pb2.RunGraphRequest(session_id=session.id, graph_id=graph.id)
        request.inputs.add().tensor.CopyFrom(tensor)
        return self.client.call("RunGraph", request)

    def test_every_reference_is_checked(self):
        register = self.client._register_shared_memory
        with self.assertRaisesRegex(ged.InvalidArgumentError, "not a POSIX shared-memory name"):
            register("bad", "no-slash", 0, 64)
        with self.assertRaisesRegex(ged.NotFoundError, "cannot open /ged-test-missing"):
            register("missing", "/ged-test-missing", 0, 64)
        shm = shared_memory.SharedMemory(create=True, size=4096)
        try:
            with self.assertRaises(ged.OutOfRangeError):
                register("past-end", "/" + shm.name, 4000, 200)
            register("r", "/" + shm.name, 0, 4096)
            with self.assertRaises(ged.AlreadyExistsError):
                register("r", "/" + shm.name, 0, 4096)
            with self.client.session() as s:
                g = s.add_graph(models.identity(TensorProto.FLOAT, [4]))
                np.ndarray([4], np.float32, buffer=shm.buf)[:] = [1, 2, 3, 4]
                t = service_pb2.Tensor(dtype=TensorProto.FLOAT, dims=[4])
                t.shared_memory.region, t.shared_memory.byte_size = "r", 16
                reply = self.run_request(s, g, t)
                np.testing.assert_array_equal(np.frombuffer(reply.outputs[0].tensor.raw_data, np.float32), [1, 2, 3, 4])
                cases = [("nope", 0, 16, ged.NotFoundError, "shared memory nope is not registered"),
                         ("r", 0, 8, ged.InvalidArgumentError, "needs 16 bytes"),
                         ("r", 4090, 16, ged.OutOfRangeError, "less than offset 4090")]
                for region, offset, size, error, text in cases:
                    t.shared_memory.region, t.shared_memory.offset, t.shared_memory.byte_size = region, offset, size
                    with self.assertRaises(error) as e:
                        self.run_request(s, g, t)
                    self.assertIn(f"session {s.id} graph {g.id}: input 0 (x)", e.exception.message)
                    self.assertIn(text, e.exception.message)
                # A client that shrinks its object gets an error, not a daemon killed by SIGBUS.
                os.ftruncate(shm._fd, 0)
                t.shared_memory.region, t.shared_memory.offset, t.shared_memory.byte_size = "r", 0, 16
                with self.assertRaisesRegex(ged.OutOfRangeError, "holds 0 bytes"):
                    self.run_request(s, g, t)
            self.client._unregister_shared_memory("r")
            with self.assertRaises(ged.NotFoundError):
                self.client._unregister_shared_memory("r")
        finally:
            shm.close()
            shm.unlink()


if __name__ == "__main__":
    unittest.main()
