"""Soak: maskd replicas under 100 failing-over streams, compile storms and kills.

Starts --replicas maskd processes on fixed loopback ports, drives --streams
Session streams through round robin over all of them (each stream keeps
--sequences_per_stream sequences generating random outputs of mixed specs:
MaskBench schemas, regexes, choices; a finished sequence is closed and a new
one opened), fires a storm of --storm_compiles distinct compiles every
--storm_every seconds, and every --kill_every seconds SIGKILLs or SIGTERMs
(alternately) one replica and restarts it on the same port. Every
--report_every seconds it prints one line: each replica's RSS, step latency
p50/p99 over the interval, steps, stream errors (steps that raised after
failover), sequence errors by code, failovers, compiles; then, per replica,
what holds its memory from /metrics (MiB: cache, and the memory budget's
sessions, sequences, dictionaries, compiles; active streams and sequences).
Not a test: it asserts nothing, it reports.

    bench/soak/soak.sh [--duration_s 1800] [--streams 100] ...
"""
import argparse
import collections
import gzip
import json
import os
import random
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request

import grpc

from maskd_client import (Choices, CompileError, FailoverOptions, JsonSchema, MaskClient,
                          MaskdError, Open, Regex)

REGEXES = [r"[a-z]{2,8}@[a-z]{2,6}\.(com|org|net)", r"\d{4}-\d{2}-\d{2}", r"(yes|no|maybe)",
           r"[A-Z][a-z]{1,12}( [A-Z][a-z]{1,12}){0,3}", r"0x[0-9a-f]{1,16}"]
CHOICES = [["red", "green", "blue"], ["north", "south", "east", "west", "up", "down"]]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Replica:
    """One maskd on a fixed port, restartable there."""

    def __init__(self, binary, tokenizer_dir, extra):
        self.port = free_port()
        self.metrics_port = free_port()
        self.args = [binary, f"--listen=127.0.0.1:{self.port}",
                     f"--metrics_listen=127.0.0.1:{self.metrics_port}",
                     f"--tokenizer=llama3={tokenizer_dir}", "--shutdown_grace=3s", *extra]
        self.process = None
        self.restarts = 0

    @property
    def address(self):
        return f"127.0.0.1:{self.port}"

    def start(self, wait_s=120):
        self.process = subprocess.Popen(self.args, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"maskd on {self.address} exited {self.process.returncode}")
            try:
                socket.create_connection(("127.0.0.1", self.port), 0.2).close()
                return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError(f"maskd on {self.address} did not listen in {wait_s}s")

    def rss_mib(self):
        try:
            with open(f"/proc/{self.process.pid}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        return int(line.split()[1]) / 1024
        except OSError:
            pass
        return float("nan")

    def memory_line(self):
        """What holds this replica's memory, from its /metrics (MiB; '?' if unreachable)."""
        wanted = {"maskd_cache_bytes": "cache", "maskd_active_streams": "streams",
                  "maskd_active_sessions": "seqs"}
        for kind in ("sessions", "sequences", "dictionaries", "compiles", "recipes"):
            wanted[f'maskd_memory_budget_bytes{{kind="{kind}"}}'] = kind
        try:
            with urllib.request.urlopen(
                    f"http://127.0.0.1:{self.metrics_port}/metrics", timeout=5) as response:
                text = response.read().decode()
        except OSError:
            return "?"
        values = {}
        for line in text.splitlines():
            name, _, value = line.rpartition(" ")
            if name in wanted:
                values[wanted[name]] = float(value)
        parts = []
        for label in ("cache", "sessions", "sequences", "dictionaries", "compiles", "recipes"):
            if label in values:
                parts.append(f"{label} {values[label] / 1048576:.0f}")
        for label in ("streams", "seqs"):
            if label in values:
                parts.append(f"{label} {values[label]:.0f}")
        return " ".join(parts)

    def stop(self, sig=signal.SIGTERM):
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(sig)
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


class Stats:
    """Counters of one reporting interval (and totals), shared by every thread."""

    def __init__(self):
        self.lock = threading.Lock()
        self.latencies = []
        self.steps = 0
        self.stream_errors = collections.Counter()
        self.sequence_errors = collections.Counter()
        self.failovers = 0
        self.compiles = collections.Counter()
        self.sequences_done = 0
        self.totals = collections.Counter()

    def take(self):
        with self.lock:
            snapshot = (sorted(self.latencies), self.steps, dict(self.stream_errors),
                        dict(self.sequence_errors), self.failovers, dict(self.compiles),
                        self.sequences_done)
            self.totals.update(steps=self.steps, failovers=self.failovers,
                               stream_errors=sum(self.stream_errors.values()),
                               sequence_errors=sum(self.sequence_errors.values()),
                               sequences_done=self.sequences_done)
            self.latencies, self.steps, self.failovers, self.sequences_done = [], 0, 0, 0
            self.stream_errors.clear()
            self.sequence_errors.clear()
            self.compiles.clear()
            return snapshot


def load_schemas(path, limit):
    """MaskBench schemas (the first `limit`), the mixed JSON Schema pool."""
    schemas = []
    with gzip.open(path, "rt") as f:
        for line in f:
            schemas.append(json.loads(line)["schema"])
            if len(schemas) >= limit:
                break
    return schemas


def random_spec(rng, schemas):
    kind = rng.random()
    if kind < 0.6:
        return JsonSchema(rng.choice(schemas))
    if kind < 0.85:
        return Regex(rng.choice(REGEXES))
    return Choices(rng.choice(CHOICES))


def stream_worker(index, client, tokenizer, schemas, args, stats, stop):
    """One Session stream: sequences generating random outputs until `stop`; a new session after a stream error."""
    rng = random.Random(index)
    eos = set(tokenizer.eos_token_ids)
    next_id = 0

    def on_failover(event):
        with stats.lock:
            stats.failovers += 1

    while not stop.is_set():
        session = client.session(tokenizer_id=tokenizer.tokenizer_id,
                                 failover=FailoverOptions(on_failover=on_failover))
        live = {}  # seq id -> tokens so far
        try:
            opens = {}
            while not stop.is_set():
                while len(live) + len(opens) < args.sequences_per_stream:
                    opens[next_id] = Open(random_spec(rng, schemas))
                    next_id += 1
                done = {seq for seq, tokens in live.items()
                        if tokens and (tokens[-1] in eos or len(tokens) >= args.max_tokens)}
                advances = {seq: [tokens[-1]] for seq, tokens in live.items() if seq not in done}
                started = time.monotonic()
                results = session.step(advances, open=opens, close=done)
                elapsed = time.monotonic() - started
                for seq in done:
                    del live[seq]
                for seq in opens:
                    live[seq] = []
                opens = {}
                with stats.lock:
                    stats.latencies.append(elapsed)
                    stats.steps += 1
                    stats.sequences_done += len(done)
                for seq in list(live):
                    result = results[seq]
                    if result.error is not None:
                        with stats.lock:
                            stats.sequence_errors[result.error.code.name] += 1
                        del live[seq]
                        continue
                    allowed = result.mask.allowed_ids()
                    live[seq].append(int(allowed[rng.randrange(len(allowed))]))
        except MaskdError as e:
            with stats.lock:
                stats.stream_errors[e.code.name] += 1
            time.sleep(0.5)
        finally:
            session.end()


def storm(client, tokenizer, args, stats, stop):
    """Every storm_every seconds, storm_compiles distinct (uncached) compiles at once."""
    n = 0
    while not stop.wait(args.storm_every):
        threads = []

        def one(k):
            # A fresh enum and pattern each time: a cache miss with real work.
            schema = {"type": "object", "properties": {
                "id": {"enum": [f"v{k}-{i}" for i in range(200)]},
                "code": {"type": "string", "pattern": f"^[a-z]{{{k % 7 + 1},{k % 7 + 9}}}{k}$"}},
                "required": ["id", "code"]}
            try:
                client.compile(tokenizer.tokenizer_id, JsonSchema(schema), timeout=30)
                outcome = "ok"
            except CompileError as e:
                outcome = f"refused_{e.code.name}"
            except MaskdError as e:
                outcome = f"failed_{e.code.name}"
            with stats.lock:
                stats.compiles[outcome] += 1

        for _ in range(args.storm_compiles):
            n += 1
            threads.append(threading.Thread(target=one, args=(n,)))
            threads[-1].start()
        for t in threads:
            t.join()


def killer(replicas, args, stop, log):
    """Every kill_every seconds: SIGKILL or SIGTERM (alternately) a replica, then restart it."""
    rng = random.Random(7)
    hard = True
    while not stop.wait(args.kill_every):
        replica = rng.choice(replicas[args.never_kill:])
        sig = signal.SIGKILL if hard else signal.SIGTERM
        log(f"# {'SIGKILL' if hard else 'SIGTERM'} replica {replica.address}")
        replica.stop(sig)
        hard = not hard
        if stop.wait(args.down_s):
            return
        replica.start()
        replica.restarts += 1


def percentile(sorted_values, p):
    if not sorted_values:
        return float("nan")
    return sorted_values[min(len(sorted_values) - 1, int(p * len(sorted_values)))]


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--maskd", default="build/release/service/maskd")
    parser.add_argument("--tokenizer_dir", default=os.path.join(
        os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "maskd", "tokenizers",
        "llama3"))
    parser.add_argument("--maskbench", default=os.environ.get(
        "MASKD_MASKBENCH", "../shared/maskbench/dev.jsonl.gz"))
    parser.add_argument("--duration_s", type=float, default=1800)
    parser.add_argument("--replicas", type=int, default=3)
    parser.add_argument("--streams", type=int, default=100)
    parser.add_argument("--sequences_per_stream", type=int, default=4)
    parser.add_argument("--max_tokens", type=int, default=64)
    parser.add_argument("--schemas", type=int, default=300, help="MaskBench schemas in the mix")
    parser.add_argument("--storm_every", type=float, default=30)
    parser.add_argument("--storm_compiles", type=int, default=40)
    parser.add_argument("--kill_every", type=float, default=45)
    parser.add_argument("--never_kill", type=int, default=0,
                        help="the first N replicas are never killed (to watch one replica's "
                             "RSS over the whole run)")
    parser.add_argument("--down_s", type=float, default=2, help="a killed replica stays down")
    parser.add_argument("--report_every", type=float, default=60)
    parser.add_argument("--maskd_arg", action="append", default=[],
                        help="extra maskd flag (repeatable)")
    args = parser.parse_args()

    start = time.monotonic()

    def log(line):
        print(f"{time.monotonic() - start:7.0f}s {line}", flush=True)

    schemas = load_schemas(args.maskbench, args.schemas)
    replicas = [Replica(args.maskd, args.tokenizer_dir, args.maskd_arg)
                for _ in range(args.replicas)]
    starters = [threading.Thread(target=r.start) for r in replicas]
    for t in starters:
        t.start()
    for t in starters:
        t.join()
    stats = Stats()
    stop = threading.Event()
    target = "ipv4:" + ",".join(r.address for r in replicas)
    client = MaskClient(target, load_balancing_policy="round_robin", timeout=60)
    tokenizer = client.register_tokenizer(preloaded_name="llama3")
    client.list_tokenizers()
    time.sleep(0.5)  # every replica connected, so round robin spreads the streams
    log(f"# {args.replicas} replicas, {args.streams} streams x {args.sequences_per_stream} "
        f"sequences, {len(schemas)} MaskBench schemas + {len(REGEXES)} regexes + "
        f"{len(CHOICES)} choices; storms of {args.storm_compiles} every {args.storm_every:g}s; "
        f"a kill every {args.kill_every:g}s")
    log("# rss_mib(per replica) | steps | step_ms p50 p99 | seqs_done | stream_errors | "
        "seq_errors | failovers | compiles")
    threads = [threading.Thread(target=stream_worker, daemon=True,
                                args=(i, client, tokenizer, schemas, args, stats, stop))
               for i in range(args.streams)]
    threads.append(threading.Thread(target=storm, daemon=True,
                                    args=(client, tokenizer, args, stats, stop)))
    threads.append(threading.Thread(target=killer, daemon=True, args=(replicas, args, stop, log)))
    for t in threads:
        t.start()
    rss_history = []
    try:
        while time.monotonic() - start < args.duration_s:
            time.sleep(min(args.report_every, max(args.duration_s - (time.monotonic() - start),
                                                  0.1)))
            latencies, steps, stream_errors, seq_errors, failovers, compiles, done = stats.take()
            rss = [r.rss_mib() for r in replicas]
            rss_history.append(rss)
            log(f"rss {' '.join(f'{m:.0f}' for m in rss)} | {steps} | "
                f"{percentile(latencies, 0.5) * 1e3:.1f} {percentile(latencies, 0.99) * 1e3:.1f} | "
                f"{done} | {stream_errors or 0} | {seq_errors or 0} | {failovers} | "
                f"{compiles or 0}")
            for r in replicas:
                log(f"  {r.address} (restarts {r.restarts}): {r.memory_line()}")
    finally:
        stop.set()
        for t in threads[:-2]:
            t.join(30)
        totals = stats.totals
        log(f"# totals: {dict(totals)}; restarts {[r.restarts for r in replicas]}")
        for r in replicas:
            r.stop()
        client.close()


if __name__ == "__main__":
    sys.exit(main())
