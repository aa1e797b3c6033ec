"""One module per subcommand; each exposes a click command named ``command``."""
