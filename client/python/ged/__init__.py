"""ged: the Python client of the ged graph engine daemon.

    import ged
    with ged.Client().session() as s:
        g = s.add_graph("model.onnx")
        g.compile()
        outputs = g.run([x])

`ged.torch.compile(module, example_inputs)` runs a PyTorch module on the
daemon (imported on first use, so `import ged` does not load torch).
"""

import importlib

from .client import Client, CompileResult, Graph, IoInfo, Session, default_address, model_digest
from .errors import (AbortedError, AlreadyExistsError, CancelledError, DataLossError, DeadlineExceededError,
                     FailedPreconditionError, GedError, InternalError, InvalidArgumentError, NotFoundError,
                     OutOfRangeError, PermissionDeniedError, ResourceExhaustedError, UnauthenticatedError,
                     UnavailableError, UnimplementedError, UnknownError)
from .tensors import bfloat16, dtype_from_proto, dtype_to_proto, empty_sequence

__version__ = "0.1.0"


def __getattr__(name):
    if name == "torch":
        return importlib.import_module(".torch", __name__)
    raise AttributeError(f"module 'ged' has no attribute '{name}'")
