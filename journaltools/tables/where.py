"""One filter expression over the runs table: ``ls --where``, ``audit --where``, ``search --where``,
``load(..., where=)`` and the run browser's search box all read it here, with one grammar and one evaluator.

The grammar is a small part of Python's own expression grammar (docs/filter.md)::

    status == "error" and error_findings > 0 and model ~ "sonnet" and created > "2026-12-01"

The text is parsed by ``ast.parse(text, mode="eval")`` and only a short list of node kinds is accepted: ``and``,
``or``, ``not``, the comparisons ``== != < <= > >=`` (chained as Python chains them), ``in`` / ``not in`` a list of
values, ``is None`` / ``is not None``, column names and literal values. ``~`` (contains, any case) is the one
operator Python lacks: the tokenizer sees it, and a ``~`` that follows an operand is rewritten to ``@``, a binary
operator of the same width that Python parses and the filter otherwise refuses. Nothing is ever evaluated by
Python: the tree is compiled to a ``pyarrow.compute`` expression, and every caller filters with that one
expression (a table with ``filter``, a browser's rows through ``kept``), so the two can never disagree.

Unknown values follow SQL: a comparison with a null is null, ``not`` of null is null, and a run whose filter is
null is left out. A field that is not a column of the runs table, or a value of the wrong type for its column, is
an ``InvalidFilter`` naming the field and listing the columns.
"""

from __future__ import annotations

import ast
import difflib
import io
import keyword
import re
import tokenize
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Final

import pyarrow as pa
import pyarrow.compute as pc

from journaltools.errors import InvalidFilter
from journaltools.tables.schema import COST_COLUMNS, Tables, schema_of

__all__ = ["RunFilter", "filtered_tables", "parse_filter", "tables_of_runs", "where_filter"]

#: Lower-case spellings of the constants, for those who write JSON or SQL (a column of that name would win).
_WORD_CONSTANTS: Final[dict[str, object]] = {"true": True, "false": False, "null": None, "none": None}

#: The comparison operators, by the ``pyarrow.compute`` function each one is.
_COMPARISONS: Final[dict[type[ast.cmpop], Callable[[Any, Any], Any]]] = {
    ast.Eq: pc.equal,
    ast.NotEq: pc.not_equal,
    ast.Lt: pc.less,
    ast.LtE: pc.less_equal,
    ast.Gt: pc.greater,
    ast.GtE: pc.greater_equal,
}
#: The same comparison with its sides swapped (``5 < llm_calls`` is ``llm_calls > 5``).
_MIRRORED: Final[dict[type[ast.cmpop], type[ast.cmpop]]] = {
    ast.Eq: ast.Eq,
    ast.NotEq: ast.NotEq,
    ast.Lt: ast.Gt,
    ast.LtE: ast.GtE,
    ast.Gt: ast.Lt,
    ast.GtE: ast.LtE,
}
_ORDERINGS: Final = (ast.Lt, ast.LtE, ast.Gt, ast.GtE)

#: A duration as a person writes it: ``90s``, ``1.5h``, ``250ms``, ``2d``.
_DURATION: Final = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*(ms|s|m|h|d)\s*$")
_DURATION_UNITS: Final = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}


# -- the columns' kinds ------------------------------------------------------------------------------------------


def _kind_of(data_type: pa.DataType) -> str | None:
    """What a filter may do with a column of this type, by name (None: nothing, a list or a map)."""
    if pa.types.is_dictionary(data_type):
        return _kind_of(data_type.value_type)
    if pa.types.is_string(data_type) or pa.types.is_large_string(data_type):
        return "text"
    if pa.types.is_boolean(data_type):
        return "true/false"
    if pa.types.is_integer(data_type) or pa.types.is_floating(data_type):
        return "number"
    if pa.types.is_timestamp(data_type):
        return "time"
    if pa.types.is_duration(data_type):
        return "duration"
    return None


@dataclass(frozen=True, slots=True)
class _Field:
    name: str
    kind: str


@dataclass(frozen=True, slots=True)
class _Value:
    """A literal value as written (a string, a number, True/False, None)."""

    value: object


_Operand = _Field | _Value


# -- the filter --------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RunFilter:
    """A parsed filter: its text, the ``pyarrow.compute`` expression it compiles to over the runs table, and the
    columns it names. ``apply`` filters a runs table, ``kept`` says which of some rows (mappings of column to value,
    as ``Table.to_pylist`` gives them) pass: both evaluate the one expression."""

    text: str
    expression: pc.Expression
    fields: tuple[str, ...]
    schema: pa.Schema

    def apply(self, runs: pa.Table) -> pa.Table:
        """The rows of ``runs`` the filter keeps, in order (a null verdict leaves a run out)."""
        return runs.filter(self.expression)

    def kept(self, rows: Sequence[Mapping[str, Any]]) -> list[bool]:
        """For each row (column name → value; a missing column is null), whether the filter keeps it: the rows are
        made an Arrow table of the columns the filter names, and filtered by the same expression as ``apply``."""
        if not rows:
            return []
        columns = {name: self._column(name, [row.get(name) for row in rows]) for name in self.fields}
        columns[_POSITION] = pa.array(range(len(rows)), pa.int64())
        passed = set(pa.table(columns).filter(self.expression).column(_POSITION).to_pylist())
        return [position in passed for position in range(len(rows))]

    def _column(self, name: str, values: list[Any]) -> pa.Array:
        """The rows' values of one column as its Arrow type, or ``InvalidFilter`` when they cannot be (a narrower
        table's text where the runs table has times, say)."""
        data_type = self.schema.field(name).type
        try:
            return pa.array(values, data_type)
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, OverflowError):
            reason = f"these rows' {name} values are not of the runs table's type ({data_type})"
            raise InvalidFilter(reason, name) from None


#: The column ``kept`` numbers rows by (not a runs column: a filter cannot name it, it starts with two underscores).
_POSITION: Final = "__row"


def parse_filter(text: str, schema: pa.Schema | None = None) -> RunFilter:
    """``text`` parsed and compiled over ``schema`` (by default the runs table's, without the cost columns), or
    ``InvalidFilter`` saying what is wrong in one line: the syntax, an unknown field (with the columns that exist),
    a value of the wrong type for its column."""
    runs_schema = schema if schema is not None else schema_of("runs")
    if not text.strip():
        raise InvalidFilter("the filter is empty")
    compiler = _Compiler(runs_schema)
    try:
        tree = _parse(text)
        expression = compiler.predicate(tree.body)
    except (RecursionError, MemoryError):
        # Python's parser, or the compiler's walk, past its depth: thousands of nots or minus signs in a row.
        raise InvalidFilter(f"the filter is nested too deeply ({len(text):,} characters)") from None
    return RunFilter(text, expression, tuple(dict.fromkeys(compiler.named)), runs_schema)


def where_filter(where: str | RunFilter | None, *, priced: bool = False) -> RunFilter | None:
    """``where=`` as ``load`` and the audit take it: a filter's text (parsed over the runs table, with its cost
    columns when ``priced``), one already parsed, or None."""
    if where is None or isinstance(where, RunFilter):
        return where
    return parse_filter(where, schema_of("runs", priced=priced))


def filtered_tables(tables: Tables, run_filter: RunFilter | None) -> Tables:
    """``tables`` with ``runs`` filtered and every other table keeping the rows of the runs kept only (a finding
    that names no run, the source's own, is kept: it is about the source, not a run)."""
    if run_filter is None:
        return tables
    return _with_runs(tables, run_filter.apply(tables.runs))


def tables_of_runs(tables: Tables, runs: Collection[str]) -> Tables:
    """``tables`` kept to the rows of ``runs`` (ids; one the tables do not hold is ignored), as ``filtered_tables``
    keeps them: a cohort chosen run by run, not by an expression."""
    chosen = pa.array(sorted(runs), pa.string())
    return _with_runs(tables, tables.runs.filter(pc.is_in(pc.cast(tables.runs.column("run"), pa.string()), chosen)))


def _with_runs(tables: Tables, runs: pa.Table) -> Tables:
    """``tables`` with ``runs`` (some of its runs rows, in order) and every other table's rows of those runs."""
    if runs.num_rows == tables.runs.num_rows:
        return tables
    kept = pa.array(runs.column("run").to_pylist(), pa.string())
    parts: dict[str, pa.Table] = {}
    for name, table in tables.items():
        if name == "runs":
            parts[name] = runs
        elif not table.num_rows:
            parts[name] = table
        else:
            of_kept = pc.is_in(pc.cast(table.column("run"), pa.string()), value_set=kept)
            mask = pc.or_(of_kept, pc.is_null(table.column("run"))) if name == "findings" else of_kept
            parts[name] = table.filter(mask)
    return Tables(**parts)


# -- text to tree ------------------------------------------------------------------------------------------------


def _parse(text: str) -> ast.Expression:
    rewritten = _with_contains_operator(text)
    try:
        tree = ast.parse(rewritten, mode="eval")
    except SyntaxError as exc:
        where = f" at column {exc.offset}" if exc.offset else ""
        raise InvalidFilter(f"{exc.msg}{where} of {_quoted(text)} (docs/filter.md has the grammar)") from None
    return tree


def _with_contains_operator(text: str) -> str:
    """``text`` with each ``~`` that follows an operand made ``@`` (the same width, so columns in messages still
    point into the text as written). A ``@``, an ``=`` or a ``~`` with nothing on its left is refused here."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError) as exc:
        raise InvalidFilter(f"{_token_error(exc)} in {_quoted(text)}") from None
    line_starts = [0]
    for line in text.splitlines(keepends=True):
        line_starts.append(line_starts[-1] + len(line))
    characters = list(text)
    previous: tokenize.TokenInfo | None = None
    for token in tokens:
        if token.type == tokenize.OP and token.string in ("@", "="):
            hint = "compare with ==" if token.string == "=" else "~ is contains"
            raise InvalidFilter(f"{token.string!r} at column {token.start[1] + 1} is not an operator here ({hint})")
        if token.type == tokenize.OP and token.string == "~":
            if previous is None or not _ends_operand(previous):
                raise InvalidFilter(f'~ at column {token.start[1] + 1} needs a field on its left: model ~ "sonnet"')
            characters[line_starts[token.start[0] - 1] + token.start[1]] = "@"
        if token.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT):
            previous = token
    return "".join(characters)


def _quoted(text: str) -> str:
    """The filter as an error message quotes it: whole when short, else its start (a message stays one short line)."""
    return repr(text) if len(text) <= _QUOTED_CHARS else repr(text[:_QUOTED_CHARS]) + "..."


_QUOTED_CHARS: Final = 120


def _token_error(exc: Exception) -> str:
    message = exc.args[0] if exc.args else str(exc)
    return "an unterminated string or bracket" if "EOF" in str(message) else str(message)


def _ends_operand(token: tokenize.TokenInfo) -> bool:
    if token.type == tokenize.NAME:
        return not keyword.iskeyword(token.string) or token.string in ("True", "False", "None")
    return token.type in (tokenize.NUMBER, tokenize.STRING) or token.string in (")", "]")


# -- tree to expression ------------------------------------------------------------------------------------------


class _Compiler:
    """Compiles the accepted nodes to one ``pyarrow.compute`` expression; anything else is an ``InvalidFilter``."""

    def __init__(self, schema: pa.Schema) -> None:
        self.schema = schema
        #: The columns a filter can name (a list or a map cannot be compared): what an error lists.
        self.columns: tuple[str, ...] = tuple(field.name for field in schema if _kind_of(field.type) is not None)
        self.named: list[str] = []

    def refuse(self, reason: str, field: str | None = None) -> InvalidFilter:
        """The error of ``reason``; one about a field (unknown, or a value of the wrong type for it) lists the
        columns a filter can name, so the one line says what would do."""
        return InvalidFilter(reason, field, self.columns if field is not None else ())

    # -- conditions (what and, or and not combine) --

    def predicate(self, node: ast.expr) -> pc.Expression:
        if isinstance(node, ast.BoolOp):
            parts = [self.predicate(value) for value in node.values]
            combined = parts[0]
            for part in parts[1:]:
                # Kleene logic, as SQL: null and false is false, null or true is true.
                combined = combined & part if isinstance(node.op, ast.And) else combined | part
            return combined
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            return ~self.predicate(node.operand)
        if isinstance(node, ast.Compare):
            return self.comparison(node)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
            return self.contains(node.left, node.right)
        if isinstance(node, ast.Name):
            operand = self.operand(node)
            if isinstance(operand, _Field):
                if operand.kind != "true/false":
                    raise self.refuse(
                        f"{operand.name} is a {operand.kind} column, not a condition: "
                        f"compare it ({operand.name} == ...)",
                        operand.name,
                    )
                return pc.field(operand.name)
        raise self.refuse(f'{_shown(node)} is not a condition: compare a column (status == "error")')

    def comparison(self, node: ast.Compare) -> pc.Expression:
        sides = [node.left, *node.comparators]
        parts = [self.pair(sides[i], op, sides[i + 1]) for i, op in enumerate(node.ops)]
        combined = parts[0]
        for part in parts[1:]:  # a < b < c is a < b and b < c, as Python reads it
            combined = combined & part
        return combined

    def pair(self, left_node: ast.expr, op: ast.cmpop, right_node: ast.expr) -> pc.Expression:
        if isinstance(op, (ast.In, ast.NotIn)):
            return self.membership(left_node, right_node, negated=isinstance(op, ast.NotIn))
        left, right = self.operand(left_node), self.operand(right_node)
        if isinstance(op, (ast.Is, ast.IsNot)):
            if not isinstance(left, _Field) or not (isinstance(right, _Value) and right.value is None):
                raise self.refuse("'is' only asks 'is None' or 'is not None' of a column")
            return pc.field(left.name).is_valid() if isinstance(op, ast.IsNot) else pc.field(left.name).is_null()
        op_type = type(op)
        if isinstance(left, _Value) and isinstance(right, _Field):
            left, right, op_type = right, left, _MIRRORED[op_type]
        if not isinstance(left, _Field):
            raise self.refuse(f"{_shown(left_node)} {_OP_TEXT[op_type]} {_shown(right_node)} compares no column")
        if isinstance(right, _Field):
            if right.kind != left.kind:
                raise self.refuse(
                    f"{left.name} (a {left.kind}) cannot be compared with {right.name} (a {right.kind})", left.name
                )
            self.check_ordering(left, op_type)
            return _COMPARISONS[op_type](pc.field(left.name), pc.field(right.name))
        if right.value is None:
            if op_type not in (ast.Eq, ast.NotEq):
                raise self.refuse(f"{left.name} cannot be ordered against None: ask {left.name} == None", left.name)
            return pc.field(left.name).is_null() if op_type is ast.Eq else pc.field(left.name).is_valid()
        self.check_ordering(left, op_type)
        return _COMPARISONS[op_type](pc.field(left.name), self.scalar(left, right.value))

    def check_ordering(self, field: _Field, op_type: type[ast.cmpop]) -> None:
        if field.kind == "true/false" and op_type in _ORDERINGS:
            raise self.refuse(f"{field.name} is true or false: compare it with == or !=", field.name)

    def membership(self, left_node: ast.expr, right_node: ast.expr, *, negated: bool) -> pc.Expression:
        left = self.operand(left_node)
        if isinstance(right_node, (ast.Name, ast.Constant)) and isinstance(left, _Value):
            contains = f"{_shown(right_node)} ~ {_shown(left_node)}"
            raise self.refuse(f"'in' takes a list of values; for contains write {contains}")
        if not isinstance(left, _Field):
            raise self.refuse(f"{_shown(left_node)} in ... names no column")
        if not isinstance(right_node, (ast.List, ast.Tuple)) or not right_node.elts:
            raise self.refuse(f'{left.name} in ... takes a list of values: {left.name} in ["a", "b"]', left.name)
        self.check_ordering(left, ast.Eq)
        # An equality per value, or'ed: a null column is null (left out, by in and by not in alike), as in SQL.
        combined: pc.Expression | None = None
        for element in right_node.elts:
            value = self.operand(element)
            if not isinstance(value, _Value) or value.value is None:
                raise self.refuse(f"the list after 'in' holds values only, never a column or None ({_shown(element)})")
            equal = pc.equal(pc.field(left.name), self.scalar(left, value.value))
            combined = equal if combined is None else combined | equal
        assert combined is not None  # the list is not empty
        return ~combined if negated else combined

    def contains(self, left_node: ast.expr, right_node: ast.expr) -> pc.Expression:
        left, right = self.operand(left_node), self.operand(right_node)
        if not isinstance(left, _Field):
            raise self.refuse(f"~ needs a column on its left: model ~ {_shown(right_node)}")
        if left.kind != "text":
            raise self.refuse(f"~ (contains) reads text, and {left.name} is a {left.kind} column", left.name)
        if not isinstance(right, _Value) or not isinstance(right.value, str):
            raise self.refuse(f'~ takes a text in quotes on its right: {left.name} ~ "sonnet"', left.name)
        return pc.match_substring(pc.field(left.name), right.value, ignore_case=True)

    # -- operands --

    def operand(self, node: ast.expr) -> _Operand:
        if isinstance(node, ast.Name):
            if node.id in self.schema.names:
                kind = _kind_of(self.schema.field(node.id).type)
                if kind is None:
                    raise self.refuse(f"{node.id} is a list or a map, which a filter cannot compare", node.id)
                self.named.append(node.id)
                return _Field(node.id, kind)
            if node.id.lower() in _WORD_CONSTANTS:
                return _Value(_WORD_CONSTANTS[node.id.lower()])
            raise self.unknown(node.id)
        if isinstance(node, ast.Constant) and isinstance(node.value, (str, int, float, bool, type(None))):
            return _Value(node.value)
        if (
            isinstance(node, ast.UnaryOp)
            and isinstance(node.op, (ast.USub, ast.UAdd))
            and isinstance(node.operand, ast.Constant)
            and isinstance(node.operand.value, (int, float))
            and not isinstance(node.operand.value, bool)
        ):
            number = node.operand.value
            return _Value(-number if isinstance(node.op, ast.USub) else number)
        raise self.refuse(f"{_shown(node)} is neither a column nor a value (docs/filter.md has the grammar)")

    def unknown(self, name: str) -> InvalidFilter:
        if name in COST_COLUMNS:
            reason = f"unknown field {name!r}: the cost columns are there only with prices (--prices, prices=)"
        else:
            near = difflib.get_close_matches(name, self.columns, n=1)
            hint = f"did you mean {near[0]}? " if near else ""
            reason = f'unknown field {name!r} ({hint}a text value is written in quotes: "{name}")'
        return self.refuse(reason, name)

    def scalar(self, field: _Field, value: object) -> pa.Scalar:
        """``value`` as a scalar of ``field``'s column, or ``InvalidFilter`` naming the field and what it takes."""
        data_type = self.schema.field(field.name).type
        if pa.types.is_dictionary(data_type):
            data_type = data_type.value_type
        converted = _converted(field.kind, value)
        if converted is None:
            raise self.refuse(
                f"{field.name} is a {field.kind} column and {value!r} is not {_TAKES[field.kind]}", field.name
            )
        try:
            if field.kind == "number":
                # The literal keeps its own type (1.5 against an integer column compares as 1.5, -1 against an
                # unsigned one is simply below every value): Arrow casts both sides to a common type.
                return pa.scalar(converted)
            return pa.scalar(converted, data_type)
        except (pa.ArrowInvalid, OverflowError) as exc:
            raise self.refuse(f"{value!r} cannot be a value of {field.name}: {exc}", field.name) from None


_TAKES: Final = {
    "text": "a text in quotes",
    "number": "a number",
    "true/false": "True or False",
    "time": 'a date or time in quotes ("2026-12-01", "2026-12-01T09:30:00Z")',
    "duration": 'a duration ("90s", "30m", "2h", "1d") or a number of seconds',
}

_OP_TEXT: Final[dict[type[ast.cmpop], str]] = {
    ast.Eq: "==",
    ast.NotEq: "!=",
    ast.Lt: "<",
    ast.LtE: "<=",
    ast.Gt: ">",
    ast.GtE: ">=",
}


def _converted(kind: str, value: object) -> object | None:
    """``value`` as the column kind holds it (a time as an aware datetime, a duration as a timedelta), or None when
    the value cannot be one."""
    if kind == "text":
        return value if isinstance(value, str) else None
    if kind == "true/false":
        return value if isinstance(value, bool) else None
    if kind == "number":
        return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None
    if kind == "time":
        return _moment(value) if isinstance(value, str) else None
    if kind == "duration":
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return timedelta(seconds=value)
        match = _DURATION.match(value) if isinstance(value, str) else None
        return timedelta(seconds=float(match[1]) * _DURATION_UNITS[match[2]]) if match else None
    return None


def _moment(text: str) -> datetime | None:
    """An ISO 8601 date or time as an aware UTC datetime (a time that names no zone is UTC, as the tables' are)."""
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        return None
    return (moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)).astimezone(UTC)


def _shown(node: ast.expr) -> str:
    return ast.unparse(node).replace("@", "~")
