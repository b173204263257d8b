"""Prompt templates of the model agents, one per family, and how an observation becomes a
chat message (text parts, plus the screenshot as an image part when the agent sends images).

The env's action set reaches the model twice: as tools (``ActionSet.tools()``, the function
definitions the chat API takes) and as the text of ``ActionSet.describe()`` in the system prompt,
for endpoints that ignore tools. Observations are rendered part by part in a fixed order per
family; long text parts are cut (an accessibility tree can be 100 kB) so a model's context holds
a whole episode's recent steps.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from palaestra import codec


@dataclass(frozen=True)
class Template:
    role: str
    #: observation parts in the order the model reads them; parts not listed come after
    order: tuple[str, ...] = ()
    #: text parts never shown per step (the goal is in the first message)
    hide: tuple[str, ...] = ("goal",)


COMMON = (
    "Answer every turn with exactly one tool call: the next action. Actions that do not parse "
    "or do not apply come back as last_action_error and change nothing; read it and try again."
)

#: the dialogue families' (usersim, tau2): the same moves and observation (the dialogue runtime)
DIALOGUE = Template(
    "You are a customer-service agent. Talk to the customer with send_message, use the "
    "domain's tools with call_tool(name, args) and follow the policy; end the conversation "
    "when the customer's request is resolved.",
    ("policy", "tools", "conversation", "user_message", "last_tool_result"),
    hide=("goal", "policy", "tools"),
)
TEMPLATES: dict[str, Template] = {
    "web": Template(
        "You operate a web browser to complete the user's task. Elements of the page are named "
        "by their bid in the accessibility tree; use those ids in actions.",
        ("url", "title", "tabs", "axtree", "chat"),
    ),
    "mobile": Template(
        "You operate an Android-style phone to complete the user's task. UI elements are "
        "listed with their index; tap, type and navigate with the tools.",
        ("foreground_app", "ui_elements", "chat"),
    ),
    "computer": Template(
        "You operate a Linux desktop with a shell to complete the user's task. Use GUI actions "
        "on the screenshot or the code actions (run_shell, run_python, write_file).",
        ("cwd", "windows", "last_output"),
    ),
    "cad": Template(
        "You build a 3D part in a parametric CAD kernel to match the target described in the "
        "task. Sketch, extrude, cut and refine; submit when the part matches.",
        ("feedback", "features", "properties", "topology", "history"),
    ),
    "usersim": DIALOGUE,
    "tau2": DIALOGUE,
}
GENERIC = Template("You act in an environment to complete the task.")


def template(family: str) -> Template:
    return TEMPLATES.get(family, GENERIC)


def system_prompt(family: str, actions_text: str, view: dict[str, Any]) -> str:
    """The system message: the family's role, the actions as text, the common rules."""
    return "\n\n".join(
        p
        for p in (
            template(family).role,
            COMMON,
            f"Actions:\n{actions_text}" if actions_text else "",
        )
        if p
    )


def first_message(family: str, view: dict[str, Any], observation: dict[str, Any]) -> str:
    """The task, plus the parts the family shows once (a dialogue's policy and tool list)."""
    goal = observation.get("goal") or view.get("instruction", "")
    parts = [f"Task: {goal}"]
    if template(family) is DIALOGUE:
        for key in ("policy", "tools"):
            if observation.get(key):
                parts.append(f"{key}:\n{observation[key]}")
    return "\n\n".join(parts)


def render(
    family: str,
    observation: dict[str, Any],
    *,
    max_chars: int = 12_000,
    images: bool = True,
) -> list[dict[str, Any]]:
    """An observation as chat content parts: text first (error first of all), then images.

    ``observation`` is as the gateway sends it: images are ``{"__image__": fmt, "data": b64}``
    and go as ``image_url`` data URLs when ``images``, else are left out."""
    tpl = template(family)
    keys = [k for k in tpl.order if k in observation]
    keys += [k for k in observation if k not in keys and k != "last_action_error"]
    lines = []
    error = observation.get("last_action_error")
    if error:
        lines.append(f"last_action_error: {error}")
    pics = []
    for key in keys:
        value = observation[key]
        if _is_image(value):
            if images:
                pics.append(value)
            continue
        if key in tpl.hide or value in (None, "", [], {}):
            continue
        text = value if isinstance(value, str) else str(codec.decode(value))
        if len(text) > max_chars:
            text = text[:max_chars] + f"\n... ({len(text) - max_chars} more characters cut)"
        lines.append(f"{key}:\n{text}" if "\n" in text or len(text) > 80 else f"{key}: {text}")
    content: list[dict[str, Any]] = [{"type": "text", "text": "\n".join(lines) or "(empty)"}]
    for pic in pics:
        mime = "image/jpeg" if pic.get(codec.IMAGE_KEY) == "jpeg" else "image/png"
        url = f"data:{mime};base64,{pic['data']}"
        content.append({"type": "image_url", "image_url": {"url": url}})
    return content


def _is_image(value: Any) -> bool:
    return isinstance(value, dict) and codec.IMAGE_KEY in value
