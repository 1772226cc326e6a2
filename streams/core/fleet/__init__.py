"""The fleet's maintenance state as a fold over fleet.actions: lifecycle, outages, snapshots."""
