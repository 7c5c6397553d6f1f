"""Exceptions raised by the ged client.

Every failed call raises a GedError subclass chosen by the gRPC status code,
carrying that code (a grpc.StatusCode) and the daemon's message unchanged,
so callers can catch broad (GedError) or narrow (NotFoundError).
"""

import grpc


class GedError(Exception):
    """A call to the daemon failed: `code` is the grpc.StatusCode, `message` the daemon's text."""

    def __init__(self, code, message, rpc=None):
        self.code = code
        self.message = message
        self.rpc = rpc
        where = f"{rpc}: " if rpc else ""
        super().__init__(f"{where}{code.name}: {message}")


class CancelledError(GedError): pass
class UnknownError(GedError): pass
class InvalidArgumentError(GedError): pass
class DeadlineExceededError(GedError): pass
class NotFoundError(GedError): pass
class AlreadyExistsError(GedError): pass
class PermissionDeniedError(GedError): pass
class ResourceExhaustedError(GedError): pass
class FailedPreconditionError(GedError): pass
class AbortedError(GedError): pass
class OutOfRangeError(GedError): pass
class UnimplementedError(GedError): pass
class InternalError(GedError): pass
class UnavailableError(GedError): pass
class DataLossError(GedError): pass
class UnauthenticatedError(GedError): pass


_BY_CODE = {
    grpc.StatusCode.CANCELLED: CancelledError,
    grpc.StatusCode.UNKNOWN: UnknownError,
    grpc.StatusCode.INVALID_ARGUMENT: InvalidArgumentError,
    grpc.StatusCode.DEADLINE_EXCEEDED: DeadlineExceededError,
    grpc.StatusCode.NOT_FOUND: NotFoundError,
    grpc.StatusCode.ALREADY_EXISTS: AlreadyExistsError,
    grpc.StatusCode.PERMISSION_DENIED: PermissionDeniedError,
    grpc.StatusCode.RESOURCE_EXHAUSTED: ResourceExhaustedError,
    grpc.StatusCode.FAILED_PRECONDITION: FailedPreconditionError,
    grpc.StatusCode.ABORTED: AbortedError,
    grpc.StatusCode.OUT_OF_RANGE: OutOfRangeError,
    grpc.StatusCode.UNIMPLEMENTED: UnimplementedError,
    grpc.StatusCode.INTERNAL: InternalError,
    grpc.StatusCode.UNAVAILABLE: UnavailableError,
    grpc.StatusCode.DATA_LOSS: DataLossError,
    grpc.StatusCode.UNAUTHENTICATED: UnauthenticatedError,
}

# google.rpc.Code numbers (RunGraphStream replies carry them as ints).
_BY_NUMBER = {code.value[0]: code for code in grpc.StatusCode}


def error_for(code, message, rpc=None):
    """The GedError subclass instance for a grpc.StatusCode or its number."""
    if isinstance(code, int):
        code = _BY_NUMBER.get(code, grpc.StatusCode.UNKNOWN)
    return _BY_CODE.get(code, GedError)(code, message, rpc)


def from_rpc_error(error, rpc=None):
    """Turns a grpc.RpcError into the matching GedError."""
    return error_for(error.code(), error.details() or "", rpc)
