#!/usr/bin/env python3
"""The sidecar kustomize component injects maskd into a worker's pod correctly.

Renders deploy/k8s/examples/worker-with-sidecar (and a scratch kustomization with a
labelled and an unlabelled worker) with `kubectl kustomize` and checks what a pod needs
for maskd to serve its worker over a Unix socket:
  - the tokenizer fetcher runs before maskd, and maskd is a native sidecar
    (an init container with restartPolicy: Always), so the worker starts only after
    maskd's startupProbe passes;
  - maskd listens on the socket that its probes and the worker's mount use;
  - the worker's own containers, init containers and volumes are kept, each volume
    appears once, and Deployments without the label are untouched;
  - the flags ConfigMap is the generated one, with the worker's overrides applied.

usage: sidecar_component_test.py REPO_ROOT
"""
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

import yaml

ROOT = sys.argv.pop(1) if len(sys.argv) > 1 else os.getcwd()
COMPONENT = os.path.join(ROOT, "deploy/k8s/components/sidecar")
EXAMPLE = os.path.join(ROOT, "deploy/k8s/examples/worker-with-sidecar")


def render(directory):
    out = subprocess.run(["kubectl", "kustomize", directory], check=True,
                         capture_output=True, text=True).stdout
    return {(doc["kind"], doc["metadata"]["name"]): doc
            for doc in yaml.safe_load_all(out) if doc}


def by_name(items):
    names = [item["name"] for item in items]
    assert len(names) == len(set(names)), f"duplicate names: {names}"
    return {item["name"]: item for item in items}


def socket_of(args):
    listen = [a for a in args if a.startswith("--listen=")]
    assert len(listen) == 1, args
    assert listen[0].startswith("--listen=unix://"), listen
    return listen[0][len("--listen=unix://"):]


class ExampleWorker(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.objects = render(EXAMPLE)
        cls.pod = cls.objects[("Deployment", "llm-worker")]["spec"]["template"]["spec"]

    def test_fetcher_then_maskd_as_native_sidecar_then_workers_init(self):
        names = [c["name"] for c in self.pod["initContainers"]]
        self.assertIn("download-weights", names)  # the worker's own, kept
        self.assertLess(names.index("maskd-fetch-tokenizers"), names.index("maskd"))
        init = by_name(self.pod["initContainers"])
        self.assertEqual(init["maskd"].get("restartPolicy"), "Always")
        self.assertNotIn("restartPolicy", init["maskd-fetch-tokenizers"])
        self.assertEqual(init["maskd"]["image"], "registry.example.com/maskd:0.1.0")
        self.assertEqual(init["maskd-fetch-tokenizers"]["image"],
                         "registry.example.com/maskd-tokenizer-fetcher:0.1.0")

    def test_socket_is_shared_by_maskd_its_probes_and_the_worker(self):
        maskd = by_name(self.pod["initContainers"])["maskd"]
        socket = socket_of(maskd["args"])
        directory = os.path.dirname(socket)
        for probe in ("startupProbe", "livenessProbe"):
            command = maskd[probe]["exec"]["command"]
            self.assertEqual(command[:2], ["/usr/local/bin/maskctl", "health"])
            self.assertIn(f"--server=unix://{socket}", command)
        self.assertEqual(by_name(maskd["volumeMounts"])["maskd-socket"]["mountPath"], directory)
        worker = by_name(self.pod["containers"])["worker"]
        mounts = by_name(worker["volumeMounts"])
        self.assertEqual(mounts["maskd-socket"]["mountPath"], directory)
        self.assertIn("weights", mounts)  # the worker's own mount, kept
        self.assertNotIn("ports", worker)
        # No gRPC port: only /metrics is a port.
        self.assertEqual([p["name"] for p in maskd["ports"]], ["maskd-metrics"])

    def test_tokenizers_are_fetched_into_the_volume_maskd_reads(self):
        init = by_name(self.pod["initContainers"])
        fetched = by_name(init["maskd-fetch-tokenizers"]["volumeMounts"])["maskd-tokenizers"]
        read = by_name(init["maskd"]["volumeMounts"])["maskd-tokenizers"]
        self.assertEqual(fetched["mountPath"], read["mountPath"])
        self.assertTrue(read.get("readOnly"))
        volumes = by_name(self.pod["volumes"])
        for name in ("maskd-socket", "maskd-tokenizers", "maskd-tmp", "weights"):
            self.assertIn(name, volumes)

    def test_flags_come_from_the_generated_configmap_with_overrides(self):
        maskd = by_name(self.pod["initContainers"])["maskd"]
        ref = maskd["envFrom"][0]["configMapRef"]["name"]
        self.assertTrue(ref.startswith("maskd-sidecar-"), ref)  # content-hashed name
        data = self.objects[("ConfigMap", ref)]["data"]
        self.assertIn("qwen3=/var/lib/maskd/tokenizers/qwen3", data["MASKD_TOKENIZERS"])
        self.assertEqual(data["MASKD_FLAG_CACHE_BYTES"], "2147483648")
        self.assertEqual(data["MASKD_FLAG_THREADS"], "2")  # the component's default
        for arg in maskd["args"]:
            if "$(" in arg:
                variable = arg.split("$(")[1].rstrip(")")
                self.assertIn(variable, data, arg)

    def test_pod_keeps_the_fsgroup_that_lets_the_worker_use_the_socket(self):
        # The socket is 0660 (maskd's default --unix_socket_mode) in an emptyDir that
        # fsGroup gives group 10001: the worker, carrying fsGroup as a supplementary
        # group, may connect.
        self.assertEqual(self.pod["securityContext"]["fsGroup"], 10001)
        maskd = by_name(self.pod["initContainers"])["maskd"]
        self.assertEqual(maskd["securityContext"]["runAsGroup"], 10001)


class OnlyLabelledDeployments(unittest.TestCase):
    def test_unlabelled_deployment_is_untouched(self):
        with tempfile.TemporaryDirectory() as scratch:
            def write(name, text):
                with open(os.path.join(scratch, name), "w") as f:
                    f.write(textwrap.dedent(text))

            template = """\
                apiVersion: apps/v1
                kind: Deployment
                metadata:
                  name: {name}
                  labels: {labels}
                spec:
                  selector: {{matchLabels: {{app: {name}}}}}
                  template:
                    metadata: {{labels: {{app: {name}}}}}
                    spec:
                      containers: [{{name: main, image: example/{name}:1}}]
                """
            write("a.yaml", template.format(name="with-sidecar",
                                            labels='{"maskd.dev/sidecar": "true"}'))
            write("b.yaml", template.format(name="plain", labels="{app: plain}"))
            write("kustomization.yaml", f"""\
                apiVersion: kustomize.config.k8s.io/v1beta1
                kind: Kustomization
                resources: [a.yaml, b.yaml]
                components: [{os.path.relpath(COMPONENT, scratch)}]
                """)
            objects = render(scratch)
        injected = objects[("Deployment", "with-sidecar")]["spec"]["template"]["spec"]
        plain = objects[("Deployment", "plain")]["spec"]["template"]["spec"]
        self.assertEqual([c["name"] for c in injected["initContainers"]],
                         ["maskd-fetch-tokenizers", "maskd"])
        self.assertNotIn("initContainers", plain)
        self.assertNotIn("volumes", plain)
        self.assertEqual([c["name"] for c in plain["containers"]], ["main"])


if __name__ == "__main__":
    unittest.main()
