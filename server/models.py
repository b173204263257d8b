"""Request bodies of the HTTP API. ``extra="forbid"`` so a typo is a 422 naming the field."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

Action = str | dict[str, Any]


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CreateSession(_Body):
    env: str | None = Field(default=None, description="Env id, e.g. palaestra/web-v0")
    task: str | None = Field(default=None, description="Task reference 'suite/task_id'")
    options: dict[str, Any] = Field(default_factory=dict, description="Env constructor options")
    record: bool | None = Field(default=None, description="Record this session's trajectory")

    @model_validator(mode="after")
    def _env_or_task(self) -> CreateSession:
        if not self.env and not self.task:
            raise ValueError("give 'env' (an env id) or 'task' (suite/task_id)")
        return self


class Reset(_Body):
    seed: int | None = None
    options: dict[str, Any] | None = None


class Step(_Body):
    action: Action = Field(description='Call string click("a1") or {"name": ..., "args": {...}}')


class CreatePool(CreateSession):
    size: int = Field(ge=1, le=1024, description="Number of sessions in the pool")


class PoolReset(_Body):
    seed: int | list[int | None] | None = Field(
        default=None, description="One seed (member i gets seed+i) or one per member"
    )
    options: dict[str, Any] | None = None


class PoolStep(_Body):
    actions: list[Action] = Field(description="One action per member, in member order")
