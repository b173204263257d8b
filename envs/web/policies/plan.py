"""The ``plan`` policy (a synthesized app task's planned oracle) and the adversaries played
the same way (:mod:`palaestra.synth_apps.adversaries`)."""

from __future__ import annotations

from typing import Any

from palaestra.envs.runtimes.axtree import (
    Node,
    OracleError,
    action,
    after,
    click,
    fill,
    find,
    norm,
    page,
)
from palaestra.policies import scripted
from palaestra.synth_apps import adversaries
from palaestra.synth_apps.adversaries import GAVE_UP as ADVERSARY_GAVE_UP
from palaestra.tasks import Task

TEXT_ROLES = ("textbox", "searchbox", "spinbutton")


class PlanPolicy:
    """A synthesized task's planned oracle: semantic steps resolved against each observation.

    A plan step says what a person would do ("open the row named IC 123", "set Class to First",
    "press Continue"); the policy finds the element in the latest accessibility tree, exactly as
    an agent must, and answers with an action of the web action set. Nothing privileged is used,
    so the same policy works in-process, over the gateway, and on every variant (labels, layouts
    and widgets differ; the plan names labels, the policy picks ``fill``, ``select_option`` or a
    radio click from the role it finds). Stateful over one episode: :meth:`reset` starts over.
    The plan is ``task.oracle.data`` (``{"policy": "plan", "data": [...]}``), or ``plan=``.

    Steps written for a phone play as a browser user would: ``hold`` (long-press a row) is a
    right click on the row in the mobile layout, which opens the same context menu, and opening
    the row in the desktop layout, whose detail page has every operation's button; ``ask`` is
    ``ask_user``; ``open_app`` of the app on screen goes to its home page (a web task serves
    one app, so another app's name is an error, as is ``swipe`` in the mobile layout: a mouse
    has no swipe this policy can aim without coordinates).
    """

    def __init__(self, plan: list[dict[str, Any]] | None = None) -> None:
        self.fixed = plan
        self.plan: list[dict[str, Any]] = list(plan or [])
        self.index = 0
        self.pages_turned = 0
        self.mobile = False

    def reset(self, task: Task | None) -> None:
        self.plan = scripted(task, self.fixed)
        self.index = 0
        self.pages_turned = 0
        self.mobile = bool(task and task.setup.get("layout") == "mobile")

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> str:
        if self.index >= len(self.plan):
            return action("done")
        step = self.plan[self.index]
        nodes = page(observation)
        op = step["op"]
        if op in ("open", "hold", "swipe"):
            if op == "swipe" and self.mobile:
                raise OracleError("a swipe step plays on the phone, not in a browser")
            links = find(nodes, "link", step["name"])
            if not links:
                more = find(nodes, "link", step["next"]) if "next" in step else []
                if not more or self.pages_turned > 50:
                    raise OracleError(f"no link {step['name']!r} on any page of the list")
                self.pages_turned += 1
                return click(more[0])
            self.index += 1
            if op == "hold" and self.mobile:  # a right click opens the row's context menu
                return action("click", links[0].bid, "right")
            return click(links[0])
        self.index += 1
        if op == "ask":
            return action("ask_user", step["question"])
        if op == "open_app":
            return open_app(observation, step["name"])
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


def open_app(observation: dict[str, Any], name: str) -> str:
    """``open_app`` in a browser: the home page of the app on screen, when it is the one named
    (a synthesized app's pages are titled ``<page> · <app title>`` and live under its
    ``/s/<session>/`` path)."""
    title = str(observation.get("title", ""))
    url = str(observation.get("url", ""))
    if norm(title.rpartition(" · ")[2]) != norm(name) or "/s/" not in url:
        raise OracleError(f"a web task serves one app; {name!r} is not the app on screen")
    head, _, rest = url.partition("/s/")
    return action("goto", f"{head}/s/{rest.split('/', 1)[0]}/")


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


#: how an adversary that cannot play its strategy ends (never as the plain oracle would)
GAVE_UP = action("report_infeasible", ADVERSARY_GAVE_UP["reason"])


class AdversaryPlan(PlanPolicy):
    """A synthesized task's adversary: the plan ``build(task)`` makes (a cheap strategy from
    :mod:`palaestra.synth_apps.adversaries`), played like an oracle's plan."""

    def __init__(self, build: adversaries.Build) -> None:
        super().__init__()
        self.build = build

    def reset(self, task: Task | None) -> None:
        super().reset(task)
        self.plan = self.build(task)


#: cheap strategies a reward hacker tries on synthesized app tasks (MiniWoB's verifier is its
#: own): execution validation plays each, and a task ships only if every one fails it
ADVERSARIES = adversaries.policies(AdversaryPlan, GAVE_UP)
