"""Child process of test_streaming_write.py: runs streaming queries (availableNow) from a folder of parquet files
into Paimon tables, one after the other; the sink's test hook may SIGKILL this process group mid-way.

    python stream_crash_driver.py '{"input": DIR, "queries": [{"how": "sink"|"write_stream", "table": PATH,
                                   "checkpoint": DIR}, ...]}'
"""

from __future__ import annotations

import json
import os
import sys

from jobs.spark import spark_session, write_stream
from jobs.spark.stream_writer import CRASH_PGID_ENV

SCHEMA = "id BIGINT, v STRING"


def main() -> None:
    request = json.loads(sys.argv[1])
    os.environ[CRASH_PGID_ENV] = str(os.getpgid(0))  # before the JVM starts: its Python workers inherit it
    spark = spark_session(conf={"spark.sql.shuffle.partitions": "2"})
    for q in request["queries"]:
        source = (spark.readStream.format("parquet").schema(SCHEMA).option("maxFilesPerTrigger", 1)
                  .load(request["input"]))
        if q["how"] == "sink":
            query = (source.writeStream.format("paimon").option("checkpointLocation", q["checkpoint"])
                     .trigger(availableNow=True).start(q["table"]))
        else:
            query = write_stream(source, q["table"], checkpoint=q["checkpoint"], trigger={"availableNow": True})
        query.awaitTermination()
    spark.stop()
    print(json.dumps({"ok": True}))


if __name__ == "__main__":
    main()
