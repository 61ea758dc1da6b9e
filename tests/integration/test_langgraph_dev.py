"""The graphs behind a real `langgraph dev` server, over HTTP with langgraph-sdk."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import pytest
from langgraph_sdk import get_client

from tests.integration.servers import BIN, ROOT, running

pytestmark = pytest.mark.integration

QUESTION = "Which natural disasters and severe weather events struck in 2022 and 2023?"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    log = tmp_path_factory.mktemp("server") / "langgraph-dev.log"
    command = [str(BIN / "langgraph"), "dev", "--no-browser", "--no-reload"]
    allowed = {"DELEGATOR_KB_DIRS": str(tmp_path_factory.getbasetemp())}
    with running([*command, "--port", "{port}"], allowed, log) as started:
        yield started.url


def extractive(kb: str, **extra: Any) -> dict[str, Any]:
    return {
        "lead_model": "extractive",
        "subagent_model": "extractive",
        "kb_path": kb,
        **extra,
    }


def test_research_graph_is_served_with_its_schemas(server: str) -> None:
    async def check() -> None:
        client = get_client(url=server)
        [assistant] = await client.assistants.search(
            graph_id="research", metadata={"created_by": "system"}
        )
        schemas = await client.assistants.get_schemas(assistant["assistant_id"])
        assert schemas["input_schema"] and schemas["context_schema"]
        assert list(schemas["input_schema"]["properties"]) == ["question"]
        context = schemas["context_schema"]["properties"]
        assert {"lead_model", "subagent_model", "max_rounds", "kb_path"} <= set(context)
        assert all(field.get("description") for field in context.values())

    asyncio.run(check())


def test_run_streams_events_and_ends_with_a_cited_report(
    server: str, freshwiki_kb: str
) -> None:
    async def run() -> tuple[list[dict[str, Any]], dict[str, Any]]:
        client = get_client(url=server)
        thread = await client.threads.create()
        custom = []
        async for part in client.runs.stream(
            thread["thread_id"],
            "research",
            input={"question": QUESTION},
            context=extractive(freshwiki_kb, max_rounds=1),
            stream_mode=["custom"],
        ):
            if part.event == "custom":
                custom.append(part.data)
        state = await client.threads.get_state(thread["thread_id"])
        return custom, cast(dict[str, Any], state["values"])

    custom, values = asyncio.run(run())
    kinds = [e["event"] for e in custom]
    assert kinds.count("DELEGATE") == kinds.count("RESULT") == len(values["results"])
    assert "messages" not in values
    report = values["report"]
    assert report["coverage_table"] and report["citations"]
    assert "[1]" in report["markdown"]
    assert [g["round"] for g in values["coverage"]] == [0, 1]


def test_bad_question_fails_the_run_with_a_clear_error(
    server: str, freshwiki_kb: str
) -> None:
    async def run() -> tuple[Any, Any]:
        client = get_client(url=server)
        thread = await client.threads.create()
        output = await client.runs.wait(
            thread["thread_id"],
            "research",
            input={"question": "   "},
            context=extractive(freshwiki_kb),
            raise_error=False,
        )
        [last] = await client.runs.list(thread["thread_id"], limit=1)
        return output, last

    output, last = asyncio.run(run())
    assert last["status"] == "error"
    assert output["__error__"]["error"] == "QuestionError"
    assert "question is empty" in output["__error__"]["message"]


def test_a_paused_thread_resumes_with_its_state_deserialized_strictly(
    server: str, freshwiki_kb: str
) -> None:
    # the server runs with LANGGRAPH_STRICT_MSGPACK=true (tests/conftest.py):
    # resuming reads every result, finding and plan back from the checkpoint
    assert os.environ["LANGGRAPH_STRICT_MSGPACK"] == "true"

    async def run() -> tuple[dict[str, Any], dict[str, Any]]:
        client = get_client(url=server)
        thread = await client.threads.create()
        context = extractive(freshwiki_kb, max_rounds=1)
        await client.runs.wait(
            thread["thread_id"],
            "research",
            input={"question": QUESTION},
            context=context,
            interrupt_after=["aggregate"],
        )
        paused = await client.threads.get_state(thread["thread_id"])
        final = await client.runs.wait(
            thread["thread_id"], "research", input=None, context=context
        )
        return cast(dict[str, Any], paused), cast(dict[str, Any], final)

    paused, final = asyncio.run(run())
    assert paused["next"] == ["verify"]
    assert paused["values"]["results"] and not paused["values"].get("report")
    assert final["report"]["coverage_table"]
    assert final["report"]["summary"]["tasks"] > len(paused["values"]["results"])
    assert [g["round"] for g in final["coverage"]] == [0, 1]


def test_both_graphs_are_served_and_drawn(server: str) -> None:
    async def check() -> tuple[set[str], set[str], set[str], dict[str, Any]]:
        client = get_client(url=server)
        assistants = await client.assistants.search()
        ids = {a["graph_id"]: a["assistant_id"] for a in assistants}
        drawings = [await client.assistants.get_graph(ids[g]) for g in ids]
        research, subagent = (
            {
                n["id"]
                for n in cast(dict[str, Any], drawings[list(ids).index(g)])["nodes"]
            }
            for g in ("research", "subagent")
        )
        schemas = await client.assistants.get_schemas(ids["research"])
        xray = await client.assistants.get_graph(ids["research"], xray=True)
        drawn = {n["id"] for n in cast(dict[str, Any], xray)["nodes"]}
        assert {"subagent:act", "subagent:tools", "subagent:answer"} <= drawn
        return set(ids), research, subagent, cast(dict[str, Any], schemas)

    graphs, research, subagent, schemas = asyncio.run(check())
    assert graphs == {"research", "subagent"}
    assert {"dispatch", "approve_plan", "subagent", "gap_check", "write"} <= research
    assert {"prepare_task", "subagent"} <= subagent
    output = set(schemas["output_schema"]["properties"])
    assert output == {"question", "plan", "coverage", "report"}


def test_one_subagent_runs_by_hand_from_a_question_and_values(
    server: str, freshwiki_kb: str
) -> None:
    async def run() -> dict[str, Any]:
        client = get_client(url=server)
        thread = await client.threads.create()
        output = await client.runs.wait(
            thread["thread_id"],
            "subagent",
            input=cast(
                dict[str, Any],
                {"question": QUESTION, "values": ["2022 Pakistan floods"]},
            ),
            context=extractive(freshwiki_kb),
        )
        return cast(dict[str, Any], output)

    output = asyncio.run(run())
    (result,) = output["results"].values()
    assert result["status"] == "success" and result["values"] == [
        "2022 Pakistan floods"
    ]
    assert [e["kind"] for e in output["events"]] == ["DELEGATE", "RESULT"]


def test_updates_per_node_and_the_subagents_own_steps_stream(
    server: str, freshwiki_kb: str
) -> None:
    async def run() -> list[tuple[str, Any]]:
        client = get_client(url=server)
        thread = await client.threads.create()
        return [
            (part.event, part.data)
            async for part in client.runs.stream(
                thread["thread_id"],
                "research",
                input={"question": QUESTION},
                context=extractive(freshwiki_kb, max_rounds=0),
                stream_mode=["updates", "custom"],
                stream_subgraphs=True,
            )
        ]

    parts = asyncio.run(run())
    top = [data for event, data in parts if event == "updates"]
    assert {"dispatch", "aggregate", "verify", "gap_check", "write"} <= {
        node for update in top for node in update
    }
    inner = [event for event, _ in parts if event.startswith("updates|subagent")]
    assert inner  # each subagent's own steps, under its namespace
    custom = [data["event"] for event, data in parts if event == "custom"]
    assert {"DELEGATE", "RESULT", "COVERAGE"} <= set(custom)


def test_a_plan_waits_in_the_thread_state_and_resumes_over_the_api(
    server: str, freshwiki_kb: str
) -> None:
    async def run() -> tuple[dict[str, Any], dict[str, Any]]:
        client = get_client(url=server)
        thread = await client.threads.create()
        context = extractive(freshwiki_kb, max_rounds=0, approve_plan=True)
        await client.runs.wait(
            thread["thread_id"],
            "research",
            input={"question": QUESTION},
            context=context,
        )
        waiting = await client.threads.get_state(thread["thread_id"])
        facets = waiting["interrupts"][0]["value"]["plan"]["facets"][:2]
        edit = {"action": "edit", "facets": facets}
        final = await client.runs.wait(
            thread["thread_id"],
            "research",
            command={"resume": edit},
            context=context,
        )
        return cast(dict[str, Any], waiting), cast(dict[str, Any], final)

    waiting, final = asyncio.run(run())
    (interrupt,) = waiting["interrupts"]
    assert interrupt["value"]["kind"] == "plan"
    assert waiting["next"] == ["approve_plan"]
    assert final["report"]["summary"]["tasks"] == 2  # the facets the person kept


def test_the_readme_example_runs_against_the_server(server: str) -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Studio and the API", 1)[1].split("\n## ", 1)[0]
    example = section.split("```python\n", 1)[1].split("```", 1)[0]
    ran = subprocess.run(
        [sys.executable, "-c", example],
        env={**os.environ, "DELEGATOR_URL": server},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert ran.returncode == 0, ran.stderr
    assert "DELEGATE" in ran.stdout and "RESULT" in ran.stdout
    assert "Coverage:" in ran.stdout and "## Sources" in ran.stdout


def test_a_linked_knowledge_base_inside_the_allowed_folders_runs(
    server: str, freshwiki_kb: str
) -> None:
    link = Path(freshwiki_kb).with_name("linked.sqlite")
    if not link.exists():
        link.symlink_to(freshwiki_kb)

    async def run() -> Any:
        client = get_client(url=server)
        thread = await client.threads.create()
        return await client.runs.wait(
            thread["thread_id"],
            "research",
            input={"question": QUESTION},
            context=extractive(str(link), max_rounds=0),
            raise_error=False,
        )

    output = asyncio.run(run())
    assert "__error__" not in output, output
    assert output["report"]["citations"]
