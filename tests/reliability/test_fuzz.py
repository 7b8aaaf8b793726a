"""Corrupted and foreign files: flipped bits, truncations, random JSON and Avro shapes, unknown future versions.

Complements tests/table_format/meta (codec-level flips/truncations of manifests and snapshots, Java files) with:
* table-level reads of a table whose data files (Parquet) or metadata files (snapshot, schema, manifest list,
  manifest, index manifest) were damaged: a CorruptMetadataError naming the file, or exactly the right rows;
  never other rows, never a bare pyarrow/KeyError/JSONDecodeError/struct.error;
* random JSON shapes for the snapshot and schema decoders, random records (right Avro schema, random values) and
  foreign Avro schemas for the manifest, manifest-list and index-manifest decoders;
* garbage and stale LATEST/EARLIEST hints (never trusted);
* unknown future versions of snapshot, schema and manifest files.

Default: about 250 flips per data-file kind and 40 per metadata file; soak (`-m slow`): 10x.
"""

from __future__ import annotations

import copy
import json
import os
import random
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rel_helpers import create, read_bytes, read_rows, read_text, reload, rows

from table_format import (
    CorruptMetadataError,
    FileSystemCatalog,
    OptionError,
    Table,
    TableFormatError,
    write_table,
)
from table_format.meta.avro import write_avro
from table_format.meta.manifest import (
    INDEX_MANIFEST_ENTRY_SCHEMA,
    MANIFEST_ENTRY_SCHEMA,
    MANIFEST_FILE_META_SCHEMA,
    decode_index_manifest,
    decode_manifest,
    decode_manifest_list,
)
from table_format.meta.snapshot import Snapshot
from table_format.schema import TableSchema

JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                        HealthCheck.too_slow])


def seeded(warehouse: str, kind: str, commits: int = 3) -> Table:
    table = create(warehouse, kind)
    for i in range(commits):
        write_table(table, rows(kind, range(i * 40, i * 40 + 60), i, "val"))
    return table


def damage_and_read(table: Table, path: str, damaged: bytes, good: list[tuple[Any, ...]], outcomes: dict[str, int],
                    *, name_in_error: str | None = None) -> None:
    """Write `damaged` over `path`, read the whole table afresh: the exact rows or a CorruptMetadataError naming
    the file. Restores the file."""
    with open(path, "rb") as f:
        original = f.read()
    with open(path, "wb") as f:
        f.write(damaged)
    try:
        got = read_rows(reload(table))
    except CorruptMetadataError as e:
        assert (name_in_error or os.path.basename(path)) in str(e), str(e)
        outcomes["corrupt"] += 1
    else:
        assert got == good, f"{path}: damaged file read as other rows"
        outcomes["exact"] += 1
    finally:
        with open(path, "wb") as f:
            f.write(original)


def flips(data: bytes, rnd: random.Random, n: int) -> list[bytes]:
    out = []
    for _ in range(n):
        buf = bytearray(data)
        for _ in range(rnd.choice((1, 1, 1, 2, 3))):
            buf[rnd.randrange(len(buf))] ^= 1 << rnd.randrange(8)
        out.append(bytes(buf))
    return out


def truncations(data: bytes) -> list[bytes]:
    cuts = {0, 1, 4, len(data) // 3, len(data) // 2, len(data) - 9, len(data) - 8, len(data) - 1}
    return [data[:c] for c in sorted(cuts) if 0 <= c < len(data)]


# ---- data files --------------------------------------------------------------------------------------------------


def _data_file_fuzz(warehouse: str, kind: str, trials: int) -> dict[str, int]:
    table = seeded(warehouse, kind)
    good = read_rows(reload(table))
    rnd = random.Random(kind)
    outcomes = {"corrupt": 0, "exact": 0}
    paths = sorted({table.store.data_file_path(s.partition, s.bucket, f.file_name)
                    for s in table.scan().plan() for f in s.files})
    for path in paths[:3]:
        with open(path, "rb") as f:
            data = f.read()
        for damaged in flips(data, rnd, trials // min(3, len(paths))) + truncations(data):
            damage_and_read(table, path, damaged, good, outcomes)
    assert outcomes["corrupt"] > 0
    return outcomes


@pytest.mark.parametrize("kind", ["append-unaware", "pk-fixed-write-only", "partitioned"])
def test_flipped_bytes_in_parquet_data_files_never_read_as_other_rows(warehouse: str, kind: str) -> None:
    print(kind, _data_file_fuzz(warehouse, kind, trials=250))


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["append-unaware", "pk-fixed-write-only", "partitioned"])
def test_flipped_bytes_in_data_files_soak(warehouse: str, kind: str) -> None:
    print(kind, _data_file_fuzz(warehouse, kind, trials=3000))


def test_data_file_of_another_size_or_schema_is_corrupt(warehouse: str) -> None:
    """A data file replaced by another valid Parquet file (other rows, other columns) is caught too."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = seeded(warehouse, "append-unaware", commits=1)
    (split,) = table.scan().plan()
    path = table.store.data_file_path(split.partition, split.bucket, split.files[0].file_name)
    original = pq.read_table(path)
    for replacement in (original.slice(0, 10), original.drop_columns(["v"]),
                        original.rename_columns(["id", "w", "x"]),
                        pa.table({"id": pa.array(["a"] * original.num_rows), "w": original["w"], "v": original["v"]})):
        pq.write_table(replacement, path)
        with pytest.raises(CorruptMetadataError, match=split.files[0].file_name):
            read_rows(reload(table))


def _with_page_crc_changed(data: bytes, offset: int) -> bytes:
    """`data` with the CRC stored in the page header at `offset` changed and the page itself untouched (Thrift compact
    encoding: fields 1-3 of a PageHeader are i32 varints, field 4 is the crc)."""
    buf = bytearray(data)
    pos = offset
    for _ in range(3):
        assert buf[pos] == 0x15, "PageHeader fields 1-3: i32, one after another"
        pos += 1
        while buf[pos] & 0x80:
            pos += 1
        pos += 1
    assert buf[pos] == 0x15, "PageHeader field 4 (crc): i32"
    buf[pos + 1] ^= 0x02
    return bytes(buf)


@pytest.mark.parametrize("budget", [None, "1 kb"], ids=["whole", "key-ranges"])
@pytest.mark.parametrize("verify", [None, "true", "false"], ids=["default", "on", "off"])
def test_page_checksums_are_verified_unless_the_table_turns_them_off(warehouse: str, verify: str | None,
                                                                     budget: str | None) -> None:
    """A page whose stored CRC no longer matches its bytes: a CorruptMetadataError naming the file by default and with
    `parquet.page.verify-checksum.enabled` = true; with false (parquet-mr's default) pages are read unchecked, and since
    only the CRC changed the rows are exact. Whole splits and splits merged in key ranges (a tiny budget) alike."""
    import pyarrow.parquet as pq

    options = {} if verify is None else {"parquet.page.verify-checksum.enabled": verify}
    if budget is not None:
        options["sort-spill-buffer-size"] = budget
    table = create(warehouse, "pk-fixed-write-only", extra_options=options)
    for i in range(2):
        write_table(table, rows("pk-fixed-write-only", range(i * 50, i * 50 + 100), i, "val"))
    good = read_rows(reload(table))
    split = table.scan().plan()[0]
    path = table.store.data_file_path(split.partition, split.bucket, split.files[0].file_name)
    group = pq.ParquetFile(path).metadata.row_group(0)
    column = next(group.column(i) for i in range(group.num_columns) if group.column(i).path_in_schema == "v")
    offset = column.dictionary_page_offset if column.has_dictionary_page else column.data_page_offset
    with open(path, "rb") as f:
        data = f.read()
    with open(path, "wb") as f:
        f.write(_with_page_crc_changed(data, offset))
    if verify == "false":
        assert read_rows(reload(table)) == good
    else:
        with pytest.raises(CorruptMetadataError, match=split.files[0].file_name):
            read_rows(reload(table))


def test_page_checksum_option_takes_true_or_false(warehouse: str) -> None:
    with pytest.raises(OptionError, match="'parquet.page.verify-checksum.enabled': 'yes' is not true or false"):
        create(warehouse, "append-unaware", extra_options={"parquet.page.verify-checksum.enabled": "yes"})


# ---- metadata files, read through the table ------------------------------------------------------------------------


def _metadata_files(table: Table) -> list[str]:
    out = []
    for sub in ("snapshot", "schema", "manifest"):
        d = os.path.join(table.path, sub)
        out += [os.path.join(d, n) for n in sorted(os.listdir(d)) if not n.startswith(".") and
                n not in ("LATEST", "EARLIEST")]
    return out


def _metadata_fuzz(warehouse: str, kind: str, trials: int) -> dict[str, int]:
    table = seeded(warehouse, kind)
    good = read_rows(reload(table))
    rnd = random.Random(kind)
    outcomes = {"corrupt": 0, "exact": 0}
    for path in _metadata_files(table):
        with open(path, "rb") as f:
            data = f.read()
        for damaged in flips(data, rnd, trials) + truncations(data):
            if _still_valid_but_different(path, data, damaged):
                # JSON has no checksum: a flip inside a value (an option, a count, a time) can leave a valid file
                # that means something else; all that can be asked is a clean outcome
                outcomes["semantic"] = outcomes.get("semantic", 0) + 1
                with open(path, "wb") as f:
                    f.write(damaged)
                try:
                    read_rows(reload(table))
                except TableFormatError:
                    pass
                finally:
                    with open(path, "wb") as f:
                        f.write(data)
                continue
            # a damaged manifest list can name a manifest that does not exist: the error names that one
            try:
                damage_and_read(table, path, damaged, good, outcomes)
            except AssertionError:
                damage_and_read(table, path, damaged, good, outcomes, name_in_error="manifest")
    return outcomes


def _still_valid_but_different(path: str, data: bytes, damaged: bytes) -> bool:
    name = os.path.basename(path)
    decode: Callable[[bytes], Any]
    if name.startswith("snapshot-"):
        def decode(b: bytes) -> Any:
            return Snapshot.from_json(b)
    elif name.startswith("schema-"):
        def decode(b: bytes) -> Any:
            return TableSchema.from_json(b)
    else:
        return False
    try:
        return bool(decode(damaged) != decode(data))
    except CorruptMetadataError:
        return False


@pytest.mark.parametrize("kind", ["pk-fixed-write-only", "pk-dynamic"])
def test_flipped_and_truncated_metadata_files_through_the_table(warehouse: str, kind: str) -> None:
    print(kind, _metadata_fuzz(warehouse, kind, trials=40))


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["pk-fixed-write-only", "pk-dynamic", "partitioned", "append-unaware"])
def test_flipped_metadata_files_soak(warehouse: str, kind: str) -> None:
    print(kind, _metadata_fuzz(warehouse, kind, trials=400))


# ---- unknown future versions -----------------------------------------------------------------------------------------


def test_future_snapshot_and_schema_versions_are_refused_naming_the_file(warehouse: str) -> None:
    table = seeded(warehouse, "pk-fixed-write-only", commits=2)
    snap_path = os.path.join(table.path, "snapshot", "snapshot-2")
    obj = json.loads(read_text(snap_path))
    obj["version"] = 99
    with open(snap_path, "w") as f:
        f.write(json.dumps(obj))
    with pytest.raises(CorruptMetadataError, match="snapshot-2.*99|99.*snapshot-2"):
        reload(table).scan().to_arrow()
    assert len(read_rows(reload(table), snapshot_id=1)) == 60

    schema_path = os.path.join(table.path, "schema", "schema-0")
    obj = json.loads(read_text(schema_path))
    obj["version"] = 99
    with open(schema_path, "w") as f:
        f.write(json.dumps(obj))
    with pytest.raises(CorruptMetadataError, match="schema-0"):
        reload(table)


@pytest.mark.parametrize(("schema", "decode", "prefix"), [
    (MANIFEST_ENTRY_SCHEMA, decode_manifest, "manifest-"),
    (MANIFEST_FILE_META_SCHEMA, decode_manifest_list, "manifest-list-"),
])
def test_future_manifest_versions_through_the_table(warehouse: str, schema: Any, decode: Callable[..., Any],
                                                    prefix: str) -> None:
    from table_format.meta.avro import read_avro

    table = seeded(warehouse, "append-unaware", commits=1)
    mdir = os.path.join(table.path, "manifest")
    name = next(n for n in sorted(os.listdir(mdir)) if n.startswith(prefix) and
                (prefix == "manifest-list-" or not n.startswith("manifest-list-")) and
                (prefix != "manifest-list-" or decode(read_bytes(os.path.join(mdir, n)), source=n)))
    path = os.path.join(mdir, name)
    records = read_avro(read_bytes(path), source=name)
    for r in records:
        r["_VERSION"] = 7
    with open(path, "wb") as f:
        f.write(write_avro(schema, records, codec="null"))
    with pytest.raises(CorruptMetadataError, match=name) as info:
        reload(table).scan().to_arrow()
    # the rewritten file has another size than recorded, which is caught first; the decoder names the version
    assert "_VERSION 7" in str(info.value) or "bytes" in str(info.value)
    with pytest.raises(CorruptMetadataError, match=f"{name}.*_VERSION 7"):
        (decode_manifest if prefix == "manifest-" else decode_manifest_list)(read_bytes(path), source=name)


# ---- random JSON shapes -----------------------------------------------------------------------------------------------


def _real_snapshot_and_schema(tmp_path: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    table = seeded(str(tmp_path / "wh"), "partitioned", commits=1)
    with open(os.path.join(table.path, "snapshot", "snapshot-1")) as f:
        snap = json.load(f)
    with open(os.path.join(table.path, "schema", "schema-0")) as f:
        schema = json.load(f)
    return snap, schema


_REAL: dict[str, Any] = {}


@pytest.fixture(scope="module")
def real_json(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], dict[str, Any]]:
    if not _REAL:
        _REAL["pair"] = _real_snapshot_and_schema(tmp_path_factory.mktemp("real"))
    return _REAL["pair"]


def _mutate(obj: Any, data: st.DataObject) -> Any:
    """Replace, delete or add a few keys anywhere in a JSON document with random JSON."""
    obj = copy.deepcopy(obj)
    for _ in range(data.draw(st.integers(1, 4))):
        node = obj
        while True:
            keys = list(node) if isinstance(node, dict) else list(range(len(node))) if isinstance(node, list) else []
            if not keys or data.draw(st.booleans()):
                break
            child = node[data.draw(st.sampled_from(keys))]
            if not isinstance(child, (dict, list)):
                break
            node = child
        if isinstance(node, dict) and node:
            key = data.draw(st.sampled_from(sorted(node)))
            action = data.draw(st.sampled_from(["replace", "delete", "add"]))
            if action == "replace":
                node[key] = data.draw(JSON)
            elif action == "delete":
                del node[key]
            else:
                node[data.draw(st.text(max_size=6))] = data.draw(JSON)
        elif isinstance(node, list) and node:
            node[data.draw(st.integers(0, len(node) - 1))] = data.draw(JSON)
    return obj


@FUZZ
@given(doc=JSON)
def test_snapshot_decoder_random_json(doc: Any) -> None:
    _decode_or_corrupt(lambda b: Snapshot.from_json(b, source="fuzz/snapshot-9"), json.dumps(doc), "fuzz/snapshot-9")


@FUZZ
@given(doc=JSON)
def test_schema_decoder_random_json(doc: Any) -> None:
    _decode_or_corrupt(lambda b: TableSchema.from_json(b, source="fuzz/schema-9"), json.dumps(doc), "fuzz/schema-9")


@FUZZ
@given(data=st.data())
def test_snapshot_decoder_mutated_real_snapshot(real_json: Any, data: st.DataObject) -> None:
    doc = _mutate(real_json[0], data)
    snap = _decode_or_corrupt(lambda b: Snapshot.from_json(b, source="fuzz/snapshot-1"), json.dumps(doc),
                              "fuzz/snapshot-1")
    if snap is not None:
        assert isinstance(snap.id, int) and isinstance(snap.base_manifest_list, str)
        Snapshot.from_json(snap.to_json())  # what decodes, re-encodes


@FUZZ
@given(data=st.data())
def test_schema_decoder_mutated_real_schema(real_json: Any, data: st.DataObject) -> None:
    doc = _mutate(real_json[1], data)
    schema = _decode_or_corrupt(lambda b: TableSchema.from_json(b, source="fuzz/schema-0"), json.dumps(doc),
                                "fuzz/schema-0")
    if schema is not None:
        TableSchema.from_json(schema.to_json())


def _decode_or_corrupt(decode: Callable[[bytes], Any], text: str, source: str) -> Any:
    try:
        return decode(text.encode())
    except CorruptMetadataError as e:
        assert source in str(e)
        return None


# ---- random Avro records and foreign schemas ----------------------------------------------------------------------


def _values(schema: Any, data: st.DataObject, depth: int = 0) -> Any:
    """A random value of an Avro schema (records, unions, arrays, primitives)."""
    if isinstance(schema, list):  # union
        return _values(data.draw(st.sampled_from(schema)), data, depth)
    if isinstance(schema, str):
        return {
            "null": lambda: None,
            "boolean": lambda: data.draw(st.booleans()),
            "int": lambda: data.draw(st.integers(-(2**31), 2**31 - 1)),
            "long": lambda: data.draw(st.integers(-(2**63), 2**63 - 1)),
            "string": lambda: data.draw(st.text(max_size=12)),
            "bytes": lambda: data.draw(st.binary(max_size=40)),
            "float": lambda: data.draw(st.floats(width=32, allow_nan=False)),
            "double": lambda: data.draw(st.floats(allow_nan=False)),
        }[schema]()
    t = schema["type"]
    if t == "record":
        return {f["name"]: _values(f["type"], data, depth + 1) for f in schema["fields"]}
    if t == "array":
        return [_values(schema["items"], data, depth + 1) for _ in range(data.draw(st.integers(0, 2)))]
    if t == "map":
        return {data.draw(st.text(max_size=4)): _values(schema["values"], data, depth + 1)
                for _ in range(data.draw(st.integers(0, 2)))}
    if isinstance(t, (dict, list, str)):
        return _values(t, data, depth)
    raise AssertionError(schema)


AVRO = [("manifest", MANIFEST_ENTRY_SCHEMA, decode_manifest),
        ("manifest-list", MANIFEST_FILE_META_SCHEMA, decode_manifest_list),
        ("index-manifest", INDEX_MANIFEST_ENTRY_SCHEMA, decode_index_manifest)]


@pytest.mark.parametrize(("name", "schema", "decode"), AVRO, ids=[a[0] for a in AVRO])
@FUZZ
@given(data=st.data())
def test_avro_decoders_random_records(name: str, schema: Any, decode: Callable[..., Any], data: st.DataObject) -> None:
    records = [_values(schema, data) for _ in range(data.draw(st.integers(1, 3)))]
    if data.draw(st.booleans()):  # mostly-valid: the right format version
        for r in records:
            r["_VERSION"] = {"manifest": 2, "manifest-list": 2, "index-manifest": 1}[name]
    blob = write_avro(schema, records, codec=data.draw(st.sampled_from(["null", "deflate"])))
    try:
        got = decode(blob, source=f"fuzz/{name}")
    except CorruptMetadataError as e:
        assert f"fuzz/{name}" in str(e)
    else:
        assert isinstance(got, list) and len(got) == len(records)


def _foreign(schema: dict[str, Any], data: st.DataObject) -> dict[str, Any]:
    """The schema with one top-level field dropped, renamed or retyped."""
    schema = copy.deepcopy(schema)
    fields = schema["fields"]
    i = data.draw(st.integers(0, len(fields) - 1))
    action = data.draw(st.sampled_from(["drop", "rename", "retype"]))
    if action == "drop" and len(fields) > 1:
        del fields[i]
    elif action == "rename":
        fields[i]["name"] = fields[i]["name"] + "_X"
    else:
        fields[i]["type"] = data.draw(st.sampled_from(["string", "long", "bytes", ["null", "int"]]))
    return schema


@pytest.mark.parametrize(("name", "schema", "decode"), AVRO, ids=[a[0] for a in AVRO])
@FUZZ
@given(data=st.data())
def test_avro_decoders_foreign_schemas(name: str, schema: Any, decode: Callable[..., Any], data: st.DataObject) -> None:
    foreign = _foreign(schema, data)
    records = [_values(foreign, data) for _ in range(data.draw(st.integers(1, 2)))]
    try:
        blob = write_avro(foreign, records, codec="null")
    except Exception:  # noqa: BLE001 - fastavro refused the drawn schema itself
        return
    try:
        decode(blob, source=f"fuzz/{name}")
    except CorruptMetadataError as e:
        assert f"fuzz/{name}" in str(e)


# ---- hints --------------------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def hinted_table(tmp_path_factory: pytest.TempPathFactory) -> Table:
    table = seeded(str(tmp_path_factory.mktemp("hints")), "append-unaware", commits=4)
    os.remove(os.path.join(table.path, "snapshot", "snapshot-1"))  # as after an expiration: earliest is 2
    return table


@FUZZ
@given(latest=st.binary(max_size=12) | st.integers(-5, 50).map(lambda i: str(i).encode()),
       earliest=st.binary(max_size=12) | st.integers(-5, 50).map(lambda i: str(i).encode()))
def test_hints_are_never_trusted_blindly(hinted_table: Table, latest: bytes, earliest: bytes) -> None:
    snap_dir = os.path.join(hinted_table.path, "snapshot")
    for name, content in (("LATEST", latest), ("EARLIEST", earliest)):
        with open(os.path.join(snap_dir, name), "wb") as f:
            f.write(content)
    fresh = FileSystemCatalog(os.path.dirname(os.path.dirname(hinted_table.path))).load_table(hinted_table.identifier)
    assert fresh.store.snapshots.latest_id() == 4
    assert fresh.store.snapshots.earliest_id() == 2
    assert fresh.latest_snapshot().id == 4
    assert len(read_rows(fresh)) == 4 * 60


def test_half_written_snapshot_is_never_trusted(warehouse: str) -> None:
    """A truncated snapshot file (as a non-atomic store could leave) fails loudly; the hint past it is ignored."""
    table = seeded(warehouse, "append-unaware", commits=2)
    snap_dir = os.path.join(table.path, "snapshot")
    with open(os.path.join(snap_dir, "snapshot-2"), "rb") as f:
        full = f.read()
    for cut in (0, 1, len(full) // 2, len(full) - 1):
        with open(os.path.join(snap_dir, "snapshot-2"), "wb") as f:
            f.write(full[:cut])
        with open(os.path.join(snap_dir, "LATEST"), "w") as f:
            f.write("7")  # garbage pointing past the end
        with pytest.raises(CorruptMetadataError, match="snapshot-2"):
            reload(table).scan().to_arrow()
        assert len(read_rows(reload(table), snapshot_id=1)) == 60
