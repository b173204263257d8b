"""No shipped task's view gives its private category away (docs/verifiers.md, "What an agent sees").

Two proofs per shipped suite: the view holds only allow-listed fields and public keys, and no
private value shows outside the instruction (an id that spells the faults, a tag); and a bag-of-
words classifier trained on the views of the suite's other tasks predicts no private label
(feasible or not, grant or refuse, intent, fault class) better than the majority rate + 0.05.
Suites whose validation record must be re-made after a change are read as candidates (every
task, validated or not), which is a superset of what ships.
"""

from __future__ import annotations

import functools
import json
import re

import pytest

from palaestra.tasks import AGENT_FIELDS, PUBLIC_KEYS, Task, get_suite
from palaestra.verifiers.leaks import leak_score, view_text
from tests.verifiers import leak_labels

MARGIN = 0.05


@functools.cache
def tasks_of(suite: str) -> tuple[Task, ...]:
    if suite == "synth-web":
        return tuple(leak_labels.synth_candidates())
    if suite.startswith("tau2-"):
        from palaestra.envs.tau2 import suites as tau2

        return tuple(tau2.tasks(suite.removeprefix("tau2-")))
    if suite == "computer-basic":
        from palaestra.envs.computer import suites as computer

        return tuple(computer.all_tasks())
    if suite == "osworld-os":
        from palaestra.envs.computer import osworld

        return tuple(osworld.candidates())
    if suite == "office":
        from palaestra.envs.computer.office import suite as office

        return tuple(office.all_tasks())
    if suite == "cad-parts":
        from palaestra.envs.cad import suites as cad

        return tuple(cad.all_tasks())
    if suite.startswith("androidworld-replica"):
        from palaestra.synth_apps.spec import load_spec, replica_names
        from palaestra.synthesis import androidworld

        layout = androidworld.WEB if suite.endswith("-web") else androidworld.PHONE
        specs = {app: load_spec(app) for app in replica_names()}
        made = androidworld.candidates(specs, 2, layout)
        return tuple(c.made.task for c in made if c.made is not None)
    return tuple(get_suite(suite).tasks)


SHIPPED = [
    "phone",
    "synth-web",
    "usersim",
    "tau2-retail",
    "tau2-telecom",
    "computer-basic",
    "osworld-os",
    "cad-parts",
    "miniwob",
    "office",
    "androidworld-replica",
    "androidworld-replica-web",
]

#: private keys a suite shows on purpose: the AndroidWorld replicas' ids and public domain carry
#: the AndroidWorld template (the issue asks for it, so results can be set beside AndroidWorld's
#: per template), and their public app is the real app's name, of which the private spec name
#: (``simple_calendar``) is a form; the instructions are checked like every other suite's
SHOWN = {
    "androidworld-replica": {"aw_template", "app", "source"},
    "androidworld-replica-web": {"aw_template", "app", "source"},
}


def _private_values(task: Task, shown: set[str] = frozenset()) -> list[str]:
    """The private metadata's words worth looking for: strings and list items of 3+ characters
    (numbers and booleans, such as a seed, ``grantable`` or tau2-retail's numeric native id,
    are no category's name)."""
    out: list[str] = []
    for key, value in task.metadata.items():
        if key in PUBLIC_KEYS or key in shown:
            continue
        for v in value if isinstance(value, list) else [value]:
            if isinstance(v, str) and len(v) >= 3 and not v.isdigit():
                out.append(v)
    return out


def _words(text: str) -> str:
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))


@pytest.mark.parametrize("suite", SHIPPED)
def test_the_view_holds_only_public_fields_and_no_private_value(suite):
    found = tasks_of(suite)
    if suite == "osworld-os" and not found:
        pytest.skip("OSWorld's task files are not on this machine")
    assert found, suite
    for task in found:
        view = task.agent_view()
        assert set(view) == set(AGENT_FIELDS), task.id
        assert set(view["metadata"]) <= set(PUBLIC_KEYS), task.id
        public = {_words(str(v)) for v in view["metadata"].values()}
        outside = _words(" ".join([view["id"], *public]))
        inside = _words(view["instruction"])
        for value in _private_values(task, SHOWN.get(suite, set())):
            w = _words(value)
            shown = f" {w} " in f" {outside} " and f" {w} " not in f" {inside} "
            if w and w not in public and shown:  # a public value may repeat privately
                pytest.fail(f"{suite}/{task.id}: the view shows the private value {value!r}")
        assert "tau2_id" not in json.dumps(view)


@pytest.mark.parametrize(
    ("suite", "label"),
    [(s, name) for s in SHIPPED for name in leak_labels.LABELS.get(s, {})],
)
def test_no_classifier_predicts_the_private_category_from_the_views(suite, label):
    rows = [(t, leak_labels.LABELS[suite][label](t)) for t in tasks_of(suite)]
    rows = [(t, y) for t, y in rows if y is not None]
    if len({y for _, y in rows}) < 2:
        pytest.skip(f"{suite}: one {label} only")
    score = leak_score(
        [view_text(t.agent_view()) for t, _ in rows], [y for _, y in rows], name=label
    )
    assert score.accuracy <= score.majority + MARGIN, f"{suite}: {score}"


def test_the_probe_finds_a_category_the_view_gives_away():
    """The classifier is strong enough to matter: the usersim views as they were (the intent in
    the id, the grant-or-refuse in the metadata) and the tau2-telecom ids tau2 wrote are caught."""
    users = tasks_of("usersim")
    old = [
        view_text({**t.agent_view(), "id": f"{t.metadata['domain']}-{t.metadata['intent']}"})
        for t in users
    ]
    score = leak_score(old, [t.metadata["intent"] for t in users])
    assert score.accuracy > score.majority + 0.5, score
    planted = [
        view_text({**t.agent_view(), "metadata": {"grantable": t.metadata["grantable"]}})
        for t in users
    ]
    score = leak_score(planted, [t.metadata["grantable"] for t in users])
    assert score.accuracy > score.majority + 0.15, score
    telecom = tasks_of("tau2-telecom")
    native = [view_text({**t.agent_view(), "id": t.metadata["tau2_id"]}) for t in telecom]
    score = leak_score(native, [leak_labels.tau2_issue(t) for t in telecom])
    assert score.accuracy > score.majority + 0.5, score


def test_a_usersim_customers_opening_words_do_not_give_a_refusal_away():
    """What the agent reads at reset is the view plus the user's first message: a refusal's
    customer must open as a grantable one's does (the intent is theirs to say, the verdict not)."""
    from palaestra.envs.usersim.env import UserSimEnv

    env = UserSimEnv()
    found = tasks_of("usersim")
    texts = []
    for task in found:
        obs, _ = env.reset(seed=0, options={"task": task})
        texts.append(view_text(task.agent_view()) + "\n" + str(obs["user_message"]))
    score = leak_score(texts, [t.metadata["grantable"] for t in found], name="grantable")
    assert score.accuracy <= score.majority + MARGIN, score
