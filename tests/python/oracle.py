"""Runs pyclient_maskbench_oracle (maskbench_oracle.cc): the C++ engine's verdicts and vocabulary."""
import gzip
import json
import os
import subprocess
import tempfile

from data_paths import maskbench_path, tokenizer_dir


def oracle_from_argv(argv):
    """Pops `--oracle PATH` from argv; else $MASKD_MASKBENCH_ORACLE."""
    if "--oracle" in argv:
        i = argv.index("--oracle")
        path = argv[i + 1]
        del argv[i:i + 2]
        return path
    path = os.environ.get("MASKD_MASKBENCH_ORACLE")
    if not path:
        raise SystemExit("pass --oracle PATH or set MASKD_MASKBENCH_ORACLE")
    return path


def int_from_argv(argv, flag, default):
    if flag in argv:
        i = argv.index(flag)
        value = int(argv[i + 1])
        del argv[i:i + 2]
        return value
    return default


def _run(binary, **flags):
    args = [binary, f"--tokenizer={tokenizer_dir('llama3')}"]
    args += [f"--{k}={v}" for k, v in flags.items()]
    subprocess.run(args, check=True, timeout=1200)


def sample_lines(n):
    """Every k-th line of the dev split, as the C++ DeterministicSample picks them."""
    with gzip.open(maskbench_path(), "rt", encoding="utf-8") as f:
        lines = f.readlines()
    n = min(n, len(lines))
    return [lines[i * len(lines) // n] for i in range(n)]


def maskbench_cases(binary, sample):
    """One dict per sampled schema: name, schema, compiled, tests [{valid, ids, accepted,
    complete}]. The sample is cut here so the oracle reads only those lines."""
    with tempfile.TemporaryDirectory() as tmp:
        data = os.path.join(tmp, "sample.jsonl")
        with open(data, "w", encoding="utf-8") as f:
            f.writelines(sample_lines(sample))
        path = os.path.join(tmp, "cases.jsonl")
        _run(binary, data=data, sample=sample, cases=path)
        with open(path, encoding="utf-8") as f:
            return [json.loads(line) for line in f]


def vocabulary(binary):
    """(bytes per token id, None for special ids), set of EOS ids."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "vocab.txt")
        _run(binary, vocab=path)
        token_bytes, eos = [], set()
        with open(path, encoding="ascii") as f:
            for token_id, line in enumerate(f):
                fields = line.split()
                token_bytes.append(None if fields[0] == "-" else bytes.fromhex(fields[0]))
                if fields[1:] == ["eos"]:
                    eos.add(token_id)
        return token_bytes, eos
