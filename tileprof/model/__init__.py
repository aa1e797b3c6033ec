"""What users hold: ``Profile`` and ``load`` (``profile``), the cache, the bundled example, the
gatherer of command-line inputs, the two sides of ``diff`` and the profile store."""
