"""The replicas of AndroidWorld's data apps (Pro Expense, Broccoli, Markor, Files): every template
grounds for seeds 0-2 (and its ask variant), and each verifier expects what the wording and the
planted rows say: the reimbursable lines of the planted my_expenses.txt are the expenses to log,
the recipes of recipes.txt (with the asked preparation time) the recipes to add, the recipes
deleted by ingredient are exactly those whose directions name it, a merged note joins the three
planted notes in order, a duplicate is an exact copy. No browser: verifiers are read as data."""

from __future__ import annotations

import re
from typing import Any

import pytest

from palaestra.synth_apps import data, expr
from palaestra.synth_apps.spec import load_spec

from .replica_reading import checks, gone, maker, new_rows, planted

APPS = ["pro_expense", "broccoli", "markor", "files"]
SPECS = {app: load_spec(app) for app in APPS}
made = maker(SPECS)
TEMPLATES = [(t.name, t.ask is not None) for spec in SPECS.values() for t in spec.tasks]
SEEDS = range(3)


def seeded(app: str, table: str) -> list[dict[str, Any]]:
    with data.opened(data.template(SPECS[app], 0), readonly=True) as conn:
        return [dict(r) for r in conn.execute(f"SELECT * FROM {table} ORDER BY id")]


def table_lines(text: str) -> list[dict[str, str]]:
    """A planted '|'-separated note as rows keyed by its header line."""
    header, *lines = text.split("\n")
    keys = header.split("|")
    return [dict(zip(keys, line.split("|"), strict=True)) for line in lines]


def test_the_apps_cover_thirty_two_templates_twelve_with_an_ask_variant():
    assert len(TEMPLATES) == 32 and sum(ask for _, ask in TEMPLATES) == 12


@pytest.mark.parametrize(("name", "ask"), TEMPLATES)
def test_every_template_grounds_for_three_seeds(name, ask):
    tasks = [made(name, seed).task for seed in SEEDS]
    assert [t.id for t in tasks] == [f"{name}/{seed}" for seed in SEEDS]
    if ask:
        variant = made(name, 0, ask=True).task
        assert variant.id == f"{name}/0-ask" and variant.setup["user"]
        for value in variant.setup["user"].values():  # the hidden value is not in the wording
            assert str(value) not in variant.instruction


def test_reimbursable_lines_of_the_planted_note_are_the_expenses_to_log():
    for seed in SEEDS:
        g = made("ExpenseAddMultipleFromMarkor", seed)
        (note,) = planted(g, "note")
        assert note["name"] == "my_expenses.txt"
        marked = [r for r in table_lines(note["text"]) if r["reimbursable"] == "yes"]
        expected = [
            {
                "name": r["name"],
                "amount": float(r["amount_dollars"].removeprefix("$")),
                "category": r["category_name"],
                "note": r["note"],
            }
            for r in marked
        ]
        have = [
            {k: row[k] for k in ("name", "amount", "category", "note")}
            for row in new_rows(g, "expense")
        ]
        assert len(expected) == 2 and have == expected


def test_an_added_expense_has_the_category_its_name_has_in_the_seeded_log():
    category = SPECS["pro_expense"].entities["expense"].fields["category"].expr
    assert category is not None
    for name in ("ExpenseAddSingle", "ExpenseAddMultiple"):
        for seed in SEEDS:
            for row in new_rows(made(name, seed), "expense"):
                assert row["category"] == expr.evaluate(category, {"row": {"name": row["name"]}})


@pytest.mark.parametrize(
    "name", ["RecipeAddMultipleRecipesFromMarkor", "RecipeAddMultipleRecipesFromMarkor2"]
)
def test_the_recipes_of_the_planted_file_are_the_recipes_to_add(name):
    fields = ("title", "description", "servings", "preparation_time", "ingredients", "directions")
    for seed in SEEDS:
        g = made(name, seed)
        (note,) = planted(g, "note")
        lines = table_lines(note["text"])
        if name.endswith("2"):  # only the recipes taking the asked time
            asked = re.search(r"(\d+ (?:mins|hrs))", g.task.instruction)
            assert asked is not None
            lines = [r for r in lines if r["preparationTime"] == asked.group(1)]
            assert 0 < len(lines) < len(table_lines(note["text"]))
        expected = [
            [
                r[k]
                for k in (
                    "title",
                    "description",
                    "servings",
                    "preparationTime",
                    "ingredients",
                    "directions",
                )
            ]
            for r in lines
        ]
        have = [[row[f] for f in fields] for row in new_rows(g, "recipe")]
        assert len(have) == 3 and sorted(have) == sorted(expected)
        assert len({row[0] for row in have}) == 3  # three different recipes


def test_recipes_deleted_by_ingredient_are_exactly_those_whose_directions_name_it():
    for seed in SEEDS:
        g = made("RecipeDeleteMultipleRecipesWithConstraint", seed)
        ingredient = re.search(
            r"(avocado|black beans|lemon juice|olive oil|soy sauce)", g.task.instruction
        )
        assert ingredient is not None
        named = {
            r["id"]
            for r in seeded("broccoli", "recipe")
            if ingredient.group(1) in r["directions"].lower()
        }
        assert gone(g, "recipe") == named and len(named) == 3


def test_a_merged_note_joins_the_three_planted_notes_in_order_with_blank_lines():
    for seed in SEEDS:
        g = made("MarkorMergeNotes", seed)
        notes = planted(g, "note")
        order = sorted(notes, key=lambda n: g.task.instruction.index(n["name"]))
        (row,) = new_rows(g, "note")
        assert row["text"] == "\n\n".join(n["text"] for n in order)


def test_a_header_goes_above_the_note_s_text_after_a_blank_line():
    notes = {r["id"]: r for r in seeded("markor", "note")}
    for seed in SEEDS:
        g = made("MarkorAddNoteHeader", seed)
        (text,) = [c for c in checks(g) if re.fullmatch(r"note \d+ text", str(c.get("describe")))]
        header = re.search(r'"(\w{20})"', g.task.instruction)
        assert header is not None
        assert text["expect"] == f"{header.group(1)}\n\n{notes[text['params'][0]]['text']}"


@pytest.mark.parametrize(
    ("name", "app", "table"),
    [
        ("ExpenseDeleteDuplicates", "pro_expense", "expense"),
        ("ExpenseDeleteDuplicates2", "pro_expense", "expense"),
        ("RecipeDeleteDuplicateRecipes", "broccoli", "recipe"),
        ("RecipeDeleteDuplicateRecipes2", "broccoli", "recipe"),
        ("RecipeDeleteDuplicateRecipes3", "broccoli", "recipe"),
    ],
)
def test_a_duplicate_is_an_exact_copy_of_a_seeded_row(name, app, table):
    rows = [{k: v for k, v in r.items() if k != "id"} for r in seeded(app, table)]
    for seed in SEEDS:
        (copy,) = planted(made(name, seed), table)
        assert copy in rows


def test_the_newest_note_deleted_is_the_one_planted_after_every_seeded_note():
    latest = max(r["modified"] for r in seeded("markor", "note"))
    for seed in SEEDS:
        g = made("MarkorDeleteNewestNote", seed)
        (note,) = planted(g, "note")
        assert note["modified"] > latest
        assert gone(g, "note") == {len(seeded("markor", "note")) + 1}
