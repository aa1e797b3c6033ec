"""The profile store (Delta Lake tables of many runs) and the engines that aggregate it."""
