"""The options of spark.readStream.format("paimon"): Paimon's names, defaults, errors naming the option."""

from __future__ import annotations

import pytest

pytest.importorskip("pyspark")

from jobs.spark.stream_options import stream_options  # noqa: E402
from table_format import OptionError  # noqa: E402

PATH = "/w/db.db/t"


def test_modes_and_defaults() -> None:
    assert stream_options({"path": PATH}).scan_mode == "latest-full"
    assert stream_options({"path": PATH, "scan.snapshot-id": "4"}).scan_mode == "from-snapshot"  # Paimon's default
    opts = stream_options({"path": PATH, "scan.mode": "from-snapshot-full", "scan.snapshot-id": "3",
                           "consumer-id": "c1", "max-snapshots-per-trigger": "2", "read.changelog": "true"})
    assert (opts.snapshot_id, opts.consumer_id, opts.max_snapshots, opts.changelog) == (3, "c1", 2, True)


@pytest.mark.parametrize(("options", "message"), [
    ({"scan.mode": "from-snapshot"}, "scan.snapshot-id"),
    ({"scan.mode": "latest", "scan.snapshot-id": "2"}, "scan.snapshot-id"),
    ({"scan.mode": "from-timestamp"}, "not supported"),
    ({"scan.mode": "sometimes"}, "unknown scan.mode"),
    ({"max-snapshots-per-trigger": "0"}, "max-snapshots-per-trigger"),
    ({"snapshot-id": "3"}, "batch reads"),
    ({"read.changelog": "yes"}, "read.changelog"),
])
def test_bad_options_are_named(options: dict[str, str], message: str) -> None:
    with pytest.raises(OptionError, match=message):
        stream_options({"path": PATH, **options})
