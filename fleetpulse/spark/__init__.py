"""Apache Spark on the Delta lake: the Delta jars for a pyspark, a local session, and Spark SQL in a child
process with a cached pyspark (``spark_sql``)."""

from fleetpulse.spark.runtime import PYSPARK_VERSION, pyspark_site, spark_sql
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
    "PYSPARK_VERSION",
    "SparkSetupError",
    "delta_jars",
    "delta_release",
    "delta_session",
    "installed_spark_version",
    "pyspark_site",
    "spark_sql",
]
