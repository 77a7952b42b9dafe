"""`--engine ray` for `phrases`: the inputs read by Ray tasks with corpus-miner's reader, mined by
RayBloomSpan, and the phrase file written by the driver with the local writer (byte-identical
to the local engine's). `--address` joins a running cluster; without it a local one is started
with the cores of this machine."""

from __future__ import annotations

import argparse

from corpus_miner.errors import ParameterError


def _connect(args: argparse.Namespace):
    import os

    from corpus_miner._extras import require

    # a failed task fails every task downstream of it; the command prints the first failure in
    # one line, and Ray must not print the others' tracebacks when their results are dropped
    os.environ.setdefault("RAY_IGNORE_UNHANDLED_ERRORS", "1")
    ray = require("ray", "ray", "--engine ray")
    if not ray.is_initialized():
        ray.init(address=args.address, include_dashboard=False, log_to_driver=False,
                 configure_logging=False)
    return ray


def run_phrases(args: argparse.Namespace, write_outputs) -> int:
    """write_outputs: the phrases command's writer (passed in: cli/phrases imports this module)."""
    from corpus_miner.io.storage import current_storage_options
    from corpus_miner.phrases.params import PhraseParams

    if args.filter_bytes is not None:
        raise ParameterError("--filter-bytes is not available with --engine ray; run it with "
                             "the local engine")
    from corpus_miner.cli.engine import refuse_whole_lines

    refuse_whole_lines(args, note=False)
    PhraseParams(sigma=args.sigma, min_length=args.min_length)
    _connect(args)
    from corpus_miner.ray import RayBloomSpan
    from corpus_miner.ray.documents import input_blocks, one_line_errors

    with one_line_errors():
        blocks = input_blocks(args.inputs, args.text_field, args.id_field, args.skip_bad,
                              current_storage_options())
        miner = RayBloomSpan(sigma=args.sigma, min_length=args.min_length).fit(blocks)
    write_outputs(args, miner.phrases_, miner.stats_)
    return 0
