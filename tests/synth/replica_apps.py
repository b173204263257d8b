"""Two tiny replica apps for the generator's tests (the shipped replicas change while their
authors work; these stay put): notes with a long-press delete, a swipe star and a global
create, and a contacts app other templates plant rows into."""

from __future__ import annotations

import copy
from typing import Any

from palaestra.synth_apps.spec import AppSpec, load_spec

TITLES = [
    "Grocery list",
    "Trip ideas",
    "Book notes",
    "Budget",
    "Gift ideas",
    "Workout plan",
    "Recipes",
    "Reading list",
    "Garden plan",
    "Movie list",
]

NOTES: dict[str, Any] = {
    "name": "notes",
    "title": "Notes Pro",
    "today": "2023-10-15",
    "replica_of": {"app": "Notes Pro", "package": "com.example.notes"},
    "entities": {
        "note": {
            "label": "Note",
            "display": "title",
            "fields": {
                "title": {"type": "str", "unique": True, "values": TITLES},
                "folder": {"type": "enum", "choices": ["Home", "Work", "Travel"]},
                "body": {"type": "text", "values": ["a", "b", "c"]},
                "stars": {"type": "int", "min": 0, "max": 5},
            },
            "seed": {"count": 8},
        }
    },
    "pages": [{"label": "Notes", "entity": "note", "columns": ["title", "folder"]}],
    "operations": {
        "create_note": {
            "label": "New note",
            "steps": [
                {
                    "title": "Note",
                    "inputs": {"title": {"type": "str"}, "body": {"type": "text"}},
                }
            ],
            "effects": [
                {
                    "create": "note",
                    "values": {
                        "title": "input.title",
                        "body": "input.body",
                        "folder": "'Home'",
                        "stars": "0",
                    },
                }
            ],
        },
        "delete_note": {
            "label": "Delete",
            "entity": "note",
            "trigger": "long_press",
            "effects": [{"delete": "record"}],
        },
        "star_note": {
            "label": "Star",
            "entity": "note",
            "trigger": "swipe",
            "effects": [{"update": "record", "values": {"stars": "5"}}],
        },
    },
    "tasks": [
        {
            "name": "NotesCreate",
            "kind": "operation",
            "operation": "create_note",
            "inputs": {
                "title": "'Memo ' + str(randint(100, 999))",
                "body": "'Remember ' + input.title",
            },
            "instruction": "Create a note {input.title} saying {input.body}.",
            "phrasings": [
                "Make a note called {input.title} with the text {input.body}.",
                "Add the note {input.title}: {input.body}.",
                "New note, {input.title}, reading {input.body}.",
                "Write {input.body} in a new note named {input.title}.",
            ],
            "ask": {
                "hide": ["body"],
                "instructions": ["Create a note {input.title}; ask me what it says."],
            },
        },
        {
            "name": "NotesDeleteTwo",
            "kind": "operation",
            "operation": "delete_note",
            "repeat": 2,
            "pick": "record.folder == 'Work' or len(picked) > 0",
            "instruction": "Delete the notes {records[0].title} and {records[1].title}.",
            "phrasings": [
                "Remove {records[0].title} and {records[1].title}.",
                "Get rid of the notes {records[0].title} and {records[1].title}.",
                "Delete {records[0].title}, then {records[1].title}.",
                "Throw away the notes {records[0].title} and {records[1].title}.",
            ],
        },
        {
            "name": "NotesDeletePlanted",
            "kind": "operation",
            "operation": "delete_note",
            "let": {"title": "'Receipt ' + str(randint(10, 99))"},
            "plant": [
                {"entity": "note", "values": {"title": "let.title", "folder": "'Travel'"}},
                {"app": "people", "entity": "person", "values": {"name": "'Ada ' + let.title"}},
            ],
            "pick": "record.title == let.title",
            "instruction": "Delete the note {record.title}.",
            "phrasings": [
                "Remove {record.title}.",
                "Get rid of {record.title}.",
                "Delete {record.title} from my notes.",
                "Throw away the note {record.title}.",
            ],
        },
        {
            "name": "NotesStar",
            "kind": "operation",
            "operation": "star_note",
            "pick": "record.stars < 5",
            "instruction": "Star the note {record.title}.",
            "phrasings": [
                "Give {record.title} a star.",
                "Mark {record.title} as starred.",
                "Star {record.title}.",
                "Please star {record.title}.",
            ],
        },
        {
            "name": "NotesInFolder",
            "kind": "info",
            "entity": "note",
            "inputs": {"folder": "choice(['Home', 'Work', 'Travel'])"},
            "plant": [
                {"entity": "note", "values": {"title": "'Planted'", "folder": "input.folder"}}
            ],
            "answer": "titles('note', 'row.folder == input.folder')",
            "answer_format": "list",
            "instruction": "Which notes are in the folder {input.folder}?",
            "phrasings": [
                "List my {input.folder} notes.",
                "What notes does {input.folder} hold?",
                "Name the notes filed under {input.folder}.",
                "Which of my notes are in {input.folder}?",
            ],
        },
        {
            "name": "NotesStarCount",
            "kind": "info",
            "entity": "note",
            "answer": "sum('note', 'row.stars')",
            "answer_format": "number",
            "tolerance": 1,
            "instruction": "How many stars do my notes have in all?",
            "phrasings": [
                "Count the stars over all my notes.",
                "What is the total of stars on my notes?",
                "Add up my notes' stars.",
                "How many stars in total across my notes?",
            ],
        },
        {
            "name": "NotesCreateThree",
            "kind": "operation",
            "operation": "create_note",
            "repeat": 3,
            "let": {"body": "'shared ' + str(randint(1, 9))"},
            "inputs": {"title": "choice(['Alpha', 'Beta', 'Gamma', 'Delta'])", "body": "let.body"},
            "instruction": "Add notes {join(pluck(inputs, 'title'))}, each saying {let.body}.",
            "phrasings": [
                "Create {join(pluck(inputs, 'title'))}, all reading {let.body}.",
                "New notes {join(pluck(inputs, 'title'))} with the text {let.body}.",
                "Make notes {join(pluck(inputs, 'title'))}; each says {let.body}.",
                "Write {let.body} in new notes {join(pluck(inputs, 'title'))}.",
            ],
        },
        {
            "name": "NotesDeleteDuplicate",
            "kind": "operation",
            "operation": "delete_note",
            "duplicate": True,
            "instruction": "I have {record.title} twice; delete one of them.",
            "phrasings": [
                "Remove one of the two {record.title} notes.",
                "{record.title} is there twice: delete a copy.",
                "Get rid of the duplicate {record.title}.",
                "Delete one {record.title}, keep the other.",
            ],
        },
        {
            "name": "NotesStarVerify",
            "kind": "verify",
            "operation": "star_note",
            "plant": [{"entity": "note", "values": {"title": "'Starred'", "stars": "5"}}],
            "pick": "record.title == 'Starred'",
            "instruction": "Star the note {record.title}.",
            "phrasings": [
                "Give {record.title} a star.",
                "Mark {record.title} as starred.",
                "Star {record.title}.",
                "Please star {record.title}.",
            ],
        },
        {
            "name": "NotesStarThenContacts",
            "kind": "operation",
            "operation": "star_note",
            "pick": "record.stars < 5",
            "end_in": "people",
            "instruction": "Star the note {record.title}, then open Contacts.",
            "phrasings": [
                "Give {record.title} a star and go to Contacts.",
                "Mark {record.title} as starred, then open my contacts.",
                "Star {record.title}; finish in Contacts.",
                "Please star {record.title} and then show Contacts.",
            ],
        },
        {
            "name": "NotesAnyFiveStars",
            "kind": "info",
            "entity": "note",
            "answer": "count('note', 'row.stars == 5') > 0",
            "answer_format": "bool",
            "instruction": "Does any note have five stars?",
            "phrasings": [
                "Is there a note with five stars?",
                "Do I have a five-star note?",
                "Has any of my notes got five stars?",
                "Any notes rated five stars?",
            ],
        },
        {
            "name": "NotesIsStarred",
            "kind": "info",
            "entity": "note",
            "pick": "True",
            "answer": "record.stars > 0",
            "answer_format": "bool",
            "instruction": "Does the note {record.title} have any stars? Say Yes or No.",
            "phrasings": [
                "Is {record.title} starred at all? Yes or No.",
                "Has {record.title} got a star? Answer Yes or No.",
                "Any stars on {record.title}? Yes or No.",
                "Does {record.title} carry a star? Yes or No.",
            ],
        },
    ],
}

PEOPLE: dict[str, Any] = {
    "name": "people",
    "title": "Contacts",
    "replica_of": {"app": "Contacts", "package": "com.example.contacts"},
    "entities": {
        "person": {
            "label": "Person",
            "display": "name",
            "fields": {"name": {"type": "str", "faker": "name"}},
            "seed": {"count": 3},
        }
    },
    "pages": [{"label": "People", "entity": "person"}],
}


def spec(data: dict[str, Any] | None = None, **changes: Any) -> AppSpec:
    """The notes replica (or ``data``) with top-level ``changes``."""
    raw = copy.deepcopy(NOTES if data is None else data)
    raw.update(changes)
    return load_spec(raw)


def apps() -> dict[str, AppSpec]:
    return {"notes": spec(), "people": spec(PEOPLE)}
