"""Where inputs and outputs live, as text: URLs (`s3://`, `gs://`, `az://`, `hf://`,
`http(s)://`, `file://`, `memory://`), glob patterns, and how to compare and show them.

Pure string handling (no fsspec import), so the command line can tell a URL from a path, check
outputs against inputs and print a location without loading a storage backend. Reading and
writing through a backend is io/remote.py.
"""

from __future__ import annotations

import fnmatch
import os
import posixpath
import re
import stat
from urllib.parse import urlsplit, urlunsplit

from corpus_miner.errors import ParameterError

_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")
_GLOB = re.compile(r"[*?\[]")

# The protocols accepted, under the name fsspec knows them by (aliases as users write them).
PROTOCOLS = {"s3": "s3", "s3a": "s3", "gs": "gs", "gcs": "gs", "az": "az", "abfs": "abfs",
             "abfss": "abfs", "hf": "hf", "http": "http", "https": "https", "memory": "memory",
             "file": "file"}
# The package behind each protocol and the extra that installs it (fsspec itself is a dependency).
BACKENDS = {"s3": ("s3fs", "s3"), "gs": ("gcsfs", "gcs"), "az": ("adlfs", "azure"),
            "abfs": ("adlfs", "azure"), "hf": ("huggingface_hub", "hf"),
            "http": ("aiohttp", "http"), "https": ("aiohttp", "http")}
READ_ONLY = ("http", "https")
# Query parameters of presigned and SAS URLs that are credentials: never shown.
_SECRET_WORDS = re.compile(r"(sig|signature|token|key|secret|credential|password|sas|auth)",
                           re.IGNORECASE)


def protocol_of(text) -> str | None:
    """The canonical protocol of a URL ("s3" for s3a://...), None for a plain path."""
    found = _SCHEME.match(os.fspath(text)) if isinstance(text, (str, os.PathLike)) else None
    if found is None:
        return None
    scheme = found.group(1).lower()
    if scheme not in PROTOCOLS:
        raise ParameterError(f"{display(text)}: unknown protocol {scheme}://; use one of "
                             f"{', '.join(sorted(set(PROTOCOLS) - {'memory'}))}")
    return PROTOCOLS[scheme]


def is_remote(text) -> bool:
    """True for a URL read or written through a storage backend (not a file:// URL, not a
    plain path, not '-')."""
    return protocol_of(text) not in (None, "file")


def local_path(text) -> str:
    """A file:// URL as the local path it names; anything else unchanged."""
    text = os.fspath(text)
    if protocol_of(text) == "file":
        return urlsplit(text).path or "/"
    return text


def has_glob(text) -> bool:
    """True when the text holds a glob character (*, ? or [)."""
    return bool(_GLOB.search(_without_query(os.fspath(text))))


def is_folder_url(text) -> bool:
    """A URL that names a folder (prefix): it ends with '/'."""
    return is_remote(text) and _without_query(os.fspath(text)).endswith("/")


def _without_query(text: str) -> str:
    return text.split("?", 1)[0] if protocol_of(text) in READ_ONLY else text


def canonical(text) -> str:
    """The URL with its canonical protocol, no '.'/'..' steps, no doubled or trailing slash:
    two spellings of one object compare equal (for outputs that would overwrite inputs)."""
    text = os.fspath(text)
    protocol = protocol_of(text)
    if protocol is None or protocol == "file":
        return os.path.abspath(local_path(text))
    rest = text.split("://", 1)[1]
    query = ""
    if protocol in READ_ONLY and "?" in rest:
        rest, query = rest.split("?", 1)
        query = "?" + query
    path = posixpath.normpath("/" + rest).lstrip("/") if rest else ""
    if protocol not in READ_ONLY:
        head, _, tail = path.partition("/")
        path = head.lower() + ("/" + tail if tail else "")  # bucket names are lower case
    return f"{protocol}://{path}{query}"


def inside(child: str, folder: str) -> bool:
    """Whether canonical URL `child` is `folder` or lies under it."""
    return child == folder or child.startswith(folder.rstrip("/") + "/")


def join(folder, name: str) -> str:
    """`name` inside the folder URL (or path) `folder`."""
    folder = os.fspath(folder)
    if is_remote(folder):
        return folder.rstrip("/") + "/" + name
    return os.path.join(local_path(folder), name)


def base_name(text) -> str:
    """The last part of a URL or path ('' for a bucket or a folder URL)."""
    return _without_query(os.fspath(text)).rstrip("/").rsplit("/", 1)[-1] \
        if is_remote(text) else os.path.basename(local_path(text))


def display(text) -> str:
    """The location as shown in messages and outputs: a URL without a password in it, without
    the values of credential-like query parameters (presigned and SAS URLs)."""
    text = os.fspath(text)
    if not _SCHEME.match(text):
        return text
    try:
        parts = urlsplit(text)
    except ValueError:
        return _SCHEME.match(text).group(0) + "..."  # type: ignore[union-attr]
    netloc = parts.netloc
    if "@" not in netloc and not _SECRET_WORDS.search(parts.query):
        return text
    if "@" in netloc:
        user, _, host = netloc.rpartition("@")
        netloc = user.split(":", 1)[0] + ":***@" + host if ":" in user else "***@" + host
    query = "&".join(
        (name + "=***") if _SECRET_WORDS.search(name) else item
        for item in parts.query.split("&") if item
        for name in [item.split("=", 1)[0]])
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def url_conflict(output: str, inputs: list[str]) -> str | None:
    """Why writing the URL `output` would change one of the input URLs (the same object, an
    object inside an input prefix, a folder output holding an input, an output a glob input
    matches), or None."""
    out = canonical(output)
    for item in inputs:
        given = canonical(item)
        if has_glob(given):
            fixed = _GLOB.split(given, 1)[0].rsplit("/", 1)[0]
            if fnmatch.fnmatchcase(out, given) or inside(fixed, out):
                return (f"{display(output)}: the input pattern {display(item)} takes it in; "
                        "writing it would change the input; name an output it does not match")
            continue
        if out == given:
            return (f"{display(output)}: is the same object as the input {display(item)}; "
                    "writing it would destroy the input; name another output")
        if inside(out, given):
            return (f"{display(output)}: is inside the input prefix {display(item)}; writing "
                    "there would change the input; name an output outside it")
        if inside(given, out):
            return (f"{display(output)}: the output prefix holds the input {display(item)} and "
                    "would replace it; name another output prefix")
    return None


_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KMGT]?i?B?)?\s*$", re.IGNORECASE)
_UNITS = {"": 1, "B": 1, "K": 1e3, "KB": 1e3, "M": 1e6, "MB": 1e6, "G": 1e9, "GB": 1e9,
          "T": 1e12, "TB": 1e12, "KIB": 2 ** 10, "MIB": 2 ** 20, "GIB": 2 ** 30, "TIB": 2 ** 40,
          "KI": 2 ** 10, "MI": 2 ** 20, "GI": 2 ** 30, "TI": 2 ** 40}


def parse_size(text: str) -> int:
    """Bytes from '512MB', '1.5GiB', '2e6' or '4096'; ParameterError otherwise."""
    found = _SIZE.match(text)
    try:
        if found is None:
            value = float(text)
            unit = ""
        else:
            value, unit = float(found.group(1)), (found.group(2) or "").upper()
        size = int(value * _UNITS[unit])
    except (KeyError, ValueError):
        size = 0
    if size < 1:
        raise ParameterError(f"{text!r}: not a size; write e.g. 512MB, 1GiB or 100000000")
    return size


def rereadable(inputs) -> bool:
    """Whether every input can be read a second time: files and folders, not stdin ('-') or a
    pipe such as `<(zcat ...)`, which give their bytes once."""
    for item in inputs:
        if str(item) == "-":
            return False
        if is_remote(item):
            continue  # objects can be read again (and are checked to be the same)
        try:
            mode = os.stat(item).st_mode
        except OSError:
            continue  # missing: the reader names it
        if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
            return False
    return True
