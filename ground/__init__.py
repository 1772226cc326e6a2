"""The ground every part stands on: settings, Kafka clients and configuration, topics, errors, and the
slow-host peer test (``ground.slow_peers``) that the streaming detector and the batch view share.

It imports only ``schemas`` and third-party libraries; producers, streams, analytics and the
application shell (``fleetpulse``) import it, never the other way round.
"""
