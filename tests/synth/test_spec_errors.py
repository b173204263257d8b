"""Bad specs fail when they load, with the place named; bad templates fail when grounded."""

import copy

import pytest
import yaml

from palaestra.synth_apps.generate import GenerationError, TaskGenerator
from palaestra.synth_apps.spec import DOMAINS_DIR, SpecError, load_spec


@pytest.fixture
def train():
    return yaml.safe_load((DOMAINS_DIR / "train.yaml").read_text())


def broken(spec, edit):
    spec = copy.deepcopy(spec)
    edit(spec)
    with pytest.raises(SpecError) as info:
        load_spec(spec)
    return str(info.value)


def test_unknown_field_type_is_named(train):
    msg = broken(train, lambda s: s["entities"]["trip"]["fields"]["code"].update(type="strng"))
    assert "entities.trip.fields.code: unknown field type 'strng'" in msg


def test_dangling_relation_is_named(train):
    msg = broken(train, lambda s: s["entities"]["trip"]["fields"]["origin"].update(to="stations"))
    assert "entities.trip.fields.origin: ref to unknown entity 'stations'" in msg


def test_expression_naming_unknown_things_is_named(train):
    def edit(s):
        s["operations"]["book"]["rules"][0]["require"] = "input.passengers <= seats"

    msg = broken(train, edit)
    assert "operations.book.rules.0.require" in msg and "'seats'" in msg


def test_unknown_keys_and_missing_generators_are_named(train):
    assert "colour" in broken(train, lambda s: s["pages"][0].update(colour="red"))
    msg = broken(train, lambda s: s["tasks"][0]["inputs"].pop("card"))
    assert "tasks.0.inputs: no generator for input(s) ['card']" in msg


def test_unknown_domain_lists_the_known_ones():
    with pytest.raises(SpecError, match=r"domains: .*train"):
        load_spec("atlantis")


def test_rules_that_make_every_task_infeasible_are_reported(train):
    spec = copy.deepcopy(train)
    spec["operations"]["book"]["rules"].append(
        {"require": "input.passengers > 100", "message": "Closed."}
    )
    spec["tasks"] = [t for t in spec["tasks"] if t.get("operation") == "book"][:1]
    gen = TaskGenerator(load_spec(spec))
    with pytest.raises(GenerationError, match=r"tasks\.0: .*breaks a rule: Closed\."):
        gen.generate(3)


def test_keys_of_another_template_kind_are_refused(train):
    msg = broken(train, lambda s: s["tasks"][2].update(operation="book"))
    assert "tasks.2.operation: info templates do not take 'operation'" in msg
