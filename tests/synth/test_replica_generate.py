"""Replica templates grounded: wordings drawn by seed, ask variants, repeats, planted rows,
answers over the rows, gesture plans. Each verifier is run on a real SQLite end state."""

import json
import random
import shutil
import sqlite3

import pytest
from faker import Faker

from palaestra.chat import ANSWER
from palaestra.synth_apps import data
from palaestra.synth_apps.generate import GenerationError, TaskGenerator
from palaestra.verifiers.app_state import visits_path
from palaestra.verifiers.base import DeclarativeVerifier
from palaestra.verifiers.validation import StaticProbe

from .replica_apps import NOTES, apps, spec

APPS = apps()


def make(name, seed=0, ask=False):
    return TaskGenerator.for_template(name, seed, ask=ask, specs=APPS)


def end_state(tmp_path, made, sql=(), params=()):
    """The app's database after a reset (seeded, plus the task's plants in this app) and then
    the agent's ``sql``: what the verifier reads."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / "app.sqlite"
    shutil.copyfile(data.template(APPS["notes"], 0), path)
    conn = data.connect(path)
    for row in made.task.setup.get("plant", []):
        if row["app"] == "notes":
            data.plant(APPS["notes"], conn, row["entity"], row["values"])
    for statement, args in zip(sql, params or [()] * len(sql), strict=True):
        conn.execute(statement, args)
    conn.commit()
    conn.close()
    visits_path(path).write_text("")
    return str(path)


def verdict(made, db, chat=()):
    probe = StaticProbe({"app_db": db, "chat": list(chat)})
    return DeclarativeVerifier(made.task.verifier).verify(probe).success


def test_wordings_are_drawn_by_seed_and_reproducible():
    wordings = {make("NotesStar", seed).task.instruction.split(" ")[0] for seed in range(12)}
    assert len(wordings) >= 3  # "Give", "Mark", "Star", "Please", ...
    a, b = make("NotesStar", 5), make("NotesStar", 5)
    assert a.task.model_dump() == b.task.model_dump()
    assert a.task.id == "NotesStar/5" and a.task.metadata["name"] == "NotesStar"


def test_a_template_with_one_wording_draws_no_wording():
    """A domain's template (no phrasings) consumes exactly one random draw fewer than the same
    template with phrasings: its tasks stay what they were."""
    with_phrasings = spec()
    raw = json.loads(json.dumps(NOTES))
    del raw["replica_of"]
    raw["tasks"][3]["phrasings"] = []
    plain = spec(raw)
    states = []
    for s in (plain, with_phrasings):
        rng = random.Random(9)
        TaskGenerator(s, layout="mobile").ground(s.tasks[3], rng, Faker())
        states.append(rng)
    assert states[0].getstate() != states[1].getstate()
    states[0].choice([0, 1, 2, 3, 4])  # the one draw the wording takes
    assert states[0].getstate() == states[1].getstate()


def test_errors_name_the_template_and_the_seed():
    with pytest.raises(GenerationError, match="template 'NoSuchTemplate': no app has it"):
        make("NoSuchTemplate")
    raw = json.loads(json.dumps(NOTES))
    raw["tasks"][3]["pick"] = "record.stars > 99"
    with pytest.raises(GenerationError, match=r"template NotesStar \(seed 4\): no note row"):
        TaskGenerator.for_template("NotesStar", 4, specs={"notes": spec(raw)})
    with pytest.raises(GenerationError, match=r"NotesStar.*no ask variant"):
        make("NotesStar", ask=True)


def test_ask_variant_hides_the_value_and_asks_before_typing_it():
    made = make("NotesCreate", 2, ask=True)
    body = made.task.setup["user"]["Body"]
    assert body.startswith("Remember Memo ")
    assert body not in made.task.instruction and "ask me" in made.task.instruction
    plan = made.task.oracle.data
    ask = next(i for i, s in enumerate(plan) if s["op"] == "ask")
    typed = next(i for i, s in enumerate(plan) if s.get("value") == body)
    assert ask == typed - 1 and "body" in plan[ask]["question"].lower()
    plain = make("NotesCreate", 2)
    assert "user" not in plain.task.setup and body in plain.task.instruction
    assert plain.task.id == "NotesCreate/2" and made.task.id == "NotesCreate/2-ask"


def test_repeat_acts_on_distinct_rows_and_the_verifier_wants_every_one(tmp_path):
    made = make("NotesDeleteTwo", 1)
    held = [s["name"] for s in made.task.oracle.data if s["op"] == "hold"]
    assert len(held) == 2 and held[0] != held[1]
    assert all(name in made.task.instruction for name in held)
    delete = "DELETE FROM note WHERE title = ?"
    both = end_state(tmp_path / "a", made, [delete, delete], [(held[0],), (held[1],)])
    assert verdict(made, both)
    one = end_state(tmp_path / "b", made, [delete], [(held[0],)])
    assert not verdict(made, one)
    assert not verdict(made, end_state(tmp_path / "c", made))


def test_planted_rows_are_in_setup_and_the_task_acts_on_them(tmp_path):
    made = make("NotesDeletePlanted", 3)
    plant = made.task.setup["plant"]
    title = plant[0]["values"]["title"]
    assert plant[0] == {"app": "notes", "entity": "note", "values": plant[0]["values"]}
    assert plant[1]["app"] == "people" and plant[1]["values"]["name"] == f"Ada {title}"
    assert title.startswith("Receipt ") and title in made.task.instruction
    assert [s["name"] for s in made.task.oracle.data if s["op"] == "hold"] == [title]
    delete = "DELETE FROM note WHERE title = ?"
    assert verdict(made, end_state(tmp_path / "a", made, [delete], [(title,)]))
    assert not verdict(made, end_state(tmp_path / "b", made))
    other = "DELETE FROM note WHERE id = (SELECT min(id) FROM note)"
    assert not verdict(made, end_state(tmp_path / "c", made, [other]))


def test_list_answers_in_any_order_and_stuffing_fails(tmp_path):
    made = make("NotesInFolder", 0)
    check = made.task.verifier["checks"][0]
    items, others = check["value"], check["others"]
    assert "Planted" in items and others  # the planted row counts, the other rows are rivals
    db = end_state(tmp_path, made)
    assert verdict(made, db, [ANSWER + ", ".join(reversed(items))])
    assert not verdict(made, db, [ANSWER + ", ".join([*items, *others])])
    assert not verdict(made, db, [ANSWER + ", ".join(items[:-1])])
    assert not verdict(made, db, [])
    said = next(s["text"] for s in made.task.oracle.data if s["op"] == "say")
    assert verdict(made, db, [ANSWER + said])


def test_number_answers_allow_the_tolerance_only(tmp_path):
    made = make("NotesStarCount", 0)
    value = int(made.task.verifier["checks"][0]["value"])
    db = end_state(tmp_path, made)
    conn = sqlite3.connect(db)
    assert value == conn.execute("SELECT sum(stars) FROM note").fetchone()[0]
    conn.close()
    assert verdict(made, db, [f"{ANSWER}{value + 1} stars"])
    assert not verdict(made, db, [f"{ANSWER}{value + 3}"])
    assert not verdict(made, db, [f"{ANSWER}{value} or {value + 5}"])


def test_gesture_operations_are_planned_as_the_gesture_then_the_label():
    star = make("NotesStar", 0).task.oracle.data
    i = next(i for i, s in enumerate(star) if s["op"] == "swipe")
    assert star[i + 1] == {"op": "click", "role": "button", "name": "Star"}
    assert not any(s["op"] in ("open", "hold") for s in star)
    delete = make("NotesDeleteTwo", 0).task.oracle.data
    j = next(i for i, s in enumerate(delete) if s["op"] == "hold")
    assert delete[j + 1] == {"op": "click", "role": "button", "name": "Delete"}
    create = make("NotesCreate", 0).task.oracle.data
    assert create[0] == {"op": "click", "role": "link", "name": "New note"}


def test_repeated_draws_name_distinct_rows_and_share_let_values(tmp_path):
    for seed in range(8):
        made = make("NotesCreateThree", seed)
        titles = [s["value"] for s in made.task.oracle.data if s.get("label") == "Title"]
        bodies = {s["value"] for s in made.task.oracle.data if s.get("label") == "Body"}
        assert len(titles) == 3 and len(set(titles)) == 3, (seed, titles)
        assert len(bodies) == 1 and ", ".join(titles) in made.task.instruction
    body = bodies.pop()
    insert = "INSERT INTO note (title, body, folder, stars) VALUES (?, ?, 'Home', 0)"
    all_three = end_state(tmp_path / "a", made, [insert] * 3, [(t, body) for t in titles])
    assert verdict(made, all_three)
    two = end_state(tmp_path / "b", made, [insert] * 2, [(t, body) for t in titles[:2]])
    assert not verdict(made, two)


def test_a_duplicate_is_planted_and_deleting_either_copy_passes(tmp_path):
    made = make("NotesDeleteDuplicate", 2)
    (copy,) = made.task.setup["plant"]
    title = copy["values"]["title"]
    assert title in made.task.instruction and copy["values"]["body"] is not None
    first = "DELETE FROM note WHERE id = (SELECT min(id) FROM note WHERE title = ?)"
    last = "DELETE FROM note WHERE id = (SELECT max(id) FROM note WHERE title = ?)"
    assert verdict(made, end_state(tmp_path / "a", made, [first], [(title,)]))
    assert verdict(made, end_state(tmp_path / "b", made, [last], [(title,)]))
    assert not verdict(made, end_state(tmp_path / "c", made, [first, first], [(title,)] * 2))
    assert not verdict(made, end_state(tmp_path / "d", made))
    other = "DELETE FROM note WHERE title != ? AND id = (SELECT min(id) FROM note)"
    assert not verdict(made, end_state(tmp_path / "e", made, [other], [(title,)]))


def test_a_verify_task_wants_a_look_and_no_change(tmp_path):
    made = make("NotesStarVerify", 0)
    plain = make("NotesStar", 0)
    assert made.task.instruction.endswith(plain.task.instruction.split(".")[-1])  # same ending
    assert made.task.oracle.data[-1] == {"op": "done"}
    opened = next(s for s in made.task.oracle.data if s["op"] == "open")
    assert opened["name"] == "Starred"
    visited = next(c for c in made.task.verifier["checks"] if c["kind"] == "visited")
    (look,) = visited["evidence"]

    def run(db, log):
        visits_path(db).write_text("".join(json.dumps(v) + "\n" for v in log))
        return verdict(made, db)

    db = end_state(tmp_path / "a", made)
    assert run(db, [{"view": "note", "id": look["id"], "path": "/x"}])
    assert not run(db, [])  # doing nothing without looking
    assert not run(db, [{"view": "note", "id": look["id"] - 1}])
    changed = end_state(tmp_path / "b", made, ["UPDATE note SET stars = 1 WHERE title = 'Starred'"])
    assert not run(changed, [{"view": "note", "id": look["id"]}])
    assert {"name": "never looked", "visits": []} in made.mutations


def test_end_in_opens_the_app_last_and_the_verifier_wants_it_on_screen(tmp_path):
    made = make("NotesStarThenContacts", 0)
    plan = made.task.oracle.data
    assert plan[-2:] == [{"op": "open_app", "name": "Contacts"}, {"op": "done"}]
    title = next(s["name"] for s in plan if s["op"] == "swipe")
    db = end_state(tmp_path, made, ["UPDATE note SET stars = 5 WHERE title = ?"], [(title,)])

    def run(app):
        probe = StaticProbe({"app_db": db, "chat": [], "foreground_app": app})
        return DeclarativeVerifier(made.task.verifier).verify(probe).success

    assert run("people")
    assert not run("notes") and not run("launcher")


def looked(made, db, log, chat):
    """The verdict on ``db`` after the pages in ``log`` were served and ``chat`` was said."""
    visits_path(db).write_text("".join(json.dumps(v) + "\n" for v in log))
    return verdict(made, db, chat)


def test_bool_answers_read_yes_no_and_true_false_after_a_look(tmp_path):
    """A yes/no answer is a coin flip, so it counts only after a visit to the rows it asks
    about (here the notes list), and it is one word of either vocabulary, never both."""
    made = make("NotesAnyFiveStars", 0)
    db = end_state(tmp_path, made)
    conn = sqlite3.connect(db)
    truth = conn.execute("SELECT count(*) FROM note WHERE stars = 5").fetchone()[0] > 0
    conn.close()
    right, wrong = (["Yes", "True", "yes, it is true"], ["No", "False"])
    if not truth:
        right, wrong = (["No", "False", "no, that is false"], ["Yes", "True"])
    listing = [{"list": 0, "path": "/list/0"}]
    for said in right:
        assert looked(made, db, listing, [ANSWER + said]), said
        assert not looked(made, db, [], [ANSWER + said]), said  # answered blind
    for said in [*wrong, f"{right[0]} or {wrong[0]}", f"{right[1]}, {wrong[1]}"]:
        assert not looked(made, db, listing, [ANSWER + said]), said
    assert any(m["name"] == "answered without looking" for m in made.mutations)


def test_a_yes_no_answer_about_a_row_wants_that_row_opened(tmp_path):
    """About one row: the row's page must have been served. The answer may say more than the
    word (the row's name, its folder): words beside yes or no earn nothing a guess would not,
    so only both words, or the wrong one, fail."""
    for seed in range(3):
        made = make("NotesIsStarred", seed)
        (look,) = next(c for c in made.task.verifier["checks"] if c["kind"] == "visited")[
            "evidence"
        ]
        db = end_state(tmp_path / str(seed), made)
        conn = sqlite3.connect(db)
        title, folder, stars = conn.execute(
            "SELECT title, folder, stars FROM note WHERE id = ?", (look["id"],)
        ).fetchone()
        conn.close()
        yes, no = ("Yes", "No") if stars > 0 else ("No", "Yes")
        row = [{"view": "note", "id": look["id"], "path": "/view"}]
        other = [{"view": "note", "id": look["id"] + 1, "path": "/view"}]
        assert looked(made, db, row, [ANSWER + yes])
        assert looked(made, db, row, [f"{ANSWER}{yes}, {title} is in {folder}."])
        assert not looked(made, db, other, [ANSWER + yes])  # another row looked at
        assert not looked(made, db, row, [ANSWER + no])
        assert not looked(made, db, row, [f"{ANSWER}{folder} or {yes} or {no.lower()}"])
        assert "answered without looking" in {m["name"] for m in made.mutations}
