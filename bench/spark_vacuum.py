#!/usr/bin/env python3
"""Delta Spark baseline for dvbench: VACUUM ... RETAIN 0 HOURS [DRY RUN] of one table with
PySpark and delta-spark in local mode (2 threads), printing one JSON line: the number of files
deleted (or to delete), Spark's start-up time, the VACUUM's time and the JVM's peak RSS (VmHWM;
the parent measures only the Python process).

    python bench/spark_vacuum.py TABLE [--dry-run]

Uses the PySpark environment of conformance/ (.cache/conformance-venv) and its Ivy cache; the
delta-spark package is DELTA_SPARK_PACKAGE (default io.delta:delta-spark_4.2_2.13:4.4.0).
"""
import argparse
import json
import os
import time

p = argparse.ArgumentParser()
p.add_argument("table")
p.add_argument("--dry-run", action="store_true")
a = p.parse_args()

here = os.path.dirname(os.path.abspath(__file__))
ivy = os.environ.get("DELTA_SPARK_IVY", os.path.join(here, "..", ".cache", "ivy"))
package = os.environ.get("DELTA_SPARK_PACKAGE", "io.delta:delta-spark_4.2_2.13:4.4.0")

t0 = time.perf_counter()
from pyspark.sql import SparkSession  # noqa: E402

spark = (
    SparkSession.builder.master("local[2]")
    .appName("dvbench")
    .config("spark.jars.packages", package)
    .config("spark.jars.ivy", ivy)
    .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
    .config("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog")
    .config("spark.databricks.delta.retentionDurationCheck.enabled", "false")
    .config("spark.driver.memory", "2g")
    .config("spark.sql.shuffle.partitions", "2")
    .config("spark.ui.enabled", "false")
    .config("spark.ui.showConsoleProgress", "false")
    .getOrCreate()
)
spark.sparkContext.setLogLevel("ERROR")
t1 = time.perf_counter()
table = a.table.replace("`", "``")
if a.dry_run:
    n = spark.sql(f"VACUUM delta.`{table}` RETAIN 0 HOURS DRY RUN").count()
else:
    spark.sql(f"VACUUM delta.`{table}` RETAIN 0 HOURS").collect()
    hist = spark.sql(f"DESCRIBE HISTORY delta.`{table}` LIMIT 1").collect()[0]
    n = int((hist["operationMetrics"] or {}).get("numDeletedFiles", -1))
t2 = time.perf_counter()

jvm_hwm = None
try:
    pid = spark.sparkContext._gateway.proc.pid
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                jvm_hwm = int(line.split()[1]) / 1024
except Exception:  # noqa: BLE001 - best effort
    pass
spark.stop()
print(json.dumps({
    "files": n,
    "package": package,
    "startSeconds": t1 - t0,
    "vacuumSeconds": t2 - t1,
    "jvmPeakRSSMiB": jvm_hwm,
}))
