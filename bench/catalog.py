"""Every benchmark by name: what ``palaestra bench NAME`` runs, its options, and the family it
measures.

Benchmark names belong to the bench layer: a family descriptor does not name its benchmark (that
would point a family up at the layer above it); an entry here names the family instead. The CLI
(``palaestra/cli/bench.py``) makes one command per entry, in this order, and ``palaestra bench
all`` runs every entry with its defaults, skipping a family's benchmark where that family is
not installed or cannot run. Entries name their mains by ``"module:function"`` strings, so
listing the benchmarks imports none of them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Option:
    """``--NAME`` of a benchmark command, given to its main as the keyword ``param`` (default:
    ``name``). ``repeatable`` options are lists of strings, ``None`` when not given."""

    name: str
    default: Any
    help: str
    param: str = ""
    repeatable: bool = False

    @property
    def keyword(self) -> str:
        return self.param or self.name

    @property
    def kind(self) -> Any:
        return list[str] | None if self.repeatable else type(self.default)


@dataclass(frozen=True)
class Bench:
    """One benchmark: ``target`` is its ``"module:function"``, ``help`` what it measures;
    ``family`` the env family whose own benchmark it is (empty: the platform's)."""

    name: str
    target: str
    help: str
    options: tuple[Option, ...] = ()
    family: str = ""


def _main(name: str) -> str:
    return f"palaestra.bench.{name}:main"


BENCHES: tuple[Bench, ...] = (
    Bench(
        "http",
        _main("http"),
        "Step latency: in-process vs REST vs WebSocket vs an OpenEnv server.",
        (
            Option("steps", 5000, "Timed steps per transport"),
            Option("rounds", 5, "Interleaved rounds"),
            Option("openenv", True, "Include the OpenEnv baseline"),
        ),
    ),
    Bench(
        "eval",
        _main("eval"),
        "The eval runner: MiniWoB oracle episodes/min at N = 1..8, overhead against a bare\n"
        "RemoteEnv loop, episodes in flight at N = 32 with a slow model.",
        (
            Option("workers", 2, "Worker processes of the gateway"),
            Option("rounds", 3, "Rounds per measurement (best kept)"),
            Option("model_s", 1.0, "Seconds per call of the model stub"),
        ),
    ),
    Bench(
        "web",
        _main("web"),
        "MiniWoB reset/step: palaestra through the gateway vs BrowserGym in-process.",
        (
            Option("resets", 3, "Timed resets per task"),
            Option("steps", 3, "Timed no-op steps per reset"),
        ),
        family="web",
    ),
    Bench(
        "synth",
        _main("synth"),
        "Synthesis: validated tasks per minute, share dropped, app reset vs a fresh app start.",
        (
            Option(
                "domain",
                None,
                "Domains to synthesize (repeatable) \\[default: all]",
                param="domains",
                repeatable=True,
            ),
            Option("variants", 2, "Variants per domain"),
            Option("tasks", 60, "Validated tasks wanted"),
            Option("parallel", 2, "Validation threads"),
        ),
    ),
    Bench(
        "validation",
        _main("validation"),
        "Execution validation with adversaries vs without: s/task, ratio, tasks per minute.",
        (
            Option(
                "family",
                None,
                "Families to measure (repeatable) \\[default: web]",
                param="families",
                repeatable=True,
            ),
            Option("tasks", 40, "Validated tasks wanted per run"),
        ),
    ),
    Bench(
        "mobile",
        _main("mobile"),
        "Phone reset/step: embedded in-process and through the gateway, beside Appium.",
        (Option("resets", 10, "Timed resets (each followed by 4 steps)"),),
        family="mobile",
    ),
    Bench(
        "cad",
        _main("cad"),
        "CAD: step p50 per action kind, IoU, render and reset time; semantic actions vs scripts.",
        (Option("resets", 8, "Timed resets (one per part family)"),),
        family="cad",
    ),
    Bench(
        "computer",
        _main("computer"),
        "Desktop sandbox: reset, GUI and code steps, memory; fresh sandbox vs the reset path.",
        (Option("resets", 10, "Timed resets (each followed by a few steps)"),),
        family="computer",
    ),
    Bench(
        "scale",
        _main("scale"),
        "Backends side by side (local processes vs Ray actors on a two-node cluster), then the\n"
        "gateway's step latency as the live sessions it holds grow to 20,000.",
        (
            Option("starts", 20, "Timed session starts per backend"),
            Option("steps", 500, "Timed steps per backend"),
            Option("backends", True, "Compare the local and Ray backends (two workers each)"),
            Option(
                "routing", True, "Time steps while one gateway holds 100 to max-sessions sessions"
            ),
            Option("max_sessions", 20_000, "Live sessions the routing measurement grows to"),
        ),
    ),
    Bench(
        "data",
        _main("data"),
        "Recording overhead on a WebSocket step, and export rate per format.",
        (
            Option("steps", 1500, "Timed WebSocket steps per round"),
            Option("episodes", 200, "Episodes in the exported run"),
        ),
    ),
    Bench(
        "dashboard",
        _main("dashboard"),
        "The live dashboard with 200 stepping sessions: render time and the gateway CPU it costs.",
    ),
    Bench(
        "fidelity",
        _main("fidelity"),
        "Structured observation fields against JSON text, over REST and WebSocket.",
        (Option("steps", 2000, "Timed steps per transport and round"),),
    ),
    Bench(
        "usersim",
        _main("usersim"),
        "User simulator: reset and step in-process vs through the gateway, sessions per worker.",
        (Option("episodes", 20, "Timed episodes per domain"),),
        family="usersim",
    ),
    Bench(
        "tau2",
        _main("tau2"),
        "tau2-bench: reset/step in-process vs gateway; a full gold pass vs an LLM user's calls.",
        (
            Option("llm_ms", 1000.0, "What one model call of an LLM user costs, in ms"),
            Option("sample", 10, "Episodes per suite through the gateway"),
        ),
        family="tau2",
    ),
)
