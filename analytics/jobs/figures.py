"""How every job's PNG is drawn and written (matplotlib, Agg backend), so each plot module draws alike."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import matplotlib
import matplotlib.pyplot as plt


def pyplot() -> Any:
    matplotlib.use("Agg")

    return plt


def save(fig: Any, path: Path) -> Path:
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    pyplot().close(fig)
    return path
