"""The one settings object: built once at the entry point and passed down.

Sources, strongest first: explicit keyword arguments, environment variables
(prefix ``FLEETPULSE_``, nested with ``__``: ``FLEETPULSE_BROKER__PORT=19092``),
a TOML file (``--config`` or ``FLEETPULSE_CONFIG``; ``fleetpulse.toml`` in the working
directory if present), then the defaults below. ``KAFKA_BOOTSTRAP_SERVERS`` is honoured as
the conventional name for an external cluster. This module is the only place that reads
the process environment.
"""

from __future__ import annotations

import json
import os
import tomllib
import typing
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, SecretStr, ValidationError
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    SettingsError,
    TomlConfigSettingsSource,
)

from ground.errors import ConfigError
from ground.kafka.config import KafkaSettings
from ground.kafka.topics import TopicSettings
from ground.settings.agent import AgentSettings
from ground.settings.broker import BrokerSettings
from ground.settings.detect import DetectSettings, WebhookSettings
from ground.settings.lake import LakeSettings
from ground.settings.simulator import SimulatorSettings

DEFAULT_CONFIG_FILE = Path("fleetpulse.toml")


class PathsSettings(BaseModel):
    """Where fleetpulse keeps its working files (outside the repository by default)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    home: Path = Path("~/.fleetpulse").expanduser()
    out: Path = Path("out")


class Settings(BaseSettings):
    """Every tunable of fleetpulse, grouped by part."""

    model_config = SettingsConfigDict(
        env_prefix="FLEETPULSE_",
        env_nested_delimiter="__",
        frozen=True,
        extra="forbid",
    )

    kafka: KafkaSettings = KafkaSettings()
    broker: BrokerSettings = BrokerSettings()
    topics: TopicSettings = TopicSettings()
    simulator: SimulatorSettings = SimulatorSettings()
    detect: DetectSettings = DetectSettings()
    webhooks: WebhookSettings = WebhookSettings()
    lake: LakeSettings = LakeSettings()
    agent: AgentSettings = AgentSettings()
    paths: PathsSettings = PathsSettings()

    _toml_file: Path | None = None

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        toml = _CONFIG_FILE_FOR_LOAD.get("path")
        sources: list[PydanticBaseSettingsSource] = [init_settings, env_settings]
        if toml is not None:
            sources.append(TomlConfigSettingsSource(settings_cls, toml_file=toml))
        return tuple(sources)

    @classmethod
    def load(cls, config_file: Path | None = None, **overrides: Any) -> Settings:
        """Build settings from file + environment; raise ConfigError with what to fix."""
        env = os.environ
        path = config_file or (Path(env["FLEETPULSE_CONFIG"]) if env.get("FLEETPULSE_CONFIG") else None)
        if path is None and DEFAULT_CONFIG_FILE.is_file():
            path = DEFAULT_CONFIG_FILE
        if path is not None and not path.is_file():
            raise ConfigError(f"config file {path} does not exist")
        if env.get("KAFKA_BOOTSTRAP_SERVERS") and not env.get("FLEETPULSE_KAFKA__BOOTSTRAP_SERVERS"):
            kafka = dict(overrides.pop("kafka", {}) or {})
            kafka.setdefault("bootstrap_servers", env["KAFKA_BOOTSTRAP_SERVERS"])
            overrides["kafka"] = kafka
        _CONFIG_FILE_FOR_LOAD["path"] = path
        try:
            return cls(**overrides)
        except ValidationError as exc:
            raise ConfigError(_explain(exc, path)) from None  # the chained error quotes inputs: secrets too
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"config file {path} is not valid TOML: {exc}") from None
        except OSError as exc:
            raise ConfigError(f"config file {path} cannot be read: {exc.strerror or exc}") from None
        except SettingsError:  # the only one pydantic-settings raises: a value that must be JSON is not
            raise ConfigError(_explain_undecodable(cls, env)) from None
        finally:
            _CONFIG_FILE_FOR_LOAD["path"] = None

    @staticmethod
    def secret_from_env(name: str) -> SecretStr | None:
        """A secret named on the command line (e.g. ``receiver --secret-env``), read here like every env value."""
        value = os.environ.get(name)
        return SecretStr(value) if value else None

    def with_section(self, name: str, **changes: Any) -> Settings:
        """A copy with ``changes`` applied to one section, validated again (``model_copy`` alone
        skips validators such as the topic prefix and the webhook secret rules)."""
        current = getattr(self, name)
        return self.model_copy(
            update={name: type(current).model_validate({**current.model_dump(), **changes})}
        )

    @property
    def bootstrap_servers(self) -> str:
        """The external cluster if configured, else the local broker fleetpulse runs."""
        return self.kafka.bootstrap_servers or f"{self.broker.host}:{self.broker.port}"

    @property
    def uses_local_broker(self) -> bool:
        return self.kafka.bootstrap_servers is None


# pydantic-settings builds sources per class, not per call: the file chosen by load()
# is handed over through this slot for the duration of one construction.
_CONFIG_FILE_FOR_LOAD: dict[str, Path | None] = {"path": None}


def _explain(exc: ValidationError, path: Path | None) -> str:
    where = f" (config file {path} or FLEETPULSE_* environment)" if path else " (FLEETPULSE_* environment)"
    lines = [f"invalid configuration{where}:"]
    for err in exc.errors():
        loc = ".".join(str(p) for p in err["loc"])
        lines.append(f"  {loc}: {err['msg']}")
    return "\n".join(lines)


_JSON_SHAPED = (list, dict, set, frozenset, tuple)


def _takes_json(annotation: Any) -> bool:
    """Whether an environment value for this annotation is parsed as JSON (a list, dict or model)."""
    if isinstance(annotation, type) and issubclass(annotation, (BaseModel, *_JSON_SHAPED)):
        return True
    origin = typing.get_origin(annotation)
    if origin in _JSON_SHAPED:
        return True
    return any(_takes_json(arg) for arg in typing.get_args(annotation)) if origin is not None else False


def _explain_undecodable(cls: type[BaseModel], env: typing.Mapping[str, str]) -> str:
    """One line naming the ``FLEETPULSE_*`` variables whose value should be JSON and is not."""
    bad: list[str] = []
    for name, value in env.items():
        if not name.upper().startswith("FLEETPULSE_"):
            continue
        parts = name.upper().removeprefix("FLEETPULSE_").lower().split("__")
        model: Any = cls
        annotation: Any = None
        for part in parts:
            field = getattr(model, "model_fields", {}).get(part)
            if field is None:
                annotation = None
                break
            annotation = model = field.annotation
        if annotation is not None and _takes_json(annotation):
            try:
                json.loads(value)
            except ValueError:
                bad.append(name)
    if not bad:
        return "invalid configuration: a FLEETPULSE_* value that must be JSON is not"
    names = ", ".join(sorted(bad))
    return f'invalid configuration: {names} must be JSON (a list such as \'["a", "b"]\' or an object)'
