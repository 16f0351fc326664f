"""Real ``.mcp.json`` files from public projects, read as Claude Code reads them; and the
official README's entry for server-everything (``npx -y …``) started and used as written."""

from __future__ import annotations

import json
import time
from pathlib import Path

from seri.io.mcp.mcp_hub import McpHub
from seri.pure.mcp.mcp_config import (
    HTTP,
    STDIO,
    McpServerConfig,
    McpServerSet,
    servers_from_document,
)
from tests.mcp.conftest import parent_environment
from tests.mcp.install import Servers

CAPTURES = Path(__file__).resolve().parent / "captures" / "mcp-json"

# 0K-cool/athena@1261d25e38bf5a15d09cb9bd23ed073958afb819:.mcp.json (verbatim; a
# "description" key Claude Code ignores, an npx server, a key already redacted by its author).
ATHENA = (CAPTURES / "athena.json").read_text()

# 0gnm0-afk/fng-chatbot-mcp-deepseek@d22dc312752bd673e24bac343877ff9d0adee87f:.mcp.json
# (verbatim): "type": "stdio", defaults everywhere, an empty default.
FNG = (CAPTURES / "fng-chatbot.json").read_text()

# 0dai-dev/docs@c02349a7ff2ee1491a19fde78b9c038f3fd7380c:.mcp.json (verbatim): a ${VAR}
# without a default, an empty env.
ZERODAI = (CAPTURES / "0dai-docs.json").read_text()

# 0swell/skills-and-mcp@2e7c25af95107c2d4e663d702966c777ba214f15:.mcp.json (verbatim): a URL
# without "type", and an entry with neither a command nor a url.
SWELL = (CAPTURES / "0swell-skills.json").read_text()

# Claude Code's documented HTTP example, as quoted in
# kriasoft/mcp-client-gen docs/mcp-config-formats.md (the type changed from the deprecated
# "sse" to "http", which the same page recommends); a default inside the url.
CLAUDE_DOCS_HTTP = (CAPTURES / "claude-docs-http.json").read_text()


def read(text: str, env: dict[str, str] | None = None) -> McpServerSet:
    return servers_from_document(json.loads(text), env or {}, ".mcp.json")


def test_athena_every_entry_is_a_stdio_server_with_its_env() -> None:
    parsed = read(ATHENA)
    assert not parsed.problems
    servers = {s.name: s for s in parsed.servers}
    assert list(servers) == [
        "athena-knowledge-base",
        "velociraptor",
        "kali_external",
        "kali_internal",
        "playwright",
    ]
    assert all(s.transport == STDIO for s in servers.values())
    assert servers["playwright"].command == "npx"
    assert servers["playwright"].args[:2] == ("@playwright/mcp@latest", "--browser")
    assert dict(servers["kali_internal"].env) == {"KALI_API_KEY": "[REDACTED_API_KEY]"}


def test_fng_defaults_fill_in_and_a_set_variable_wins() -> None:
    parsed = read(FNG, {"CLAUDE_PROJECT_DIR": "/work/p", "TELEGRAM_CHAT_ID": "42"})
    (server,) = parsed.servers
    assert server.command == "/work/p/.venv/Scripts/python.exe"
    assert dict(server.env) == {
        "NVIDIA_API_KEY": "",
        "TELEGRAM_BOT_TOKEN": "",
        "TELEGRAM_CHAT_ID": "42",
        "MCP_ALLOW_TELEGRAM_SEND": "true",
        "CNN_FNG_CACHE_TTL_SECONDS": "300",
    }
    unset = read(FNG)
    assert unset.servers[0].command == "./.venv/Scripts/python.exe"


def test_an_unset_variable_without_default_stops_only_its_server() -> None:
    parsed = read(ZERODAI)
    assert [s.name for s in parsed.servers] == ["0dai", "filesystem"]
    (problem,) = parsed.problems
    assert problem.name == "github"
    assert problem.line() == (
        "MCP server 'github' in .mcp.json: ${GITHUB_TOKEN} (in env.GITHUB_TOKEN) is not set and "
        "has no default; set it in the environment seri runs in, or write "
        "${GITHUB_TOKEN:-default}"
    )
    with_token = read(ZERODAI, {"GITHUB_TOKEN": "ghp_x"})
    assert [s.name for s in with_token.servers] == ["0dai", "github", "filesystem"]


def test_a_url_alone_means_http_and_an_entry_with_neither_is_a_problem() -> None:
    parsed = read(SWELL)
    (server,) = parsed.servers
    assert (server.name, server.transport, server.url) == (
        "github",
        HTTP,
        "https://api.githubcopilot.com/mcp/",
    )
    (problem,) = parsed.problems
    assert problem.name == "supabase"
    assert 'give "command"' in problem.message


def test_claude_docs_http_entry_expands_url_and_headers() -> None:
    parsed = read(CLAUDE_DOCS_HTTP, {"API_KEY": "k-123"})
    (server,) = parsed.servers
    assert server.url == "https://api.example.com/mcp"
    assert server.headers == (("Authorization", "Bearer k-123"),)
    # The digest is of the entry as written: the key's value is not in it.
    assert server.digest == read(CLAUDE_DOCS_HTTP, {"API_KEY": "other"}).servers[0].digest
    assert "k-123" not in server.shown and "${API_KEY}" in server.shown


def test_the_official_readme_entry_runs_as_written(mcp_servers: Servers, tmp_path: Path) -> None:
    """modelcontextprotocol/servers src/everything/README.md: the entry people copy, verbatim.
    npx finds the package in the project's node_modules (here the tests' install), so nothing
    is downloaded."""
    readme_entry = """{
      "mcpServers": {
        "everything": {
          "command": "npx",
          "args": [
            "-y",
            "@modelcontextprotocol/server-everything"
          ]
        }
      }
    }"""
    project = mcp_servers.everything.parents[2]  # .cache/mcp/npm, which has node_modules
    parsed = servers_from_document(json.loads(readme_entry), parent_environment(), ".mcp.json")
    configs: tuple[McpServerConfig, ...] = parsed.servers
    started = time.monotonic()
    with McpHub(configs, parent_env=parent_environment(), project_dir=project) as hub:
        (status,) = hub.wait_ready(60)
        assert status.state == "ready", status
        assert time.monotonic() - started < 30
        outcome = hub.call("mcp__everything__echo", {"message": "copied from a README"})
    assert outcome.text == "Echo: copied from a README"
