"""Bad input and broken parts give clear errors and lose nothing."""

from __future__ import annotations

import re
import socket
from collections.abc import Callable
from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel

from cli import exits
from cli.main import main
from graphs.research import graph
from roles.delegation import check_agents
from roles.verify import NOT_VERBATIM
from runtime.context import ConfigError, Context
from runtime.kb import KnowledgeBaseError
from runtime.models import ModelSpecError
from runtime.structured import ModelOutputError
from state.plan import CoveragePlan, Dimension, Facet
from state.question import MAX_QUESTION_CHARS, QuestionError
from subagents.registry import DefinitionError, load_registry
from tests.support import extractive, research
from tests.unit.fakes import FAIL, USAGE, FakeResearcher, scripted
from tests.unit.test_creative_trap import FIRST, MISSED, NARROW_PLAN, QUESTION


def narrow_run(
    fake_models: Callable[[BaseChatModel], str],
    kb: str,
    researcher: BaseChatModel,
    **settings: Any,
) -> dict[str, Any]:
    """The narrow creative plan, once, with this subagent model and no re-delegation."""
    lead = fake_models(scripted(NARROW_PLAN, {"dimensions": []}))
    context = Context(
        lead_model=lead,
        subagent_model=fake_models(researcher),
        kb_path=kb,
        max_rounds=0,
        **settings,
    )
    return research(QUESTION, context)


def lead_scripted(
    fake_models: Callable[[BaseChatModel], str], kb: str, *answers: Any
) -> Context:
    """A context whose lead gives these answers; extractive subagents, one round."""
    lead = fake_models(scripted(*answers))
    return Context(
        lead_model=lead, subagent_model="extractive", kb_path=kb, max_rounds=0
    )


@pytest.mark.parametrize(
    "question", ["", "   \n ", "? ! ...", "x " * MAX_QUESTION_CHARS]
)
def test_unusable_questions_are_refused(question: str, freshwiki_kb: str) -> None:
    with pytest.raises(QuestionError):
        research(question, extractive(freshwiki_kb))


def test_missing_knowledge_base_is_a_clear_error(tmp_path: Any) -> None:
    with pytest.raises(KnowledgeBaseError, match="no knowledge base at"):
        research("floods", extractive(str(tmp_path / "missing.sqlite")))


def test_not_a_knowledge_base_is_a_clear_error(tmp_path: Any) -> None:
    bogus = tmp_path / "bogus.sqlite"
    bogus.write_text("not sqlite")
    with pytest.raises(KnowledgeBaseError, match="not a knowledge base"):
        research("floods", extractive(str(bogus)))


def test_an_empty_file_as_knowledge_base_is_told_how_to_build_one(
    tmp_path: Any,
) -> None:
    empty = tmp_path / "new.sqlite"
    empty.touch()
    with pytest.raises(KnowledgeBaseError, match="empty file; build a knowledge base"):
        research("floods", extractive(str(empty)))


def test_a_remote_model_without_key_or_endpoint_says_what_to_set(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "DELEGATOR_LEAD_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("DELEGATOR_LEAD_BASE_URL", raising=False)
    with pytest.raises(ModelSpecError, match="set OPENAI_API_KEY"):
        Context(lead_model="openai:gpt-4o-mini")
    monkeypatch.setenv("DELEGATOR_LEAD_BASE_URL", "http://127.0.0.1:9/v1")
    assert Context(lead_model="openai:gpt-4o-mini").model("lead").base_url


def test_each_choice_setting_is_a_dropdown_in_studio() -> None:
    drawn = graph.get_context_jsonschema()
    assert drawn is not None
    schema = drawn["properties"]
    for name in ("routing", "dangerous_tools", "on_escalation", "subagent_protocol"):
        assert schema[name]["enum"], name


@pytest.mark.parametrize("role", ["lead_model", "subagent_model"])
def test_unknown_model_spec_is_refused_before_the_run(role: str) -> None:
    with pytest.raises(ModelSpecError, match="unknown model spec 'mystery:model'"):
        Context(**dict[str, Any]({role: "mystery:model"}))


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"max_rounds": -1}, "max_rounds"),
        ({"max_subagents": 0}, "max_subagents"),
        ({"task_timeout_s": 0}, "task_timeout_s must be positive"),
        ({"routing": "fastest"}, "routing must be one of capability, semantic"),
    ],
)
def test_out_of_range_settings_are_config_errors(
    settings: dict[str, Any], message: str
) -> None:
    with pytest.raises(ConfigError, match=message):
        Context(**settings)


def test_env_settings_fill_defaults_and_are_checked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("DELEGATOR_MAX_ROUNDS", "1")
    monkeypatch.setenv("DELEGATOR_LEAD_MODEL", "extractive")
    assert Context().max_rounds == 1
    assert Context(max_rounds=2).max_rounds == 2
    assert Context().lead_model == "extractive"
    monkeypatch.setenv("DELEGATOR_MAX_ROUNDS", "many")
    with pytest.raises(ConfigError, match="DELEGATOR_MAX_ROUNDS='many'"):
        Context()


def test_a_plan_still_malformed_after_its_repair_gives_way_to_the_corpus_plan(
    fake_models: Callable[[BaseChatModel], str], creative_kb: str
) -> None:
    context = lead_scripted(
        fake_models,
        creative_kb,
        "no json here",
        "{still not a plan",
        {"dimensions": []},
        "The sources cover it [1].",
    )
    state = research("How is AI used in music, film and photography?", context)
    plan = state["plan"]
    assert plan.planned_by == "corpus" and plan.values
    assert "could not be used" in plan.fallback and "PlanDraft" in plan.fallback
    assert state["lead_usage"].tokens >= 20  # the two failed answers are counted
    (planned,) = [e for e in state["events"] if e.fields.get("stage") == "plan"]
    assert planned.fields["fallback"] == plan.fallback
    assert f"The knowledge base planned because {plan.fallback}." in (
        state["report"].markdown
    )


def test_a_malformed_plan_the_corpus_cannot_replace_is_refused(
    fake_models: Callable[[BaseChatModel], str], creative_kb: str
) -> None:
    context = lead_scripted(
        fake_models, creative_kb, "no json here", "{still not a plan"
    )
    with pytest.raises(ModelOutputError, match="PlanDraft.*nor can the knowledge"):
        research("What is the impact of quantum sourcing on zyxqvor?", context)


def test_malformed_plan_recovers_when_repair_succeeds(
    fake_models: Callable[[BaseChatModel], str], creative_kb: str
) -> None:
    context = lead_scripted(
        fake_models, creative_kb, "```json\n{oops", NARROW_PLAN, {"dimensions": []}
    )
    state = research(QUESTION, context)
    assert state["plan"].values[:3] == tuple(FIRST)


def test_plan_with_unowned_value_is_sent_back_then_repaired(
    fake_models: Callable[[BaseChatModel], str], creative_kb: str
) -> None:
    unowned = {**NARROW_PLAN, "facets": NARROW_PLAN["facets"][:2]}
    context = lead_scripted(
        fake_models, creative_kb, unowned, unowned, {"dimensions": []}
    )
    state = research(QUESTION, context)
    owners = {v: f.id for f in state["plan"].facets for v in f.values}
    assert set(owners) >= set(FIRST)
    first_round = [r for r in state["results"].values() if r.round == 0]
    assert sorted(v for r in first_round for v in r.values) == sorted(FIRST)


def test_crashing_subagent_fails_its_task_and_the_run_goes_on(
    fake_models: Callable[[BaseChatModel], str], creative_kb: str
) -> None:
    broken = FakeResearcher(fail="endpoint refused the connection")
    state = narrow_run(fake_models, creative_kb, broken)
    results = list(state["results"].values())
    assert {r.status for r in results} == {"failed"}
    assert all("endpoint refused" in r.errors[0] for r in results)
    report = state["report"]
    assert set(report.unresolved_gaps) >= set(FIRST)
    assert "## Not covered" in report.markdown
    assert "endpoint refused" in report.markdown


def test_hanging_subagent_times_out_as_a_failed_task(
    fake_models: Callable[[BaseChatModel], str], creative_kb: str
) -> None:
    hanging = FakeResearcher(delay=30)
    state = narrow_run(
        fake_models, creative_kb, hanging, task_timeout_s=0.2, task_attempts=1
    )
    results = list(state["results"].values())
    assert len(results) == 3
    assert all(r.status == "failed" and "timed out" in r.errors[0] for r in results)


def test_a_task_that_times_out_keeps_the_tokens_it_spent(
    fake_models: Callable[[BaseChatModel], str], creative_kb: str
) -> None:
    # the first turn answers at once; the final answer hangs past the limit
    slow_answer = FakeResearcher(report="never seen", delay=0.0)
    slow_answer.report_delay = 30
    state = narrow_run(
        fake_models, creative_kb, slow_answer, task_timeout_s=1.0, task_attempts=1
    )
    results = list(state["results"].values())
    assert all(r.failure == "timeout" for r in results)
    assert all(r.tokens == USAGE["total_tokens"] for r in results)


def test_output_that_never_validates_fails_its_task(
    fake_models: Callable[[BaseChatModel], str], creative_kb: str
) -> None:
    garbled = FakeResearcher(report="I found lots of things!")
    state = narrow_run(fake_models, creative_kb, garbled)
    results = list(state["results"].values())
    assert {r.status for r in results} == {"failed"}
    assert {r.failure for r in results} == {"invalid output"}
    assert all("SubagentAnswer" in r.errors[0] for r in results)
    assert all(r.tokens > 0 for r in results)  # the failed calls are counted


def test_invented_quotes_are_dropped_and_counted(
    fake_models: Callable[[BaseChatModel], str], creative_kb: str
) -> None:
    invented = (
        '{"findings": [{"claim": "c", "quote": "AI replaced every artist in 2021.",'
        ' "passage_id": "AI_in_visual_art#0", "values": []}]}'
    )
    state = narrow_run(fake_models, creative_kb, FakeResearcher(report=invented))
    assert state["findings"] == []
    assert state["dropped"] == {NOT_VERBATIM: 1}  # three tasks, one span after dedupe
    summary = state["report"].summary
    assert summary.findings_dropped == 1
    # the tasks returned, but nothing they brought checks out: not a complete run
    assert summary.succeeded == summary.tasks == 3
    assert summary.incomplete and "no finding passed verification" in summary.incomplete


@pytest.fixture
def dead_endpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    """Point the OpenAI-compatible client at a loopback port nobody listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{port}/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "unused")
    monkeypatch.setenv("DELEGATOR_REQUESTS_PER_SECOND", "50")
    # one attempt per task: retries of transient errors are tested in test_chaos
    monkeypatch.setenv("DELEGATOR_TASK_ATTEMPTS", "1")


def test_dead_lead_endpoint_is_a_clear_cli_error(
    dead_endpoint: None, freshwiki_kb: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        [
            "research",
            "floods",
            "--kb",
            freshwiki_kb,
            "--quiet",
            "--lead-model",
            "openai:dead-lead",
            "--subagent-model",
            "extractive",
        ]
    )
    assert code == exits.MODEL == 5
    line = capsys.readouterr().err.strip()
    assert line.startswith("error: the model endpoint failed: Connection error.")
    # the address it failed at, and no more of the request than that
    assert re.search(r" \(at http://127\.0\.0\.1:\d+/v1/chat/completions\)$", line)


def test_dead_subagent_endpoint_fails_tasks_not_the_run(
    dead_endpoint: None, freshwiki_kb: str
) -> None:
    context = Context(
        lead_model="extractive",
        subagent_model="openai:dead-sub",
        kb_path=freshwiki_kb,
        max_rounds=0,
    )
    state = research("Which natural disasters struck in 2022 and 2023?", context)
    results = list(state["results"].values())
    assert results and all(r.status == "failed" for r in results)
    assert all("Connection" in r.errors[0] for r in results)
    assert {r.failure for r in results} == {"unreachable"}
    assert set(state["report"].unresolved_gaps) >= set(state["plan"].values[:5])
    assert state["report"].summary.incomplete.startswith("every task failed")


def test_a_run_whose_tasks_all_fail_exits_3_with_its_report(
    dead_endpoint: None, freshwiki_kb: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        [
            "research",
            "Which natural disasters struck in 2022 and 2023?",
            "--kb",
            freshwiki_kb,
            "--quiet",
            "--max-rounds",
            "0",
            "--lead-model",
            "extractive",
            "--subagent-model",
            "openai:dead-sub",
        ]
    )
    printed = capsys.readouterr()
    assert code == exits.INCOMPLETE == 3
    assert printed.out.splitlines()[2].startswith("**Incomplete run:** every task")
    assert "## Not covered" in printed.out
    assert "## Sources" not in printed.out  # nothing was cited: no empty section
    assert "incomplete:" in printed.err


def test_failed_synthesis_keeps_the_cited_findings(
    fake_models: Callable[[BaseChatModel], str], creative_kb: str
) -> None:
    lead = fake_models(scripted(NARROW_PLAN, {"dimensions": []}, FAIL + "lead down"))
    context = Context(
        lead_model=lead,
        subagent_model=fake_models(FakeResearcher()),
        kb_path=creative_kb,
        max_rounds=0,
    )
    report = research(QUESTION, context)["report"]
    assert "_No summary: the lead model failed (lead down)._" in report.markdown
    assert report.summary.summary_failure == "the lead model failed (lead down)"
    assert len(report.citations) == 3
    assert all(f"[{n}]" in report.markdown for n in (1, 2, 3))


def test_model_chosen_facet_ids_are_replaced_so_no_result_is_lost(
    fake_models: Callable[[BaseChatModel], str], creative_kb: str
) -> None:
    same_ids = {
        **NARROW_PLAN,
        "facets": [{**f, "id": "f1"} for f in NARROW_PLAN["facets"]],
    }
    context = lead_scripted(fake_models, creative_kb, same_ids, {"dimensions": []})
    state = research(QUESTION, context)
    assert [f.id for f in state["plan"].facets][:3] == ["f0", "f1", "f2"]
    assert sorted(v for r in state["results"].values() for v in r.values) == sorted(
        FIRST
    )


def test_plan_with_empty_strings_is_sent_back_for_repair(
    fake_models: Callable[[BaseChatModel], str], creative_kb: str
) -> None:
    blank_title = {
        **NARROW_PLAN,
        "facets": [
            {**NARROW_PLAN["facets"][0], "title": "  "},
            *NARROW_PLAN["facets"][1:],
        ],
    }
    context = lead_scripted(
        fake_models, creative_kb, blank_title, NARROW_PLAN, {"dimensions": []}
    )
    assert research(QUESTION, context)["plan"].facets[0].title == "Visual Art"


def test_failing_enumerator_costs_only_its_enumeration(
    fake_models: Callable[[BaseChatModel], str], creative_kb: str
) -> None:
    context = lead_scripted(
        fake_models, creative_kb, NARROW_PLAN, "not json", "still not json"
    )
    state = research(QUESTION, context)
    failures = [e for e in state["events"] if e.fields.get("stage") == "enumerate"]
    assert len(failures) == 1 and "Enumeration" in str(failures[0].fields["error"])
    assert state["coverage"][0].covered == tuple(FIRST)
    # the corpus probe still ran: it found the three media the plan left out
    assert {v.removeprefix("AI in ") for v in state["coverage"][0].new_values} == set(
        MISSED
    )


def test_a_slow_lead_is_stopped_at_each_deadline_and_costs_only_its_own_steps(
    fake_models: Callable[[BaseChatModel], str], creative_kb: str
) -> None:
    asleep = fake_models(FakeResearcher(delay=30))
    context = Context(lead_model=asleep, kb_path=creative_kb, lead_timeout_s=0.2)
    state = research("How is AI used in music, film and photography?", context)
    plan = state["plan"]
    assert plan.planned_by == "corpus" and plan.values
    assert "did not finish planning within 0.2s" in plan.fallback
    assert f"The knowledge base planned because {plan.fallback}." in (
        state["report"].markdown
    )
    # the extractive subagents still verified what the knowledge base holds
    assert any(f.verified for f in state["findings"])
    assert "within 0.2s" in state["report"].summary.summary_failure


def test_a_plan_naming_an_undefined_agent_is_refused() -> None:
    plan = CoveragePlan(
        question="q",
        dimensions=(Dimension(name="d", values=("a",)),),
        facets=(Facet(id="f0", title="a", brief="b", values=("a",), agent_id="ghost"),),
    )
    with pytest.raises(DefinitionError, match="no subagent definition for ghost"):
        check_agents(plan, load_registry())
