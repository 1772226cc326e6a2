"""Polars batch jobs over the lake, reports and plots."""
