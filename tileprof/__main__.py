"""``python -m tileprof``."""

from tileprof.commands.cli import main

main()
