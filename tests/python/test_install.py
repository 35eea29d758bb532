"""`pip install ./clients/python` works offline into a venv made with --system-site-packages.

The package is copied with proto/ beside it in the same layout as the
repository (setup.py reads ../../proto), so the test leaves the checkout clean
and runs safely beside other builds. The venv is made --without-pip and uses
Debian's pip through the system site packages: the same pip, 5 s instead of 16.
"""
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import unittest

PACKAGE_DIR = os.path.abspath(sys.argv.pop(1)) if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "..", "clients", "python")
REPO = os.path.normpath(os.path.join(PACKAGE_DIR, "..", ".."))

CHECK = textwrap.dedent("""
    import sys
    import maskd_client
    from maskd_client._proto import maskd_pb2_grpc, session_pb2
    assert maskd_client.__file__.startswith(sys.prefix), maskd_client.__file__
    assert maskd_pb2_grpc.MaskdStub
    assert session_pb2.DESCRIPTOR.name == "maskd/v1/session.proto"
    print("ok", maskd_client.MaskClient.__name__)
""")


class InstallTest(unittest.TestCase):

    def test_offline_pip_install_into_venv(self):
        with tempfile.TemporaryDirectory() as tmp:
            tree = os.path.join(tmp, "repo")
            shutil.copytree(PACKAGE_DIR, os.path.join(tree, "clients", "python"),
                            ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
            shutil.copytree(os.path.join(REPO, "proto"), os.path.join(tree, "proto"))
            venv = os.path.join(tmp, "venv")
            env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PIP_INDEX_URL")}
            env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
            subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", venv],
                           check=True, env=env)
            python = os.path.join(venv, "bin", "python")
            pip = subprocess.run([
                python, "-m", "pip", "install", "--no-build-isolation", "--no-index",
                "./clients/python"
            ], cwd=tree, env=env, capture_output=True, text=True)
            self.assertEqual(pip.returncode, 0, pip.stdout + pip.stderr)
            check = subprocess.run([python, "-c", CHECK], cwd=tmp, env=env, capture_output=True,
                                   text=True)
            self.assertEqual(check.returncode, 0, check.stdout + check.stderr)
            self.assertIn("ok MaskClient", check.stdout)


if __name__ == "__main__":
    unittest.main()
