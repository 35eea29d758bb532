"""The client against the real maskd: tokenizers, Compile per spec kind and its errors, the
Session stream (encodings, rollback, drafts, per-sequence errors), asyncio, overlap example."""
import asyncio
import json
import os
import re
import subprocess
import sys
import tempfile
import unittest

import grpc
import numpy as np

from maskd_server import MaskdServer, binary_from_argv
from maskd_client import (Advance, AsyncMaskClient, BuiltinJson, Choices, CompileError,
                          CompileOptions, Grammar, JsonSchema, MaskClient, MaskdError, Open,
                          Regex, SequenceError, StructuralTag, ToolCalls)

MASKD = binary_from_argv(sys.argv)
# `--maskctl PATH` (set by CTest): the C++ command-line client, for the test
# that both clients get one handle for one schema.
MASKCTL = None
if "--maskctl" in sys.argv:
    _i = sys.argv.index("--maskctl")
    MASKCTL = sys.argv[_i + 1]
    del sys.argv[_i:_i + 2]
EXAMPLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "clients",
                       "python", "examples", "overlap_forward.py")


def setUpModule():
    global SERVER, CLIENT, TOKENIZER
    SERVER = MaskdServer(MASKD, tokenizers=("llama3", "gptoss"))
    CLIENT = MaskClient(SERVER.address, timeout=60)
    TOKENIZER = CLIENT.register_tokenizer(preloaded_name="llama3")


def tearDownModule():
    CLIENT.close()
    code = SERVER.stop()
    assert code == 0, f"maskd exited with {code}; log:\n{SERVER.log()}"


def TOKENIZER_ENCODE(text):
    """The server's canonical tokenization of `text` (a one-choice spec's jump-forward)."""
    with CLIENT.session(tokenizer_id=TOKENIZER.tokenizer_id) as session:
        result = session.open(1, Choices([text]))
        assert result.jump_forward_bytes == text.encode(), result.jump_forward_bytes
        return list(result.jump_forward_tokens)


def walk(session, seq_id, first, rng, steps):
    """Samples allowed tokens for `steps` steps; returns the tokens and each step's result."""
    tokens, results, result = [], [first], first
    for _ in range(steps):
        if result.must_stop:
            break
        ids = result.mask.allowed_ids()
        eos = set(TOKENIZER.eos_token_ids)
        choices = [t for t in ids.tolist() if t not in eos]
        token = int(rng.choice(choices))
        result = session.advance(seq_id, [token])
        tokens.append(token)
        results.append(result)
    return tokens, results


class TokenizerAndCompileTest(unittest.TestCase):

    def test_tokenizers(self):
        self.assertEqual(TOKENIZER.vocab_size, 128256)
        self.assertTrue(TOKENIZER.eos_token_ids)
        self.assertIn(TOKENIZER.tokenizer_id, [t.tokenizer_id for t in CLIENT.list_tokenizers()])
        with self.assertRaises(MaskdError) as ctx:
            CLIENT.register_tokenizer(preloaded_name="no-such-tokenizer")
        self.assertEqual(ctx.exception.code, grpc.StatusCode.NOT_FOUND)

    def test_each_spec_kind_compiles(self):
        specs = [
            JsonSchema({"type": "object", "properties": {"a": {"type": "integer"}}}),
            Regex("[0-9]{3}-[a-z]+"),
            Choices(["yes", "no"]),
            BuiltinJson(),
            Grammar('root ::= "a" [0-9]+'),
            Grammar('start: "a" NUM\nNUM: /[0-9]+/', dialect="lark"),
            Grammar('item ::= "a" digit+\ndigit ::= [0-9]', dialect="ebnf", start_rule="item"),
        ]
        for spec in specs:
            with self.subTest(spec=spec):
                grammar = CLIENT.compile(TOKENIZER.tokenizer_id, spec,
                                         CompileOptions(whitespace="compact"))
                self.assertRegex(grammar.handle, "^[0-9a-f]+$")
                self.assertEqual(grammar.tokenizer_id, TOKENIZER.tokenizer_id)
                again = CLIENT.compile(TOKENIZER.tokenizer_id, spec,
                                       CompileOptions(whitespace="compact"))
                self.assertEqual(again.handle, grammar.handle)

    def test_maskctl_and_python_get_one_handle_for_one_schema(self):
        """The handle hashes a canonical form of the schema: maskctl reading a
        hand-written file (indentation, \\u escapes) and the Python client sending
        json.dumps of the same schema get the same grammar, not two."""
        self.assertIsNotNone(MASKCTL, "pass --maskctl PATH")
        schema = {"type": "object", "properties": {"name": {"type": "string", "enum": ["é", "ü/"]},
                                                    "n": {"type": "integer", "maximum": 10}},
                  "required": ["name"]}
        written = ('{\n  "type" : "object",\n  "properties": {\n'
                   '    "name": {"type": "string", "enum": ["\\u00e9", "\\u00fc\\/"]},\n'
                   '    "n": {"type": "integer", "maximum": 10}\n  },\n'
                   '  "required": ["name"]\n}\n')
        self.assertEqual(json.loads(written), schema)
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "schema.json")
            with open(path, "w", encoding="utf-8") as f:
                f.write(written)
            out = subprocess.run([MASKCTL, "compile", path, "--server", SERVER.address,
                                  "--tokenizer", "llama3"],
                                 capture_output=True, text=True, timeout=120)
        self.assertEqual(out.returncode, 0, out.stderr)
        handles = re.findall(r"^handle: ([0-9a-f]+)$", out.stdout, re.M)
        self.assertEqual(len(handles), 1, out.stdout)
        python = CLIENT.compile(TOKENIZER.tokenizer_id, JsonSchema(schema))
        self.assertEqual(python.handle, handles[0])
        # Not one handle for everything: another schema, another handle.
        other = CLIENT.compile(TOKENIZER.tokenizer_id,
                               JsonSchema(dict(schema, required=["n"])))
        self.assertNotEqual(other.handle, handles[0])

    def test_compile_errors(self):
        with self.assertRaises(CompileError) as ctx:
            CLIENT.compile(
                TOKENIZER.tokenizer_id,
                JsonSchema({"properties": {"tags": {"type": "array", "uniqueItems": True,
                                                    "items": {"type": "integer", "minimum": 0}}}}))
        self.assertEqual(ctx.exception.code, grpc.StatusCode.UNIMPLEMENTED)
        self.assertIn("uniqueItems", ctx.exception.message)
        self.assertEqual(ctx.exception.location.json_pointer, "/properties/tags")
        with self.assertRaises(CompileError) as ctx:
            CLIENT.compile(TOKENIZER.tokenizer_id, Regex("a(b"))
        self.assertEqual(ctx.exception.code, grpc.StatusCode.INVALID_ARGUMENT)
        self.assertEqual(ctx.exception.location.line, 1)
        with self.assertRaises(CompileError) as ctx:
            CLIENT.compile(TOKENIZER.tokenizer_id, Grammar('root ::= "a"\n  item ::= x'))
        self.assertEqual(ctx.exception.code, grpc.StatusCode.INVALID_ARGUMENT)
        self.assertIn("undefined rule 'x'", ctx.exception.message)
        self.assertEqual((ctx.exception.location.line, ctx.exception.location.column), (2, 12))
        with self.assertRaises(MaskdError) as ctx:
            CLIENT.compile("0" * 32, Regex("a"))
        self.assertNotIsInstance(ctx.exception, CompileError)
        self.assertEqual(ctx.exception.code, grpc.StatusCode.NOT_FOUND)


class StructuralTagTest(unittest.TestCase):

    def test_free_text_until_the_trigger(self):
        tag = StructuralTag({"structures": [{"begin": "<n>", "schema": {"type": "integer"},
                                             "end": "</n>"}], "triggers": ["<n>"]})
        with CLIENT.session(tokenizer_id=TOKENIZER.tokenizer_id) as session:
            first = session.open(1, tag)
            # Free text: every regular token (Llama 3's last 256 ids are special) but
            # those holding "<n>" and then a non-integer, and EOS.
            self.assertGreater(first.mask.allowed_count, TOKENIZER.vocab_size - 256 - 50)
            for eos in TOKENIZER.eos_token_ids:
                self.assertTrue(first.mask.allowed(eos))
            self.assertTrue(first.may_stop)
        with self.assertRaises(CompileError) as ctx:
            CLIENT.compile(TOKENIZER.tokenizer_id, StructuralTag({"format": {"type": "nope"}}))
        self.assertEqual(ctx.exception.code, grpc.StatusCode.INVALID_ARGUMENT)
        self.assertEqual(ctx.exception.location.json_pointer, "/format/type")

    def test_tool_calls(self):
        tools = [{"type": "function", "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                           "required": ["city"], "additionalProperties": False}}}]
        with CLIENT.session(tokenizer_id=TOKENIZER.tokenizer_id) as session:
            first = session.open(1, ToolCalls(tools, format="llama3_json"))
            # One tool: the call's opening is forced.
            self.assertTrue(first.jump_forward_bytes.startswith(
                b'{"name": "get_weather", "parameters":'), first.jump_forward_bytes)
            self.assertFalse(first.may_stop)
        with self.assertRaises(ValueError):
            ToolCalls(tools, format="mistral").to_proto()

    def test_harmony_tool_calls_with_gpt_oss(self):
        """gpt-oss harmony: the special tokens are grammar terminals."""
        gptoss = CLIENT.register_tokenizer(preloaded_name="gptoss")
        tools = [{"name": "get_weather",
                  "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                                 "required": ["city"], "additionalProperties": False}}]
        channel, constrain = 200005, 200003
        with CLIENT.session(tokenizer_id=gptoss.tokenizer_id) as session:
            first = session.open(1, ToolCalls(tools, format="harmony", require_call=True))
            # <|channel|> or the role header's " to=functions.get_weather" may start
            # the message; never <|constrain|>, and no EOS before a call.
            allowed = first.mask.allowed_ids().tolist()
            self.assertIn(channel, allowed)
            self.assertNotIn(constrain, allowed)
            self.assertGreater(len(allowed), 1)
            self.assertFalse(first.may_stop)
            after = session.advance(1, [channel])
            # An analysis message or the commentary call may follow: nothing forced.
            self.assertEqual(after.jump_forward_bytes, b"")
            self.assertFalse(after.mask.allowed(channel))
            self.assertFalse(after.mask.allowed(constrain))
        # Llama 3 has no harmony tokens: a spec error naming the token, not a failed RPC.
        with self.assertRaises(CompileError) as ctx:
            CLIENT.compile(TOKENIZER.tokenizer_id, ToolCalls(tools, format="harmony"))
        self.assertEqual(ctx.exception.code, grpc.StatusCode.INVALID_ARGUMENT)
        self.assertEqual(ctx.exception.location.json_pointer, "/special_tokens/0")
        self.assertIn("<|channel|>", str(ctx.exception))

    def test_reasoning_first(self):
        schema = JsonSchema({"type": "integer"})
        plain = CLIENT.compile(TOKENIZER.tokenizer_id, schema)
        thinking = CLIENT.compile(TOKENIZER.tokenizer_id, schema,
                                  CompileOptions(reasoning_end_marker="</think>"))
        self.assertNotEqual(plain.handle, thinking.handle)
        with CLIENT.session(tokenizer_id=TOKENIZER.tokenizer_id) as session:
            first = session.open(1, thinking)
            # Reasoning: every regular token, no EOS before the marker.
            self.assertGreater(first.mask.allowed_count, TOKENIZER.vocab_size - 256 - 50)
            self.assertFalse(first.may_stop)
            self.assertLess(session.open(2, plain).mask.allowed_count, 2000)


    def test_reasoning_token_budget(self):
        thinking = CLIENT.compile(TOKENIZER.tokenizer_id, Choices(["yes", "no"]),
                                  CompileOptions(reasoning_end_marker="</think>"))
        marker = TOKENIZER_ENCODE("</think>")
        with CLIENT.session(tokenizer_id=TOKENIZER.tokenizer_id) as session:
            first = session.open(1, thinking, max_reasoning_tokens=2, max_rollback_tokens=4)
            self.assertGreater(first.mask.allowed_count, 1000)
            spent = session.advance(1, TOKENIZER_ENCODE("Hmm, so")[:2])
            # Two tokens in: only the marker's own tokens (its prefixes) remain.
            self.assertEqual(spent.jump_forward_bytes, b"</think>")
            self.assertEqual(list(spent.jump_forward_tokens), marker)
            self.assertLess(spent.mask.allowed_count, 10)
            self.assertTrue(spent.allowed(marker[0]))
            self.assertFalse(spent.allowed(TOKENIZER_ENCODE(" yes")[0]))
            # Rollback gives the budget back.
            back = session.rollback(1, 1)
            self.assertGreater(back.mask.allowed_count, 1000)
            done = session.advance(1, TOKENIZER_ENCODE(" well")[:1] + marker)
            self.assertTrue(done.allowed(TOKENIZER_ENCODE("yes")[0]))
            self.assertTrue(done.allowed(TOKENIZER_ENCODE("no")[0]))
            self.assertLess(done.mask.allowed_count, 50)
            self.assertFalse(done.may_stop)
            with self.assertRaises(SequenceError) as ctx:
                session.open(2, Choices(["a"]), max_reasoning_tokens=1)
            self.assertEqual(ctx.exception.code, grpc.StatusCode.INVALID_ARGUMENT)
            self.assertIn("reasoning_end_marker", ctx.exception.message)

    def test_token_healing(self):
        url = CLIENT.compile(TOKENIZER.tokenizer_id, Choices(["//example.com"]))
        prompt = TOKENIZER_ENCODE("See https:")
        with CLIENT.session(tokenizer_id=TOKENIZER.tokenizer_id) as session:
            healed = session.open(1, url, prompt_tail_tokens=prompt[-4:])
            self.assertGreaterEqual(healed.prompt_tokens_to_drop, 1)
            self.assertTrue(b"https:".endswith(healed.healed_bytes), healed.healed_bytes)
            self.assertTrue(healed.healed_handle)
            # The tokens that cover the dropped bytes and go on are allowed.
            covering = TOKENIZER_ENCODE(healed.healed_bytes.decode() + "//example.com")[0]
            self.assertTrue(healed.allowed(covering))
            # Inline, the same healed compile.
            inline = session.open(2, Choices(["//example.com"]),
                                  prompt_tail_tokens=prompt[-4:])
            self.assertEqual(inline.healed_handle, healed.healed_handle)
            self.assertEqual(inline.mask.allowed_ids().tolist(), healed.mask.allowed_ids().tolist())
            plain = session.open(3, url)
            self.assertEqual(plain.prompt_tokens_to_drop, 0)
            self.assertEqual(plain.healed_handle, "")


class SessionTest(unittest.TestCase):

    def test_grammar_session_follows_the_grammar(self):
        grammar = CLIENT.compile(TOKENIZER.tokenizer_id,
                                 Grammar('root ::= "move: " ("yes" | "no") "!"'))
        with CLIENT.session(tokenizer_id=TOKENIZER.tokenizer_id) as session:
            first = session.open(1, grammar)
            self.assertEqual(first.jump_forward_bytes, b"move: ")
            self.assertFalse(first.may_stop)
            tokens, results = walk(session, 1, first, np.random.default_rng(3), 12)
            self.assertTrue(results[-1].must_stop)
            self.assertLessEqual(len(tokens), 9)  # at most one byte per token

    def test_choices_by_jump_forward(self):
        with CLIENT.session(tokenizer_id=TOKENIZER.tokenizer_id) as session:
            first = session.open(1, Choices(["hello world"]))
            self.assertEqual(first.jump_forward_bytes, b"hello world")
            self.assertTrue(first.jump_forward_tokens)
            done = session.advance(1, first.jump_forward_tokens)
            self.assertTrue(done.must_stop)
            self.assertEqual(done.mask.allowed_ids().tolist(), sorted(TOKENIZER.eos_token_ids))

    def test_encodings_agree_along_a_random_walk(self):
        grammar = CLIENT.compile(TOKENIZER.tokenizer_id, Regex("[a-z]{2,6}-[0-9]{1,3}"))
        with CLIENT.session() as session:
            tokens, reference = walk(session, 1, session.open(1, grammar, mask_encoding="bitmask"),
                                     np.random.default_rng(3), 12)
            self.assertGreater(len(tokens), 2)
            for encoding in ("auto", "allow_list", "deny_list"):
                results = [session.open(2, grammar, mask_encoding=encoding)]
                results += [session.advance(2, [t]) for t in tokens]
                session.close(2)
                for want, got in zip(reference, results):
                    with self.subTest(encoding=encoding):
                        np.testing.assert_array_equal(got.mask.bits, want.mask.bits)
                        self.assertEqual(got.stop, want.stop)

    def test_rollback_drafts_and_errors(self):
        grammar = CLIENT.compile(TOKENIZER.tokenizer_id, Regex("[a-z]{2,6}-[0-9]{1,3}"))
        with CLIENT.session() as session:
            first = session.open(1, grammar, max_rollback_tokens=4)
            tokens, results = walk(session, 1, first, np.random.default_rng(5), 3)
            back = session.rollback(1, 2)
            np.testing.assert_array_equal(back.mask.bits, results[1].mask.bits)
            drafts = session.step({1: Advance(drafts=tokens[1:])})[1]
            self.assertEqual(drafts.drafts_accepted, len(tokens) - 1)
            np.testing.assert_array_equal(drafts.mask.bits, results[-1].mask.bits)
            disallowed = int(np.flatnonzero(~results[-1].mask.to_bool())[0])
            results = session.step({1: [disallowed], 99: [1]}, open={2: "f" * 32})
            self.assertEqual(results[1].error.code, grpc.StatusCode.INVALID_ARGUMENT)
            self.assertEqual(results[1].tokens_accepted, 0)
            self.assertEqual(results[99].error.code, grpc.StatusCode.NOT_FOUND)
            self.assertEqual(results[2].error.code, grpc.StatusCode.NOT_FOUND)
            with self.assertRaises(SequenceError):
                session.rollback(1, 9)
            self.assertTrue(session.advance(1, []).ok)  # the sequence survived
            results = session.step(open={3: Open(Regex("a("), tokenizer_id=TOKENIZER.tokenizer_id)})
            self.assertEqual(results[3].error.code, grpc.StatusCode.INVALID_ARGUMENT)

    def test_rollback_at_exactly_max_and_one_past(self):
        """The server keeps exactly max_rollback_tokens snapshots: rolling back that many
        restores the mask seen then; one more is refused and changes nothing (a server
        keeping one snapshot too few, or one too many, fails here)."""
        grammar = CLIENT.compile(TOKENIZER.tokenizer_id,
                                 Regex("([a-z]{2,6}-[0-9]{1,3}-){4}[a-z]{2,6}"))
        for max_rollback in (1, 3):
            with self.subTest(max_rollback=max_rollback), CLIENT.session() as session:
                first = session.open(1, grammar, max_rollback_tokens=max_rollback)
                steps = max_rollback + 2
                tokens, results = walk(session, 1, first, np.random.default_rng(7), steps)
                self.assertEqual(len(tokens), steps)
                with self.assertRaises(SequenceError) as ctx:
                    session.rollback(1, max_rollback + 1)
                self.assertEqual(ctx.exception.code, grpc.StatusCode.INVALID_ARGUMENT)
                unchanged = session.advance(1, [])
                np.testing.assert_array_equal(unchanged.mask.bits, results[-1].mask.bits)
                back = session.rollback(1, max_rollback)
                np.testing.assert_array_equal(back.mask.bits, results[-1 - max_rollback].mask.bits)
                with self.assertRaises(SequenceError):
                    session.rollback(1, 1)  # every kept snapshot is used up
                redo = session.advance(1, [tokens[-max_rollback]])
                np.testing.assert_array_equal(redo.mask.bits, results[-max_rollback].mask.bits)
                self.assertTrue(session.rollback(1, 1).ok)

    DICTIONARY_SCHEMA = JsonSchema({
        "type": "object", "properties": {"name": {"type": "string"}, "n": {"type": "integer"}},
        "required": ["name", "n"], "additionalProperties": False})

    def test_mask_dictionary_on_and_off_give_the_same_masks(self):
        grammar = CLIENT.compile(TOKENIZER.tokenizer_id, self.DICTIONARY_SCHEMA)
        with CLIENT.session(mask_dictionary_slots=0) as off:
            tokens, reference = walk(off, 1, off.open(1, grammar), np.random.default_rng(11), 30)
            self.assertEqual(off.mask_dictionary_slots, 0)
            self.assertNotIn("dictionary_ref", {r.mask.encoding for r in reference})
        self.assertGreater(len(tokens), 5)
        for slots in (256, 2):  # the default, and one that replaces slots all the time
            with CLIENT.session(mask_dictionary_slots=slots) as session:
                # Two sequences on the same tokens in one stream: the second's masks repeat
                # the first's within each response.
                steps = [session.step(open={1: grammar, 2: grammar})]
                steps += [session.step({1: [t], 2: [t]}) for t in tokens]
                self.assertEqual(session.mask_dictionary_slots, slots)
                for want, step in zip(reference, steps):
                    for seq_id in (1, 2):
                        with self.subTest(slots=slots, seq_id=seq_id):
                            np.testing.assert_array_equal(step[seq_id].mask.bits, want.mask.bits)
                            self.assertEqual(step[seq_id].mask.allowed_count,
                                             want.mask.allowed_count)
                            self.assertEqual(step[seq_id].stop, want.stop)
                refs = sum(step[2].mask.encoding == "dictionary_ref" for step in steps)
                self.assertGreater(refs, len(steps) // 2, slots)

    def test_mask_dictionary_grant_is_capped_and_per_stream(self):
        grammar = CLIENT.compile(TOKENIZER.tokenizer_id, self.DICTIONARY_SCHEMA)
        with CLIENT.session(mask_dictionary_slots=10**6) as greedy, CLIENT.session() as other:
            first = greedy.open(1, grammar)
            self.assertEqual(greedy.mask_dictionary_slots, 1024)  # maskd's default cap
            self.assertNotEqual(first.mask.encoding, "dictionary_ref")
            self.assertEqual(greedy.open(2, grammar).mask.encoding, "dictionary_ref")
            # The other stream has not been sent this mask: it comes in full there.
            on_other = other.open(1, grammar)
            self.assertEqual(other.mask_dictionary_slots, 256)
            self.assertNotEqual(on_other.mask.encoding, "dictionary_ref")
            np.testing.assert_array_equal(on_other.mask.bits, first.mask.bits)
        for bad in (-1, 2**32):
            with self.assertRaises(ValueError):
                CLIENT.session(mask_dictionary_slots=bad)

    def test_async_session(self):

        async def run():
            async with AsyncMaskClient(SERVER.address) as client:
                info = await client.register_tokenizer(preloaded_name="llama3")
                grammar = await client.compile(info.tokenizer_id, Choices(["yes", "no"]))
                async with client.session() as session:
                    first = await session.open(7, grammar)
                    token = int(first.mask.allowed_ids()[0])
                    after = (await session.submit({7: [token]}))[7]
                    again = await session.open(8, grammar)
                    return first, after, again, session.mask_dictionary_slots

        first, after, again, slots = asyncio.run(run())
        self.assertFalse(first.may_stop)
        self.assertEqual(after.tokens_accepted, 1)
        # The dictionary is on by default in the asyncio flavour too.
        self.assertEqual(slots, 256)
        np.testing.assert_array_equal(again.mask.bits, first.mask.bits)

    def test_overlap_example_runs(self):
        out = subprocess.run([
            sys.executable, EXAMPLE, "--target", SERVER.address, "--batch", "4", "--steps", "6",
            "--forward-ms", "5"
        ], capture_output=True, text=True, timeout=120)
        self.assertEqual(out.returncode, 0, out.stdout + out.stderr)
        self.assertIn("saved", out.stdout)


if __name__ == "__main__":
    unittest.main()
