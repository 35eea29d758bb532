#!/usr/bin/env python3
"""Generates $ref-heavy JSON Schemas in the shape of large real-world
configuration schemas: definitions holding allOf of if/then rules, referenced
from array items, from anyOf branches and from each other, under every draft.

    gen_ref_schemas.py OUT_DIR [--count N] [--seed S]

Writes OUT_DIR/ref_NNNN.json in MaskBench's one-schema-per-file form
({"schema": ..., "tests": [...]}, instances drawn from a small universe and
labelled by python3-jsonschema), so `maskbench --data OUT_DIR` compiles them
all and counts Internal errors as engine errors. This is how the class of
"undefined nonterminals" errors was found (issue 12)."""
import argparse
import json
import os
import random

DRAFTS = [
    "http://json-schema.org/draft-04/schema#",
    "http://json-schema.org/draft-06/schema#",
    "http://json-schema.org/draft-07/schema#",
    "https://json-schema.org/draft/2019-09/schema",
    "https://json-schema.org/draft/2020-12/schema",
]
KEYS = ["kind", "name", "size", "mode", "items"]


def leaf(rng):
    return rng.choice([
        {"type": "string"},
        {"type": "string", "enum": ["a", "b", "c"]},
        {"type": "integer", "minimum": 0, "maximum": 9},
        {"type": "number"},
        {"type": "boolean"},
        {"const": "a"},
        {"type": "string", "pattern": "^[ab]+$"},
        {"type": ["string", "null"]},
    ])


def rule(rng, refs):
    """An if/then (maybe else) rule over one discriminator key."""
    if rng.random() < 0.3:
        # A boolean switch: rules for true and for false, side by side in one
        # allOf, make a branch whose switch excludes both booleans.
        return {"if": {"properties": {"enabled": {"const": rng.random() < 0.5}},
                       "required": ["enabled"]},
                "then": {"properties": {rng.choice(KEYS): sub(rng, refs, 1)}}}
    key = rng.choice(KEYS[:4])
    r = {"if": {"properties": {key: {"const": rng.choice(["a", "b", 1])}},
                "required": [key]},
         "then": {"properties": {rng.choice(KEYS): sub(rng, refs, 2)}}}
    if rng.random() < 0.5:
        r["then"]["required"] = [rng.choice(KEYS)]
    if rng.random() < 0.3:
        r["else"] = {"properties": {rng.choice(KEYS): sub(rng, refs, 2)}}
    return r


def ref(refs, rng, defs_key):
    return {"$ref": f"#/{defs_key}/{rng.choice(refs)}"}


def sub(rng, refs, depth, defs_key="definitions"):
    if depth <= 0 or rng.random() < 0.3:
        return ref(refs, rng, defs_key) if refs and rng.random() < 0.5 else leaf(rng)
    choice = rng.randrange(6)
    if choice == 0:
        return {"type": "array", "items": sub(rng, refs, depth - 1, defs_key)}
    if choice == 1:
        return {"anyOf": [sub(rng, refs, depth - 1, defs_key) for _ in range(rng.randint(1, 3))]}
    if choice == 2:
        return {"allOf": [rule(rng, refs) for _ in range(rng.randint(1, 3))]}
    if choice == 3 and refs:
        return ref(refs, rng, defs_key)
    if choice == 4:
        return {"type": "object",
                "properties": {k: sub(rng, refs, depth - 1, defs_key)
                               for k in rng.sample(KEYS, rng.randint(1, 3))}}
    if rng.random() < 0.2:
        return {"oneOf": [{"type": "string"}, sub(rng, refs, depth - 1, defs_key)]}
    return {"not": {"type": "null"}}


def schema(rng):
    draft = rng.choice(DRAFTS)
    defs_key = "$defs" if "json-schema.org/draft/" in draft else "definitions"
    names = [f"d{i}" for i in range(rng.randint(2, 6))]
    defs = {}
    for name in names:
        body = {"type": "object",
                "properties": {k: sub(rng, names, 2, defs_key)
                               for k in rng.sample(KEYS, rng.randint(1, 4))}}
        if rng.random() < 0.5:
            body["properties"]["enabled"] = rng.choice(
                [{"type": "boolean"}, {"type": ["boolean", "null"]}, {"enum": [True, False, None]}])
        if rng.random() < 0.7:
            body["allOf"] = [rule(rng, names) for _ in range(rng.randint(1, 3))]
        if rng.random() < 0.3:
            body["$id"] = f"#{name}" if "draft-0" in draft else f"{name}.json"
        defs[name] = body
    root = {"$schema": draft, defs_key: defs, "type": "object",
            "properties": {
                "items": {"type": "array", "items": ref(names, rng, defs_key)},
                "choice": {"anyOf": [ref(names, rng, defs_key), ref(names, rng, defs_key)]},
                "one": ref(names, rng, defs_key),
            }}
    if rng.random() < 0.5:
        root["required"] = ["items"]
    text = json.dumps(root)
    return json.loads(text.replace("#/definitions/", f"#/{defs_key}/"))


def instances(rng):
    vals = ["a", "b", 1, 2.5, True, None, [], {}]

    def obj(depth):
        o = {}
        for k in rng.sample(KEYS, rng.randint(0, 3)):
            o[k] = obj(depth - 1) if depth > 0 and rng.random() < 0.3 else rng.choice(vals)
        return o
    return [{"items": [obj(1) for _ in range(rng.randint(0, 2))], "choice": obj(1),
             "one": obj(1)} for _ in range(4)]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--count", type=int, default=200)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    try:
        import jsonschema
    except ImportError:
        jsonschema = None
    os.makedirs(args.out, exist_ok=True)
    rng = random.Random(args.seed)
    for i in range(args.count):
        s = schema(rng)
        tests = []
        if jsonschema is not None:
            cls = jsonschema.validators.validator_for(s)
            for inst in instances(rng):
                try:
                    valid = cls(s).is_valid(inst)
                except Exception:  # unresolvable in python: no tests
                    break
                tests.append({"description": "", "data": inst, "valid": valid})
        with open(os.path.join(args.out, f"ref_{i:04d}.json"), "w") as f:
            json.dump({"description": f"generated seed {args.seed} #{i}", "schema": s,
                       "tests": tests}, f)


if __name__ == "__main__":
    main()
