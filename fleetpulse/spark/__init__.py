"""Apache Spark on the Delta lake: the Delta jars for the installed pyspark, and a local session."""

from fleetpulse.spark.session import (
    DELTA_FOR_SPARK,
    DeltaRelease,
    SparkSetupError,
    delta_jars,
    delta_release,
    delta_session,
    installed_spark_version,
)

__all__ = [
    "DELTA_FOR_SPARK",
    "DeltaRelease",
    "SparkSetupError",
    "delta_jars",
    "delta_release",
    "delta_session",
    "installed_spark_version",
]
