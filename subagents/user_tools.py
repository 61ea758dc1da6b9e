"""The user's own tools: any LangChain tool, named `package.module:attribute`.

An agent definition lists a user tool by where it lives. Only modules of the
top-level packages the operator lists in `DELEGATOR_TOOL_PACKAGES` are
imported, so a definition (or a caller of the server) cannot make the process
import anything else. The attribute is a `BaseTool`, or a function that
`langchain_core.tools.tool` turns into one.
"""

from __future__ import annotations

import functools

from langchain_core.tools import BaseTool, tool

from runtime.imports import ImportRefusedError, allowed_attribute

TOOL_PACKAGES_ENV = "DELEGATOR_TOOL_PACKAGES"
"""Top-level packages whose tools agent definitions may name."""


def is_user_tool(name: str) -> bool:
    """Whether a tool name is a user tool's `package.module:attribute`."""
    return ":" in name


@functools.cache
def user_tool(spec: str) -> BaseTool:
    """The tool `spec` names, loaded once.

    Raises:
        ImportRefusedError: `spec` is malformed, outside the allowed packages,
            cannot be imported, or is no tool.
    """
    found = allowed_attribute(spec, TOOL_PACKAGES_ENV, "tool")
    if isinstance(found, BaseTool):
        return found
    if callable(found) and found.__doc__:
        made: BaseTool = tool(found)
        return made
    raise ImportRefusedError(
        f"tool {spec!r} is no LangChain tool, nor a documented function"
    )
