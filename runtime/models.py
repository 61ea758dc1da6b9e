"""Chat models per role, from spec strings: 'openai:<model>', 'extractive', 'auto'."""

from __future__ import annotations

import asyncio
import functools
import os
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

from langchain_core.language_models import BaseChatModel
from langchain_core.rate_limiters import InMemoryRateLimiter

EXTRACTIVE = "extractive"
DEFAULT_OPENAI_MODEL = "gpt-4o-mini"

ModelFactory = Callable[[str], BaseChatModel]


class ModelSpecError(ValueError):
    """A model spec that names no known provider."""


class ModelTimeoutError(TimeoutError):
    """A model that did not answer in the time its step allows."""


def _openai(name: str) -> BaseChatModel:
    from langchain_openai import ChatOpenAI

    base_url = os.environ.get("OPENAI_BASE_URL") or os.environ.get("OPENAI_API_BASE")
    api_key = os.environ.get("OPENAI_API_KEY") or ("unused" if base_url else None)
    rps = float(os.environ.get("DELEGATOR_REQUESTS_PER_SECOND", "4"))
    return ChatOpenAI(
        model=name,
        base_url=base_url,
        api_key=api_key,
        temperature=0,
        timeout=120,
        max_retries=2,
        rate_limiter=InMemoryRateLimiter(requests_per_second=rps, max_bucket_size=4),
    )


_PROVIDERS: dict[str, ModelFactory] = {"openai": _openai}
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
    return spec


def load_chat_model(spec: str) -> BaseChatModel | None:
    """The chat model a spec names, or None in extractive mode.

    One instance per resolved spec, so every role and subagent using a model
    shares its rate limiter.
    """
    spec = resolve_spec(spec)
    if spec == EXTRACTIVE:
        return None
    with _loading:
        return _load(spec)


@functools.cache
def _load(spec: str) -> BaseChatModel:
    provider, _, name = spec.partition(":")
    return _PROVIDERS[provider](name)


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
