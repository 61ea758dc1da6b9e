"""LLM mode: a subagent is a tool loop over its allowed tools, ending in findings."""

from __future__ import annotations

import asyncio
from typing import Literal

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import BaseTool
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.prebuilt import ToolNode

from runtime.kb import KnowledgeBase
from runtime.structured import ModelOutputError, ainvoke_structured, tokens_used
from state.agents import AgentManifest
from subagents.contract import SubagentAnswer, check_answer, final_answer
from subagents.state import AgentInput, AgentOutput, AgentState
from subagents.tools import make_tools

FINISH_PROMPT = (
    "Stop searching now. Report what you found as one JSON object, with quotes "
    "copied verbatim from the passages you read."
)
STEPS_PER_TURN = 2
"""A turn is a model step and a tool step."""


def recursion_limit(max_turns: int) -> int:
    """Steps for `max_turns` turns and the final answer, with one to spare.

    LangGraph's `RemainingSteps` counts down from this limit; the loop stops
    calling tools when another turn would leave no step for the answer.
    """
    return STEPS_PER_TURN * max_turns + 2


def build_llm_agent(
    manifest: AgentManifest, model: BaseChatModel, kb: KnowledgeBase
) -> CompiledStateGraph[AgentState, None, AgentInput, AgentOutput]:
    """A tool loop over the definition's allowed tools, capped at its max_turns."""
    available = make_tools(kb)
    tools: list[BaseTool] = [
        available[t] for t in manifest.allowed_tools if t in available
    ]
    agent_model = model.bind_tools(tools) if tools else model

    async def agent(state: AgentState) -> dict[str, object]:
        answer = await agent_model.ainvoke(state["messages"])
        return {"messages": [answer], "tokens": tokens_used(answer)}

    def after_agent(state: AgentState) -> Literal["tools", "answer"]:
        last = state["messages"][-1]
        return "tools" if isinstance(last, AIMessage) and last.tool_calls else "answer"

    def after_tools(state: AgentState) -> Literal["agent", "answer"]:
        room_for_a_turn = state["remaining_steps"] > STEPS_PER_TURN + 1
        return "agent" if room_for_a_turn else "answer"

    async def answer(state: AgentState) -> dict[str, object]:
        task, tokens = state["task"], 0
        steps = len(state["messages"]) - 2
        given = final_answer(state["messages"][-1])
        if given is None:
            ask = [*state["messages"], HumanMessage(FINISH_PROMPT)]
            try:
                given, tokens = await ainvoke_structured(model, ask, SubagentAnswer)
            except ModelOutputError as err:
                return {"findings": [], "errors": [str(err)], "steps": steps}
        findings, errors = await asyncio.to_thread(check_answer, given, task, kb)
        return {
            "findings": findings,
            "errors": errors,
            "tokens": tokens,
            "steps": steps,
        }

    builder = StateGraph(AgentState, input_schema=AgentInput, output_schema=AgentOutput)
    builder.add_node("agent", agent)
    builder.add_node("tools", ToolNode(tools))
    builder.add_node("answer", answer)
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", after_agent)
    builder.add_conditional_edges("tools", after_tools)
    builder.add_edge("answer", END)
    compiled = builder.compile(name=manifest.agent_id, checkpointer=False)
    return compiled.with_config(recursion_limit=recursion_limit(manifest.max_turns))
