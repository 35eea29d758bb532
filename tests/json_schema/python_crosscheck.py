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
 2. Dynamic references: every schema of a generated family of $dynamicRef
    (2020-12) and $recursiveRef (2019-09) shapes, on every array of up to
    three items over five values: where the engine compiles, the engine and
    the reference validator must agree with DynamicScopeOracle (written from
    the specs' dynamic-scope rules; python3-jsonschema >= 4.18, where
    installed, must agree with the oracle on every schema); where it refuses,
    the refusal must be UNIMPLEMENTED; both must occur.
 3. unevaluatedProperties / unevaluatedItems: 240 generated schemas (own
    keywords, allOf and $ref to random parts, some evaluating, some not, some
    conditional) on every object over five keys (three choices each) or
    every array of up to four items: where the engine compiles, it and the
    reference validator agree with evaluate() (an annotation-collecting
    validator written from the spec; python3-jsonschema >= 4.18, where
    installed, must agree with it) in any property order.
 4. ECMA-262 classes (\\s, \\S, \\d, \\w, .) on every code point up to U+3100
    and the other Unicode spaces: the reference and the engine must follow
    ECMA-262 exactly (the sets are written here from the spec, independently
    of the C++ tables), and must agree with Python except on the documented
    differences of Python's `re`.

    python_crosscheck.py --cli PATH --cases dialect_cases.jsonl"""
import argparse
import itertools
import json
import random
import re
import subprocess
import sys
import unicodedata
import urllib.parse

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


def run_cli(cli, pairs, *flags):
    """pairs: [(schema_text, instance_text)] -> [(reference, engine)]"""
    text = "".join(f"{s}\t{i}\n" for s, i in pairs)
    out = subprocess.run([cli, *flags], input=text, capture_output=True, text=True, check=True, timeout=240)
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


D2019 = "https://json-schema.org/draft/2019-09/schema"
TYPES = [{"type": "integer"}, {"type": "string"}, {"type": "boolean"}, {}, {"type": "null"}]


def dynamic_ref_family():
    """Schemas where a list's items go through a dynamic reference whose target
    is decided by the root, an extending resource, the list itself, or (no
    bookend) plainly: every combination of who declares the anchor, how the
    list is reached and what the fragment is."""
    schemas = []
    for root_type, ext_type, own_type in itertools.product([None, 0, 1], [None, 2, 3], [1, 4]):
        for fragment, own_kind, reach in itertools.product(
                ["#item", "#/$defs/item"], ["$dynamicAnchor", "$anchor"],
                ["list", "ext", "both"]):
            if reach != "list" and ext_type is None:
                continue
            defs = {"list": {"$id": "list", "type": "array", "items": {"$dynamicRef": fragment},
                             "$defs": {"item": {own_kind: "item", **TYPES[own_type]}}}}
            if root_type is not None:
                defs["mine"] = {"$dynamicAnchor": "item", **TYPES[root_type]}
            if ext_type is not None:
                defs["ext"] = {"$id": "ext", "$ref": "list",
                               "$defs": {"i": {"$dynamicAnchor": "item", **TYPES[ext_type]}}}
            root = {"$schema": D2020, "$id": f"https://example.com/d{len(schemas)}", "$defs": defs}
            if reach == "both":
                root["anyOf"] = [{"$ref": "list"}, {"$ref": "ext"}]
            else:
                root["$ref"] = reach
            schemas.append(root)
    for outer, inner, reach in itertools.product([False, True], [False, True], ["inner", "self"]):
        root = {"$schema": D2019, "$id": f"https://example.com/r{len(schemas)}",
                "type": "array", "items": {"type": "integer"} if reach == "self" else {"$ref": "inner"},
                "$defs": {"inner": {"$id": "inner", "type": "array",
                                    "items": {"anyOf": [{"type": "string"}, {"$recursiveRef": "#"}]}}}}
        if outer:
            root["$recursiveAnchor"] = True
        if inner:
            root["$defs"]["inner"]["$recursiveAnchor"] = True
        if reach == "self":  # A tuple whose first item is the root again.
            root["items"] = [{"$recursiveRef": "#"}]
            root["additionalItems"] = {"type": "integer"}
        schemas.append(root)
    return schemas


class DynamicScopeOracle:
    """An independent validator for dynamic_ref_family()'s keywords, written from
    the specs' dynamic scope rules (2020-12 core 8.2.3.2, 2019-09 core 8.2.4.2):
    $id, $defs, $ref, $anchor, $dynamicAnchor, $dynamicRef, $recursiveAnchor,
    $recursiveRef, type, items (and the pre-2020-12 tuple with additionalItems),
    anyOf. Debian's python3-jsonschema 4.10 cannot be the oracle here: it does
    not resolve $dynamicRef into embedded resources and has no 2019-09
    validator. Where a newer jsonschema is installed, it must agree with this."""

    TYPES = {"integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
             "string": lambda v: isinstance(v, str), "boolean": lambda v: isinstance(v, bool),
             "null": lambda v: v is None, "array": lambda v: isinstance(v, list)}

    def __init__(self, root):
        self.resources, self.anchors, self.dynamic, self.base = {}, {}, {}, {}
        self.root = root
        self._index(root, "https://example.com/")

    def _index(self, s, base):
        if not isinstance(s, dict):
            return
        if "$id" in s:
            base = urllib.parse.urljoin(base, s["$id"])
            self.resources[base] = s
        self.base[id(s)] = base
        for key in ("$anchor", "$dynamicAnchor"):
            if key in s:
                self.anchors[f"{base}#{s[key]}"] = s
        if "$dynamicAnchor" in s:
            self.dynamic[f"{base}#{s['$dynamicAnchor']}"] = s
        children = list(s.get("$defs", {}).values()) + s.get("anyOf", [])
        items = s.get("items")
        children += items if isinstance(items, list) else [items] if items is not None else []
        if "additionalItems" in s:
            children.append(s["additionalItems"])
        for child in children:
            self._index(child, base)

    def _resolve(self, ref, base):
        uri, fragment = urllib.parse.urldefrag(urllib.parse.urljoin(base, ref))
        if fragment.startswith("/") or not fragment:
            target = self.resources[uri]
            for token in filter(None, fragment.split("/")):
                target = target[int(token) if isinstance(target, list) else token]
            return target
        return self.anchors[f"{uri}#{fragment}"]

    def valid(self, instance, s=None, scope=()):
        s = self.root if s is None else s
        base = self.base[id(s)]
        if not scope or scope[-1] != base:
            scope = scope + (base,)  # Evaluating inside a resource puts it in the scope.
        if "type" in s and not self.TYPES[s["type"]](instance):
            return False
        if "$ref" in s and not self.valid(instance, self._resolve(s["$ref"], base), scope):
            return False
        if "$dynamicRef" in s:
            target = self._resolve(s["$dynamicRef"], base)
            fragment = urllib.parse.urldefrag(s["$dynamicRef"])[1]
            if fragment and not fragment.startswith("/") and \
                    target.get("$dynamicAnchor") == fragment:
                # The outermost resource in the dynamic scope declaring it.
                target = next(self.dynamic[f"{r}#{fragment}"] for r in scope
                              if f"{r}#{fragment}" in self.dynamic)
            if not self.valid(instance, target, scope):
                return False
        if "$recursiveRef" in s:
            target = self.resources[base]
            if target.get("$recursiveAnchor") is True:
                for r in reversed(scope):  # Outwards while resources have it.
                    if self.resources[r].get("$recursiveAnchor") is not True:
                        break
                    target = self.resources[r]
            if not self.valid(instance, target, scope):
                return False
        if "anyOf" in s and not any(self.valid(instance, b, scope) for b in s["anyOf"]):
            return False
        if isinstance(instance, list) and "items" in s:
            items = s["items"]
            if isinstance(items, list):
                rest = s.get("additionalItems")
                schemas = items + [rest] * max(0, len(instance) - len(items))
                if rest is None:
                    schemas = items[:len(instance)]
                    instance = instance[:len(items)]
            else:
                schemas = [items] * len(instance)
            if not all(self.valid(i, t, scope) for i, t in zip(instance, schemas)):
                return False
        return True


def check_dynamic_refs(cli):
    values = [1, "a", True, None, []]
    instances = [list(t) for n in range(4) for t in itertools.product(values, repeat=n)]
    instances += [[[1]], [["a", [2]]], [[[]]], {"a": 1}]
    schemas = dynamic_ref_family()
    pairs = [(dumps(s), dumps(i)) for s in schemas for i in instances]
    verdicts = run_cli(cli, pairs)
    failures, compiled, refused = [], set(), set()
    oracles = [DynamicScopeOracle(schema) for schema in schemas]
    if jsonschema_version() >= (4, 18):  # A second, independent opinion on the oracle.
        for schema, oracle in zip(schemas, oracles):
            for instance in instances:
                if python_verdict(schema, instance) != oracle.valid(instance):
                    failures.append(f"python3-jsonschema and the oracle differ: {dumps(schema)} "
                                    f"on {dumps(instance)}")
    for k, (ref, engine) in enumerate(verdicts):
        schema, instance = schemas[k // len(instances)], instances[k % len(instances)]
        label = f"{dumps(schema)} on {dumps(instance)}"
        if engine.startswith("E:"):
            refused.add(k // len(instances))
            if engine != "E:UNIMPLEMENTED":
                failures.append(f"engine refused with {engine}: {label}")
            continue
        compiled.add(k // len(instances))
        want = "1" if oracles[k // len(instances)].valid(instance) else "0"
        if engine != want or ref != want:
            failures.append(f"the dynamic-scope oracle says {want}, engine {engine}, "
                            f"reference {ref}: {label}")
    if not compiled or not refused:
        failures.append(f"dynamic refs: {len(compiled)} compiled, {len(refused)} refused "
                        "(both must occur)")
    return len(schemas), len(compiled), len(pairs), failures


# Parts a schema may apply in place, for unevaluated_family(): some evaluate
# members / items (properties, patternProperties, additionalProperties, a
# nested unevaluated*, prefixItems, items), some evaluate nothing (required,
# minItems, `not`), some are conditional (anyOf, if), which the engine refuses
# only when they evaluate something.
PROPERTY_PARTS = [{"properties": {"b": {"type": "integer"}}},
                  {"patternProperties": {"^c": {"type": "string"}}},
                  {"additionalProperties": {"type": "integer"}},
                  {"unevaluatedProperties": {"type": "string"}},
                  {"required": ["a"]}, {"allOf": [{"properties": {"d": True}}]},
                  {"not": {"properties": {"b": {"type": "string"}}, "required": ["b"]}},
                  {"anyOf": [{"required": ["b"]}, {"minProperties": 3}]},
                  {"anyOf": [{"properties": {"e": True}}, True]},
                  {"if": {"required": ["a"]}, "then": {"properties": {"e": True}}}, True]
ITEM_PARTS = [{"prefixItems": [True, {"type": "string"}]}, {"prefixItems": [{"type": "integer"}]},
              {"items": {"type": "integer"}}, {"unevaluatedItems": {"type": "integer"}},
              {"minItems": 1}, {"allOf": [{"prefixItems": [True, True, True]}]},
              {"not": {"prefixItems": [{"type": "string"}]}},
              {"anyOf": [{"prefixItems": [True, {"type": "integer"}]}, True]}, True]


def unevaluated_family(rng, n):
    """(schema, instances) pairs: unevaluatedProperties / unevaluatedItems beside
    own keywords, allOf and $ref to random parts."""
    out = []
    objects = [dict(zip("abcde", values)) for values in
               itertools.product([None, 1, "s"], repeat=5)]
    objects = [{k: v for k, v in o.items() if v is not None} for o in objects]
    arrays = [list(t) for n_items in range(5) for t in itertools.product([1, "s"], repeat=n_items)]
    for k in range(n):
        items = k % 2 == 1
        parts = ITEM_PARTS if items else PROPERTY_PARTS
        schema = {"$schema": D2020}
        if items:
            if rng.random() < 0.5:
                schema["prefixItems"] = [{"type": "string"}]
        else:
            if rng.random() < 0.5:
                schema["properties"] = {"a": {"type": "integer"}}
            if rng.random() < 0.3:
                schema["patternProperties"] = {"^e": {"type": "integer"}}
        schema["allOf"] = rng.sample(parts, rng.randrange(0, 3)) or [True]
        if rng.random() < 0.5:
            schema["$defs"] = {"r": rng.choice(parts)}
            schema["$ref"] = "#/$defs/r"
        if rng.random() < 0.4:
            schema.update(rng.choice([p for p in parts if p is not True]))
        schema["unevaluatedItems" if items else "unevaluatedProperties"] = rng.choice(
            [False, {"type": "integer"}, True])
        out.append((schema, arrays if items else objects))
    return out


def evaluate(schema, instance, root):
    """(valid, evaluated): an annotation-collecting validator for
    unevaluated_family()'s keywords, written from 2020-12 core 11.2/11.3 and
    10.3 (evaluated = keys / item indexes that adjacent keywords and
    successful in-place subschemas evaluated; `not` keeps none). Debian's
    python3-jsonschema 4.10 cannot be the oracle: it counts no member that
    additionalProperties evaluated. Where jsonschema >= 4.18 is installed it
    must agree with this."""
    if isinstance(schema, bool):
        return schema, set()
    is_obj, is_arr = isinstance(instance, dict), isinstance(instance, list)
    ok, seen = True, set()
    types = {"integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
             "string": lambda v: isinstance(v, str)}
    if "type" in schema and not types[schema["type"]](instance):
        ok = False
    if is_obj:
        props, patterns = schema.get("properties", {}), schema.get("patternProperties", {})
        for key, value in instance.items():
            hit = False
            if key in props:
                hit = True
                ok &= evaluate(props[key], value, root)[0]
            for pattern, sub in patterns.items():
                if re.search(pattern, key):
                    hit = True
                    ok &= evaluate(sub, value, root)[0]
            if hit:
                seen.add(key)
            elif "additionalProperties" in schema:
                seen.add(key)
                ok &= evaluate(schema["additionalProperties"], value, root)[0]
        ok &= all(k in instance for k in schema.get("required", []))
        ok &= len(instance) >= schema.get("minProperties", 0)
    if is_arr:
        prefix = schema.get("prefixItems", [])
        for i, (sub, value) in enumerate(zip(prefix, instance)):
            ok &= evaluate(sub, value, root)[0]
            seen.add(i)
        if "items" in schema:
            for i in range(len(prefix), len(instance)):
                ok &= evaluate(schema["items"], instance[i], root)[0]
                seen.add(i)
        ok &= len(instance) >= schema.get("minItems", 0)
    in_place = list(schema.get("allOf", []))
    if "$ref" in schema:
        in_place.append(root["$defs"][schema["$ref"].split("/")[-1]])
    for sub in in_place:
        sub_ok, sub_seen = evaluate(sub, instance, root)
        ok &= sub_ok
        seen |= sub_seen
    if "anyOf" in schema:
        results = [evaluate(sub, instance, root) for sub in schema["anyOf"]]
        ok &= any(r[0] for r in results)
        for r in results:
            seen |= r[1] if r[0] else set()
    if "not" in schema:
        ok &= not evaluate(schema["not"], instance, root)[0]
    if "if" in schema:
        if_ok, if_seen = evaluate(schema["if"], instance, root)
        branch = schema.get("then" if if_ok else "else", True)
        branch_ok, branch_seen = evaluate(branch, instance, root)
        ok &= branch_ok
        seen |= (if_seen if if_ok else set()) | branch_seen
    for keyword, applies in (("unevaluatedProperties", is_obj), ("unevaluatedItems", is_arr)):
        if keyword in schema and applies:
            rest = [k for k in (instance if is_obj else range(len(instance))) if k not in seen]
            for k in rest:
                ok &= evaluate(schema[keyword], instance[k], root)[0]
                seen.add(k)
    if not ok:
        return False, set()
    return True, seen


def check_unevaluated(cli):
    """unevaluatedProperties / unevaluatedItems: every compiled schema of the
    family agrees with evaluate() on every instance (any property order);
    refusals are UNIMPLEMENTED; both occur."""
    family = unevaluated_family(random.Random(12), 240)
    # Every generated shape compiles since allOf parts with the same
    # patternProperties merge; an anyOf of 5 branches beside unevaluatedItems
    # (at most 4 are resolved) keeps the refusal path checked.
    family.append(({"anyOf": [{"prefixItems": [True]}, True, True, True, True],
                    "unevaluatedItems": False}, [[], [1], ["a", 1]]))
    pairs, where = [], []
    for si, (schema, instances) in enumerate(family):
        for instance in instances:
            pairs.append((dumps(schema), dumps(instance)))
            where.append((si, instance))
    verdicts = run_cli(cli, pairs, "--any_order")
    failures, compiled, refused = [], set(), set()
    if jsonschema_version() >= (4, 18):  # A second, independent opinion on the oracle.
        for (si, instance) in where:
            schema = family[si][0]
            if python_verdict(schema, instance) != evaluate(schema, instance, schema)[0]:
                failures.append(f"python3-jsonschema and the oracle differ: {dumps(schema)} "
                                f"on {dumps(instance)}")
    for (si, instance), (ref, engine) in zip(where, verdicts):
        schema = family[si][0]
        if engine.startswith("E:"):
            refused.add(si)
            if engine != "E:UNIMPLEMENTED":
                failures.append(f"engine refused with {engine}: {dumps(schema)}")
            continue
        compiled.add(si)
        want = "1" if evaluate(schema, instance, schema)[0] else "0"
        if engine != want or ref != want:
            failures.append(f"the annotation oracle says {want}, engine {engine}, "
                            f"reference {ref}: {dumps(schema)} on {dumps(instance)}")
    if not compiled or not refused:
        failures.append(f"unevaluated: {len(compiled)} compiled, {len(refused)} refused "
                        "(both must occur)")
    return len(family), len(compiled), len(pairs), failures


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cli", required=True)
    parser.add_argument("--cases", required=True)
    args = parser.parse_args()
    n_cases, failures = check_dialect_cases(args.cli, args.cases)
    n_dynamic, n_compiled, n_dynamic_pairs, more = check_dynamic_refs(args.cli)
    failures += more
    n_unevaluated, n_unevaluated_compiled, n_unevaluated_pairs, more = check_unevaluated(args.cli)
    failures += more
    n_points, differences, more = check_unicode_classes(args.cli)
    failures += more
    for f in failures[:60]:
        print("FAIL", f)
    print(f"{n_cases} dialect cases, {n_dynamic} dynamic-reference schemas ({n_compiled} "
          f"compiled, {n_dynamic_pairs} instances checked), {n_unevaluated} unevaluated* schemas "
          f"({n_unevaluated_compiled} compiled, {n_unevaluated_pairs} instances), "
          f"{n_points} class checks ({differences} documented "
          f"differences from Python's re), {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
