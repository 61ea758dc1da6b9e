"""Code a user names by where it lives, imported only from packages the operator allows.

A gate or a tool is named `package.module:attribute`. Its top-level package
must be listed in the operator's environment variable for that kind of code
(`DELEGATOR_GATE_PACKAGES`, `DELEGATOR_TOOL_PACKAGES`): a definition or a
caller of the server cannot make the process import anything else.
"""

from __future__ import annotations

import importlib
import os
import re

_SPEC = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")


class ImportRefusedError(ValueError):
    """Code that cannot be loaded as named; the message says what and why."""


def allowed_attribute(spec: str, env_name: str, what: str) -> object:
    """The attribute `spec` names, imported if its package is one `env_name` lists.

    Raises:
        ImportRefusedError: `spec` is malformed, outside the allowed packages,
            or cannot be imported; the message names `what` it was to be.
    """
    if not _SPEC.fullmatch(spec):
        raise ImportRefusedError(f"{what} {spec!r} is not 'package.module:attribute'")
    module, _, attribute = spec.partition(":")
    allowed = {p.strip() for p in os.environ.get(env_name, "").split(",")}
    if module.split(".")[0] not in allowed - {""}:
        raise ImportRefusedError(
            f"{what} {spec!r} is not in a package {env_name} allows"
        )
    try:
        return getattr(importlib.import_module(module), attribute)
    except (ImportError, AttributeError) as err:
        raise ImportRefusedError(f"{what} {spec!r} cannot be loaded: {err}") from err
