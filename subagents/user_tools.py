"""The user's own tools: any LangChain tool, named `package.module:attribute`.

An agent definition lists a user tool by where it lives. Only modules of the
top-level packages the operator lists in `DELEGATOR_TOOL_PACKAGES` are
imported, so a definition (or a caller of the server) cannot make the process
import anything else. The attribute is a `BaseTool`, or a function that
`langchain_core.tools.tool` turns into one.
"""

from __future__ import annotations

import functools
import importlib
import os
import re

from langchain_core.tools import BaseTool, tool

TOOL_PACKAGES_ENV = "DELEGATOR_TOOL_PACKAGES"
"""Top-level packages whose tools agent definitions may name."""
_SPEC = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")


class UserToolError(ValueError):
    """A user tool that cannot be loaded; the message says why."""


def is_user_tool(name: str) -> bool:
    """Whether a tool name is a user tool's `package.module:attribute`."""
    return ":" in name


@functools.cache
def user_tool(spec: str) -> BaseTool:
    """The tool `spec` names, loaded once.

    Raises:
        UserToolError: `spec` is malformed, outside the allowed packages, cannot
            be imported, or is no tool.
    """
    if not _SPEC.fullmatch(spec):
        raise UserToolError(f"tool {spec!r} is not 'package.module:attribute'")
    module, _, attribute = spec.partition(":")
    allowed = {p.strip() for p in os.environ.get(TOOL_PACKAGES_ENV, "").split(",")}
    if module.split(".")[0] not in allowed - {""}:
        raise UserToolError(
            f"tool {spec!r} is not in a package {TOOL_PACKAGES_ENV} allows"
        )
    try:
        found = getattr(importlib.import_module(module), attribute)
    except (ImportError, AttributeError) as err:
        raise UserToolError(f"tool {spec!r} cannot be loaded: {err}") from err
    if isinstance(found, BaseTool):
        return found
    if callable(found) and found.__doc__:
        made: BaseTool = tool(found)
        return made
    raise UserToolError(
        f"tool {spec!r} is no LangChain tool, nor a documented function"
    )
