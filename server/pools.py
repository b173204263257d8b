"""Pools: N sessions of one env or task, reset and stepped as a batch.

Autoreset follows Gymnasium's NEXT_STEP mode (what ``gymnasium.vector`` does by default): after
a member's episode ends, its next action is ignored and the member is reset instead, so a
``RemoteVectorEnv`` behaves exactly like a local ``SyncVectorEnv``.

Besides the lockstep ``step``, a pool can be stepped asynchronously as EnvPool does when
``num_envs > batch_size``: ``send`` starts steps on some members and returns at once, ``recv``
answers as soon as ``batch_size`` of the sent steps have finished, first finished first, with
the members' ids, so a learner never waits for the slowest env. The two styles do not mix: a
lockstep step is refused while sent steps are pending.

A pool can change size on demand between ``min_size`` and ``max_size`` (``resize``). With
``warm`` spares it keeps that many extra sessions created and reset in the background, so a
pool grows at once: a spare becomes a member with its reset observation already made, and the
spares are refilled afterwards. ``placement`` decides where members live: ``spread`` over the
workers (and so, on Ray, over the nodes), or ``pack`` on one worker.
"""

from __future__ import annotations

import asyncio
import functools
import secrets
from collections.abc import Awaitable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from palaestra.errors import InvalidRequest, NotFound, PalaestraError, StepTimeout
from palaestra.server.models import CreatePool
from palaestra.server.sessions import Session, SessionManager
from palaestra.steps import ResetReply, StepReply, ended, step_reply

T = TypeVar("T")


@dataclass
class Pool:
    id: str
    owner: str
    members: list[Session]
    ended: list[bool] = field(default_factory=list)
    #: sent steps: member -> its task; finished ones wait in ``finished`` in completion order
    running: dict[int, asyncio.Task[StepReply]] = field(default_factory=dict)
    finished: list[int] = field(default_factory=list)
    progress: asyncio.Event = field(default_factory=asyncio.Event)
    request: CreatePool | None = None
    #: warm spares: sessions created and reset in the background, with their reset result
    spares: list[tuple[Session, ResetReply]] = field(default_factory=list)
    refill: asyncio.Task[None] | None = None

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
            "placement": self.request.placement if self.request else "spread",
            "min_size": self.bounds[0],
            "max_size": self.bounds[1],
            "warm": len(self.spares),
        }

    @property
    def bounds(self) -> tuple[int, int]:
        req, n = self.request, len(self.members)
        if req is None:
            return n, n
        low = req.min_size if req.min_size is not None else req.size
        return low, req.max_size if req.max_size is not None else req.size


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
        members = await self.sessions.create(owner, req, req.size, req.placement)
        pool = Pool(secrets.token_urlsafe(9), owner, members, [False] * req.size, request=req)
        self.pools[pool.id] = pool
        self._refill_later(pool)
        return pool

    def _refill_later(self, pool: Pool) -> None:
        if pool.request and pool.request.warm and (pool.refill is None or pool.refill.done()):
            pool.refill = asyncio.create_task(self._refill(pool))

    async def _refill(self, pool: Pool) -> None:
        """Top the spares up to ``warm``; stop quietly at a limit (capacity, a worker down)."""
        assert pool.request is not None
        while pool.id in self.pools and len(pool.spares) < pool.request.warm:
            try:
                (spare,) = await self.sessions.create(pool.owner, pool.request, 1, "spread")
                pool.spares.append((spare, await self.sessions.reset(spare, None, None)))
            except PalaestraError:
                return

    async def resize(self, pool: Pool, size: int) -> dict[str, Any]:
        """Grow (spares first, then new sessions, reset) or shrink (the last members close)."""
        low, high = pool.bounds
        if not low <= size <= high:
            raise InvalidRequest(f"size {size} is outside this pool's {low}..{high}", field="size")
        if pool.running:
            raise InvalidRequest("sent steps are pending: recv them before a resize", field="size")
        n = len(pool.members)
        added: list[ResetReply] = []
        warm_used = 0
        if size > n:
            while pool.spares and len(added) < size - n:
                spare, reset = pool.spares.pop(0)
                pool.members.append(spare)
                added.append(reset)
                warm_used += 1
            missing = size - len(pool.members)
            if missing:
                assert pool.request is not None
                fresh = await self.sessions.create(
                    pool.owner, pool.request, missing, pool.request.placement
                )
                resets = await _gather([self.sessions.reset(m, None, None) for m in fresh])
                pool.members += fresh
                added += resets
            pool.ended += [False] * (size - n)
        else:
            gone, pool.members = pool.members[size:], pool.members[:size]
            pool.ended = pool.ended[:size]
            await asyncio.gather(*(self.sessions.close(m, "its pool shrank") for m in gone))
        self._refill_later(pool)
        return {
            **pool.public(),
            "added": list(range(n, n + len(added))),
            "from_warm": warm_used,
            "observations": [r["observation"] for r in added],
            "infos": [r["info"] for r in added],
        }

    async def reset(
        self, pool: Pool, seed: int | list[int | None] | None, options: Any
    ) -> dict[str, Any]:
        n = len(pool.members)
        if isinstance(seed, list):
            if len(seed) != n:
                raise InvalidRequest(f"seed has {len(seed)} entries for {n} members", field="seed")
            seeds = seed
        else:
            if seed is not None and seed + n > 2**32:
                raise InvalidRequest(
                    f"seed {seed} + member index passes 2**32 for {n} members", field="seed"
                )
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
        if pool.running:
            raise InvalidRequest(
                f"{len(pool.running)} sent step(s) are pending: recv them before a lockstep step",
                field="actions",
            )
        results = await _gather([self._step_member(pool, i, actions[i]) for i in range(n)])
        pool.ended = [ended(r) for r in results]
        return _batch(results)

    async def _step_member(self, pool: Pool, i: int, action: Any) -> StepReply:
        member = pool.members[i]
        if pool.ended[i]:
            r = await self.sessions.reset(member, None, None)
            return step_reply(r["observation"], 0.0, False, False, {**r["info"], "autoreset": True})
        return await self.sessions.step(member, action)

    def send(self, pool: Pool, actions: list[Any], env_ids: list[int]) -> dict[str, Any]:
        """Start steps on idle members; their results are collected by :meth:`recv`."""
        if len(actions) != len(env_ids):
            raise InvalidRequest(
                f"got {len(actions)} actions for {len(env_ids)} env_ids", field="actions"
            )
        if len(set(env_ids)) != len(env_ids):
            raise InvalidRequest("env_ids names a member twice", field="env_ids")
        for i in env_ids:
            if not 0 <= i < len(pool.members):
                raise InvalidRequest(
                    f"no member {i} in a pool of {len(pool.members)}", field="env_ids"
                )
            if i in pool.running:
                raise InvalidRequest(
                    f"member {i} is still stepping: recv it first", field="env_ids"
                )
        for i, action in zip(env_ids, actions, strict=True):
            task = asyncio.create_task(self._step_member(pool, i, action))
            pool.running[i] = task
            task.add_done_callback(functools.partial(_finished, pool, i))
        return {"sent": env_ids}

    async def recv(self, pool: Pool, batch_size: int, timeout_s: float) -> dict[str, Any]:
        """The first ``batch_size`` sent steps to finish, in the order they finished."""
        if batch_size > len(pool.running):
            raise InvalidRequest(
                f"batch_size {batch_size} but only {len(pool.running)} sent step(s) pending",
                field="batch_size",
            )
        try:
            async with asyncio.timeout(timeout_s):
                while len(pool.finished) < batch_size:
                    pool.progress.clear()
                    await pool.progress.wait()
        except TimeoutError:
            raise StepTimeout(
                f"only {len(pool.finished)} of {batch_size} sent steps finished in {timeout_s:g} s",
                pool_id=pool.id,
            ) from None
        ids, pool.finished = pool.finished[:batch_size], pool.finished[batch_size:]
        tasks = [pool.running.pop(i) for i in ids]
        results = await _gather(tasks)
        for i, r in zip(ids, results, strict=True):
            pool.ended[i] = ended(r)
        return {"env_ids": ids, **_batch(results)}

    async def close(self, pool: Pool) -> None:
        self.pools.pop(pool.id, None)
        for task in [*pool.running.values(), pool.refill]:
            if task is not None:
                task.cancel()
        spares = [spare for spare, _ in pool.spares]
        await asyncio.gather(*(self.sessions.close(s, "its pool was closed") for s in spares))
        await asyncio.gather(
            *(self.sessions.close(m, f"its pool {pool.id} was closed") for m in pool.members)
        )


def _finished(pool: Pool, i: int, _task: object = None) -> None:
    pool.finished.append(i)
    pool.progress.set()


def _batch(results: list[StepReply]) -> dict[str, Any]:
    return {
        "observations": [r["observation"] for r in results],
        "rewards": [r["reward"] for r in results],
        "terminated": [r["terminated"] for r in results],
        "truncated": [r["truncated"] for r in results],
        "infos": [r["info"] for r in results],
    }


async def _gather(calls: Sequence[Awaitable[T]]) -> list[T]:
    """Run all; if any member failed, raise its error (it names the worker and the session)."""
    results = await asyncio.gather(*calls, return_exceptions=True)
    for r in results:
        if isinstance(r, BaseException):
            raise r
    return results  # type: ignore[return-value]
