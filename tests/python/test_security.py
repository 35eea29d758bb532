"""The Python client's TLS, mutual TLS and bearer-token options against the real maskd
(issue 13 §2): certificates made per run by tests/security/make_test_certs.sh."""
import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import grpc

from maskd_server import MaskdServer, binary_from_argv
from maskd_client import AsyncMaskClient, MaskClient, MaskdError

MASKD = binary_from_argv(sys.argv)
MAKE_CERTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "security",
                          "make_test_certs.sh")
TOKEN = "python-tenant-token-0123456789"


def setUpModule():
    global DIR, SERVER
    DIR = tempfile.mkdtemp(prefix="maskd_pysec_")
    subprocess.run(["bash", MAKE_CERTS, DIR], check=True)
    with open(os.path.join(DIR, "tokens"), "w") as f:
        f.write(f"py-tenant {TOKEN}\n")
    SERVER = MaskdServer(MASKD, tokenizers=(), extra_args=(
        f"--tls_cert={path('server.pem')}", f"--tls_key={path('server.key')}",
        f"--tls_client_ca={path('ca.pem')}", f"--auth_token_file={path('tokens')}",
        "--shutdown_grace=1s"))


def tearDownModule():
    code = SERVER.stop()
    shutil.rmtree(DIR, ignore_errors=True)
    assert code == 0, f"maskd exited with {code}; log:\n{SERVER.log()}"


def path(name):
    return os.path.join(DIR, name)


def client(cert="client", token=TOKEN, ca="ca.pem", **kwargs):
    tls = {}
    if ca:
        tls["tls_ca"] = path(ca)
    if cert:
        tls["tls_cert"], tls["tls_key"] = path(cert + ".pem"), path(cert + ".key")
    return MaskClient(SERVER.address, timeout=10, token=token, **tls, **kwargs)


class SyncClientTest(unittest.TestCase):

    def test_certificate_and_token_are_served(self):
        with client() as c:
            self.assertEqual(c.list_tokenizers(), [])

    def test_missing_or_wrong_token_is_unauthenticated(self):
        for token in (None, "wrong-token-wrong-token-wrong"):
            with self.subTest(token=token), client(token=token) as c:
                with self.assertRaises(MaskdError) as raised:
                    c.list_tokenizers()
                self.assertEqual(raised.exception.code, grpc.StatusCode.UNAUTHENTICATED)

    def test_session_carries_the_token(self):
        # With the token the stream is served: opening an unknown handle is a
        # per-sequence NOT_FOUND, not a refused stream.
        with client() as c, c.session() as session:
            with self.assertRaises(MaskdError) as raised:
                session.open(1, "no-such-handle")
            self.assertEqual(raised.exception.code, grpc.StatusCode.NOT_FOUND)
        with client(token=None) as c:
            with self.assertRaises(MaskdError) as raised:
                with c.session() as session:
                    session.open(1, "no-such-handle")
            self.assertEqual(raised.exception.code, grpc.StatusCode.UNAUTHENTICATED)

    def test_untrusted_or_missing_client_certificate_is_refused(self):
        for cert in (None, "rogue"):
            with self.subTest(cert=cert), client(cert=cert) as c:
                with self.assertRaises(MaskdError) as raised:
                    c.list_tokenizers()
                self.assertEqual(raised.exception.code, grpc.StatusCode.UNAVAILABLE)

    def test_plaintext_is_refused(self):
        with client(ca=None, cert=None) as c:
            with self.assertRaises(MaskdError) as raised:
                c.list_tokenizers()
            self.assertEqual(raised.exception.code, grpc.StatusCode.UNAVAILABLE)

    def test_unregister_and_uploads(self):
        with client() as c:
            with self.assertRaises(MaskdError) as raised:
                c.unregister_tokenizer("0123456789abcdef0123456789abcdef")
            self.assertEqual(raised.exception.code, grpc.StatusCode.NOT_FOUND)
            # Uploads are off without --allow_register_tokenizer.
            with self.assertRaises(MaskdError) as raised:
                c.register_tokenizer(tokenizer_json=b"{}", name="qwen3")
            self.assertEqual(raised.exception.code, grpc.StatusCode.PERMISSION_DENIED)

    def test_certificate_without_ca_is_a_usage_error(self):
        with self.assertRaises(ValueError):
            MaskClient(SERVER.address, tls_cert=path("client.pem"), tls_key=path("client.key"))


class AsyncClientTest(unittest.TestCase):

    def test_token_and_certificate(self):
        async def run():
            good = AsyncMaskClient(SERVER.address, timeout=10, token=TOKEN, tls_ca=path("ca.pem"),
                                   tls_cert=path("client.pem"), tls_key=path("client.key"))
            self.assertEqual(await good.list_tokenizers(), [])
            await good.close()
            anonymous = AsyncMaskClient(SERVER.address, timeout=10, tls_ca=path("ca.pem"),
                                        tls_cert=path("client.pem"), tls_key=path("client.key"))
            with self.assertRaises(MaskdError) as raised:
                await anonymous.list_tokenizers()
            self.assertEqual(raised.exception.code, grpc.StatusCode.UNAUTHENTICATED)
            await anonymous.close()

        asyncio.run(run())


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0]])
