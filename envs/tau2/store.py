"""The retail database of tau2-bench, copied into a private SQLite database per episode.

tau2 keeps its world as pydantic models loaded from ``db.json`` and hashes the whole model to
compare worlds. Here each entity (user, order, product) is one row of its table holding the
entity as canonical JSON: the nesting of tau2's model (an order's items, payments, an user's
payment methods) stays as tau2 has it, and two worlds compare row by row. Optional fields of
tau2's ``Order`` model that ``db.json`` leaves out are filled with ``null`` at load, as the
model's dump would show them.

As in the usersim family's world module, the JSON is parsed once per process into an
in-memory template and each episode gets a copy through SQLite's online backup.

Left for the next session: telecom's TOML databases (agent side and the user's device).
"""

from __future__ import annotations

import functools
import json
import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

#: tau2-bench's data (MIT, vendored with its LICENSE and provenance in ``data/README.md``);
#: PALAESTRA_TAU2_DATA points elsewhere (another copy of the same layout)
DATA = Path(os.environ.get("PALAESTRA_TAU2_DATA", Path(__file__).parent / "data"))

#: table name -> the key of the entity in tau2's db.json
TABLES = ("users", "orders", "products")

#: fields of tau2's Order model that default to None
ORDER_OPTIONAL = (
    "cancel_reason",
    "exchange_items",
    "exchange_new_items",
    "exchange_payment_method_id",
    "exchange_price_difference",
    "return_items",
    "return_payment_method_id",
)


def canonical(doc: Any) -> str:
    return json.dumps(doc, sort_keys=True, separators=(",", ":"))


def retail_dir() -> Path:
    return DATA / "retail"


@functools.cache
def _template() -> sqlite3.Connection:
    raw = json.loads((retail_dir() / "db.json").read_text())
    conn = sqlite3.connect(":memory:", check_same_thread=False)
    for table in TABLES:
        conn.execute(f"CREATE TABLE {table} (id TEXT PRIMARY KEY, doc TEXT NOT NULL)")
        rows = raw[table].items()
        if table == "orders":
            rows = ((k, {f: None for f in ORDER_OPTIONAL} | v) for k, v in rows)
        conn.executemany(f"INSERT INTO {table} VALUES (?, ?)", ((k, canonical(v)) for k, v in rows))
    conn.commit()
    conn.execute("PRAGMA query_only = ON")  # shared by every episode (initial()): never written
    return conn


def initial() -> sqlite3.Connection:
    """The shared initial world, for reads only (what a user knows of its own record, the rows
    an adversary varies): a private copy is a 4 MB backup that reading a few rows never needs.
    Never write to it; :mod:`.retail` runs read tools outside any transaction, so concurrent
    episodes may read it at once (SQLite serializes the connection)."""
    return _template()


def fresh() -> sqlite3.Connection:
    """A private copy of tau2's retail database for one episode."""
    conn = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
    _template().backup(conn)
    return conn


def get(conn: sqlite3.Connection, table: str, key: str) -> dict[str, Any] | None:
    row = conn.execute(f"SELECT doc FROM {table} WHERE id = ?", (key,)).fetchone()
    return None if row is None else json.loads(row[0])


def put(conn: sqlite3.Connection, table: str, key: str, doc: dict[str, Any]) -> None:
    conn.execute(f"UPDATE {table} SET doc = ? WHERE id = ?", (canonical(doc), key))


def scan(conn: sqlite3.Connection, table: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every entity of a table in tau2's order (db.json's insertion order)."""
    for key, doc in conn.execute(f"SELECT id, doc FROM {table} ORDER BY rowid"):
        yield key, json.loads(doc)


@contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[None]:
    """All of a tool's writes or none: a tool that raises leaves the world as it was."""
    conn.execute("BEGIN")
    try:
        yield
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def dump(conn: sqlite3.Connection) -> dict[str, dict[str, str]]:
    """The world as table -> id -> canonical JSON, what two worlds are compared by."""
    return {t: dict(conn.execute(f"SELECT id, doc FROM {t}")) for t in TABLES}
