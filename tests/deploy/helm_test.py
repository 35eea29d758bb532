#!/usr/bin/python3
"""The Helm chart with the real helm (3.17.1, fetched by scripts/fetch_helm.sh):

  1. `helm lint` passes with the default values and with non-default ones
     (values-secure.yaml: mutual TLS, tokens, uploads, LoadBalancer; values-sidecar.yaml:
     a Unix socket and a worker container beside maskd);
  2. `helm template` of the defaults renders the very objects of the kustomize
     manifests (`kubectl kustomize deploy/k8s`): same kinds and names, same specs, once
     the labels each tool adds, kustomize's ConfigMap hash suffix and Helm's
     checksum annotation are set aside;
  3. the non-default renderings carry what the values ask for: TLS files from the
     Secret, exec probes that can speak TLS, the token file, the metrics port only on a
     ClusterIP Service, the NetworkPolicy peers, the Unix socket in a shared emptyDir.

Usage: helm_test.py REPO_ROOT HELM_BINARY
"""

import copy
import json
import subprocess
import sys
import unittest
from pathlib import Path

import yaml

if len(sys.argv) < 3:
    sys.exit("usage: helm_test.py REPO_ROOT HELM_BINARY")
ROOT = Path(sys.argv.pop(1)).resolve()
HELM = sys.argv.pop(1)
if not Path(HELM).is_file():
    # A failure, not a skip: the suite must not pass without having run helm.
    sys.exit(f"{HELM} is missing: run scripts/fetch_helm.sh (scripts/setup.sh does)")
CHART = ROOT / "deploy/helm/maskd"
HERE = ROOT / "tests/deploy"


def helm(*args):
    result = subprocess.run([HELM, *args], capture_output=True, text=True)
    if result.returncode != 0:
        raise AssertionError(f"helm {' '.join(args)} failed:\n{result.stdout}{result.stderr}")
    return result.stdout


def objects(text):
    """{(kind, name): object} of a multi-document YAML stream."""
    return {(d["kind"], d["metadata"]["name"]): d for d in yaml.safe_load_all(text) if d}


def render(*value_files):
    args = ["template", "maskd", str(CHART), "--namespace", "default"]
    for f in value_files:
        args += ["-f", str(HERE / f)]
    return objects(helm(*args))


def normalized(obj):
    """What both tools must agree on: everything but top-level labels and annotations,
    kustomize's ConfigMap hash suffix and Helm's config checksum."""
    obj = copy.deepcopy(obj)
    meta = obj["metadata"]
    meta.pop("labels", None)
    meta.pop("annotations", None)
    if obj["kind"] == "ConfigMap":
        meta["name"] = "maskd"
    if obj["kind"] == "Deployment":
        template = obj["spec"]["template"]
        template["metadata"].get("annotations", {}).pop("checksum/config", None)
        for container in template["spec"]["containers"]:
            for source in container.get("envFrom", []):
                if "configMapRef" in source:
                    source["configMapRef"]["name"] = "maskd"
    return obj


def container(objs, name="maskd"):
    (deployment,) = [o for (kind, _), o in objs.items() if kind == "Deployment"]
    (found,) = [c for c in deployment["spec"]["template"]["spec"]["containers"]
                if c["name"] == name]
    return deployment, found


class HelmLint(unittest.TestCase):

    def test_lint(self):
        for values in ([], ["values-secure.yaml"], ["values-sidecar.yaml"]):
            with self.subTest(values=values):
                args = ["lint", "--strict", str(CHART)]
                for f in values:
                    args += ["-f", str(HERE / f)]
                self.assertIn("0 chart(s) failed", helm(*args))

    def test_version(self):
        self.assertIn("v3.17.1", helm("version", "--short"))


class DefaultsMatchKustomize(unittest.TestCase):

    def test_same_objects(self):
        chart = {(kind, "maskd" if kind == "ConfigMap" else name): normalized(o)
                 for (kind, name), o in render().items()}
        kustomize_out = subprocess.run(["kubectl", "kustomize", str(ROOT / "deploy/k8s")],
                                       check=True, capture_output=True, text=True).stdout
        plain = {(kind, "maskd" if kind == "ConfigMap" else name): normalized(o)
                 for (kind, name), o in objects(kustomize_out).items()}
        self.assertEqual(sorted(chart), sorted(plain))
        for key in chart:
            with self.subTest(object=key):
                self.assertEqual(json.dumps(chart[key], sort_keys=True, indent=1),
                                 json.dumps(plain[key], sort_keys=True, indent=1))


class NonDefaultValues(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.secure = render("values-secure.yaml")
        cls.sidecar = render("values-sidecar.yaml")

    def test_tls_tokens_and_uploads(self):
        deployment, maskd = container(self.secure)
        for arg in ("--tls_cert=/etc/maskd/tls/tls.crt", "--tls_key=/etc/maskd/tls/tls.key",
                    "--tls_client_ca=/etc/maskd/tls/ca.crt",
                    "--auth_token_file=/etc/maskd/auth/tokens", "--allow_register_tokenizer"):
            self.assertIn(arg, maskd["args"])
        volumes = {v["name"]: v for v in deployment["spec"]["template"]["spec"]["volumes"]}
        self.assertEqual(volumes["tls"]["secret"]["secretName"], "maskd-tls")
        self.assertEqual(volumes["auth-tokens"]["secret"]["secretName"], "maskd-tokens")
        mounts = {m["name"]: m for m in maskd["volumeMounts"]}
        self.assertEqual(mounts["tls"]["mountPath"], "/etc/maskd/tls")
        self.assertTrue(mounts["tls"]["readOnly"])
        # maskd's private copies of the TLS files (SIGHUP reloads gRPC's certificate):
        # a writable in-memory /tmp under the read-only root.
        self.assertEqual(mounts["tls-copies"]["mountPath"], "/tmp")
        self.assertEqual(volumes["tls-copies"]["emptyDir"]["medium"], "Memory")
        self.assertEqual(deployment["spec"]["replicas"], 3)
        self.assertNotIn(("HorizontalPodAutoscaler", "maskd"), self.secure)

    def test_probes_speak_mutual_tls(self):
        _, maskd = container(self.secure)
        for kind in ("startupProbe", "livenessProbe", "readinessProbe"):
            probe = maskd[kind]
            self.assertNotIn("grpc", probe)
            command = probe["exec"]["command"]
            self.assertEqual(command[:2], ["/usr/local/bin/maskctl", "health"])
            for arg in ("--tls_ca=/etc/maskd/tls/ca.crt", "--tls_cert=/etc/maskd/tls/tls.crt",
                        "--tls_key=/etc/maskd/tls/tls.key", "--tls_server_name=maskd.default.svc"):
                self.assertIn(arg, command)

    def test_metrics_stay_inside_the_cluster(self):
        main = self.secure[("Service", "maskd")]["spec"]
        self.assertEqual(main["type"], "LoadBalancer")
        self.assertEqual([p["name"] for p in main["ports"]], ["grpc"])
        metrics = self.secure[("Service", "maskd-metrics")]["spec"]
        self.assertEqual(metrics["type"], "ClusterIP")
        self.assertEqual([p["name"] for p in metrics["ports"]], ["metrics"])
        monitor = self.secure[("ServiceMonitor", "maskd")]["spec"]
        self.assertEqual([e["port"] for e in monitor["endpoints"]], ["metrics"])

    def test_network_policy_peers(self):
        policy = self.secure[("NetworkPolicy", "maskd")]["spec"]
        rules = {r["ports"][0]["port"]: r["from"] for r in policy["ingress"]}
        self.assertEqual(rules["grpc"], [{"podSelector": {"matchLabels": {"app": "llm-worker"}}}])
        self.assertIn({"namespaceSelector": {"matchLabels": {
            "kubernetes.io/metadata.name": "monitoring"}}}, rules["metrics"])
        self.assertEqual(policy["policyTypes"], ["Ingress"])

    def test_sidecar_unix_socket(self):
        deployment, maskd = container(self.sidecar)
        self.assertIn("--listen=unix:///var/run/maskd/maskd.sock", maskd["args"])
        self.assertEqual([p["name"] for p in maskd["ports"]], ["metrics"])
        mounts = {m["name"]: m["mountPath"] for m in maskd["volumeMounts"]}
        self.assertEqual(mounts["maskd-socket"], "/var/run/maskd")
        volumes = {v["name"]: v for v in deployment["spec"]["template"]["spec"]["volumes"]}
        self.assertEqual(volumes["maskd-socket"], {"name": "maskd-socket", "emptyDir": {}})
        command = maskd["livenessProbe"]["exec"]["command"]
        self.assertIn("--server=unix:///var/run/maskd/maskd.sock", command)
        policy = self.sidecar[("NetworkPolicy", "maskd")]["spec"]
        self.assertEqual([r["ports"][0]["port"] for r in policy["ingress"]], ["metrics"])

    def test_sidecar_worker_container_gets_the_socket(self):
        deployment, _ = container(self.sidecar)
        pod = deployment["spec"]["template"]["spec"]
        containers = {c["name"]: c for c in pod["containers"]}
        self.assertEqual(sorted(containers), ["maskd", "worker"])
        mounts = {m["name"]: m["mountPath"] for m in containers["worker"]["volumeMounts"]}
        self.assertEqual(mounts, {"weights": "/models", "maskd-socket": "/var/run/maskd"})
        volumes = [v["name"] for v in pod["volumes"]]
        self.assertEqual(len(volumes), len(set(volumes)))
        self.assertIn("weights", volumes)
        self.assertIn("maskd-socket", volumes)


if __name__ == "__main__":
    unittest.main(verbosity=2)
