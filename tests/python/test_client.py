"""The ged Python client against a real daemon over gRPC: models in every
form, every dtype, errors as exceptions with code and message, variables,
retries on UNAVAILABLE, message limits, and the shared-memory switch when
the daemon has it off."""

import hashlib
import json
import os
import socket
import tempfile
import threading
import time
import unittest
import urllib.request
from unittest import mock

import grpc
import numpy as np
from google.protobuf import text_format
from onnx import TensorProto

import ged
from ged._proto import graph_pb2
from daemon import Daemon
import models


def sample(dtype, shape):
    npd = ged.dtype_from_proto(dtype)
    n = int(np.prod(shape))
    if npd == object:
        return np.array(["", "a", "bé", "ccc", "d\x00e", "f" * 100][:n], dtype=object).reshape(shape)
    if npd == ged.bfloat16:
        return (np.arange(n, dtype=np.uint16) * 257).reshape(shape).view(ged.bfloat16)
    if npd == np.bool_:
        return (np.arange(n) % 3 == 1).reshape(shape)
    if npd.kind == "c":
        return (np.arange(n) - 2.5 + 1j * np.arange(n)).astype(npd).reshape(shape)
    if npd.kind == "f":
        return (np.arange(n) * 0.37 - 1.1).astype(npd).reshape(shape)
    return (np.arange(n) * 7 + (1 if npd.kind == "u" else -11)).astype(npd).reshape(shape)


def as_sent(array):
    """What the daemon returns for `array` (strings come back as bytes)."""
    if array.dtype == object:
        return np.vectorize(lambda s: s.encode("utf-8"), otypes=[object])(array)
    return array


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ClientTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.daemon = Daemon()
        cls.client = ged.Client(cls.daemon.address)

    @classmethod
    def tearDownClass(cls):
        cls.client.close()
        log = cls.daemon.log()
        code = cls.daemon.stop()
        if code != 0:
            raise AssertionError(f"ged exited {code} (3: it leaked call state or sessions):\n{log}")

    def test_defaults_come_from_the_environment(self):
        with mock.patch.dict(os.environ, {"GED_ADDRESS": "127.0.0.1:1234", "GED_TOKEN": "secret"}):
            c = ged.Client()
            self.assertEqual((c.address, c.token), ("127.0.0.1:1234", "secret"))
        with mock.patch.dict(os.environ, {}, clear=True):
            c = ged.Client()
            self.assertEqual((c.address, c.token), ("127.0.0.1:50051", ""))

    def test_add_graph_takes_a_model_proto_a_path_or_bytes(self, tmp=None):
        model = models.add_mul([2, 3])
        path = os.path.join(self.daemon.dir.name, "add_mul.onnx")
        with open(path, "wb") as f:
            f.write(model.SerializeToString())
        a, b = sample(TensorProto.FLOAT, [2, 3]), sample(TensorProto.FLOAT, [2, 3]) + 1
        with self.client.session() as s:
            for form in (model, path, model.SerializeToString()):
                g = s.add_graph(form)
                self.assertEqual([i.name for i in g.inputs], ["a", "b"])
                self.assertEqual([(o.name, o.shape) for o in g.outputs], [("sum", (2, 3)), ("product", (2, 3))])
                result = g.compile()
                self.assertGreater(result.node_count, 0)
                total, product = g.run([a, b])
                np.testing.assert_array_equal(total, a + b)
                np.testing.assert_array_equal(product, a * b)
                total, _ = g.run({"b": b, "a": a})
                np.testing.assert_array_equal(total, a + b)
            with self.assertRaises(TypeError):
                s.add_graph(12)
            with self.assertRaisesRegex(KeyError, "no input"):
                g.run({"c": a})

    def test_models_go_by_digest_first_and_bytes_only_when_asked(self):
        daemon = Daemon("--cache-dir", os.path.join(self.daemon.dir.name, "digest-cache"))
        try:
            client = ged.Client(daemon.address, digest_first_bytes=1)
            model = models.add_mul([2, 3]).SerializeToString()
            a, b = sample(TensorProto.FLOAT, [2, 3]), sample(TensorProto.FLOAT, [2, 3]) + 1
            hits = []
            for _ in range(2):
                with client.session() as s:
                    g = s.add_graph(model)
                    hits.append(g.compile().cache_hit)
                    total, _ = g.run([a, b])
                    np.testing.assert_array_equal(total, a + b)
            self.assertEqual(hits, [False, True])
            # The second add sent only the digest: the daemon imported the model once.
            with open(os.path.join(daemon.dir.name, "ready.json")) as f:
                metrics = json.load(f)["metrics"]
            text = urllib.request.urlopen(f"http://{metrics}/metrics", timeout=30).read().decode()
            self.assertIn("ged_model_imports_total 1\n", text)
            # The digest is ged's: a known value (base/sha256.h, ModelBytesDigest).
            self.assertEqual(len(ged.model_digest(b"")), 32)
            self.assertNotEqual(ged.model_digest(b""), ged.model_digest(b"\0"))
            client.close()
        finally:
            self.assertEqual(daemon.stop(), 0)

    def test_compile_options_reach_the_daemon(self):
        with self.client.session() as s:
            g = s.add_graph(models.add_mul([2, 3]))
            engines = set(g.compile().nodes_per_engine)
            busiest = max(engines - {"ge_local"})
            h = s.add_graph(models.add_mul([2, 3]))
            result = h.compile(options={"ge.exec.exclude_engines": busiest})
            self.assertNotIn(busiest, result.nodes_per_engine)
            a = np.ones([2, 3], np.float32)
            np.testing.assert_array_equal(h.run([a, a])[0], a + a)

    def test_every_dtype_round_trips(self):
        with self.client.session() as s:
            for name in models.DTYPES:
                dtype = getattr(TensorProto, name)
                x = sample(dtype, [2, 3])
                builders = [models.passthrough] + ([] if name.startswith("COMPLEX") else [models.identity])
                for build in builders:
                    with self.subTest(dtype=name, graph=build.__name__):
                        g = s.add_graph(build(dtype, [2, 3]))
                        g.compile()
                        (y,) = g.run([x])
                        self.assertEqual(y.dtype, x.dtype)
                        self.assertEqual(y.shape, x.shape)
                        np.testing.assert_array_equal(y, as_sent(x))

    def test_daemon_errors_are_exceptions_with_code_and_message(self):
        with self.client.session() as s:
            g = s.add_graph(models.add_mul([2, 3]))
            g.compile()
            with self.assertRaises(ged.InvalidArgumentError) as e:
                g.run([np.zeros([2, 4], np.float32), np.zeros([2, 3], np.float32)])
            self.assertIs(e.exception.code, grpc.StatusCode.INVALID_ARGUMENT)
            self.assertIn(f"session {s.id} graph {g.id}", e.exception.message)
            self.assertIn("input 0", e.exception.message)
            self.assertIsInstance(e.exception, ged.GedError)
            with self.assertRaises(ged.InvalidArgumentError) as e:
                s.add_graph(b"not an onnx model")
            self.assertIn("bad ONNX model", e.exception.message)
            with self.assertRaises(ged.InvalidArgumentError) as e:
                s.add_graph(models.add_mul([2]), options={"ge.no_such_option": "1"})
            self.assertIn("ge.no_such_option", e.exception.message)
            g.remove()
            with self.assertRaises(ged.NotFoundError) as e:
                g.run([np.zeros([2, 3], np.float32)] * 2)
            self.assertIs(e.exception.code, grpc.StatusCode.NOT_FOUND)
        with self.assertRaises(ged.NotFoundError):
            g.run([np.zeros([2, 3], np.float32)] * 2)  # the session is gone too
        with self.assertRaises(ged.InvalidArgumentError):
            self.client.session(options={"ge.dump_graph": "7"})

    def test_variables(self):
        # c = Variable([10, 20]); every run adds x to it (AssignAdd) and returns the sum.
        counter = text_format.Parse("""
            name: "counter"
            nodes { name: "x" type: "Data" attrs { key: "index" value { i: 0 } }
                    output_types { tensor { dtype: DT_FLOAT shape { dims: 2 } } } }
            nodes { name: "c" type: "Variable"
                    attrs { key: "dtype" value { i: 1 } }
                    attrs { key: "shape" value { shape { dims: 2 } } }
                    attrs { key: "value" value { t { dtype: DT_FLOAT dims: 2 raw_data: "\\000\\000 A\\000\\000\\240A" } } }
                    output_types { tensor { dtype: DT_FLOAT shape { dims: 2 } } } }
            nodes { name: "n" type: "AssignAdd" inputs { node: "c" port: 0 } inputs { node: "x" port: 0 }
                    input_types { tensor { dtype: DT_FLOAT shape { dims: 2 } } }
                    input_types { tensor { dtype: DT_FLOAT shape { dims: 2 } } }
                    output_types { tensor { dtype: DT_FLOAT shape { dims: 2 } } } }
            nodes { name: "out" type: "NetOutput" inputs { node: "n" port: 0 }
                    input_types { tensor { dtype: DT_FLOAT shape { dims: 2 } } } }
            """, graph_pb2.GraphDef())
        with self.client.session() as s:
            g = s.add_graph(counter)
            (y,) = g.run([np.array([1, 2], np.float32)])
            np.testing.assert_array_equal(y, [11, 22])
            np.testing.assert_array_equal(s.get_variable("c"), [11, 22])
            s.set_variable("c", np.array([100, 200], np.float32))
            (y,) = g.run([np.array([1, 1], np.float32)])
            np.testing.assert_array_equal(y, [101, 201])
            # The daemon's code and message reach Python.
            with self.assertRaises(ged.NotFoundError) as e:
                s.get_variable("nope")
            self.assertIs(e.exception.code, grpc.StatusCode.NOT_FOUND)
            self.assertIn("nope", e.exception.message)
            with self.assertRaises(ged.InvalidArgumentError):
                s.set_variable("c", np.ones([3], np.float32))
        with self.client.session() as other:  # another session has no `c`
            with self.assertRaises(ged.NotFoundError):
                other.get_variable("c")

    def test_large_tensors_pass_the_default_grpc_limit(self):
        x = np.arange(6 * 1024 * 1024, dtype=np.float32)  # 24 MiB, beyond gRPC's 4 MiB default
        with self.client.session() as s:
            g = s.add_graph(models.passthrough(TensorProto.FLOAT, [x.size]))
            np.testing.assert_array_equal(g.run([x])[0], x)

    def test_shared_memory_off(self):
        self.assertFalse(self.client.status().shared_memory)
        with self.client.session() as s:
            g = s.add_graph(models.identity(TensorProto.FLOAT, [4]))
            g.run([np.ones(4, np.float32)])
            self.assertEqual(g.last_run, (0, 0))  # auto: the daemon has it off, so gRPC
        strict = ged.Client(self.daemon.address, shared_memory=True)
        with self.assertRaisesRegex(ged.FailedPreconditionError, "--shared-memory"):
            strict.uses_shared_memory
        with self.assertRaises(ged.FailedPreconditionError) as e:
            strict._register_shared_memory("r", "/ged-test-none", 0, 64)
        self.assertIn("shared-memory I/O is off", e.exception.message)

    def test_unavailable_is_retried_with_backoff(self):
        port = free_port()
        c = ged.Client(f"127.0.0.1:{port}", max_retries=3, initial_backoff=0.1, max_backoff=1.0, timeout=5)
        start = time.monotonic()
        with self.assertRaises(ged.UnavailableError) as e:
            c.status()
        self.assertGreaterEqual(time.monotonic() - start, 0.1 + 0.2 + 0.4)
        self.assertIs(e.exception.code, grpc.StatusCode.UNAVAILABLE)
        # A daemon that comes up while the client backs off is reached.
        started = {}
        thread = threading.Thread(target=lambda: started.setdefault("d", Daemon(listen=f"127.0.0.1:{port}")))
        thread.start()
        try:
            c = ged.Client(f"127.0.0.1:{port}", max_retries=12, initial_backoff=0.05, max_backoff=1.0, timeout=5)
            self.assertFalse(c.status().draining)
        finally:
            thread.join()
            self.assertEqual(started["d"].stop(), 0)


class TokenTest(unittest.TestCase):
    """A daemon with tenants: the token (argument or $GED_TOKEN) travels as a bearer token."""

    def test_tokens_authenticate_the_tenant(self):
        with tempfile.TemporaryDirectory() as work:
            config = os.path.join(work, "ged.yaml")
            with open(config, "w") as f:
                digest = hashlib.sha256(b"alice-token").hexdigest()
                f.write(f"tenants:\n  - {{name: alice, token_sha256: {digest}}}\n")
            daemon = Daemon("--config", config)
            try:
                with ged.Client(daemon.address, token="alice-token").session() as s:
                    self.assertEqual([x.session_id for x in s.client.list_sessions()], [s.id])
                with mock.patch.dict(os.environ, {"GED_TOKEN": "alice-token"}):
                    ged.Client(daemon.address).status()
                for token in ("", "bob-token"):
                    with self.assertRaises(ged.UnauthenticatedError) as e:
                        ged.Client(daemon.address, token=token).session()
                    self.assertIs(e.exception.code, grpc.StatusCode.UNAUTHENTICATED)
                    self.assertNotIn("bob-token", e.exception.message)
            finally:
                self.assertEqual(daemon.stop(), 0)


if __name__ == "__main__":
    unittest.main()
