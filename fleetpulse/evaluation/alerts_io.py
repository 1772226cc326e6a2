"""Read a run's AlertRaised records (from Kafka or the lake) as the flat rows ``pages`` scores."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl
import pyarrow as pa
import pyarrow.compute as pc

from analytics.lake import scan
from fleetpulse.evaluation.detection import ScoringError
from fleetpulse.evaluation.pages import ALERT_COLUMNS
from fleetpulse.evaluation.sources import events_from_kafka
from ground.errors import FleetpulseError

if TYPE_CHECKING:
    from ground.settings import Settings


def alerts_from_kafka(settings: Settings, topic: str | None = None, timeout_s: float = 60.0) -> pl.DataFrame:
    """Every AlertRaised on the alerts topic (none when the topic does not exist)."""
    rows = events_from_kafka(
        settings, topic or settings.topics.alerts.name, "AlertRaised", timeout_s, missing_ok=True
    )
    return pl.DataFrame(
        [
            {**{k: r.get(k) for k in ALERT_COLUMNS}, "group_key": (r.get("labels") or {}).get("group_key")}
            for r in rows
        ],
        schema=ALERT_COLUMNS,
    )


def alerts_from_lake(lake: str | Path) -> pl.DataFrame:
    """The lake's ``alert_raised`` table (an empty frame when the lake has none)."""
    try:
        wanted = [c for c in ALERT_COLUMNS if c != "group_key"]
        frame = scan(lake, "alert_raised").select(*wanted, "labels").collect()
    except FleetpulseError:
        return pl.DataFrame(schema=ALERT_COLUMNS)
    except pl.exceptions.PolarsError as exc:
        raise ScoringError(f"cannot read the alerts of the lake {lake}: {exc}") from exc
    labels = frame.get_column("labels").to_arrow()  # an Arrow map: Polars has no lookup for it
    keys = pl.from_arrow(pc.map_lookup(labels, pa.scalar("group_key", labels.type.key_type), "first"))
    out: Any = frame.with_columns(pl.Series("group_key", keys)).select(list(ALERT_COLUMNS))
    return out.cast(ALERT_COLUMNS)  # type: ignore[no-any-return]
