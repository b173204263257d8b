"""What an API client may set on a dialogue session (``palaestra/usersim-v0``,
``palaestra/tau2-v0``; see ``palaestra.options``).

The simulated user speaks from rules by default. ``user: "llm"`` asks for the operator's LLM
endpoint (``PALAESTRA_LLM_URL``, its key ``PALAESTRA_LLM_KEY``, ``PALAESTRA_LLM_MODEL``, on the
outbound allow-list ``PALAESTRA_OUTBOUND_ALLOW``). A client never names an endpoint or a key:
the worker would POST the conversation, with the key, wherever it was told.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from palaestra.options import EnvOptions, OperatorConfig

Part = Literal["conversation", "user_message", "last_tool_result", "tools", "policy", "messages"]


class DialogueOptions(EnvOptions):
    persona: Literal["terse", "chatty", "confused", "impatient"] | None = Field(
        default=None, description="How the simulated user words things"
    )
    user: Literal["rules", "llm"] = Field(
        default="rules", description="The simulated user's voice: rules, or the operator's LLM"
    )
    llm_fallback: Literal["rules", "error"] | None = Field(
        default=None, description="When the LLM fails: speak from rules, or fail the step"
    )
    llm_timeout: float | None = Field(default=None, ge=1, le=60)
    observe: list[Part] | None = Field(
        default=None,
        min_length=1,
        max_length=6,
        description="Observation parts; 'messages' (OpenAI chat messages) only when asked for",
    )

    def env_kwargs(self, operator: OperatorConfig) -> dict[str, Any]:
        kwargs = super().env_kwargs(operator)
        kwargs.pop("user", None)
        if self.user == "llm":
            kwargs["llm_url"] = operator.check_endpoint(operator.llm_url, "LLM endpoint")
            kwargs["llm_model"] = operator.llm_model
            if operator.llm_key is not None:
                kwargs["llm_key"] = operator.llm_key.get_secret_value()
        return kwargs
