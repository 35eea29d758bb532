"""Writes json.dumps(data, ensure_ascii=False) of every MaskBench instance, one
base64 line per instance in file order, as the MaskBench harness serializes
them. Usage: python_dumps_reference.py REPO_ROOT OUT_FILE (data path from
tests/support/data_paths.py: $MASKD_MASKBENCH, default REPO_ROOT/../shared/maskbench/dev.jsonl.gz)."""
import base64
import gzip
import json
import os
import sys

root, out_path = sys.argv[1], sys.argv[2]
sys.path.insert(0, os.path.join(root, "tests", "support"))
from data_paths import maskbench_path  # noqa: E402

data = maskbench_path()
opener = gzip.open if data.endswith(".gz") else open
tmp = out_path + ".tmp"
with opener(data, "rt", encoding="utf-8") as f, open(tmp, "w") as out:
    for line in f:
        if not line.strip():
            continue
        for test in json.loads(line).get("tests", []):
            text = json.dumps(test["data"], ensure_ascii=False)
            out.write(base64.b64encode(text.encode("utf-8")).decode("ascii") + "\n")
os.replace(tmp, out_path)
