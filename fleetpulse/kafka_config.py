"""Kafka client settings shared by every client (producer, Faust, archiver, admin).

Security settings (SASL/TLS) are declared once here and translated to each client
library's own keyword names, so no part of fleetpulse builds a client config by hand.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, SecretStr

SecurityProtocol = Literal["PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"]
SaslMechanism = Literal["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"]


class KafkaSettings(BaseModel):
    """Where the Kafka cluster is and how to authenticate to it.

    ``bootstrap_servers`` left empty means "the local broker fleetpulse manages"
    (see ``Settings.bootstrap_servers``).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    bootstrap_servers: str | None = None
    security_protocol: SecurityProtocol = "PLAINTEXT"
    sasl_mechanism: SaslMechanism | None = None
    sasl_username: str | None = None
    sasl_password: SecretStr | None = None
    ssl_cafile: str | None = None
    ssl_certfile: str | None = None
    ssl_keyfile: str | None = None
    client_id_prefix: str = "fleetpulse"

    def _sasl(self) -> dict[str, Any]:
        if not self.security_protocol.startswith("SASL"):
            return {}
        return {
            "sasl_mechanism": self.sasl_mechanism or "PLAIN",
            "sasl_plain_username": self.sasl_username,
            "sasl_plain_password": self.sasl_password.get_secret_value() if self.sasl_password else None,
        }

    def _ssl(self) -> dict[str, Any]:
        if "SSL" not in self.security_protocol:
            return {}
        return {
            "ssl_cafile": self.ssl_cafile,
            "ssl_certfile": self.ssl_certfile,
            "ssl_keyfile": self.ssl_keyfile,
        }

    def kafka_python(self, bootstrap: str) -> dict[str, Any]:
        """Keyword arguments for kafka-python's KafkaProducer/KafkaConsumer/KafkaAdminClient."""
        cfg: dict[str, Any] = {"bootstrap_servers": bootstrap.split(","), "security_protocol": self.security_protocol}
        cfg.update(self._sasl())
        cfg.update({k: v for k, v in self._ssl().items() if v is not None})
        if "SSL" in self.security_protocol:
            cfg["ssl_check_hostname"] = True
        return cfg

    def aiokafka(self, bootstrap: str) -> dict[str, Any]:
        """Keyword arguments for aiokafka's AIOKafkaConsumer/AIOKafkaProducer."""
        cfg: dict[str, Any] = {"bootstrap_servers": bootstrap, "security_protocol": self.security_protocol}
        cfg.update(self._sasl())
        if "SSL" in self.security_protocol:
            from aiokafka.helpers import create_ssl_context

            cfg["ssl_context"] = create_ssl_context(
                cafile=self.ssl_cafile, certfile=self.ssl_certfile, keyfile=self.ssl_keyfile
            )
        return cfg

    def faust_credentials(self) -> Any:
        """A ``faust.auth`` credentials object, or None for PLAINTEXT."""
        import faust

        if self.security_protocol == "PLAINTEXT":
            return None
        ssl_context = None
        if "SSL" in self.security_protocol:
            from aiokafka.helpers import create_ssl_context

            ssl_context = create_ssl_context(
                cafile=self.ssl_cafile, certfile=self.ssl_certfile, keyfile=self.ssl_keyfile
            )
        if self.security_protocol.startswith("SASL"):
            password = self.sasl_password.get_secret_value() if self.sasl_password else ""
            return faust.SASLCredentials(
                username=self.sasl_username or "",
                password=password,
                mechanism=self.sasl_mechanism or "PLAIN",
                ssl_context=ssl_context,
            )
        return faust.SSLCredentials(ssl_context)
