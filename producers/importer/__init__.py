"""``fleetpulse import``: a fleet's own incident history (CSV, JSON lines, JSON arrays) into Kafka.

Incidents become ``IncidentReported`` events through a mapping file (columns, times, source
class → cause), with deterministic ids so that importing twice adds nothing.
"""

from producers.importer.coverage import ImportSummary
from producers.importer.errors import HistoryImportError, MappingFileError, SourceFileError
from producers.importer.mapping import EXAMPLE_MAPPING, HistoryMapping, load_mapping
from producers.importer.run import ImportPlan, plan_import, run_import

__all__ = [
    "EXAMPLE_MAPPING",
    "HistoryImportError",
    "HistoryMapping",
    "ImportPlan",
    "ImportSummary",
    "MappingFileError",
    "SourceFileError",
    "load_mapping",
    "plan_import",
    "run_import",
]
