"""A ged daemon for a Python test: build/bin/ged on 127.0.0.1 port 0 with a
ready file (as tests/integration/daemon_process.cc starts it), stopped with
SIGTERM (KServe HTTP on a free port too when it serves a repository);
stop() returns ged's exit code (0: drained and every call state and
session released, 3: ged leaked state)."""

import json
import os
import signal
import subprocess
import tempfile
import time

GED = os.environ.get("GED_BINARY", os.path.join(os.path.dirname(__file__), "../../build/bin/ged"))


class Daemon:
    """unix_socket=True also serves on a unix socket in the daemon's temporary
    directory; `local_address` is then its unix:PATH address (shared memory
    is served there only)."""

    def __init__(self, *args, listen="127.0.0.1:0", timeout=60, unix_socket=False):
        self.dir = tempfile.TemporaryDirectory(prefix="ged-py-")
        ready = os.path.join(self.dir.name, "ready.json")
        self.log_path = os.path.join(self.dir.name, "ged.log")
        argv = [GED, "--ready-file", ready, "--listen", listen, "--metrics-listen", "127.0.0.1:0",
                *args]
        # A repository turns KServe HTTP on (127.0.0.1:8000 by default): a
        # free port instead, so tests can run side by side.
        if "--model-repository" in args and "--http-listen" not in args:
            argv += ["--http-listen", "127.0.0.1:0"]
        self.local_address = None
        if unix_socket:
            path = os.path.join(self.dir.name, "ged.sock")
            argv += ["--unix-socket", path]
            self.local_address = "unix:" + path
        with open(self.log_path, "wb") as log:
            self.process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if os.path.exists(ready):
                with open(ready) as f:
                    addresses = json.load(f)
                self.address = addresses["grpc"]
                self.metrics_address = addresses["metrics"]
                self.http_address = addresses.get("http")
                return
            if self.process.poll() is not None:
                raise RuntimeError(f"ged exited ({self.process.returncode}) before serving:\n{self.log()}")
            time.sleep(0.02)
        self.process.kill()
        raise RuntimeError(f"ged wrote no ready file within {timeout} s:\n{self.log()}")

    def log(self):
        with open(self.log_path, errors="replace") as f:
            return f.read()

    def stop(self, timeout=30):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        code = self.process.returncode
        self.dir.cleanup()
        return code


def poll_until(condition, timeout=60, interval=0.05):
    """Calls `condition` until it returns true or `timeout` seconds pass
    (polling with a deadline, for state only another process can change);
    its last value."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value or time.monotonic() >= deadline:
            return value
        time.sleep(interval)
