"""Exceptions raised by the library; the CLI turns them into one-line messages (exit code 2)."""


class CorpusMinerError(Exception):
    """Base class of every error a user can cause and fix (bad input, bad parameters)."""


class InputError(CorpusMinerError):
    """An input file is missing, unreadable, malformed or lacks a required field."""


class OutputError(CorpusMinerError):
    """An output cannot be written: it is an input, its folder is not writable, the disk is full,
    stdout is closed..."""


class ParameterError(CorpusMinerError, ValueError):
    """A parameter is outside its valid range."""


class FormatError(CorpusMinerError):
    """A saved artefact (TokenCorpus, Bloom index, phrase list) is corrupt, truncated or foreign."""


class NotFittedError(CorpusMinerError, RuntimeError, AttributeError):
    """An estimator was used before `fit`. Also an AttributeError, so `hasattr(model, "phrases_")`
    is simply False before fit."""


class MissingExtraError(CorpusMinerError, ImportError):
    """An optional dependency is not installed; the message names the extra to install."""
