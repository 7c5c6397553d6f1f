"""ged serving a Triton-layout model repository over the KServe v2 HTTP/REST
protocol, driven by a client that uses only the standard library
(kserve_http.py, written from the protocol's specification): health,
metadata, config, JSON and binary tensors, BYTES and FP16, errors and their
HTTP statuses, body and JSON bounds, dynamic batching under concurrent
clients, and bearer tokens with an admin and a model-limited tenant. The
repository is the gRPC tests' (kserve_repo.make_repository)."""

import json
import socket
import threading
import unittest

import kserve_http as kh
import kserve_repo as kr
from daemon import Daemon


class KServeHttpTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.served = kr.RepositoryDaemon(Daemon, "ged-kserve-http-")
        cls.daemon = cls.served.daemon
        cls.client = kh.Client(cls.daemon.http_address)

    @classmethod
    def tearDownClass(cls):
        cls.client.close()
        cls.served.stop()

    def expect_error(self, status, words, fn, *args, **kw):
        with self.assertRaises(kh.HttpError) as ctx:
            fn(*args, **kw)
        self.assertEqual(ctx.exception.status, status, ctx.exception.message)
        self.assertIn(words, ctx.exception.message)

    def test_ready_file_names_the_http_address(self):
        self.assertTrue(self.daemon.http_address.startswith("127.0.0.1:"))
        self.assertNotEqual(self.daemon.http_address.split(":")[1], "0")

    def test_health_and_server_metadata(self):
        self.assertEqual(self.client.get("/v2/health/live"), {"live": True})
        # `broken` failed to load: not ready (Triton's strict rule).
        self.assertEqual(self.client.get("/v2/health/ready", ok=(503,)), {"ready": False})
        meta = self.client.get("/v2")
        self.assertEqual(meta["name"], "ged")
        self.assertIn("binary_tensor_data", meta["extensions"])
        self.assertEqual(self.client.get("/v2/models/add_sub/ready"), {"name": "add_sub", "ready": True})
        self.assertEqual(self.client.get("/v2/models/add_sub/versions/1/ready")["ready"], True)
        self.assertEqual(self.client.get("/v2/models/broken/ready", ok=(503,))["ready"], False)
        self.expect_error(404, "nope", self.client.get, "/v2/models/nope/ready")
        self.expect_error(404, "no KServe v2 endpoint", self.client.get, "/v2/what")

    def test_model_metadata_and_config(self):
        meta = self.client.get("/v2/models/add_sub")
        self.assertEqual(meta["name"], "add_sub")
        self.assertEqual(meta["versions"], ["1"])
        self.assertEqual(meta["platform"], "onnxruntime_onnx")
        self.assertEqual([(t["name"], t["datatype"], t["shape"]) for t in meta["inputs"]],
                         [("a", "FP32", [-1, 4]), ("b", "FP32", [-1, 4])])
        self.assertEqual([t["name"] for t in meta["outputs"]], ["sum", "diff"])
        self.assertEqual(self.client.get("/v2/models/add_sub/versions/1")["name"], "add_sub")
        self.expect_error(404, "version", self.client.get, "/v2/models/add_sub/versions/9")
        config = self.client.get("/v2/models/add_sub/config")
        self.assertEqual(config["name"], "add_sub")
        self.assertEqual(config["max_batch_size"], 8)
        self.assertEqual([i["name"] for i in config["input"]], ["a", "b"])
        stats = self.client.get("/v2/models/add_sub/stats")
        self.assertEqual(stats["model_stats"][0]["name"], "add_sub")

    def test_repository_index(self):
        index = {m["name"]: m for m in self.client.post("/v2/repository/index")}
        self.assertEqual(sorted(index), ["add_sub", "broken", "half", "ident_i64", "strings"])
        self.assertEqual(index["add_sub"]["state"], "READY")
        self.assertIn("sequence_batching", index["broken"]["reason"])
        ready = [m["name"] for m in self.client.post("/v2/repository/index", {"ready": True})]
        self.assertNotIn("broken", ready)
        # Mode none: control is FAILED_PRECONDITION, 400.
        self.expect_error(400, "none", self.client.post, "/v2/repository/models/add_sub/load")

    def test_infer_json_flat_and_nested(self):
        a = [float(i) for i in range(8)]
        b = [0.5] * 8
        for nested in (None, "a"):
            reply, out = self.client.infer("add_sub", {"a": ("FP32", [2, 4], a), "b": ("FP32", [2, 4], b)},
                                           request_id="req-7", nested=nested)
            self.assertEqual(reply["id"], "req-7")
            self.assertEqual(reply["model_name"], "add_sub")
            self.assertEqual(reply["model_version"], "1")
            self.assertEqual(out["sum"], ("FP32", [2, 4], [x + y for x, y in zip(a, b)]))
            self.assertEqual(out["diff"][2], [x - y for x, y in zip(a, b)])
        _, out = self.client.infer("add_sub", {"a": ("FP32", [2, 4], a), "b": ("FP32", [2, 4], b)},
                                   outputs=["diff"], version="1")
        self.assertEqual(list(out), ["diff"])
        _, out = self.client.infer("ident_i64", {"x": ("INT64", [3], [1, -2, 1 << 40])})
        self.assertEqual(out["y"], ("INT64", [3], [2, -4, 1 << 41]))

    def test_infer_binary_data_both_ways(self):
        a = [1.25, -2.5, 3.0, 4.0]
        b = [0.25, 0.5, 0.75, 1.0]
        inputs = {"a": ("FP32", [1, 4], a), "b": ("FP32", [1, 4], b)}
        # Binary inputs, every output binary.
        reply, out = self.client.infer("add_sub", inputs, binary_inputs=True, binary_output=True)
        self.assertEqual(reply["outputs"][0]["parameters"]["binary_data_size"], 16)
        self.assertNotIn("data", reply["outputs"][0])
        self.assertEqual(out["sum"][2], [x + y for x, y in zip(a, b)])
        # JSON inputs, one output binary and one JSON.
        reply, out = self.client.infer("add_sub", inputs, outputs={"sum": True, "diff": False})
        by_name = {o["name"]: o for o in reply["outputs"]}
        self.assertIn("parameters", by_name["sum"])
        self.assertEqual(by_name["diff"]["data"], [x - y for x, y in zip(a, b)])
        self.assertEqual(out["sum"][2], [x + y for x, y in zip(a, b)])
        # The reply's header says where its JSON ends.
        status, headers, data = self.client.send(
            "POST", "/v2/models/add_sub/infer",
            json.dumps({"inputs": [{"name": n, "datatype": "FP32", "shape": [1, 4], "data": v}
                                   for n, (_, _, v) in inputs.items()],
                        "parameters": {"binary_data_output": True}}).encode())
        self.assertEqual(status, 200)
        length = int(headers["inference-header-content-length"])
        self.assertEqual(len(data) - length, 32)
        self.assertEqual(json.loads(data[:length])["model_name"], "add_sub")

    def test_bytes_and_fp16(self):
        s = [b"", b"ab", "b\u00e9".encode(), b"x\x00y"]
        _, out = self.client.infer("strings", {"s": ("BYTES", [4], s)}, binary_inputs=True, binary_output=True)
        self.assertEqual(out["t"], ("BYTES", [4], s))
        _, out = self.client.infer("strings", {"s": ("BYTES", [2], ["p", "q\u00e9"])})
        self.assertEqual(out["t"][2], ["p", "q\u00e9"])
        h = [1.5, -2.25, 65504.0, 0.0009765625]
        _, out = self.client.infer("half", {"h": ("FP16", [2, 2], h)}, binary_inputs=True)
        self.assertEqual(out["f"], ("FP32", [2, 2], h))
        _, out = self.client.infer("half", {"h": ("FP16", [2, 2], h)})
        self.assertEqual(out["f"][2], h)

    def test_errors_have_their_status_and_name_what_is_wrong(self):
        a = ("FP32", [1, 4], [0.0] * 4)
        infer = self.client.infer
        self.expect_error(404, "nope", infer, "nope", {"a": a})
        self.expect_error(404, "version", infer, "add_sub", {"a": a, "b": a}, version="9")
        self.expect_error(503, "sequence_batching", infer, "broken", {"a": a, "b": a})
        self.expect_error(400, "'..'", infer, "..", {"a": a})
        self.expect_error(400, "FP64", infer, "add_sub", {"a": a, "b": ("FP64", [1, 4], [0.0] * 4)})
        self.expect_error(400, "shape", infer, "add_sub", {"a": a, "b": ("FP32", [1, 5], [0.0] * 5)})
        nine = ("FP32", [9, 4], [0.0] * 36)
        self.expect_error(400, "max_batch_size 8", infer, "add_sub", {"a": nine, "b": nine})
        self.expect_error(400, "'b' is missing", infer, "add_sub", {"a": a})
        self.expect_error(400, "holds 3 elements, the shape needs 4", infer, "add_sub",
                          {"a": ("FP32", [1, 4], [0.0] * 3), "b": a})
        self.expect_error(400, "does not fit", infer, "ident_i64", {"x": ("INT64", [3], [1, 2, 1 << 63])})
        self.expect_error(429, "max_tensor_bytes", infer, "add_sub",
                          {"a": ("FP32", [1 << 40, 1 << 40], []), "b": a})
        self.expect_error(400, "timeout", infer, "add_sub", {"a": a, "b": a}, raw_parameters={"timeout": "soon"})
        # Not JSON, a wrong method, a JSON bomb.
        status, _, data = self.client.send("POST", "/v2/models/add_sub/infer", b"{nope")
        self.assertEqual(status, 400)
        self.assertIn("not valid JSON", json.loads(data)["error"])
        status, headers, data = self.client.send("GET", "/v2/models/add_sub/infer")
        self.assertEqual(status, 405)
        self.assertEqual(headers["allow"], "POST")
        bomb = b'{"inputs":[{"name":"a","datatype":"FP32","shape":[1],"data":' + b"[" * 5000 + b"]" * 5000 + b"}]}"
        status, _, data = self.client.send("POST", "/v2/models/add_sub/infer", bomb)
        self.assertEqual(status, 400)
        self.assertIn("deeper than 64", json.loads(data)["error"])

    def test_binary_header_and_sizes_are_checked(self):
        header = json.dumps({"inputs": [{"name": "a", "datatype": "FP32", "shape": [1, 4],
                                         "parameters": {"binary_data_size": 16}},
                                        {"name": "b", "datatype": "FP32", "shape": [1, 4],
                                         "parameters": {"binary_data_size": 16}}]}).encode()
        path = "/v2/models/add_sub/infer"
        for length, tail, words in ((len(header) + 100, b"\0" * 32, "beyond the body"),
                                    ("12abc", b"\0" * 32, "not a byte count"),
                                    (len(header), b"\0" * 20, "runs past"),
                                    (len(header), b"\0" * 40, "sum to 32 bytes, the body carries 40")):
            status, _, data = self.client.send("POST", path, header + tail,
                                               {"Inference-Header-Content-Length": str(length)})
            self.assertEqual(status, 400, data)
            self.assertIn(words, json.loads(data)["error"])

    def test_body_above_max_message_bytes_is_refused_unread(self):
        host, port = self.daemon.http_address.split(":")
        with socket.create_connection((host, int(port)), timeout=30) as s:
            s.sendall(b"POST /v2/models/add_sub/infer HTTP/1.1\r\nHost: x\r\nContent-Length: 300000000\r\n\r\n")
            response = b""
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                response += chunk
        self.assertTrue(response.startswith(b"HTTP/1.1 413"), response[:100])
        self.assertIn(b"max_message_bytes", response)

    def test_concurrent_requests_are_batched(self):
        before = self.client.get("/v2/models/add_sub/stats")["model_stats"][0]
        results, errors = {}, []

        def one(i):
            c = kh.Client(self.daemon.http_address)
            try:
                v = [float(i)] * 4
                _, out = c.infer("add_sub", {"a": ("FP32", [1, 4], v), "b": ("FP32", [1, 4], v)},
                                 binary_inputs=bool(i % 2))
                results[i] = out["sum"][2]
            except Exception as e:  # noqa: BLE001 - reported below
                errors.append(e)
            finally:
                c.close()

        threads = [threading.Thread(target=one, args=(i,)) for i in range(16)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])
        for i in range(16):
            self.assertEqual(results[i], [2.0 * i] * 4)
        after = self.client.get("/v2/models/add_sub/stats")["model_stats"][0]
        rows = int(after["inference_count"]) - int(before.get("inference_count", 0))
        runs = int(after["execution_count"]) - int(before.get("execution_count", 0))
        self.assertEqual(rows, 16)
        self.assertLess(runs, 16, "no batch held more than one request")
        text = kr.metrics(self.daemon.metrics_address)
        self.assertIsNotNone(kr.metric_value(text, 'ged_requests_total{rpc="http:ModelInfer",code="OK"}'))


class KServeHttpTenantsTest(unittest.TestCase):
    """Explicit control mode with an admin tenant and one limited to add_sub."""

    @classmethod
    def setUpClass(cls):
        cls.served = kr.TenantRepositoryDaemon(Daemon, "ged-kserve-http-ctl-")
        cls.daemon = cls.served.daemon
        cls.ops = kh.Client(cls.daemon.http_address, "ops-token")
        cls.app = kh.Client(cls.daemon.http_address, "app-token")

    @classmethod
    def tearDownClass(cls):
        cls.ops.close()
        cls.app.close()
        cls.served.stop()

    def expect_error(self, status, fn, *args, **kw):
        with self.assertRaises(kh.HttpError) as ctx:
            fn(*args, **kw)
        self.assertEqual(ctx.exception.status, status, ctx.exception.message)
        return ctx.exception.message

    def test_tokens_name_tenants_as_on_grpc(self):
        for token in (None, "wrong-token"):
            c = kh.Client(self.daemon.http_address, token)
            status, headers, data = c.send("GET", "/v2/health/live")
            self.assertEqual(status, 401)
            self.assertEqual(headers["www-authenticate"], "Bearer")
            self.assertNotIn(b"wrong-token", data)
            c.close()
        c = kh.Client(self.daemon.http_address)
        status, _, _ = c.send("GET", "/v2/health/live", headers={"Authorization": "Basic b3BzOng="})
        self.assertEqual(status, 401)
        c.close()
        self.assertEqual(self.ops.get("/v2/health/live"), {"live": True})
        self.assertEqual(self.app.get("/v2/health/ready"), {"ready": True})  # only add_sub was asked for

    def test_control_is_for_operators_and_models_lists_limit_tenants(self):
        x = ("INT64", [3], [1, 2, 3])
        self.expect_error(503, self.ops.infer, "ident_i64", {"x": x})
        self.assertIn("admin", self.expect_error(403, self.app.post, "/v2/repository/models/ident_i64/load"))
        self.assertIn("config", self.expect_error(403, self.ops.post, "/v2/repository/models/ident_i64/load",
                                                  {"parameters": {"config": "{}"}}))
        self.assertEqual(self.ops.post("/v2/repository/models/ident_i64/load"), {})
        _, out = self.ops.infer("ident_i64", {"x": x})
        self.assertEqual(out["y"][2], [2, 4, 6])
        # The app tenant sees only add_sub.
        self.expect_error(404, self.app.infer, "ident_i64", {"x": x})
        self.expect_error(404, self.app.get, "/v2/models/ident_i64")
        self.assertEqual([m["name"] for m in self.app.post("/v2/repository/index")], ["add_sub"])
        a = ("FP32", [1, 4], [1.0] * 4)
        _, out = self.app.infer("add_sub", {"a": a, "b": a})
        self.assertEqual(out["sum"][2], [2.0] * 4)
        self.assertEqual(self.ops.post("/v2/repository/models/ident_i64/unload"), {})
        self.expect_error(503, self.ops.infer, "ident_i64", {"x": x})


if __name__ == "__main__":
    unittest.main()
