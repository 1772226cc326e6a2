"""streams package."""
