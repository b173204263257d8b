"""What an evaluation is asked to do (:class:`EvalConfig`) and what it writes per episode
(:class:`EpisodeResult`, one line of ``results.jsonl``) and at the end (:class:`EvalSummary`).

These three models are the runner's public contract: ``palaestra eval`` builds an
:class:`EvalConfig` from its options, the gateway's ``POST /v1/evals`` validates its body into
one, and both read the same ``results.jsonl`` back. A resumed run is the same run only if the
fields in :data:`IDENTITY` agree, so a file made by another suite or agent is never mixed in.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

#: results.jsonl line format version
SCHEMA = 1

#: the config fields that make two runs the same run (resume refuses a mismatch, naming it)
IDENTITY = ("suite", "agent", "agent_options", "max_steps")


#: a seed of an episode: numpy's range, what a session's reset takes
Seed = Annotated[int, Field(strict=True, ge=0, lt=2**32, description="0 <= seed < 2**32")]

#: episodes in flight at most: each holds a session, and a gateway admits at most 64 sessions
#: per API key unless its operator says otherwise (``max_sessions_per_key``), so a higher
#: ``parallel`` would buy only refusals retried (the gateway's jobs are clamped to it too)
MAX_PARALLEL = 64


class EvalRequest(BaseModel):
    """What an evaluation is asked to play, however it runs: the fields and limits that
    ``palaestra eval`` (:class:`EvalConfig`, which adds where it runs and writes) and
    ``POST /v1/evals`` (``server.models.CreateEval``, which narrows the agents) share."""

    model_config = ConfigDict(extra="forbid")

    suite: str = Field(description="Suite name (GET /v1/suites), e.g. 'miniwob'")
    tasks: list[str] = Field(
        default_factory=list, max_length=10_000, description="Task ids of the suite; [] = all"
    )
    agent: str = Field(
        description="oracle | random | noop | <family policy> | openai:MODEL | "
        "module:Class | http(s)://host:port/path"
    )
    agent_options: dict[str, Any] = Field(
        default_factory=dict,
        description="options of the agent: for openai: base_url, temperature, max_tokens, "
        "screenshots (bool), history (int), max_retries, timeout_s; for a module:Class agent "
        "its constructor's keyword arguments; for an HTTP agent timeout_s",
    )
    parallel: int = Field(default=4, ge=1, le=MAX_PARALLEL, description="Episodes in flight")
    attempts: int = Field(default=1, ge=1, le=100, description="Episodes per (task, seed)")
    seeds: list[Seed] = Field(default_factory=lambda: [0], min_length=1, max_length=1000)
    max_steps: int | None = Field(
        default=None, ge=1, description="Lowers each task's step budget (never raises it)"
    )
    limit: int | None = Field(default=None, ge=1, description="The first N tasks only")
    split: str | None = Field(
        default=None,
        max_length=64,
        description="Only the tasks of this split (their metadata's split: tau2's train/test)",
    )

    @field_validator("seeds")
    @classmethod
    def _unique(cls, seeds: list[int]) -> list[int]:
        if len(set(seeds)) != len(seeds):
            raise ValueError("seeds must be unique")
        return seeds


class EvalConfig(EvalRequest):
    """One evaluation: which tasks, which agent, how many episodes at once, where results go."""

    infra_retries: int = Field(
        default=2, ge=0, le=10, description="retries of an episode that hit an infrastructure error"
    )
    record: bool = Field(default=True, description="record each episode's trajectory")
    url: str | None = Field(
        default=None, description="the gateway (None: $PALAESTRA_URL, else 127.0.0.1:8000)"
    )
    api_key: str | None = Field(default=None, exclude=True, repr=False)
    #: the model endpoint's key for openai agents (else the environment's OPENAI_API_KEY, or
    #: agent_options.api_key_env); never written anywhere
    model_api_key: str | None = Field(default=None, exclude=True, repr=False)
    out: Path | None = Field(default=None, description="folder of results.jsonl/summary/report")
    run: str | None = Field(
        default=None,
        pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$",
        description="the recorded run (docs/data.md); default: eval-SUITE-AGENT-<folder digest>",
    )
    viewer_url: str | None = Field(
        default=None,
        description="the gateway whose dashboard the report's episode links point to "
        "(default: url; the CLI's own short-lived gateway links to `palaestra serve`'s)",
    )

    def identity(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in IDENTITY}


Status = Literal["ok", "error", "skipped"]


class EpisodeResult(BaseModel):
    """One line of ``results.jsonl``: one episode of (task, seed, attempt).

    ``status`` keeps agent failures and infrastructure apart: ``ok`` is a scored episode
    (``success`` false is the agent's failure); ``error`` is one the platform or the model
    endpoint could not finish after ``infra_retries`` (not counted in success rates, reported
    apart); ``skipped`` is one that cannot run (the oracle of a task without one).
    """

    model_config = ConfigDict(extra="ignore")

    v: int = SCHEMA
    suite: str
    task: str
    seed: int
    attempt: int
    agent: str
    family: str = ""
    kind: str = ""
    difficulty: str = ""
    status: Status = "ok"
    success: bool = False
    score: float = 0.0
    reward: float = 0.0
    steps: int = 0
    terminated: bool = False
    truncated: bool = False
    #: how the episode ended: "terminated", "truncated", "agent_stopped" (the agent gave up
    #: before the env ended it; scored 0), "error"
    ended: str = ""
    action_errors: int = 0
    wall_s: float = 0.0
    tokens: dict[str, int] = Field(default_factory=dict)  # prompt, completion, total
    model_calls: int = 0
    error: str | None = None
    #: "infra" (gateway/worker/session), "model" (the model endpoint), "agent" (the agent's
    #: own code raised), or None
    error_kind: str | None = None
    #: the error's short traceback (the agent's frames, not the runner's), when it raised
    traceback: str | None = None
    retries: int = 0
    session_id: str | None = None
    #: where the trajectory is: the gateway route of the recorded session
    trajectory: str | None = None
    #: the recorded run the episode is in (``palaestra runs``, the dashboard's viewer)
    run: str | None = None
    started: float = 0.0

    @property
    def key(self) -> tuple[str, int, int]:
        return (self.task, self.seed, self.attempt)


class EvalSummary(BaseModel):
    """``summary.json``: the headline figures and the breakdowns (see :mod:`.stats`)."""

    model_config = ConfigDict(extra="allow")

    suite: str
    agent: str
    episodes: int = 0
    scored: int = 0
    errors: int = 0
    skipped: int = 0
    success_rate: float = 0.0
    #: episodes fully done (success with score 1), beside a benchmark's own success: MiniWoB
    #: counts any raw reward above 0 (partial credit) as a success, as published numbers do
    strict_success_rate: float = 0.0
    ci95: tuple[float, float] = (0.0, 0.0)
    mean_score: float = 0.0
    pass_at_k: dict[str, float] = Field(default_factory=dict)
    pass_hat_k: dict[str, float] = Field(default_factory=dict)
    mean_steps: float = 0.0
    wall_s: float = 0.0
    episodes_per_min: float = 0.0
    tokens: dict[str, int] = Field(default_factory=dict)
    #: per suite, family, kind, difficulty: {value: {"n", "success_rate", "ci95", "mean_score"}}
    tables: dict[str, dict[str, dict[str, Any]]] = Field(default_factory=dict)
    error_kinds: dict[str, int] = Field(default_factory=dict)
    #: the first few distinct errors: task, seed, attempt, kind, error, traceback
    error_examples: list[dict[str, Any]] = Field(default_factory=list)
    #: why pass@k / pass^k are absent though attempts > 1 (a deterministic agent)
    pass_note: str | None = None
    #: the recorded run of the episodes (``palaestra runs``, export, replay, regrade)
    run: str | None = None
    #: the gateway that recorded them (its dashboard shows each episode)
    gateway: str | None = None
    complete: bool = True
    cancelled: bool = False
    out: str | None = None
