"""Small ONNX models built with onnx.helper for the Python client tests."""

from onnx import TensorProto, helper

DTYPES = ["FLOAT", "UINT8", "INT8", "UINT16", "INT16", "INT32", "INT64", "STRING", "BOOL", "FLOAT16", "DOUBLE",
          "UINT32", "UINT64", "COMPLEX64", "COMPLEX128", "BFLOAT16"]


def _model(graph):
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def passthrough(dtype, shape):
    """The graph input is the graph output (no node): every dtype."""
    x = helper.make_tensor_value_info("x", dtype, shape)
    return _model(helper.make_graph([], "passthrough", [x], [x]))


def identity(dtype, shape):
    x = helper.make_tensor_value_info("x", dtype, shape)
    y = helper.make_tensor_value_info("y", dtype, shape)
    return _model(helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "identity", [x], [y]))


def add_mul(shape):
    """(a + b, a * b) on float32."""
    a = helper.make_tensor_value_info("a", TensorProto.FLOAT, shape)
    b = helper.make_tensor_value_info("b", TensorProto.FLOAT, shape)
    s = helper.make_tensor_value_info("sum", TensorProto.FLOAT, shape)
    p = helper.make_tensor_value_info("product", TensorProto.FLOAT, shape)
    nodes = [helper.make_node("Add", ["a", "b"], ["sum"]), helper.make_node("Mul", ["a", "b"], ["product"])]
    return _model(helper.make_graph(nodes, "add_mul", [a, b], [s, p]))
