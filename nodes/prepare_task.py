"""prepare_task: the task of a subagent run, as sent or from a brief by hand."""

from __future__ import annotations

from langgraph.runtime import Runtime

from roles.delegation import first_tasks
from runtime.context import Context
from runtime.durable import current_run_id
from state.graph import SubagentInput, SubagentState
from state.plan import DEFAULT_AGENT, CoveragePlan, Dimension, facets_for_values
from state.question import QuestionError, check_question
from subagents.registry import DefinitionError
from subagents.services import services


async def prepare_task(
    state: SubagentInput, runtime: Runtime[Context]
) -> SubagentState:
    """The task of a run by hand, from its question, values and agent.

    With no agent named, routing picks one, as for a facet of a plan.
    """
    ctx = runtime.context
    question = check_question(state.get("question"))
    given = state.get("values", [])
    if not isinstance(given, list) or not all(isinstance(v, str) for v in given):
        raise QuestionError("values must be a list of strings, the values to cover")
    values = tuple(dict.fromkeys(v.strip() for v in given if v.strip()))
    if not values:
        raise QuestionError("a subagent run by hand needs the values to cover")
    agents = dict((await services(ctx)).agents)
    agent = state.get("agent") or DEFAULT_AGENT
    if agent not in agents:
        raise DefinitionError(f"no subagent is named {agent!r}")
    # a facet assigned to the default agent is routed; any other keeps its agent
    (facet,) = facets_for_values(question, ["; ".join(values)])
    facet = facet.model_copy(
        update={"values": values, "agent_id": agent, "title": ", ".join(values)}
    )
    plan = CoveragePlan(
        question=question,
        dimensions=(Dimension(name="values", values=values),),
        facets=(facet,),
    )
    (task,) = first_tasks(plan, ctx, current_run_id(), agents)
    return {"task": task}
