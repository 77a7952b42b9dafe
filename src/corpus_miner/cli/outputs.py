"""The output plan: every output of a command is declared with its parser and checked in main()
before the command does any work, so that a bad output costs nothing and writes nothing.

A command declares `outputs=(Output(...), ...)` and `extra_inputs=("phrases", ...)` through
`parser.set_defaults`. `check_outputs(args)` then refuses (OutputError / ParameterError, exit 2):
an output that is the same file as an input or lies inside an input folder (or is a folder
holding an input), two outputs naming the same file or both going to stdout, a closed stdout,
an unknown extension, a file output that is a folder, a folder output that is a file or a
folder corpus-miner did not write, and a destination whose folder is not writable.
"""

from __future__ import annotations

import argparse
import io
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from corpus_miner.cli.common import shard_plan, sharded
from corpus_miner.errors import OutputError, ParameterError
from corpus_miner.io.atomic import check_file_output, check_folder_output, is_own_output, os_reason
from corpus_miner.io.locations import base_name, canonical, display
from corpus_miner.io.overlap import STDIO, check_apart


@dataclass(frozen=True)
class Output:
    """dest: attribute of the parsed arguments (None: the command always writes stdout);
    flag: how the user names it; folder: a folder output (else a file), folder_if_no_suffix:
    a folder when the name has no suffix; replaceable: which existing folders it may replace
    (default: empty or written by corpus-miner); suffixes: allowed endings of a file (empty:
    any) and `hint`, the message when another is given; stdout: '-' means stdout;
    default_stdout: no value means stdout."""

    dest: str | None
    flag: str = ""
    folder: bool = False
    folder_if_no_suffix: bool = False
    replaceable: Callable[[Path], bool] | None = None
    suffixes: tuple[str, ...] = ()
    hint: str = ""
    stdout: bool = False
    default_stdout: bool = False
    shardable: bool = False  # a record output that may be a sharded folder (-o DIR/, --shards)


STDOUT = Output(None, "stdout", default_stdout=True)


def check_outputs(args: argparse.Namespace) -> None:
    """Refuse, before any work, every output the command could not write safely (module doc)."""
    outputs = getattr(args, "outputs", ())
    to_stdout: list[str] = []
    paths: list[tuple[Output, str]] = []
    for out in outputs:
        value = getattr(args, out.dest) if out.dest else None
        if value is None:
            if out.default_stdout:
                to_stdout.append(out.flag)
            continue
        value = os.fspath(value)
        if value == STDIO:
            if out.shardable and sharded(args):
                raise ParameterError(f"{out.flag} -: a sharded output is a folder; name one "
                                     "(e.g. -o clean/)")
            if not out.stdout:
                raise ParameterError(f"{out.flag} -: this output cannot go to stdout; name a "
                                     "file")
            to_stdout.append(out.flag)
            continue
        folder = out.folder or (out.folder_if_no_suffix and "." not in base_name(value))
        replaceable = out.replaceable or is_own_output
        if out.shardable and sharded(args):
            from corpus_miner.io.shards import is_shards_folder

            shard_plan(args)  # its parameters, before any work
            folder, replaceable = True, is_shards_folder
        if out.suffixes and not folder and not value.lower().endswith(out.suffixes):
            raise ParameterError(f"{out.flag} {display(value)}: {out.hint}")
        if folder:
            check_folder_output(value, replaceable)
        else:
            check_file_output(value)
        paths.append((out, value))
    if len(to_stdout) > 1:
        raise ParameterError(f"{' and '.join(to_stdout)} would both write to stdout; send one "
                             "to a file")
    _check_distinct(paths)
    if to_stdout:
        _check_stdout()
    check_apart(_inputs(args), [value for _, value in paths] + ([STDIO] if to_stdout else []))


def _inputs(args: argparse.Namespace) -> list[str]:
    found = [os.fspath(item) for item in getattr(args, "inputs", None) or ()]
    for dest in getattr(args, "extra_inputs", ()):
        value = getattr(args, dest, None)
        if isinstance(value, (list, tuple)):  # an option taking several paths
            found.extend(os.fspath(item) for item in value)
        elif value is not None:
            found.append(os.fspath(value))
    return found


def _check_distinct(paths: list[tuple[Output, str]]) -> None:
    seen: dict[object, Output] = {}
    for out, value in paths:
        keys: set[object] = {canonical(value)}
        try:
            info = os.stat(value)
            keys.add((info.st_dev, info.st_ino))
        except OSError:
            pass
        for key in keys:
            if key in seen and seen[key] is not out:
                raise ParameterError(f"{seen[key].flag} and {out.flag} name the same file "
                                     f"{value}; give each output its own name")
            seen[key] = out


def _check_stdout() -> None:
    if sys.stdout is None:  # the process was started with stdout closed
        raise OutputError("stdout: closed; redirect it or write to a file")
    try:
        os.fstat(sys.stdout.fileno())
    except (io.UnsupportedOperation, ValueError):  # no descriptor (captured by a test): fine
        return
    except OSError as exc:
        raise OutputError(f"stdout: closed ({os_reason(exc)}); redirect it or write to a "
                          "file") from None
