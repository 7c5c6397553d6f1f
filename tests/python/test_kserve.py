"""ged serving a Triton-layout model repository over the KServe v2 gRPC
protocol, driven by a client generated from a proto written for the tests
(tests/python/kserve/kserve_v2_test.proto; it does not link ged): outputs,
metadata, config completion, readiness with a model that fails, the error
codes, streams, statistics, dynamic batching under concurrent clients, and
the explicit control mode with admin and model-limited tenants."""

import threading
import unittest

import grpc
import numpy as np

import kserve_repo as kr
from daemon import Daemon
from kserve_repo import pb


class KServeTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.served = kr.RepositoryDaemon(Daemon, "ged-kserve-")
        cls.daemon = cls.served.daemon
        cls.client = kr.Client(cls.daemon.address)

    @classmethod
    def tearDownClass(cls):
        cls.client.close()
        cls.served.stop()

    def expect_error(self, call, request, code, words):
        with self.assertRaises(grpc.RpcError) as ctx:
            call(request)
        self.assertEqual(ctx.exception.code(), code, ctx.exception.details())
        self.assertIn(words, ctx.exception.details())

    def test_liveness_and_strict_readiness(self):
        self.assertTrue(self.client.ServerLive(pb.ServerLiveRequest()).live)
        # `broken` failed to load: the server is not ready (Triton's strict
        # rule), and the others serve.
        self.assertFalse(self.client.ServerReady(pb.ServerReadyRequest()).ready)
        self.assertTrue(self.client.ModelReady(pb.ModelReadyRequest(name="add_sub")).ready)
        self.assertTrue(self.client.ModelReady(pb.ModelReadyRequest(name="add_sub", version="1")).ready)
        self.assertFalse(self.client.ModelReady(pb.ModelReadyRequest(name="broken")).ready)
        self.expect_error(self.client.ModelReady, pb.ModelReadyRequest(name="nope"), grpc.StatusCode.NOT_FOUND,
                          "nope")

    def test_repository_index_names_the_failure(self):
        index = {m.name: m for m in self.client.RepositoryIndex(pb.RepositoryIndexRequest()).models}
        self.assertEqual(sorted(index), ["add_sub", "broken", "half", "ident_i64", "strings"])
        self.assertEqual(index["add_sub"].state, "READY")
        self.assertEqual(index["add_sub"].version, "1")
        self.assertEqual(index["broken"].state, "UNAVAILABLE")
        self.assertIn("sequence_batching", index["broken"].reason)
        ready = [m.name for m in self.client.RepositoryIndex(pb.RepositoryIndexRequest(ready=True)).models]
        self.assertNotIn("broken", ready)

    def test_server_metadata(self):
        meta = self.client.ServerMetadata(pb.ServerMetadataRequest())
        self.assertEqual(meta.name, "ged")
        self.assertTrue(meta.version)
        self.assertIn("model_repository", meta.extensions)

    def test_model_metadata_and_completed_config(self):
        meta = self.client.ModelMetadata(pb.ModelMetadataRequest(name="add_sub"))
        self.assertEqual(meta.name, "add_sub")
        self.assertEqual(list(meta.versions), ["1"])
        self.assertEqual(meta.platform, "onnxruntime_onnx")
        self.assertEqual([(t.name, t.datatype, list(t.shape)) for t in meta.inputs],
                         [("a", "FP32", [-1, 4]), ("b", "FP32", [-1, 4])])
        self.assertEqual([t.name for t in meta.outputs], ["sum", "diff"])
        meta = self.client.ModelMetadata(pb.ModelMetadataRequest(name="ident_i64"))
        self.assertEqual([(t.datatype, list(t.shape)) for t in meta.inputs], [("INT64", [3])])
        config = self.client.ModelConfig(pb.ModelConfigRequest(name="add_sub")).config
        self.assertEqual(config.name, "add_sub")
        self.assertEqual(config.max_batch_size, 8)
        self.assertEqual([(i.name, i.data_type, list(i.dims)) for i in config.input], [("a", 11, [4]), ("b", 11, [4])])
        self.assertEqual(list(config.dynamic_batching.preferred_batch_size), [4, 8])
        config = self.client.ModelConfig(pb.ModelConfigRequest(name="ident_i64")).config
        self.assertEqual(config.max_batch_size, 0)
        self.assertEqual(config.platform, "onnxruntime_onnx")
        self.assertEqual([(o.name, o.data_type, list(o.dims)) for o in config.output], [("y", 9, [3])])

    def test_infer_raw_echoes_the_id_and_filters_outputs(self):
        a = np.arange(8, dtype=np.float32).reshape(2, 4)
        b = np.full((2, 4), 0.5, dtype=np.float32)
        reply = self.client.ModelInfer(kr.raw_request("add_sub", {"a": a, "b": b}, request_id="req-7"))
        self.assertEqual(reply.id, "req-7")
        self.assertEqual(reply.model_name, "add_sub")
        self.assertEqual(reply.model_version, "1")
        out = kr.outputs_of(reply)
        np.testing.assert_array_equal(out["sum"], a + b)
        np.testing.assert_array_equal(out["diff"], a - b)
        reply = self.client.ModelInfer(kr.raw_request("add_sub", {"a": a, "b": b}, outputs=["diff"]))
        self.assertEqual(list(kr.outputs_of(reply)), ["diff"])

    def test_infer_typed_contents(self):
        req = pb.ModelInferRequest(model_name="ident_i64")
        req.inputs.add(name="x", datatype="INT64", shape=[3]).contents.int64_contents.extend([1, -2, 1 << 40])
        out = kr.outputs_of(self.client.ModelInfer(req))
        np.testing.assert_array_equal(out["y"], np.array([2, -4, 1 << 41], dtype=np.int64))

    def test_bytes_and_fp16_travel_raw(self):
        s = np.array([b"", b"ab", "bé".encode(), b"x\x00y"], dtype=object)
        out = kr.outputs_of(self.client.ModelInfer(kr.raw_request("strings", {"s": s})))
        self.assertEqual(list(out["t"]), list(s))
        req = pb.ModelInferRequest(model_name="strings")
        req.inputs.add(name="s", datatype="BYTES", shape=[2]).contents.bytes_contents.extend([b"p", b"qq"])
        self.assertEqual(list(kr.outputs_of(self.client.ModelInfer(req))["t"]), [b"p", b"qq"])
        h = np.array([[1.5, -2.25], [65504, 0.0009765625]], dtype=np.float16)
        out = kr.outputs_of(self.client.ModelInfer(kr.raw_request("half", {"h": h})))
        np.testing.assert_array_equal(out["f"], h.astype(np.float32))

    def test_bad_requests(self):
        a = np.zeros((1, 4), dtype=np.float32)
        infer = self.client.ModelInfer
        bad = grpc.StatusCode.INVALID_ARGUMENT
        self.expect_error(infer, kr.raw_request("nope", {"a": a}), grpc.StatusCode.NOT_FOUND, "nope")
        self.expect_error(infer, kr.raw_request("add_sub", {"a": a, "b": a}, version="9"), grpc.StatusCode.NOT_FOUND,
                          "version")
        self.expect_error(infer, kr.raw_request("broken", {"a": a, "b": a}), grpc.StatusCode.UNAVAILABLE,
                          "sequence_batching")
        self.expect_error(infer, kr.raw_request("a/b", {"a": a}), bad, "'/'")
        self.expect_error(infer, kr.raw_request("..", {"a": a}), bad, "'..'")
        self.expect_error(infer, kr.raw_request("add_sub", {"a": a, "b": a.astype(np.float64)}), bad, "FP64")
        self.expect_error(infer, kr.raw_request("add_sub", {"a": a, "b": np.zeros((1, 5), np.float32)}), bad,
                          "shape")
        nine = np.zeros((9, 4), dtype=np.float32)
        self.expect_error(infer, kr.raw_request("add_sub", {"a": nine, "b": nine}), bad, "max_batch_size 8")
        self.expect_error(infer, kr.raw_request("add_sub", {"a": a}), bad, "'b' is missing")
        self.expect_error(infer, kr.raw_request("add_sub", {"a": a, "b": a}, outputs=["nope"]), bad, "nope")
        # Raw bytes that do not match the shape, typed and raw mixed, an
        # unknown datatype.
        req = kr.raw_request("add_sub", {"a": a, "b": a})
        req.raw_input_contents[1] = b"\0" * 12
        self.expect_error(infer, req, bad, "raw_input_contents holds 12 bytes")
        req = kr.raw_request("add_sub", {"a": a, "b": a})
        req.inputs[0].contents.fp32_contents.extend([0, 0, 0, 0])
        self.expect_error(infer, req, bad, "mixed")
        req = kr.raw_request("add_sub", {"a": a, "b": a})
        req.inputs[0].datatype = "FLOAT"
        self.expect_error(infer, req, bad, "unknown datatype")
        req = pb.ModelInferRequest(model_name="ident_i64")
        req.inputs.add(name="x", datatype="INT64", shape=[3]).contents.int64_contents.extend([1, 2])
        self.expect_error(infer, req, bad, "int64_contents holds 2")
        # BYTES whose length prefix runs past the end.
        req = pb.ModelInferRequest(model_name="strings")
        req.inputs.add(name="s", datatype="BYTES", shape=[1])
        req.raw_input_contents.append(b"\xff\xff\x00\x00ab")
        self.expect_error(infer, req, bad, "claims")
        # A shape whose size overflows: refused before anything is allocated.
        req = pb.ModelInferRequest(model_name="add_sub")
        req.inputs.add(name="a", datatype="FP32", shape=[1 << 40, 1 << 40])
        req.raw_input_contents.append(b"")
        self.expect_error(infer, req, grpc.StatusCode.RESOURCE_EXHAUSTED, "max_tensor_bytes")

    def test_control_is_refused_in_mode_none(self):
        self.expect_error(self.client.RepositoryModelLoad, pb.RepositoryModelLoadRequest(model_name="add_sub"),
                          grpc.StatusCode.FAILED_PRECONDITION, "none")
        self.expect_error(self.client.RepositoryModelUnload, pb.RepositoryModelUnloadRequest(model_name="add_sub"),
                          grpc.StatusCode.FAILED_PRECONDITION, "none")

    def test_stream_answers_each_request_and_a_bad_one_alone(self):
        a = np.ones((1, 4), dtype=np.float32)
        requests = [kr.raw_request("add_sub", {"a": a * i, "b": a}, request_id=str(i)) for i in range(3)]
        requests.insert(1, kr.raw_request("add_sub", {"a": a}, request_id="bad"))
        replies = {r.infer_response.id: r for r in self.client.stream(requests)}
        self.assertEqual(sorted(replies), ["0", "1", "2", "bad"])
        self.assertIn("'b' is missing", replies["bad"].error_message)
        for i in range(3):
            self.assertEqual(replies[str(i)].error_message, "")
            np.testing.assert_array_equal(kr.outputs_of(replies[str(i)].infer_response)["sum"], a * i + a)

    def test_concurrent_requests_are_batched(self):
        before = self.client.ModelStatistics(pb.ModelStatisticsRequest(name="add_sub")).model_stats[0]
        results, errors = {}, []

        def one(i):
            a = np.full((1, 4), i, dtype=np.float32)
            try:
                out = kr.outputs_of(self.client.ModelInfer(kr.raw_request("add_sub", {"a": a, "b": a})))
                results[i] = out["sum"]
            except grpc.RpcError as e:
                errors.append(e)

        threads = [threading.Thread(target=one, args=(i,)) for i in range(16)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])
        for i in range(16):
            np.testing.assert_array_equal(results[i], np.full((1, 4), 2 * i, dtype=np.float32))
        after = self.client.ModelStatistics(pb.ModelStatisticsRequest(name="add_sub")).model_stats[0]
        rows = after.inference_count - before.inference_count
        runs = after.execution_count - before.execution_count
        self.assertEqual(rows, 16)
        self.assertLess(runs, 16, "no batch held more than one request")
        text = kr.metrics(self.daemon.metrics_address)
        count = kr.metric_value(text, 'ged_inference_batch_size_count{model="add_sub"}')
        total = kr.metric_value(text, 'ged_inference_batch_size_sum{model="add_sub"}')
        self.assertGreater(total / count, 1.0)
        self.assertIsNotNone(kr.metric_value(text, 'ged_inference_requests_total{model="add_sub",version="1",code="OK"}'))
        self.assertIsNotNone(kr.metric_value(text, 'ged_inference_queue_duration_seconds_count{model="add_sub"}'))
        self.assertGreater(max(b.batch_size for b in after.batch_stats), 1)


class KServeControlTest(unittest.TestCase):
    """Explicit control mode with an admin tenant and one limited to add_sub."""

    @classmethod
    def setUpClass(cls):
        cls.served = kr.TenantRepositoryDaemon(Daemon, "ged-kserve-ctl-")
        cls.daemon = cls.served.daemon
        cls.ops = kr.Client(cls.daemon.address, "ops-token")
        cls.app = kr.Client(cls.daemon.address, "app-token")

    @classmethod
    def tearDownClass(cls):
        cls.ops.close()
        cls.app.close()
        cls.served.stop()

    def test_explicit_load_and_unload(self):
        x = np.array([1, 2, 3], dtype=np.int64)
        self.assertTrue(self.ops.ServerReady(pb.ServerReadyRequest()).ready)  # only add_sub was asked for
        index = {m.name: m for m in self.ops.RepositoryIndex(pb.RepositoryIndexRequest()).models}
        self.assertEqual(index["ident_i64"].state, "UNAVAILABLE")
        with self.assertRaises(grpc.RpcError) as ctx:
            self.ops.ModelInfer(kr.raw_request("ident_i64", {"x": x}))
        self.assertEqual(ctx.exception.code(), grpc.StatusCode.UNAVAILABLE)
        # Control is for the admin tenant, and never with a config or files.
        with self.assertRaises(grpc.RpcError) as ctx:
            self.app.RepositoryModelLoad(pb.RepositoryModelLoadRequest(model_name="ident_i64"))
        self.assertEqual(ctx.exception.code(), grpc.StatusCode.PERMISSION_DENIED)
        req = pb.RepositoryModelLoadRequest(model_name="ident_i64")
        req.parameters["config"].string_param = '{"max_batch_size": 0}'
        with self.assertRaises(grpc.RpcError) as ctx:
            self.ops.RepositoryModelLoad(req)
        self.assertEqual(ctx.exception.code(), grpc.StatusCode.PERMISSION_DENIED)
        with self.assertRaises(grpc.RpcError) as ctx:
            self.ops.RepositoryModelLoad(pb.RepositoryModelLoadRequest(model_name="../etc"))
        self.assertEqual(ctx.exception.code(), grpc.StatusCode.INVALID_ARGUMENT)
        self.ops.RepositoryModelLoad(pb.RepositoryModelLoadRequest(model_name="ident_i64"))
        out = kr.outputs_of(self.ops.ModelInfer(kr.raw_request("ident_i64", {"x": x})))
        np.testing.assert_array_equal(out["y"], 2 * x)
        # The app tenant sees only add_sub.
        with self.assertRaises(grpc.RpcError) as ctx:
            self.app.ModelInfer(kr.raw_request("ident_i64", {"x": x}))
        self.assertEqual(ctx.exception.code(), grpc.StatusCode.NOT_FOUND)
        names = [m.name for m in self.app.RepositoryIndex(pb.RepositoryIndexRequest()).models]
        self.assertEqual(names, ["add_sub"])
        a = np.ones((1, 4), dtype=np.float32)
        out = kr.outputs_of(self.app.ModelInfer(kr.raw_request("add_sub", {"a": a, "b": a})))
        np.testing.assert_array_equal(out["sum"], 2 * a)
        self.ops.RepositoryModelUnload(pb.RepositoryModelUnloadRequest(model_name="ident_i64"))
        with self.assertRaises(grpc.RpcError) as ctx:
            self.ops.ModelInfer(kr.raw_request("ident_i64", {"x": x}))
        self.assertEqual(ctx.exception.code(), grpc.StatusCode.UNAVAILABLE)
        self.assertTrue(self.ops.ServerReady(pb.ServerReadyRequest()).ready)
        with self.assertRaises(grpc.RpcError) as ctx:
            kr.Client(self.daemon.address).ServerLive(pb.ServerLiveRequest())
        self.assertEqual(ctx.exception.code(), grpc.StatusCode.UNAUTHENTICATED)


if __name__ == "__main__":
    unittest.main()
