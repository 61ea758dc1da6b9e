"""Chat models per role: 'openai:<model>', 'local:<path.gguf>', 'extractive', 'auto'.

`openai:<model>` talks to any OpenAI-compatible endpoint. Each role (lead,
subagent) may have its own endpoint and key (`DELEGATOR_<ROLE>_BASE_URL`,
`DELEGATOR_<ROLE>_API_KEY`, else `OPENAI_BASE_URL` and `OPENAI_API_KEY`), its
own answer length, a request timeout, and retries of transient errors only
(connection errors, timeouts, rate limits, 5xx: the OpenAI client's rule).
Every model shares langchain-core's rate limiter per spec. `local:<path.gguf>`
runs llama.cpp in this process (see `runtime.local_engine`) and calls it the
same way.
"""

from __future__ import annotations

import asyncio
import functools
import os
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, Literal

from langchain_core.language_models import BaseChatModel
from langchain_core.rate_limiters import InMemoryRateLimiter

EXTRACTIVE = "extractive"
DEFAULT_OPENAI_MODEL = "gpt-4o-mini"
TRANSIENT_RETRIES = 2

Role = Literal["lead", "subagent"]
Protocol = Literal["tools", "json"]


@dataclass(frozen=True)
class ModelSettings:
    """What a role's model is and how it may be called.

    Attributes:
        spec: The model spec ('openai:<model>', 'extractive', 'auto').
        role: Whose model it is; picks the role's endpoint and key.
        protocol: How a subagent on this model acts: 'tools' or 'json'.
        max_tokens: The longest answer a call may produce.
        timeout_s: Seconds one request may take.
        base_url: The role's OpenAI-compatible endpoint, None for OpenAI's.
        api_key: The role's key.
    """

    spec: str
    role: Role = "lead"
    protocol: Protocol = "tools"
    max_tokens: int = 1024
    timeout_s: float = 120.0
    base_url: str | None = None
    api_key: str | None = field(default=None, repr=False)

    @classmethod
    def for_role(cls, role: Role, spec: str, **limits: Any) -> ModelSettings:
        """A role's settings, with its endpoint and key from the environment."""
        return cls(
            spec=spec,
            role=role,
            base_url=role_env(role, "BASE_URL"),
            api_key=role_env(role, "API_KEY"),
            **limits,
        )


ModelFactory = Callable[[str, ModelSettings], BaseChatModel]


class ModelSpecError(ValueError):
    """A model spec that names no known provider."""


class MissingCredentialsError(ModelSpecError):
    """A remote model with neither a key nor an endpoint to call."""


class ModelTimeoutError(TimeoutError):
    """A model that did not answer in the time its step allows."""


def role_env(role: Role, name: str) -> str | None:
    """`DELEGATOR_<ROLE>_<NAME>`, else `OPENAI_<NAME>`, else None."""
    value = os.environ.get(f"DELEGATOR_{role.upper()}_{name}")
    return value or os.environ.get(f"OPENAI_{name}") or None


def requests_per_second() -> float:
    """The rate limit of each model, from `DELEGATOR_REQUESTS_PER_SECOND` (4)."""
    raw = os.environ.get("DELEGATOR_REQUESTS_PER_SECOND", "4")
    try:
        rate = float(raw)
    except ValueError:
        rate = 0.0
    if not 0 < rate < float("inf"):
        raise ModelSpecError(
            f"DELEGATOR_REQUESTS_PER_SECOND={raw!r} is not a positive number"
        )
    return rate


def _openai(name: str, settings: ModelSettings) -> BaseChatModel:
    from langchain_openai import ChatOpenAI

    from runtime.replies import bounded_client

    base_url = settings.base_url
    api_key = settings.api_key or ("unused" if base_url else None)
    rps = requests_per_second()
    return ChatOpenAI(
        model=name,
        base_url=base_url,
        api_key=api_key,
        temperature=0,
        max_tokens=settings.max_tokens,
        timeout=settings.timeout_s,
        max_retries=TRANSIENT_RETRIES,
        rate_limiter=InMemoryRateLimiter(requests_per_second=rps, max_bucket_size=4),
        http_async_client=bounded_client(settings.timeout_s),
    )


def _local(path: str, settings: ModelSettings) -> BaseChatModel:
    from langchain_openai import ChatOpenAI

    from runtime.local_engine import local_base_url
    from runtime.replies import bounded_client

    return ChatOpenAI(
        model="local",
        base_url=local_base_url(path),
        api_key="local",
        temperature=0,
        max_tokens=settings.max_tokens,
        timeout=settings.timeout_s,
        max_retries=TRANSIENT_RETRIES,
        http_async_client=bounded_client(settings.timeout_s),
    )


_PROVIDERS: dict[str, ModelFactory] = {"openai": _openai, "local": _local}
_loading = threading.Lock()


def register_provider(name: str, factory: ModelFactory) -> None:
    """Make `<name>:<model>` specs build models with `factory`."""
    _PROVIDERS[name] = factory
    _load.cache_clear()


def resolve_spec(spec: str) -> str:
    """Turn 'auto' into a concrete spec; check the spec names a provider."""
    spec = spec.strip() or "auto"
    if spec == "auto":
        if os.environ.get("OPENAI_API_KEY") or os.environ.get("OPENAI_BASE_URL"):
            return "openai:" + os.environ.get("OPENAI_MODEL", DEFAULT_OPENAI_MODEL)
        return EXTRACTIVE
    if spec == EXTRACTIVE:
        return spec
    provider, sep, name = spec.partition(":")
    if not sep or not name or provider not in _PROVIDERS:
        known = ", ".join(f"'{p}:<model>'" for p in _PROVIDERS)
        raise ModelSpecError(
            f"unknown model spec {spec!r}: use 'auto', 'extractive' or {known}"
        )
    if provider == "local":
        from runtime.local_engine import check_gguf

        check_gguf(name)
    return spec


def check_credentials(settings: ModelSettings) -> None:
    """Refuse an OpenAI model that has neither a key nor a base URL to call."""
    spec = resolve_spec(settings.spec)
    if spec.startswith("openai:") and not (settings.api_key or settings.base_url):
        role = settings.role.upper()
        raise MissingCredentialsError(
            f"{spec} for the {settings.role} needs a key: set OPENAI_API_KEY (or "
            f"DELEGATOR_{role}_API_KEY), or OPENAI_BASE_URL (or "
            f"DELEGATOR_{role}_BASE_URL) for a server that needs none"
        )


def load_chat_model(settings: ModelSettings) -> BaseChatModel | None:
    """The chat model the settings name, or None in extractive mode.

    One instance per resolved spec and settings (the most recent few are
    kept), so every step of a role shares its model and its rate limiter.
    """
    spec = resolve_spec(settings.spec)
    if spec == EXTRACTIVE:
        return None
    with _loading:
        return _load(spec, settings)


@functools.lru_cache(maxsize=16)
def _load(spec: str, settings: ModelSettings) -> BaseChatModel:
    provider, _, name = spec.partition(":")
    return _PROVIDERS[provider](name, settings)


REMOTE_PARALLEL = 16
"""Subagents at once on a remote API, unless told: it serves many calls at once."""
RULE_PARALLEL = 8
"""Subagents at once with no model: they are quick and share the machine."""


def endpoint(settings: ModelSettings) -> str:
    """Which server the settings' calls go to: one name per endpoint.

    Every `local:` model shares this process's engine; no model is its own
    endpoint; a remote spec is named by its provider and base URL.
    """
    spec = resolve_spec(settings.spec)
    provider = spec.partition(":")[0]
    if provider in ("local", EXTRACTIVE):
        return provider
    return f"{provider}:{settings.base_url or 'default'}"


def parallel_limit(settings: ModelSettings, asked: int = 0) -> int:
    """How many subagents on this model may work at once.

    A local engine serves as many calls as it has slots, whatever is `asked`;
    otherwise `asked` stands, and when it is 0 (choose) a remote API gets
    `REMOTE_PARALLEL` and a run with no model `RULE_PARALLEL`.
    """
    spec = resolve_spec(settings.spec)
    if spec.startswith("local:"):
        from runtime.local_engine import slots

        return min(asked, slots()) if asked else slots()
    if asked:
        return asked
    return RULE_PARALLEL if spec == EXTRACTIVE else REMOTE_PARALLEL


@asynccontextmanager
async def lead_deadline(seconds: float, step: str) -> AsyncIterator[None]:
    """Bound one lead step (planning, enumerating, writing) in time."""
    try:
        async with asyncio.timeout(seconds):
            yield
    except TimeoutError as err:
        raise ModelTimeoutError(
            f"the lead model did not finish {step} within {seconds:g}s"
        ) from err
