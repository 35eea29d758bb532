#!/usr/bin/python3
"""maskd's metrics, end to end through a real Prometheus.

Starts the real `maskd` on loopback ports, and Debian's `prometheus` scraping it every
second with deploy/prometheus/rules.yml loaded. Drives known traffic through a real gRPC
client (Python stubs generated from proto/ with protoc's grpc_python_plugin): compiles
(one spec three times -> cache hits, one refused spec -> an error) and Session steps
(tokens taken from the returned masks, one token outside the mask -> a per-sequence
error). Then, through Prometheus' HTTP API:
  - the compile histogram counts by kind/outcome and the cache, token and step counters
    equal what the traffic implies;
  - every PromQL expression of deploy/grafana/maskd.json and deploy/prometheus/rules.yml
    executes without error, and the dashboard's core panels return data;
  - the rule groups evaluate without error.
`promtool check metrics` also lints the raw /metrics exposition.

The container's HEALTHCHECK command (`maskctl health`) is run against the same maskd.

Usage: prometheus_scrape_test.py --maskd BIN --maskctl BIN --root REPO [--tokenizer-dir DIR]
"""

import argparse
import collections
import json
import math
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "support"))
import data_paths  # noqa: E402  (tests/support)

ARGS = None
JOB = "maskd"

ROUNDS = 2


def schema_for(round_):
    """A schema that compiles; each round's differs, so each round compiles anew."""
    return json.dumps(
        {
            "type": "object",
            "properties": {
                "name": {"type": "string", "maxLength": 8 + round_},
                "n": {"type": "integer"},
            },
            "required": ["name", "n"],
            "additionalProperties": False,
        }
    )


def refused_schema_for(round_):
    """Not JSON (cut short): INVALID_ARGUMENT; each round's text differs."""
    return '{"type": "object", "properties": ' + " " * round_


# Dashboard panels that must return data after the traffic below.
CORE_PANELS = [
    "Compile latency p50 / p99 by kind",
    "Compiles by kind and outcome",
    "Cache hit ratio",
    "Cache requests by result",
    "Mask latency p50 / p99",
    "Step latency p50 / p99",
    "Step batch size",
    "Active streams and sessions by instance",
    "Errors by code",
    "Tokens accepted / rejected",
]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def default_tokenizer_dir():
    return data_paths.tokenizer_dir("llama3")


class Process:
    """A child process whose combined output is collected by a reader thread."""

    def __init__(self, argv, name):
        self.name = name
        self.proc = subprocess.Popen(
            argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1
        )
        self.lines = []
        self.cond = threading.Condition()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for line in self.proc.stdout:
            with self.cond:
                self.lines.append(line.rstrip("\n"))
                self.cond.notify_all()
        with self.cond:
            self.cond.notify_all()

    def wait_for_line(self, marker, timeout):
        """The rest of the first output line containing `marker`."""
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                for line in self.lines:
                    if marker in line:
                        return line.split(marker, 1)[1].strip()
                if self.proc.poll() is not None and not self.reader.is_alive():
                    raise RuntimeError(f"{self.name} exited:\n" + self.log())
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"{self.name}: no '{marker}' in {timeout} s:\n" + self.log())
                self.cond.wait(min(left, 0.2))

    def log(self):
        with self.cond:
            return "\n".join(self.lines[-40:])

    def stop(self, timeout=30):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.reader.join(5)
        return self.proc.returncode


def generate_stubs(root, out):
    """maskd.v1 Python stubs into `out`; protoc and grpc_python_plugin are Debian's."""
    plugin = shutil.which("grpc_python_plugin")
    if not plugin or not shutil.which("protoc"):
        raise RuntimeError("protoc and grpc_python_plugin are needed (protobuf-compiler-grpc)")
    out.mkdir(parents=True, exist_ok=True)
    protos = sorted(str(p.relative_to(root / "proto")) for p in (root / "proto").rglob("*.proto"))
    subprocess.run(
        ["protoc", f"--proto_path={root / 'proto'}", f"--python_out={out}",
         f"--grpc_python_out={out}", f"--plugin=protoc-gen-grpc_python={plugin}", *protos],
        check=True,
    )
    sys.path.insert(0, str(out))


def allowed_tokens(mask):
    """Allowed token ids of a maskd.v1.Mask, whatever its encoding."""
    which = mask.WhichOneof("encoding")
    if which == "allow_list":
        return list(mask.allow_list.token_ids)
    if which == "deny_list":
        denied = set(mask.deny_list.token_ids)
        return [t for t in range(mask.vocab_size) if t not in denied]
    if which == "bitmask":
        return [
            w * 32 + b
            for w, word in enumerate(mask.bitmask.words)
            for b in range(32)
            if word >> b & 1
        ]
    raise AssertionError(f"mask without an encoding: {mask}")


class PrometheusScrape(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.root = Path(ARGS.root).resolve()
        cls.tmp = Path(tempfile.mkdtemp(prefix="maskd-prom-"))
        cls.maskd = cls.prometheus = None
        try:
            cls._start_and_drive()
        except BaseException:
            cls._stop_all()
            raise

    @classmethod
    def _start_and_drive(cls):
        generate_stubs(cls.root, cls.tmp / "stubs")
        cls.maskd = Process(
            [ARGS.maskd, "--listen=127.0.0.1:0", "--metrics_listen=127.0.0.1:0",
             f"--tokenizer=llama3={ARGS.tokenizer_dir}"],
            "maskd",
        )
        cls.grpc_address = cls.maskd.wait_for_line("maskd: grpc listening on ", 120)
        cls.metrics_address = cls.maskd.wait_for_line("maskd: metrics on http://", 10).split("/")[0]

        # Prometheus: scrape every second, evaluate the shipped rules every second.
        shutil.copy(cls.root / "deploy/prometheus/rules.yml", cls.tmp / "rules.yml")
        config = {
            "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
            "rule_files": [str(cls.tmp / "rules.yml")],
            "scrape_configs": [
                {"job_name": JOB, "static_configs": [{"targets": [cls.metrics_address]}]}
            ],
        }
        (cls.tmp / "prometheus.yml").write_text(yaml.safe_dump(config))
        subprocess.run(["promtool", "check", "config", str(cls.tmp / "prometheus.yml")],
                       check=True, capture_output=True)
        for attempt in range(3):  # the free port may be taken between probe and bind
            port = free_port()
            cls.prometheus = Process(
                ["prometheus", f"--config.file={cls.tmp / 'prometheus.yml'}",
                 f"--storage.tsdb.path={cls.tmp / 'data'}",
                 f"--web.listen-address=127.0.0.1:{port}", "--log.level=warn"],
                "prometheus",
            )
            cls.prom_url = f"http://127.0.0.1:{port}"
            if cls._wait_ready(30):
                break
            cls.prometheus.stop()
        else:
            raise RuntimeError("prometheus did not become ready:\n" + cls.prometheus.log())

        # Traffic in rounds with a scrape between them, as in steady use: rate() over a
        # series needs an increase between two of its samples, and the labelled series
        # (compile kind/outcome, error code) are born in the first round.
        cls._wait_for_scrapes(after=time.time(), count=1)
        cls.expected = collections.Counter()
        for round_ in range(ROUNDS):
            cls.expected.update(cls._drive_traffic(round_))
            cls._wait_for_scrapes(after=time.time(), count=2 if round_ == ROUNDS - 1 else 1)
        cls.exposition = urllib.request.urlopen(
            f"http://{cls.metrics_address}/metrics", timeout=10
        ).read().decode()

    @classmethod
    def _wait_ready(cls, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if cls.prometheus.proc.poll() is not None:
                return False
            try:
                with urllib.request.urlopen(cls.prom_url + "/-/ready", timeout=2) as r:
                    if r.status == 200:
                        return True
            except OSError:
                pass
            time.sleep(0.2)
        return False

    @classmethod
    def _drive_traffic(cls, round_):
        """One round: 3 compiles of one schema (1 miss, 2 hits), a regex, choices and a
        malformed schema (misses), a Session of 2 sequences opened by handle (2 cache
        hits), advanced 4 times, one rejected token, closed. Returns what it counted."""
        import grpc
        from maskd.v1 import compile_pb2, maskd_pb2_grpc, session_pb2, tokenizer_pb2

        channel = grpc.insecure_channel(cls.grpc_address)
        stub = maskd_pb2_grpc.MaskdStub(channel)
        listed = stub.ListTokenizers(tokenizer_pb2.ListTokenizersRequest(), timeout=30)
        (llama3,) = [t for t in listed.tokenizers if t.name == "llama3"]
        tokenizer_id = llama3.tokenizer_id

        def compile_spec(**spec):
            request = compile_pb2.CompileRequest(
                tokenizer_id=tokenizer_id, spec=compile_pb2.ConstraintSpec(**spec)
            )
            return stub.Compile(request, timeout=120)

        schema = [compile_spec(json_schema=schema_for(round_)) for _ in range(3)]
        regex = compile_spec(regex=f"[a-z]{{3}}-[0-9]{{{2 + round_}}}")
        choices = compile_spec(
            choices=compile_pb2.ChoicesSpec(choices=["yes", "no", f"maybe{round_}"])
        )
        refused = compile_spec(json_schema=refused_schema_for(round_))
        for response in schema + [regex, choices]:
            assert response.WhichOneof("result") == "grammar", response
        assert [r.grammar.stats.cache_hit for r in schema] == [False, True, True], schema
        assert refused.WhichOneof("result") == "error", refused

        # Session: two sequences opened by handle, advanced with allowed tokens from
        # their masks; then one token outside the mask; then closed.
        handles = {1: schema[0].grammar.handle, 2: regex.grammar.handle}
        eos = set(llama3.eos_token_ids)
        requests = []

        def op(seq, **kwargs):
            return session_pb2.SequenceOp(sequence_id=seq, **kwargs)

        class Outgoing:
            """The request side of the stream. Each step waits for the previous
            response, because its tokens come from that response's masks."""

            def __init__(self):
                self.queue = []
                self.cond = threading.Condition()
                self.done = False

            def __iter__(self):
                while True:
                    with self.cond:
                        while not self.queue and not self.done:
                            self.cond.wait()
                        if not self.queue:
                            return
                        item = self.queue.pop(0)
                    yield item

            def send(self, request):
                with self.cond:
                    self.queue.append(request)
                    self.cond.notify_all()

            def close(self):
                with self.cond:
                    self.done = True
                    self.cond.notify_all()

        outgoing = Outgoing()
        replies = stub.Session(iter(outgoing), timeout=120)

        def step(ops):
            request = session_pb2.StepRequest(request_id=len(requests) + 1, ops=ops)
            requests.append(request)
            outgoing.send(request)
            response = next(replies)
            assert response.request_id == request.request_id, response
            return {r.sequence_id: r for r in response.results}

        results = step([op(s, open=session_pb2.OpenSequence(handle=h)) for s, h in handles.items()])
        for seq in handles:
            assert not results[seq].HasField("error"), results[seq]
        accepted = 0
        for _ in range(4):
            ops = []
            for seq in handles:
                allowed = allowed_tokens(results[seq].mask)
                # Prefer a non-EOS token so the sequence keeps going.
                token = next((t for t in allowed if t not in eos), allowed[0])
                ops.append(op(seq, advance=session_pb2.AdvanceSequence(tokens=[token])))
            results = step(ops)
            for seq in handles:
                assert not results[seq].HasField("error"), results[seq]
                assert results[seq].tokens_accepted == 1, results[seq]
                accepted += 1
        # A token the mask does not allow: a per-sequence INVALID_ARGUMENT.
        allowed = set(allowed_tokens(results[1].mask))
        bad = next(t for t in range(llama3.vocab_size) if t not in allowed)
        results = step([op(1, advance=session_pb2.AdvanceSequence(tokens=[bad]))])
        assert results[1].error.code == grpc.StatusCode.INVALID_ARGUMENT.value[0], results[1]
        step([op(s, close=session_pb2.CloseSequence()) for s in handles])
        outgoing.close()
        assert list(replies) == []
        channel.close()

        return {
            ("compiles", "json_schema", "ok"): 1,
            ("compiles", "regex", "ok"): 1,
            ("compiles", "choices", "ok"): 1,
            ("compiles", "json_schema", "invalid_argument"): 1,
            # The repeated compiles, then the Session's opens by handle.
            ("cache", "hit"): 2 + len(handles),
            ("cache", "miss"): 4,
            "compile_rpcs": 6,
            "steps": len(requests),
            "ops": sum(len(r.ops) for r in requests),
            "masks": len(handles) + accepted,
            "tokens_accepted": accepted,
            "tokens_rejected": 1,
        }

    @classmethod
    def _wait_for_scrapes(cls, after, count):
        """Waits until Prometheus holds `count` scrapes of maskd taken after `after`
        (its first scrape comes up to ~5 s after it reports ready)."""
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            result = cls.query_raw("maskd_build_info[1m]")
            if result and sum(float(t) > after for t, _ in result[0]["values"]) >= count:
                return
            time.sleep(0.3)
        raise TimeoutError(f"no {count} scrapes of maskd within 60 s")

    @classmethod
    def query_raw(cls, expr):
        url = cls.prom_url + "/api/v1/query?" + urllib.parse.urlencode({"query": expr})
        try:
            with urllib.request.urlopen(url, timeout=10) as r:
                body = json.load(r)
        except urllib.error.HTTPError as e:
            body = json.load(e)
        if body.get("status") != "success":
            raise AssertionError(
                f"query failed: {expr}\n{body.get('errorType')}: {body.get('error')}"
            )
        return body["data"]["result"]

    def value(self, expr):
        result = self.query_raw(expr)
        self.assertEqual(len(result), 1, f"{expr}: {result}")
        return float(result[0]["value"][1])

    @classmethod
    def _stop_all(cls):
        for process in (cls.prometheus, cls.maskd):
            if process is not None:
                process.stop()
        shutil.rmtree(cls.tmp, ignore_errors=True)

    @classmethod
    def tearDownClass(cls):
        code = cls.maskd.stop()
        cls.prometheus.stop()
        shutil.rmtree(cls.tmp, ignore_errors=True)
        if code != 0:
            raise AssertionError(f"maskd exited {code} on SIGTERM:\n{cls.maskd.log()}")

    # --- The tests -----------------------------------------------------------------

    def test_compile_histogram_counts_by_kind_and_outcome(self):
        want = {key[1:]: n for key, n in self.expected.items() if key[0] == "compiles"}
        got = {
            (r["metric"]["kind"], r["metric"]["outcome"]): float(r["value"][1])
            for r in self.query_raw(f'maskd_compile_duration_seconds_count{{job="{JOB}"}}')
        }
        self.assertEqual(got, want)
        # The buckets arrived too: every compile is in the +Inf bucket.
        self.assertEqual(
            self.value(
                f'sum(maskd_compile_duration_seconds_bucket{{job="{JOB}", le="+Inf"}})'
            ),
            sum(want.values()),
        )

    def test_cache_counters(self):
        got = {
            r["metric"]["result"]: float(r["value"][1])
            for r in self.query_raw(f'maskd_cache_requests_total{{job="{JOB}"}}')
        }
        want = {"hit": self.expected[("cache", "hit")], "miss": self.expected[("cache", "miss")],
                "join": 0}
        self.assertEqual(got, want)
        self.assertEqual(self.value(f'maskd_cache_evictions_total{{job="{JOB}"}}'), 0)
        # Every compiled grammar stays cached; a spec's error may be cached briefly too.
        compiled = sum(n for k, n in self.expected.items() if k[0] == "compiles" and k[2] == "ok")
        self.assertIn(self.value(f'maskd_cache_entries{{job="{JOB}"}}'),
                      {compiled, compiled + ROUNDS})
        self.assertGreater(self.value(f'maskd_cache_bytes{{job="{JOB}"}}'), 0)

    def test_session_counters(self):
        expected = self.expected

        def value(metric):
            return self.value(f'{metric}{{job="{JOB}"}}')

        self.assertEqual(
            self.value(f'maskd_tokens_total{{job="{JOB}", result="accepted"}}'),
            expected["tokens_accepted"],
        )
        self.assertEqual(
            self.value(f'maskd_tokens_total{{job="{JOB}", result="rejected"}}'),
            expected["tokens_rejected"],
        )
        self.assertEqual(value("maskd_step_batch_size_count"), expected["steps"])
        self.assertEqual(value("maskd_step_batch_size_sum"), expected["ops"])
        self.assertEqual(value("maskd_step_duration_seconds_count"), expected["steps"])
        # One mask per open and per accepted advance (none for the rejected one).
        self.assertEqual(value("maskd_mask_duration_seconds_count"), expected["masks"])
        self.assertEqual(value("maskd_active_sessions"), 0)
        self.assertEqual(value("maskd_active_streams"), 0)
        self.assertEqual(
            self.value(f'maskd_rpc_requests_total{{job="{JOB}", method="Compile", code="OK"}}'),
            expected["compile_rpcs"],
        )
        # Errors by code: the rejected tokens and the malformed specs.
        errors = {
            r["metric"]["code"]: float(r["value"][1])
            for r in self.query_raw(f'maskd_errors_total{{job="{JOB}"}}')
        }
        self.assertEqual(
            errors,
            {"INVALID_ARGUMENT": expected["tokens_rejected"]
             + expected[("compiles", "json_schema", "invalid_argument")]},
        )

    def test_container_health_probe_command(self):
        # deploy/container/Dockerfile's HEALTHCHECK, with the address of this maskd.
        dockerfile = (self.root / "deploy/container/Dockerfile").read_text()
        probe = re.search(r'HEALTHCHECK .*\\\n\s+CMD (\[.*\])', dockerfile)
        self.assertIsNotNone(probe, "Dockerfile has no HEALTHCHECK CMD")
        argv = json.loads(probe.group(1))
        self.assertEqual(argv[:2], ["/usr/local/bin/maskctl", "health"])
        argv = [ARGS.maskctl] + [
            f"--server={self.grpc_address}" if a.startswith("--server=") else a for a in argv[1:]
        ]
        run = subprocess.run(argv, capture_output=True, text=True, timeout=30)
        self.assertEqual((run.returncode, run.stdout.strip()), (0, "SERVING"), run.stderr)

    def test_promtool_check_metrics(self):
        check = subprocess.run(
            ["promtool", "check", "metrics"], input=self.exposition, capture_output=True, text=True
        )
        self.assertEqual(check.returncode, 0, check.stdout + check.stderr)
        self.assertIn("maskd_compile_duration_seconds_bucket", self.exposition)

    def test_dashboard_queries_run_and_core_panels_have_data(self):
        dashboard = json.loads((self.root / "deploy/grafana/maskd.json").read_text())
        substitutions = {
            "$__rate_interval": "1m",
            "$job": JOB,
            "$instance": ".*",
        }
        checked = 0
        empty_core = []
        for panel in dashboard["panels"]:
            for target in panel.get("targets", []):
                expr = target["expr"]
                for var, value in substitutions.items():
                    expr = expr.replace(var, value)
                self.assertNotIn("$", expr, f"unsubstituted variable in {panel['title']}")
                result = self.query_raw(expr)  # raises on a query error
                checked += 1
                values = [float(r["value"][1]) for r in result]
                if panel["title"] in CORE_PANELS and not any(math.isfinite(v) for v in values):
                    empty_core.append(f"{panel['title']}: {expr} -> {result}")
        self.assertEqual(empty_core, [])
        titles = {p["title"] for p in dashboard["panels"]}
        self.assertEqual(set(CORE_PANELS) - titles, set(), "core panels missing")
        self.assertGreater(checked, 20)

    def test_rule_expressions_run_and_rules_evaluate(self):
        rules = yaml.safe_load((self.root / "deploy/prometheus/rules.yml").read_text())
        exprs = [r["expr"] for g in rules["groups"] for r in g["rules"]]
        for expr in exprs:
            self.query_raw(expr)  # raises on a query error
        # Prometheus itself loaded and evaluated them (evaluation_interval 1 s).
        deadline = time.monotonic() + 20
        while True:
            with urllib.request.urlopen(self.prom_url + "/api/v1/rules", timeout=10) as r:
                groups = json.load(r)["data"]["groups"]
            loaded = [rule for g in groups for rule in g["rules"]]
            evaluated = all(not r.get("lastEvaluation", "0001").startswith("0001") for r in loaded)
            if (loaded and evaluated) or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        self.assertEqual(len(loaded), len(exprs))
        unhealthy = [(r["name"], r.get("lastError")) for r in loaded if r["health"] != "ok"]
        self.assertEqual(unhealthy, [])
        # The target is up, so the target-down alert is not firing.
        firing = [r["name"] for r in loaded if r.get("state") == "firing"]
        self.assertNotIn("MaskdTargetDown", firing)


def main():
    global ARGS
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--maskd", required=True)
    parser.add_argument("--root", required=True)
    parser.add_argument("--maskctl", required=True, help="the image's health probe")
    parser.add_argument("--tokenizer-dir", default=default_tokenizer_dir())
    ARGS, rest = parser.parse_known_args()
    for tool in ("prometheus", "promtool"):
        if not shutil.which(tool):
            sys.exit(f"FAIL: {tool} not found (Debian package prometheus; scripts/setup.sh)")
    unittest.main(argv=[sys.argv[0], "-v", *rest])


if __name__ == "__main__":
    main()
