"""The replica spec keys: loaded by name from their own folder, and each mistake a clear error
naming its place (names, phrasings with the instruction's holes, ask variants, plants)."""

import copy

import pytest
import yaml

from palaestra.synth_apps import spec as specs
from palaestra.synth_apps.spec import SpecError, check_replicas, load_spec, replica_names

from .replica_apps import NOTES, PEOPLE, apps


def notes_with(index: int, **changes):
    raw = copy.deepcopy(NOTES)
    raw["tasks"][index].update(changes)
    return raw


def test_replicas_load_by_name_from_their_own_folder(tmp_path, monkeypatch):
    (tmp_path / "notes.yaml").write_text(yaml.safe_dump(NOTES))
    monkeypatch.setattr(specs, "REPLICAS_DIR", tmp_path)
    assert replica_names() == ["notes"]
    assert "notes" not in specs.domain_names()  # suites made of every domain leave it out
    loaded = load_spec("notes")
    assert loaded.replica_of is not None and loaded.replica_of.package == "com.example.notes"
    assert loaded.operations["delete_note"].trigger == "long_press"
    assert loaded.operations["create_note"].trigger == "button"
    assert [t.name for t in loaded.tasks][:2] == ["NotesCreate", "NotesDeleteTwo"]
    with pytest.raises(SpecError, match="replicas: \\['notes'\\]"):
        load_spec("nothing_here")


def test_a_replica_template_needs_its_name_and_four_phrasings():
    raw = notes_with(0, name=None)
    with pytest.raises(SpecError, match=r"tasks\.0\.name: a replica's template needs its name"):
        load_spec(raw)
    raw = notes_with(3, phrasings=NOTES["tasks"][3]["phrasings"][:3])
    with pytest.raises(SpecError, match=r"tasks\.3\.phrasings: .* needs >= 4, has 3"):
        load_spec(raw)
    # a domain (no replica_of) may keep one wording
    plain = copy.deepcopy(NOTES)
    del plain["replica_of"]
    plain["tasks"][3]["phrasings"] = []
    plain["tasks"][3]["name"] = None
    assert load_spec(plain).tasks[3].phrasings == []


def test_a_phrasing_keeps_exactly_the_instructions_holes():
    phrasings = list(NOTES["tasks"][0]["phrasings"])
    phrasings[1] = "Add the note {input.title}."  # drops {input.body}
    with pytest.raises(SpecError, match=r"tasks\.0\.phrasings\.1: holes differ.*input\.body"):
        load_spec(notes_with(0, phrasings=phrasings))
    phrasings[1] = "Add the note {input.title}: {input.body} {record.title}."
    with pytest.raises(SpecError, match=r"extra \['record\.title'\]"):
        load_spec(notes_with(0, phrasings=phrasings))
    phrasings[1] = "Add the note { input.title }: {input.body}."  # spacing is no difference
    load_spec(notes_with(0, phrasings=phrasings))


def test_an_ask_variant_hides_known_values_and_never_shows_them():
    with pytest.raises(SpecError, match=r"tasks\.0\.ask\.hide: 'colour' is not an input"):
        load_spec(notes_with(0, ask={"hide": ["colour"], "instructions": ["Make a note."]}))
    shows = {"hide": ["body"], "instructions": ["Create a note saying {input.body}."]}
    with pytest.raises(SpecError, match=r"ask\.instructions\.0: shows hidden value"):
        load_spec(notes_with(0, ask=shows))
    new_hole = {"hide": ["body"], "instructions": ["Create {input.title} at {today}."]}
    with pytest.raises(SpecError, match=r"holes \['today'\] are not in the instruction"):
        load_spec(notes_with(0, ask=new_hole))
    with pytest.raises(SpecError, match=r"ask\.instructions"):
        load_spec(notes_with(0, ask={"hide": ["body"], "instructions": []}))
    # a row's field may be hidden too (the place to favorite): its record.<field> holes go
    row = {"hide": ["title"], "instructions": ["Star one of my notes; ask me which."]}
    assert load_spec(notes_with(3, ask=row)).tasks[3].ask is not None


def test_plants_answers_and_repeats_are_checked():
    bad_field = [{"entity": "note", "values": {"colour": "'red'"}}]
    with pytest.raises(SpecError, match=r"tasks\.2\.plant\.0\.values: \['colour'\] are not"):
        load_spec(notes_with(2, plant=bad_field))
    with pytest.raises(SpecError, match=r"tasks\.2\.plant\.0\.entity: unknown entity 'memo'"):
        load_spec(notes_with(2, plant=[{"entity": "memo"}]))
    with pytest.raises(SpecError, match=r"tasks\.4\.answer: .* names \['secret'\]"):
        load_spec(notes_with(4, answer="secret"))
    with pytest.raises(SpecError, match=r"tasks\.5\.tolerance: a tolerance is for"):
        load_spec(notes_with(5, answer_format="text"))
    with pytest.raises(SpecError, match=r"tasks\.1\.repeat: 30 is not between 1 and 20"):
        load_spec(notes_with(1, repeat=30))
    with pytest.raises(SpecError, match=r"tasks\.4\.repeat: info templates do not take"):
        load_spec(notes_with(4, repeat=2))
    with pytest.raises(SpecError, match=r"tasks\.0\.answer: operation templates do not take"):
        load_spec(notes_with(0, answer="1"))
    with pytest.raises(SpecError, match=r"tasks\.3\.duplicate: 'star_note' does not delete"):
        load_spec(notes_with(3, duplicate=True))
    with pytest.raises(SpecError, match=r"tasks\.3: a verify template names the row's entity"):
        load_spec(notes_with(3, kind="verify", operation=None))
    with pytest.raises(SpecError, match=r"tasks\.3\.answer: verify templates do not take"):
        load_spec(notes_with(3, kind="verify", answer="1"))


def test_template_names_are_unique_over_replicas_and_cross_app_plants_exist():
    check_replicas(apps())
    twin = copy.deepcopy(PEOPLE)
    twin["tasks"] = [
        {**copy.deepcopy(NOTES["tasks"][5]), "entity": "person", "answer": "count('person')"}
    ]
    with pytest.raises(SpecError, match=r"people\.tasks\.0\.name: 'NotesStarCount' is already"):
        check_replicas({**apps(), "people": load_spec(twin)})
    raw = notes_with(2, plant=[{"app": "people", "entity": "person", "values": {"age": "1"}}])
    with pytest.raises(SpecError, match=r"notes\.tasks\.2\.plant\.0\.values: \['age'\]"):
        check_replicas({"notes": load_spec(raw), "people": load_spec(PEOPLE)})
    with pytest.raises(SpecError, match=r"plant\.0\.app: no replica 'people'"):
        check_replicas({"notes": load_spec(raw)})
    lost = notes_with(3, end_in="nowhere")
    with pytest.raises(SpecError, match=r"notes\.tasks\.3\.end_in: no replica 'nowhere'"):
        check_replicas({"notes": load_spec(lost), "people": load_spec(PEOPLE)})
