"""Session options: what an API client may set, and what only the operator may.

A client's ``options`` (``POST /v1/sessions``, pools) are untrusted. Each family declares the
ones a client may set as a pydantic model with bounds and ``extra="forbid"`` (named by the
``Family.options`` or ``EnvSpec.options`` string), and the gateway validates them before any
worker is touched, so a wrong key or an out-of-range value is a 422 that names the field.

Anything that widens what an episode may do is not a client option: resource limits of the
agent-code sandbox, outbound endpoints (an LLM, an Appium server) and their credentials come
from the operator's configuration (:class:`OperatorConfig`, built from the gateway's settings)
and are added to the constructor's arguments by the gateway with
:meth:`EnvOptions.env_kwargs`. Step budgets can only be lowered: ``max_steps`` above the
task's is refused.
"""

from __future__ import annotations

from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError

from palaestra.errors import InvalidRequest

#: The largest ``max_steps`` a client may ask for, whatever the task.
MAX_STEPS_CEILING = 10_000


class OperatorConfig(BaseModel):
    """What only the operator configures; the gateway hands it to every env it builds."""

    model_config = ConfigDict(extra="forbid")

    #: computer family: the agent-code sandbox's limits (``Limits`` fields); empty: defaults
    computer_limits: dict[str, float] = Field(default_factory=dict)
    #: origins (``scheme://host:port``) workers may call: Appium servers and LLM endpoints
    outbound_allow: list[str] = Field(default_factory=list)
    appium_url: str | None = None
    appium_capabilities: dict[str, Any] = Field(default_factory=dict)
    llm_url: str | None = None
    llm_key: SecretStr | None = None
    llm_model: str = "gpt-4o-mini"

    def secrets(self) -> list[str]:
        """Values that must never reach a recording, a log line or an error body."""
        key = self.llm_key.get_secret_value() if self.llm_key else ""
        return [key] if key else []

    def allowed(self, url: str) -> bool:
        return origin(url) in {origin(u) for u in self.outbound_allow}

    def check_endpoint(self, url: str | None, what: str) -> str:
        """``url`` when it is on the operator's allow-list; refused otherwise."""
        if not url:
            raise InvalidRequest(f"this gateway has no {what} configured", field="options")
        if not self.allowed(url):
            raise InvalidRequest(
                f"{what} {origin(url)} is not on the operator's allow-list", field="options"
            )
        return url


def origin(url: str) -> str:
    parts = urlsplit(url.strip())
    port = parts.port or {"http": 80, "https": 443}.get(parts.scheme, 0)
    return f"{parts.scheme}://{(parts.hostname or '').lower()}:{port}"


class EnvOptions(BaseModel):
    """Options every env takes; a family's model extends it with its own."""

    model_config = ConfigDict(extra="forbid")

    max_steps: int | None = Field(
        default=None,
        ge=1,
        le=MAX_STEPS_CEILING,
        description="Lower the step budget (never above the task's)",
    )
    dense_reward: bool = Field(default=False, description="Reward the score's change each step")
    image_format: Literal["png", "jpeg"] | None = Field(
        default=None, description="How images travel (the worker encodes them)"
    )

    def env_kwargs(self, operator: OperatorConfig) -> dict[str, Any]:
        """The constructor's arguments: the client's options plus the operator's settings."""
        return self.model_dump(exclude_unset=True, exclude_none=True)


def check_options(
    model: type[EnvOptions], options: dict[str, Any], task_max_steps: int | None
) -> EnvOptions:
    """Validate a client's options (a 422 naming the field on failure).

    ``task_max_steps`` is the task's budget, which ``max_steps`` may only lower (None: an env
    without a task, bounded by the model's field; the env itself also never lets
    ``max_steps`` exceed a task switched in at reset)."""
    try:
        parsed = model.model_validate(options)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = ".".join(str(p) for p in err["loc"])
        field = f"options.{loc}" if loc else "options"
        what = "is not an option a client may set" if err["type"] == "extra_forbidden" else ""
        raise InvalidRequest(
            f"{field}: {what or err['msg']}", field=field, errors=_safe(exc)
        ) from None
    budget = task_max_steps
    if budget is not None and parsed.max_steps is not None and parsed.max_steps > budget:
        raise InvalidRequest(
            f"options.max_steps: {parsed.max_steps} is above the task's budget of {budget} "
            "steps; max_steps can only lower it",
            field="options.max_steps",
        )
    return parsed


def _safe(exc: ValidationError) -> list[dict[str, Any]]:
    """Errors without the input values (a client's value is never echoed back)."""
    return [
        {"loc": [str(p) for p in e["loc"]], "msg": e["msg"], "type": e["type"]}
        for e in exc.errors()
    ]


def options_model(spec: Any) -> type[EnvOptions]:
    """The options model of an env: its spec's, else its family's, else the common one."""
    from palaestra.family import families
    from palaestra.resolve import resolve

    ref = getattr(spec, "options", "")
    if not ref:
        fam = families().get(spec.family)
        ref = fam.options if fam is not None else ""
    if not ref:
        return EnvOptions
    model = resolve(ref)
    if not (isinstance(model, type) and issubclass(model, EnvOptions)):
        raise TypeError(f"{ref} is not an EnvOptions model")
    return model
