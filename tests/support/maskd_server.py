"""Runs the real maskd binary on a free loopback port for Python tests.

The binary comes from argv (`--maskd PATH`, set by CTest) or $MASKD_BINARY; the
tokenizers from data_paths.tokenizer_root().
"""
import os
import signal
import subprocess
import sys
import threading
import time

from data_paths import tokenizer_dir


class MaskdServer:
    """maskd with the given preloaded tokenizers; `address` is its gRPC host:port."""

    def __init__(self, binary, tokenizers=("llama3",), timeout_s=120, extra_args=()):
        args = [
            binary, "--listen=127.0.0.1:0", "--metrics_listen=127.0.0.1:0",
            *(f"--tokenizer={name}={tokenizer_dir(name)}" for name in tokenizers),
            *extra_args
        ]
        self._process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                         text=True, errors="replace")
        self._log = []
        self._ready = threading.Event()
        self.address = None
        self.metrics_url = None
        self._reader = threading.Thread(target=self._read_log, daemon=True)
        self._reader.start()
        deadline = time.monotonic() + timeout_s
        while not self._ready.wait(0.1) or self.metrics_url is None:
            if self._process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError("maskd did not report its gRPC address; log:\n" + self.log())

    def _read_log(self):
        marker = "maskd: grpc listening on "
        metrics_marker = "maskd: metrics on "
        for line in self._process.stderr:
            self._log.append(line)
            if metrics_marker in line and self.metrics_url is None:
                self.metrics_url = line.split(metrics_marker, 1)[1].split()[0]
            if marker in line and self.address is None:
                # "127.0.0.1:PORT (mutual TLS) ..." -> the address alone.
                self.address = line.split(marker, 1)[1].split()[0]
                self._ready.set()

    def log(self):
        return "".join(self._log)

    def stop(self):
        """SIGTERM, then the exit code; a server that died on its own has its log printed."""
        if self._process.poll() is not None:
            self._reader.join(5)
            print(f"maskd exited early ({self._process.returncode}); log tail:\n"
                  f"{self.log()[-4000:]}", file=sys.stderr)
        if self._process.poll() is None:
            self._process.send_signal(signal.SIGTERM)
            try:
                self._process.wait(30)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
        self._reader.join(5)
        self._process.stderr.close()
        return self._process.returncode


def binary_from_argv(argv):
    """Pops `--maskd PATH` from argv (before unittest parses it); else $MASKD_BINARY."""
    if "--maskd" in argv:
        i = argv.index("--maskd")
        path = argv[i + 1]
        del argv[i:i + 2]
        return path
    path = os.environ.get("MASKD_BINARY")
    if not path:
        raise SystemExit("pass --maskd PATH or set MASKD_BINARY")
    return path
