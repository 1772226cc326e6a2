"""Peer comparison: closed host windows compared per cluster (the slow-host detector)."""
