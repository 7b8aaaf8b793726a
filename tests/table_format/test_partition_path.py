"""Partition directory names against Java Paimon 0.9 (../shared/golden/partition_names.jsonl)."""

from __future__ import annotations

import datetime as dt
import math
import random
import shutil
import struct
import subprocess
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from table_format.errors import SchemaError, UnsupportedFeatureError
from table_format.partition_path import (
    escape_path_name,
    java_double_to_string,
    java_float_to_string,
    parse_partition_path,
    partition_path,
    partition_value_string,
    unescape_path_name,
)
from table_format.types import (
    BooleanType,
    DataType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IntType,
    LocalZonedTimestampType,
    TimestampType,
    TimeType,
    VarBinaryType,
    VarCharType,
    parse_type,
)
from tests.table_format.golden import golden_value, load_jsonl, needs

CASES = load_jsonl("partition_names.jsonl")
needs_golden = needs(CASES, "partition_names.jsonl")


def _case(d: dict[str, Any]) -> tuple[list[Any], list[str], list[DataType]]:
    if isinstance(d["type"], list):
        types = [parse_type(s) for s in d["type"]]
        return [golden_value(v, t) for v, t in zip(d["value"], types, strict=True)], ["dt", "hr"], types
    t = parse_type(d["type"])
    return [golden_value(d["value"], t)], ["p"], [t]


@needs_golden
def test_all_golden_partition_names() -> None:
    assert len(CASES) == 225
    for d in CASES:
        values, names, types = _case(d)
        assert partition_path(values, names, types) == d["dir"] + "/", d


@needs_golden
def test_golden_partition_names_parse_back() -> None:
    for d in CASES:
        values, names, types = _case(d)
        back = parse_partition_path(d["dir"], names, types)
        v, b = values[0], back[0]
        if v in ("", " ", "__DEFAULT_PARTITION__"):
            assert b is None  # blank values and the default name itself all map to the default partition
        elif isinstance(v, float) and math.isnan(v):
            assert math.isnan(b)
        elif isinstance(types[0], FloatType):
            assert b == struct.unpack("<f", struct.pack("<f", v))[0]
        else:
            assert tuple(back) == tuple(values), d


# --- escaping ------------------------------------------------------------------------------------------------


def test_escape_set() -> None:
    assert escape_path_name("a\"#%'*/:=?\\{}[]^b") == "a%22%23%25%27%2A%2F%3A%3D%3F%5C%7B%7D%5B%5D%5Eb"
    assert escape_path_name("\x00\x01\x1f\x7f") == "%00%01%1F%7F"
    assert escape_path_name(" ~!@$&()+,;.-_ünï日本") == " ~!@$&()+,;.-_ünï日本"
    with pytest.raises(SchemaError):
        escape_path_name("")


def test_unescape() -> None:
    for s in ["a/b", "50%", "%", "x%2", "k=v:1", "\x7f\t", "日本"]:
        assert unescape_path_name(escape_path_name(s)) == s
    assert unescape_path_name("%zz%4") == "%zz%4"
    assert unescape_path_name("a%2fb") == "a/b"
    assert unescape_path_name("%-1") == "%-1"  # Integer.parseInt gives -1: kept as is


def test_blank_values_use_default_name() -> None:
    t = [VarCharType()]
    for v in (None, "", " ", "\t\n", "\u3000"):
        assert partition_path([v], ["p"], t) == "p=__DEFAULT_PARTITION__/"
    assert partition_path(["\u00a0"], ["p"], t) == "p=\u00a0/"  # no-break space is not Java whitespace
    assert partition_path([None], ["p"], t, default_name="NULL") == "p=NULL/"


def test_unpartitioned_is_empty() -> None:
    assert partition_path([], [], []) == ""
    assert parse_partition_path("", [], []) == ()


def test_value_strings() -> None:
    assert partition_value_string(True, BooleanType()) == "true"
    assert partition_value_string(dt.date(2024, 1, 1), DateType()) == "19723"
    assert partition_value_string(dt.time(1, 2, 3, 4000), TimeType()) == "3723004"
    assert partition_value_string(Decimal("-1.5"), DecimalType(10, 2)) == "-1.50"
    assert partition_value_string(Decimal("1E+3"), DecimalType(10, 0)) == "1000"
    assert partition_value_string(dt.datetime(2024, 1, 1, 10, 0, 1, 500000), TimestampType(3)) == (
        "2024-01-01T10:00:01.500"
    )
    assert (
        partition_value_string(dt.datetime(2024, 1, 1, 10, 0, 0, 1), TimestampType(6)) == "2024-01-01T10:00:00.000001"
    )
    aware = dt.datetime(2024, 1, 1, 12, 0, tzinfo=dt.timezone(dt.timedelta(hours=2)))
    assert partition_value_string(aware, LocalZonedTimestampType(3)) == "2024-01-01T10:00"
    assert partition_value_string(dt.datetime(12, 3, 4), TimestampType(3)) == "0012-03-04T00:00"
    with pytest.raises(UnsupportedFeatureError):
        partition_value_string(b"x", VarBinaryType())


def test_parse_partition_path() -> None:
    names = ["dt", "hr", "ts", "x"]
    types: list[DataType] = [VarCharType(), IntType(), TimestampType(6), DoubleType()]
    values = ["2024/05/14", 7, dt.datetime(2024, 1, 1, 0, 0, 0, 123400), 1e10]
    path = partition_path(values, names, types)
    assert path == "dt=2024%2F05%2F14/hr=7/ts=2024-01-01T00%3A00%3A00.123400/x=1.0E10/"
    assert parse_partition_path(path, names, types) == tuple(values)
    assert parse_partition_path("dt=a/hr=__DEFAULT_PARTITION__", names[:2], types[:2]) == ("a", None)
    with pytest.raises(SchemaError):
        parse_partition_path("dt=a", names[:2], types[:2])
    with pytest.raises(SchemaError):
        parse_partition_path("dt=a/hour=1", names[:2], types[:2])
    with pytest.raises(SchemaError):
        parse_partition_path("dt=a/hr=x", names[:2], types[:2])


# --- Java Float/Double.toString --------------------------------------------------------------------------------

DOUBLES = [
    (1.0, "1.0"),
    (0.1, "0.1"),
    (1e10, "1.0E10"),
    (1e-4, "1.0E-4"),
    (1e-3, "0.001"),
    (5e-324, "4.9E-324"),
    (-0.0, "-0.0"),
    (0.0, "0.0"),
    (float("nan"), "NaN"),
    (float("inf"), "Infinity"),
    (float("-inf"), "-Infinity"),
    (1234567.0, "1234567.0"),
    (12345678.0, "1.2345678E7"),
    (1e7, "1.0E7"),
    (9999999.999999998, "9999999.999999998"),
    (0.30000000000000004, "0.30000000000000004"),
    (1.7976931348623157e308, "1.7976931348623157E308"),
    (2.2250738585072014e-308, "2.2250738585072014E-308"),
    (100.0, "100.0"),
    (1e100, "1.0E100"),
    (-2.25, "-2.25"),
    # JDK <= 18 FloatingDecimal prints these with more digits than the shortest repr
    (7.842210092465324e17, "7.8422100924653235E17"),
    (-9.590546038273811e17, "-9.5905460382738112E17"),
    (1.3373752195200093e17, "1.33737521952000928E17"),
    (4.176194859519056e-53, "4.1761948595190557E-53"),
    (8.095e-320, "8.0948E-320"),
    (1.262177448353619e-29, "1.2621774483536189E-29"),
    (3.1526711628916387e25, "3.1526711628916386E25"),
    (2.0e23, "1.9999999999999998E23"),
    (1e23, "9.999999999999999E22"),
    (8.41e21, "8.409999999999999E21"),
]
FLOATS = [
    (1.0, "1.0"),
    (0.1, "0.1"),
    (1e10, "1.0E10"),
    (1e-5, "1.0E-5"),
    (1e-4, "1.0E-4"),
    (0.001, "0.001"),
    (3.4028234663852886e38, "3.4028235E38"),
    (1.401298464324817e-45, "1.4E-45"),
    (12345678.0, "1.2345678E7"),
    (-0.0, "-0.0"),
    (float("nan"), "NaN"),
    (float("-inf"), "-Infinity"),
    (1.1754943508222875e-38, "1.17549435E-38"),
    # JDK <= 18 FloatingDecimal quirks
    (913962880.0, "9.1396288E8"),
    (48212258816.0, "4.8212259E10"),
    (-4.9039019180713574e17, "-4.90390192E17"),
    (364385796096.0, "3.64385796E11"),
    (-89537504.0, "-8.9537504E7"),
    (-7.57179768527881e25, "-7.5717976E25"),
]


@pytest.mark.parametrize(("value", "text"), DOUBLES)
def test_java_double_to_string(value: float, text: str) -> None:
    assert java_double_to_string(value) == text


@pytest.mark.parametrize(("value", "text"), FLOATS)
def test_java_float_to_string(value: float, text: str) -> None:
    assert java_float_to_string(value) == text


_JAVA_SRC = """
import java.util.Random;
public class FloatStrings {
  public static void main(String[] a) {
    Random r = new Random(Long.parseLong(a[0]));
    for (int i = 0; i < Integer.parseInt(a[1]); i++) {
      long d = r.nextLong(); int f = r.nextInt();
      double x = (i % 3 == 0) ? Double.longBitsToDouble(d) : (i % 3 == 1) ? (double) (d >> r.nextInt(64))
          : r.nextDouble() * Math.pow(10, r.nextInt(40) - 20);
      System.out.println(Long.toHexString(Double.doubleToRawLongBits(x)) + " " + x + " "
          + Integer.toHexString(f) + " " + Float.intBitsToFloat(f));
    }
  }
}
"""


@pytest.mark.interop
@pytest.mark.skipif(not (shutil.which("javac") and shutil.which("java")), reason="needs a JDK (javac, java)")
def test_against_local_jdk(tmp_path: Path) -> None:
    """Random doubles/floats printed by the local JDK (<= 18 expected: the oracle's JDK 17) agree."""
    version = subprocess.run(["java", "-version"], capture_output=True, text=True).stderr
    if any(f'version "{v}' in version for v in range(19, 40)):
        pytest.skip(f"JDK 19+ prints shortest digits; emulation targets JDK 8-17 ({version.splitlines()[0]})")
    (tmp_path / "FloatStrings.java").write_text(_JAVA_SRC)
    subprocess.run(["javac", "FloatStrings.java"], cwd=tmp_path, check=True, capture_output=True)
    seed = random.randrange(1 << 30)
    out = subprocess.run(
        ["java", "-cp", str(tmp_path), "FloatStrings", str(seed), "20000"], capture_output=True, text=True, check=True
    ).stdout
    for line in out.splitlines():
        dbits, dtext, fbits, ftext = line.split()
        d = struct.unpack(">d", bytes.fromhex(dbits.zfill(16)))[0]
        f = struct.unpack(">f", bytes.fromhex(fbits.zfill(8)))[0]
        assert java_double_to_string(d) == dtext, (seed, dbits)
        assert java_float_to_string(f) == ftext, (seed, fbits)
