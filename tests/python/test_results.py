"""Decoding the server's messages by hand-made examples: masks in every encoding, errors, specs."""
import json
import unittest

import grpc
import numpy as np

from maskd_client import (BuiltinJson, Choices, CompileOptions, Grammar, JsonSchema, Mask,
                          ProtocolError, Regex, StepResult, StopStatus)
from maskd_client._proto import compile_pb2, session_pb2
from maskd_client.results import MaskDictionary
from maskd_client.specs import compile_request


def bitmask_of(ids, vocab):
    words = [0] * ((vocab + 31) // 32)
    for t in ids:
        words[t // 32] |= 1 << (t % 32)
    return words


class MaskDecodingTest(unittest.TestCase):
    VOCAB = 70  # three words, the last one partly used

    def check_same(self, ids):
        """The three wire encodings of `ids` decode to the same packed bits."""
        ids = sorted(ids)
        denied = [t for t in range(self.VOCAB) if t not in set(ids)]
        wire = [
            session_pb2.Mask(vocab_size=self.VOCAB, allowed_count=len(ids),
                             bitmask=session_pb2.Bitmask(words=bitmask_of(ids, self.VOCAB))),
            session_pb2.Mask(vocab_size=self.VOCAB, allowed_count=len(ids),
                             allow_list=session_pb2.TokenIdList(token_ids=ids)),
            session_pb2.Mask(vocab_size=self.VOCAB, allowed_count=len(ids),
                             deny_list=session_pb2.TokenIdList(token_ids=denied)),
        ]
        expected = np.array(bitmask_of(ids, self.VOCAB), dtype=np.uint32)
        for message in wire:
            mask = Mask.from_proto(message)
            with self.subTest(encoding=mask.encoding, ids=ids):
                self.assertEqual(mask.bits.dtype, np.uint32)
                np.testing.assert_array_equal(mask.bits, expected)
                self.assertEqual(mask.allowed_count, len(ids))
                np.testing.assert_array_equal(mask.allowed_ids(), ids)
                for t in range(-1, self.VOCAB + 40):
                    self.assertEqual(mask.allowed(t), t in ids, t)
                self.assertEqual(mask.to_bool().size, self.VOCAB)
                self.assertFalse(mask.to_bool(200)[self.VOCAB:].any())

    def test_encodings_agree(self):
        self.check_same([])
        self.check_same([0])
        self.check_same([31, 32, 63, 64, 69])
        self.check_same(list(range(self.VOCAB)))
        self.check_same([t for t in range(self.VOCAB) if t % 3])

    def test_bits_are_read_only(self):
        mask = Mask.from_proto(
            session_pb2.Mask(vocab_size=5, allowed_count=1,
                             allow_list=session_pb2.TokenIdList(token_ids=[2])))
        with self.assertRaises(ValueError):
            mask.bits[0] = 0

    def test_malformed_masks_are_protocol_errors(self):
        cases = {
            "no encoding": session_pb2.Mask(vocab_size=70),
            "2 words": session_pb2.Mask(vocab_size=70, bitmask=session_pb2.Bitmask(words=[1, 2])),
            "bits above vocab_size": session_pb2.Mask(
                vocab_size=70, bitmask=session_pb2.Bitmask(words=[0, 0, 1 << 6])),
            "id >= vocab_size": session_pb2.Mask(
                vocab_size=70, allowed_count=1, allow_list=session_pb2.TokenIdList(token_ids=[70])),
            "not ascending": session_pb2.Mask(
                vocab_size=70, allowed_count=2, allow_list=session_pb2.TokenIdList(token_ids=[5,
                                                                                          3])),
            "duplicate": session_pb2.Mask(
                vocab_size=70, allowed_count=68,
                deny_list=session_pb2.TokenIdList(token_ids=[3, 3])),
            "count mismatch": session_pb2.Mask(
                vocab_size=70, allowed_count=3, allow_list=session_pb2.TokenIdList(token_ids=[1])),
        }
        for name, message in cases.items():
            with self.subTest(name), self.assertRaises(ProtocolError) as ctx:
                Mask.from_proto(message)
            self.assertEqual(ctx.exception.code, grpc.StatusCode.INTERNAL)


class MaskDictionaryTest(unittest.TestCase):
    VOCAB = 70

    def full(self, ids, store=None):
        mask = session_pb2.Mask(vocab_size=self.VOCAB, allowed_count=len(ids),
                                allow_list=session_pb2.TokenIdList(token_ids=ids))
        if store is not None:
            mask.dictionary_store = store
        return mask

    def ref(self, slot, count):
        return session_pb2.Mask(vocab_size=self.VOCAB, allowed_count=count, dictionary_ref=slot)

    def test_store_ref_and_replace(self):
        dictionary = MaskDictionary(2)
        self.assertEqual(len(dictionary), 2)
        a = dictionary.resolve(self.full([1, 2, 3], store=0))
        self.assertEqual(a.encoding, "allow_list")
        self.assertIs(dictionary.slot(0), a)
        dictionary.resolve(self.full([5], store=1))
        got = dictionary.resolve(self.ref(0, 3))
        self.assertEqual(got.encoding, "dictionary_ref")
        np.testing.assert_array_equal(got.bits, a.bits)
        self.assertEqual(got.allowed_ids().tolist(), [1, 2, 3])
        # A store replaces the slot's mask; later refs get the new one.
        dictionary.resolve(self.full([60, 69], store=0))
        self.assertEqual(dictionary.resolve(self.ref(0, 2)).allowed_ids().tolist(), [60, 69])
        self.assertEqual(dictionary.resolve(self.ref(1, 1)).allowed_ids().tolist(), [5])
        # Not stored: the dictionary is unchanged.
        dictionary.resolve(self.full([7]))
        self.assertEqual(dictionary.slot(1).allowed_ids().tolist(), [5])

    def test_bad_references_are_protocol_errors(self):
        dictionary = MaskDictionary(2)
        dictionary.resolve(self.full([1, 2], store=0))
        bad_ref = self.ref(0, 2)
        bad_ref.dictionary_store = 1
        cases = {
            "empty slot": self.ref(1, 0),
            "slot out of range": self.ref(2, 0),
            "store out of range": self.full([1], store=2),
            "count differs": self.ref(0, 3),
            "ref with a store": bad_ref,
        }
        for name, message in cases.items():
            with self.subTest(name), self.assertRaises(ProtocolError):
                dictionary.resolve(message)
        with self.assertRaises(ProtocolError):  # a ref without a dictionary
            Mask.from_proto(self.ref(0, 2))
        result = session_pb2.SequenceResult(sequence_id=3, mask=self.ref(0, 2))
        with self.assertRaises(ProtocolError):
            StepResult.from_proto(result)
        self.assertEqual(StepResult.from_proto(result, dictionary).mask.allowed_ids().tolist(),
                         [1, 2])


class StepResultTest(unittest.TestCase):

    def test_success(self):
        result = StepResult.from_proto(
            session_pb2.SequenceResult(
                sequence_id=9, stop=session_pb2.STOP_STATUS_MAY_STOP, tokens_accepted=2,
                drafts_accepted=1,
                mask=session_pb2.Mask(vocab_size=40, allowed_count=1,
                                      allow_list=session_pb2.TokenIdList(token_ids=[39])),
                jump_forward=session_pb2.JumpForward(bytes=b"\xc3", token_ids=[5])))
        self.assertTrue(result.ok)
        self.assertTrue(result.may_stop)
        self.assertFalse(result.must_stop)
        self.assertEqual(result.stop, StopStatus.MAY_STOP)
        self.assertTrue(result.allowed(39))
        self.assertFalse(result.allowed(38))
        self.assertEqual(result.jump_forward_bytes, b"\xc3")
        self.assertEqual(result.jump_forward_tokens, (5,))
        self.assertEqual((result.tokens_accepted, result.drafts_accepted), (2, 1))

    def test_error_is_a_field_and_raised_on_use(self):
        message = session_pb2.SequenceResult(sequence_id=4, tokens_accepted=1)
        message.error.code = grpc.StatusCode.INVALID_ARGUMENT.value[0]
        message.error.message = "token 17 is not allowed"
        message.error.location.text.line = 2
        message.error.location.text.column = 5
        result = StepResult.from_proto(message)
        self.assertFalse(result.ok)
        self.assertIsNone(result.mask)
        self.assertEqual(result.error.code, grpc.StatusCode.INVALID_ARGUMENT)
        self.assertEqual(result.error.seq_id, 4)
        self.assertEqual((result.error.location.line, result.error.location.column), (2, 5))
        self.assertIn("token 17 is not allowed", str(result.error))
        with self.assertRaises(type(result.error)):
            result.allowed(1)

    def test_unknown_code_and_stop(self):
        message = session_pb2.SequenceResult(sequence_id=1)
        message.error.code = 999
        self.assertEqual(StepResult.from_proto(message).error.code, grpc.StatusCode.UNKNOWN)
        with self.assertRaises(ProtocolError):
            StepResult.from_proto(session_pb2.SequenceResult(sequence_id=1, stop=7))


class SpecTest(unittest.TestCase):

    def test_each_kind(self):
        self.assertEqual(json.loads(JsonSchema({"type": "integer"}).to_proto().json_schema),
                         {"type": "integer"})
        self.assertEqual(JsonSchema('{"type":"string"}').to_proto().json_schema,
                         '{"type":"string"}')
        self.assertEqual(Regex("[a-z]+").to_proto().regex, "[a-z]+")
        grammar = Grammar("root ::= [0-9]+", dialect="gbnf").to_proto().grammar
        self.assertEqual(grammar.dialect, compile_pb2.GRAMMAR_DIALECT_GBNF)
        self.assertEqual(Grammar("a ::= 'x'", dialect="ebnf").to_proto().grammar.dialect,
                         compile_pb2.GRAMMAR_DIALECT_EBNF)
        self.assertEqual(list(Choices(["yes", "no"]).to_proto().choices.choices), ["yes", "no"])
        self.assertEqual(BuiltinJson().to_proto().WhichOneof("kind"), "builtin_json")

    def test_options(self):
        options = CompileOptions(whitespace="compact", strict=False, property_order="any",
                                 max_whitespace_run=4, max_recursion_depth=9,
                                 unknown_formats="ignore", time_limit_s=1.5).to_proto()
        self.assertEqual(options.whitespace, compile_pb2.WHITESPACE_MODE_COMPACT)
        self.assertEqual(options.unknown_keywords, compile_pb2.UNKNOWN_KEYWORD_POLICY_PERMISSIVE)
        self.assertEqual(options.property_order, compile_pb2.PROPERTY_ORDER_ANY_ORDER)
        self.assertEqual(options.unknown_formats, compile_pb2.UNKNOWN_FORMAT_POLICY_IGNORE)
        self.assertEqual(CompileOptions(unknown_formats="refuse").to_proto().unknown_formats,
                         compile_pb2.UNKNOWN_FORMAT_POLICY_REFUSE)
        self.assertEqual((options.max_whitespace_run, options.max_recursion_depth), (4, 9))
        self.assertEqual(options.compile_time_limit.ToMilliseconds(), 1500)
        defaults = CompileOptions().to_proto()
        self.assertEqual(defaults, compile_pb2.CompileOptions())
        with_refs = CompileOptions(
            default_dialect="http://json-schema.org/draft-07/schema#",
            schema_resources={"https://example.com/a.json": {"type": "integer"},
                              "https://example.com/b.json": '{"type": "null"}'}).to_proto()
        self.assertEqual(with_refs.default_dialect, "http://json-schema.org/draft-07/schema#")
        self.assertEqual([(r.uri, json.loads(r.json)) for r in with_refs.schema_resources],
                         [("https://example.com/a.json", {"type": "integer"}),
                          ("https://example.com/b.json", {"type": "null"})])
        with self.assertRaisesRegex(ValueError, "schema_resources"):
            CompileOptions(schema_resources={"": {}}).to_proto()

    def test_bad_arguments_name_the_field(self):
        with self.assertRaisesRegex(ValueError, "whitespace"):
            CompileOptions(whitespace="tabs").to_proto()
        with self.assertRaisesRegex(ValueError, "property_order"):
            CompileOptions(property_order="random").to_proto()
        with self.assertRaisesRegex(ValueError, "unknown_formats"):
            CompileOptions(unknown_formats="lenient").to_proto()
        with self.assertRaisesRegex(ValueError, "dialect"):
            Grammar("x", dialect="peg").to_proto()
        with self.assertRaisesRegex(TypeError, "one string"):
            Choices("yes").to_proto()
        with self.assertRaisesRegex(TypeError, "spec must be"):
            compile_request("abc", {"type": "object"})
        with self.assertRaisesRegex(ValueError, "tokenizer_id"):
            compile_request("", BuiltinJson())


if __name__ == "__main__":
    unittest.main()
