"""Every spelling of a location that Spark or Hadoop passes reaches the same table: `file:/x`, `file:///x`,
`file://localhost/x` and the plain path; `s3a://` is `s3://` (tests/s3 covers the s3 store itself)."""

from __future__ import annotations

import pyarrow as pa
import pytest

from table_format import FileSystemCatalog, OptionError, open_table, write_table
from table_format.io.factory import normalize_uri, path_of


def test_file_uri_forms_open_the_same_table(warehouse: str) -> None:
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database("db")
    table = catalog.create_table("db.t", pa.schema([("id", pa.int64())]))
    write_table(table, pa.table({"id": [1, 2, 3]}))
    path = f"{warehouse}/db.db/t"
    forms = [path, f"file:{path}", f"file://{path}", f"file://localhost{path}", f"{path}/"]
    for form in forms:
        opened = open_table(form)
        assert opened.identifier == open_table(path).identifier, form
        assert opened.path.rstrip("/") == path, form
        assert sorted(opened.scan().to_arrow().column("id").to_pylist()) == [1, 2, 3], form
    assert FileSystemCatalog(f"file:{warehouse}").load_table("db.t").path.rstrip("/") == path
    assert FileSystemCatalog(f"file://{warehouse}").table_uri("db.t") == path


def test_uri_normalization() -> None:
    assert normalize_uri("file:/tmp/a b/c") == "/tmp/a b/c"
    assert normalize_uri("file:///tmp/x") == "/tmp/x"
    assert normalize_uri("FILE://localhost/tmp/x") == "/tmp/x"
    assert normalize_uri("s3a://bucket/wh/db.db/t") == "s3://bucket/wh/db.db/t"
    assert normalize_uri("s3://bucket/wh") == "s3://bucket/wh"
    assert normalize_uri("/plain/path") == "/plain/path"
    assert path_of("s3a://bucket/wh/db.db/t") == "bucket/wh/db.db/t"
    assert path_of("file:/tmp/x") == "/tmp/x"


@pytest.mark.parametrize("uri", ["file://otherhost/tmp/x", "file:relative/x"])
def test_unsupported_file_uris_are_refused(uri: str) -> None:
    with pytest.raises(OptionError, match="file:"):
        open_table(uri)
