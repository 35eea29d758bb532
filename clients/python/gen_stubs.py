#!/usr/bin/env python3
"""Generates the maskd.v1 Python stubs from proto/ with Debian's protoc and grpc_python_plugin.

    gen_stubs.py --proto-dir proto --out-root DIR

writes DIR/maskd_client/_proto/*_pb2.py and *_pb2_grpc.py. Used by setup.py at
install time and by CMake for the source-tree tests (PYTHONPATH = DIR plus
clients/python; maskd_client's __init__ extends its package path over both).

protoc names imports after the proto path (`from maskd.v1 import common_pb2`),
which would need a top-level `maskd` package; the modules are written into one
flat folder with relative imports instead, so the only top-level package is
maskd_client. Descriptor file names stay "maskd/v1/*.proto", as on the server.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

PROTO_FILES = [
    "maskd/v1/common.proto",
    "maskd/v1/tokenizer.proto",
    "maskd/v1/compile.proto",
    "maskd/v1/session.proto",
    "maskd/v1/maskd.proto",
]

_IMPORT = re.compile(r"^from maskd\.v1 import (\w+) as (\w+)$", re.MULTILINE)


def _find_tool(name, env_var):
    path = os.environ.get(env_var) or shutil.which(name)
    if not path:
        raise RuntimeError(
            f"{name} not found (install Debian's protobuf-compiler / protobuf-compiler-grpc, "
            f"or set {env_var})")
    return path


def generate(proto_dir, out_root):
    """Writes the stubs under out_root/maskd_client/_proto; returns the written paths."""
    proto_dir = os.path.abspath(proto_dir)
    missing = [p for p in PROTO_FILES if not os.path.isfile(os.path.join(proto_dir, p))]
    if missing:
        raise RuntimeError(f"proto files missing under {proto_dir}: {', '.join(missing)} "
                           "(set MASKD_PROTO_DIR to the repository's proto/ folder)")
    protoc = _find_tool("protoc", "MASKD_PROTOC")
    plugin = _find_tool("grpc_python_plugin", "MASKD_GRPC_PYTHON_PLUGIN")
    out_dir = os.path.join(out_root, "maskd_client", "_proto")
    os.makedirs(out_dir, exist_ok=True)
    written = []
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([
            protoc, f"--proto_path={proto_dir}", f"--python_out={tmp}", f"--grpc_python_out={tmp}",
            f"--plugin=protoc-gen-grpc_python={plugin}", *PROTO_FILES
        ],
                       check=True)
        generated_dir = os.path.join(tmp, "maskd", "v1")
        for name in sorted(os.listdir(generated_dir)):
            if not name.endswith(".py"):
                continue
            with open(os.path.join(generated_dir, name), encoding="utf-8") as f:
                text = f.read()
            text = _IMPORT.sub(r"from . import \1 as \2", text)
            target = os.path.join(out_dir, name)
            with open(target, "w", encoding="utf-8") as f:
                f.write(text)
            written.append(target)
    init = os.path.join(out_dir, "__init__.py")
    with open(init, "w", encoding="utf-8") as f:
        f.write('"""Generated maskd.v1 protobuf and gRPC modules (gen_stubs.py)."""\n')
    written.append(init)
    return written


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--proto-dir", required=True, help="the repository's proto/ folder")
    parser.add_argument("--out-root", required=True, help="folder to hold maskd_client/_proto")
    args = parser.parse_args()
    try:
        generate(args.proto_dir, args.out_root)
    except (RuntimeError, subprocess.CalledProcessError) as e:
        print(f"gen_stubs: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
