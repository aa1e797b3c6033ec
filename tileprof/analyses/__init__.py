"""Pure functions over typed frames (filters, statistics, summaries, supersteps, run analyses,
FLOPs, links, diff, thresholds), each figure defined in docs/metrics.md or docs/runs.md. They
import no input module and no model."""
