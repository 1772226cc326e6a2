"""Kafka client settings shared by every client (producer, Faust, archiver, admin, webhooks).

Security settings (SASL/TLS) are declared once here and translated to each client library's
own keyword names, so no part builds a client config by hand. The password leaves its
``SecretStr`` only here, masked in any repr and redacted from the client libraries' logs.
"""

from __future__ import annotations

import asyncio
import logging
import ssl
import threading
from pathlib import Path
from typing import Any, Literal

from aiokafka import errors
from aiokafka.conn import create_conn
from aiokafka.helpers import create_ssl_context
from pydantic import BaseModel, ConfigDict, Field, SecretStr, model_validator

from ground.errors import ConfigError
from ground.log_redaction import MASK, SecretFilter, redact_in_logs

SecurityProtocol = Literal["PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"]
SaslMechanism = Literal["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"]

# Loggers of the client libraries that print request bodies or their configuration at DEBUG
# (kafka-python's SaslAuthenticateRequest and admin config, aiokafka's request log); every
# other logger of these libraries present when a config is built is covered too.
_CLIENT_LOGGERS = ("kafka.admin.client", "kafka.protocol.parser", "kafka.net.connection", "aiokafka.conn")
_CLIENT_LOGGER_ROOTS = ("kafka", "aiokafka", "faust", "mode")


class KafkaAuthError(ConfigError):
    """The broker refused our SASL login (user, password, mechanism, protocol) or its certificate is untrusted."""

    def __init__(self, message: str, *, bootstrap: str, mechanism: str | None, username: str | None) -> None:
        super().__init__(message)
        self.bootstrap = bootstrap
        self.mechanism = mechanism
        self.username = username


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
    # kafka-python backs off up to 30 s between reconnection attempts by default: after a broker
    # restart a producer (the fleet's agents) would stay silent that long while consumers are back.
    reconnect_backoff_max_ms: int = Field(
        1000, ge=50, description="kafka-python clients: longest reconnect backoff"
    )

    @model_validator(mode="after")
    def _complete(self) -> KafkaSettings:
        # Fail at start-up with what to set, not at the first connection with a library error.
        password = self.sasl_password.get_secret_value() if self.sasl_password else ""
        if self.uses_sasl and not (self.sasl_username and password):
            raise ValueError(
                f"security_protocol {self.security_protocol} needs sasl_username and sasl_password "
                "(FLEETPULSE_KAFKA__SASL_USERNAME / FLEETPULSE_KAFKA__SASL_PASSWORD)"
            )
        if self.uses_ssl:
            missing = [
                f"{name}={path}"
                for name, path in (
                    ("ssl_cafile", self.ssl_cafile),
                    ("ssl_certfile", self.ssl_certfile),
                    ("ssl_keyfile", self.ssl_keyfile),
                )
                if path and not Path(path).expanduser().is_file()
            ]
            if missing:
                raise ValueError(f"TLS file(s) not found: {', '.join(missing)}")
            if bool(self.ssl_certfile) != bool(self.ssl_keyfile):
                raise ValueError("a client certificate needs both ssl_certfile and ssl_keyfile")
        return self

    @property
    def uses_sasl(self) -> bool:
        return self.security_protocol.startswith("SASL")

    @property
    def uses_ssl(self) -> bool:
        return self.security_protocol.endswith("SSL")

    @property
    def mechanism(self) -> str:
        return self.sasl_mechanism or "PLAIN"

    def _password(self) -> str | None:
        if self.sasl_password is None:
            return None
        value = self.sasl_password.get_secret_value()
        protect_client_logs(value)
        return _MaskedStr(value)

    def _sasl(self) -> dict[str, Any]:
        if not self.uses_sasl:
            return {}
        return {
            "sasl_mechanism": self.mechanism,
            "sasl_plain_username": self.sasl_username,
            "sasl_plain_password": self._password(),
        }

    def _ssl_context(self) -> Any:
        return create_ssl_context(
            cafile=self.ssl_cafile, certfile=self.ssl_certfile, keyfile=self.ssl_keyfile
        )

    def kafka_python(self, bootstrap: str) -> dict[str, Any]:
        """Keyword arguments for kafka-python's KafkaProducer/KafkaConsumer/KafkaAdminClient."""
        cfg: dict[str, Any] = {
            "bootstrap_servers": bootstrap.split(","),
            "security_protocol": self.security_protocol,
            "reconnect_backoff_max_ms": self.reconnect_backoff_max_ms,
        }
        cfg.update(self._sasl())
        if self.uses_ssl:
            files = {
                "ssl_cafile": self.ssl_cafile,
                "ssl_certfile": self.ssl_certfile,
                "ssl_keyfile": self.ssl_keyfile,
            }
            cfg.update({k: v for k, v in files.items() if v is not None})
            cfg["ssl_check_hostname"] = True
        return cfg

    def aiokafka(self, bootstrap: str) -> dict[str, Any]:
        """Keyword arguments for aiokafka's AIOKafkaConsumer/AIOKafkaProducer."""
        cfg: dict[str, Any] = {"bootstrap_servers": bootstrap, "security_protocol": self.security_protocol}
        cfg.update(self._sasl())
        if self.uses_ssl:
            cfg["ssl_context"] = self._ssl_context()
        return cfg

    def faust_credentials(self) -> Any:
        """A ``faust.auth`` credentials object, or None for PLAINTEXT."""

        import faust  # here, not at the top: the host agent's own install (packaging/agent) has no Faust

        if self.security_protocol == "PLAINTEXT":
            return None
        ssl_context = self._ssl_context() if self.uses_ssl else None
        if self.uses_sasl:
            return faust.SASLCredentials(
                username=self.sasl_username or "",
                password=self._password() or "",
                mechanism=self.mechanism,
                ssl_context=ssl_context,  # given: Faust switches the protocol to SASL_SSL
            )
        return faust.SSLCredentials(ssl_context)

    # -- login check ----------------------------------------------------------------------------

    def check_login(self, bootstrap: str, timeout_s: float = 10.0) -> None:
        """Raise KafkaAuthError at once if the cluster refuses our SASL login or we refuse its TLS
        certificate (no-op for PLAINTEXT).

        kafka-python retries a refused login until its bootstrap timeout and then reports only
        "Unable to bootstrap"; one direct handshake says what is wrong in well under a second.
        An unreachable cluster passes: the client reports that itself. Runs in its own thread,
        so it works inside and outside an event loop and leaves the caller's loop alone.
        """
        if self.security_protocol == "PLAINTEXT":
            return
        failure: list[BaseException] = []

        def probe() -> None:
            try:
                asyncio.run(self.check_login_async(bootstrap, timeout_s))
            except BaseException as exc:  # handed to the calling thread
                failure.append(exc)

        thread = threading.Thread(target=probe, name="kafka-login-check", daemon=True)
        thread.start()
        thread.join(timeout_s + 5.0)
        if failure:
            raise failure[0]

    async def check_login_async(self, bootstrap: str, timeout_s: float = 10.0) -> None:
        """``check_login`` for code that already runs in an event loop."""
        if self.security_protocol == "PLAINTEXT":
            return

        cfg = self.aiokafka(bootstrap)
        cfg.pop("bootstrap_servers")
        refused = (
            errors.SaslAuthenticationFailed,
            errors.UnsupportedSaslMechanismError,
            errors.IllegalSaslStateError,
        )
        deadline = asyncio.get_running_loop().time() + timeout_s  # for all addresses together
        for address in bootstrap.split(","):
            host, _, port = address.strip().rpartition(":")
            left = deadline - asyncio.get_running_loop().time()
            if left <= 0:
                return
            try:
                conn = await asyncio.wait_for(
                    create_conn(
                        host.strip("[]"),
                        int(port),
                        client_id=f"{self.client_id_prefix}-login-check",
                        request_timeout_ms=int(left * 1000),
                        **cfg,
                    ),
                    left,
                )
            except refused as exc:
                raise self._auth_error(address.strip(), exc) from None
            except ssl.SSLCertVerificationError as exc:
                raise KafkaAuthError(
                    f"TLS to Kafka at {address.strip()} failed: the broker's certificate is not trusted "
                    f"({exc.verify_message}); set FLEETPULSE_KAFKA__SSL_CAFILE to the CA that signed it",
                    bootstrap=address.strip(),
                    mechanism=self.sasl_mechanism,
                    username=self.sasl_username,
                ) from None
            except (TimeoutError, OSError, ValueError, errors.KafkaError):
                continue  # not reachable (or not Kafka) here: let the client say so
            conn.close()
            return

    def _auth_error(self, address: str, exc: BaseException) -> KafkaAuthError:
        if isinstance(exc, errors.IllegalSaslStateError):
            reason = "the listener does not expect a SASL handshake"
            hint = f"is security_protocol {self.security_protocol} right for this listener?"
        elif isinstance(exc, errors.UnsupportedSaslMechanismError):
            reason = f"the broker does not enable {self.mechanism}"
            hint = "set FLEETPULSE_KAFKA__SASL_MECHANISM to a mechanism the broker enables"
        else:
            reason = _scrub(str(exc), self.sasl_password)
            hint = "check FLEETPULSE_KAFKA__SASL_USERNAME / FLEETPULSE_KAFKA__SASL_PASSWORD"
        return KafkaAuthError(
            f"Kafka at {address} rejected the SASL {self.mechanism} login of user {self.sasl_username!r}: "
            f"{reason}; {hint} (or kafka.sasl_* in the config file)",
            bootstrap=address,
            mechanism=self.mechanism,
            username=self.sasl_username,
        )


# -- keeping the password out of reprs and logs ----------------------------------------------------


class _MaskedStr(str):
    """The password as the client libraries need it (a str), but masked wherever it is repr'd.

    kafka-python logs its whole admin configuration at DEBUG; the dict's repr shows this mask.
    """

    __slots__ = ()

    def __repr__(self) -> str:
        return repr(MASK)


def protect_client_logs(*secrets: str) -> None:
    """Redact ``secrets`` from everything the Kafka client libraries log (idempotent).

    Their DEBUG logs print SASL requests (PLAIN carries the password) and configurations.
    A filter on each emitting logger covers every handler: the CLI's, Faust's, pytest's.
    """
    roots = _CLIENT_LOGGER_ROOTS
    names = set(_CLIENT_LOGGERS) | {
        name for name in list(logging.root.manager.loggerDict) if name.split(".", 1)[0] in roots
    }
    for name in names:
        logger = logging.getLogger(name)
        found = next((f for f in logger.filters if isinstance(f, SecretFilter)), None)
        if found is None:
            found = SecretFilter()
            logger.addFilter(found)
        for secret in secrets:
            found.add(secret)
    redact_in_logs(*secrets)  # loggers created later, traceback text


def _scrub(text: str, secret: SecretStr | None) -> str:
    value = secret.get_secret_value() if secret is not None else ""
    return text.replace(value, MASK) if value else text
