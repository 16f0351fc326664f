"""On resume seri names the prompt files (AGENTS.md, rules, memory) that changed since the
session's prompt was frozen; nothing when none did."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from scripts.fake_model import FakeModel
from seri.pure.agent.prompt_drift import prompt_changes
from tests.conftest import RunSeri

KEY = "sk-or-v1-" + "d71f" * 16


def test_resume_names_the_prompt_files_that_changed(
    run_seri: RunSeri, project: Path, seri_home: Path
) -> None:
    (project / "AGENTS.md").write_text("Use tabs.\n")
    rules = project / ".seri" / "rules"
    rules.mkdir(parents=True)
    (rules / "old.md").write_text("Be brief.\n")
    with FakeModel([{"text": "ok", "repeat": 4}]) as fake:
        env = {"SERI_BASE_URL": fake.base_url, "OPENROUTER_API_KEY": KEY}
        assert run_seri("chat", "-p", "first", env=env).returncode == 0
        same = run_seri("chat", "--continue", "-p", "again", env=env)
        assert same.returncode == 0 and "prompt files changed" not in same.stderr
        (project / "AGENTS.md").write_text("Use spaces.\n")
        (rules / "old.md").unlink()
        (rules / "new.md").write_text("Be thorough.\n")
        (seri_home / "memory").mkdir(exist_ok=True)
        (seri_home / "memory" / "global.md").write_text("- the user is called Ada\n")
        changed = run_seri("chat", "--continue", "-p", "and now", env=env)
        assert changed.returncode == 0, changed.stderr
        assert (
            "prompt files changed: AGENTS.md (project) changed, rule new added, "
            "memory (global) added, rule old removed; this run reads them as they are now"
        ) in changed.stderr
        # The new hashes are the session's now: the next resume has nothing to say.
        quiet = run_seri("chat", "--continue", "-p", "last", env=env)
        assert "prompt files changed" not in quiet.stderr


labels = st.sampled_from(["seri", "AGENTS.md (project)", "rule a", "rule b", "memory (global)"])
hashes = st.dictionaries(labels, st.sampled_from(["1", "2", "3"]))


@given(hashes, hashes)
def test_every_difference_but_the_base_prompt_is_named_once(
    frozen: dict[str, str], now: dict[str, str]
) -> None:
    changes = prompt_changes(frozen, now)
    named = [change.rsplit(" ", 1)[0] for change in changes]
    assert len(named) == len(set(named)) and "seri" not in named
    differing = {k for k in frozen.keys() | now.keys() if frozen.get(k) != now.get(k)} - {"seri"}
    assert set(named) == differing
