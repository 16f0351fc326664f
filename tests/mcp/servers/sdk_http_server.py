"""A stateless-era (2026-07-28) MCP server over streamable HTTP, built on the official SDK.

Run with the Python of .cache/mcp/py (which has ``mcp`` 2.3.0), never seri's own:
``python sdk_http_server.py PORT``. It binds 127.0.0.1 only. Dual-era like every server of
that SDK, so the same endpoint also serves the ``initialize`` handshake.

``region_info`` marks its ``region`` parameter with ``x-mcp-header``: the SDK checks that the
``Mcp-Param-Region`` header seri sends matches the body (and rejects the call with -32020 if
it is missing or wrong), so the test exercises the spec's header mirroring against the
reference implementation.
"""

from __future__ import annotations

import sys
from typing import Annotated

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

app = MCPServer("seri-test-sdk", instructions="A small server for seri's tests.")


@app.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@app.tool()
def region_info(
    region: Annotated[str, Field(json_schema_extra={"x-mcp-header": "Region"})],
    detail: str = "short",
) -> str:
    """Describe a region; its name travels in the Mcp-Param-Region header too."""
    return f"region {region} ({detail})"


@app.tool()
def explode(reason: str) -> str:
    """Always fails, with the reason given."""
    raise ToolError(f"exploded: {reason}")


if __name__ == "__main__":
    app.run("streamable-http", host="127.0.0.1", port=int(sys.argv[1]))
