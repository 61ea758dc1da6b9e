"""Exit codes, and the one line each kind of failure ends with."""

from __future__ import annotations

import sqlite3

import openai
import psycopg

from cli.outputs import OutputPathError
from cli.runs import ThreadError
from cli.serve import ServeError
from evals.datasets import DatasetError
from runtime.context import ConfigError
from runtime.corpus import CorpusError
from runtime.imports import ImportRefusedError
from runtime.kb import KnowledgeBaseError
from runtime.local_engine import LocalModelError
from runtime.mcp import McpServerError
from runtime.models import ModelSpecError, ModelTimeoutError
from runtime.paths import InputFileError
from runtime.reliability import describe
from runtime.structured import ModelEndpointError, ModelOutputError
from runtime.thread_lock import ThreadBusyError
from state.handoff import DecisionError
from state.question import QuestionError
from subagents.registry import DefinitionError
from subagents.services import ToolUnavailableError

OK = 0
INTERNAL = 1
"""A failure nobody foresaw; `--debug` shows its traceback."""
BAD_INPUT = 2
"""The question, a setting, a model spec, a definition file, an output path."""
INCOMPLETE = 3
"""The run finished, but every task failed or the model endpoint was lost."""
DATA = 4
"""A file could not be read or written: the knowledge base, a corpus, an output."""
MODEL = 5
"""The lead model failed: its output stayed invalid, it timed out, or its
endpoint failed."""
ESCALATED = 6
"""The run waits for a person's decision; its thread resumes with one."""
INTERRUPTED = 130
"""Stopped by Ctrl-C."""
TERMINATED = 143
"""Stopped by SIGTERM; like Ctrl-C, the thread resumes where it stopped."""


class ResultFileError(ValueError):
    """A file `delegator show` cannot read as a run's result."""


def _at(error: BaseException) -> str:
    """Where a model endpoint's failure happened: " (at URL)", or nothing.

    Only scheme, host, port and path: no credentials or query.
    """
    if not isinstance(error, openai.APIError) or error.request is None:
        return ""
    url = error.request.url
    port = f":{url.port}" if url.port else ""
    return f" (at {url.scheme}://{url.host}{port}{url.path})"


FAILURES: tuple[tuple[tuple[type[BaseException], ...], int, str], ...] = (
    (
        (
            QuestionError,
            ConfigError,
            ModelSpecError,
            LocalModelError,
            DefinitionError,
            OutputPathError,
            ResultFileError,
            ThreadError,
            DecisionError,
            ServeError,
            DatasetError,
            McpServerError,
            ToolUnavailableError,
            ThreadBusyError,
            ImportRefusedError,
        ),
        BAD_INPUT,
        "",
    ),
    # before OSError: a lead's deadline is a TimeoutError, which is an OSError
    ((ModelOutputError, ModelTimeoutError, ModelEndpointError), MODEL, ""),
    ((openai.APIError,), MODEL, "the model endpoint failed: "),
    ((KnowledgeBaseError, CorpusError, InputFileError, OSError), DATA, ""),
    ((sqlite3.Error, psycopg.Error), DATA, "the checkpoint store failed: "),
)
"""Each kind of failure (the first that matches): its exit code and line's start."""


def failure(error: BaseException) -> tuple[int, str]:
    """The exit code of a failure and its one line, in whole words.

    A model endpoint's failure names the address it failed at.
    """
    for kinds, code, prefix in FAILURES:
        if isinstance(error, kinds):
            return code, prefix + describe(error) + _at(error)
    return INTERNAL, f"internal error ({type(error).__name__}: {describe(error)})"
