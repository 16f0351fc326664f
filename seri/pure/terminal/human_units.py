"""Numbers as a person reads them at a glance: 84k tokens, 1.2 KB, 3.4 s, $0.0123."""

from __future__ import annotations


def tokens_short(count: int) -> str:
    """950, 8.4k, 84k, 1.2M: three significant figures at most."""
    if count < 1000:
        return str(count)
    for divisor, unit in ((1_000_000, "M"), (1000, "k")):
        if count >= divisor:
            value = count / divisor
            text = f"{value:.1f}" if value < 10 else f"{value:.0f}"
            return text.removesuffix(".0") + unit
    return str(count)  # unreachable: every count >= 1000 has a unit


def bytes_short(count: int) -> str:
    if count < 1024:
        return f"{count} B"
    value = float(count)
    for unit in ("KB", "MB", "GB"):
        value /= 1024
        if value < 1024 or unit == "GB":
            return f"{value:.1f} {unit}"
    return f"{count} B"  # unreachable


def seconds_short(seconds: float) -> str:
    """0.4 s, 12 s, 3 min 05 s."""
    if seconds < 10:
        return f"{seconds:.1f} s"
    whole = int(seconds)
    if whole < 60:
        return f"{whole} s"
    return f"{whole // 60} min {whole % 60:02d} s"


def cost_text(usd: float) -> str:
    """Dollars with enough digits to tell small calls apart: $0.0012, $1.23."""
    if usd < 1:
        return f"${usd:.4f}"
    return f"${usd:.2f}"


def plural(count: int, noun: str) -> str:
    return f"{count} {noun}" + ("" if count == 1 else "s")
