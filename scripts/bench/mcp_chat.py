"""Start-up with MCP wired in: `seri --version`, `seri sessions` and `seri chat -p` without
servers, before (the `main` branch) and after (this tree), and `seri chat -p` with one and
three real servers from .cache/mcp (`make mcp-servers`).

    .venv/bin/python -m scripts.bench.mcp_chat [--runs N] [--before REF]

"Before" is REF's `seri/` package (git archive), run by the same interpreter and entry
script through PYTHONPATH, each tree with its own profile. Runs alternate between the trees.
A chat's time is spawn to exit of `seri chat -p hi` against the loopback fake model: with
servers, that includes starting them (the first model call waits for them) and stopping
them at the end.

Writes bench-results/mcp-chat.md and prints the same table.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from scripts.bench.common import REPO, RESULTS, SERI, log, run_timed, seri_env, stat
from scripts.fake_model import FakeModel
from tests.mcp.install import Unavailable, install

KEY = "sk-or-v1-" + "be9c" * 16


def before_tree(ref: str, into: Path) -> Path:
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", ref, "seri"], capture_output=True, check=True
    )
    into.mkdir(parents=True)
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    return into


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--before", default="main")
    options = parser.parse_args()
    servers = install()
    if isinstance(servers, Unavailable):
        raise SystemExit(f"bench: MCP servers not installed: {servers.reason}")
    work = Path(tempfile.mkdtemp(prefix="seri-bench-mcp-"))
    old = before_tree(options.before, work / "before")
    project = work / "project"
    project.mkdir()
    configs = {
        "one server": {"fs": {"command": str(servers.filesystem), "args": [str(project)]}},
        "three servers": {
            "fs": {"command": str(servers.filesystem), "args": [str(project)]},
            "everything": {"command": str(servers.everything)},
            "git": {"command": str(servers.git), "args": ["--repository", str(REPO)]},
        },
    }
    rows: list[tuple[str, str, str]] = []
    cpu_rows: list[tuple[str, str, str]] = []
    with FakeModel([{"text": "ok", "repeat": 100_000}]) as fake:

        def env(home: Path, tree: Path | None) -> dict[str, str]:
            extra = {"SERI_HOME": str(home), "SERI_BASE_URL": fake.base_url}
            extra |= {"OPENROUTER_API_KEY": KEY, "SERI_MODEL": "fake/model"}
            if tree is not None:
                extra["PYTHONPATH"] = str(tree)
            return seri_env(**extra)

        trees = {"before": (work / "home-before", old), "after": (work / "home-after", None)}
        for home, _ in trees.values():
            home.mkdir()
        commands = {
            "`seri --version`": ["--version"],
            "`seri chat -p hi`, no server": ["chat", "-p", "hi"],
            "`seri sessions`": ["sessions"],
        }
        for label, argv in commands.items():
            times: dict[str, list[float]] = {name: [] for name in trees}
            cpu: dict[str, list[float]] = {name: [] for name in trees}
            for _ in range(options.runs):
                for name, (home, tree) in trees.items():
                    timed = run_timed([SERI, *argv], env=env(home, tree), cwd=project)
                    if timed.returncode != 0:
                        raise SystemExit(f"bench: {label} ({name}) failed: {timed.stderr!r}")
                    times[name].append(timed.seconds)
                    cpu[name].append(timed.cpu)
            rows.append((label, stat(times["before"]).seconds(), stat(times["after"]).seconds()))
            cpu_rows.append((label, stat(cpu["before"]).seconds(), stat(cpu["after"]).seconds()))
            log(f"{label}: {rows[-1][1]} before, {rows[-1][2]} after")
        for label, servers_config in configs.items():
            home = work / f"home-{label.replace(' ', '-')}"
            home.mkdir()
            (home / "config.json").write_text(json.dumps({"mcpServers": servers_config}))
            times_with: list[float] = []
            cpu_with: list[float] = []
            for _ in range(max(3, options.runs // 3)):
                timed = run_timed([SERI, "chat", "-p", "hi"], env=env(home, None), cwd=project)
                if timed.returncode != 0 or b"MCP server" in timed.stderr:
                    raise SystemExit(f"bench: chat with {label} failed: {timed.stderr!r}")
                times_with.append(timed.seconds)
                cpu_with.append(timed.cpu)
            rows.append((f"`seri chat -p hi`, {label}", "", stat(times_with).seconds()))
            # The servers' own CPU is counted too (they are seri's children's children).
            cpu_rows.append((f"`seri chat -p hi`, {label}", "", stat(cpu_with).seconds()))
            log(f"chat with {label}: {rows[-1][2]}")
    modules = subprocess.run(
        [
            sys.executable,
            "-X",
            "importtime",
            "-c",
            "import seri.commands.chat, seri.runtime.terminal.chat_session",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stderr
    loaded = sorted({line.rsplit("|", 1)[-1].strip() for line in modules.splitlines()})
    mcp_modules = [name for name in loaded if name.startswith("seri.") and "mcp" in name]
    table = (
        _table("wall clock, median (p10–p90)", rows)
        + "\n"
        + _table("CPU time of the process and its children, median (p10–p90)", cpu_rows)
        + f"\nMCP modules a chat without servers imports: {', '.join(mcp_modules) or 'none'}\n"
    )
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "mcp-chat.md").write_text(table)
    print(table)


def _table(title: str, rows: list[tuple[str, str, str]]) -> str:
    lines = [
        f"| command ({title}) | before (main) | after |",
        "| --- | --- | --- |",
        *(f"| {label} | {before or '–'} | {after} |" for label, before, after in rows),
    ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
