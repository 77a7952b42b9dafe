"""Storage backends for URLs: which fsspec filesystem serves a URL, with which options, and how
its errors read as one line that never shows a secret.

Credentials come from where each backend's own tools look (environment variables, config files,
instance roles); `using_storage_options` adds options (endpoint, region, anonymous access, keys)
for the URLs read or written inside it: either one table for every protocol, or a table per
protocol (`{"s3": {...}, "gs": {...}}`). A backend that is not installed is a MissingExtraError
naming the extra (`pip install "corpus-miner[s3]"`).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import Iterator
from typing import Any

from corpus_miner.errors import CorpusMinerError, MissingExtraError, ParameterError
from corpus_miner.io.locations import BACKENDS, PROTOCOLS, display, protocol_of

_OPTIONS: dict[str, Any] = {}  # the storage options in force (using_storage_options)
_SECRET_KEY = re.compile(r"(secret|token|password|passwd|key|credential|sas|signature|auth)",
                         re.IGNORECASE)
_SECRET_VARIABLES = ("AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AZURE_STORAGE_KEY",
                     "AZURE_STORAGE_ACCOUNT_KEY", "AZURE_STORAGE_SAS_TOKEN",
                     "AZURE_STORAGE_CONNECTION_STRING", "AZURE_CLIENT_SECRET", "HF_TOKEN",
                     "HUGGING_FACE_HUB_TOKEN", "GOOGLE_OAUTH_ACCESS_TOKEN")
_PROTOCOL_TABLES = set(BACKENDS) | {"memory", "file"}


def parse_storage_options(text: str) -> dict:
    """The --storage-options value: a JSON object, or @FILE holding one."""
    source = "--storage-options"
    if text.startswith("@"):
        source = text[1:]
        try:
            with open(source, encoding="utf-8") as fh:
                text = fh.read()
        except OSError as exc:
            raise ParameterError(f"--storage-options {source}: cannot read "
                                 f"({(exc.strerror or str(exc)).lower()})") from None
    try:
        options = json.loads(text)
    except ValueError as exc:  # the position only: the text may hold a secret
        raise ParameterError(f"{source}: not valid JSON ({getattr(exc, 'msg', 'syntax')} at "
                             f"character {getattr(exc, 'pos', '?')}); give a JSON object such "
                             "as '{\"endpoint_url\": \"http://127.0.0.1:9000\"}'") from None
    if not isinstance(options, dict):
        raise ParameterError(f"{source}: must be a JSON object, got {type(options).__name__}")
    return options


@contextlib.contextmanager
def using_storage_options(options: dict | None) -> Iterator[None]:
    """Storage options for every URL opened inside the block (blocks nest; the inner wins)."""
    global _OPTIONS
    previous = _OPTIONS
    _OPTIONS = dict(options or {})
    try:
        yield
    finally:
        _OPTIONS = previous


def current_storage_options() -> dict:
    """The options in force (to ship them to Spark's executors)."""
    return dict(_OPTIONS)


def options_for(protocol: str, options: dict | None = None) -> dict:
    """The options that apply to `protocol`: its own table when the options are per protocol,
    else all of them."""
    options = _OPTIONS if options is None else options
    if options and all(key in _PROTOCOL_TABLES and isinstance(value, dict)
                       for key, value in options.items()):
        return dict(options.get(protocol, {}))
    return dict(options)


def filesystem(url: str):
    """(fsspec filesystem, path inside it) for a URL, with the options in force."""
    protocol = protocol_of(url)
    if protocol is None:
        raise ValueError(f"not a URL: {url}")
    try:
        import fsspec
        from fsspec.core import split_protocol
    except ImportError:  # a core dependency; only a broken installation lacks it
        raise MissingExtraError("reading URLs needs fsspec: pip install fsspec") from None
    options = options_for(protocol)
    try:
        cls = fsspec.get_filesystem_class(protocol)
        fs = cls(**options)
    except ImportError:
        raise missing_backend(url) from None
    except (TypeError, ValueError) as exc:
        raise ParameterError(f"{display(url)}: the storage options do not suit {protocol}:// "
                             f"({scrub(one_line(exc))})") from None
    if isinstance(getattr(fs, "retries", None), int):
        # s3fs and gcsfs retry each request themselves, under the SDK's own retries and over
        # ours (io/remote.py reopens a stream where it broke): one layer less keeps the
        # number of attempts, and the wait before an error, bounded
        fs.retries = 1
    path = fs._strip_protocol(url) if protocol not in ("http", "https") else url
    if protocol == "hf":  # fsspec's hf names repositories without the scheme
        path = split_protocol(url)[1]
    return fs, path


def missing_backend(url: str) -> MissingExtraError:
    protocol = protocol_of(url) or ""
    package, extra = BACKENDS.get(protocol, (protocol, protocol))
    return MissingExtraError(f"{display(url)}: {protocol}:// needs {package}, which is not "
                             f"installed: pip install \"corpus-miner[{extra}]\"")


def secrets() -> list[str]:
    """Every secret value in the options and the usual environment variables (to scrub from
    messages), longest first."""
    found: set[str] = set()

    def walk(value, secret: bool) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                walk(item, secret or bool(_SECRET_KEY.search(str(key))))
        elif isinstance(value, (list, tuple)):
            for item in value:
                walk(item, secret)
        elif secret and isinstance(value, str) and len(value) >= 4:
            found.add(value)

    walk(_OPTIONS, False)
    found.update(v for name in _SECRET_VARIABLES if len(v := os.environ.get(name, "")) >= 4)
    return sorted(found, key=len, reverse=True)


def scrub(text: str) -> str:
    """`text` with every secret value replaced by ***."""
    for secret in secrets():
        text = text.replace(secret, "***")
    return text


def one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


def _reason(exc: BaseException) -> str:
    """What went wrong, in a few words and what to do, for the errors users meet."""
    name = type(exc).__name__
    text = one_line(exc)
    lowered = text.lower()
    if isinstance(exc, ImportError):
        return "a storage backend is missing"
    if "NoCredentials" in name or "credentials" in lowered and "not found" in lowered \
            or "unable to locate credentials" in lowered:
        return ("no credentials found; set them in the environment or the tool's config "
                "files, or pass --storage-options '{\"anon\": true}' for public data")
    if "expired" in lowered or "ExpiredToken" in text:
        return "the credentials have expired; renew them (e.g. log in again) and run again"
    if any(word in text for word in ("InvalidAccessKeyId", "SignatureDoesNotMatch",
                                     "AuthenticationFailed", "invalid_grant",
                                     "Access Key Id you provided does not exist",
                                     "signature we calculated does not match")):
        return "the credentials were rejected; check the key and secret"
    if isinstance(exc, PermissionError) or "AccessDenied" in text or "Forbidden" in text \
            or "403" in text.split(":")[0]:
        return "access denied; check the credentials and the bucket's policy"
    if isinstance(exc, FileNotFoundError):
        if any(word in text for word in ("specified bucket does not exist", "NoSuchBucket",
                                         "ContainerNotFound", "bucket does not exist")):
            return "no such bucket"
        return "no such object"
    return (exc.strerror or text).lower() if isinstance(exc, OSError) and exc.strerror \
        else scrub(text)


def describe(exc: BaseException) -> str:
    """The one-line reason for an error of a storage backend, secrets scrubbed."""
    return scrub(_reason(exc))


def storage_error(kind: type[CorpusMinerError], url: str, exc: BaseException,
                  doing: str = "") -> CorpusMinerError:
    """`kind`("URL: [doing: ]reason") for an error of a storage backend."""
    if isinstance(exc, CorpusMinerError):
        return exc
    if isinstance(exc, ImportError):
        return missing_backend(url)
    return kind(f"{display(url)}: {doing + ': ' if doing else ''}{describe(exc)}")


def known_protocols() -> list[str]:
    return sorted(set(PROTOCOLS) - {"memory"})
