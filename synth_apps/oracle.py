"""Run a planned oracle: semantic steps resolved against each observation into web actions.

A plan step says what a person would do ("open the row named IC 123", "set Class to First",
"press Continue"); the policy finds the element in the latest accessibility tree, exactly as an
agent must, and answers with an action of the web action set. Nothing privileged is used, so
the same policy works in-process, over the gateway, and on every variant (labels, layouts and
widgets differ; the plan names labels, the policy picks ``fill``, ``select_option`` or a radio
click from the role it finds).
"""

from __future__ import annotations

from typing import Any

from palaestra.envs.web.oracles import Node, OracleError, action, after, click, fill, find, page

TEXT_ROLES = ("textbox", "searchbox", "spinbutton")


class PlanPolicy:
    """Stateful over one episode: call :meth:`act` with each observation."""

    def __init__(self, plan: list[dict[str, Any]]) -> None:
        self.plan = plan
        self.index = 0
        self.pages_turned = 0

    def act(self, obs: dict[str, Any]) -> str:
        if self.index >= len(self.plan):
            return action("done")
        step = self.plan[self.index]
        nodes = page(obs)
        op = step["op"]
        if op == "open":
            links = find(nodes, "link", step["name"])
            if not links:
                more = find(nodes, "link", step["next"])
                if not more or self.pages_turned > 50:
                    raise OracleError(f"no link {step['name']!r} on any page of the list")
                self.pages_turned += 1
                return click(more[0])
            self.index += 1
            return click(links[0])
        self.index += 1
        if op == "click":
            found = find(nodes, step["role"], step["name"])
            if not found:
                raise OracleError(f"no {step['role']} named {step['name']!r} on the page")
            return click(found[0])
        if op == "set":
            return set_field(nodes, step["label"], str(step["value"]))
        if op == "say":
            return action("send_msg_to_user", step["text"])
        if op == "infeasible":
            return action("report_infeasible", step["reason"])
        if op == "done":
            return action("done")
        raise OracleError(f"unknown plan step {op!r}")


def set_field(nodes: list[Node], label: str, value: str) -> str:
    """The action that gives the field labelled ``label`` the value, whatever its widget."""
    for node in find(nodes, None, label):
        if node.role in TEXT_ROLES:
            return fill(node, value)
        if node.role in ("combobox", "listbox"):
            return action("select_option", node.bid, [value])
        if node.role == "checkbox":
            wanted = value in ("yes", "True", "true", "1", "on")
            return click(node) if node.checked != wanted else action("noop", 0)
    for legend in find(nodes, "legend", label, bid=False):
        radios = [n for n in after(nodes, legend) if n.role == "radio"]
        for radio in radios:
            if radio.name == value or radio.props.get("value") == value:
                return click(radio)
    raise OracleError(f"no field labelled {label!r} (to set to {value!r})")


def policy_for(task: Any) -> Any:
    """The planned oracle of a synthesized task, played the way its family acts."""
    if task.family == "mobile":
        from palaestra.envs.mobile.oracle import MobilePlanPolicy
        from palaestra.synth_apps.driver import spec_for

        return MobilePlanPolicy(task.oracle or [], app=spec_for(task.setup["app"]).title)
    return PlanPolicy(task.oracle or [])


def run_plan(env: Any, task: Any, obs: dict[str, Any]) -> tuple:
    """Step the task's oracle to the end; ``(reward, steps, terminated, last_info)``."""
    policy = policy_for(task)
    reward, steps, info, terminated = 0.0, 0, {}, False
    while steps < task.max_steps:
        obs, reward, terminated, truncated, info = env.step(policy.act(obs))
        steps += 1
        if obs.get("last_action_error"):
            raise OracleError(f"step {steps}: {obs['last_action_error']}")
        if terminated or truncated:
            break
    return float(reward), steps, terminated, info
