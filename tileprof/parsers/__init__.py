"""One module per input format."""
