"""The command groups' shared behaviour: an unknown command names the closest ones."""

from __future__ import annotations

import click


class SuggestingGroup(click.Group):
    """A group whose unknown command names the closest known ones (``tileprof sumary``: Did
    you mean 'summary'?), whether or not their modules are loaded yet."""

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        name = args[0] if args else ""
        if name and not name.startswith("-") and self.get_command(ctx, name) is None:
            # click suggests only among the commands loaded so far; these load lazily
            known = self.list_commands(ctx)
            raise click.exceptions.NoSuchCommand(name, possibilities=known, ctx=ctx)
        return super().resolve_command(ctx, args)
