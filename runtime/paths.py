"""Which files a caller may name: the folders an operator allows.

A server sets `DELEGATOR_KB_DIRS` and `DELEGATOR_MODEL_DIRS` (folders separated
by the OS path separator). A path is judged before anything looks at it, so a
refusal says nothing about whether the file exists.
"""

from __future__ import annotations

import os
from pathlib import Path


def allowed(path: str, env_name: str) -> bool:
    """Whether `path` lies in a folder `env_name` names (any path, if unset)."""
    folders = [d for d in os.environ.get(env_name, "").split(os.pathsep) if d]
    if not folders:
        return True
    target = Path(path).expanduser().resolve()
    return any(target.is_relative_to(Path(d).expanduser().resolve()) for d in folders)
