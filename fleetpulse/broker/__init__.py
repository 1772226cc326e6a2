"""The local Apache Kafka broker: fetched with Maven, run as a single KRaft node."""
