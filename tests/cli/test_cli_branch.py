"""`lakehouse --branch NAME ...` (or DB.TABLE$branch_NAME) reads and inspects a Paimon branch."""

from __future__ import annotations

import json
from decimal import Decimal

import pyarrow as pa

from cli.cli_helpers import ORDERS_SCHEMA, Run
from table_format import FileSystemCatalog, write_table


def test_branch_option_and_name(run: Run, shop: str) -> None:
    orders = FileSystemCatalog(shop).load_table("shop.orders")
    orders.create_branch("dev", from_latest=True)
    write_table(orders.branch("dev"), pa.table({"id": [99], "dt": ["2024-05-16"], "customer": ["x"],
                                                "amount": [Decimal("1.00")], "score": [1.0]}, schema=ORDERS_SCHEMA))

    def ids(*args: str) -> list[int]:
        return sorted(json.loads(line)["id"] for line in run(*args, "--format", "jsonl").stdout.splitlines())

    main_ids = ids("read", "shop.orders")
    assert 99 not in main_ids
    assert ids("--branch", "dev", "read", "shop.orders") == sorted([*main_ids, 99])
    assert ids("read", "shop.orders$branch_dev") == sorted([*main_ids, 99])
    result = run("--branch", "nope", "read", "shop.orders", code=1)
    assert "branch 'nope' does not exist" in result.stderr
