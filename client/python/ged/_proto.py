"""The generated ge.v1 messages and stubs (built into build/python by CMake)."""

try:
    from ge.v1 import graph_pb2, service_pb2, service_pb2_grpc  # noqa: F401
except ImportError as e:  # pragma: no cover - a setup problem, said plainly
    raise ImportError(
        "ged needs the generated ge.v1 stubs: build the project (scripts/build.sh) and put "
        "build/python on PYTHONPATH beside client/python") from e
