"""Filter expressions over the runs table made at random, each with a reference reading of it in plain Python
(SQL's logic: None is unknown), for the tests of ``tables.where`` and of the run browser's search box."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

Row = dict[str, Any]

COLUMNS = {"status": "text", "model": "text", "llm_calls": "number", "resumes": "number", "interactive": "bool"}
TEXTS = ["completed", "error", "open", "invalid", "sonnet", "haiku", "claude-sonnet-4-6", "a"]


def _compare(op: str, left: Any, right: Any) -> bool | None:
    if left is None or right is None:
        return None
    return {"==": left == right, "!=": left != right, "<": left < right, "<=": left <= right, ">": left > right,
            ">=": left >= right}[op]  # fmt: skip


@st.composite
def conditions(draw: st.DrawFn, depth: int = 0) -> tuple[str, Any]:
    """A filter's text and a reference reading of it (row → True, False or None), built side by side."""
    shape = draw(st.sampled_from(["leaf"] * 3 + (["and", "or", "not"] if depth < 3 else [])))
    if shape in ("and", "or"):
        (left_text, left), (right_text, right) = draw(conditions(depth + 1)), draw(conditions(depth + 1))

        def both(row: Row, shape: str = shape) -> bool | None:
            a, b = left(row), right(row)
            if shape == "and":
                return False if a is False or b is False else (None if a is None or b is None else True)
            return True if a is True or b is True else (None if a is None or b is None else False)

        return f"({left_text} {shape} {right_text})", both
    if shape == "not":
        inner_text, inner = draw(conditions(depth + 1))
        return f"not ({inner_text})", lambda row: None if inner(row) is None else not inner(row)
    column = draw(st.sampled_from(sorted(COLUMNS)))
    kind = COLUMNS[column]
    if kind == "bool":
        value = draw(st.booleans())
        return f"{column} == {value}", lambda row: None if row[column] is None else row[column] == value
    if kind == "number":
        op = draw(st.sampled_from(["==", "!=", "<", "<=", ">", ">="]))
        number = draw(st.integers(-1, 12) | st.floats(-1, 12, allow_nan=False).map(lambda x: round(x, 2)))
        return f"{column} {op} {number!r}", lambda row: _compare(op, row[column], number)
    op = draw(st.sampled_from(["==", "!=", "<", ">=", "~", "in"]))
    text = draw(st.sampled_from(TEXTS))
    if op == "~":
        return f'{column} ~ "{text.upper()}"', lambda row: None if row[column] is None else text in row[column].lower()
    if op == "in":
        values = draw(st.lists(st.sampled_from(TEXTS), min_size=1, max_size=3))
        return f"{column} in {values!r}", lambda row: None if row[column] is None else row[column] in values
    return f'{column} {op} "{text}"', lambda row: _compare(op, row[column], text)
