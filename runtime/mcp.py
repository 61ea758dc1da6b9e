"""MCP servers: the user's configuration, each server started once, its tools.

The configuration is the JSON users already have: `{"mcpServers": {name:
{"command", "args", "env"} or {"url", "headers"}}}`, given by `--mcp-config`,
the context's `mcp_config`, or the operator's `DELEGATOR_MCP_CONFIG` (see
`runtime.context`). A server
starts the first time a run needs it and keeps one session (in a task of its
own on the event loop) for every later call; `stop_servers` ends them all.
Its tools are named `mcp__<server>__<tool>`.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from langchain_core.tools import BaseTool

from runtime.paths import InputFileError, read_input
from runtime.reliability import describe
from state.agents import MCP_PREFIX

if TYPE_CHECKING:  # the MCP client is imported where a server starts, not before
    from langchain_mcp_adapters.sessions import Connection

START_TIMEOUT_S = 30.0
MAX_CONFIG_BYTES = 1 << 20
_NAME = re.compile(r"^[A-Za-z0-9-]+(?:_[A-Za-z0-9-]+)*$")


class McpServerError(ValueError):
    """An MCP configuration or server that cannot be used; the message names it."""


def tool_name(server: str, tool: str) -> str:
    """The name an MCP server's tool goes by: `mcp__<server>__<tool>`."""
    return f"{MCP_PREFIX}{server}__{tool}"


def read_config(path: str) -> dict[str, Connection]:
    """The servers of an MCP configuration file, as connections by name.

    Raises:
        McpServerError: the file cannot be read, or is not such a configuration.
    """
    try:
        data = json.loads(read_input(Path(path), MAX_CONFIG_BYTES))
    except (InputFileError, UnicodeDecodeError, json.JSONDecodeError) as err:
        why = f"{path}: not a readable MCP configuration: {err}"
        raise McpServerError(why) from err
    servers = data.get("mcpServers") if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        raise McpServerError(f"{path}: no 'mcpServers' object")
    return {name: _connection(path, name, entry) for name, entry in servers.items()}


def _connection(path: str, name: str, entry: Any) -> Connection:
    """One server's entry as a connection: stdio for a command, HTTP for a url."""
    where = f"{path}: MCP server {name!r}"
    if not _NAME.fullmatch(name):
        raise McpServerError(f"{where}: a name is letters, digits, '-' and single '_'")
    if not isinstance(entry, dict):
        raise McpServerError(f"{where}: not an object")
    if isinstance(entry.get("url"), str):
        headers = entry.get("headers") or {}
        if not _strings(headers):
            raise McpServerError(f"{where}: 'headers' must map strings to strings")
        return {"transport": "streamable_http", "url": entry["url"], "headers": headers}
    command, args, env = entry.get("command"), entry.get("args", []), entry.get("env")
    if not isinstance(command, str) or not command:
        raise McpServerError(f"{where}: needs a 'command' or a 'url'")
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise McpServerError(f"{where}: 'args' must be a list of strings")
    if env is not None and not _strings(env):
        raise McpServerError(f"{where}: 'env' must map strings to strings")
    return {
        "transport": "stdio",
        "command": command,
        "args": args,
        "env": {**os.environ, **env} if env else None,
    }


def _strings(value: Any) -> bool:
    return isinstance(value, dict) and all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    )


@dataclass
class Server:
    """One running server: its tools and how to stop it."""

    name: str
    tools: list[BaseTool]
    stop: asyncio.Event
    task: asyncio.Task[None]


_running: dict[tuple[int, str, str], Server] = {}
"""Running servers by (event loop, configuration file, server name)."""
_starting: dict[tuple[int, str, str], asyncio.Lock] = {}


async def server_tools(config: str, name: str) -> dict[str, BaseTool]:
    """The tools of server `name` of `config`, by their `mcp__` names.

    The server is started the first time (once per event loop), and its session
    kept for every later call.

    Raises:
        McpServerError: the configuration has no such server, or it cannot start.
    """
    key = (id(asyncio.get_running_loop()), config, name)
    lock = _starting.setdefault(key, asyncio.Lock())
    async with lock:
        server = _running.get(key)
        if server is None or server.task.done():
            connections = await asyncio.to_thread(read_config, config)
            if name not in connections:
                raise McpServerError(f"MCP server {name!r} is not in {config}")
            server = _running[key] = await _start(name, connections[name])
    return {tool_name(name, t.name): t for t in server.tools}


async def _start(name: str, connection: Connection) -> Server:
    """Start a server in a task of its own; its tools once its session is up."""
    from langchain_mcp_adapters.sessions import create_session
    from langchain_mcp_adapters.tools import load_mcp_tools

    ready: asyncio.Future[list[BaseTool]] = asyncio.get_running_loop().create_future()
    stop = asyncio.Event()

    async def serve() -> None:
        try:
            async with create_session(connection) as session:
                await session.initialize()
                tools = await load_mcp_tools(
                    session, server_name=name, handle_tool_errors=False
                )
                ready.set_result(tools)
                await stop.wait()
        except Exception as err:  # noqa: BLE001 - reported to whoever waits
            if not ready.done():
                ready.set_exception(err)

    task = asyncio.create_task(serve(), name=f"mcp server {name}")
    try:
        tools = await asyncio.wait_for(asyncio.shield(ready), START_TIMEOUT_S)
    except Exception as err:
        stop.set()
        task.cancel()
        raise McpServerError(
            f"MCP server {name!r} could not start: {describe(err)}"
        ) from err
    return Server(name, tools, stop, task)


async def stop_servers() -> None:
    """Stop every server this event loop started, and wait for them to end."""
    loop = id(asyncio.get_running_loop())
    mine = [_running.pop(key) for key in list(_running) if key[0] == loop]
    for server in mine:
        server.stop.set()
    if mine:
        await asyncio.wait([s.task for s in mine], timeout=START_TIMEOUT_S)
