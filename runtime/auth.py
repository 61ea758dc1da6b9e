"""API keys for the LangGraph server: each key is one user, who sees only their own.

`DELEGATOR_API_KEYS` holds the keys, comma-separated. A request must send one
in the `x-api-key` header (as `langgraph-sdk` does with `api_key=`), or it
gets 401. Threads, runs and crons a user creates carry their identity, and a
user reads, runs and searches only those. The deployment's assistants (one per
graph) are read-only to every user; an assistant a user creates is theirs
alone. The store is namespaced per user: a user's namespace is prefixed with
their identity, so no key reads or writes another's items. With no keys
configured, auth is off: every request is let through, as one anonymous user,
unfiltered.
"""

from __future__ import annotations

import hashlib
import hmac
import os
from typing import Any

from langgraph_sdk import Auth

API_KEYS_ENV = "DELEGATOR_API_KEYS"
OWNER = "owner"
"""The metadata key that names who created a resource."""

auth = Auth()


def api_keys() -> tuple[str, ...]:
    """The configured keys; none means auth is off."""
    raw = os.environ.get(API_KEYS_ENV, "")
    return tuple(k.strip() for k in raw.split(",") if k.strip())


def identity_of(key: str) -> str:
    """A user's identity: a digest of their key, never the key itself."""
    return "user-" + hashlib.sha256(key.encode()).hexdigest()[:16]


@auth.authenticate
async def authenticate(headers: dict[bytes, bytes]) -> Auth.types.MinimalUserDict:
    """The user a request's `x-api-key` names; 401 without a valid one."""
    keys = api_keys()
    if not keys:
        return {"identity": "anonymous"}
    given = headers.get(b"x-api-key", b"").decode(errors="replace")
    for key in keys:
        if hmac.compare_digest(given.encode(), key.encode()):
            return {"identity": identity_of(key)}
    raise Auth.exceptions.HTTPException(status_code=401, detail="a valid x-api-key")


@auth.on
async def owner_only(ctx: Auth.types.AuthContext, value: Any) -> dict[str, str] | None:
    """Stamp what a user creates with their identity; show them only theirs."""
    if not api_keys():
        return None
    owner = {OWNER: ctx.user.identity}
    if isinstance(value, dict):
        if value.get("metadata") is None:
            value["metadata"] = {}
        if isinstance(value["metadata"], dict):
            value["metadata"].update(owner)  # in place: the server keeps this dict
    return owner


SYSTEM = {"created_by": "system"}
"""The metadata of the assistants the deployment creates, one per graph."""


@auth.on.assistants.create
async def own_assistant(
    ctx: Auth.types.AuthContext, value: Any
) -> dict[str, str] | None:
    """An assistant a user creates is theirs: stamped, never the deployment's."""
    if not api_keys():
        return None
    if not isinstance(value.get("metadata"), dict):
        value["metadata"] = {}
    # in place: the server keeps this dict
    value["metadata"].update({"created_by": "user", OWNER: ctx.user.identity})
    return {OWNER: ctx.user.identity}


async def visible_assistants(ctx: Auth.types.AuthContext, value: Any) -> Any:
    """A user sees the deployment's assistants and their own."""
    if not api_keys():
        return None
    return {"$or": [{OWNER: ctx.user.identity}, SYSTEM]}


async def changeable_assistants(ctx: Auth.types.AuthContext, value: Any) -> Any:
    """A user changes only their own assistants: the deployment's are read-only."""
    if not api_keys():
        return None
    return {OWNER: ctx.user.identity}


auth.on.assistants.read(visible_assistants)
auth.on.assistants.search(visible_assistants)
auth.on.assistants.update(changeable_assistants)
auth.on.assistants.delete(changeable_assistants)


@auth.on.store
async def own_namespace(ctx: Auth.types.AuthContext, value: Any) -> None:
    """Every store namespace a user names is inside their own."""
    if not api_keys():
        return
    namespace = tuple(value.get("namespace") or ())
    if namespace[:1] != (ctx.user.identity,):
        value["namespace"] = (ctx.user.identity, *namespace)
