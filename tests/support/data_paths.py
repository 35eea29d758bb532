"""Where tests find the data that is never committed; the Python twin of harness/data_paths.h.

Tokenizers: $MASKD_TOKENIZER_DIR/NAME/, else ${XDG_CACHE_HOME:-~/.cache}/maskd/tokenizers/NAME/.
MaskBench: $MASKD_MASKBENCH, else <repository>/../shared/maskbench/dev.jsonl.gz.
"""
import os

REPOSITORY_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def tokenizer_root():
    if os.environ.get("MASKD_TOKENIZER_DIR"):
        return os.environ["MASKD_TOKENIZER_DIR"]
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(cache, "maskd", "tokenizers")


def tokenizer_dir(name):
    return name if "/" in name else os.path.join(tokenizer_root(), name)


def maskbench_path():
    return os.environ.get("MASKD_MASKBENCH") or os.path.join(
        REPOSITORY_ROOT, "..", "shared", "maskbench", "dev.jsonl.gz")
