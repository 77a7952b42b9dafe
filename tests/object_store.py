"""Real storage servers on 127.0.0.1 for the tests of URLs: an S3 API server (moto's server, one
process for the whole session, with IAM and bucket policies enforced), a TCP proxy in front of it
that can cut or slow connections, and an HTTP file server with range requests."""

from __future__ import annotations

import contextlib
import functools
import http.server
import json
import os
import socket
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

# moto's server checks signatures and policies after this many requests: the admin user and
# its key are made with them, everything after is signed by that key.
_UNSIGNED_SETUP = 3
REGION = "us-east-1"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait_for(port: int, process: subprocess.Popen | None = None, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise RuntimeError(f"the server exited with {process.returncode}")
        with contextlib.suppress(OSError):
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        time.sleep(0.05)
    raise RuntimeError(f"nothing listens on 127.0.0.1:{port}")


class S3Server:
    """moto's S3 API server in a process of its own, with an admin key for the tests.

    enforce_policies: signatures, IAM and bucket policies are checked (moto does so only then;
    its signature check refuses listings whose prefix holds a '/', so the session's server
    runs without it and the tests of refusals start one of their own)."""

    def __init__(self, enforce_policies: bool = False):
        self.port = free_port()
        env = dict(os.environ)
        if enforce_policies:
            env["INITIAL_NO_AUTH_ACTION_COUNT"] = str(_UNSIGNED_SETUP)
        self.process = subprocess.Popen(
            [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(self.port)],
            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _wait_for(self.port, self.process)
        self.endpoint = f"http://127.0.0.1:{self.port}"
        iam = self._client("iam", "setup", "setup")
        iam.create_user(UserName="admin")
        key = iam.create_access_key(UserName="admin")["AccessKey"]
        iam.put_user_policy(UserName="admin", PolicyName="all", PolicyDocument=json.dumps(
            {"Version": "2012-10-17",
             "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}))
        self.key, self.secret = key["AccessKeyId"], key["SecretAccessKey"]

    def _client(self, service: str, key: str, secret: str, endpoint: str | None = None):
        import boto3

        return boto3.client(service, aws_access_key_id=key, aws_secret_access_key=secret,
                            region_name=REGION, endpoint_url=endpoint or self.endpoint)

    @functools.cached_property
    def s3(self):
        return self._client("s3", self.key, self.secret)

    def env(self, endpoint: str | None = None) -> dict[str, str]:
        """Environment variables that point the AWS tools (and so s3fs) at this server."""
        return {"AWS_ENDPOINT_URL": endpoint or self.endpoint, "AWS_ACCESS_KEY_ID": self.key,
                "AWS_SECRET_ACCESS_KEY": self.secret, "AWS_DEFAULT_REGION": REGION,
                "AWS_CONFIG_FILE": os.devnull, "AWS_SHARED_CREDENTIALS_FILE": os.devnull}

    def new_bucket(self) -> str:
        name = f"t-{uuid.uuid4().hex[:16]}"
        self.s3.create_bucket(Bucket=name)
        return name

    def put(self, bucket: str, key: str, data: bytes) -> None:
        self.s3.put_object(Bucket=bucket, Key=key, Body=data)

    def get(self, bucket: str, key: str) -> bytes:
        return self.s3.get_object(Bucket=bucket, Key=key)["Body"].read()

    def keys(self, bucket: str, prefix: str = "") -> list[str]:
        found = self.s3.list_objects_v2(Bucket=bucket, Prefix=prefix).get("Contents", [])
        return sorted(item["Key"] for item in found)

    def uploads(self, bucket: str) -> list[str]:
        """Keys of multipart uploads begun and neither completed nor aborted."""
        return [u["Key"] for u in self.s3.list_multipart_uploads(Bucket=bucket).get("Uploads", [])]

    def user(self, policy: dict | None = None) -> tuple[str, str]:
        """(key, secret) of a new user with the given IAM policy (None: no permission)."""
        iam = self._client("iam", self.key, self.secret)
        name = f"u-{uuid.uuid4().hex[:12]}"
        iam.create_user(UserName=name)
        if policy is not None:
            iam.put_user_policy(UserName=name, PolicyName="p", PolicyDocument=json.dumps(policy))
        key = iam.create_access_key(UserName=name)["AccessKey"]
        return key["AccessKeyId"], key["SecretAccessKey"]

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()


class FaultyProxy:
    """A TCP proxy to a server on 127.0.0.1. `cut_after` bytes of a response: the connection is
    dropped there (`cuts` times, then it passes; None: every time); `delay` seconds per chunk
    relayed up (to slow uploads down); `down`: refuse every connection."""

    def __init__(self, port: int):
        self.upstream = port
        self.cut_after: int | None = None
        self.cuts: int | None = None
        self.delay = 0.0
        self.down = False
        self.cut_count = 0
        self.on_request = None  # called with each request's first line before it is sent on
        self._server = socket.create_server(("127.0.0.1", 0))
        self.port = self._server.getsockname()[1]
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self._stop = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        self._server.settimeout(0.2)
        while not self._stop.is_set():
            try:
                client, _ = self._server.accept()
            except OSError:
                continue
            if self.down:
                client.close()
                continue
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        try:
            server = socket.create_connection(("127.0.0.1", self.upstream))
        except OSError:
            client.close()
            return
        threading.Thread(target=self._pipe, args=(client, server, False), daemon=True).start()
        self._pipe(server, client, True)

    def _pipe(self, source: socket.socket, target: socket.socket, response: bool) -> None:
        relayed = 0
        try:
            while chunk := source.recv(65536):
                if response and self.cut_after is not None and \
                        (self.cuts is None or self.cut_count < self.cuts) and \
                        relayed + len(chunk) > self.cut_after:
                    self.cut_count += 1
                    target.sendall(chunk[:max(0, self.cut_after - relayed)])
                    break
                if not response and self.on_request is not None and \
                        chunk.startswith((b"GET /", b"HEAD /", b"PUT /", b"POST /", b"DELETE /")):
                    self.on_request(chunk.split(b"\r\n", 1)[0].decode("latin-1"))
                if not response and self.delay:
                    time.sleep(self.delay)
                target.sendall(chunk)
                relayed += len(chunk)
        except OSError:
            pass
        finally:
            for sock in (source, target):
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
                sock.close()

    def close(self) -> None:
        self._stop.set()
        self._server.close()


class _RangeHandler(http.server.SimpleHTTPRequestHandler):
    """Static files with single byte-range requests (what fsspec's HTTP reads ask for)."""

    def log_message(self, *args) -> None:
        pass

    def send_head(self):
        spec = self.headers.get("Range")
        path = Path(self.translate_path(self.path))
        if not spec or not path.is_file():
            return super().send_head()
        data = path.read_bytes()
        start_text, _, end_text = spec.removeprefix("bytes=").partition("-")
        start = int(start_text or 0)
        end = min(int(end_text) if end_text else len(data) - 1, len(data) - 1)
        self.send_response(206)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Range", f"bytes {start}-{end}/{len(data)}")
        self.send_header("Content-Length", str(end - start + 1))
        self.send_header("Accept-Ranges", "bytes")
        self.end_headers()
        import io

        return io.BytesIO(data[start:end + 1])


@contextlib.contextmanager
def http_server(folder: Path):
    """Serve `folder` on 127.0.0.1; yields its base URL."""
    handler = functools.partial(_RangeHandler, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
