"""Failover with nothing lost, Python client: three real maskd replicas behind round robin.

64 sequences over 8 Session streams sample (seeded) among the allowed tokens;
one replica is SIGKILLed mid-run, then another drained with SIGTERM. Every
sequence must end with the same tokens and the same masks as a run without
faults, and the sessions must report the failovers. With failover off, or
with no replica left, the step raises.

    test_failover.py --maskd M
"""
import hashlib
import random
import re
import sys
import threading
import time
import unittest
import urllib.request

import grpc

from maskd_server import MaskdServer, binary_from_argv
from maskd_client import (Choices, FailoverOptions, JsonSchema, MaskClient, MaskdError, Open,
                          Regex)

MASKD = binary_from_argv(sys.argv)
SESSIONS = 8
PER_SESSION = 8
MAX_TOKENS = 40
SPECS = [
    JsonSchema({"type": "object", "properties": {
        "name": {"type": "string", "maxLength": 10},
        "age": {"type": "integer", "minimum": 0, "maximum": 150}},
        "required": ["name", "age"], "additionalProperties": False}),
    Regex(r"[a-z]{2,8}@[a-z]{2,6}\.(com|org|net)"),
    Choices(["red", "green", "blue", "a much longer choice of colour"]),
    JsonSchema({"type": "array", "items": {"type": "boolean"}, "maxItems": 6}),
]


def active_streams(server):
    """maskd_active_streams of a replica's /metrics."""
    text = urllib.request.urlopen(server.metrics_url, timeout=10).read().decode()
    return float(re.search(r"^maskd_active_streams (\S+)$", text, re.M).group(1))


def generate(client, tokenizer, between_rounds=lambda r: None, failover=None):
    """{seq_id: (tokens, mask digests)}, total failovers, events, by driving every session a round at a time."""
    events = []
    options = failover or FailoverOptions(on_failover=events.append)
    sessions = [client.session(tokenizer_id=tokenizer.tokenizer_id, failover=options)
                for _ in range(SESSIONS)]
    eos = set(tokenizer.eos_token_ids)
    runs = {}
    rngs = {}
    try:
        for s, session in enumerate(sessions):
            ids = range(s * PER_SESSION, (s + 1) * PER_SESSION)
            for seq in ids:
                runs[seq] = ([], [])
                rngs[seq] = random.Random(seq + 1)
        live = {s: set(range(s * PER_SESSION, (s + 1) * PER_SESSION)) for s in range(SESSIONS)}
        round_ = 0
        while any(live.values()):
            for s, session in enumerate(sessions):
                if not live[s]:
                    continue
                if round_ == 0:
                    results = session.step(open={seq: Open(SPECS[seq % len(SPECS)])
                                                 for seq in live[s]})
                else:
                    done = {seq for seq in live[s]
                            if runs[seq][0][-1] in eos or len(runs[seq][0]) >= MAX_TOKENS}
                    results = session.step({seq: [runs[seq][0][-1]] for seq in live[s] - done},
                                           close=done)
                    live[s] -= done
                for seq in live[s]:
                    mask = results[seq].mask  # raises the sequence's error
                    allowed = mask.allowed_ids()
                    tokens, digests = runs[seq]
                    digests.append(hashlib.sha1(mask.bits.tobytes()).hexdigest())
                    tokens.append(int(allowed[rngs[seq].randrange(len(allowed))]))
            between_rounds(round_)
            round_ += 1
        return runs, sum(session.failovers for session in sessions), events
    finally:
        for session in sessions:
            session.end()


class FailoverBackoffTest(unittest.TestCase):
    """FailoverOptions.backoff_s: geometric up to the cap, less at most `jitter` of it,
    spread over workers (no server needed)."""

    def test_grows_to_the_cap_and_jitter_takes_at_most_its_fraction(self):
        f = FailoverOptions(initial_backoff_s=0.02, multiplier=2.0, max_backoff_s=0.5,
                            jitter=0.0)
        self.assertEqual([round(f.backoff_s(k), 6) for k in (1, 2, 5, 6, 100)],
                         [0.02, 0.04, 0.32, 0.5, 0.5])
        for k in range(1, 10):
            wait = min(0.02 * 2**(k - 1), 0.5)
            for _ in range(50):
                got = FailoverOptions(initial_backoff_s=0.02, max_backoff_s=0.5,
                                      jitter=0.5).backoff_s(k)
                self.assertGreaterEqual(got, wait * 0.5 - 1e-12)
                self.assertLessEqual(got, wait + 1e-12)

    def test_workers_of_a_dead_replica_spread_their_reconnects(self):
        waits = [FailoverOptions(initial_backoff_s=0.02, max_backoff_s=2.0, jitter=0.5,
                                 _random=random.Random(seed)).backoff_s(4)
                 for seed in range(64)]
        self.assertGreaterEqual(min(waits), 0.08 - 1e-12)
        self.assertLessEqual(max(waits), 0.16 + 1e-12)
        self.assertGreater(max(waits) - min(waits), 0.05)
        self.assertGreater(len({round(w, 4) for w in waits}), 30)


class FailoverTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        servers = [None] * 3
        errors = []

        def start(i):
            try:
                servers[i] = MaskdServer(MASKD, extra_args=["--shutdown_grace=3s"])
            except Exception as e:  # reported below, after every start has ended
                errors.append(e)

        threads = [threading.Thread(target=start, args=(i,)) for i in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        cls.servers = servers
        if errors:
            cls.tearDownClass()
            raise errors[0]

    @classmethod
    def tearDownClass(cls):
        for server in cls.servers:
            if server is not None:
                server.stop()

    def test_kill_and_drain_mid_run_lose_nothing(self):
        with MaskClient(self.servers[0].address) as direct:
            tokenizer = direct.register_tokenizer(preloaded_name="llama3")
            reference, failovers, _ = generate(direct, tokenizer)
        self.assertEqual(failovers, 0)
        self.assertEqual(len(reference), SESSIONS * PER_SESSION)

        target = "ipv4:" + ",".join(server.address for server in self.servers)
        threads = []

        faulted = []  # (replica index, its active streams then)

        def busiest(exclude):
            """The live replica holding the most streams now (round robin's spread varies)."""
            counts = [(active_streams(server), i) for i, server in enumerate(self.servers)
                      if i not in exclude]
            streams, i = max(counts)
            return i, streams

        def faults(round_):
            if round_ == 3:  # SIGKILL while the next steps are in flight
                faulted.append(busiest(()))
                threads.append(threading.Thread(
                    target=self.servers[faulted[0][0]]._process.kill))
                threads[-1].start()
            if round_ == 8:
                faulted.append(busiest((faulted[0][0],)))
                threads.append(threading.Thread(target=self.servers[faulted[1][0]].stop))
                threads[-1].start()

        with MaskClient(target, load_balancing_policy="round_robin") as balanced:
            balanced.list_tokenizers()
            time.sleep(0.3)  # more replicas connected: a wider spread
            faulty, failovers, events = generate(balanced, tokenizer, faults)
        for t in threads:
            t.join()
        (killed, on_killed), (drained, on_drained) = faulted
        self.assertEqual(self.servers[killed]._process.wait(10), -9)
        self.assertEqual(self.servers[drained]._process.wait(30), 0)
        # Both faulted replicas held streams when they went: nothing could
        # finish without failing over.
        self.assertGreater(on_killed, 0)
        self.assertGreater(on_drained, 0)
        for seq, run in reference.items():
            self.assertEqual(faulty[seq], run, f"sequence {seq}")
        print(f"streams on the killed replica {on_killed}, on the drained one {on_drained}; "
              f"failovers {failovers}")
        # At least one failover per stream of each faulted replica, each reported and whole.
        self.assertGreaterEqual(failovers, on_killed + on_drained)
        self.assertEqual(len(events), failovers)
        for event in events:
            self.assertIn(event.cause.code, (grpc.StatusCode.UNAVAILABLE,
                                             grpc.StatusCode.CANCELLED))
            self.assertEqual(event.sequences_lost, {})
            self.assertGreater(event.sequences_restored, 0)

    def test_off_or_no_replica_left_raises(self):
        lone = MaskdServer(MASKD)
        try:
            with MaskClient(lone.address) as client:
                tokenizer = client.register_tokenizer(preloaded_name="llama3")
                reported = []
                without = client.session(tokenizer_id=tokenizer.tokenizer_id,
                                         failover=FailoverOptions(enabled=False))
                bounded = client.session(tokenizer_id=tokenizer.tokenizer_id,
                                         failover=FailoverOptions(
                                             max_attempts=3, initial_backoff_s=0.01,
                                             on_failover=reported.append))
                for session in (without, bounded):
                    session.open(1, Regex("[a-z]{1,5}"))
                lone._process.kill()
                lone._process.wait(10)
                with self.assertRaises(MaskdError) as off:
                    without.step({1: [64]})
                self.assertEqual(off.exception.code, grpc.StatusCode.UNAVAILABLE)
                self.assertEqual(without.failovers, 0)
                with self.assertRaises(MaskdError) as gave_up:
                    bounded.step({1: [64]})
                self.assertEqual(gave_up.exception.code, grpc.StatusCode.UNAVAILABLE)
                self.assertIn("failover gave up after 3 new streams", gave_up.exception.message)
                self.assertEqual(reported, [])
                for session in (without, bounded):
                    session.end()
        finally:
            lone.stop()


if __name__ == "__main__":
    unittest.main()
