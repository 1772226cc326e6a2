"""Kafka for every part: client configuration, admin, topic specs, reading topics and group lag."""
