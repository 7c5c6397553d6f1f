"""numpy arrays <-> ge.v1.Value messages.

Every DataType of proto/ge/v1/graph.proto maps to a numpy dtype:
float32, uint8, int8, uint16, int16, int32, int64, bool, float16, float64,
uint32, uint64, complex64, complex128; strings are numpy object (or str /
bytes) arrays sent as UTF-8 bytes and returned as object arrays of bytes;
bfloat16, which numpy lacks, is the structured dtype `ged.bfloat16` (one
little-endian uint16 field holding the bits). A Value is an array, a list or
tuple of arrays (a sequence) or None (an empty optional).
"""

import numpy as np

from ._proto import graph_pb2, service_pb2

# Raw bfloat16 bits: numpy has no bfloat16, so a one-field structured dtype
# marks them (a plain uint16 array stays DT_UINT16).
bfloat16 = np.dtype([("bfloat16", "<u2")])

_NUMPY_TO_DT = {
    np.dtype(np.float32): graph_pb2.DT_FLOAT,
    np.dtype(np.uint8): graph_pb2.DT_UINT8,
    np.dtype(np.int8): graph_pb2.DT_INT8,
    np.dtype(np.uint16): graph_pb2.DT_UINT16,
    np.dtype(np.int16): graph_pb2.DT_INT16,
    np.dtype(np.int32): graph_pb2.DT_INT32,
    np.dtype(np.int64): graph_pb2.DT_INT64,
    np.dtype(np.bool_): graph_pb2.DT_BOOL,
    np.dtype(np.float16): graph_pb2.DT_FLOAT16,
    np.dtype(np.float64): graph_pb2.DT_DOUBLE,
    np.dtype(np.uint32): graph_pb2.DT_UINT32,
    np.dtype(np.uint64): graph_pb2.DT_UINT64,
    np.dtype(np.complex64): graph_pb2.DT_COMPLEX64,
    np.dtype(np.complex128): graph_pb2.DT_COMPLEX128,
    bfloat16: graph_pb2.DT_BFLOAT16,
}
_DT_TO_NUMPY = {dt: npd for npd, dt in _NUMPY_TO_DT.items()}


def dtype_to_proto(dtype):
    """The ge.v1.DataType of a numpy dtype (object, str and bytes: DT_STRING)."""
    dtype = np.dtype(dtype)
    if dtype.kind in "OUS":
        return graph_pb2.DT_STRING
    le = dtype.newbyteorder("<") if dtype.byteorder == ">" else dtype
    try:
        return _NUMPY_TO_DT[le]
    except KeyError:
        raise TypeError(f"numpy dtype {dtype} has no ged DataType") from None


def dtype_from_proto(dt):
    """The numpy dtype of a ge.v1.DataType (object for DT_STRING)."""
    if dt == graph_pb2.DT_STRING:
        return np.dtype(object)
    try:
        return _DT_TO_NUMPY[dt]
    except KeyError:
        raise TypeError(f"ged DataType {dt} has no numpy dtype") from None


def _little_endian(array):
    if array.dtype.byteorder == ">":
        array = array.astype(array.dtype.newbyteorder("<"))
    return np.ascontiguousarray(array)


def _string_items(array):
    for item in array.reshape(-1):
        if isinstance(item, bytes):
            yield item
        elif isinstance(item, str):
            yield item.encode("utf-8")
        else:
            raise TypeError(f"a string tensor holds {type(item).__name__}, not str or bytes")


def array_to_tensor(array, tensor):
    """Fills a ge.v1.Tensor from a numpy array (anything np.asarray takes)."""
    array = np.asarray(array)
    tensor.dtype = dtype_to_proto(array.dtype)
    tensor.dims[:] = array.shape
    if tensor.dtype == graph_pb2.DT_STRING:
        tensor.string_data.extend(_string_items(array))
    else:
        tensor.raw_data = _little_endian(array).tobytes()
    return tensor


def tensor_to_array(tensor, data=None):
    """A numpy array of a ge.v1.Tensor; `data` replaces raw_data (shared memory)."""
    shape = tuple(tensor.dims)
    if tensor.dtype == graph_pb2.DT_STRING:
        out = np.empty(len(tensor.string_data), dtype=object)
        out[:] = list(tensor.string_data)
        return out.reshape(shape)
    dtype = dtype_from_proto(tensor.dtype)
    raw = tensor.raw_data if data is None else data
    return np.frombuffer(raw, dtype=dtype).reshape(shape).copy()


def to_value(value, message=None):
    """A ge.v1.Value of an array, a list/tuple of arrays or None."""
    message = message if message is not None else service_pb2.Value()
    if value is None:
        return message
    if isinstance(value, (list, tuple)):
        seq = message.sequence
        items = [np.asarray(v) for v in value]
        if not items:
            raise ValueError("an empty sequence has no element dtype: pass np arrays in it, or use "
                             "ged.tensors.empty_sequence(dtype)")
        seq.element_dtype = dtype_to_proto(items[0].dtype)
        for item in items:
            array_to_tensor(item, seq.tensors.add())
        return message
    if isinstance(value, EmptySequence):
        message.sequence.element_dtype = dtype_to_proto(value.dtype)
        return message
    array_to_tensor(value, message.tensor)
    return message


def from_value(message, read_shared=None):
    """An array, a list of arrays or None. `read_shared(ref)` returns the bytes of a tensor in shared memory."""
    kind = message.WhichOneof("kind")
    if kind == "tensor":
        t = message.tensor
        data = read_shared(t.shared_memory) if t.HasField("shared_memory") and read_shared else None
        return tensor_to_array(t, data)
    if kind == "sequence":
        return [tensor_to_array(t) for t in message.sequence.tensors]
    return None


class EmptySequence:
    """An empty sequence input: it still needs an element dtype."""

    def __init__(self, dtype):
        self.dtype = np.dtype(dtype)


def empty_sequence(dtype):
    return EmptySequence(dtype)
