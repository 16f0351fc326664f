"""No module of seri/ is over 400 lines (issue 30, item 4).

A module that grows past the limit is split along its seams into modules named after what
they are about. Lines are physical lines, blank lines and comments included, as
``scripts/module_sizes.py`` counts them (``wc -l``): the size a reader faces.
"""

from __future__ import annotations

from scripts.module_sizes import sizes_in_tree

LIMIT = 400


def test_no_module_is_over_the_limit() -> None:
    over = {path: lines for path, lines in sizes_in_tree().items() if lines > LIMIT}
    assert not over, (
        f"over {LIMIT} lines: {over}; split each along its seams into modules named after "
        "what they are about"
    )
