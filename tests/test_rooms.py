"""The tree shows the architecture (issue 30, item 4): every module of seri/pure, seri/io and
seri/runtime lives in a room named after its domain, one name for one domain on every floor,
and tests/unit/ and tests/property/ are grouped by the same rooms."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
FLOORS = ("pure", "io", "runtime")
# The domains. A new one is a decision about the house: add it here, to README's map and to
# docs/layout.md.
ROOMS = frozenset(
    {
        "acp",
        "agent",
        "compaction",
        "extensions",
        "inputs",
        "mcp",
        "permissions",
        "provider",
        "session",
        "terminal",
        "tools",
        "trajectories",
    }
)


def _modules(floor: str) -> list[Path]:
    return sorted((REPO / "seri" / floor).rglob("*.py"))


def test_every_module_is_in_a_room_of_its_floor() -> None:
    outside = []
    for floor in FLOORS:
        base = REPO / "seri" / floor
        for module in _modules(floor):
            relative = module.relative_to(base)
            if relative == Path("__init__.py"):
                continue
            if len(relative.parts) < 2 or relative.parts[0] not in ROOMS:
                outside.append(str(module.relative_to(REPO)))
    assert not outside, (
        f"modules outside a room: {outside}; move each into the room of its domain "
        f"({', '.join(sorted(ROOMS))})"
    )


def test_every_room_says_what_it_holds() -> None:
    silent = []
    for floor in FLOORS:
        for room in sorted((REPO / "seri" / floor).iterdir()):
            if room.is_dir() and room.name in ROOMS:
                init = room / "__init__.py"
                if not init.is_file() or '"""' not in init.read_text(encoding="utf-8"):
                    silent.append(str(init.relative_to(REPO)))
    assert not silent, f"rooms without a docstring in __init__.py: {silent}"


def test_the_tests_are_grouped_by_the_same_rooms() -> None:
    # tests/unit/commands/ mirrors seri/commands/, the fourth floor.
    strays = [
        str(test.relative_to(REPO))
        for kind in ("unit", "property")
        for test in sorted((REPO / "tests" / kind).glob("*/test_*.py"))
        if test.parent.name not in ROOMS | {"commands"}
    ]
    loose_units = sorted((REPO / "tests" / "unit").glob("test_*.py"))
    loose_properties = sorted((REPO / "tests" / "property").glob("test_*.py"))
    assert not strays and not loose_units and not loose_properties, (
        strays,
        loose_units,
        loose_properties,
    )
