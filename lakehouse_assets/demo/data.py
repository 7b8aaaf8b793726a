"""Deterministic batches for the demo lakehouse: batch `n` of each stream is a pure function of `n` (seeded numpy).

An order's attributes are a function of its id, so an update or a delete of order 17 in any batch carries the same
day, customer and product as its insert. Each batch is a few hundred rows: the whole demo runs in seconds.
"""

import datetime as dt

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

DAYS = ("2024-05-14", "2024-05-15", "2024-05-16")
ORDERS_PER_BATCH = 200
PRODUCTS = 20
USERS = 60
EPOCH = dt.datetime(2024, 5, 14, 8, 0, 0)

ORDERS_SCHEMA = pa.schema([
    pa.field("dt", pa.string(), nullable=False), pa.field("order_id", pa.int64(), nullable=False),
    ("customer_id", pa.int64()), ("product_id", pa.int64()), ("quantity", pa.int32()), ("price", pa.float64()),
    ("amount", pa.float64()), ("status", pa.string()), ("updated_at", pa.timestamp("us")),
])
PAYMENTS_SCHEMA = pa.schema([pa.field("order_id", pa.int64(), nullable=False), ("amount_paid", pa.float64()),
                             ("payment_status", pa.string()), ("pay_time", pa.timestamp("us"))])
SHIPMENTS_SCHEMA = pa.schema([pa.field("order_id", pa.int64(), nullable=False), ("carrier", pa.string()),
                              ("ship_status", pa.string()), ("ship_time", pa.timestamp("us"))])
SALES_SCHEMA = pa.schema([pa.field("product_id", pa.int64(), nullable=False), ("price", pa.float64()),
                          ("sales", pa.int64())])
CLICKSTREAM_SCHEMA = pa.schema([
    pa.field("dt", pa.string(), nullable=False), ("event_id", pa.int64()), ("user_id", pa.int64()),
    ("page", pa.string()), ("event_time", pa.timestamp("us")), ("received_at", pa.timestamp("us")),
])
PAGES = np.array(["/", "/search", "/product", "/cart", "/checkout"])
CARRIERS = np.array(["dhl", "ups", "post"])


def _rng(stream: str, batch: int) -> np.random.Generator:
    return np.random.default_rng([sum(stream.encode()), batch])


def _times(batch: int, offsets_s: np.ndarray) -> pa.Array:
    base = np.datetime64(EPOCH + dt.timedelta(hours=batch), "us")
    return pa.array(base + offsets_s.astype("timedelta64[s]"), pa.timestamp("us"))


def _orders(ids: np.ndarray, status: np.ndarray, times: pa.Array) -> dict[str, object]:
    product = ids % PRODUCTS
    quantity = (1 + ids % 5).astype(np.int32)
    price = np.round(5.0 + 2.5 * product, 2)
    return {"dt": np.array(DAYS)[ids % len(DAYS)], "order_id": ids, "customer_id": (ids * 7919) % 500,
            "product_id": product, "quantity": quantity, "price": price, "amount": np.round(price * quantity, 2),
            "status": status, "updated_at": times}


def orders_batch(batch: int) -> pa.Table:
    """A CDC batch of the orders table: new orders (+I), then updates (+U) and deletes (-D) of earlier ones."""
    rng = _rng("orders", batch)
    new_ids = np.arange(batch * ORDERS_PER_BATCH, (batch + 1) * ORDERS_PER_BATCH, dtype=np.int64)
    parts = [pa.table({**_orders(new_ids, np.full(len(new_ids), "created"), _times(batch, np.arange(len(new_ids)))),
                       "_row_kind": np.full(len(new_ids), "+I")})]
    if batch > 0:
        earlier = rng.choice(batch * ORDERS_PER_BATCH, size=60, replace=False).astype(np.int64)
        updated, deleted = np.sort(earlier[:45]), np.sort(earlier[45:])
        status = rng.choice(np.array(["paid", "shipped", "cancelled"]), size=len(updated))
        parts.append(pa.table({**_orders(updated, status, _times(batch, 1000 + np.arange(len(updated)))),
                               "_row_kind": np.full(len(updated), "+U")}))
        parts.append(pa.table({**_orders(deleted, np.full(len(deleted), "deleted"),
                                         _times(batch, 2000 + np.arange(len(deleted)))),
                               "_row_kind": np.full(len(deleted), "-D")}))
    schema = ORDERS_SCHEMA.append(pa.field("_row_kind", pa.string()))
    return pa.concat_tables([p.cast(schema) for p in parts])


def payments_batch(batch: int) -> pa.Table:
    """Payments of about 70% of the batch's new orders."""
    rng = _rng("payments", batch)
    ids = np.arange(batch * ORDERS_PER_BATCH, (batch + 1) * ORDERS_PER_BATCH, dtype=np.int64)
    ids = ids[rng.random(len(ids)) < 0.7]
    amount = np.round((5.0 + 2.5 * (ids % PRODUCTS)) * (1 + ids % 5), 2)
    return pa.table({"order_id": ids, "amount_paid": amount, "payment_status": np.full(len(ids), "paid"),
                     "pay_time": _times(batch, 3600 + rng.integers(0, 600, len(ids)))}, schema=PAYMENTS_SCHEMA)


def bad_payments(batch: int, n: int = 5) -> pa.Table:
    """Batch `batch` of the payments with a planted fault: its first `n` payments again, with negated amounts
    (negative amounts, orders paid twice), the kind of batch an audit must keep out of the table."""
    good = payments_batch(batch)
    again = good.slice(0, n)
    again = again.set_column(1, "amount_paid", pc.negate(again["amount_paid"]))
    return pa.concat_tables([good, again])


def shipments_batch(batch: int) -> pa.Table:
    """Shipments of about half of the batch's new orders, by one of three carriers."""
    rng = _rng("shipments", batch)
    ids = np.arange(batch * ORDERS_PER_BATCH, (batch + 1) * ORDERS_PER_BATCH, dtype=np.int64)
    ids = ids[rng.random(len(ids)) < 0.5]
    return pa.table({"order_id": ids, "carrier": CARRIERS[ids % len(CARRIERS)],
                     "ship_status": rng.choice(np.array(["packed", "shipped"]), size=len(ids)),
                     "ship_time": _times(batch, 7200 + rng.integers(0, 600, len(ids)))}, schema=SHIPMENTS_SCHEMA)


def sales_batch(batch: int) -> pa.Table:
    """Sales records (product, unit price, units): the aggregation table keeps max(price) and sum(sales)."""
    rng = _rng("sales", batch)
    product = rng.integers(0, PRODUCTS, 150).astype(np.int64)
    price = np.round(5.0 + 2.5 * product + rng.normal(0, 1.0, len(product)), 2)
    return pa.table({"product_id": product, "price": price, "sales": rng.integers(1, 10, len(product))},
                    schema=SALES_SCHEMA)


def clickstream_batch(batch: int) -> pa.Table:
    """Page views; an at-least-once feed: a tenth of the previous batch is delivered again (same event_id)."""
    rng = _rng("clickstream", batch)
    n = 300
    ids = np.arange(batch * n, (batch + 1) * n, dtype=np.int64)
    offsets = np.sort(rng.integers(0, 3 * 86400, n))
    if batch > 0:
        again = np.sort(rng.choice(n, size=n // 10, replace=False))
        previous = _rng("clickstream", batch - 1)
        prev_offsets = np.sort(previous.integers(0, 3 * 86400, n))
        ids = np.concatenate([ids, (batch - 1) * n + again])
        offsets = np.concatenate([offsets, prev_offsets[again]])  # the same event as first delivered
    event_time = pa.array(np.datetime64(EPOCH, "us") + offsets.astype("timedelta64[s]"), pa.timestamp("us"))
    users = (ids * 31) % USERS
    return pa.table({
        "dt": np.array(DAYS)[np.minimum(offsets // 86400, len(DAYS) - 1).astype(np.int64)],
        "event_id": ids, "user_id": users, "page": PAGES[ids % len(PAGES)], "event_time": event_time,
        "received_at": _times(batch, np.arange(len(ids))),
    }, schema=CLICKSTREAM_SCHEMA)
