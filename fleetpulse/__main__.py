"""``python -m fleetpulse`` runs the CLI (used by the demo's supervisor for child processes)."""

from fleetpulse.cli import main

main()
