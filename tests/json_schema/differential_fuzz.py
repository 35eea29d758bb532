#!/usr/bin/env python3
"""Differential tester in RE2's testing/ style: random JSON Schemas over the
supported keyword set, random instances near each schema, and three verdicts
compared on every (schema, instance) pair:

  python    python3-jsonschema (Draft 2020-12), with `pattern`,
            `patternProperties` (and its use by additionalProperties) and
            `format` given exact ECMA-262 / RFC semantics: every pattern is
            generated from a small syntax tree that is written out twice, as
            ECMA-262 text for the schema and as an equivalent Python `re`
            pattern (\\d, \\w, \\s, `.`, \\p{..} spelled as explicit classes,
            `$` as \\Z), and `multipleOf` is decided in decimal arithmetic
            (Python's float division says 0.3 is no multiple of 0.1);
  reference the project's reference validator on the parsed schema;
  engine    the compiled grammar, the instance's bytes fed through the masks
            (json_schema_verdicts_cli, any-order properties, so that the
            language is JSON Schema's).

Instances are json.dumps'd with ", "/": " and compact separators, with
ensure_ascii False and True, and once more with each code point from U+007F
up spelled at random as is or as its \\u escape (both mixed in one string,
docs/architecture.md): every spelling is checked like the others. A schema
the engine refuses is counted by reason, not compared. Any other difference
is a disagreement: the program prints a minimal reproduction of each and
exits 1.

    differential_fuzz.py --cli build/release/tests/json_schema/json_schema_verdicts_cli \\
        --seed 1 --schemas 300 [--instances 12] [--show 20]"""
import argparse
import base64
import collections
import copy
import decimal
import importlib.util
import json
import os
import random
import re
import subprocess
import sys
import unicodedata

import jsonschema

D2020 = "https://json-schema.org/draft/2020-12/schema"

# ------------------------------------------------------------------ patterns
# Characters the patterns and strings are made of: ASCII, Latin-1, a Unicode
# space, Greek, CJK, an emoji (outside the BMP), a combining mark, a digit of
# another script. All are assigned since Unicode 6, so the engine's tables
# (utf8proc) and Python's unicodedata agree on them.
ALPHABET = ["a", "b", "c", "A", "Z", "0", "1", "9", "_", "-", " ", ".", "\t", "\n",
            "\u00e9", "\u00a0", "\u03a9", "\u4e2d", "\U0001f600", "\u0301", "\u0663",
            "\u2028", "\u3000", "\"", "\\", "/", "~", "@", ":", "\x01", "\u00ff"]

ECMA_SPACE = {0x09, 0x0B, 0x0C, 0x20, 0xA0, 0xFEFF, 0x0A, 0x0D, 0x2028, 0x2029}


def py_class(pred_name):
    """An explicit Python class body for an ECMA-262 escape or property."""
    return _CLASS_BODIES[pred_name]


def _ranges_body(pred):
    out, start = [], None
    for c in range(0x110000 + 1):
        inside = c <= 0x10FFFF and not 0xD800 <= c <= 0xDFFF and pred(c)
        if inside and start is None:
            start = c
        elif not inside and start is not None:
            out.append((start, c - 1))
            start = None
    return "".join(f"\\U{a:08x}" if a == b else f"\\U{a:08x}-\\U{b:08x}" for a, b in out)


_CLASS_BODIES = {}
_PREDICATES = {
    "d": lambda c: 0x30 <= c <= 0x39,
    "w": lambda c: c < 128 and (chr(c).isalnum() or c == 0x5F),
    "s": lambda c: c in ECMA_SPACE or unicodedata.category(chr(c)) == "Zs",
    "dot": lambda c: c not in (0x0A, 0x0D, 0x2028, 0x2029),
    "L": lambda c: unicodedata.category(chr(c)).startswith("L"),
    "Lu": lambda c: unicodedata.category(chr(c)) == "Lu",
    "Ll": lambda c: unicodedata.category(chr(c)) == "Ll",
    "N": lambda c: unicodedata.category(chr(c)).startswith("N"),
    "Nd": lambda c: unicodedata.category(chr(c)) == "Nd",
    "Zs": lambda c: unicodedata.category(chr(c)) == "Zs",
    "M": lambda c: unicodedata.category(chr(c)).startswith("M"),
}


def class_body(name):
    if name not in _CLASS_BODIES:
        _CLASS_BODIES[name] = _ranges_body(_PREDICATES[name])
    return _CLASS_BODIES[name]


ECMA_SYNTAX = set("^$\\.*+?()[]{}|/")


def ecma_literal(ch):
    return "\\" + ch if ch in ECMA_SYNTAX else {"\t": "\\t", "\n": "\\n"}.get(ch, ch)


def py_literal(ch):
    return f"\\U{ord(ch):08x}"


class Pattern:
    """A pattern's two spellings and a sampler of strings it matches."""

    def __init__(self, ecma, py, sample):
        self.ecma, self.py, self.sample = ecma, py, sample


def gen_atom(rng, depth):
    r = rng.random()
    if r < 0.45:
        ch = rng.choice(ALPHABET)
        return Pattern(ecma_literal(ch), py_literal(ch), lambda rng, ch=ch: ch)
    if r < 0.65:
        esc = rng.choice(["d", "D", "w", "W", "s", "S", "dot", "p", "P"])
        if esc in ("p", "P"):
            prop = rng.choice(["L", "Lu", "Ll", "N", "Nd", "Zs", "M"])
            ecma = f"\\{esc}{{{prop}}}"
            body, neg = class_body(prop), esc == "P"
        elif esc == "dot":
            ecma, body, neg = ".", class_body("dot"), False
        else:
            ecma, body, neg = "\\" + esc, class_body(esc.lower()), esc.isupper()
        py = ("[^" if neg else "[") + body + "]"
        compiled = re.compile(py)
        pool = [c for c in ALPHABET if compiled.fullmatch(c)]
        return Pattern(ecma, py, lambda rng, pool=pool: rng.choice(pool) if pool else "")
    if r < 0.85:
        # A bracket class of literals, ranges and escapes, maybe negated.
        neg = rng.random() < 0.3
        ecma_parts, py_parts = [], []
        for _ in range(rng.randint(1, 3)):
            k = rng.random()
            if k < 0.5:
                ch = rng.choice(ALPHABET)
                ecma_parts.append("\\" + ch if ch in "\\]^-[" else ecma_literal(ch))
                py_parts.append(py_literal(ch))
            elif k < 0.8:
                a, b = sorted(rng.sample(ALPHABET, 2), key=ord)
                ecma_parts.append((ecma_literal(a) if a not in "\\]^-[" else "\\" + a) + "-" +
                                  (ecma_literal(b) if b not in "\\]^-[" else "\\" + b))
                py_parts.append(py_literal(a) + "-" + py_literal(b))
            else:
                esc = rng.choice(["d", "w", "s"])
                ecma_parts.append("\\" + esc)
                py_parts.append(class_body(esc))
        ecma = "[" + ("^" if neg else "") + "".join(ecma_parts) + "]"
        py = "[" + ("^" if neg else "") + "".join(py_parts) + "]"
        compiled = re.compile(py)
        pool = [c for c in ALPHABET if compiled.fullmatch(c)]
        return Pattern(ecma, py, lambda rng, pool=pool: rng.choice(pool) if pool else "")
    if depth > 0:
        inner = gen_alt(rng, depth - 1)
        capture = rng.random() < 0.5
        return Pattern(("(" if capture else "(?:") + inner.ecma + ")", "(?:" + inner.py + ")",
                       inner.sample)
    ch = rng.choice(ALPHABET)
    return Pattern(ecma_literal(ch), py_literal(ch), lambda rng, ch=ch: ch)


def gen_piece(rng, depth):
    atom = gen_atom(rng, depth)
    r = rng.random()
    if r < 0.6:
        return atom
    q = rng.choice(["?", "*", "+", "{n}", "{n,m}", "{n,}"])
    lo, hi = 0, 3
    if q == "?":
        lo, hi = 0, 1
    elif q == "+":
        lo = 1
    elif q == "{n}":
        lo = hi = rng.randint(0, 3)
        q = "{%d}" % lo
    elif q == "{n,m}":
        lo = rng.randint(0, 2)
        hi = lo + rng.randint(0, 2)
        q = "{%d,%d}" % (lo, hi)
    elif q == "{n,}":
        lo = rng.randint(0, 2)
        hi = lo + 2
        q = "{%d,}" % lo

    def sample(rng, atom=atom, lo=lo, hi=hi):
        return "".join(atom.sample(rng) for _ in range(rng.randint(lo, hi)))
    return Pattern(atom.ecma + q, atom.py + q, sample)


def gen_concat(rng, depth):
    pieces = [gen_piece(rng, depth) for _ in range(rng.randint(1, 3))]
    return Pattern("".join(p.ecma for p in pieces), "".join(p.py for p in pieces),
                   lambda rng: "".join(p.sample(rng) for p in pieces))


def gen_alt(rng, depth):
    alts = [gen_concat(rng, depth) for _ in range(1 if rng.random() < 0.7 else 2)]
    return Pattern("|".join(a.ecma for a in alts), "|".join(a.py for a in alts),
                   lambda rng: rng.choice(alts).sample(rng))


# ECMA text -> (Python pattern, sampler). Patterns are registered as they are
# generated; joins of patternProperties' patterns (python-jsonschema tests
# additional properties against "|".join of them) are registered too.
PATTERNS = {}


def gen_pattern(rng):
    body = gen_alt(rng, 1)
    start = rng.random() < 0.5
    end = rng.random() < 0.5
    if start or end:
        body = Pattern("(?:" + body.ecma + ")", "(?:" + body.py + ")", body.sample)
    ecma = ("^" if start else "") + body.ecma + ("$" if end else "")
    py = ("^" if start else "") + body.py + ("\\Z" if end else "")
    if ecma in PATTERNS and PATTERNS[ecma][0] != py:
        raise AssertionError(f"one ECMA pattern, two translations: {ecma}")

    def sample(rng, body=body, start=start, end=end):
        s = body.sample(rng)
        if not start and rng.random() < 0.3:
            s = rng.choice(ALPHABET) + s
        if not end and rng.random() < 0.3:
            s += rng.choice(ALPHABET)
        return s
    PATTERNS[ecma] = (py, sample)
    return ecma


_COMPILED = {}


def py_regex(ecma):
    if ecma not in _COMPILED:
        _COMPILED[ecma] = re.compile(PATTERNS[ecma][0])
    return _COMPILED[ecma]


# ------------------------------------------------------------------- formats
def _load_format_references():
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "format_crosscheck.py")
    spec = importlib.util.spec_from_file_location("format_crosscheck", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


FORMAT_REFS = _load_format_references()


def date_ok(s):
    m = re.fullmatch(r"([0-9]{4})-([0-9]{2})-([0-9]{2})", s)
    if not m:
        return False
    y, mo, d = (int(x) for x in m.groups())
    leap = y % 4 == 0 and (y % 100 != 0 or y % 400 == 0)
    days = [31, 29 if leap else 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
    return 1 <= mo <= 12 and 1 <= d <= days[mo - 1]


def ipv4_ok(s):
    octet = r"(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])"
    return re.fullmatch(octet + r"(?:\." + octet + "){3}", s) is not None


def uuid_ok(s):
    return re.fullmatch(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-"
                        r"[0-9a-fA-F]{12}", s) is not None


FORMATS = {
    "date": (date_ok, ["2024-02-29", "2023-02-29", "2000-02-29", "1900-02-29", "2023-12-31",
                       "2023-13-01", "0000-01-01", "2023-1-01", "2023-04-31"]),
    "ipv4": (ipv4_ok, ["127.0.0.1", "255.255.255.255", "256.1.1.1", "01.2.3.4", "1.2.3",
                       "0.0.0.0", "1.2.3.4.5"]),
    "uuid": (uuid_ok, ["123e4567-e89b-12d3-a456-426614174000", "123e4567e89b12d3a456426614174000",
                       "123E4567-E89B-12D3-A456-42661417400G"]),
    "json-pointer": (FORMAT_REFS.json_pointer_ok, ["", "/", "/a~0b", "/a~2", "a/b", "/~1/"]),
    "relative-json-pointer": (FORMAT_REFS.relative_json_pointer_ok,
                              ["0", "1#", "01", "2/a", "-1", "0/~0"]),
    "byte": (FORMAT_REFS.byte_ok, ["", "SGk=", "SGk", "SGk1", "SGk1=", "AA==", "A==="]),
}

FORMAT_CHECKER = jsonschema.FormatChecker(formats=())
for _name, (_check, _) in FORMATS.items():
    FORMAT_CHECKER.checks(_name)(lambda x, check=_check: not isinstance(x, str) or check(x))


# ---------------------------------------------------------------- the oracle
def _pattern(validator, patrn, instance, schema):
    if validator.is_type(instance, "string") and not py_regex(patrn).search(instance):
        yield jsonschema.ValidationError(f"{instance!r} does not match {patrn!r}")


def _pattern_properties(validator, patterns, instance, schema):
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        for k, v in instance.items():
            if py_regex(pattern).search(k):
                yield from validator.descend(v, subschema, path=k, schema_path=pattern)


def _additional_properties(validator, aP, instance, schema):
    if not validator.is_type(instance, "object"):
        return
    properties = schema.get("properties", {})
    patterns = [py_regex(p) for p in schema.get("patternProperties", {})]
    extras = [k for k in instance
              if k not in properties and not any(p.search(k) for p in patterns)]
    if validator.is_type(aP, "object"):
        for extra in extras:
            yield from validator.descend(instance[extra], aP, path=extra)
    elif not aP and extras:
        yield jsonschema.ValidationError(f"additional properties {extras!r}")


def _decimal(x):
    return decimal.Decimal(repr(x)) if isinstance(x, float) else decimal.Decimal(x)


def _multiple_of(validator, dB, instance, schema):
    if not validator.is_type(instance, "number"):
        return
    with decimal.localcontext() as ctx:
        ctx.prec = 1000
        if _decimal(instance) % _decimal(dB) != 0:
            yield jsonschema.ValidationError(f"{instance!r} is not a multiple of {dB}")


def json_equal(a, b):
    """JSON equality: booleans are no numbers, numbers compare by value."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if type(a) is not type(b):
        return False
    if isinstance(a, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    return a == b


# python3-jsonschema 4.10.3 compares nested values with Python's ==, so in an
# array or object 1.0 equals true and 0.0 equals false ({"enum":[{"a":1.0}]}
# accepts {"a":true}); the stock verdict is counted apart where it differs.
def _enum(validator, enums, instance, schema):
    if not any(json_equal(instance, e) for e in enums):
        yield jsonschema.ValidationError(f"{instance!r} is not one of {enums!r}")


def _const(validator, const, instance, schema):
    if not json_equal(instance, const):
        yield jsonschema.ValidationError(f"{instance!r} is not {const!r}")


def _unique_items(validator, unique, instance, schema):
    if unique and validator.is_type(instance, "array"):
        for i, x in enumerate(instance):
            if any(json_equal(x, y) for y in instance[i + 1:]):
                yield jsonschema.ValidationError(f"{instance!r} has non-unique items")
                return


Validator = jsonschema.validators.extend(jsonschema.Draft202012Validator, {
    "enum": _enum,
    "const": _const,
    "uniqueItems": _unique_items,
    "pattern": _pattern,
    "patternProperties": _pattern_properties,
    "additionalProperties": _additional_properties,
    "multipleOf": _multiple_of,
})


StockValidator = jsonschema.validators.extend(jsonschema.Draft202012Validator, {
    "pattern": _pattern,
    "patternProperties": _pattern_properties,
    "additionalProperties": _additional_properties,
    "multipleOf": _multiple_of,
})


OVERRIDES = {"pattern": _pattern, "patternProperties": _pattern_properties,
             "additionalProperties": _additional_properties, "multipleOf": _multiple_of,
             "enum": _enum, "const": _const, "uniqueItems": _unique_items}
# python3-jsonschema 4.10.3's additionalItems: false sorts the extra items for
# its message, and raises TypeError when they mix types ([1, []]).
def _additional_items(validator, aI, instance, schema):
    if not validator.is_type(instance, "array") or \
            validator.is_type(schema.get("items", {}), "object"):
        return
    n = len(schema.get("items", []))
    if validator.is_type(aI, "object"):
        for index, item in enumerate(instance[n:], start=n):
            yield from validator.descend(item, aI, path=index)
    elif not aI and len(instance) > n:
        yield jsonschema.ValidationError("additional items are not allowed")


OVERRIDES7 = dict(OVERRIDES, additionalItems=_additional_items)
Validator7 = jsonschema.validators.extend(jsonschema.Draft7Validator, OVERRIDES7)
StockValidator7 = jsonschema.validators.extend(jsonschema.Draft7Validator, {
    k: v for k, v in OVERRIDES7.items() if k not in ("enum", "const", "uniqueItems")})
D7 = "http://json-schema.org/draft-07/schema#"


def python_verdict(schema, data, validator=None):
    if schema.get("$schema") == D7:
        validator = StockValidator7 if validator is StockValidator else Validator7
    try:
        return (validator or Validator)(schema, format_checker=FORMAT_CHECKER).is_valid(data)
    except RecursionError:
        return "error"


# ------------------------------------------------------------ schema generator
KEYS = ["a", "b", "c", "d", "\u00e9", "x1", "aa"]
NUMBERS = [0, 1, 2, -1, 3, 5, 10, 0.5, 2.5, -0.5, 0.25, 1.5, 100, 0.1, -3]
DIVISORS = [1, 2, 5, 10, 0.5, 0.25, 0.1, 0.01, 2.5, 4, 3, 1.5]


class Gen:
    def __init__(self, rng):
        self.rng = rng
        self.defs = {}

    def chance(self, p):
        return self.rng.random() < p

    def schema(self, depth, focus=None):
        rng = self.rng
        if depth <= 0 or self.chance(0.08):
            return self.leaf(focus)
        r = rng.random()
        if r < 0.10:
            return self.combinator(depth, focus)
        if r < 0.16 and self.defs:
            return {"$ref": "#/$defs/" + rng.choice(sorted(self.defs))}
        if focus is None:
            focus = rng.choice(["object", "object", "array", "string", "string", "number",
                                "integer", "scalar"])
        s = getattr(self, "_" + focus)(depth)
        if self.chance(0.12):
            s.update(self.combinator(depth - 1, focus))
        if self.chance(0.15) and "enum" not in s:
            # enum/const beside the other keywords, with values near the
            # schema (some of them excluded by those keywords).
            near = Instances(rng, {"$defs": self.defs})
            values = [near.near(s) for _ in range(rng.randint(1, 3))]
            if len(values) == 1 and self.chance(0.5):
                s["const"] = values[0]
            else:
                s["enum"] = values
        return s

    def leaf(self, focus):
        rng = self.rng
        options = [{}, {"type": "string"}, {"type": "integer"}, {"type": "boolean"},
                   {"type": "null"}, {"type": ["string", "null"]}, {"enum": [1, "a", None]},
                   {"const": "a"}, True, False, {"type": "number", "minimum": 0}]
        if focus == "string":
            return self.string_constraints({"type": "string"})
        if focus in ("number", "integer"):
            return self.number_constraints({"type": focus})
        return copy.deepcopy(rng.choice(options))

    def combinator(self, depth, focus):
        rng = self.rng
        kind = rng.choice(["anyOf", "oneOf", "oneOf", "allOf", "not", "if"])
        if kind == "not":
            return {"not": self.schema(depth - 1, focus if self.chance(0.7) else None)}
        if kind == "if":
            s = {"if": self.schema(depth - 1, focus)}
            if self.chance(0.8):
                s["then"] = self.schema(depth - 1, focus)
            if self.chance(0.6):
                s["else"] = self.schema(depth - 1, focus)
            return s
        n = rng.randint(1, 3)
        return {kind: [self.schema(depth - 1, focus if self.chance(0.8) else None)
                       for _ in range(n)]}

    def _scalar(self, depth):
        rng = self.rng
        r = rng.random()
        if r < 0.3:
            return {"enum": [self.value(2) for _ in range(rng.randint(1, 4))]}
        if r < 0.5:
            return {"const": self.value(2)}
        if r < 0.7:
            return {"type": rng.choice(["boolean", "null", ["boolean", "integer"],
                                        ["null", "string"], ["number", "string"]])}
        return {"type": rng.sample(["string", "number", "integer", "boolean", "null", "object",
                                    "array"], rng.randint(1, 3))}

    def value(self, depth):
        """A random JSON value for enum/const."""
        rng = self.rng
        r = rng.random()
        if r < 0.25:
            return rng.choice(NUMBERS + [1.0, True, False, None])
        if r < 0.55 or depth <= 0:
            return "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 3)))
        if r < 0.8:
            return {rng.choice(KEYS): self.value(depth - 1) for _ in range(rng.randint(0, 2))}
        return [self.value(depth - 1) for _ in range(rng.randint(0, 2))]

    def string_constraints(self, s):
        rng = self.rng
        if self.chance(0.4):
            s["minLength"] = rng.randint(0, 3)
        if self.chance(0.4):
            s["maxLength"] = rng.randint(s.get("minLength", 0), 4)
        if self.chance(0.5):
            s["pattern"] = gen_pattern(rng)
        if self.chance(0.12):
            s["format"] = rng.choice(sorted(FORMATS))
        if self.chance(0.15):
            s["enum"] = ["".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 3)))
                         for _ in range(rng.randint(1, 3))]
        return s

    def _string(self, depth):
        return self.string_constraints({"type": "string"} if self.chance(0.8) else {})

    def number_constraints(self, s):
        rng = self.rng
        for k in ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"]:
            if self.chance(0.3):
                s[k] = rng.choice(NUMBERS)
        if self.chance(0.3):
            s["multipleOf"] = rng.choice(DIVISORS)
        if self.chance(0.08):
            s["enum"] = [rng.choice(NUMBERS + [1.0, 4, 20]) for _ in range(rng.randint(1, 3))]
        return s

    def _number(self, depth):
        return self.number_constraints({"type": "number"} if self.chance(0.8) else {})

    def _integer(self, depth):
        return self.number_constraints({"type": "integer"})

    def _object(self, depth):
        rng = self.rng
        s = {"type": "object"} if self.chance(0.85) else {}
        keys = rng.sample(KEYS, rng.randint(0, 3))
        if keys:
            s["properties"] = {k: self.schema(depth - 1) for k in keys}
        if self.chance(0.5):
            pool = keys + [rng.choice(KEYS)]
            s["required"] = sorted(set(rng.sample(pool, rng.randint(1, len(pool)))))
        if self.chance(0.3):
            s["patternProperties"] = {gen_pattern(rng): self.schema(depth - 1)
                                      for _ in range(rng.randint(1, 2))}
            pats = list(s["patternProperties"])
            if len(pats) > 1:
                joined = "|".join(pats)
                PATTERNS.setdefault(joined, ("|".join("(?:" + PATTERNS[p][0] + ")" for p in pats),
                                             PATTERNS[pats[0]][1]))
        r = rng.random()
        if r < 0.25:
            s["additionalProperties"] = False
        elif r < 0.45:
            s["additionalProperties"] = self.schema(depth - 1)
        if self.chance(0.15):
            s["propertyNames"] = rng.choice([{"pattern": gen_pattern(rng)},
                                             {"maxLength": rng.randint(0, 2)},
                                             {"enum": rng.sample(KEYS, 3)},
                                             {"not": {"const": rng.choice(KEYS)}},
                                             self.names_with_format()])
        if self.chance(0.2):
            s["minProperties"] = rng.randint(0, 2)
        if self.chance(0.2):
            s["maxProperties"] = rng.randint(s.get("minProperties", 0), 3)
        if self.chance(0.12):
            s["dependentRequired"] = {rng.choice(KEYS): rng.sample(KEYS, rng.randint(0, 2))}
        if self.chance(0.1):
            s["dependentSchemas"] = {rng.choice(KEYS): self._object(depth - 1)}
        return s

    def names_with_format(self):
        """propertyNames: an enum of keys beside a format (some keys of it)."""
        fmt = self.rng.choice(sorted(FORMATS))
        return {"enum": self.rng.sample(KEYS, 2) + self.rng.sample(FORMATS[fmt][1], 2),
                "format": fmt}

    def _array(self, depth):
        rng = self.rng
        s = {"type": "array"} if self.chance(0.85) else {}
        if self.chance(0.3):
            s["prefixItems"] = [self.schema(depth - 1) for _ in range(rng.randint(1, 2))]
        r = rng.random()
        if r < 0.5:
            s["items"] = self.schema(depth - 1)
        elif r < 0.6:
            s["items"] = False
        if self.chance(0.25):
            s["contains"] = self.schema(depth - 1)
            if self.chance(0.4):
                s["minContains"] = rng.randint(0, 2)
            if self.chance(0.4):
                s["maxContains"] = rng.randint(s.get("minContains", 0), 3)
        if self.chance(0.3):
            s["minItems"] = rng.randint(0, 2)
        if self.chance(0.3):
            s["maxItems"] = rng.randint(s.get("minItems", 0), 4)
        if self.chance(0.15):
            s["uniqueItems"] = True
            if self.chance(0.7):
                s["items"] = rng.choice([
                    {"enum": [1, 2, "a", True, None]}, {"type": "boolean"},
                    {"enum": [1, 1.5, 2]}, {"type": "string"}, {"type": "string", "minLength": 1}])
        return s

    def pattern_root(self):
        """--patterns: a string pattern alone (the regex engine against
        Python's re on the ECMA-262 translation), maybe with a length."""
        s = {"type": "string", "pattern": gen_pattern(self.rng)}
        if self.chance(0.2):
            s["maxLength"] = self.rng.randint(0, 4)
        return s

    def root(self, depth):
        rng = self.rng
        if self.chance(0.25):
            # Definitions first (maybe recursive), then a root that uses them.
            names = ["n", "m"][:rng.randint(1, 2)]
            for name in names:
                self.defs[name] = None
            for name in names:
                if self.chance(0.5):
                    self.defs[name] = self.recursive(name, depth)
                else:
                    self.defs[name] = self.schema(depth - 1)
        s = self.schema(depth)
        if not isinstance(s, dict):
            s = {"allOf": [s]}
        if self.defs:
            s["$defs"] = self.defs
        if self.chance(0.5):
            s["$schema"] = D2020
        return s

    def recursive(self, name, depth):
        rng = self.rng
        ref = {"$ref": "#/$defs/" + name}
        r = rng.random()
        if r < 0.5:
            s = {"type": "object", "properties": {"v": self.schema(depth - 2), "next": ref}}
            if self.chance(0.5):
                s["required"] = ["v"]
            if self.chance(0.3):
                s["additionalProperties"] = False
            return s
        if r < 0.8:
            return {"anyOf": [self.leaf(None), {"type": "array", "items": ref,
                                                 "maxItems": rng.randint(1, 3)}]}
        return {"oneOf": [{"type": "string", "maxLength": 2},
                          {"type": "object", "properties": {"k": ref},
                           "additionalProperties": self.schema(depth - 2)}]}


# ---------------------------------------------------------- instance generator
class Instances:
    def __init__(self, rng, root, mutation=0.08):
        self.rng, self.root, self.mutation = rng, root, mutation

    def chance(self, p):
        return self.rng.random() < p

    def resolve(self, s, depth=0):
        while isinstance(s, dict) and "$ref" in s and depth < 20:
            s = self.root.get("$defs", {}).get(s["$ref"].rsplit("/", 1)[-1], {})
            depth += 1
        return s

    def near(self, s, depth=0):
        """A value shaped by schema `s`, often valid, sometimes just off."""
        rng = self.rng
        s = self.resolve(s)
        if depth > 6:
            return rng.choice([None, 0, "", []])
        if s is True or s is False or not isinstance(s, dict):
            return self.random_value(2)
        if "enum" in s and s["enum"] and self.chance(0.8):
            return self.mutate(copy.deepcopy(rng.choice(s["enum"])), 0.2)
        if "const" in s and self.chance(0.8):
            return self.mutate(copy.deepcopy(s["const"]), 0.2)
        branches = [b for k in ("anyOf", "oneOf", "allOf") for b in s.get(k, [])]
        for k in ("then", "else", "if"):
            if k in s:
                branches.append(s[k])
        if "dependentSchemas" in s:
            branches += list(s["dependentSchemas"].values())
        if branches and self.chance(0.5):
            base = {k: v for k, v in s.items()
                    if k not in ("anyOf", "oneOf", "allOf", "not", "if", "then", "else")}
            b = self.resolve(rng.choice(branches))
            if isinstance(b, dict) and isinstance(base, dict):
                merged = dict(b)
                merged.update(base)
                s = merged
        t = s.get("type")
        if isinstance(t, list):
            t = rng.choice(t) if t else None
        if t is None:
            if "properties" in s or "required" in s or "patternProperties" in s:
                t = "object"
            elif "items" in s or "prefixItems" in s or "contains" in s:
                t = "array"
            elif "pattern" in s or "minLength" in s or "maxLength" in s or "format" in s:
                t = "string"
            elif any(k in s for k in ("minimum", "maximum", "multipleOf", "exclusiveMinimum",
                                      "exclusiveMaximum")):
                t = "number"
            else:
                t = rng.choice(["object", "array", "string", "number", "integer", "boolean",
                                "null"])
        v = getattr(self, "_" + t)(s, depth)
        return self.mutate(v, self.mutation)

    def _null(self, s, depth):
        return None

    def _boolean(self, s, depth):
        return self.chance(0.5)

    def _string(self, s, depth):
        rng = self.rng
        r = rng.random()
        if "format" in s and r < 0.6:
            return rng.choice(FORMATS[s["format"]][1])
        if "pattern" in s and r < 0.8:
            out = PATTERNS[s["pattern"]][1](rng)
        else:
            lo = s.get("minLength", 0)
            hi = max(lo, s.get("maxLength", 4))
            out = "".join(rng.choice(ALPHABET) for _ in range(rng.randint(max(0, lo - 1), hi + 1)))
        return out

    def number_near(self, s, integer):
        rng = self.rng
        cands = [s[k] for k in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")
                 if k in s] or [0, 1, 7]
        x = rng.choice(cands)
        step = rng.choice([0, 0, 1, -1, 0.5, -0.5, 0.25, 0.1, s.get("multipleOf", 1),
                           -s.get("multipleOf", 1)])
        x = x + step
        if "multipleOf" in s and self.chance(0.5):
            x = s["multipleOf"] * rng.randint(-3, 30)
            if isinstance(x, float):
                x = float(decimal.Decimal(repr(s["multipleOf"])) * rng.randint(-3, 30))
        if integer and self.chance(0.7):
            x = int(x) if not isinstance(x, float) or x == x // 1 else x
        r = rng.random()
        if r < 0.1:
            x = float(x)  # 2.0: an integer for draft 6 on
        elif r < 0.13:
            x = rng.choice([1e16, -1e16, 1.5e16, 12345678901234567890, 1e-7, 0.30000000000000004,
                            -0.0, 1e300])
        return x

    def _number(self, s, depth):
        return self.number_near(s, False)

    def _integer(self, s, depth):
        return self.number_near(s, True)

    def key_for(self, s):
        rng = self.rng
        r = rng.random()
        if r < 0.3 and s.get("patternProperties"):
            return PATTERNS[rng.choice(list(s["patternProperties"]))][1](rng)
        if r < 0.4 and isinstance(s.get("propertyNames"), dict) and \
                "pattern" in s["propertyNames"]:
            return PATTERNS[s["propertyNames"]["pattern"]][1](rng)
        names = s.get("propertyNames")
        if r < 0.5 and isinstance(names, dict) and names.get("enum"):
            return rng.choice(names["enum"])
        if r < 0.5:
            return "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 2)))
        return rng.choice(KEYS)

    def _object(self, s, depth):
        rng = self.rng
        out = {}
        props = s.get("properties", {})
        for k in list(props) + list(s.get("required", [])):
            if k in out or (k not in s.get("required", []) and self.chance(0.3)):
                continue
            if self.chance(0.9):
                out[k] = self.near(props.get(k, s.get("additionalProperties", True)), depth + 1)
        for _ in range(rng.choice([0, 0, 1, 2])):
            k = self.key_for(s)
            sub = props.get(k)
            if sub is None:
                for p, ps in s.get("patternProperties", {}).items():
                    if py_regex(p).search(k):
                        sub = ps
                        break
            out[k] = self.near(sub if sub is not None else s.get("additionalProperties", True),
                               depth + 1)
        for k, deps in s.get("dependentRequired", {}).items():
            if k in out and self.chance(0.7):
                for d in deps:
                    out.setdefault(d, self.random_value(1))
        items = list(out.items())
        rng.shuffle(items)
        return dict(items)

    def _array(self, s, depth):
        rng = self.rng
        lo = s.get("minItems", 0)
        hi = max(lo, s.get("maxItems", 4))
        n = rng.randint(max(0, lo - 1), max(lo, min(hi + 1, 6)))
        prefix = s.get("prefixItems", [])
        out = []
        for i in range(n):
            if i < len(prefix):
                out.append(self.near(prefix[i], depth + 1))
            elif "contains" in s and self.chance(0.4):
                out.append(self.near(s["contains"], depth + 1))
            else:
                out.append(self.near(s.get("items", True), depth + 1))
        if s.get("uniqueItems") and out and self.chance(0.3):
            out.append(copy.deepcopy(rng.choice(out)))
        return out

    def random_value(self, depth):
        rng = self.rng
        r = rng.random()
        if r < 0.3 or depth <= 0:
            return rng.choice([None, True, False, 0, 1, -1, 2.5, 1.0, "", "a", "\u00e9"])
        if r < 0.6:
            return "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 3)))
        if r < 0.8:
            return {rng.choice(KEYS): self.random_value(depth - 1) for _ in range(rng.randint(0, 2))}
        return [self.random_value(depth - 1) for _ in range(rng.randint(0, 2))]

    def mutate(self, v, p):
        rng = self.rng
        if not self.chance(p):
            return v
        if isinstance(v, str):
            chars = list(v)
            op = rng.random()
            if op < 0.4 and chars:
                chars[rng.randrange(len(chars))] = rng.choice(ALPHABET)
            elif op < 0.7:
                chars.insert(rng.randint(0, len(chars)), rng.choice(ALPHABET))
            elif chars:
                del chars[rng.randrange(len(chars))]
            return "".join(chars)
        if isinstance(v, bool) or v is None:
            return rng.choice([0, "", not v if isinstance(v, bool) else False])
        if isinstance(v, (int, float)):
            return rng.choice([v + 1, v - 1, v + 0.5, -v, float(v), str(v)])
        if isinstance(v, dict):
            if v and self.chance(0.5):
                del v[rng.choice(list(v))]
            else:
                v[self.rng.choice(KEYS)] = self.random_value(1)
            return v
        if isinstance(v, list):
            if v and self.chance(0.5):
                v.pop(rng.randrange(len(v)))
            else:
                v.append(self.random_value(1))
            return v
        return v


def to_draft7(s):
    """The same schema in draft-07's words: definitions, array-form items with
    additionalItems, dependencies. minContains/maxContains stay: unknown
    keywords there, which both sides must ignore."""
    if isinstance(s, list):
        return [to_draft7(x) for x in s]
    if not isinstance(s, dict):
        return s
    out = {}
    for k, v in s.items():
        if k == "$defs":
            out["definitions"] = {n: to_draft7(d) for n, d in v.items()}
        elif k == "$ref":
            out["$ref"] = v.replace("#/$defs/", "#/definitions/")
        elif k == "prefixItems":
            out["items"] = to_draft7(v)
            if "items" in s:
                out["additionalItems"] = to_draft7(s["items"])
        elif k == "items" and "prefixItems" in s:
            continue
        elif k in ("dependentRequired", "dependentSchemas"):
            out.setdefault("dependencies", {}).update(to_draft7(v))
        elif k in ("properties", "patternProperties", "dependentSchemas"):
            out[k] = {n: to_draft7(d) for n, d in v.items()}
        elif k in ("enum", "const"):
            out[k] = v
        else:
            out[k] = to_draft7(v)
    if s.get("$schema") or "$defs" in s:
        out["$schema"] = D7
    return out


SPELLINGS = [dict(ensure_ascii=False), dict(ensure_ascii=False, separators=(",", ":")),
             dict(ensure_ascii=True), dict(ensure_ascii=True, separators=(",", ":")),
             dict(ensure_ascii=False, mixed=True)]


def escape_code_point(c):
    """json.dumps(ensure_ascii=True)'s spelling of one character from U+007F up."""
    return json.dumps(c)[1:-1]


def dumps(value, sp, rng):
    """json.dumps with spelling sp; mixed: each character from U+007F up (they
    only occur inside strings) escaped or not at random."""
    args = {k: v for k, v in sp.items() if k != "mixed"}
    text = json.dumps(value, **args)
    if sp.get("mixed"):
        text = "".join(escape_code_point(c) if ord(c) >= 0x7F and rng.random() < 0.5 else c
                       for c in text)
    return text


# ------------------------------------------------------------------- driving
def run_cli(cli, lines, order):
    text = "".join(line + "\n" for line in lines)
    proc = subprocess.run([cli, "--property_order=" + order, "--why"], input=text.encode(),
                          capture_output=True, timeout=3600)
    if proc.returncode != 0:
        return None, proc.stderr.decode(errors="replace")[-2000:]
    out = proc.stdout.decode().split("\n")[:-1]
    assert len(out) == len(lines), (len(out), len(lines))
    return out, None


# Pointers, long quoted parts (patterns, values) and numbers vary; keyword
# names (short quoted parts) say which refusal it is.
REFUSAL_NOISE = re.compile(r"(/[^ ,;:)]*|#[^ ,;:)]*)|\"[^\"]{16,}\"|'[^']*'|\d+")


def refusal_reason(code, why):
    return code + ": " + REFUSAL_NOISE.sub("_", why)[:90]


def check_batch(cli, cases, order, stats, failures):
    """cases: [(schema, instance value)]; compares and records."""
    lines, where = [], []
    rng = random.Random(len(cases))
    for index, (schema, value) in enumerate(cases):
        schema_text = json.dumps(schema)
        seen = set()
        for sp in SPELLINGS:
            try:
                text = dumps(value, sp, rng)
            except ValueError:
                continue
            if sp.get("mixed") and text in seen:
                continue
            seen.add(text)
            lines.append(schema_text + "\t" + text)
            where.append((index, schema, value, text, sp))
    out, err = run_cli(cli, lines, order)
    if out is None:
        # A crash: find the schema that does it, one schema at a time.
        for schema in {json.dumps(s): s for s, _ in cases}.values():
            sub = [(s, v) for s, v in cases if s is schema]
            lines1 = [json.dumps(s) + "\t" + json.dumps(v) for s, v in sub]
            o, e = run_cli(cli, lines1, order)
            if o is None:
                failures.append(("crash", schema, None, e))
                stats["crash"] += 1
        return
    py_cache, refused = {}, set()
    for (index, schema, value, text, sp), line in zip(where, out):
        stats["instances"] += 1
        fields = line.split("\t", 1)
        ref, engine = fields[0].split(" ")
        schema_text = json.dumps(schema)
        if engine.startswith("E:"):
            if schema_text not in refused:
                refused.add(schema_text)
                stats["refused schemas"] += 1
                reason = refusal_reason(engine, fields[1] if len(fields) > 1 else "")
                stats["refusal:" + reason] += 1
            continue
        if index not in py_cache:
            py_cache[index] = python_verdict(schema, value)
            if py_cache[index] != "error" and re.search(r'"(enum|const|uniqueItems)"', schema_text):
                if python_verdict(schema, value, StockValidator) != py_cache[index]:
                    stats["python-jsonschema's bool/number equality bug (documented)"] += 1
        py = py_cache[index]
        if py == "error":
            stats["python_error"] += 1
            continue
        want = "1" if py else "0"
        stats["valid" if py else "invalid"] += 1
        if text != json.dumps(value, ensure_ascii=False, separators=sp.get("separators")):
            stats["\\u spellings checked"] += 1
        if engine == "X":
            failures.append(("mask/accept mismatch", schema, text, ""))
        elif engine != want:
            kind = "invalid accepted" if engine == "1" else "valid rejected"
            if order == "schema" and kind == "valid rejected":
                stats["schema order rejects (contract)"] += 1
            else:
                failures.append((f"engine: {kind}", schema, text, f"reference={ref}"))
        # The reference validator does not check formats, and parses numbers
        # with simdjson (no integers below -2^63 or from 2^64: "E").
        if ref == "E":
            if sp == SPELLINGS[0]:
                stats["reference cannot parse the instance"] += 1
        elif ref != want and sp in (SPELLINGS[0], SPELLINGS[2]) and '"format"' not in schema_text:
            failures.append(("reference validator " + ("accepts" if ref == "1" else "rejects"),
                             schema, text, f"engine={engine}"))


def disagrees(cli, schema, text, kind):
    """Whether (schema, instance text) still shows a disagreement of `kind`."""
    out, _ = run_cli(cli, [json.dumps(schema) + "\t" + text], "any")
    if out is None:
        return kind == "crash"
    ref, engine = out[0].split("\t")[0].split(" ")
    if engine.startswith("E:"):
        return False
    py = python_verdict(schema, json.loads(text))
    if py == "error":
        return False
    want = "1" if py else "0"
    if kind.startswith("engine: invalid"):
        return engine == "1" and want == "0"
    if kind.startswith("engine: valid"):
        return engine == "0" and want == "1"
    if kind.startswith("reference"):
        return ref != want
    return engine == "X"


def smaller(schema):
    """Candidate reductions of a schema: a key dropped, a subschema made true
    or {}, a list shortened."""
    if isinstance(schema, dict):
        for k in list(schema):
            if k == "$defs":
                continue
            yield {kk: vv for kk, vv in schema.items() if kk != k}
        for k, v in schema.items():
            for w in smaller(v):
                yield {**schema, k: w}
    elif isinstance(schema, list):
        for i in range(len(schema)):
            if len(schema) > 1:
                yield schema[:i] + schema[i + 1:]
        for i, v in enumerate(schema):
            for w in smaller(v):
                yield schema[:i] + [w] + schema[i + 1:]
    elif schema is not True and isinstance(schema, (dict, bool)):
        yield True


def minimize(cli, schema, text, kind, budget=400):
    tries = 0
    changed = True
    while changed and tries < budget:
        changed = False
        for cand in smaller(schema):
            tries += 1
            if tries >= budget:
                break
            if disagrees(cli, cand, text, kind):
                schema, changed = cand, True
                break
    return schema


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cli", required=True)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--schemas", type=int, default=300)
    parser.add_argument("--instances", type=int, default=12)
    parser.add_argument("--depth", type=int, default=3)
    parser.add_argument("--batch", type=int, default=200, help="schemas per CLI run")
    parser.add_argument("--show", type=int, default=20)
    parser.add_argument("--dialect", choices=["2020-12", "draft7"], default="2020-12",
                        help="draft7: the schemas rewritten in draft-07's keywords")
    parser.add_argument("--patterns", action="store_true",
                        help="schemas of one string pattern each (a regex differential)")
    parser.add_argument("--failures", help="write every disagreement here (JSON lines)")
    parser.add_argument("--minimize", type=int, default=0,
                        help="minimize the first N distinct disagreements (slow)")
    parser.add_argument("--order", choices=["any", "schema"], default="any",
                        help="schema: only invalid-accepted counts (the language is narrower)")
    args = parser.parse_args()
    sys.setrecursionlimit(5000)
    rng = random.Random(args.seed)
    stats, failures = collections.Counter(), []
    done = 0
    while done < args.schemas:
        cases = []
        for _ in range(min(args.batch, args.schemas - done)):
            schema = Gen(rng).pattern_root() if args.patterns else Gen(rng).root(args.depth)
            inst = Instances(rng, schema, 0.4 if args.patterns else 0.08)
            values = []
            for _ in range(args.instances):
                v = inst.near(schema)
                values.append(v)
            if args.dialect == "draft7":
                schema = to_draft7(schema)
                schema["$schema"] = D7
            for v in values:
                cases.append((schema, v))
            done += 1
        stats["schemas"] += len({json.dumps(s) for s, _ in cases})
        check_batch(args.cli, cases, args.order, stats, failures)
        print(f"... {done} schemas, {stats['instances']} instances, {len(failures)} failures",
              file=sys.stderr, flush=True)
    seen = set()
    shown = 0
    log = open(args.failures, "w", encoding="utf-8") if args.failures else None
    for kind, schema, text, note in failures:
        k = (kind, json.dumps(schema))
        if k in seen:
            continue
        seen.add(k)
        if len(seen) <= args.minimize and text is not None and kind != "crash":
            schema = minimize(args.cli, schema, text, kind)
        if log:
            log.write(json.dumps({"kind": kind, "schema": schema, "instance": text,
                                  "note": note}, ensure_ascii=False) + "\n")
        if shown < args.show:
            print(f"FAIL {kind}: schema {json.dumps(schema, ensure_ascii=False)} "
                  f"instance {text} {note}")
            shown += 1
    by_kind = collections.Counter(k for k, *_ in failures)
    for k, n in sorted(by_kind.items()):
        print(f"disagreements {k}: {n}")
    refusals = sorted(((n, k[8:]) for k, n in stats.items() if k.startswith("refusal:")),
                      reverse=True)
    for n, k in refusals[:15]:
        print(f"  refused {n:6d}  {k}")
    summary = {k: v for k, v in stats.items() if not k.startswith("refusal:")}
    print(f"seed {args.seed}: {json.dumps(summary, sort_keys=True)}; "
          f"{len(failures)} disagreements")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
