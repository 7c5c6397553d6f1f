"""Triton-layout model repositories of small ONNX models for the KServe v2
tests (onnx.helper, opset 17), and the client side of the protocol: stubs
generated from tests/python/kserve/kserve_v2_test.proto (a proto written
for the tests from the protocol's specification, not ged's), raw tensor
encoding, and a channel with a bearer token."""

import os
import struct
import urllib.request

import grpc
import numpy as np
import onnx
from onnx import TensorProto, helper

import kserve_v2_test_pb2 as pb
import kserve_v2_test_pb2_grpc as pb_grpc

DATATYPES = {np.float32: "FP32", np.float64: "FP64", np.float16: "FP16", np.int64: "INT64", np.int32: "INT32",
             np.int8: "INT8", np.uint8: "UINT8", np.bool_: "BOOL"}
NUMPY = {v: k for k, v in DATATYPES.items()}


def save(model_dir, version, graph, config=None):
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    os.makedirs(os.path.join(model_dir, str(version)), exist_ok=True)
    onnx.save(model, os.path.join(model_dir, str(version), "model.onnx"))
    if config is not None:
        with open(os.path.join(model_dir, "config.pbtxt"), "w") as f:
            f.write(config)


def binary_graph(name, elem, dims, ops):
    """Inputs a, b; one output per (output name, op type) of `ops`."""
    inputs = [helper.make_tensor_value_info(n, elem, dims) for n in ("a", "b")]
    outputs = [helper.make_tensor_value_info(out, elem, dims) for out, _ in ops]
    nodes = [helper.make_node(op, ["a", "b"], [out]) for out, op in ops]
    return helper.make_graph(nodes, name, inputs, outputs)


def mlp_graph(width, seed):
    rng = np.random.default_rng(seed)
    w1 = rng.standard_normal((width, width)).astype(np.float32) * 0.1
    w2 = rng.standard_normal((width, width)).astype(np.float32) * 0.1
    nodes = [helper.make_node("MatMul", ["x", "w1"], ["h"]), helper.make_node("Relu", ["h"], ["r"]),
             helper.make_node("MatMul", ["r", "w2"], ["y"])]
    graph = helper.make_graph(nodes, "mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", width])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", width])],
                              [helper.make_tensor("w1", TensorProto.FLOAT, w1.shape, w1.flatten()),
                               helper.make_tensor("w2", TensorProto.FLOAT, w2.shape, w2.flatten())])
    return graph, (w1, w2)


def make_repository(root):
    """The main test repository: add_sub (batching), ident_i64 (no config),
    strings (BYTES), half (FP16 in), broken (sequence_batching)."""
    save(os.path.join(root, "add_sub"), 1,
         binary_graph("add_sub", TensorProto.FLOAT, ["n", 4], [("sum", "Add"), ("diff", "Sub")]),
         'name: "add_sub"\nplatform: "onnxruntime_onnx"\nmax_batch_size: 8\n'
         "dynamic_batching {\n  preferred_batch_size: [ 4, 8 ]\n  max_queue_delay_microseconds: 100000\n}\n"
         "instance_group [ { count: 1 kind: KIND_CPU } ]\n")
    two = helper.make_tensor("two", TensorProto.INT64, [], [2])
    save(os.path.join(root, "ident_i64"), 1,
         helper.make_graph([helper.make_node("Mul", ["x", "two"], ["y"])], "ident_i64",
                           [helper.make_tensor_value_info("x", TensorProto.INT64, [3])],
                           [helper.make_tensor_value_info("y", TensorProto.INT64, [3])], [two]))
    save(os.path.join(root, "strings"), 1,
         helper.make_graph([helper.make_node("Identity", ["s"], ["t"])], "strings",
                           [helper.make_tensor_value_info("s", TensorProto.STRING, ["n"])],
                           [helper.make_tensor_value_info("t", TensorProto.STRING, ["n"])]),
         'backend: "onnxruntime"\nmax_batch_size: 0\n')
    save(os.path.join(root, "half"), 1,
         helper.make_graph([helper.make_node("Cast", ["h"], ["f"], to=TensorProto.FLOAT)], "half",
                           [helper.make_tensor_value_info("h", TensorProto.FLOAT16, [2, 2])],
                           [helper.make_tensor_value_info("f", TensorProto.FLOAT, [2, 2])]))
    save(os.path.join(root, "broken"), 1,
         binary_graph("broken", TensorProto.FLOAT, ["n", 4], [("sum", "Add")]),
         "max_batch_size: 8\nsequence_batching { max_sequence_idle_microseconds: 1000 }\n")


class Client:
    def __init__(self, address, token=None):
        self.channel = grpc.insecure_channel(address)
        self.stub = pb_grpc.GRPCInferenceServiceStub(self.channel)
        self.metadata = [("authorization", "Bearer " + token)] if token else None

    def __getattr__(self, rpc):
        method = getattr(self.stub, rpc)
        return lambda request, **kw: method(request, metadata=self.metadata, timeout=kw.get("timeout", 60))

    def stream(self, requests):
        return self.stub.ModelStreamInfer(iter(requests), metadata=self.metadata, timeout=60)

    def close(self):
        self.channel.close()


def raw_request(model, inputs, outputs=(), request_id="", version=""):
    """A ModelInferRequest with raw contents; `inputs`: name -> numpy array
    (object arrays of bytes as BYTES)."""
    req = pb.ModelInferRequest(model_name=model, model_version=version, id=request_id)
    for name, value in inputs.items():
        t = req.inputs.add(name=name, shape=list(value.shape))
        if value.dtype == object:
            t.datatype = "BYTES"
            req.raw_input_contents.append(b"".join(struct.pack("<I", len(v)) + v for v in value.flatten()))
        else:
            t.datatype = DATATYPES[value.dtype.type]
            req.raw_input_contents.append(np.ascontiguousarray(value).tobytes())
    for name in outputs:
        req.outputs.add(name=name)
    return req


def outputs_of(response):
    """name -> numpy array of a reply's raw outputs."""
    out = {}
    for tensor, raw in zip(response.outputs, response.raw_output_contents):
        if tensor.datatype == "BYTES":
            items, at = [], 0
            while at < len(raw):
                (n,) = struct.unpack_from("<I", raw, at)
                items.append(raw[at + 4:at + 4 + n])
                at += 4 + n
            out[tensor.name] = np.array(items, dtype=object).reshape(tensor.shape)
        else:
            out[tensor.name] = np.frombuffer(raw, dtype=NUMPY[tensor.datatype]).reshape(tensor.shape)
    return out


def metrics(address):
    with urllib.request.urlopen(f"http://{address}/metrics", timeout=30) as r:
        return r.read().decode()


def metric_value(text, line_prefix):
    for line in text.splitlines():
        if line.startswith(line_prefix):
            return float(line.rsplit(" ", 1)[1])
    return None


def token_sha256(token):
    import hashlib
    return hashlib.sha256(token.encode()).hexdigest()


class RepositoryDaemon:
    """A repository (make_repository) served by a ged with the default
    control mode (every model loaded at start) and no tenants. `daemon` is
    made by `daemon_class` (tests/python/daemon.py's Daemon)."""

    def __init__(self, daemon_class, prefix):
        import tempfile
        self.repo = tempfile.TemporaryDirectory(prefix=prefix)
        make_repository(self.repo.name)
        self.daemon = daemon_class("--model-repository", self.repo.name, "--no-cache", timeout=300)

    def stop(self):
        code = self.daemon.stop()
        self.repo.cleanup()
        assert code == 0, f"ged exited with {code}"


class TenantRepositoryDaemon:
    """A repository (make_repository) served by a ged in explicit control
    mode with two tenants: `ops` (admin: repository control) and `app`
    (may infer add_sub only), tokens "ops-token" and "app-token". `daemon`
    is made by `daemon_class` (tests/python/daemon.py's Daemon)."""

    def __init__(self, daemon_class, prefix):
        import tempfile
        self.repo = tempfile.TemporaryDirectory(prefix=prefix)
        make_repository(self.repo.name)
        self.config = os.path.abspath(self.repo.name + "-ged.yaml")
        with open(self.config, "w") as f:
            f.write(f"tenants:\n  - name: ops\n    token_sha256: {token_sha256('ops-token')}\n    admin: true\n"
                    f"  - name: app\n    token_sha256: {token_sha256('app-token')}\n    models: [add_sub]\n")
        self.daemon = daemon_class("--config", self.config, "--model-repository", self.repo.name, "--no-cache",
                                   "--model-control-mode", "explicit", "--load-model", "add_sub", timeout=300)

    def stop(self):
        code = self.daemon.stop()
        os.remove(self.config)
        self.repo.cleanup()
        assert code == 0, f"ged exited with {code}"
