"""GPU evidence, one module per format (Kineto traces, nsys CSV, latency and energy reports, the
generic run table), each returning ``ParsedRuns``."""
