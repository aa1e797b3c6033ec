"""Tile-device dumps, one module per format (JSON, NDJSON, CSV, Parquet), each returning a
``ParsedDump``."""
