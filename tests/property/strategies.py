"""Hypothesis strategies shared by the tests: histories of a session, in the shapes the tests
need (whole messages with large payloads, small paired histories, file-tool histories,
histories of mixed character classes, plain message lists, valid wire histories, and
``(role, tokens)`` entries for the cut rule). One place, so a new test reuses them instead of
writing its own ``histories``."""

from __future__ import annotations

import json

from hypothesis import strategies as st

from seri.pure.session.records import Message, Role, ToolCall, assistant, system, tool_result, user

# A stored history as the cut rule sees it: each message's role and token estimate.
Entry = tuple[Role, int]

# --- whole messages, with payloads from a few characters to tens of thousands -------------

words = st.text(alphabet="abcdefghij klmnop\n", min_size=1, max_size=60)


@st.composite
def texts(draw: st.DrawFn, most: int = 6_000) -> str:
    """A text of some length: a few words repeated, so sizes vary widely but cheaply."""
    unit = draw(words)
    return (unit * draw(st.integers(1, max(1, most // len(unit)))))[:most]


@st.composite
def histories_with_payloads(draw: st.DrawFn, content_most: int = 3_000) -> list[Message]:
    """User turns, answers, and assistant messages with parallel calls and their results;
    a call's arguments carry up to ``content_most`` characters of content."""
    history: list[Message] = []
    for turn in range(draw(st.integers(1, 14))):
        history.append(Message(role="user", text=f"task {turn}: " + draw(texts(800))))
        for step in range(draw(st.integers(0, 3))):
            calls = tuple(
                ToolCall(
                    f"c{turn}_{step}_{n}",
                    draw(st.sampled_from(["read_file", "bash", "write_file"])),
                    json.dumps(
                        {"path": f"/p/src/f{turn}_{n}.py", "content": draw(texts(content_most))}
                    ),
                )
                for n in range(draw(st.integers(1, 3)))
            )
            history.append(Message(role="assistant", text=draw(texts(300)), tool_calls=calls))
            history += [
                Message(
                    role="tool",
                    text=draw(texts(20_000)),
                    tool_call_id=call.id,
                    tool_name=call.name,
                )
                for call in calls
            ]
        history.append(Message(role="assistant", text=f"done {turn}"))
    return history


# --- valid wire histories: calls answered right after, reasoning details -------------------

TEXT = st.text(max_size=40)
NAMES = st.from_regex(r"[a-z][a-z_]{0,19}", fullmatch=True)
DETAILS = st.lists(
    st.one_of(
        st.builds(
            lambda text, sig: {
                "type": "reasoning.text",
                "text": text,
                "signature": sig,
                "format": "anthropic-claude-v1",
                "index": 0,
            },
            TEXT,
            TEXT,
        ),
        st.builds(lambda s: {"type": "reasoning.summary", "summary": s}, TEXT),
        st.builds(lambda d: {"type": "reasoning.encrypted", "data": d, "id": "r1"}, TEXT),
    ),
    max_size=3,
)
ARGUMENTS = st.dictionaries(NAMES, st.one_of(TEXT, st.integers(), st.booleans()), max_size=3)


@st.composite
def valid_wire_histories(draw: st.DrawFn) -> tuple[Message, ...]:
    """A valid history: system, then user turns; tool calls answered right after, each once."""
    messages: list[Message] = [system(draw(TEXT))] if draw(st.booleans()) else []
    counter = 0
    for _ in range(draw(st.integers(1, 4))):
        messages.append(user(draw(TEXT)))
        for _ in range(draw(st.integers(0, 3))):
            calls = []
            for _ in range(draw(st.integers(0, 3))):
                counter += 1
                args = json.dumps(draw(ARGUMENTS))
                calls.append(ToolCall(id=f"call_{counter}", name=draw(NAMES), arguments=args))
            details = draw(DETAILS)
            messages.append(
                Message(
                    role="assistant",
                    text=draw(TEXT),
                    reasoning=draw(TEXT),
                    reasoning_details=json.dumps(details, ensure_ascii=False, separators=(",", ":"))
                    if details
                    else "",
                    tool_calls=tuple(calls),
                )
            )
            answers = [tool_result(call, draw(TEXT)) for call in calls]
            messages.extend(draw(st.permutations(answers)))
            if not calls:
                break
    return tuple(messages)


# --- (role, tokens) entries -------------------------------------------------------------

tokens = st.integers(min_value=0, max_value=12_000)


@st.composite
def entry_groups(draw: st.DrawFn) -> list[Entry]:
    """One user message, one plain assistant message, or an assistant message with calls."""
    kind = draw(st.sampled_from(["user", "assistant", "calls"]))
    if kind == "user":
        return [("user", draw(tokens))]
    if kind == "assistant":
        return [("assistant", draw(tokens))]
    results = draw(st.integers(min_value=1, max_value=4))
    head: Entry = ("assistant", draw(tokens))
    return [head, *(("tool", draw(tokens)) for _ in range(results))]


@st.composite
def token_histories(draw: st.DrawFn) -> tuple[list[Entry], bool]:
    """A stored history, sometimes opening with an earlier recap (a user message)."""
    starts_with_recap = draw(st.booleans())
    entries: list[Entry] = [("user", draw(tokens))] if starts_with_recap else []
    for group in draw(st.lists(entry_groups(), max_size=40)):
        entries.extend(group)
    return entries, starts_with_recap


# --- small paired histories: tasks of parallel calls, each answered right after -----------


@st.composite
def small_paired_histories(draw: st.DrawFn) -> list[Message]:
    """Valid histories: tasks of turns with parallel calls, each answered right after, with
    payloads of a few hundred characters (cheap enough for many examples)."""
    history: list[Message] = []
    for task in range(draw(st.integers(1, 6))):
        history.append(Message(role="user", text=f"task {task} " + "x" * draw(st.integers(0, 400))))
        for turn in range(draw(st.integers(0, 3))):
            calls = tuple(
                ToolCall(f"{task}.{turn}.{k}", "glob", "{}") for k in range(draw(st.integers(1, 3)))
            )
            history.append(Message(role="assistant", tool_calls=calls))
            history.extend(
                Message(
                    role="tool",
                    text="r" * draw(st.integers(0, 300)),
                    tool_call_id=c.id,
                    tool_name="glob",
                )
                for c in calls
            )
        history.append(Message(role="assistant", text="done"))
    return history


# --- file-tool histories: which paths the calls read and wrote ----------------------------

path_names = st.sampled_from(["a.py", "b.py", "src/c.py", "d/e.md", "README.md", "f g.txt"])
file_tool_names = st.sampled_from(["read_file", "write_file", "edit", "bash", "grep"])


@st.composite
def file_tool_histories(draw: st.DrawFn) -> list[Message]:
    """A task of turns whose calls each name one ``path``, every call answered "ok"."""
    messages: list[Message] = [user("go")]
    for turn in range(draw(st.integers(min_value=0, max_value=6))):
        calls = tuple(
            ToolCall(f"c{turn}_{i}", draw(file_tool_names), json.dumps({"path": draw(path_names)}))
            for i in range(draw(st.integers(min_value=1, max_value=3)))
        )
        messages.append(assistant("", calls))
        messages.extend(tool_result(call, "ok") for call in calls)
    return messages


# --- mixed character classes: prose, code and JSON, Cyrillic, CJK, emoji ------------------

PROSE = "the quick brown fox jumps over a lazy dog\n  "
CODE = '{"id": 42, "items": [1, 2, 3]}; x[i] = f(y) -> 0.5 + 7 * 9;\n'
WIDE = "日本語のテキスト、中文文本。한국어 привет мир ёж café 🙂"
mixed_texts = st.text(alphabet=st.sampled_from(PROSE + CODE + WIDE), max_size=2_000) | st.text(
    max_size=300
)


@st.composite
def mixed_class_histories(draw: st.DrawFn) -> list[Message]:
    """Messages of mixed classes: texts, thinking and tool arguments (not paired)."""
    found = []
    for n in range(draw(st.integers(1, 12))):
        calls = tuple(
            ToolCall(id=f"c{n}_{k}", name="bash", arguments=draw(mixed_texts))
            for k in range(draw(st.integers(0, 2)))
        )
        role = draw(st.sampled_from(["user", "assistant", "tool"]))
        found.append(
            Message(
                role=role,
                text=draw(mixed_texts),
                reasoning=draw(mixed_texts) if role == "assistant" else "",
                tool_calls=calls if role == "assistant" else (),
            )
        )
    return found


# --- plain message lists: role and text (and kind), no calls ------------------------------


def plain_messages(
    texts: st.SearchStrategy[str],
    *,
    kinds: st.SearchStrategy[str] | None = None,
    max_size: int,
) -> st.SearchStrategy[list[Message]]:
    """Lists of user, assistant and tool messages with no calls: what a rule over roles and
    kinds (cache breakpoints, the compaction contract) reads."""
    roles = st.sampled_from(("user", "assistant", "tool"))
    if kinds is None:
        message = st.builds(Message, role=roles, text=texts)
    else:
        message = st.builds(Message, role=roles, text=texts, kind=kinds)
    return st.lists(message, max_size=max_size)
