"""``python -m tileprof``."""

from tileprof.cli import main

main()
