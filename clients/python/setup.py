"""Generates the maskd.v1 stubs into the wheel while building (see gen_stubs.py).

The protos are read from MASKD_PROTO_DIR, by default the repository's proto/
folder two levels up (pip builds ./clients/python in place).
"""
import os
import sys

from setuptools import setup
from setuptools.command.build_py import build_py

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_stubs  # noqa: E402 (needs the path above)

_HERE = os.path.dirname(os.path.abspath(__file__))
_DEFAULT_PROTO_DIR = os.path.join(_HERE, "..", "..", "proto")


class BuildPyWithStubs(build_py):

    def run(self):
        super().run()
        proto_dir = os.environ.get("MASKD_PROTO_DIR", _DEFAULT_PROTO_DIR)
        gen_stubs.generate(proto_dir, self.build_lib)


setup(cmdclass={"build_py": BuildPyWithStubs})
