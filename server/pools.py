"""Pools: N sessions of one env or task, reset and stepped as a batch.

Autoreset follows Gymnasium's NEXT_STEP mode (what ``gymnasium.vector`` does by default): after
a member's episode ends, its next action is ignored and the member is reset instead, so a
``RemoteVectorEnv`` behaves exactly like a local ``SyncVectorEnv``.
"""

from __future__ import annotations

import asyncio
import secrets
from dataclasses import dataclass, field
from typing import Any

from palaestra.errors import InvalidRequest, NotFound
from palaestra.server.models import CreatePool
from palaestra.server.sessions import Session, SessionManager


@dataclass
class Pool:
    id: str
    owner: str
    members: list[Session]
    ended: list[bool] = field(default_factory=list)

    def public(self) -> dict[str, Any]:
        first = self.members[0]
        return {
            "pool_id": self.id,
            "size": len(self.members),
            "session_ids": [s.id for s in self.members],
            "env": first.env_id,
            "task": first.task,
            "spaces": first.spaces,
            "actions": first.actions,
            "autoreset_mode": "next_step",
        }


class PoolManager:
    def __init__(self, sessions: SessionManager) -> None:
        self.sessions = sessions
        self.pools: dict[str, Pool] = {}

    def get(self, owner: str, pool_id: str) -> Pool:
        pool = self.pools.get(pool_id)
        if pool is None or pool.owner != owner:
            raise NotFound(f"no pool {pool_id!r} for this API key", pool_id=pool_id)
        return pool

    async def create(self, owner: str, req: CreatePool) -> Pool:
        members = await self.sessions.create(owner, req, count=req.size)
        pool = Pool(secrets.token_urlsafe(9), owner, members, [False] * req.size)
        self.pools[pool.id] = pool
        return pool

    async def reset(
        self, pool: Pool, seed: int | list[int | None] | None, options: Any
    ) -> dict[str, Any]:
        n = len(pool.members)
        if isinstance(seed, list):
            if len(seed) != n:
                raise InvalidRequest(f"seed has {len(seed)} entries for {n} members", field="seed")
            seeds = seed
        else:
            seeds = [None if seed is None else seed + i for i in range(n)]
        results = await _gather(
            [self.sessions.reset(s, sd, options) for s, sd in zip(pool.members, seeds, strict=True)]
        )
        pool.ended = [False] * n
        return {
            "observations": [r["observation"] for r in results],
            "infos": [r["info"] for r in results],
        }

    async def step(self, pool: Pool, actions: list[Any]) -> dict[str, Any]:
        n = len(pool.members)
        if len(actions) != n:
            raise InvalidRequest(
                f"got {len(actions)} actions for a pool of {n} sessions", field="actions"
            )

        async def one(i: int) -> dict[str, Any]:
            member = pool.members[i]
            if pool.ended[i]:
                r = await self.sessions.reset(member, None, None)
                return {
                    "observation": r["observation"],
                    "reward": 0.0,
                    "terminated": False,
                    "truncated": False,
                    "info": {**r["info"], "autoreset": True},
                }
            return await self.sessions.step(member, actions[i])

        results = await _gather([one(i) for i in range(n)])
        pool.ended = [r["terminated"] or r["truncated"] for r in results]
        return {
            "observations": [r["observation"] for r in results],
            "rewards": [r["reward"] for r in results],
            "terminated": [r["terminated"] for r in results],
            "truncated": [r["truncated"] for r in results],
            "infos": [r["info"] for r in results],
        }

    async def close(self, pool: Pool) -> None:
        self.pools.pop(pool.id, None)
        await asyncio.gather(
            *(self.sessions.close(m, f"its pool {pool.id} was closed") for m in pool.members)
        )


async def _gather(calls: list[Any]) -> list[dict[str, Any]]:
    """Run all; if any member failed, raise its error (it names the worker and the session)."""
    results = await asyncio.gather(*calls, return_exceptions=True)
    for r in results:
        if isinstance(r, BaseException):
            raise r
    return results  # type: ignore[return-value]
