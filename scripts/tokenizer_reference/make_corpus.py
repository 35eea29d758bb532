#!/usr/bin/env python3
"""Writes the tokenizer parity corpus: one base64 line per string (bytes).

The strings are every MaskBench instance serialized as the benchmark does
(json.dumps(data, ensure_ascii=False), UTF-8), followed by adversarial
strings for the pre-tokenizer regexes, normalizers, added tokens, BPE and
invalid UTF-8 handling. Base64 keeps the file binary-safe (invalid UTF-8,
newlines inside strings).

Usage: make_corpus.py OUT_FILE [--maskbench PATH]
"""
import argparse
import base64
import gzip
import json
import os
import random
import sys

DEFAULT_MASKBENCH = os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "shared", "maskbench",
    "dev.jsonl.gz")


def maskbench_instances(path):
    with gzip.open(path, "rt", encoding="utf-8") as f:
        for line in f:
            entry = json.loads(line)
            for test in entry.get("tests", []):
                text = json.dumps(test["data"], ensure_ascii=False)
                # Lone surrogates (from \ud800 escapes) have no UTF-8 form; their
                # surrogatepass bytes are invalid UTF-8 that both sides replace.
                yield text.encode("utf-8", "surrogatepass")


def adversarial():
    s = []
    # Whitespace runs: spaces, tabs, newlines, CR, NBSP, ideographic space,
    # and characters where JavaScript's \s differs from PCRE2's.
    for n in [1, 2, 3, 4, 5, 7, 8, 15, 16, 17, 31, 32, 33, 64, 100, 257, 1000, 4096]:
        s.append(" " * n)
        s.append("a" + " " * n + "b")
        s.append("\n" * n)
        s.append("x" + "\t" * n + "y")
    for ws in [" \t\n\r", "\r\n", "\n\r", " \n ", "\t \t\n\n  \r\n\t", "\u00a0", " \u00a0 ",
               "\u3000", "\u3000\u3000x", "\u2028", "\u2029", "\ufeff", "\ufeff hi", "\u0085",
               "a\u0085b", "\x0b\x0c", "\u1680", "\u2000\u200a", "\u202f", "\u205f", "\u200b",
               "\u180e"]:
        s.append(ws)
        s.append("word" + ws + "word")
        s.append(ws * 5 + "end")
        s.append("start" + ws * 3)
    s += ["  leading", "trailing  ", "  both  ", "\n\nx\n\n", "a \n b", "a  \n\n  b",
          "}\n\n\n    {", "x \t\n", " . ", "a.\n", "foo  (", "!!!\n\n", "??  \r\n", "\t\t}"]
    # Digit runs (split by \p{N}{1,3} or \p{N}), non-ASCII numbers.
    for n in range(1, 12):
        s.append("1234567890"[:n] if n <= 10 else "12345678901")
    s += ["3.14159", "1e-10", "-0.0001", "1,000,000", "2024-01-01T00:00:00Z", "0x1F",
          "12345678901234567890", "1" * 100, "\u0663\u0664\u0665", "\u2460\u2461", "\u00bd",
          "\uff11\uff12\uff13", "v1.2.3", "a1b2c3", "\u00b2\u00b3"]
    # Letters and scripts.
    s += ["\u4f60\u597d\uff0c\u4e16\u754c", "\u3053\u3093\u306b\u3061\u306f\u4e16\u754c",
          "\uc548\ub155\ud558\uc138\uc694", "\u041f\u0440\u0438\u0432\u0435\u0442 \u043c\u0438\u0440",
          "\u0645\u0631\u062d\u0628\u0627", "\u05e9\u05dc\u05d5\u05dd", "\u0928\u092e\u0938\u094d\u0924\u0947",
          "\u0e2a\u0e27\u0e31\u0e2a\u0e14\u0e35", "\u03b1\u03b2\u03b3 \u0394", "\u00c9t\u00e9 \u00e0 Z\u00fcrich",
          "stra\u00dfe", "\u0130stanbul", "\u01c5\u01c8\u01cb", "\u02b0\u02b1", "\u3005\u3006",
          "\U00020000\U0002a6d6", "\U0001d400\U0001d401", "\u2160\u2161"]
    # Emoji, ZWJ sequences, flags, skin tones, variation selectors.
    s += ["\U0001f44d", "\U0001f468\u200d\U0001f469\u200d\U0001f467\u200d\U0001f466",
          "\U0001f3f3\ufe0f\u200d\U0001f308", "\U0001f1fa\U0001f1f8", "\U0001f44b\U0001f3fd",
          "\u2764\ufe0f", "I \u2764\ufe0f NY", "\U0001f600\U0001f600\U0001f600", "a\U0001f600b",
          "\u00a9\u00ae\u2122", "\u2603"]
    # Combining marks: precomposed vs decomposed (NFC changes the latter).
    s += ["e\u0301", "cafe\u0301", "caf\u00e9", "A\u030a", "\u00c5", "a\u0308o\u0308u\u0308",
          "\u1112\u1161\u11ab", "\u1100\u1161", "Z\u0351\u036b\u0343\u036a\u0302\u036b\u033d",
          "\u0301start", " \u0301", "q\u0307\u0323", "\u212b", "\u2126", "\ufb01", "\u0344",
          "\u0958", "\u0f73", "\u1e9b\u0323"]
    # Contractions, any case, and lookalikes.
    s += ["'s", "'S", "'LL", "'Re", "'rE", "'VE", "'M", "'D", "'T", "I'M HE'LL WE'VE",
          "don't", "DON'T", "it's", "IT'S", "'s'", "''s", "x'sy", "'", "''", "\u2019s",
          "'\u017f", "'K", "'\u212a", "'ll'll'll", "O'Neil's", "rock 'n' roll"]
    # Added-token text (special tokens and the non-special Qwen ones).
    s += ["<|eot_id|>", "<|begin_of_text|>", "<|begin_of_text|>Hello", "<|end_of_text|><|eot_id|>",
          " <|eot_id|> ", "x<|eot_id|>y", "<|eot_id", "<|eot_id|><|", "<|start_header_id|>user<|end_header_id|>\n\n",
          "<|reserved_special_token_0|>", "<|reserved_special_token_250|>",
          "<|im_start|>user\nhi<|im_end|>", "<think>", "</think>", "<think>\nhmm\n</think>\n\n",
          "<tool_call>", "<|endoftext|>", "<|return|>", "<|start|>assistant<|channel|>final<|message|>",
          "<|endoftext|><|endoftext|>", "<<|eot_id|>>", "<|<|eot_id|>|>", "<|im_start|>"]
    # Code, URLs, JSON-ish text.
    s += ["def f(x):\n    return x**2\n", "for (int i = 0; i < n; ++i) {\n\tsum += a[i];\n}",
          "https://example.com/path?q=1&r=two#frag", "user@example.com",
          '{"a": [1, 2, {"b": null}], "c": "d\\"e"}', "SELECT * FROM t WHERE x = 'y';",
          "<html><body class=\"x\">&nbsp;</body></html>", "$ ls -la ~/.cache | grep tok",
          "C:\\Users\\x\\file.txt", "a/b/c\n/d", "->", "=>", "...", "\u2026", "!=", "===",
          "// comment\n/* block */", "#include <stdio.h>", "\\n\\t", "@#$%^&*()_+-=[]{}|;':\",./<>?"]
    # Long single-class runs: exercise the long-piece BPE path.
    s += ["a" * 1000, "ab" * 500, "Hello" * 200, "x" * 5000, "-" * 300, "=" * 64, "." * 100,
          "\u4e00" * 500, "\U0001f600" * 100, "A" * 64 + "b" * 64,
          "aGVsbG8gd29ybGQ" * 50, "_" * 40, "0" * 1000]
    # Characters assigned or recategorized after Unicode 14 (PCRE2 10.42's
    # tables): the reference (Node's ICU) knows them, so must we.
    recent = ["\u0295", "\u088f", "\u0897", "\u0c5c", "\u0cdc", "\U000116e2", "\U000134c0",
              "\U00016101", "\U00018de6", "\U0002ec0b", "\U00031355", "\U000323bd",
              "\U00033425", "\U00011f00", "\U0001e030", "\U00010d40", "\u2ffc", "\U0001cc00"]
    for ch in recent:
        s += [ch, "a" + ch + "b", " " + ch * 3, ch + "1" + ch, "'" + ch, ch + "\u0301"]
    s.append("".join(recent))
    strings = [t.encode("utf-8") for t in s]
    # Invalid UTF-8: lone continuation bytes, truncated sequences, overlongs,
    # surrogates, out of range, invalid bytes, mixed with text.
    strings += [b"\xff", b"\xfe\xff", b"abc\x80def", b"\xe2\x82", b"\xe2\x82 x", b"\xf0\x9f\x98",
                b"\xf0\x9f\x98 end", b"\xed\xa0\x80", b"\xed\xbf\xbf", b"\xc0\xaf", b"\xc1\xbf",
                b"\xe0\x80\xaf", b"\xf0\x80\x80\xaf", b"\xf4\x90\x80\x80", b"\xf5\x80\x80\x80",
                b"\x80\x80\x80", b"a\xc3", b"\xc3(", b"\xe2\x28\xa1", b"\xf0\x28\x8c\xbc",
                b"\xf8\x88\x80\x80\x80", b"<|eot_id|>\xff<|eot_id|>", b"\xef\xbb\xbfBOM",
                b"  \xa0  ", b"x\x00y", b"\x00", b"\x01\x02\x1f\x7f"]
    # Deterministic random mixes of all of the above character classes.
    rng = random.Random(20261122)
    pool = (list("abcXYZ019 \t\n\r.,'\"-_/\\{}[]():;!?@#") + ["'s", "'LL", "\u00a0", "\u3000",
            "\u00e9", "e\u0301", "\u4e2d", "\u6587", "\U0001f600", "\u200d", "\ufe0f", "\u0663",
            "\u0301", "\ufeff", "\u2028", "\u0085", "\u00df", "\u0130", "<|eot_id|>", "<think>",
            "<|im_end|>", "<|", "|>", "  ", "\n\n", "123", "\u01c5", "\u02b0", "\U0001d400"])
    for _ in range(3000):
        n = rng.randint(1, 40)
        strings.append("".join(rng.choice(pool) for _ in range(n)).encode("utf-8"))
    for _ in range(300):
        n = rng.randint(1, 30)
        strings.append(bytes(rng.randint(0, 255) for _ in range(n)))
    return strings


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out")
    parser.add_argument("--maskbench", default=os.environ.get("MASKD_MASKBENCH", DEFAULT_MASKBENCH))
    args = parser.parse_args()
    count = 0
    tmp = args.out + ".tmp"
    with open(tmp, "w", encoding="ascii") as out:
        for data in list(maskbench_instances(args.maskbench)) + adversarial():
            out.write(base64.b64encode(data).decode("ascii") + "\n")
            count += 1
    os.replace(tmp, args.out)
    print(f"wrote {count} strings to {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
