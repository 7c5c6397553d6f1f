"""Client, Session and Graph: the daemon's API in Python.

    with ged.Client().session() as session:
        graph = session.add_graph("model.onnx")
        graph.compile()
        (y,) = graph.run([x])

Every call has a deadline (`timeout`, seconds), sends the tenant token as
`authorization: Bearer <token>`, and is retried with exponential backoff
while the daemon answers UNAVAILABLE (starting, restarting, draining);
other failures raise a ged.GedError subclass with the gRPC code and the
daemon's message. Message limits are protobuf's 2 GiB ceiling, as the
daemon's and the C++ client's. A Client is safe to share between threads.
"""

import collections
import hashlib
import itertools
import os
import struct
import threading
import time

import grpc
import numpy as np

from . import shared_memory as _shm
from ._proto import graph_pb2, service_pb2, service_pb2_grpc
from .errors import FailedPreconditionError, InvalidArgumentError, from_rpc_error
from .tensors import EmptySequence, dtype_from_proto, dtype_to_proto, from_value, to_value

DEFAULT_ADDRESS = "127.0.0.1:50051"
MAX_MESSAGE_BYTES = 2**31 - 1

IoInfo = collections.namedtuple("IoInfo", "name kind dtype shape")
IoInfo.__doc__ = """A graph input or output: kind is "tensor", "sequence" or "optional";
dtype a numpy dtype (of the elements for sequences and optionals); shape a
tuple with None for an unknown dim, or None for an unknown rank."""

RunStats = collections.namedtuple("RunStats", "shared_memory_inputs shared_memory_outputs")
RunStats.__doc__ = "How many of the last run's inputs and outputs went through shared memory."

CompileResult = collections.namedtuple("CompileResult", "cache_key node_count nodes_per_engine compile_seconds cache_hit",
                                       defaults=(False,))


def default_address():
    """$GED_ADDRESS, else 127.0.0.1:50051."""
    return os.environ.get("GED_ADDRESS") or DEFAULT_ADDRESS


def _is_unix(address):
    """ged maps shared memory only for clients on its unix socket."""
    return address.startswith("unix:")


def _tls_credentials(ca, cert, key):
    """grpc.ssl_channel_credentials from PEM files (each None or a path)."""
    def read(path, what):
        if not path:
            return None
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError as e:
            raise InvalidArgumentError(grpc.StatusCode.INVALID_ARGUMENT,
                                       f"cannot read the TLS {what} file {path}: {e.strerror}") from None
        if not data:
            raise InvalidArgumentError(grpc.StatusCode.INVALID_ARGUMENT, f"the TLS {what} file {path} is empty")
        return data

    if bool(cert) != bool(key):
        raise InvalidArgumentError(grpc.StatusCode.INVALID_ARGUMENT,
                                   "a TLS client certificate needs its key, and a key its certificate "
                                   "(tls_cert, tls_key)")
    return grpc.ssl_channel_credentials(root_certificates=read(ca, "CA"), private_key=read(key, "key"),
                                        certificate_chain=read(cert, "certificate"))


def _io_info(io):
    t = io.type
    kinds = {graph_pb2.ValueTypeDef.TENSOR: "tensor", graph_pb2.ValueTypeDef.SEQUENCE: "sequence",
             graph_pb2.ValueTypeDef.OPTIONAL: "optional"}
    kind = kinds.get(t.kind, "tensor")
    while t.kind != graph_pb2.ValueTypeDef.TENSOR:
        t = t.element
    try:
        dtype = dtype_from_proto(t.tensor.dtype)
    except TypeError:
        dtype = None
    shape = None if t.tensor.shape.unknown_rank else tuple(d if d >= 0 else None for d in t.tensor.shape.dims)
    return IoInfo(io.name, kind, dtype, shape)


def _model_bytes(model):
    if isinstance(model, graph_pb2.GraphDef):  # ged's own graph form, kept as the message
        return model
    if isinstance(model, (bytes, bytearray, memoryview)):
        return bytes(model)
    if isinstance(model, (str, os.PathLike)):
        with open(model, "rb") as f:
            return f.read()
    if hasattr(model, "SerializeToString"):  # onnx.ModelProto
        return model.SerializeToString()
    raise TypeError(f"add_graph takes an onnx.ModelProto, a ged GraphDef, a path or bytes, "
                    f"not {type(model).__name__}")


def _options(options):
    msg = service_pb2.Options()
    for k, v in (options or {}).items():
        msg.entries[str(k)] = v if isinstance(v, str) else (("1" if v else "0") if isinstance(v, bool) else str(v))
    return msg


DIGEST_FIRST_BYTES = 4 << 20
_DIGEST_CHUNK = 8 << 20


def model_digest(data):
    """The digest ged keys a model's bytes by (AddGraphRequest.onnx_model_digest, docs/api.md):
    SHA-256 over the 8-byte little-endian length of "model bytes" and that text, the model's
    8-byte little-endian length, and the SHA-256 of each consecutive 8 MiB chunk."""
    view = memoryview(data)
    h = hashlib.sha256()
    h.update(struct.pack("<q", 11) + b"model bytes")
    h.update(struct.pack("<q", len(view)))
    for offset in range(0, len(view), _DIGEST_CHUNK):
        h.update(hashlib.sha256(view[offset:offset + _DIGEST_CHUNK]).digest())
    return h.digest()


class Client:
    """A connection to a ged daemon.

    address: HOST:PORT, or unix:PATH for ged's unix socket (default
    $GED_ADDRESS, else 127.0.0.1:50051). token: the tenant's bearer token
    (default $GED_TOKEN; none for a daemon without tenants). shared_memory:
    None uses the local fast path when the address is ged's unix socket and
    the daemon has shared memory enabled; True requires it; False never uses
    it.

    ONNX models of at least digest_first_bytes bytes (default 4 MiB; 0: never)
    are added by their digest first (model_digest), and their bytes are sent
    only when the daemon has no compiled model of them for this tenant.

    TLS, for a daemon serving it (gectl's --tls-* flags): tls_ca is the PEM
    file of the CA that signed the daemon's certificate (None: the system's
    roots); tls_cert and tls_key this client's certificate chain and key,
    for mutual TLS; tls_server_name the name to check the certificate
    against when the address's host is not in it. Any of them turns TLS on;
    an unreadable file, or a certificate without its key, raises
    InvalidArgumentError here.
    """

    def __init__(self, address=None, token=None, *, timeout=300.0, max_retries=4, initial_backoff=0.05,
                 max_backoff=2.0, shared_memory=None, tls_ca=None, tls_cert=None, tls_key=None,
                 tls_server_name=None, digest_first_bytes=DIGEST_FIRST_BYTES):
        self.address = address or default_address()
        self.digest_first_bytes = digest_first_bytes
        self.token = token if token is not None else os.environ.get("GED_TOKEN", "")
        self.timeout = timeout
        self.max_retries = max_retries
        self.initial_backoff = initial_backoff
        self.max_backoff = max_backoff
        self._metadata = (("authorization", "Bearer " + self.token),) if self.token else None
        channel_options = [
            ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
            ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
        ]
        if tls_ca or tls_cert or tls_key or tls_server_name:
            if tls_server_name:
                channel_options.append(("grpc.ssl_target_name_override", tls_server_name))
            credentials = _tls_credentials(tls_ca, tls_cert, tls_key)
            self._channel = grpc.secure_channel(self.address, credentials, options=channel_options)
        else:
            self._channel = grpc.insecure_channel(self.address, options=channel_options)
        self._stub = service_pb2_grpc.GraphEngineStub(self._channel)
        self._want_shm = shared_memory
        self._shm = None  # resolved on first use
        self._lock = threading.Lock()

    def close(self):
        self._channel.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def call(self, rpc, request, timeout=None):
        """Calls `rpc` (a GraphEngine method name) with retries on UNAVAILABLE; raises GedError."""
        method = getattr(self._stub, rpc)
        backoff = self.initial_backoff
        for attempt in itertools.count():
            try:
                return method(request, timeout=timeout or self.timeout, metadata=self._metadata)
            except grpc.RpcError as e:
                if e.code() == grpc.StatusCode.UNAVAILABLE and attempt < self.max_retries:
                    time.sleep(backoff)
                    backoff = min(backoff * 2, self.max_backoff)
                    continue
                raise from_rpc_error(e, rpc) from None

    def session(self, options=None):
        """A new Session (a context manager that destroys it) with session-scope GE options."""
        return Session(self, options)

    def status(self):
        return self.call("GetStatus", service_pb2.GetStatusRequest())

    def list_sessions(self):
        return list(self.call("ListSessions", service_pb2.ListSessionsRequest()).sessions)

    @property
    def uses_shared_memory(self):
        """Whether runs go through shared memory (asks the daemon once)."""
        with self._lock:
            if self._shm is None:
                if self._want_shm is False:
                    self._shm = False
                else:
                    enabled = self.status().shared_memory
                    if self._want_shm and not enabled:
                        raise FailedPreconditionError(
                            grpc.StatusCode.FAILED_PRECONDITION,
                            f"shared memory was asked for, but the daemon at {self.address} has it off "
                            "(start ged with --shared-memory)")
                    if self._want_shm and not _is_unix(self.address):
                        raise ValueError(f"shared memory needs ged's unix socket (unix:PATH), not {self.address}")
                    self._shm = bool(enabled and _is_unix(self.address))
            return self._shm

    def _register_shared_memory(self, name, key, offset, byte_size):
        self.call("RegisterSharedMemory", service_pb2.RegisterSharedMemoryRequest(
            name=name, key=key, offset=offset, byte_size=byte_size))

    def _unregister_shared_memory(self, name):
        self.call("UnregisterSharedMemory", service_pb2.UnregisterSharedMemoryRequest(name=name))

    def shared_memory_status(self):
        return list(self.call("SharedMemoryStatus", service_pb2.SharedMemoryStatusRequest()).regions)


class Session:
    """A daemon session: graphs and variables. Destroyed by close() or on leaving a `with` block."""

    def __init__(self, client, options=None):
        self.client = client
        self.id = client.call("CreateSession", service_pb2.CreateSessionRequest(options=_options(options))).session_id
        self._graph_ids = itertools.count(1)
        self._graphs = []
        self._closed = False

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        if self._closed:
            return
        self._closed = True
        for g in self._graphs:
            g._close_io()
        self.client.call("DestroySession", service_pb2.DestroySessionRequest(session_id=self.id))

    def add_graph(self, model, options=None, graph_id=None):
        """Adds an ONNX model (onnx.ModelProto, a path or bytes) or a ged GraphDef (ge.v1.GraphDef,
        which can hold Variables and Assign ops) with graph-scope options; returns its Graph."""
        graph = Graph(self, next(self._graph_ids) if graph_id is None else graph_id, _model_bytes(model),
                      dict(options or {}))
        self._graphs.append(graph)
        return graph

    def get_variable(self, name):
        """The value of session variable `name` (a numpy array)."""
        reply = self.client.call("GetVariable", service_pb2.GetVariableRequest(session_id=self.id, name=name))
        return from_value(reply.value)

    def set_variable(self, name, value):
        request = service_pb2.SetVariableRequest(session_id=self.id, name=name)
        to_value(value, request.value)
        self.client.call("SetVariable", request)


class Graph:
    """One graph of a session: compile() it, then run() it on numpy arrays."""

    def __init__(self, session, graph_id, model, options):
        self.session = session
        self.id = graph_id
        self._model = model
        self._options = options
        self._io = None
        self.last_run = None  # RunStats of the last run
        self._add()

    def _add(self):
        request = service_pb2.AddGraphRequest(session_id=self.session.id, graph_id=self.id,
                                              options=_options(self._options))
        client = self.session.client
        if isinstance(self._model, graph_pb2.GraphDef):
            request.graph_def.CopyFrom(self._model)
        else:
            if 0 < client.digest_first_bytes <= len(self._model):
                # A model the daemon compiled before for this tenant: no byte sent.
                request.onnx_model_digest = model_digest(self._model)
                reply = client.call("AddGraph", request)
                if not reply.bytes_needed:
                    self._set_io(reply)
                    return
            request.onnx_model = self._model
        reply = client.call("AddGraph", request)
        self._set_io(reply)

    def _set_io(self, reply):
        self.inputs = [_io_info(io) for io in reply.inputs]
        self.outputs = [_io_info(io) for io in reply.outputs]

    def compile(self, options=None):
        """Compiles the graph. The daemon fixes graph options when a graph is added, so `options`
        that differ from add_graph's re-add the graph with them first."""
        client = self.session.client
        if options and any(self._options.get(k) != v for k, v in options.items()):
            client.call("RemoveGraph", service_pb2.RemoveGraphRequest(session_id=self.session.id, graph_id=self.id))
            self._options = {**self._options, **options}
            self._add()
        reply = client.call("CompileGraph", service_pb2.CompileGraphRequest(session_id=self.session.id,
                                                                            graph_id=self.id))
        self._set_io(reply)
        return CompileResult(reply.cache_key, reply.summary.node_count, dict(reply.summary.nodes_per_engine),
                             reply.compile_seconds, reply.cache_hit)

    def _ordered(self, inputs):
        if isinstance(inputs, dict):
            names = [i.name for i in self.inputs]
            unknown = set(inputs) - set(names)
            if unknown:
                raise KeyError(f"graph {self.id} has no input(s) {sorted(unknown)}; its inputs: {names}")
            return [inputs.get(n) for n in names]
        if isinstance(inputs, np.ndarray):
            return [inputs]
        return list(inputs)

    def run(self, inputs, timeout=None):
        """Runs on `inputs` (a list in input order, a dict by name, or one array); returns the outputs
        in order: numpy arrays, lists of arrays for sequences, None for empty optionals."""
        values = [v if v is None or isinstance(v, (np.ndarray, list, tuple, EmptySequence)) else np.asarray(v)
                  for v in self._ordered(inputs)]
        request = service_pb2.RunGraphRequest(session_id=self.session.id, graph_id=self.id)
        client = self.session.client
        region = None
        if client.uses_shared_memory:
            if self._io is None:
                self._io = _shm.GraphIO(client)
                self._io.output_bytes.update(self._static_output_bytes())
            values = [_little_endian(v) if isinstance(v, np.ndarray) else v for v in values]
            offsets, outputs, total = _shm.plan(values, self._io.output_bytes)
            region = self._io.acquire(total)
        try:
            for i, v in enumerate(values):
                if region is not None and i in offsets:
                    self._io.write(region, offsets[i], v)
                    t = request.inputs.add().tensor
                    t.dtype = dtype_to_proto(v.dtype)
                    t.dims[:] = v.shape
                    t.shared_memory.region, t.shared_memory.offset, t.shared_memory.byte_size = \
                        region.name, offsets[i], v.nbytes
                else:
                    to_value(v, request.inputs.add())
            if region is not None:
                for i, (offset, n) in outputs.items():
                    ref = request.output_shared_memory[i]
                    ref.region, ref.offset, ref.byte_size = region.name, offset, n
            reply = client.call("RunGraph", request, timeout)
            read = (lambda ref: self._io.read(region, ref)) if region is not None else None
            results = [from_value(v, read) for v in reply.outputs]
            self.last_run = RunStats(
                sum(1 for v in request.inputs if v.tensor.HasField("shared_memory")),
                sum(1 for v in reply.outputs if v.tensor.HasField("shared_memory")))
        finally:
            if region is not None:
                region.lock.release()
        if self._io is not None:
            for i, r in enumerate(results):
                if isinstance(r, np.ndarray) and r.dtype != object:
                    self._io.output_bytes[i] = r.nbytes
        return results

    def _static_output_bytes(self):
        sizes = {}
        for i, o in enumerate(self.outputs):
            if o.kind == "tensor" and o.dtype is not None and o.dtype != object and o.shape is not None \
                    and all(d is not None for d in o.shape):
                sizes[i] = int(np.prod(o.shape, dtype=np.int64)) * o.dtype.itemsize
        return sizes

    def _close_io(self):
        if self._io is not None:
            self._io.close()
            self._io = None

    def remove(self):
        self._close_io()
        self.session.client.call("RemoveGraph", service_pb2.RemoveGraphRequest(session_id=self.session.id,
                                                                               graph_id=self.id))


def _little_endian(array):
    if array.dtype.byteorder == ">":
        array = array.astype(array.dtype.newbyteorder("<"))
    return np.ascontiguousarray(array)
