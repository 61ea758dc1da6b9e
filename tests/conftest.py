from __future__ import annotations

import os
import tempfile

# Before LangGraph is imported: checkpoints deserialize only registered types,
# and the CLI's runs are checkpointed away from the repository.
os.environ["LANGGRAPH_STRICT_MSGPACK"] = "true"
os.environ["DELEGATOR_RUNS_DB"] = os.path.join(
    tempfile.mkdtemp(prefix="delegator-runs-"), "runs.sqlite"
)

import uuid  # noqa: E402
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from langchain_core.language_models import BaseChatModel

from runtime.kb import DEFAULT_CORPUS, ingest
from runtime.models import _PROVIDERS, register_provider

pytest_plugins = ["tests.postgres"]

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture(scope="session")
def freshwiki_kb(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The shipped FreshWiki corpus, indexed into a fresh file."""
    path = tmp_path_factory.mktemp("kb") / "freshwiki.sqlite"
    ingest(path, [DEFAULT_CORPUS])
    return str(path)


@pytest.fixture(scope="session")
def creative_kb(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A small corpus on AI in six creative media, plus one unrelated article."""
    path = tmp_path_factory.mktemp("kb") / "creative.sqlite"
    ingest(path, [FIXTURES / "creative"])
    return str(path)


@pytest.fixture(scope="session")
def landmarks_kb(tmp_path_factory: pytest.TempPathFactory) -> str:
    """Eight one-paragraph articles on the landmarks of a made-up town."""
    path = tmp_path_factory.mktemp("kb") / "landmarks.sqlite"
    ingest(path, [FIXTURES / "landmarks"])
    return str(path)


@pytest.fixture
def fake_models() -> Iterator[Callable[[BaseChatModel], str]]:
    """Register chat models under unique 'fake:<id>' specs for one test."""
    models: dict[str, BaseChatModel] = {}
    register_provider("fake", lambda name, settings: models[name])

    def add(model: BaseChatModel) -> str:
        name = uuid.uuid4().hex
        models[name] = model
        return f"fake:{name}"

    yield add
    del _PROVIDERS["fake"]
