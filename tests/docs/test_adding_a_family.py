"""docs/adding-a-family.md builds a family that works, from its own words.

The page's files (every ```py block whose first line names ``envs/...`` or ``verifiers/...``)
are written into a scratch folder laid out as the repository is (``envs/`` is
``palaestra.envs``, ``verifiers/`` is ``palaestra.verifiers``), the family is registered the way
the page says code outside a package is (``PALAESTRA_PLUGINS``), and then: it is listed, its env
plays a task in process and by its gymnasium id, its options are checked, its task validates
through the one validation service, every string it names points down the layers once it is in
the contract, and the page's bench entry is a catalog entry. A page that drifts from the code
fails here.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import gymnasium as gym
import pytest

import palaestra.envs
import palaestra.verifiers
from palaestra import family as family_module
from palaestra import registry, tasks
from palaestra.errors import InvalidRequest
from palaestra.evals import prompts
from palaestra.family import Family, family
from palaestra.options import OperatorConfig, check_options, options_model
from palaestra.validation import validate_task
from palaestra.verifiers import base as verifier_base

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "adding-a-family.md"
#: a file of the family as the page writes it: a ```py block whose first line is its path
FILE_RE = re.compile(r"^```py\n# ((?:envs|verifiers)/[\w/]+\.py)\n(.*?)^```", re.S | re.M)
PLUGIN = "palaestra.envs.counter:FAMILY"
ENV_ID = "palaestra/counter-v0"


def doc_files() -> dict[str, str]:
    return dict(FILE_RE.findall(DOC.read_text()))


@pytest.fixture(scope="module")
def counter(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Family]:
    root = tmp_path_factory.mktemp("counter-family")
    for path, code in doc_files().items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(code)
    # the scratch folders join the packages they map to, as setup.py maps the repository's
    palaestra.envs.__path__.append(str(root / "envs"))
    palaestra.verifiers.__path__.append(str(root / "verifiers"))
    before = os.environ.get(registry.PLUGINS_ENV_VAR, "")
    os.environ[registry.PLUGINS_ENV_VAR] = ",".join(filter(None, [before, PLUGIN]))
    try:
        registry.load_plugins()
        yield family("counter")
    finally:
        # gone again: other tests list every installed family, env and check kind
        os.environ[registry.PLUGINS_ENV_VAR] = before
        palaestra.envs.__path__.remove(str(root / "envs"))
        palaestra.verifiers.__path__.remove(str(root / "verifiers"))
        family_module._FAMILIES.pop("counter", None)
        registry._REGISTRY.pop(ENV_ID, None)
        registry._PLUGINS_LOADED.discard(PLUGIN)
        registry._PLUGINS_INSTALLED.discard(PLUGIN)
        tasks._SUITES.pop("counter-basic", None)
        tasks._LOADED.pop("counter-basic", None)
        verifier_base._KINDS.pop("counter_reached", None)
        for name in [m for m in sys.modules if m.startswith(("palaestra.envs.counter",))]:
            del sys.modules[name]
        sys.modules.pop("palaestra.verifiers.counter", None)
        for env_id in [i for i in gym.registry if i.startswith(("palaestra/counter", ENV_ID))]:
            del gym.registry[env_id]


def test_the_page_writes_every_file_of_the_family() -> None:
    assert set(doc_files()) == {
        "envs/counter/__init__.py",
        "envs/counter/env.py",
        "envs/counter/options.py",
        "envs/counter/suites.py",
        "envs/counter/policies.py",
        "envs/counter/validation.py",
        "verifiers/counter.py",
    }


def test_the_family_is_listed_and_its_env_plays_a_task(counter: Family) -> None:
    assert counter.unavailable() is None
    assert counter.policy_names() == ["claim", "noop", "oracle", "overshoot", "random", "replay"]
    task = tasks.get_task("counter-basic/reach-6")
    env = registry.make(ENV_ID, task=task)
    obs, info = env.reset(seed=0)
    assert obs["count"] == 0 and info["task"]["id"] == "reach-6"
    obs, *_ = env.step("add(9)")  # out of the action's bounds: an agent's mistake
    assert obs["count"] == 0 and "n" in obs["last_action_error"]
    for action in ("add(3)", "add(3)"):
        obs, reward, terminated, *_ = env.step(action)
    obs, reward, terminated, _, info = env.step("done()")
    assert terminated and reward == 1.0 and info["verifier"]["success"]
    env.close()
    # the gymnasium id comes with the registration; a suite's task ids with its loading
    gym_env = gym.make("palaestra/counter-basic.reach-3-v0", disable_env_checker=True)
    obs, _ = gym_env.reset(seed=0)
    assert obs["goal"].startswith("Make the counter show 3")
    gym_env.close()
    assert ENV_ID in gym.registry


def test_its_options_are_bounded_and_reach_the_env(counter: Family) -> None:
    model = options_model(registry.spec(ENV_ID))
    assert model.__name__ == "CounterOptions"
    kwargs = check_options(model, {"start": 4}, None).env_kwargs(OperatorConfig())
    env = registry.make(ENV_ID, **kwargs)
    assert env.reset(seed=0)[0]["count"] == 4
    env.close()
    with pytest.raises(InvalidRequest) as err:
        check_options(model, {"start": 1000}, None)
    assert err.value.fields["field"] == "options.start"


def test_its_task_validates_through_the_one_validation_service(counter: Family) -> None:
    report = validate_task(tasks.get_task("counter-basic/reach-3"))
    assert report.validated, report.reason
    assert report.oracle_scores == [1.0, 1.0] and report.noop_score == 0.0
    assert set(report.adversaries) == {"claim", "overshoot"}
    assert not any(a["success"] for a in report.adversaries.values())


def test_every_string_it_names_points_down_once_it_is_in_the_contract(counter: Family) -> None:
    from tests.kernel.test_layers_at_run_time import Layers

    read = Layers.read()
    # as the page says: the family joins the families line of the layers contract
    layers = [
        [*line, "palaestra.envs.counter"] if "palaestra.envs.web" in line else line
        for line in read.layers
    ]
    contract = Layers(layers, read.forbidden)
    named = [counter.policies, *counter.checks, counter.validation, counter.options]
    named += [spec.entry_point for spec in counter.envs]
    named += [suite.source for suite in counter.suites if isinstance(suite.source, str)]
    targets = {value.split(":")[0] for value in named}
    assert len(targets) == 6
    owner = "palaestra.envs.counter"
    assert [t for t in targets if contract.violation(owner, t) is not None] == []
    assert contract.violation(owner, "palaestra.envs.web")  # never another family
    assert contract.violation(owner, "palaestra.bench.fixtures")  # nor the bench


def test_its_prompt_template_and_bench_entry_are_as_the_page_says(counter: Family) -> None:
    assert prompts.template("counter") is prompts.GENERIC
    actions = counter.envs[0].load().action_set.describe()
    assert actions in prompts.system_prompt("counter", actions, {"instruction": "x"})
    import yaml

    from palaestra.bench.catalog import entry

    block = re.search(r"^```text\n(- name: counter\n.*?)^```", DOC.read_text(), re.M | re.S)
    assert block is not None
    [written] = yaml.safe_load(block.group(1))
    bench = entry(written)
    assert bench.family == "counter" and bench.target == "palaestra.bench.counter:main"
