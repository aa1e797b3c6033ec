"""Dumps made by tileprof itself: the deterministic fixture builder (``synth``) and the bundled
reference profile (``reference``)."""
