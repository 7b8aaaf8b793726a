"""Click parameter types: ages and instants, partition specs, sizes. A value that does not parse is a usage
error (exit code 2) naming the option."""

from __future__ import annotations

import datetime as dt
from typing import Any

import click

from table_format import TableFormatError, parse_duration, parse_memory_size


class AgeOrInstant(click.ParamType):
    """An age (``1d``, ``12h``, ``30min``, ``90s``, ``0``) or an ISO instant (``2024-05-14T08:00:00``, local time
    unless it has an offset)."""

    name = "AGE|INSTANT"

    def __init__(self, *, instants: bool = True) -> None:
        self.instants = instants

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, (dt.timedelta, dt.datetime)):
            return value
        text = str(value).strip()
        if self.instants and ("-" in text or "T" in text):
            try:
                return dt.datetime.fromisoformat(text)
            except ValueError:
                self.fail(f"{text!r} is not an ISO instant (e.g. 2024-05-14T08:00:00)", param, ctx)
        try:
            return parse_duration(text, option=param.name if param else "value")
        except TableFormatError:
            example = "1d, 12h, 30min, 90s" + (" or an ISO instant" if self.instants else "")
            self.fail(f"{text!r} is not an age ({example})", param, ctx)


class PartitionSpec(click.ParamType):
    """``key=value[,key=value...]``: one partition (or a set of partitions when only some keys are given)."""

    name = "KEY=VALUE[,...]"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, dict):
            return value
        spec: dict[str, str] = {}
        for part in str(value).split(","):
            key, sep, val = part.partition("=")
            if not sep or not key.strip():
                self.fail(f"{value!r} is not a partition spec (e.g. dt=2024-05-14 or dt=2024-05-14,hr=10)", param, ctx)
            spec[key.strip()] = val.strip()
        return spec


class ByteSize(click.ParamType):
    """A size such as ``64mb``, ``1 gb`` or ``1048576``."""

    name = "SIZE"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, int):
            return value
        try:
            return parse_memory_size(str(value), option=param.name if param else "value")
        except TableFormatError:
            self.fail(f"{value!r} is not a size (e.g. 64mb, 1 gb)", param, ctx)


AGE_OR_INSTANT = AgeOrInstant()
AGE = AgeOrInstant(instants=False)
PARTITION = PartitionSpec()
SIZE = ByteSize()
