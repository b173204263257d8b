"""Verifier checks and mutations read from the state a task's operation leaves.

A generated task's verifier is derived from what the app really does: the generator simulates the
operation on a copy of the seeded database, and :class:`StateChecks` turns the difference between
the seeded and the simulated database into SQL checks (the created row with its values, exactly
one of it, the updated columns, the deleted row), ``unchanged`` checks on every row the task does
not touch, and the near misses (mutations) that execution validation proves the verifier refuses.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from palaestra.synth_apps import data
from palaestra.synth_apps.operations import effect_target
from palaestra.synth_apps.spec import AppSpec, OperationSpec
from palaestra.verifiers.app_state import table_digest


class StateChecks:
    """The checks a task's verifier makes on one app's seeded database (read-only ``base``)."""

    def __init__(self, spec: AppSpec, base: sqlite3.Connection) -> None:
        self.spec = spec
        self.base = base
        #: rows per table as seeded
        self.counts = counts(base)

    def counts_unchanged(self) -> list[dict[str, Any]]:
        return [count_check(t, n) for t, n in self.counts.items()]

    def diff(self, sim: sqlite3.Connection) -> tuple[list[dict], list[dict]]:
        """SQL checks and mutations from the seeded vs the simulated database."""
        checks: list[dict[str, Any]] = []
        mutations: list[dict[str, Any]] = []
        for table, before in self.counts.items():
            old = {r["id"]: dict(r) for r in self.base.execute(f"SELECT * FROM {table}")}
            new = {r["id"]: dict(r) for r in sim.execute(f"SELECT * FROM {table}")}
            if len(new) != before or old.keys() != new.keys():
                checks.append(count_check(table, len(new)))
            for rid in new.keys() - old.keys():
                row = {k: v for k, v in new[rid].items() if k != "id"}
                keys = self.asserted(table, row)
                if not keys:  # nothing the task decides: the row count above is the check
                    continue
                where = " AND ".join(f"{k} IS ?" for k in keys)
                params = [row[k] for k in keys]
                checks.append(
                    {
                        "kind": "sql",
                        "describe": f"new {table} rows like this",
                        "query": f"SELECT count(*) FROM {table} WHERE {where}",
                        "params": params,
                        "expect": 1,
                    }
                )
                pick = f"(SELECT max(id) FROM {table} WHERE {where})"
                mutations.append(
                    {
                        "name": f"a second {table}",
                        "sql": [
                            f"INSERT INTO {table} ({', '.join(row)}) SELECT {', '.join(row)} "
                            f"FROM {table} WHERE id = {pick}"
                        ],
                        "params": [params],
                    }
                )
                for k in keys:
                    other = self.other_value(table, k, row[k])
                    mutations.append(
                        {
                            "name": f"{table}.{k} differs",
                            "sql": [f"UPDATE {table} SET {k} = ? WHERE id = {pick}"],
                            "params": [[other, *params]],
                        }
                    )
            for rid in old.keys() - new.keys():
                checks.append(
                    {
                        "kind": "sql",
                        "describe": f"{table} {rid} is gone",
                        "query": f"SELECT count(*) FROM {table} WHERE id = ?",
                        "params": [rid],
                        "expect": 0,
                    }
                )
            for rid in old.keys() & new.keys():
                for k, v in new[rid].items():
                    if old[rid][k] != v:
                        checks.append(
                            {
                                "kind": "sql",
                                "describe": f"{table} {rid} {k}",
                                "query": f"SELECT {k} FROM {table} WHERE id = ?",
                                "params": [rid],
                                "expect": v,
                            }
                        )
                        mutations.append(
                            {
                                "name": f"{table} {rid} {k} not updated",
                                "sql": [f"UPDATE {table} SET {k} = ? WHERE id = ?"],
                                "params": [[old[rid][k], rid]],
                            }
                        )
        sim.close()
        return checks, mutations

    def touched(self, sim: sqlite3.Connection) -> dict[str, dict[int, dict[str, Any] | None]]:
        """Per table, the seeded rows the simulated operation changed: the new values of the
        columns it updated, or None for a row it deleted."""
        out: dict[str, dict[int, dict[str, Any] | None]] = {}
        for table in self.counts:
            old = {r["id"]: dict(r) for r in self.base.execute(f"SELECT * FROM {table}")}
            new = {r["id"]: dict(r) for r in sim.execute(f"SELECT * FROM {table}")}
            out[table] = {
                rid: (
                    None
                    if rid not in new
                    else {k: v for k, v in new[rid].items() if row.get(k) != v}
                )
                for rid, row in old.items()
                if new.get(rid) != row
            }
        return out

    def untouched(self, touched: dict[str, list[int]]) -> list[dict[str, Any]]:
        """``unchanged`` checks: every seeded row the task does not touch stays as seeded."""
        out = []
        for table, n in self.counts.items():
            if table not in self.spec.entities or not n:
                continue
            upto = self.base.execute(f"SELECT max(id) FROM {table}").fetchone()[0]
            skip = touched.get(table, [])
            out.append(
                {
                    "kind": "unchanged",
                    "table": table,
                    "skip": skip,
                    "upto": upto,
                    "digest": table_digest(self.base, table, skip, upto),
                }
            )
        return out

    def spread(self, touched: dict[str, dict[int, dict[str, Any] | None]]) -> list[dict]:
        """Mutations where the operation's update or delete hit every row, not the one asked."""
        out: list[dict[str, Any]] = []
        for table, rows in touched.items():
            if not rows or len(rows) >= self.counts[table]:
                continue
            change = next(iter(rows.values()))
            if change is None:
                out.append({"name": f"every {table} row deleted", "sql": [f"DELETE FROM {table}"]})
            elif change:
                sets = ", ".join(f"{k} = ?" for k in change)
                out.append(
                    {
                        "name": f"every {table} row updated",
                        "sql": [f"UPDATE {table} SET {sets}"],
                        "params": [list(change.values())],
                    }
                )
        return out

    def asserted(self, table: str, row: dict[str, Any]) -> list[str]:
        """Columns a new row is checked on: the ones the task decides, not generated ones."""
        e = self.spec.entities[table]
        decided = {
            col
            for op in self.spec.operations.values()
            for eff in op.effects
            if eff.create == table
            for col in eff.values
        }
        cols = [data.column(n, f) for n, f in e.fields.items()]
        return [c for c in cols if c in decided and c in row]

    def other_value(self, table: str, col: str, value: Any) -> Any:
        e = self.spec.entities[table]
        f = e.fields.get(col) or e.fields[col.removesuffix("_id")]
        if f.type == "enum" and f.choices and len(f.choices) > 1:
            return next(c for c in f.choices if c != value)
        if f.type == "ref" or isinstance(value, int):
            return (value or 0) + 1
        if isinstance(value, float):
            return round(value + 1.0, 2)
        return f"{value} (changed)"

    def unchanged(self, op: OperationSpec, record: Any) -> list[dict[str, Any]]:
        checks = self.touched_counts(op)
        if record is not None and op.entity is not None:  # a record is a row of op's entity
            for eff in op.effects:
                if eff.update == "record":
                    for col in eff.values:
                        checks.append(
                            {
                                "kind": "sql",
                                "describe": f"{op.entity} unchanged",
                                "query": f"SELECT {col} FROM {op.entity} WHERE id = ?",
                                "params": [record["id"]],
                                "expect": stored(self.base, op.entity, col, record["id"]),
                            }
                        )
        return checks

    def touched_counts(self, op: OperationSpec) -> list[dict[str, Any]]:
        tables = {effect_target(eff, op.entity) for eff in op.effects}
        return [count_check(t, self.counts[t]) for t in sorted(tables) if t]

    def forced_changes(self, op: OperationSpec) -> list[dict[str, Any]]:
        """End states where the operation happened anyway (a row added to what it touches)."""
        out = []
        for t in sorted({effect_target(eff, op.entity) for eff in op.effects} - {"None"}):
            if self.counts.get(t):
                cols = [c for c in self.columns(t) if c != "id"]
                out.append(
                    {
                        "name": f"a {t} row added anyway",
                        "sql": [
                            f"INSERT INTO {t} ({', '.join(cols)}) SELECT {', '.join(cols)} "
                            f"FROM {t} WHERE id = (SELECT max(id) FROM {t})"
                        ],
                        "params": [[]],
                    }
                )
        return out

    def columns(self, table: str) -> list[str]:
        return [r[1] for r in self.base.execute(f"PRAGMA table_info({table})")]


def counts(conn: Any) -> dict[str, int]:
    """Rows per table."""
    tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
    return {t: conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in tables}


def is_count(check: dict[str, Any]) -> bool:
    return str(check.get("query", "")).startswith("SELECT count(*) FROM ") and "WHERE" not in str(
        check.get("query", "")
    )


def gates(checks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{**c, "gate": True} for c in checks]


def count_check(table: str, n: int) -> dict[str, Any]:
    return {
        "kind": "sql",
        "describe": f"{table} rows",
        "query": f"SELECT count(*) FROM {table}",
        "params": [],
        "expect": n,
    }


def stored(conn: Any, table: str, col: str, rid: int) -> Any:
    return conn.execute(f"SELECT {col} FROM {table} WHERE id = ?", (rid,)).fetchone()[0]
