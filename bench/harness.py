"""The benchmarks' one harness: timing, percentiles, interleaved rounds, ratios, memory, tables.

Every ``palaestra bench`` module measures with these pieces and prints with :func:`print_table`:

- timing: :class:`Timings` (seconds per named operation, ``with out.timed("step"): ...``),
  :func:`sample` (n timed calls of a callable after a warm-up), :func:`cpu_s` (CPU seconds of
  this process, its children and other processes);
- figures: :func:`percentile` (``percentile(xs, 0.5)`` is the median), :func:`ms` (a percentile
  in milliseconds), :func:`describe` (n, p50, p90, p99, max on one line), :func:`ratio` (``"3.1x"``
  against a baseline measured in the same process, ``"n/a"`` without one);
- :func:`interleave`: several measurements run in turn, round after round, so a drift of the
  machine's load falls on all of them alike;
- memory: :func:`pss_mb` (a process tree's proportional set size), :func:`children`,
  :class:`SessionMemory` (PSS growth per extra open session),
  :func:`worker_pid` (a gateway's worker, whose tree holds the sessions), :func:`machine_mb`;
- :func:`table` and :func:`print_table`: one rich table layout (first column left, figures right).

The timing and memory half uses the standard library only: the BrowserGym baseline imports this
file as a sibling module inside its own venv, where neither palaestra nor rich is installed.
"""

from __future__ import annotations

import gc
import math
import os
import resource
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

try:
    from rich.console import Console
    from rich.progress import Progress
    from rich.table import Table
except ImportError:  # the BrowserGym venv: only the timing and memory half is used there
    pass
else:
    console = Console()

# --- timing ---------------------------------------------------------------------------------


class Timings(defaultdict[str, list[float]]):
    """Seconds per operation, by name (a dict of lists, JSON as it is)."""

    def __init__(self, *keys: str) -> None:
        super().__init__(list)
        for key in keys:
            self[key] = []

    @contextmanager
    def timed(self, key: str) -> Iterator[None]:
        """Time the block and add its seconds under ``key`` (nothing if it raises)."""
        t0 = time.perf_counter()
        yield
        self[key].append(time.perf_counter() - t0)

    def extend(self, other: dict[str, list[float]]) -> None:
        """Add every sample of ``other`` under the same names."""
        for key, values in other.items():
            self[key] += values


class TimedEnv:
    """``env`` with its resets timed under "reset" and each step under ``key(action)``, so a
    benchmark plays whole episodes with :func:`palaestra.policies.run_episode` (the one
    episode loop) and still times every call; the policy's own work stays outside."""

    def __init__(self, env: Any, out: Timings, key: Callable[[Any], str]) -> None:
        self.env, self.out, self.key = env, out, key

    def reset(self, **kwargs: Any) -> Any:
        with self.out.timed("reset"):
            return self.env.reset(**kwargs)

    def step(self, action: Any) -> Any:
        with self.out.timed(self.key(action)):
            return self.env.step(action)


def sample(fn: Callable[[], object], n: int, warmup: int = 0) -> list[float]:
    """Seconds per call of ``fn``: ``n`` timed calls after ``warmup`` untimed ones."""
    for _ in range(warmup):
        fn()
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return out


def cpu_s(*pids: int) -> float:
    """CPU seconds (user + system) so far of this process, its waited-for children and ``pids``
    (other processes, such as a server this process did not start as a child)."""
    total = 0.0
    for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN):
        usage = resource.getrusage(who)
        total += usage.ru_utime + usage.ru_stime
    for pid in pids:
        fields = _stat(pid)
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


# --- figures --------------------------------------------------------------------------------


def percentile(xs: Sequence[float], q: float) -> float:
    """The ``q`` quantile (0 to 1) of ``xs``, interpolated between neighbouring ranks (so
    ``percentile(xs, 0.5)`` is the median); NaN for no samples."""
    if not xs:
        return math.nan
    ordered = sorted(xs)
    pos = q * (len(ordered) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def ms(xs: Sequence[float], q: float = 0.5) -> float:
    """A percentile of samples in seconds, in milliseconds (the p50 by default)."""
    return percentile(xs, q) * 1e3


def describe(xs: Sequence[float]) -> str:
    """One line of figures for samples in seconds: ``n=.. p50=.. p90=.. p99=.. max=.. ms``."""
    figures = " ".join(f"{name}={ms(xs, q):.3f}" for name, q in _QUANTILES)
    return f"n={len(xs)} {figures} ms"


_QUANTILES = (("p50", 0.5), ("p90", 0.9), ("p99", 0.99), ("max", 1.0))


def ratio(num: float | None, den: float | None, digits: int = 2, prefix: str = "") -> str:
    """``num / den`` as ``"3.10x"`` (``prefix`` before it, e.g. ``"~"``), or ``"n/a"`` when
    either is missing or ``den`` is zero or NaN."""
    if num is None or not den or math.isnan(den):
        return "n/a"
    return f"{prefix}{num / den:.{digits}f}x"


# --- interleaved rounds ---------------------------------------------------------------------


def interleave(
    runners: dict[str, Callable[[], list[float]]],
    rounds: int,
    description: str = "interleaved rounds",
) -> dict[str, list[float]]:
    """Call every runner once per round, in turn, for ``rounds`` rounds, so that the machine's
    load (other jobs, the scheduler on few cores) weighs on each alike; returns each runner's
    samples over all rounds."""
    results: dict[str, list[float]] = {name: [] for name in runners}
    with Progress(console=console, transient=True) as progress:
        job = progress.add_task(description, total=rounds * len(runners))
        for _ in range(rounds):
            for name, run in runners.items():
                results[name] += run()
                progress.advance(job)
    return results


# --- memory ---------------------------------------------------------------------------------


def _stat(pid: int) -> list[str]:
    """The fields of ``/proc/<pid>/stat`` after the command name (the state is field 0)."""
    with open(f"/proc/{pid}/stat") as fh:
        return fh.read().rsplit(")", 1)[1].split()


def _parents() -> dict[int, list[int]]:
    """Every process's children, from one pass over /proc."""
    kids: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                ppid = int(_stat(int(entry))[1])
            except (OSError, IndexError):
                continue
            kids.setdefault(ppid, []).append(int(entry))
    return kids


def children(pid: int) -> list[int]:
    """The direct children of ``pid``."""
    return _parents().get(pid, [])


def _proportional_mb(pid: int) -> float:
    """PSS of one process in MB (RSS where the kernel reports no PSS); 0 if it is gone."""
    found: dict[str, float] = {}
    try:
        with open(f"/proc/{pid}/smaps_rollup") as fh:
            for line in fh:
                key = line.split(":", 1)[0]
                if key in ("Pss", "Rss"):
                    found[key] = int(line.split()[1]) / 1024
    except OSError:
        return 0.0
    return found.get("Pss", found.get("Rss", 0.0))


def pss_mb(pid: int | None = None, *, tree: bool = True, name: str | None = None) -> float:
    """Proportional set size in MB of ``pid`` (this process by default) and, with ``tree``, all
    its descendants; with ``name``, only the processes whose name contains it."""
    root = os.getpid() if pid is None else pid
    kids = _parents() if tree else {}
    total, stack = 0.0, [root]
    while stack:
        proc = stack.pop()
        stack += kids.get(proc, [])
        if name is not None:
            try:
                with open(f"/proc/{proc}/comm") as fh:
                    if name not in fh.read():
                        continue
            except OSError:
                continue
        total += _proportional_mb(proc)
    return total


@dataclass
class Growth:
    """What :meth:`SessionMemory.opened` measured, and the sessions it holds open."""

    mb_per_session: float
    sessions: list[Any] = field(default_factory=list)


@dataclass
class SessionMemory:
    """The PSS growth of a process tree per extra open session.

    ``open_session(i)`` (i from 0) opens one session, anything with ``close()``. ``warm``
    sessions are opened before the first reading of ``pid``'s tree (this process by default),
    ``count`` more before the second. ``settle_s`` is a pause before each reading, for allocators
    and background page loads to settle.
    """

    open_session: Callable[[int], Any]
    count: int
    pid: int | None = None
    warm: int = 0
    settle_s: float = 0.0

    @contextmanager
    def opened(self) -> Iterator[Growth]:
        """Measure, and hold all the sessions open in the block; they are closed on exit."""
        sessions: list[Any] = []
        try:
            sessions += [self.open_session(i) for i in range(self.warm)]
            base = self._reading()
            sessions += [self.open_session(i) for i in range(self.warm, self.warm + self.count)]
            yield Growth((self._reading() - base) / self.count, sessions)
        finally:
            for session in sessions:
                session.close()

    def mb_per_session(self) -> float:
        """Measure, closing the sessions at once."""
        with self.opened() as growth:
            return growth.mb_per_session

    def _reading(self) -> float:
        gc.collect()
        time.sleep(self.settle_s)
        return pss_mb(self.pid)


def worker_pid(url: str, index: int = 0) -> int:
    """The process id of a gateway's worker (its process tree holds the sessions)."""
    import httpx

    return int(httpx.get(f"{url}/v1/health").json()["workers"][index]["pid"])


def machine_mb() -> float:
    """This machine's physical memory in MB."""
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**20


# --- tables ---------------------------------------------------------------------------------


def table(title: str, columns: Sequence[str], rows: Iterable[Sequence[object]] = ()) -> Table:
    """A rich table: the first column (what is measured) left-aligned, the figures right."""
    out = Table(title=title)
    for i, column in enumerate(columns):
        out.add_column(column, justify="left" if i == 0 else "right")
    for row in rows:
        out.add_row(*(str(cell) for cell in row))
    return out


def print_table(title: str, columns: Sequence[str], rows: Iterable[Sequence[object]]) -> Table:
    """:func:`table`, printed; returns it."""
    out = table(title, columns, rows)
    console.print(out)
    return out
