"""The command line a command ran with, rebuilt from click's parsed parameters.

The report records it in its header. It is rebuilt rather than read from ``sys.argv`` so that
it is the same however the command was started (a console script, ``python -m``, click's test
runner): the arguments as given, then each option whose value differs from its default.
"""

from __future__ import annotations

import shlex
from typing import Any

import click


def command_line(ctx: click.Context, leave_out: tuple[str, ...] = ("output", "force")) -> str:
    """``tileprof report dump.json --epoch 1``: the command's path, its arguments, then the
    options given (long names, in the command's order). ``leave_out`` names parameters not
    recorded: by default where the output went (``-o``, ``--force``), which changes nothing in
    it, so the same inputs written to two names stay byte-identical."""
    words = ["tileprof", *ctx.command_path.split()[1:]]
    options: list[str] = []
    for param in ctx.command.params:
        if param.name in leave_out:
            continue
        value = ctx.params.get(param.name or "")
        if isinstance(param, click.Argument):
            words += [str(v) for v in _values(value)]
        elif isinstance(param, click.Option) and not param.hidden:
            options += _option_words(param, value)
    return shlex.join([*words, *options])


def _values(value: Any) -> list[Any]:
    if value is None:
        return []
    return list(value) if isinstance(value, tuple | list) else [value]


def _option_words(option: click.Option, value: Any) -> list[str]:
    if value is None or value == option.default or value in ((), []):
        return []
    name = max(option.opts, key=len)
    if option.is_flag:
        return [name] if value else []
    if option.multiple:
        return [word for item in value for word in (name, str(item))]
    return [name, str(value)]
