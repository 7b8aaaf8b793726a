"""FileSystemCatalog: databases, tables, identifiers, exist_ok and missing tables, on real directories."""

from __future__ import annotations

import os

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from table_format import (
    FileSystemCatalog,
    SchemaError,
    TableAlreadyExistsError,
    TableFormatError,
    TableNotFoundError,
    open_table,
    write_table,
)
from table_format.errors import DatabaseNotFoundError

SCHEMA = pa.schema([("id", pa.int64()), ("name", pa.string())])


@pytest.fixture
def catalog(warehouse: str) -> FileSystemCatalog:
    return FileSystemCatalog(warehouse)


def _tree(root: str) -> set[str]:
    out = set()
    for dirpath, dirnames, filenames in os.walk(root):
        for n in dirnames + filenames:
            out.add(os.path.relpath(os.path.join(dirpath, n), root))
    return out


# ---- databases -------------------------------------------------------------------------------------------


def test_new_warehouse_has_no_databases(catalog: FileSystemCatalog) -> None:
    assert catalog.list_databases() == []


def test_create_list_drop_databases(catalog: FileSystemCatalog, warehouse: str) -> None:
    catalog.create_database("b_db")
    catalog.create_database("a_db")
    assert catalog.list_databases() == ["a_db", "b_db"]
    assert os.path.isdir(os.path.join(warehouse, "a_db.db"))
    assert catalog.database_exists("a_db")
    catalog.drop_database("a_db")
    assert catalog.list_databases() == ["b_db"]
    assert not catalog.database_exists("a_db")
    assert not os.path.exists(os.path.join(warehouse, "a_db.db"))


def test_create_database_twice(catalog: FileSystemCatalog) -> None:
    catalog.create_database("db")
    with pytest.raises(TableAlreadyExistsError, match="'db'"):
        catalog.create_database("db")
    catalog.create_database("db", exist_ok=True)  # no error, nothing changes
    assert catalog.list_databases() == ["db"]


def test_create_database_exist_ok_keeps_tables(catalog: FileSystemCatalog) -> None:
    catalog.create_database("db")
    t = catalog.create_table("db.t", SCHEMA)
    write_table(t, pa.table({"id": [1], "name": ["a"]}))
    catalog.create_database("db", exist_ok=True)
    assert catalog.list_tables("db") == ["t"]
    assert catalog.load_table("db.t").scan().to_arrow().num_rows == 1


def test_drop_missing_database(catalog: FileSystemCatalog) -> None:
    with pytest.raises(DatabaseNotFoundError, match="'nope'"):
        catalog.drop_database("nope")


def test_drop_non_empty_database_needs_cascade(catalog: FileSystemCatalog) -> None:
    catalog.create_database("db")
    catalog.create_table("db.t", SCHEMA)
    with pytest.raises(TableFormatError, match="'db'.*cascade"):
        catalog.drop_database("db")
    assert catalog.list_tables("db") == ["t"]
    catalog.drop_database("db", cascade=True)
    assert catalog.list_databases() == []


def test_list_tables_of_missing_database(catalog: FileSystemCatalog) -> None:
    with pytest.raises(DatabaseNotFoundError, match="'ghost'"):
        catalog.list_tables("ghost")


def test_list_databases_ignores_other_entries(catalog: FileSystemCatalog, warehouse: str) -> None:
    catalog.create_database("db")
    os.mkdir(os.path.join(warehouse, "not_a_database"))
    with open(os.path.join(warehouse, "file.db"), "w") as f:  # a file, not a directory
        f.write("x")
    assert catalog.list_databases() == ["db"]


# ---- tables ----------------------------------------------------------------------------------------------


def test_create_list_load_drop_tables(catalog: FileSystemCatalog, warehouse: str) -> None:
    catalog.create_database("db")
    assert catalog.list_tables("db") == []
    t1 = catalog.create_table("db.zeta", SCHEMA)
    t2 = catalog.create_table("db.alpha", SCHEMA, primary_keys=["id"], options={"bucket": "2"})
    assert catalog.list_tables("db") == ["alpha", "zeta"]
    assert t1.identifier == "db.zeta"
    assert t1.path == os.path.join(warehouse, "db.db", "zeta")
    assert os.path.isfile(os.path.join(t1.path, "schema", "schema-0"))
    assert t2.primary_keys == ["id"]
    assert t2.options["bucket"] == "2"
    assert catalog.table_exists("db.alpha")

    loaded = catalog.load_table("db.alpha")
    assert loaded.primary_keys == ["id"]
    assert loaded.arrow_schema.names == ["id", "name"]
    assert not loaded.arrow_schema.field("id").nullable  # primary keys are NOT NULL
    assert loaded.latest_snapshot() is None
    assert loaded.snapshots() == []

    catalog.drop_table("db.zeta")
    assert catalog.list_tables("db") == ["alpha"]
    assert not os.path.exists(t1.path)
    assert not catalog.table_exists("db.zeta")
    with pytest.raises(TableNotFoundError, match="db.zeta"):
        catalog.load_table("db.zeta")


def test_list_tables_ignores_directories_without_schema(catalog: FileSystemCatalog, warehouse: str) -> None:
    catalog.create_database("db")
    catalog.create_table("db.t", SCHEMA)
    os.makedirs(os.path.join(warehouse, "db.db", "junk", "schema"))
    assert catalog.list_tables("db") == ["t"]


def test_create_table_twice_and_exist_ok(catalog: FileSystemCatalog) -> None:
    catalog.create_database("db")
    t = catalog.create_table("db.t", SCHEMA)
    sid = write_table(t, pa.table({"id": [1, 2], "name": ["a", "b"]}))
    with pytest.raises(TableAlreadyExistsError, match="db.t"):
        catalog.create_table("db.t", SCHEMA)
    # exist_ok returns the existing table untouched, even with another schema
    again = catalog.create_table("db.t", pa.schema([("x", pa.int8())]), exist_ok=True)
    assert again.arrow_schema.names == ["id", "name"]
    assert again.latest_snapshot().id == sid
    assert again.scan().to_arrow().num_rows == 2


def test_create_table_in_missing_database(catalog: FileSystemCatalog, warehouse: str) -> None:
    with pytest.raises(DatabaseNotFoundError, match="'nodb'"):
        catalog.create_table("nodb.t", SCHEMA)
    assert _tree(warehouse) == set()


def test_load_missing_table(catalog: FileSystemCatalog) -> None:
    catalog.create_database("db")
    with pytest.raises(TableNotFoundError, match="db.missing") as e:
        catalog.load_table("db.missing")
    assert isinstance(e.value, TableFormatError)
    with pytest.raises(TableNotFoundError, match="other.missing"):
        catalog.load_table("other.missing")


def test_drop_missing_table(catalog: FileSystemCatalog) -> None:
    catalog.create_database("db")
    with pytest.raises(TableNotFoundError, match="db.gone"):
        catalog.drop_table("db.gone")
    catalog.drop_table("db.gone", missing_ok=True)


def test_drop_and_recreate_table_starts_fresh(catalog: FileSystemCatalog) -> None:
    catalog.create_database("db")
    t = catalog.create_table("db.t", SCHEMA)
    write_table(t, pa.table({"id": [1], "name": ["a"]}))
    catalog.drop_table("db.t")
    t2 = catalog.create_table("db.t", pa.schema([("k", pa.int32())]))
    assert t2.latest_snapshot() is None
    assert t2.scan().to_arrow().num_rows == 0
    assert t2.arrow_schema.names == ["k"]


def test_open_table_by_path(catalog: FileSystemCatalog) -> None:
    catalog.create_database("db")
    t = catalog.create_table("db.t", SCHEMA)
    write_table(t, pa.table({"id": [7], "name": ["x"]}))
    opened = open_table(t.path)
    assert opened.scan().to_arrow().to_pylist() == [{"id": 7, "name": "x"}]
    uri = open_table("file://" + t.path)
    assert uri.scan().to_arrow().num_rows == 1


def test_catalog_from_file_uri(warehouse: str) -> None:
    cat = FileSystemCatalog("file://" + warehouse)
    cat.create_database("db")
    t = cat.create_table("db.t", SCHEMA)
    write_table(t, pa.table({"id": [1], "name": ["a"]}))
    assert FileSystemCatalog(warehouse).load_table("db.t").scan().to_arrow().num_rows == 1


def test_table_metadata(catalog: FileSystemCatalog) -> None:
    catalog.create_database("db")
    schema = pa.schema([("dt", pa.string()), ("id", pa.int64()), ("v", pa.float64())])
    t = catalog.create_table(
        "db.t", schema, primary_keys=["dt", "id"], partition_keys=["dt"], options={"bucket": "3"}
    )
    assert t.partition_keys == ["dt"]
    assert t.primary_keys == ["dt", "id"]
    assert t.options == {"bucket": "3"}
    assert "db.t" in repr(t)


# ---- identifiers -----------------------------------------------------------------------------------------

BAD_IDENTIFIERS = [
    "no_dot",
    "a.b.c",
    "db.",
    ".t",
    "db.t x",
    "db.t/x",
    "db/x.t",
    "db.t;drop",
    "d b.t",
    "db.-t",
    "db.t\n",
    "db.tä",
    "db..t",
    "",
]


@pytest.mark.parametrize("identifier", BAD_IDENTIFIERS)
def test_bad_identifier_rejected_everywhere(catalog: FileSystemCatalog, warehouse: str, identifier: str) -> None:
    catalog.create_database("db")
    before = _tree(warehouse)
    for call in (
        lambda: catalog.create_table(identifier, SCHEMA),
        lambda: catalog.load_table(identifier),
        lambda: catalog.drop_table(identifier),
        lambda: catalog.table_exists(identifier),
    ):
        with pytest.raises(SchemaError) as e:
            call()
        assert repr(identifier) in str(e.value) or repr(identifier.split(".")[-1]) in str(e.value) or any(
            repr(part) in str(e.value) for part in identifier.split(".")
        )
        assert isinstance(e.value, TableFormatError)
    assert _tree(warehouse) == before


@pytest.mark.parametrize("name", ["", "a b", "x/y", "x.y", "-x", "ä", "../up", "a\tb"])
def test_bad_database_names(catalog: FileSystemCatalog, warehouse: str, name: str) -> None:
    with pytest.raises(SchemaError) as e:
        catalog.create_database(name)
    assert repr(name) in str(e.value)
    assert _tree(warehouse) == set()
    with pytest.raises(SchemaError):
        catalog.list_tables(name)


def test_bad_identifier_types(catalog: FileSystemCatalog) -> None:
    with pytest.raises(SchemaError, match="identifier"):
        catalog.load_table(None)  # type: ignore[arg-type]
    with pytest.raises(SchemaError):
        catalog.create_database(3)  # type: ignore[arg-type]


def test_error_names_offending_part(catalog: FileSystemCatalog) -> None:
    catalog.create_database("db")
    with pytest.raises(SchemaError, match=r"table name 'bad name'"):
        catalog.create_table("db.bad name", SCHEMA)
    with pytest.raises(SchemaError, match=r"database name 'my db'"):
        catalog.create_table("my db.t", SCHEMA)
    with pytest.raises(SchemaError, match=r"'a\.b\.c'"):
        catalog.create_table("a.b.c", SCHEMA)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.from_regex(r"[A-Za-z0-9_][A-Za-z0-9_\-]{0,20}", fullmatch=True))
def test_valid_names_round_trip(warehouse: str, name: str) -> None:
    catalog = FileSystemCatalog(warehouse)
    catalog.create_database(name, exist_ok=True)
    ident = f"{name}.{name}"
    catalog.create_table(ident, SCHEMA, exist_ok=True)
    assert name in catalog.list_databases()
    assert name in catalog.list_tables(name)
    assert catalog.load_table(ident).identifier == ident


# ---- schemas ---------------------------------------------------------------------------------------------


def test_create_table_schema_errors_leave_nothing(catalog: FileSystemCatalog, warehouse: str) -> None:
    catalog.create_database("db")
    before = _tree(warehouse)
    cases = [
        (pa.schema([]), {}, "at least one column"),
        (pa.schema([("a", pa.int32()), ("a", pa.int64())]), {}, "duplicate column names \\['a'\\]"),
        (pa.schema([("_KEY_a", pa.int32())]), {}, "_KEY_a"),
        (pa.schema([("_row_kind", pa.string())]), {}, "_row_kind"),
        (SCHEMA, {"primary_keys": ["nope"]}, "primary keys \\['nope'\\]"),
        (SCHEMA, {"partition_keys": ["nope"]}, "partition keys \\['nope'\\]"),
        (SCHEMA, {"primary_keys": ["id"], "partition_keys": ["id"]}, "must not equal the partition keys"),
        (SCHEMA, {"primary_keys": ["id", "id"]}, "repeat"),
        (pa.schema([("n", pa.null())]), {}, "'n'"),
    ]
    for schema, kw, msg in cases:
        with pytest.raises(SchemaError, match=msg) as e:
            catalog.create_table("db.t", schema, **kw)
        assert "db.t" in str(e.value) or "'n'" in str(e.value)
        assert _tree(warehouse) == before
    assert catalog.list_tables("db") == []
