"""Settings of the local single-node KRaft broker that fleetpulse runs itself."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, field_validator


class BrokerSettings(BaseModel):
    """Where and how the local Apache Kafka broker runs."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    host: str = "127.0.0.1"
    port: int = Field(19092, ge=1, le=65535)
    controller_port: int = Field(0, ge=0, le=65535, description="0 means port + 1")
    kafka_version: str = "4.4.0"
    scala_version: str = "2.13"
    cache_dir: Path = Path("~/.cache/fleetpulse/kafka").expanduser()
    data_dir: Path = Path("~/.fleetpulse/broker").expanduser()
    heap: str = Field("1g", description="JVM heap size, taken whole at start (-Xms and -Xmx)")
    start_timeout_s: float = Field(90.0, gt=0)
    stop_timeout_s: float = Field(30.0, gt=0)
    fetch_timeout_s: float = Field(900.0, gt=0, description="limit for the first Maven download of Kafka")
    num_partitions: int = Field(3, ge=1)
    java: str = Field("java", description="java executable: a name looked up on PATH, or a path")
    mvn: str = Field("mvn", description="Maven executable: a name looked up on PATH, or a path")
    extra_properties: dict[str, str] = Field(
        default_factory=dict, description="server.properties entries added to (or overriding) the defaults"
    )

    @field_validator("cache_dir", "data_dir", mode="after")
    @classmethod
    def _absolute(cls, value: Path) -> Path:
        """Absolute at once: the JVM runs in ``data_dir`` and ``broker stop`` may run from another folder."""
        return value.expanduser().absolute()

    @property
    def effective_controller_port(self) -> int:
        return self.controller_port or self.port + 1

    @property
    def bootstrap(self) -> str:
        return f"{self.host}:{self.port}"
