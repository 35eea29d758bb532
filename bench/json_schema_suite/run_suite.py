#!/usr/bin/env python3
"""Runs the official JSON-Schema-Test-Suite (Debian: json-schema-test-suite,
/usr/share/json-schema-test-suite) through the engine and prints, per draft
and property order, how many test groups pass.

Each group's schema is compiled by suite_verdicts with the default
CompileOptions (strict) and `default_dialect` set to the folder's draft: the
suite's draft folders mean "read as that draft", and a schema's own `$schema`
still wins. Every test instance is checked in two json.dumps spellings
(json.dumps(data, ensure_ascii=False) with its ", "/": " separators, and with
compact ones; --ascii adds the \\u-escaped spelling), byte by byte against
the masks and EOS against CanStop.

A group passes when every instance in both spellings gets the suite's verdict.
Otherwise it counts under the first of: refused (the compile failed; the codes
are listed), engine errors (a mask disagreed with the matcher), invalidation
errors (an invalid instance accepted), validation errors (a valid instance
rejected).

  run_suite.py --cli build/release/bench/json_schema_suite/suite_verdicts \\
      [--suite-dir DIR] [--drafts draft4,draft6,draft7] [--orders schema,any] \\
      [--failures] [--min_pass draft7:schema=130,...]

--suite-dir is a checkout (or copy) of the suite: DIR/tests/DRAFT/*.json, as
Debian lays it out and as the upstream repository does, so a copy holding
tests/draft2019-09 or tests/draft2020-12 runs with --drafts draft2020-12.
The suite's remotes/ (DIR/remotes, or --remotes) is passed to the engine as
schema resources (CompileOptions::schema_resources) under
http://localhost:1234/, the URI the suite's schemas $ref them by;
--remotes "" passes none (such groups are then refused: UNIMPLEMENTED, remote
$ref). The draft metaschemas are built into the engine.

--min_pass makes it a check (exit 1): any invalidation or engine error, or
fewer passing groups than a floor. The floors are a regression guard set at
the numbers measured when they were written, not a target.
"""
import argparse
import collections
import glob
import json
import os
import subprocess
import sys

DIALECTS = {
    "draft4": "http://json-schema.org/draft-04/schema#",
    "draft6": "http://json-schema.org/draft-06/schema#",
    "draft7": "http://json-schema.org/draft-07/schema#",
    "draft2019-09": "https://json-schema.org/draft/2019-09/schema",
    "draft2020-12": "https://json-schema.org/draft/2020-12/schema",
}
# json.dumps with its default separators and compact ones, UTF-8 as written.
SPELLINGS = [
    dict(ensure_ascii=False),
    dict(separators=(",", ":"), ensure_ascii=False),
]
# --ascii adds json.dumps(data) as is: non-ASCII as \u escapes.
ASCII_SPELLING = dict()


def described(test, index):
    return test.get("description", f"test #{index}")


def load_groups(suite, draft):
    root = os.path.join(suite, "tests", draft)
    files = sorted(glob.glob(os.path.join(root, "*.json")))
    files += sorted(glob.glob(os.path.join(root, "optional", "**", "*.json"), recursive=True))
    groups = []
    for path in files:
        with open(path, encoding="utf-8") as f:
            for index, group in enumerate(json.load(f)):
                groups.append((os.path.relpath(path, root), index, group))
    return groups


def run_draft(cli, suite, draft, order, spellings, remotes):
    groups = load_groups(suite, draft)
    lines, where = [], []
    for gi, (_, _, group) in enumerate(groups):
        schema = json.dumps(group["schema"])
        for ti, test in enumerate(group["tests"]):
            for spelling in spellings:
                lines.append(schema + "\t" + json.dumps(test["data"], **spelling))
                where.append((gi, ti))
    proc = subprocess.run(
        [cli, "--property_order=" + order, "--default_dialect=" + DIALECTS[draft],
         "--remotes=" + remotes],
        input="\n".join(lines) + "\n", capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        sys.exit(f"{cli} failed ({proc.returncode}): {proc.stderr[-2000:]}")
    out = proc.stdout.split("\n")
    # Per group: the worst outcome and its details.
    outcome = [None] * len(groups)
    detail = [[] for _ in groups]
    tests_failed = collections.Counter()
    rank = {None: 0, "validation": 1, "invalidation": 2, "engine": 3, "refused": 4}
    for (gi, ti), verdict in zip(where, out):
        test = groups[gi][2]["tests"][ti]
        if verdict.startswith("E:"):
            kind, text = "refused", verdict
        elif verdict == "X":
            kind, text = "engine", described(test, ti)
        elif (verdict == "1") == test["valid"]:
            continue
        else:
            kind = "invalidation" if not test["valid"] else "validation"
            text = described(test, ti)
            tests_failed[kind] += 1
        if rank[kind] > rank[outcome[gi]]:
            outcome[gi] = kind
        if text not in detail[gi]:
            detail[gi].append(text)
    return groups, outcome, detail, tests_failed


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cli", required=True, help="path of suite_verdicts")
    ap.add_argument("--suite", "--suite-dir", dest="suite",
                    default="/usr/share/json-schema-test-suite",
                    help="the suite's root: DIR/tests/DRAFT/*.json (default: Debian's)")
    ap.add_argument("--remotes", default=None,
                    help="the suite's remote documents (default: SUITE/remotes if present; "
                         "\"\" for none)")
    ap.add_argument("--drafts", default="draft4,draft6,draft7")
    ap.add_argument("--orders", default="schema,any")
    ap.add_argument("--ascii", action="store_true",
                    help="also check json.dumps(data) with its \\u escapes for non-ASCII")
    ap.add_argument("--failures", action="store_true", help="list every group that does not pass")
    ap.add_argument("--min_pass", default="",
                    help="DRAFT:ORDER=N,...: fail below N passing groups (a regression guard)")
    args = ap.parse_args()
    if not os.path.isdir(os.path.join(args.suite, "tests")):
        sys.exit(f"no JSON-Schema-Test-Suite at {args.suite} (Debian: json-schema-test-suite)")
    remotes = args.remotes
    if remotes is None:
        remotes = os.path.join(args.suite, "remotes")
        remotes = remotes if os.path.isdir(remotes) else ""
    floors = {}
    for item in filter(None, args.min_pass.split(",")):
        key, n = item.split("=")
        floors[key] = int(n)
    ok = True
    print(f"{'draft':7} {'order':6} {'groups':>6} {'pass':>5} {'pass%':>6} {'refused':>7} "
          f"{'engine':>6} {'inval':>5} {'valid':>5}  inval/valid tests  refusal codes")
    failures = []
    for draft in args.drafts.split(","):
        for order in args.orders.split(","):
            groups, outcome, detail, tests_failed = run_draft(
                args.cli, args.suite, draft, order,
                SPELLINGS + ([ASCII_SPELLING] if args.ascii else []), remotes)
            count = collections.Counter(outcome)
            codes = collections.Counter(
                d[0].split("\t")[0][2:] for o, d in zip(outcome, detail) if o == "refused")
            n = len(groups)
            print(f"{draft:7} {order:6} {n:6} {count[None]:5} {100 * count[None] / n:5.1f}% "
                  f"{count['refused']:7} {count['engine']:6} {count['invalidation']:5} "
                  f"{count['validation']:5}  {tests_failed['invalidation']:5} / "
                  f"{tests_failed['validation']:<5}      "
                  + " ".join(f"{c}:{k}" for c, k in sorted(codes.items())))
            for (path, index, group), o, d in zip(groups, outcome, detail):
                if o is not None:
                    failures.append(f"  {draft} {order} {o:12} {path}#{index} "
                                    f"{group.get('description', '')!r}: " + " | ".join(d[:3]))
            if count["invalidation"] or count["engine"]:
                ok = ok and not floors  # Only a check fails the run.
            key = f"{draft}:{order}"
            if key in floors and count[None] < floors[key]:
                print(f"FAIL {key}: {count[None]} groups pass, below the floor {floors[key]}")
                ok = False
            if floors and (count["invalidation"] or count["engine"]):
                print(f"FAIL {key}: {count['invalidation']} groups with invalidation errors, "
                      f"{count['engine']} with engine errors")
    if args.failures or not ok:
        print("\n".join(failures))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
