"""Renderers: each takes the model (a Summary, a run table, …) and returns text or bytes.

Renderers never read files; commands decide where their output goes.
"""
