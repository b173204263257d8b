"""Request bodies of the HTTP API. ``extra="forbid"`` so a typo is a 422 naming the field."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from palaestra.evals.config import EvalRequest, Seed

#: one action, or a list of them (OpenAI ``tool_calls``) applied in order in one step
Action = str | dict[str, Any] | list[Any]


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CreateSession(_Body):
    env: str | None = Field(default=None, description="Env id, e.g. palaestra/web-v0")
    task: str | None = Field(default=None, description="Task reference 'suite/task_id'")
    options: dict[str, Any] = Field(default_factory=dict, description="Env constructor options")
    record: bool | None = Field(default=None, description="Record this session's trajectory")
    run: str | None = Field(
        default=None,
        pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$",
        description="The run its recording joins (default: the gateway's run_id, 'live')",
    )
    tags: dict[str, str] = Field(
        default_factory=dict,
        max_length=32,
        description="Labels of a new run: agent, experiment, config, ...",
    )

    @model_validator(mode="after")
    def _env_or_task(self) -> CreateSession:
        if not self.env and not self.task:
            raise ValueError("give 'env' (an env id) or 'task' (suite/task_id)")
        return self


#: numpy's seeds are unsigned 32-bit: anything else is refused here (422), never by the env


class Reset(_Body):
    seed: Seed | None = None
    options: dict[str, Any] | None = None


class Step(_Body):
    action: Action = Field(
        description='Call string click("a1"), {"name": ..., "args": {...}}, an OpenAI tool '
        "call, or a list of tool calls (or an assistant message with tool_calls)"
    )


class CreatePool(CreateSession):
    size: int = Field(ge=1, le=1024, description="Number of sessions in the pool")
    placement: Literal["spread", "pack"] = Field(
        default="spread", description="spread: members over the workers; pack: on one worker"
    )
    warm: int = Field(
        default=0, ge=0, le=256, description="Spare sessions kept reset, so growing is instant"
    )
    min_size: int | None = Field(default=None, ge=1, description="Smallest resize [size]")
    max_size: int | None = Field(default=None, ge=1, le=1024, description="Largest resize [size]")

    @model_validator(mode="after")
    def _bounds(self) -> CreatePool:
        low = self.min_size if self.min_size is not None else self.size
        high = self.max_size if self.max_size is not None else self.size
        if not low <= self.size <= high:
            raise ValueError(f"need min_size <= size <= max_size, got {low}, {self.size}, {high}")
        return self


class PoolResize(_Body):
    size: int = Field(ge=1, le=1024, description="New number of members")


class PoolReset(_Body):
    seed: Seed | list[Seed | None] | None = Field(
        default=None, description="One seed (member i gets seed+i) or one per member"
    )
    options: dict[str, Any] | None = None


class PoolStep(_Body):
    actions: list[Action] = Field(description="One action per member, in member order")


class PoolSend(_Body):
    actions: list[Action] = Field(description="One action per member named in env_ids")
    env_ids: list[int] = Field(description="Members (0-based) to step; each must be idle")


class PoolRecv(_Body):
    batch_size: int = Field(ge=1, description="Answer once this many sent steps have finished")
    timeout_s: float = Field(default=60.0, gt=0, le=3600, description="Longest wait")


class CreateSynthJob(_Body):
    domains: list[str] = Field(
        min_length=1, max_length=64, description="App domains, e.g. ['train']; 'all' for every one"
    )
    variants: int = Field(ge=1, le=50, description="App variants per domain")
    tasks: int = Field(ge=1, le=5000, description="Tasks to generate (failing ones are dropped)")
    seed: int = Field(default=0, ge=0, lt=2**63)
    layouts: list[Literal["desktop", "mobile"]] = Field(
        default_factory=lambda: ["desktop"],  # type: ignore[arg-type]
        min_length=1,
        max_length=2,
    )
    family: Literal["web", "mobile"] = Field(
        default="web", description="web: palaestra/web-v0 tasks; mobile: phone tasks"
    )
    name: str | None = Field(
        default=None,
        pattern=r"^[a-z][a-z0-9_-]*$",
        max_length=64,
        description="Suite name; 'synth-<job_id>' if omitted",
    )

    @field_validator("domains")
    @classmethod
    def _known_domains(cls, value: list[str]) -> list[str]:
        """Refused up front, so a typo is a 422 now rather than a failed job later."""
        from palaestra.synth_apps.spec import domain_names

        known = domain_names()
        out: list[str] = []
        for item in value:
            for domain in known if item == "all" else [item]:
                if domain not in known:
                    raise ValueError(
                        f"unknown domain {domain!r}; known: {', '.join(known)} (or 'all')"
                    )
                if domain not in out:
                    out.append(domain)
        return out


#: options of a model agent a client may set; the endpoint and its key are the operator's
MODEL_AGENT_OPTIONS = ("temperature", "max_tokens", "screenshots", "history", "max_retries")


class CreateEval(EvalRequest):
    """``POST /v1/evals``: a built-in agent over a suite's tasks, run by the gateway.

    What ``palaestra eval`` takes (:class:`~palaestra.evals.config.EvalRequest`, the same fields
    and limits) minus what only the operator decides: the gateway, the API key, the output
    folder and (for ``openai:MODEL``) the model endpoint and its key, which are the operator's
    ``llm_url``/``llm_key``, never a client's."""

    agent: str = Field(
        description="oracle | random | noop | openai:MODEL (the operator's model endpoint)"
    )
    agent_options: dict[str, Any] = Field(
        default_factory=dict,
        description=f"openai agents only: {', '.join(MODEL_AGENT_OPTIONS)}",
    )

    @field_validator("agent_options")
    @classmethod
    def _model_options(cls, value: dict[str, Any]) -> dict[str, Any]:
        unknown = sorted(set(value) - set(MODEL_AGENT_OPTIONS))
        if unknown:
            raise ValueError(
                f"unknown agent option(s) {', '.join(unknown)}; allowed: "
                f"{', '.join(MODEL_AGENT_OPTIONS)} (the model endpoint and its key are the "
                "gateway operator's)"
            )
        return value
