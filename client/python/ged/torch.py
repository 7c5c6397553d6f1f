"""ged.torch: run PyTorch modules on the ged daemon.

    fast = ged.torch.compile(model, (x,))
    y = fast(x)          # the module's own output structure, as torch tensors

compile() exports the module with torch.onnx.export (opset 17, eval mode),
adds the graph to a session of its own on the daemon, compiles it, and
returns a CompiledModule. Calls convert tensors to numpy, run the graph
(through shared memory when the client uses the local fast path) and
rebuild the module's outputs: one tensor for one output, else the tuple,
list or dict the module returns.

Inputs that need a new compile: the exported graph has the example inputs'
dtypes and shapes (dim 0 free with dynamic_batch=True). A call whose input
signature the graph does not accept recompiles for it (a new export and
graph in the same session, cached by signature) and logs a warning on the
"ged.torch" logger naming the input that changed; with recompile=False it
raises RecompileRequired instead.
"""

import io
import logging
import threading
import weakref

import numpy as np
import torch
from torch.utils import _pytree as pytree

from .client import Client
from .tensors import bfloat16

log = logging.getLogger("ged.torch")

OPSET = 17


class RecompileRequired(RuntimeError):
    """A call's inputs do not fit the compiled graph and recompiling is off."""


def _to_numpy(t):
    t = t.detach()
    if t.device.type != "cpu":
        t = t.cpu()
    t = t.contiguous()
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().view(np.uint16).view(bfloat16)
    return t.numpy()


def _to_torch(a):
    if isinstance(a, np.ndarray) and a.dtype == bfloat16:
        return torch.from_numpy(a.view(np.uint16).view(np.int16).copy()).view(torch.bfloat16)
    if isinstance(a, list):
        return [_to_torch(x) for x in a]
    return torch.from_numpy(a) if a is not None else None


def _flat_inputs(inputs):
    if isinstance(inputs, torch.Tensor):
        inputs = (inputs,)
    inputs = tuple(inputs)
    for i, t in enumerate(inputs):
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"ged.torch: input {i} is a {type(t).__name__}; only tensors are supported")
    return inputs


def _signature(inputs, dynamic_batch):
    return tuple((t.dtype, (None,) + tuple(t.shape[1:]) if dynamic_batch and t.dim() > 0 else tuple(t.shape))
                 for t in inputs)


def _close(session):
    try:
        session.close()
    except Exception:  # the daemon may already be gone at interpreter exit
        pass


class CompiledModule:
    """A module compiled on the daemon; call it like the module."""

    def __init__(self, module, example_inputs, client, dynamic_batch, options, recompile):
        self.module = module
        self.client = client if client is not None else Client()
        self.dynamic_batch = bool(dynamic_batch)
        self.options = dict(options or {})
        self.recompile = recompile
        self.recompiles = 0
        self._session = self.client.session()
        self._finalizer = weakref.finalize(self, _close, self._session)
        self._graphs = {}  # input signature -> (graph, output spec)
        self._lock = threading.Lock()
        self._compile(_flat_inputs(example_inputs))

    def close(self):
        """Destroys the daemon session (and every graph compiled for this module)."""
        self._finalizer()

    @property
    def graph(self):
        """The graph of the example inputs (the first compiled)."""
        return next(iter(self._graphs.values()))[0]

    def _compile(self, inputs):
        with torch.no_grad():
            expected = self.module(*inputs)
        flat, spec = pytree.tree_flatten(expected)
        names = [f"input_{i}" for i in range(len(inputs))]
        outputs = [f"output_{i}" for i in range(len(flat))]
        dynamic_axes = None
        if self.dynamic_batch:
            dynamic_axes = {n: {0: "batch"} for n in names + outputs}
        buffer = io.BytesIO()
        torch.onnx.export(self.module, inputs, buffer, input_names=names, output_names=outputs,
                          dynamic_axes=dynamic_axes, opset_version=OPSET, do_constant_folding=True)
        graph = self._session.add_graph(buffer.getvalue(), options=self.options)
        graph.compile()
        self._graphs[_signature(inputs, self.dynamic_batch)] = (graph, spec)
        return graph, spec

    def _graph_for(self, inputs):
        key = _signature(inputs, self.dynamic_batch)
        found = self._graphs.get(key)
        if found is not None:
            return found
        first = next(iter(self._graphs))
        changes = []
        if len(first) != len(key):
            changes.append(f"{len(key)} inputs instead of {len(first)}")
        for i, (a, b) in enumerate(zip(first, key)):
            if a != b:
                changes.append(f"input {i} is {b[0]}{list(b[1])}, compiled for {a[0]}{list(a[1])}")
        what = "; ".join(changes)
        if not self.recompile:
            raise RecompileRequired(f"ged.torch: these inputs need a new compile ({what}); pass "
                                    "recompile=True, or dynamic_batch=True when only the batch changes")
        self.recompiles += 1
        log.warning("ged.torch: recompiling %s for new inputs (%s)", type(self.module).__name__, what)
        return self._compile(inputs)

    def __call__(self, *inputs):
        inputs = _flat_inputs(inputs)
        with self._lock:
            graph, spec = self._graph_for(inputs)
        results = graph.run([_to_numpy(t) for t in inputs])
        return pytree.tree_unflatten([_to_torch(r) for r in results], spec)


def compile(module, example_inputs, client=None, dynamic_batch=None, options=None, *, recompile=True):
    """Compiles `module` for `example_inputs` (a tensor or a tuple of tensors) on the daemon.

    client: a ged.Client (default: ged.Client(), i.e. $GED_ADDRESS / 127.0.0.1:50051).
    dynamic_batch: True exports dim 0 of every input and output as free.
    options: GE option keys (docs/options.md) for the graph.
    recompile: on inputs the graph does not accept, recompile (logged) or raise RecompileRequired.
    """
    return CompiledModule(module, example_inputs, client, dynamic_batch, options, recompile)
