#!/usr/bin/python3
"""The Helm chart's defaults and the kustomize manifests describe the same pods.

Helm cannot run here (no binary, no network), so this is a minimal, honest check
instead of a diff of two renderings:
  1. the kustomize output (`kubectl kustomize deploy/k8s`), with the $(VAR)
     references in args expanded from its ConfigMap the way Kubernetes does, must
     carry exactly the ports, probes, flags, termination timing, resources and
     scaling numbers that deploy/helm/maskd/values.yaml sets;
  2. the chart's templates must take those fields from those values (the literal
     template lines are looked up), so the values are what Helm renders.

  3. the real maskd starts with those args (listen addresses moved to free loopback
     ports, the tokenizer mount to the local tokenizer cache) and drains on SIGTERM.

Usage: chart_matches_kustomize_test.py REPO_ROOT MASKD_BINARY
"""

import os
import re
import signal
import subprocess
import sys
import unittest
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "support"))
import data_paths  # noqa: E402  (tests/support)

if len(sys.argv) < 3:
    sys.exit("usage: chart_matches_kustomize_test.py REPO_ROOT MASKD_BINARY")
ROOT = Path(sys.argv.pop(1)).resolve()
MASKD = sys.argv.pop(1)
CHART = ROOT / "deploy/helm/maskd"
KUSTOMIZE = ROOT / "deploy/k8s"


def parse_duration_seconds(text):
    """absl::Duration spellings used for flags: 20s, 500ms, 1m, 1m30s."""
    units = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}
    parts = re.findall(r"(\d+(?:\.\d+)?)(ms|us|ns|h|m|s)", text)
    if not parts or "".join(n + u for n, u in parts) != text:
        raise ValueError(f"not a duration: {text!r}")
    return sum(float(n) * units[u] for n, u in parts)


def expand_vars(arg, env):
    """Kubernetes' $(VAR) expansion in container args ($$ escapes a dollar)."""

    def replace(match):
        if match.group(0) == "$$":
            return "$"
        name = match.group(1)
        if name not in env:
            raise KeyError(f"arg {arg!r} references $({name}), which the container lacks")
        return env[name]

    return re.sub(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)", replace, arg)


def render_kustomize():
    out = subprocess.run(
        ["kubectl", "kustomize", str(KUSTOMIZE)], check=True, capture_output=True, text=True
    ).stdout
    docs = [d for d in yaml.safe_load_all(out) if d]
    by_kind = {}
    for doc in docs:
        by_kind.setdefault(doc["kind"], []).append(doc)
    return by_kind


class ChartMatchesKustomize(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.values = yaml.safe_load((CHART / "values.yaml").read_text())
        cls.kinds = render_kustomize()
        (cls.deployment,) = cls.kinds["Deployment"]
        pod = cls.deployment["spec"]["template"]["spec"]
        cls.pod = pod
        (cls.container,) = [c for c in pod["containers"] if c["name"] == "maskd"]
        cls.templates = {p.name: p.read_text() for p in (CHART / "templates").iterdir()}

    def template_has(self, template, line):
        self.assertIn(line, self.templates[template], f"{template} lacks the line {line!r}")

    def container_env(self):
        env = {}
        configmaps = {c["metadata"]["name"]: c for c in self.kinds["ConfigMap"]}
        for source in self.container.get("envFrom", []):
            env.update(configmaps[source["configMapRef"]["name"]]["data"])
        for var in self.container.get("env", []):
            env[var["name"]] = var["value"]
        return env

    def expected_args(self):
        maskd = self.values["maskd"]
        mount = self.values["tokenizers"]["mountPath"]
        tokenizers = ",".join(f"{name}={mount}/{name}" for name in maskd["tokenizers"])
        args = [
            f"--listen=0.0.0.0:{maskd['grpcPort']}",
            f"--metrics_listen=0.0.0.0:{maskd['metricsPort']}",
            f"--tokenizer={tokenizers}",
        ]
        # Helm ranges over a map in sorted key order.
        args += [f"--{name}={maskd['flags'][name]}" for name in sorted(maskd["flags"])]
        return args + list(maskd["extraArgs"])

    def test_flags(self):
        env = self.container_env()
        args = [expand_vars(a, env) for a in self.container["args"]]
        self.assertEqual(args, self.expected_args())
        # The chart builds the same argv from the same pieces.
        self.template_has("deployment.yaml", "- --listen=0.0.0.0:{{ .Values.maskd.grpcPort }}")
        self.template_has(
            "deployment.yaml", "- --metrics_listen=0.0.0.0:{{ .Values.maskd.metricsPort }}"
        )
        self.template_has("deployment.yaml", "- --tokenizer=$(MASKD_TOKENIZERS)")
        self.template_has(
            "deployment.yaml", '- --{{ $name }}=$({{ include "maskd.flagEnv" $name }})'
        )
        self.template_has(
            "configmap.yaml", 'MASKD_TOKENIZERS: {{ include "maskd.tokenizerFlag" . | quote }}'
        )
        self.template_has(
            "configmap.yaml",
            '{{ include "maskd.flagEnv" $name }}: {{ $value | toString | quote }}',
        )
        for name, value in self.values["maskd"]["flags"].items():
            self.assertIsInstance(value, str, f"maskd.flags.{name} must be a string")

    def test_maskd_accepts_the_flags(self):
        env = self.container_env()
        args = [expand_vars(a, env) for a in self.container["args"]]
        mount = self.values["tokenizers"]["mountPath"]
        local = data_paths.tokenizer_root()
        local_args = []
        for arg in args:
            if arg.startswith(("--listen=", "--metrics_listen=")):
                arg = arg.split("=", 1)[0] + "=127.0.0.1:0"
            elif arg.startswith("--tokenizer="):
                arg = arg.replace(mount + "/", local.rstrip("/") + "/")
            local_args.append(arg)
        proc = subprocess.Popen([MASKD, *local_args], stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True)
        log = []
        try:
            for line in proc.stdout:  # ends when maskd exits
                log.append(line)
                if "maskd: grpc listening on " in line:
                    break
            self.assertTrue(log and "grpc listening" in log[-1],
                            f"maskd did not start with {local_args}:\n" + "".join(log))
            proc.send_signal(signal.SIGTERM)
            log += proc.stdout.readlines()
            self.assertEqual(proc.wait(60), 0, "".join(log))
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()

    def test_ports(self):
        maskd = self.values["maskd"]
        ports = {p["name"]: p["containerPort"] for p in self.container["ports"]}
        self.assertEqual(ports, {"grpc": maskd["grpcPort"], "metrics": maskd["metricsPort"]})
        for port in ("grpcPort", "metricsPort"):
            self.template_has("deployment.yaml", f"containerPort: {{{{ .Values.maskd.{port} }}}}")
            self.template_has("service.yaml", f"port: {{{{ .Values.maskd.{port} }}}}")
        services = {s["metadata"]["name"]: s["spec"] for s in self.kinds["Service"]}
        plain = {p["name"]: (p["port"], p["targetPort"]) for p in services["maskd"]["ports"]}
        self.assertEqual(plain, {"grpc": (maskd["grpcPort"], "grpc")})
        # /metrics only on its own ClusterIP Service (never on a LoadBalancer).
        metrics = services["maskd-metrics"]
        self.assertEqual(metrics["type"], "ClusterIP")
        self.assertEqual({p["name"]: (p["port"], p["targetPort"]) for p in metrics["ports"]},
                         {"metrics": (maskd["metricsPort"], "metrics")})
        self.assertEqual(services["maskd"]["type"], self.values["service"]["type"])
        self.assertEqual(
            self.values["service"]["headless"]["enabled"], "maskd-headless" in services
        )
        headless = services["maskd-headless"]
        self.assertEqual(headless["clusterIP"], "None")
        self.assertEqual([(p["name"], p["port"]) for p in headless["ports"]],
                         [("grpc", maskd["grpcPort"])])

    def test_probes(self):
        for kind in ("startup", "liveness", "readiness"):
            probe = self.container[f"{kind}Probe"]
            self.assertEqual(probe["grpc"], {"port": self.values["maskd"]["grpcPort"]}, kind)
            want = self.values["probes"][kind]
            got = {k: probe[k] for k in ("periodSeconds", "timeoutSeconds", "failureThreshold")}
            self.assertEqual(got, want, kind)
            # That the chart's template renders these values is helm_test.py's
            # job now (real `helm template`, compared object by object).

    def test_termination_outlasts_drain(self):
        grace = self.pod["terminationGracePeriodSeconds"]
        self.assertEqual(grace, self.values["terminationGracePeriodSeconds"])
        sleep = self.values["preStopSleepSeconds"]
        drain = parse_duration_seconds(self.values["maskd"]["flags"]["shutdown_grace"])
        self.assertGreater(grace, sleep + drain, "SIGKILL would cut the drain short")
        self.assertEqual(
            self.container["lifecycle"]["preStop"]["exec"]["command"], ["/bin/sleep", str(sleep)]
        )
        self.template_has(
            "deployment.yaml",
            "terminationGracePeriodSeconds: {{ .Values.terminationGracePeriodSeconds }}",
        )

    def test_resources_and_security(self):
        self.assertEqual(self.container["resources"], self.values["resources"])
        self.assertEqual(self.container["securityContext"], self.values["securityContext"])
        self.assertEqual(self.pod["securityContext"], self.values["podSecurityContext"])
        (init,) = self.pod["initContainers"]
        self.assertEqual(init["resources"], self.values["tokenizers"]["fetcher"]["resources"])
        mount = self.values["tokenizers"]["mountPath"]
        self.assertIn({"name": "MASKD_TOKENIZER_DIR", "value": mount}, init["env"])
        self.assertIn(
            {"name": "tokenizers", "mountPath": mount, "readOnly": True},
            self.container["volumeMounts"],
        )

    def test_scaling(self):
        (hpa,) = self.kinds["HorizontalPodAutoscaler"]
        auto = self.values["autoscaling"]
        self.assertTrue(auto["enabled"])
        self.assertNotIn("replicas", self.deployment["spec"], "the HPA owns the replica count")
        self.assertEqual(
            (hpa["spec"]["minReplicas"], hpa["spec"]["maxReplicas"]),
            (auto["minReplicas"], auto["maxReplicas"]),
        )
        (metric,) = hpa["spec"]["metrics"]
        self.assertEqual(
            metric["resource"]["target"]["averageUtilization"],
            auto["targetCPUUtilizationPercentage"],
        )
        self.assertEqual(
            hpa["spec"]["behavior"]["scaleDown"]["stabilizationWindowSeconds"],
            auto["scaleDownStabilizationSeconds"],
        )
        (pdb,) = self.kinds["PodDisruptionBudget"]
        self.assertEqual(
            pdb["spec"]["maxUnavailable"], self.values["podDisruptionBudget"]["maxUnavailable"]
        )
        self.assertNotIn("ServiceMonitor", self.kinds)
        self.assertFalse(self.values["metrics"]["serviceMonitor"]["enabled"])

    def test_templates_are_consistent(self):
        # Without helm, catch what `helm lint` would: a .Values path that values.yaml
        # lacks (a typo renders as empty), an include of an undefined template, and
        # unbalanced block actions.
        defined = set(re.findall(r'{{-? define "([\w.]+)"', self.templates["_helpers.tpl"]))
        for name, text in self.templates.items():
            for path in re.findall(r"\.Values((?:\.\w+)+)", text):
                node = self.values
                for key in path.strip(".").split("."):
                    self.assertIsInstance(node, dict, f"{name}: .Values{path}")
                    self.assertIn(key, node, f"{name}: .Values{path} is not in values.yaml")
                    node = node[key]
            for included in re.findall(r'include "([\w.]+)"', text):
                self.assertIn(included, defined, f"{name}: include of undefined {included}")
            actions = re.findall(r"{{-?\s*(\w+)", text)
            opened = sum(a in ("if", "with", "range", "define") for a in actions)
            self.assertEqual(opened, actions.count("end"), f"{name}: unbalanced blocks")

    def test_every_value_is_documented(self):
        # Each leaf or section key in values.yaml has a comment line right above it
        # (or is a child of a documented map whose own comment covers it).
        lines = (CHART / "values.yaml").read_text().splitlines()
        undocumented = []
        for i, line in enumerate(lines):
            match = re.match(r"^(\s*)([A-Za-z_][\w]*):", line)
            if not match or i == 0:
                continue
            above = lines[i - 1].strip()
            indent = len(match.group(1))
            parent_is_literal = any(
                re.match(rf"^\s{{{indent - 2}}}(resources|requests|limits|capabilities|"
                         rf"seccompProfile|podSecurityContext|securityContext):", lines[j])
                for j in range(max(0, i - 12), i)
            ) if indent >= 2 else False
            is_section = i + 1 < len(lines) and re.match(rf"^\s{{{indent + 2}}}\S", lines[i + 1])
            if above.startswith("#") or parent_is_literal or is_section:
                continue
            undocumented.append(f"values.yaml:{i + 1}: {line.strip()}")
        self.assertEqual(undocumented, [])


if __name__ == "__main__":
    unittest.main(verbosity=2)
