#!/usr/bin/env python3
"""Cross-checks the engine and the reference validator (json_schema_verdicts_cli)
against python3-jsonschema, an independent implementation:

 1. dialect_cases.jsonl: per-draft cases written from each draft's rules
    (JSON-Schema-Test-Suite style: schema, instance, valid). For every case the
    reference validator, the engine (masks and acceptance, byte by byte) and
    python3-jsonschema must all say `valid`. A test may carry "python": WHY
    where python3-jsonschema is known to differ (Python's `re` is not
    ECMA-262; jsonschema < 4.18 moves the base URI of a draft-7 $ref by a
    sibling $id): Python must then give the other answer, so a note cannot
    go stale silently. "reference": WHY does the same for the reference
    validator (it compares numbers by value, so it cannot see draft 4's
    "1.0 is not an integer").
 2. ECMA-262 classes (\\s, \\S, \\d, \\w, .) on every code point up to U+3100
    and the other Unicode spaces: the reference and the engine must follow
    ECMA-262 exactly (the sets are written here from the spec, independently
    of the C++ tables), and must agree with Python except on the documented
    differences of Python's `re`.

    python_crosscheck.py --cli PATH --cases dialect_cases.jsonl"""
import argparse
import json
import re
import subprocess
import sys
import unicodedata

import jsonschema

D2020 = "https://json-schema.org/draft/2020-12/schema"


def jsonschema_version():
    try:
        from importlib.metadata import version
        return tuple(int(x) for x in version("jsonschema").split(".")[:2])
    except Exception:  # noqa: BLE001
        return (0, 0)


def _no_remote(self, uri):
    raise jsonschema.exceptions.RefResolutionError(f"no network: {uri}")


if hasattr(jsonschema.validators, "RefResolver"):  # jsonschema < 4.18 fetches remote $refs
    jsonschema.validators.RefResolver.resolve_remote = _no_remote


def python_verdict(schema, data):
    """True/False, or "error" when python3-jsonschema cannot decide (unresolvable $ref)."""
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    try:
        return cls(schema).is_valid(data)
    except Exception:  # noqa: BLE001 (RefResolutionError and its successors)
        return "error"


def run_cli(cli, pairs):
    """pairs: [(schema_text, instance_text)] -> [(reference, engine)]"""
    text = "".join(f"{s}\t{i}\n" for s, i in pairs)
    out = subprocess.run([cli], input=text, capture_output=True, text=True, check=True, timeout=240)
    lines = out.stdout.splitlines()
    assert len(lines) == len(pairs), (len(lines), len(pairs), out.stderr)
    return [tuple(line.split(" ")) for line in lines]


def dumps(value):
    return json.dumps(value, ensure_ascii=False)


def check_dialect_cases(cli, path):
    failures = []
    groups = [json.loads(line) for line in open(path, encoding="utf-8") if line.strip()]
    pairs, where = [], []
    for g in groups:
        for t in g["tests"]:
            pairs.append((dumps(g["schema"]), dumps(t["data"])))
            where.append((g, t))
    verdicts = run_cli(cli, pairs)
    newer = jsonschema_version() >= (4, 18)
    for (g, t), (ref, engine) in zip(where, verdicts):
        want = "1" if t["valid"] else "0"
        label = f'{g["description"]}: {dumps(t["data"])} (valid={t["valid"]})'
        if "reference" in t:  # A documented blind spot of the reference validator.
            if ref == want:
                failures.append(f"reference validator note is stale: {label}")
        elif ref != want:
            failures.append(f"reference validator says {ref}: {label}")
        if engine != want:
            failures.append(f"engine says {engine}: {label}")
        py = python_verdict(g["schema"], t["data"])
        note = t.get("python")
        if note is None:
            expected_py = t["valid"]
        elif note.startswith("jsonschema < 4.18"):
            expected_py = t["valid"] if newer else "differs"
        else:
            expected_py = not t["valid"]
        if expected_py == "differs" and py != t["valid"]:
            continue
        if py != expected_py:
            failures.append(f"python3-jsonschema says {py} (note: {note}): {label}")
    return len(pairs), failures


# ECMA-262 (22.2.2.9 CharacterClassEscape): \s is WhiteSpace or LineTerminator.
ECMA_SPACE = {0x09, 0x0B, 0x0C, 0x20, 0xA0, 0xFEFF, 0x0A, 0x0D, 0x2028, 0x2029}


def ecma_space(c):
    return c in ECMA_SPACE or unicodedata.category(chr(c)) == "Zs"


ECMA_CLASSES = {
    "^\\s$": ecma_space,
    "^\\S$": lambda c: not ecma_space(c),
    "^\\d$": lambda c: 0x30 <= c <= 0x39,
    "^\\w$": lambda c: chr(c).isascii() and (chr(c).isalnum() or c == 0x5F),
    "^.$": lambda c: c not in (0x0A, 0x0D, 0x2028, 0x2029),
}


def python_differs(pattern, c):
    """Where Python's `re` (Unicode str patterns) is documented to differ."""
    ch = chr(c)
    if pattern in ("^\\s$", "^\\S$"):
        return ch.isspace() != ecma_space(c)  # U+001C..U+001F, U+0085 vs U+FEFF
    if pattern == "^\\d$":
        return unicodedata.category(ch) == "Nd" and not ch.isascii()
    if pattern == "^\\w$":
        return not ch.isascii() and ch.isalnum()  # alphabetic or numeric in Unicode
    if pattern == "^.$":
        return c in (0x0D, 0x2028, 0x2029)
    return False


def check_unicode_classes(cli):
    points = [c for c in range(0x3101) if not 0xD800 <= c <= 0xDFFF]
    points += [0x1680, 0x202F, 0x205F, 0x3000, 0xFEFF, 0xFF10, 0xFF21, 0x1D7CE, 0x10FFFF]
    failures, pairs, where = [], [], []
    for pattern in ECMA_CLASSES:
        schema = dumps({"$schema": D2020, "type": "string", "pattern": pattern})
        for c in points:
            pairs.append((schema, dumps(chr(c))))
            where.append((pattern, c))
    verdicts = run_cli(cli, pairs)
    differences = 0
    for (pattern, c), (ref, engine) in zip(where, verdicts):
        ecma = ECMA_CLASSES[pattern](c)
        py = re.search(pattern, chr(c)) is not None
        label = f"{pattern} on U+{c:04X}"
        if ref != ("1" if ecma else "0"):
            failures.append(f"reference says {ref}, ECMA-262 says {ecma}: {label}")
        if engine != ref:
            failures.append(f"engine says {engine}, reference {ref}: {label}")
        if (py != ecma) != python_differs(pattern, c):
            failures.append(f"Python says {py}, ECMA-262 {ecma}, undocumented: {label}")
        differences += py != ecma
    # The documented differences exist (the comparison above is not vacuous).
    if differences == 0:
        failures.append("no difference from Python found at all")
    return len(pairs), differences, failures


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cli", required=True)
    parser.add_argument("--cases", required=True)
    args = parser.parse_args()
    n_cases, failures = check_dialect_cases(args.cli, args.cases)
    n_points, differences, more = check_unicode_classes(args.cli)
    failures += more
    for f in failures[:60]:
        print("FAIL", f)
    print(f"{n_cases} dialect cases, {n_points} class checks ({differences} documented "
          f"differences from Python's re), {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
