"""The Python client against a daemon serving TLS and mutual TLS: the CA,
the client certificate and the server-name override reach gRPC, a plaintext
client is refused, and bad TLS arguments fail before any call. Certificates
are made for the test by tests/testing/make_test_certs.sh."""

import os
import subprocess
import tempfile
import unittest

import grpc
import numpy as np

import ged
from daemon import Daemon
import models

CERTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../testing/make_test_certs.sh")


class TlsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.work = tempfile.TemporaryDirectory(prefix="ged-py-tls-")
        subprocess.run(["/bin/sh", CERTS, cls.work.name, "DNS:ged.test"], check=True, timeout=60)

    @classmethod
    def tearDownClass(cls):
        cls.work.cleanup()

    def file(self, name):
        return os.path.join(self.work.name, name)

    def start(self, mutual):
        config = self.file(f"ged-{'mutual' if mutual else 'tls'}.yaml")
        with open(config, "w") as f:
            f.write(f"tls_cert_file: {self.file('server.pem')}\ntls_key_file: {self.file('server.key')}\n")
            if mutual:
                f.write(f"tls_client_ca_file: {self.file('ca.pem')}\n")
        return Daemon("--config", config)

    def client(self, daemon, cert=None, **kwargs):
        kwargs.setdefault("tls_ca", self.file("ca.pem"))
        kwargs.setdefault("tls_server_name", "ged.test")  # the certificate names ged.test, not 127.0.0.1
        if cert:
            kwargs.update(tls_cert=self.file(cert + ".pem"), tls_key=self.file(cert + ".key"))
        return ged.Client(daemon.address, max_retries=0, timeout=10, **kwargs)

    def test_tls_serves_a_run_and_refuses_plaintext(self):
        daemon = self.start(mutual=False)
        try:
            with self.client(daemon).session() as s:
                graph = s.add_graph(models.add_mul([2, 3]))
                graph.compile()
                a = np.arange(6, dtype=np.float32).reshape(2, 3)
                total, product = graph.run([a, a])
                np.testing.assert_array_equal(total, a + a)
                np.testing.assert_array_equal(product, a * a)
            with self.assertRaises(ged.UnavailableError):
                ged.Client(daemon.address, max_retries=0, timeout=10).status()
            # Without the override the certificate does not match 127.0.0.1.
            with self.assertRaises(ged.UnavailableError):
                self.client(daemon, tls_server_name=None).status()
        finally:
            self.assertEqual(daemon.stop(), 0)

    def test_mutual_tls_needs_a_certificate_the_daemon_trusts(self):
        daemon = self.start(mutual=True)
        try:
            self.assertIn("host_cpu", self.client(daemon, cert="client").status().engines)
            for cert in (None, "stranger"):
                with self.assertRaises(ged.UnavailableError, msg=f"client certificate {cert}"):
                    self.client(daemon, cert=cert).status()
        finally:
            self.assertEqual(daemon.stop(), 0)

    def test_bad_tls_arguments_fail_before_any_call(self):
        with self.assertRaises(ged.InvalidArgumentError) as e:
            ged.Client("127.0.0.1:1", tls_ca=self.file("missing.pem"))
        self.assertIs(e.exception.code, grpc.StatusCode.INVALID_ARGUMENT)
        self.assertIn("cannot read the TLS CA file", e.exception.message)
        self.assertIn("missing.pem", e.exception.message)
        with self.assertRaises(ged.InvalidArgumentError) as e:
            ged.Client("127.0.0.1:1", tls_cert=self.file("client.pem"))
        self.assertIn("needs its key", e.exception.message)
        empty = self.file("empty.pem")
        open(empty, "w").close()
        with self.assertRaises(ged.InvalidArgumentError) as e:
            ged.Client("127.0.0.1:1", tls_ca=empty)
        self.assertIn("is empty", e.exception.message)


if __name__ == "__main__":
    unittest.main()
