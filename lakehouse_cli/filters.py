"""`--filter` expressions, e.g. ``dt = '2024-05-14' and amount > 10``, parsed into table_format's DNF filter.

Grammar (keywords case-insensitive; ``and`` binds tighter than ``or``; parentheses group)::

    expr  := conj ("or" conj)*
    conj  := term ("and" term)*
    term  := "(" expr ")" | column op value | column "is" ["not"] "null"
           | column ["not"] "in" "(" value ("," value)* ")" | column "starts" "with" value
    op    := = | == | != | <> | < | <= | > | >=
    value := 'text' | "text" | number | true | false
    column:= name | `any name`

Numbers take the column's type (an integer, a float or an exact decimal); text is converted by table_format
(dates, timestamps, decimals from their ISO or plain text). Several ``--filter`` options are ANDed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from decimal import Decimal
from typing import Any

import pyarrow as pa

from lakehouse_cli.context import UserError

MAX_CONJUNCTIONS = 256

_TOKEN = re.compile(
    r"""\s*(?:
        (?P<string>'(?:[^']|'')*'|"(?:[^"]|"")*")
      | (?P<number>[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)
      | (?P<op><=|>=|<>|!=|==|=|<|>)
      | (?P<punct>[(),])
      | (?P<quoted>`[^`]+`)
      | (?P<word>[A-Za-z_][A-Za-z0-9_$.]*)
    )""",
    re.VERBOSE,
)
_Condition = tuple[Any, ...]
_Dnf = list[list[_Condition]]


class _Token:
    __slots__ = ("kind", "text", "pos")

    def __init__(self, kind: str, text: str, pos: int) -> None:
        self.kind, self.text, self.pos = kind, text, pos

    def is_word(self, *words: str) -> bool:
        return self.kind == "word" and self.text.lower() in words


def _tokenize(text: str) -> list[_Token]:
    tokens = []
    pos = 0
    while pos < len(text):
        if text[pos:].strip() == "":
            break
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            start, k = pos, len(tokens)
            while k and tokens[k - 1].kind in ("number", "word") and tokens[k - 1].pos + len(tokens[k - 1].text) == start:
                k -= 1  # 2024/05/16, 2024-05-16T10:00: the run of characters began with a number or a word
                start = tokens[k].pos
            if k and (tokens[k - 1].kind == "op" or tokens[k - 1].text in ("(", ",")) and start < pos:
                raise _quote_hint(text, start)
            raise _error(text, pos, "unexpected character")
        kind = m.lastgroup
        assert kind is not None
        tokens.append(_Token(kind, m.group(kind), m.start(kind)))
        pos = m.end()
    return tokens


def _error(text: str, pos: int, message: str) -> UserError:
    return UserError(f"--filter {text!r}: {message} at position {pos + 1}")


def _quote_hint(text: str, start: int) -> UserError:
    """An unquoted value such as ``2024-05-16`` (a run of characters up to a space, ``,`` or ``)``): the error
    shows the filter with it quoted."""
    end = start
    while end < len(text) and not text[end].isspace() and text[end] not in ",)":
        end += 1
    raw = text[start:end]
    fixed = text[:start] + "'" + raw.replace("'", "''") + "'" + text[end:]
    return UserError(f"--filter {text!r}: unquoted value {raw} at position {start + 1}: quote text, dates and "
                     f"timestamps, e.g. --filter \"{fixed}\"")


class _Parser:
    def __init__(self, text: str, schema: pa.Schema) -> None:
        self.text = text
        self.schema = schema
        self.tokens = _tokenize(text)
        self.i = 0

    def parse(self) -> _Dnf:
        if not self.tokens:
            raise UserError("--filter is empty")
        dnf = self._expr()
        if self.i < len(self.tokens):
            raise self._fail("expected 'and', 'or' or the end")
        return dnf

    # ---- token helpers
    def _peek(self) -> _Token | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def _next(self, what: str) -> _Token:
        token = self._peek()
        if token is None:
            raise _error(self.text, len(self.text), f"expected {what}")
        self.i += 1
        return token

    def _fail(self, message: str) -> UserError:
        token = self._peek()
        return _error(self.text, token.pos if token else len(self.text), message)

    def _expect_word(self, *words: str) -> None:
        token = self._next(" or ".join(repr(w) for w in words))
        if not token.is_word(*words):
            self.i -= 1
            raise self._fail(f"expected {' or '.join(repr(w) for w in words)}")

    def _expect_punct(self, char: str) -> None:
        token = self._next(repr(char))
        if token.kind != "punct" or token.text != char:
            self.i -= 1
            raise self._fail(f"expected {char!r}")

    # ---- grammar
    def _expr(self) -> _Dnf:
        dnf = self._conj()
        while (token := self._peek()) is not None and token.is_word("or"):
            self.i += 1
            dnf = dnf + self._conj()
            _check_size(dnf, self.text)
        return dnf

    def _conj(self) -> _Dnf:
        dnf = self._term()
        while (token := self._peek()) is not None and token.is_word("and"):
            self.i += 1
            dnf = and_dnf(dnf, self._term(), self.text)
        return dnf

    def _term(self) -> _Dnf:
        token = self._next("a condition")
        if token.kind == "punct" and token.text == "(":
            dnf = self._expr()
            self._expect_punct(")")
            return dnf
        if token.kind == "quoted":
            column = token.text[1:-1]
        elif token.kind == "word" and not token.is_word("and", "or", "not", "in", "is", "null"):
            column = token.text
        else:
            self.i -= 1
            raise self._fail("expected a column name")
        return [[self._condition(column)]]

    def _condition(self, column: str) -> _Condition:
        token = self._next(f"an operator after {column!r}")
        if token.kind == "op":
            return (column, token.text, self._value(column))
        if token.is_word("is"):
            following = self._peek()
            negated = following is not None and following.is_word("not")
            if negated:
                self.i += 1
            self._expect_word("null")
            return (column, "is not null" if negated else "is null")
        if token.is_word("not"):
            self._expect_word("in")
            return (column, "not in", self._values(column))
        if token.is_word("in"):
            return (column, "in", self._values(column))
        if token.is_word("starts"):
            self._expect_word("with")
            return (column, "starts_with", self._value(column))
        self.i -= 1
        raise self._fail(f"expected an operator after {column!r} (=, !=, <, <=, >, >=, in, not in, is null, "
                         "starts with)")

    def _values(self, column: str) -> list[Any]:
        self._expect_punct("(")
        values = [self._value(column)]
        while (token := self._peek()) is not None and token.kind == "punct" and token.text == ",":
            self.i += 1
            values.append(self._value(column))
        self._expect_punct(")")
        return values

    def _value(self, column: str) -> Any:
        token = self._next(f"a value for {column!r}")
        if token.kind == "string":
            quote = token.text[0]
            return token.text[1:-1].replace(quote * 2, quote)
        following = self._peek()
        if (token.kind in ("number", "word") and following is not None and following.kind in ("number", "word")
                and following.pos == token.pos + len(token.text)):
            raise _quote_hint(self.text, token.pos)  # 2024-05-16, 10:30, 1.2.3: one unquoted value
        if token.kind == "number":
            return _number(token.text, self._type_of(column))
        if token.is_word("true", "false"):
            return token.text.lower() == "true"
        if token.is_word("null"):
            self.i -= 1
            raise self._fail(f"null never equals anything; use '{column} is null'")
        if token.kind == "word" and not token.is_word("and", "or", "not", "in", "is"):
            raise _quote_hint(self.text, token.pos)  # status = paid
        self.i -= 1
        raise self._fail(f"expected a value for {column!r} (quote text: '...')")

    def _type_of(self, column: str) -> pa.DataType | None:
        index = self.schema.get_field_index(column)
        return self.schema.field(index).type if index >= 0 else None


def _number(text: str, arrow_type: pa.DataType | None) -> Any:
    """A numeric literal in the column's type: exact decimals stay exact, integers stay integers."""
    is_integral = re.fullmatch(r"[-+]?\d+", text) is not None
    if arrow_type is not None and pa.types.is_floating(arrow_type):
        return float(text)
    if arrow_type is not None and pa.types.is_decimal(arrow_type):
        return Decimal(text)
    if is_integral:
        return int(text)
    return Decimal(text) if arrow_type is not None and pa.types.is_integer(arrow_type) else float(text)


def _check_size(dnf: _Dnf, text: str) -> None:
    if len(dnf) > MAX_CONJUNCTIONS:
        raise UserError(f"--filter {text!r}: more than {MAX_CONJUNCTIONS} alternatives once expanded; simplify it")


def and_dnf(left: _Dnf, right: _Dnf, text: str) -> _Dnf:
    out = [a + b for a in left for b in right]
    _check_size(out, text)
    return out


def parse_filters(texts: Sequence[str], schema: pa.Schema) -> list[list[_Condition]] | None:
    """The ANDed ``--filter`` expressions as a DNF (a list of conjunctions), None without any."""
    dnf: _Dnf | None = None
    for text in texts:
        parsed = _Parser(text, schema).parse()
        dnf = parsed if dnf is None else and_dnf(dnf, parsed, " and ".join(texts))
    return dnf
