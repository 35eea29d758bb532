#!/usr/bin/env python3
"""JSON Schema formats against independent references.

For each format the engine generates exactly, three checks:
 1. hand-picked strings from the RFCs (and the JSON-Schema-Test-Suite's
    format cases): the engine (compiled grammar fed byte by byte, masks
    checked, json_schema_verdicts_cli) must accept the valid ones and reject
    the invalid ones;
 2. mutants of the valid strings (1-3 random edits over the format's own
    alphabet): the engine's verdict must equal the reference's. References:
    python3-idna (idn-hostname, the domain of idn-email), python3-rfc3987
    (uri, uri-reference, iri, iri-reference), base64.b64decode(validate=True)
    (byte), ipaddress (address literals), and parsers written here from the
    ABNF (uri-template: RFC 6570 section 2; json-pointer: RFC 6901;
    relative-json-pointer; the local part of idn-email: RFC 6531);
 3. the mask oracle on a small vocabulary (json_schema_format_walks_cli):
    random walks that take any token the mask allows must never get stuck,
    and every output they end with must be valid for the reference.
It also checks that compiler/json_schema/idn_code_points.inc is what
scripts/gen_idn_code_points.py writes from this machine's python3-idna.

Where the engine's language is documented to differ from the reference
(idn-hostname: U-label lengths in code points, not A-label octets; right-to-
left scripts, combining marks and CONTEXTJ/CONTEXTO code points not
generated), the check is one-sided and says so below.

    format_crosscheck.py --verdicts CLI --walks CLI --root REPO"""
import argparse
import binascii
import ipaddress
import json
import random
import re
import subprocess
import sys

import idna
import rfc3987

# ---------------------------------------------------------------- references

HEX = set("0123456789abcdefABCDEF")
ALPHA = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
DIGIT = set("0123456789")


def in_ranges(cp, ranges):
    return any(lo <= cp <= hi for lo, hi in ranges)


UCSCHAR = [(0xA0, 0xD7FF), (0xF900, 0xFDCF), (0xFDF0, 0xFFEF)] + [
    (p << 16, (p << 16) + 0xFFFD) for p in range(1, 14)] + [(0xE1000, 0xEFFFD)]
IPRIVATE = [(0xE000, 0xF8FF), (0xF0000, 0xFFFFD), (0x100000, 0x10FFFD)]


def uri_template_ok(s):
    """RFC 6570 section 2.1-2.4, read character by character."""
    i, n = 0, len(s)

    def pct(i):
        return i + 2 < n and s[i] == "%" and s[i + 1] in HEX and s[i + 2] in HEX

    def varchar(i):  # returns the index after one varchar, or -1
        if i < n and (s[i] in ALPHA or s[i] in DIGIT or s[i] == "_"):
            return i + 1
        return i + 3 if pct(i) else -1

    while i < n:
        c = s[i]
        if c == "{":
            i += 1
            if i < n and s[i] in "+#./;?&=,!@|":
                i += 1
            while True:
                j = varchar(i)
                if j < 0:
                    return False
                i = j
                while True:
                    if i < n and s[i] == "." and varchar(i + 1) >= 0:
                        i = varchar(i + 1)
                    elif varchar(i) >= 0:
                        i = varchar(i)
                    else:
                        break
                if i < n and s[i] == ":":
                    j = i + 1
                    while j < n and s[j] in DIGIT:
                        j += 1
                    digits = s[i + 1:j]
                    if not digits or digits[0] == "0" or len(digits) > 4:
                        return False
                    i = j
                elif i < n and s[i] == "*":
                    i += 1
                if i < n and s[i] == ",":
                    i += 1
                    continue
                if i < n and s[i] == "}":
                    i += 1
                    break
                return False
            continue
        if c == "%":
            if not pct(i):
                return False
            i += 3
            continue
        cp = ord(c)
        literal = (cp in (0x21, 0x23, 0x24, 0x26, 0x3D, 0x5D, 0x5F, 0x7E) or 0x28 <= cp <= 0x3B
                   or 0x3F <= cp <= 0x5B or 0x61 <= cp <= 0x7A or in_ranges(cp, UCSCHAR)
                   or in_ranges(cp, IPRIVATE))
        if not literal:
            return False
        i += 1
    return True


def json_pointer_ok(s):
    """RFC 6901 section 3: *( "/" reference-token ), '~' only as ~0 or ~1."""
    if s and s[0] != "/":
        return False
    i = 0
    while i < len(s):
        if s[i] == "~":
            if i + 1 >= len(s) or s[i + 1] not in "01":
                return False
            i += 2
        else:
            i += 1
    return True


def relative_json_pointer_ok(s):
    """draft-handrews-relative-json-pointer-01: non-negative-integer, then "#"
    or a JSON pointer."""
    m = re.match(r"(0|[1-9][0-9]*)", s)
    if not m:
        return False
    rest = s[m.end():]
    return rest == "#" or json_pointer_ok(rest)


def byte_ok(s):
    """RFC 4648 section 4 via Python's strict decoder, which alone still takes
    a whole quantum followed by '=' ("SGk1=")."""
    if len(s) % 4:
        return False
    try:
        binascii.a2b_base64(s.encode("ascii"), strict_mode=True)
        return True
    except (binascii.Error, UnicodeEncodeError, ValueError):
        return False


def idna_ok(s):
    try:
        idna.encode(s)
        return True
    except (idna.IDNAError, UnicodeError, ValueError):
        return False


def load_idn_table(root):
    ranges = []
    with open(f"{root}/compiler/json_schema/idn_code_points.inc") as f:
        for line in f:
            m = re.match(r"\{0x([0-9A-F]+), 0x([0-9A-F]+)\},", line)
            if m:
                ranges.append((int(m.group(1), 16), int(m.group(2), 16)))
    return ranges


IDN_TABLE = []
DOTS = ".\u3002\uff0e\uff61"


def idn_generated(s):
    """Every code point is one the engine generates in U-labels (ASCII or the
    table) and the name uses only the dot separators the engine knows."""
    return all(ord(c) < 0x80 or in_ranges(ord(c), IDN_TABLE) for c in s)


def a_label_lengths_ok(s):
    """IDNA counts octets of A-labels and of the whole A-form name (253); the
    engine counts code points of labels and leaves the whole name unbounded."""
    labels = re.split("[" + DOTS + "]", s)
    if labels and labels[-1] == "":
        labels = labels[:-1]
    # The A-label of a U-label is "xn--" + its punycode (RFC 3492).
    encoded = [b"xn--" + label.encode("punycode") if any(ord(c) >= 0x80 for c in label)
               else label.encode() for label in labels]
    return all(len(e) <= 63 for e in encoded) and len(b".".join(encoded)) <= 253


ATEXT = r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~\-\u0080-\U0010FFFF]"
LOCAL = re.compile(r"(?:" + ATEXT + r"+(?:\." + ATEXT + r"+)*|\"(?:[\x20\x21\x23-\x5B\x5D-\x7E"
                   r"\u0080-\U0010FFFF]|\\[\x20-\x7E])*\")@(.*)\Z", re.S)


def idn_email_ok(s):
    """RFC 6531: the local part as its ABNF says (Python re), the domain with
    python3-idna (split at '.' only) or an address literal (ipaddress)."""
    m = LOCAL.match(s)
    if not m:
        return False
    domain = m.group(1)
    if domain.startswith("[") and domain.endswith("]"):
        inner = domain[1:-1]
        try:
            if inner.startswith("IPv6:"):
                ipaddress.IPv6Address(inner[5:])
                return True
            return re.fullmatch(r"(25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])(\.(25[0-5]|"
                                r"2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])){3}", inner) is not None
        except ValueError:
            return False
    if not domain or domain.endswith(".") or any(c in domain for c in DOTS[1:]):
        return False
    return idna_ok(domain)


def rfc3987_ok(rule):
    return lambda s: rfc3987.match(s, rule) is not None


REFERENCES = {
    "uri-template": uri_template_ok,
    "json-pointer": json_pointer_ok,
    "relative-json-pointer": relative_json_pointer_ok,
    "byte": byte_ok,
    "idn-hostname": idna_ok,
    "idn-email": idn_email_ok,
    "iri": rfc3987_ok("IRI"),
    "iri-reference": rfc3987_ok("IRI_reference"),
    "uri": rfc3987_ok("URI"),
    "uri-reference": rfc3987_ok("URI_reference"),
}

# One-sided formats: the engine's language is a documented subset.

def lengths_ok(fmt, s):
    return a_label_lengths_ok(s.rsplit("@", 1)[-1] if fmt == "idn-email" else s)


SUBSET_OF_REFERENCE = {
    # Engine accepts => reference accepts (when A-label lengths fit);
    # reference accepts and every code point is generated => engine accepts.
    "idn-hostname": lambda s: idn_generated(s),
    "idn-email": lambda s: idn_generated(s.rsplit("@", 1)[-1]),
}

# ---------------------------------------------------------- hand-picked cases

CASES = {
    # RFC 6570 section 1.2 and 3.2 examples; JSON-Schema-Test-Suite.
    "uri-template": (
        ["http://example.com/dictionary/{term:1}/{term}", "http://example.com/dictionary",
         "dictionary/{term:1}/{term}", "{var}", "{+path}/here", "{#x,hello,y}", "X{.list*}",
         "{/var:1,var}", "{;keys*}", "{?x,y,empty}", "?fixed=yes{&x}", "{var:30}",
         "{half}", "O{empty}X", "{x,y}", "{+path:6}/here", "{keys*}", "map?{x,y}",
         "{%20a}", "{a.b.c}", "{=reserved}", "{|x}", "", "{.a}", "{,x}"],
        ["http://example.com/dictionary/{term:1}/{term", "{}", "{+}", "{var:0}", "{var:10000}",
         "{a..b}", "{..a}", "{a.}", "{x y}", "a b", "{{x}}", "}", "{x}}", "<>", "%2", "{x:01}",
         "{x*:3}", "\\", "^", "`", "{x,}", "{,,x}"]),
    # RFC 6901 section 5; JSON-Schema-Test-Suite.
    "json-pointer": (
        ["", "/foo", "/foo/0", "/", "/a~1b", "/c%d", "/e^f", "/g|h", "/i\\j", "/k\"l", "/ ",
         "/m~0n", "/foo/-", "/~1~0", "/é/例"],
        ["#", "#/", "a", "/foo/bar~", "/~2", "~0", "/foo~", "0"]),
    "relative-json-pointer": (
        ["1", "0/foo/bar", "2/0/baz/1/zip", "0#", "1#", "10/a", "0"],
        ["/foo/bar", "-1/foo/bar", "01", "0##", "", "#", "1/~2", "+1"]),
    "byte": (
        ["", "AAAA", "SGVsbG8gd29ybGQ=", "SGk=", "ab+/", "AB==", "ABC=", "VGhlIGV4YW1wbGU="],
        ["A", "AB", "ABC", "A===", "AB=", "====", "ab-_", "AB==AB==", "AB=C", "SGVsbG8gd29ybGQ",
         " AAA", "AAAA\n", "é"]),
    # RFC 5890 U-labels; JSON-Schema-Test-Suite idn-hostname.
    "idn-hostname": (
        ["例え.jp", "münchen.de", "bücher.example", "ドメイン名例.jp", "ドメイン名例。jp",
         "example.com", "EXAMPLE.com", "a-b.c", "a", "ß.de", "παράδειγμα.δοκιμή",
         "пример.испытание", "example.com.", "x" * 63, "a--b"],
        ["", ".", "a..b", "-a", "a-", "ab--c", "xn--ls8h", "München.de", "a b", "a_b",
         "x" * 64, "·", "\u0300a", "ab.-c", "\u200d", "😀.com", "a.b.."]),
    # RFC 6531 section 3.3; JSON-Schema-Test-Suite idn-email.
    "idn-email": (
        ["실례@실례.테스트", "joe.bloggs@example.com", "用户@例子.广告", "δοκιμή@παράδειγμα.δοκιμή",
         "\"joe bloggs\"@example.com", "\"a@b\"@example.com", "te~st@example.com",
         "user@[127.0.0.1]", "user@[IPv6:2001:db8::1]", "a@b", "üñîçøðé@üñîçøðé.com"],
        ["2962", "@example.com", "a@", "a.@b", ".a@b", "a..b@c", "a@b.", "a@-b",
         "a b@c", "a@[300.1.1.1]", "a@[IPv6:zz]", "\"a\"b@c", "a@b..c", "a@ab--c"]),
}

ALPHABETS = {
    "uri-template": "{}+#./;?&=,!@|:*%20aZ9_-~é <>\\^`\"'",
    "json-pointer": "/~012a%é#",
    "relative-json-pointer": "/~0123#a-+",
    "byte": "AZaz09+/=-_ \né",
    "idn-hostname": "ab-.。Zz0üé例ß·\u0300_ A",
    "idn-email": "@.\"\\ ab-[]:IPv601ü例é~",
    "iri": ":/?#[]@!$&'()*+,;=%20aZ-._~é例 <>\\^`{}|\ue000",
    "iri-reference": ":/?#[]@!$&'()*+,;=%20aZ-._~é例 <>\\^`{}|\ue000",
    "uri": ":/?#[]@!$&'()*+,;=%20aZ-._~é <>",
    "uri-reference": ":/?#[]@!$&'()*+,;=%20aZ-._~é <>",
}

EXTRA_SEEDS = {
    "iri": ["http://例え.jp/パス?q=値#frag", "urn:isbn:0451450523", "http://[::1]:80/a",
            "mailto:a@b.c", "http://a/b?\ue000"],
    "iri-reference": ["/パス", "a/b", "//host/p?q#f", "#frag", "", "?q"],
    "uri": ["https://example.com/a?b=c#d", "urn:isbn:0451450523", "http://[::1]:80/a",
            "ftp://u:p@host:21/x"],
    "uri-reference": ["/relative", "a/b", "//host/p?q#f", "#frag", "", "?q"],
}

# ------------------------------------------------------------------- driver


def schema_of(fmt):
    return json.dumps({"type": "string", "format": fmt})


def engine_verdicts(cli, fmt, strings):
    lines = "".join(schema_of(fmt) + "\t" + json.dumps(s, ensure_ascii=False) + "\n"
                    for s in strings)
    out = subprocess.run([cli], input=lines.encode(), capture_output=True, check=True)
    verdicts = [line.split(" ")[1] for line in out.stdout.decode().split("\n")[:-1]]
    assert len(verdicts) == len(strings), (fmt, len(verdicts), len(strings))
    return verdicts


def mutants(rng, seeds, alphabet, n):
    out = []
    for _ in range(n):
        s = list(rng.choice(seeds))
        for _ in range(rng.randint(1, 3)):
            op = rng.randrange(3)
            pos = rng.randint(0, len(s))
            if op == 0 or not s:
                s.insert(pos, rng.choice(alphabet))
            elif op == 1:
                del s[min(pos, len(s) - 1)]
            else:
                s[min(pos, len(s) - 1)] = rng.choice(alphabet)
        out.append("".join(s))
    return out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--verdicts", required=True)
    parser.add_argument("--walks", required=True)
    parser.add_argument("--root", required=True)
    parser.add_argument("--mutants", type=int, default=400)
    parser.add_argument("--walk-count", type=int, default=120)
    args = parser.parse_args()
    IDN_TABLE.extend(load_idn_table(args.root))
    failures = []

    generated = subprocess.run([sys.executable, f"{args.root}/scripts/gen_idn_code_points.py"],
                               capture_output=True, check=True).stdout.decode()
    with open(f"{args.root}/compiler/json_schema/idn_code_points.inc") as f:
        if f.read() != generated:
            failures.append("idn_code_points.inc differs from scripts/gen_idn_code_points.py")

    rng = random.Random(20261125)
    for fmt, reference in REFERENCES.items():
        valid, invalid = CASES.get(fmt, ([], []))
        seeds = valid + EXTRA_SEEDS.get(fmt, [])
        # 1. hand-picked cases, and the reference agrees with them.
        verdicts = engine_verdicts(args.verdicts, fmt, valid + invalid)
        for s, v in zip(valid + invalid, verdicts):
            expected = "1" if s in valid else "0"
            if v != expected:
                failures.append(f"{fmt}: engine says {v} for {s!r}, expected {expected}")
            if reference(s) != (expected == "1"):
                failures.append(f"{fmt}: reference says {reference(s)} for {s!r}")
        # 2. mutants against the reference.
        strings = mutants(rng, seeds, ALPHABETS[fmt], args.mutants)
        verdicts = engine_verdicts(args.verdicts, fmt, strings)
        agree = 0
        for s, v in zip(strings, verdicts):
            if v not in ("0", "1"):
                failures.append(f"{fmt}: engine verdict {v} for {s!r}")
                continue
            engine, ref = v == "1", reference(s)
            if fmt in SUBSET_OF_REFERENCE:
                ok = (not engine or ref or not lengths_ok(fmt, s)) and (
                    engine or not ref or not SUBSET_OF_REFERENCE[fmt](s))
            else:
                ok = engine == ref
            if ok:
                agree += 1
            else:
                failures.append(f"{fmt}: engine {engine}, reference {ref} for {s!r}")
        # 3. walks: every output valid for the reference, none stuck.
        out = subprocess.run([args.walks], capture_output=True, check=True,
                             input=f"{schema_of(fmt)}\t7\t{args.walk_count}\n".encode())
        finished = 0
        for line in out.stdout.decode("utf-8", "replace").split("\n")[:-1]:
            kind, _, text = line.partition(" ")
            if kind == "OK":
                finished += 1
                value = json.loads(text)
                exempt = fmt in SUBSET_OF_REFERENCE and not lengths_ok(fmt, value)
                if not isinstance(value, str) or not (reference(value) or exempt):
                    failures.append(f"{fmt}: a walk ended with {text!r}, invalid for the reference")
            elif kind != "LONG":
                failures.append(f"{fmt}: walk {kind} {text!r}")
        if finished < args.walk_count // 2:
            failures.append(f"{fmt}: only {finished} of {args.walk_count} walks ended")
        print(f"{fmt}: {len(valid)} valid + {len(invalid)} invalid cases, "
              f"{agree}/{len(strings)} mutants agree, {finished} walks checked")
    for f in failures[:60]:
        print("FAIL", f)
    print(f"{len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
