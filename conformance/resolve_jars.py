"""Resolves the Delta Lake jars once (conformance/setup.sh): starts the harness's SparkSession,
which makes Spark's Ivy fetch io.delta:delta-spark_<spark>_2.13 and its dependencies from Maven
Central into DELTAVACUUM_IVY, and checks that Delta works by writing and reading a tiny table.
Skipped when the jar is already in the cache."""

import glob
import importlib.metadata as md
import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def main() -> int:
    import pyspark

    ivy = os.environ.get("DELTAVACUUM_IVY", os.path.join(os.path.dirname(HERE), ".cache", "ivy"))
    spark_mm = ".".join(pyspark.__version__.split(".")[:2])
    jar = f"io.delta_delta-spark_{spark_mm}_2.13-{md.version('delta-spark')}.jar"
    if glob.glob(os.path.join(ivy, "jars", jar)):
        print(f"conformance: Delta jars already in {ivy}")
        return 0
    from conftest import spark_builder

    t0 = time.time()
    with tempfile.TemporaryDirectory(prefix="deltavacuum-conformance-setup-") as work:
        spark = spark_builder(work).getOrCreate()
        try:
            path = os.path.join(work, "t")
            spark.range(3).write.format("delta").save(path)
            n = spark.read.format("delta").load(path).count()
            assert n == 3, n
        finally:
            spark.stop()
    print(f"conformance: Delta {md.version('delta-spark')} for Spark {pyspark.__version__} resolved "
          f"into {ivy} in {time.time() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
