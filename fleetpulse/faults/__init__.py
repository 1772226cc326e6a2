"""Fault injection: scenarios that break the pipeline on purpose and count what survives."""
