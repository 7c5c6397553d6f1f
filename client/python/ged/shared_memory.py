"""The local fast path: tensors through POSIX shared memory.

When the daemon runs on this host with shared memory enabled
(`shared_memory: true`, docs/api.md), a Graph keeps one region: a POSIX
shared-memory object it creates (mode 0600), registers with
RegisterSharedMemory, and reuses for every run. Inputs are written into it
at 64-byte aligned offsets (the daemon reads them in place); outputs are
asked for in it and copied out after the reply. The region grows (a new
object, registered anew) when a run needs more room, and is unregistered
and unlinked when the graph, its session or the client closes.
"""

import itertools
import os
import threading
import weakref
from multiprocessing import shared_memory as _mp_shm

import numpy as np

from .tensors import dtype_to_proto, graph_pb2

ALIGNMENT = 64
_counter = itertools.count()


def _align(n):
    return (n + ALIGNMENT - 1) // ALIGNMENT * ALIGNMENT


def _release(shm):
    try:
        shm.close()
    finally:
        try:
            shm.unlink()
        except FileNotFoundError:
            pass


class Region:
    """One registered shared-memory region (owned by a Graph)."""

    def __init__(self, client, size):
        name = f"ged-{os.getpid()}-{next(_counter)}-{os.urandom(4).hex()}"
        self._shm = _mp_shm.SharedMemory(name=name, create=True, size=size)
        self._finalizer = weakref.finalize(self, _release, self._shm)
        self.name = name
        self.key = "/" + name
        self.size = size
        self.lock = threading.Lock()
        self._client = client
        try:
            client._register_shared_memory(self.name, self.key, 0, size)
        except BaseException:
            self._finalizer()
            raise

    @property
    def buffer(self):
        return self._shm.buf

    def close(self):
        if not self._finalizer.alive:
            return
        try:
            self._client._unregister_shared_memory(self.name)
        except Exception:  # the daemon may be gone; the object is ours to unlink anyway
            pass
        self._finalizer()


class GraphIO:
    """Lays one run's inputs and outputs out in a Graph's region."""

    def __init__(self, client):
        self._client = client
        self._region = None
        self._mutex = threading.Lock()  # guards _region
        self.output_bytes = {}  # output index -> bytes the last run produced

    def close(self):
        with self._mutex:
            if self._region is not None:
                self._region.close()
                self._region = None

    @staticmethod
    def eligible(array):
        return isinstance(array, np.ndarray) and dtype_to_proto(array.dtype) != graph_pb2.DT_STRING

    def acquire(self, needed):
        """The region, locked for one run, with at least `needed` bytes; None while another
        thread runs this graph through it (that run then takes the gRPC path)."""
        with self._mutex:
            region = self._region
            if region is not None and not region.lock.acquire(blocking=False):
                return None
            if region is None or region.size < needed:
                if region is not None:
                    region.close()  # lock held: nobody else uses it
                    self._region = None
                region = Region(self._client, max(needed, 4096))
                region.lock.acquire()
                self._region = region
            return region

    @staticmethod
    def write(region, offset, array):
        view = np.ndarray(array.shape, dtype=array.dtype, buffer=region.buffer, offset=offset)
        np.copyto(view, array, casting="no")

    @staticmethod
    def read(region, ref):
        """The bytes of an output the daemon wrote into `region` (a view: copy before the next run)."""
        if ref.region != region.name or ref.offset + ref.byte_size > region.size:
            raise ValueError(f"the daemon answered with shared memory {ref.region} [{ref.offset}, "
                             f"+{ref.byte_size}), outside this run's region {region.name} of {region.size} bytes")
        return region.buffer[ref.offset:ref.offset + ref.byte_size]


def plan(arrays, output_bytes):
    """Offsets for the inputs (index -> offset) and outputs, and the total size."""
    offsets, cursor = {}, 0
    for i, a in enumerate(arrays):
        if GraphIO.eligible(a):
            offsets[i] = cursor
            cursor = _align(cursor + a.nbytes)
    outputs = {}
    for i, n in output_bytes.items():
        outputs[i] = (cursor, n)
        cursor = _align(cursor + max(n, 1))
    return offsets, outputs, cursor
