"""A tool call's arguments checked against its tool's record (``seri.pure.tools.tool_specs``).

The same records give the schemas the model is promised, so what seri promises and what it
accepts cannot drift apart. Validation is deliberately strict (unknown parameters, wrong
types, out-of-range numbers are errors) and every error is a sentence the model can act on;
nothing is executed for a call that fails it.
"""

from __future__ import annotations

import math
import re
from typing import Any

from seri.pure.inputs import json_text
from seri.pure.session.records import ToolCall
from seri.pure.tools.tool_specs import (
    TOOL_NAMES,
    Param,
    ParamType,
    ToolSpec,
    parameters_of,
    spec_of,
)


def parse_arguments(call: ToolCall, spec: ToolSpec | None = None) -> dict[str, Any] | str:
    """The call's arguments as a dict, or an error text to send back to the model.

    ``spec`` is the tool's record (the built-in one of that name when not given). An
    optional parameter given as ``null`` counts as absent: models send that
    often and mean nothing by it. Defaults are not filled in here; the tool
    that runs applies them, so the recorded arguments stay as the model sent them.
    """
    spec = spec_of(call.name) if spec is None else spec
    if spec is None:
        return f"Unknown tool {call.name!r}. Available tools: {', '.join(TOOL_NAMES)}."
    raw = call.arguments.strip() or "{}"
    try:
        value = json_text.loads(raw)
    except ValueError as exc:
        return f"Arguments for {call.name} are not valid JSON ({exc}). Send a JSON object."
    if not isinstance(value, dict):
        return f"Arguments for {call.name} must be a JSON object, not {_json_type_name(value)}."
    if spec.schema:
        return _check_against_schema(spec, value)
    return _check_object(spec, value)


def _check_against_schema(spec: ToolSpec, value: dict[str, Any]) -> dict[str, Any] | str:
    """The top level of a server's schema: required names present, no unknown names when it
    forbids them, and the JSON type of each named argument. The server checks the rest."""
    schema = parameters_of(spec)
    properties = schema.get("properties")
    properties = properties if isinstance(properties, dict) else {}
    required = schema.get("required")
    required = [r for r in required if isinstance(r, str)] if isinstance(required, list) else []
    missing = [name for name in required if name not in value]
    if missing:
        return f"{spec.name} is missing required parameter(s): {', '.join(missing)}."
    if schema.get("additionalProperties") is False:
        unknown = sorted(set(value) - set(properties))
        if unknown:
            return (
                f"{spec.name} got unknown parameter(s) {', '.join(unknown)}; "
                f"its parameters are {', '.join(properties) or 'none'}."
            )
    for name, arg in value.items():
        declared = properties.get(name)
        expected = declared.get("type") if isinstance(declared, dict) else None
        if isinstance(expected, str) and not _json_type_matches(expected, arg):
            return (
                f"{spec.name}: parameter {name!r} must be {_article(expected)}, "
                f"got {_json_type_name(arg)}."
            )
    return value


def _json_type_matches(expected: str, value: object) -> bool:
    if expected in ("string", "boolean", "integer", "number"):
        return _has_type(expected, value)  # type: ignore[arg-type]  # one of ParamType
    if expected == "array":
        return isinstance(value, list)
    if expected == "object":
        return isinstance(value, dict)
    if expected == "null":
        return value is None
    return True


def _check_object(spec: ToolSpec, value: dict[str, Any]) -> dict[str, Any] | str:
    known = {p.name: p for p in spec.params}
    unknown = sorted(set(value) - set(known))
    if unknown:
        return (
            f"{spec.name} got unknown parameter(s) {', '.join(unknown)}; "
            f"its parameters are {', '.join(known)}."
        )
    args = {k: v for k, v in value.items() if not (v is None and not known[k].required)}
    missing = [p.name for p in spec.params if p.required and p.name not in args]
    if missing:
        return f"{spec.name} is missing required parameter(s): {', '.join(missing)}."
    for name, arg in args.items():
        problem = _check_value(known[name], arg)
        if problem:
            return f"{spec.name}: parameter {name!r} {problem}."
    return args


def _check_value(param: Param, value: object) -> str:
    """What is wrong with one argument, or "" if nothing is."""
    if not _has_type(param.type, value):
        return f"must be {_article(param.type)}, got {_json_type_name(value)}"
    if param.enum and value not in param.enum:
        return f"must be one of {', '.join(param.enum)}, got {value!r}"
    if param.non_empty and isinstance(value, str) and not value.strip():
        return "must not be empty"
    if isinstance(value, str) and _LONE_SURROGATE.search(value):
        found = _LONE_SURROGATE.search(value)
        assert found is not None
        return (
            f"must be valid Unicode text, but it holds a lone surrogate "
            f"(\\u{ord(found.group()):04x}) at character {found.start()}"
        )
    if isinstance(value, float) and not math.isfinite(value):
        return f"must be a finite number, got {value}"
    if isinstance(value, int | float) and not isinstance(value, bool):
        if param.minimum is not None and value < param.minimum:
            return f"must be at least {param.minimum:g}, got {value}"
        if param.maximum is not None and value > param.maximum:
            return f"must be at most {param.maximum:g}, got {value}"
    return ""


# JSON decodes a proper pair (\ud83d\ude00) into one character: what is left is a half.
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _has_type(expected: ParamType, value: object) -> bool:
    # bool is a subclass of int in Python, but JSON keeps them apart.
    if expected == "string":
        return isinstance(value, str)
    if expected == "boolean":
        return isinstance(value, bool)
    if isinstance(value, bool):
        return False
    if expected == "integer":
        return isinstance(value, int)
    return isinstance(value, int | float)


def _json_type_name(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


def _article(type_name: str) -> str:
    return f"an {type_name}" if type_name[0] in "aeiou" else f"a {type_name}"
