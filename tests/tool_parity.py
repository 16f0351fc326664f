"""What every built-in tool looks like from outside: the request's tool list, the permission
decisions over a matrix of policies and arguments, the recap kinds and the "always" rules.

The golden file ``tests/golden/tools/parity.json`` was written by this module running against
the code before tools became records (issue 17 item 2, issue 19); ``test_tool_parity`` checks the
records give the same answers. It uses only interfaces both versions have.
"""

from __future__ import annotations

import json
from typing import Any

from seri.pure.compaction.recap_paths import paths_touched
from seri.pure.permissions.approval import always_rules
from seri.pure.permissions.permission_policy import parse_policy
from seri.pure.permissions.permissions import decide
from seri.pure.session.records import Message, ToolCall
from seri.pure.tools.tool_definitions import select_tools
from seri.pure.tools.tool_specs import READ_ONLY, TOOL_NAMES

POLICIES: dict[str, dict[str, list[str]]] = {
    "default": {},
    "allow-all": {"allow": ["*"]},
    "allow-src": {"allow": ["write_file(src/**)", "edit(src/**)", "read_file(src/**)"]},
    "deny-env": {"deny": ["read_file(.env)", "grep(.env)", "glob(**/.env)"]},
    "ask-reads": {"ask": ["read_file", "grep", "glob"]},
    "allow-git": {"allow": ["bash(git *)", "task", "remember"]},
    "deny-all": {"deny": ["*"]},
}

ARGUMENTS: dict[str, list[dict[str, Any]]] = {
    "read_file": [{"path": "src/a.py"}, {"path": ".env"}, {"path": "/etc/passwd"}],
    "write_file": [
        {"path": "src/a.py", "content": "x"},
        {"path": ".git/hooks/pre-commit", "content": "x"},
    ],
    "edit": [
        {"path": "src/a.py", "old_string": "a", "new_string": "b"},
        {"path": "README.md", "old_string": "a", "new_string": "b"},
    ],
    "glob": [{"pattern": "**/*.py"}, {"pattern": "**/.env"}],
    "grep": [{"pattern": "x"}, {"pattern": "x", "path": ".env"}],
    "bash": [
        {"command": "git status"},
        {"command": "rm -rf build"},
        {"command": "echo hi > .git/config"},
    ],
    "task": [{"description": "d", "prompt": "p"}],
    "remember": [{"text": "t", "scope": "project"}],
}


def snapshot() -> dict[str, Any]:
    decisions = {}
    always = {}
    for policy_name, rules in POLICIES.items():
        policy = parse_policy(rules, project="/p")
        for tool, cases in ARGUMENTS.items():
            for i, args in enumerate(cases):
                verdict = decide(policy, tool, args, project="/p")
                key = f"{policy_name}/{tool}/{i}"
                decisions[key] = [verdict.action, verdict.rule, verdict.reason]
                always[key] = list(always_rules(policy, tool, args))
    recap = {}
    for tool in TOOL_NAMES:
        call = ToolCall("c1", tool, json.dumps({"path": "src/a.py"}))
        touched = paths_touched(
            (
                Message(role="assistant", text="", tool_calls=(call,)),
                Message(role="tool", text="ok", tool_call_id="c1", tool_name=tool),
            ),
            "/p",
        )
        recap[tool] = "read" if touched.read else "modified" if touched.modified else ""
    return {
        "request_tools": list(select_tools(TOOL_NAMES)),
        "read_only": list(READ_ONLY),
        "decisions": decisions,
        "always": always,
        "recap": recap,
    }


if __name__ == "__main__":
    print(json.dumps(snapshot(), indent=1, sort_keys=True, ensure_ascii=False))
