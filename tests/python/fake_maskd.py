"""An in-process stand-in for maskd with a toy grammar, to test the client's plumbing.

Vocabulary of 100 ids (not a multiple of 32, to exercise the last word), EOS
99. After n accepted tokens the allowed ids are the multiples of n + 2 below 99,
plus EOS once n >= 2; at n == 4 only EOS (MUST_STOP). At n == 1 the jump-forward
is b"ab" = tokens [7, 8]. Handle "fake" is the only grammar; an inline regex
"bad(" fails with a located INVALID_ARGUMENT. Masks honour the requested
encoding; AUTO picks the smallest.
"""
import time
from concurrent import futures

import grpc

from maskd_client._proto import (common_pb2, compile_pb2, maskd_pb2_grpc, session_pb2,
                                 tokenizer_pb2)

VOCAB = 100
EOS = 99
TOKENIZER_ID = "f" * 32


def allowed_ids(n):
    if n >= 4:
        return [EOS]
    ids = [t for t in range(EOS) if t % (n + 2) == 0]
    return ids + [EOS] if n >= 2 else ids


def stop_status(n):
    if n >= 4:
        return session_pb2.STOP_STATUS_MUST_STOP
    return session_pb2.STOP_STATUS_MAY_STOP if n >= 2 else session_pb2.STOP_STATUS_CONTINUE


def encode_mask(ids, encoding):
    mask = session_pb2.Mask(vocab_size=VOCAB, allowed_count=len(ids))
    if encoding == session_pb2.MASK_ENCODING_AUTO:
        sizes = {
            session_pb2.MASK_ENCODING_BITMASK: (VOCAB + 31) // 32,
            session_pb2.MASK_ENCODING_ALLOW_LIST: len(ids),
            session_pb2.MASK_ENCODING_DENY_LIST: VOCAB - len(ids),
        }
        encoding = min(sizes, key=sizes.get)
    if encoding == session_pb2.MASK_ENCODING_BITMASK:
        words = [0] * ((VOCAB + 31) // 32)
        for t in ids:
            words[t // 32] |= 1 << (t % 32)
        mask.bitmask.words.extend(words)
    elif encoding == session_pb2.MASK_ENCODING_ALLOW_LIST:
        mask.allow_list.token_ids.extend(ids)
    else:
        allowed = set(ids)
        mask.deny_list.token_ids.extend(t for t in range(VOCAB) if t not in allowed)
    return mask


def error(code, message, **location):
    err = common_pb2.Error(code=code.value[0], message=message)
    if "json_pointer" in location:
        err.location.json_pointer = location["json_pointer"]
    elif "line" in location:
        err.location.text.line = location["line"]
        err.location.text.column = location["column"]
    return err


class _Sequence:

    def __init__(self, encoding, max_rollback):
        self.tokens = []
        self.encoding = encoding
        self.max_rollback = max_rollback


class FakeMaskd(maskd_pb2_grpc.MaskdServicer):

    def __init__(self, step_delay_s=0.0):
        self.step_delay_s = step_delay_s
        self.requests_seen = []

    def _info(self):
        return tokenizer_pb2.TokenizerInfo(tokenizer_id=TOKENIZER_ID, name="fake",
                                           kind=tokenizer_pb2.TOKENIZER_KIND_BYTE_LEVEL_BPE,
                                           vocab_size=VOCAB, eos_token_ids=[EOS], preloaded=True)

    def RegisterTokenizer(self, request, context):
        if request.preloaded_name != "fake":
            context.abort(grpc.StatusCode.NOT_FOUND,
                          f"no preloaded tokenizer named '{request.preloaded_name}'")
        return tokenizer_pb2.RegisterTokenizerResponse(tokenizer=self._info(),
                                                       already_registered=True)

    def ListTokenizers(self, request, context):
        return tokenizer_pb2.ListTokenizersResponse(tokenizers=[self._info()])

    def _compile(self, request):
        """(handle, None) or (None, Error) for a CompileRequest."""
        spec = request.spec
        if spec.WhichOneof("kind") == "regex" and spec.regex == "bad(":
            return None, error(grpc.StatusCode.INVALID_ARGUMENT, "unbalanced '('", line=1,
                               column=4)
        if spec.WhichOneof("kind") == "json_schema" and "uniqueItems" in spec.json_schema:
            return None, error(grpc.StatusCode.UNIMPLEMENTED, "unsupported keyword 'uniqueItems'",
                               json_pointer="/uniqueItems")
        return "fake", None

    def Compile(self, request, context):
        if request.tokenizer_id != TOKENIZER_ID:
            context.abort(grpc.StatusCode.NOT_FOUND, f"unknown tokenizer '{request.tokenizer_id}'")
        if request.spec.WhichOneof("kind") is None:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, "CompileRequest.spec has no constraint")
        handle, err = self._compile(request)
        if err is not None:
            return compile_pb2.CompileResponse(error=err)
        grammar = compile_pb2.CompiledGrammar(handle=handle, tokenizer_id=TOKENIZER_ID)
        grammar.stats.compile_time.FromMilliseconds(3)
        grammar.stats.grammar_rules = 7
        grammar.stats.ignored_keywords.append("/properties/a/foo")
        return compile_pb2.CompileResponse(grammar=grammar)

    def _result_for(self, seq_id, seq, result):
        n = len(seq.tokens)
        result.mask.CopyFrom(encode_mask(allowed_ids(n), seq.encoding))
        result.stop = stop_status(n)
        if n == 1:
            result.jump_forward.bytes = b"ab"
            result.jump_forward.token_ids.extend([7, 8])

    def _apply(self, sequences, op, result):
        seq_id = op.sequence_id
        which = op.WhichOneof("op")
        if which == "open":
            if seq_id in sequences:
                result.error.CopyFrom(error(grpc.StatusCode.ALREADY_EXISTS, "already open"))
                return
            if op.open.WhichOneof("grammar") == "handle":
                if op.open.handle != "fake":
                    result.error.CopyFrom(
                        error(grpc.StatusCode.NOT_FOUND, f"unknown handle '{op.open.handle}'"))
                    return
            else:
                _, err = self._compile(op.open.compile)
                if err is not None:
                    result.error.CopyFrom(err)
                    return
            seq = sequences[seq_id] = _Sequence(op.open.mask_encoding, op.open.max_rollback_tokens)
            self._result_for(seq_id, seq, result)
        elif which == "advance":
            seq = sequences.get(seq_id)
            if seq is None:
                result.error.CopyFrom(error(grpc.StatusCode.NOT_FOUND, "no such sequence"))
                return
            advance = op.advance
            if advance.rollback_tokens > min(seq.max_rollback, len(seq.tokens)):
                result.error.CopyFrom(
                    error(grpc.StatusCode.INVALID_ARGUMENT,
                          f"rollback_tokens {advance.rollback_tokens} exceeds what is kept"))
                return
            del seq.tokens[len(seq.tokens) - advance.rollback_tokens:]
            for t in advance.tokens:
                if t not in allowed_ids(len(seq.tokens)):
                    result.error.CopyFrom(
                        error(grpc.StatusCode.INVALID_ARGUMENT, f"token {t} is not allowed"))
                    break
                seq.tokens.append(t)
                result.tokens_accepted += 1
            else:
                for t in advance.draft_tokens:
                    if t not in allowed_ids(len(seq.tokens)):
                        break
                    seq.tokens.append(t)
                    result.drafts_accepted += 1
                if not advance.omit_mask:
                    self._result_for(seq_id, seq, result)
        elif which == "close":
            if sequences.pop(seq_id, None) is None:
                result.error.CopyFrom(error(grpc.StatusCode.NOT_FOUND, "no such sequence"))

    def Session(self, request_iterator, context):
        sequences = {}
        for request in request_iterator:
            self.requests_seen.append(request)
            if self.step_delay_s:
                time.sleep(self.step_delay_s)
            response = session_pb2.StepResponse(request_id=request.request_id)
            seen = set()
            for op in request.ops:
                result = response.results.add(sequence_id=op.sequence_id)
                if op.sequence_id in seen:
                    result.error.CopyFrom(error(grpc.StatusCode.INVALID_ARGUMENT,
                                                "sequence appears twice in one request"))
                    continue
                seen.add(op.sequence_id)
                self._apply(sequences, op, result)
            yield response


def start(step_delay_s=0.0):
    """Starts a fake on a free loopback port; returns (server, address, servicer)."""
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=8))
    servicer = FakeMaskd(step_delay_s)
    maskd_pb2_grpc.add_MaskdServicer_to_server(servicer, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    return server, f"127.0.0.1:{port}", servicer
