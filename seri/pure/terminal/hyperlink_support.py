"""Whether a terminal draws OSC 8 hyperlinks, from its environment.

A terminal that does not know OSC 8 mostly ignores it, but not always (some print the
URL's bytes), and a link whose URL cannot be seen is no use there. So seri makes one only
where the terminal is known to support it, by the rules of the supports-hyperlinks
package that Claude Code's links follow: ``FORCE_HYPERLINK`` decides when set (``0`` no,
anything else yes); not in CI; iTerm2 3.1+, WezTerm, VS Code 1.72+, Ghostty, VTE 0.50+
(GNOME Terminal, Tilix), Windows Terminal, kitty, Alacritty, foot and Konsole. Inside
tmux or screen (``TERM_PROGRAM=tmux``, ``TERM=screen*``) the outer terminal is unknown,
so the answer shows the URL after the text instead.
"""

from __future__ import annotations

from collections.abc import Mapping

_SINCE = {"iTerm.app": (3, 1), "WezTerm": (20200620,), "vscode": (1, 72)}
_ALWAYS_PROGRAMS = {"ghostty"}
_TERMS = {"xterm-kitty", "alacritty", "xterm-ghostty", "foot", "foot-extra"}


def supports_hyperlinks(env: Mapping[str, str]) -> bool:
    forced = env.get("FORCE_HYPERLINK")
    if forced is not None:
        return forced.strip() != "0"
    if env.get("CI") or env.get("TEAMCITY_VERSION"):
        return False
    program = env.get("TERM_PROGRAM", "")
    if program in _SINCE:
        return _version(env.get("TERM_PROGRAM_VERSION", "")) >= _SINCE[program]
    if program in _ALWAYS_PROGRAMS:
        return True
    if program in ("tmux", "screen") or env.get("TERM", "").startswith(("screen", "tmux")):
        return False
    if _version(env.get("VTE_VERSION", "")) >= (5000,):  # 0.50.0 is written 5000
        return True
    if env.get("WT_SESSION") or env.get("KONSOLE_VERSION"):
        return True
    return env.get("TERM", "") in _TERMS


def _version(text: str) -> tuple[int, ...]:
    """``3.4.19`` as (3, 4, 19); what is not a number ends it (an empty version is ())."""
    parts: list[int] = []
    for part in text.split("."):
        digits = ""
        for char in part:
            if not char.isdigit():
                break
            digits += char
        if not digits:
            break
        parts.append(int(digits))
        if len(digits) != len(part):
            break
    return tuple(parts)
