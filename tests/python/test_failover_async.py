"""Failover with nothing lost, asyncio client: test_failover.py's run with AsyncSession.

Three real maskd replicas behind round robin; 64 seeded sequences over 8
AsyncSessions (one task each, so the streams' steps overlap); the busiest
replica is SIGKILLed mid-run, then the busiest remaining one drained with
SIGTERM. Every sequence must end with the same tokens and masks as the sync
client's run without faults, and the sessions must report the failovers.
With failover off, or with no replica left, the step raises.

    test_failover_async.py --maskd M
"""
import asyncio
import hashlib
import random
import threading
import time
import unittest

import grpc

from maskd_server import MaskdServer
from maskd_client import (AsyncMaskClient, FailoverOptions, MaskClient, MaskdError, Open, Regex)
# Importing test_failover reads --maskd from sys.argv (MASKD).
from test_failover import (MASKD, MAX_TOKENS, PER_SESSION, SESSIONS, SPECS, active_streams,
                           generate)


async def generate_async(client, tokenizer, between_rounds, failover):
    """generate() of test_failover.py with one task per AsyncSession; rounds in lock step."""
    sessions = [client.session(tokenizer_id=tokenizer.tokenizer_id, failover=failover)
                for _ in range(SESSIONS)]
    eos = set(tokenizer.eos_token_ids)
    runs = {seq: ([], []) for seq in range(SESSIONS * PER_SESSION)}
    rngs = {seq: random.Random(seq + 1) for seq in runs}
    live = {s: set(range(s * PER_SESSION, (s + 1) * PER_SESSION)) for s in range(SESSIONS)}

    async def one_round(s, session, round_):
        if round_ == 0:
            results = await session.step(open={seq: Open(SPECS[seq % len(SPECS)])
                                               for seq in live[s]})
        else:
            done = {seq for seq in live[s]
                    if runs[seq][0][-1] in eos or len(runs[seq][0]) >= MAX_TOKENS}
            results = await session.step({seq: [runs[seq][0][-1]] for seq in live[s] - done},
                                         close=done)
            live[s] -= done
        for seq in live[s]:
            mask = results[seq].mask  # raises the sequence's error
            allowed = mask.allowed_ids()
            tokens, digests = runs[seq]
            digests.append(hashlib.sha1(mask.bits.tobytes()).hexdigest())
            tokens.append(int(allowed[rngs[seq].randrange(len(allowed))]))

    try:
        round_ = 0
        while any(live.values()):
            await asyncio.gather(*(one_round(s, session, round_)
                                   for s, session in enumerate(sessions) if live[s]))
            between_rounds(round_)
            round_ += 1
        return runs, sum(session.failovers for session in sessions)
    finally:
        for session in sessions:
            await session.end()


class AsyncFailoverTest(unittest.TestCase):

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

        target = "ipv4:" + ",".join(server.address for server in self.servers)
        threads = []
        faulted = []  # (replica index, its active streams then)

        def busiest(exclude):
            counts = [(active_streams(server), i) for i, server in enumerate(self.servers)
                      if i not in exclude]
            streams, i = max(counts)
            return i, streams

        def faults(round_):
            if round_ == 3:  # SIGKILL; the next round's steps meet the dead replica
                faulted.append(busiest(()))
                threads.append(threading.Thread(
                    target=self.servers[faulted[0][0]]._process.kill))
                threads[-1].start()
            if round_ == 8:
                faulted.append(busiest((faulted[0][0],)))
                threads.append(threading.Thread(target=self.servers[faulted[1][0]].stop))
                threads[-1].start()

        events = []

        async def run():
            async with AsyncMaskClient(target, load_balancing_policy="round_robin") as balanced:
                await balanced.list_tokenizers()
                await asyncio.sleep(0.3)  # more replicas connected: a wider spread
                return await generate_async(balanced, tokenizer, faults,
                                            FailoverOptions(on_failover=events.append))

        faulty, failovers = asyncio.run(run())
        for t in threads:
            t.join()
        (killed, on_killed), (drained, on_drained) = faulted
        self.assertEqual(self.servers[killed]._process.wait(10), -9)
        self.assertEqual(self.servers[drained]._process.wait(30), 0)
        self.assertGreater(on_killed, 0)
        self.assertGreater(on_drained, 0)
        for seq, run_ in reference.items():
            self.assertEqual(faulty[seq], run_, f"sequence {seq}")
        print(f"streams on the killed replica {on_killed}, on the drained one {on_drained}; "
              f"failovers {failovers}")
        self.assertGreaterEqual(failovers, on_killed + on_drained)
        self.assertEqual(len(events), failovers)
        for event in events:
            self.assertIn(event.cause.code, (grpc.StatusCode.UNAVAILABLE,
                                             grpc.StatusCode.CANCELLED))
            self.assertEqual(event.sequences_lost, {})
            self.assertGreater(event.sequences_restored, 0)

    def test_off_or_no_replica_left_raises(self):
        lone = MaskdServer(MASKD)

        async def run():
            async with AsyncMaskClient(lone.address) as client:
                tokenizer = await client.register_tokenizer(preloaded_name="llama3")
                reported = []
                without = client.session(tokenizer_id=tokenizer.tokenizer_id,
                                         failover=FailoverOptions(enabled=False))
                bounded = client.session(tokenizer_id=tokenizer.tokenizer_id,
                                         failover=FailoverOptions(
                                             max_attempts=3, initial_backoff_s=0.01,
                                             on_failover=reported.append))
                for session in (without, bounded):
                    await session.open(1, Regex("[a-z]{1,5}"))
                lone._process.kill()
                lone._process.wait(10)
                with self.assertRaises(MaskdError) as off:
                    await without.step({1: [64]})
                self.assertEqual(off.exception.code, grpc.StatusCode.UNAVAILABLE)
                self.assertEqual(without.failovers, 0)
                started = time.monotonic()
                with self.assertRaises(MaskdError) as gave_up:
                    await bounded.step({1: [64]})
                self.assertEqual(gave_up.exception.code, grpc.StatusCode.UNAVAILABLE)
                self.assertIn("failover gave up after 3 new streams", gave_up.exception.message)
                self.assertLess(time.monotonic() - started, 30)
                self.assertEqual(reported, [])
                for session in (without, bounded):
                    await session.end()

        try:
            asyncio.run(run())
        finally:
            lone.stop()


if __name__ == "__main__":
    unittest.main()
