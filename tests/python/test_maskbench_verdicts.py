"""(a) MaskBench instances fed token by token through the service get the C++ engine's verdicts.

A deterministic sample of the dev split (pyclient_maskbench_oracle: instances
serialized as MaskBench does, Llama-3 ids from the C++ tokenizer, the engine's
own token-by-token verdicts) is replayed through Compile and the Session
stream: every schema must compile iff the engine compiles it, and every
instance must be accepted for exactly as many tokens, ending with the same
stop verdict. Each token is also checked against the mask sent before it: the
server must accept it iff that mask allows it.
"""
import sys
import time
import unittest

import grpc

from maskd_server import MaskdServer, binary_from_argv
from oracle import int_from_argv, maskbench_cases, oracle_from_argv
from maskd_client import CompileError, CompileOptions, JsonSchema, MaskClient

MASKD = binary_from_argv(sys.argv)
ORACLE = oracle_from_argv(sys.argv)
SAMPLE = int_from_argv(sys.argv, "--sample", 60)
GROUP = 64  # schemas whose instances share one batch of steps


def replay(session, instances):
    """instances: {seq_id: (grammar handle, ids)} -> {seq_id: (accepted, complete, disagreement)}."""
    results = session.step(open={s: handle for s, (handle, _) in instances.items()})
    live = {}
    outcome = {}
    for seq_id, result in results.items():
        result.raise_for_error()
        live[seq_id] = result
    position = 0
    while live:
        advances = {}
        for seq_id, last in list(live.items()):
            ids = instances[seq_id][1]
            if position == len(ids):
                outcome[seq_id] = (position, last.may_stop, None)
                del live[seq_id]
            else:
                advances[seq_id] = [ids[position]]
        if not advances:
            break
        results = session.step(advances)
        for seq_id, result in results.items():
            allowed = live[seq_id].mask.allowed(advances[seq_id][0])
            accepted = result.ok and result.tokens_accepted == 1
            if accepted != allowed:
                outcome[seq_id] = (position, False, f"mask says {allowed}, advance says "
                                   f"{accepted} ({result.error})")
                del live[seq_id]
            elif not accepted:
                outcome[seq_id] = (position, False, None)
                del live[seq_id]
            else:
                live[seq_id] = result
        position += 1
    session.step(close=list(instances))
    return outcome


def compile_patiently(client, tokenizer_id, schema):
    """Compile, waiting out the server's time limit on a loaded machine: a compile that runs
    past it goes on in the background and a repeated request finds it cached."""
    deadline = time.monotonic() + 300
    while True:
        try:
            return client.compile(tokenizer_id, JsonSchema(schema), CompileOptions(strict=True))
        except CompileError as e:
            if e.code != grpc.StatusCode.DEADLINE_EXCEEDED or time.monotonic() > deadline:
                raise
            time.sleep(1)


class MaskBenchVerdictsTest(unittest.TestCase):

    def test_same_verdicts_as_the_engine(self):
        cases = maskbench_cases(ORACLE, SAMPLE)
        server = MaskdServer(MASKD)
        mismatches = []
        compiled = instances_checked = tokens_checked = 0
        try:
            with MaskClient(server.address, timeout=120) as client:
                tokenizer = client.register_tokenizer(preloaded_name="llama3")
                with client.session() as session:
                    for start in range(0, len(cases), GROUP):
                        batch, expected = {}, {}
                        for case in cases[start:start + GROUP]:
                            try:
                                grammar = compile_patiently(client, tokenizer.tokenizer_id,
                                                            case["schema"])
                            except CompileError as e:
                                if case["compiled"]:
                                    mismatches.append(f"{case['name']}: service refused ({e}), "
                                                      "engine compiled")
                                continue
                            if not case["compiled"]:
                                mismatches.append(f"{case['name']}: service compiled, engine "
                                                  f"refused ({case['compile_error']})")
                                continue
                            compiled += 1
                            for i, test in enumerate(case["tests"]):
                                seq_id = len(batch) + 1
                                batch[seq_id] = (grammar.handle, test["ids"])
                                expected[seq_id] = (case["name"], i, test)
                        for seq_id, got in replay(session, batch).items():
                            name, i, test = expected[seq_id]
                            want = (test["accepted"], test["complete"], None)
                            instances_checked += 1
                            tokens_checked += min(got[0] + 1, len(test["ids"]))
                            if got != want:
                                mismatches.append(f"{name} test {i}: service (accepted, complete, "
                                                  f"disagreement) = {got}, engine {want}")
        finally:
            server.stop()
        print(f"\n{len(cases)} schemas, {compiled} compiled, {instances_checked} instances, "
              f"{tokens_checked} tokens checked, {len(mismatches)} mismatches", file=sys.stderr)
        self.assertGreater(instances_checked, 0)
        self.assertEqual(mismatches, [])


if __name__ == "__main__":
    unittest.main()
