"""The optional LLM author against a loopback OpenAI-compatible endpoint (a test double: no
model runs here). What it writes is checked like hand-written input."""

import json
import re

import pytest
from typer.testing import CliRunner

from palaestra.cli import app
from palaestra.synth_apps.llm import LLMAuthor, LLMError
from palaestra.synth_apps.spec import SpecError
from tests.llm_stub import Stub

LIBRARY = """```yaml
name: library
title: City Library
entities:
  book:
    label: Book
    display: title
    fields:
      title: {type: str, faker: catch_phrase, unique: true}
      author: {type: str, faker: name}
      copies: {type: int, min: 1, max: 3}
    seed: {count: 30}
  loan:
    label: Loan
    display: reader
    fields:
      book: {type: ref, to: book}
      reader: {type: str}
pages:
  - {entity: book, label: Catalog, filters: [title], columns: [title, author, copies]}
operations:
  borrow:
    label: Borrow
    entity: book
    steps: [{title: Reader, inputs: {reader: {type: str, label: Your name}}}]
    rules: [{require: "record.copies > 0", message: None left.}]
    effects:
      - {create: loan, values: {book_id: record.id, reader: input.reader}}
      - {update: record, values: {copies: "record.copies - 1"}}
tasks:
  - kind: operation
    operation: borrow
    inputs: {reader: "fake('name')"}
    instruction: Borrow "{record.title}" for {input.reader}.
```"""


def reword_keeping(messages):
    user = messages[-1]["content"]
    if user.startswith("Reword: "):
        return "Please do this: " + user.split("\n")[0].removeprefix("Reword: ")
    return LIBRARY


@pytest.fixture
def stub():
    s = Stub(reword_keeping)
    yield s
    s.close()


def test_reworded_instructions_must_keep_every_value(stub):
    author = LLMAuthor(stub.url, key="k1")
    said = "Book 2 seats on IC 123 for Ann Lee."
    assert author.paraphrase(said, ["2", "IC 123", "Ann Lee"]) == f"Please do this: {said}"
    path, auth, body = stub.requests[-1]
    assert path == "/v1/chat/completions" and auth == "Bearer k1" and body["messages"]
    lossy = Stub(lambda m: "Book some seats for someone.")
    try:
        assert LLMAuthor(lossy.url).paraphrase(said, ["2", "IC 123", "Ann Lee"]) is None
    finally:
        lossy.close()


def test_proposed_specs_pass_the_schema_or_are_refused():
    replies = iter(["```yaml\nname: Bad Name\n```", LIBRARY])
    stub = Stub(lambda m: next(replies))
    try:
        spec = LLMAuthor(stub.url).propose_spec("a library")
        assert spec.name == "library"
        # the schema's complaint went back to the model with the second request
        assert "rejected" in stub.requests[1][2]["messages"][-1]["content"]
    finally:
        stub.close()
    bad = Stub(lambda m: "entities: nope")
    try:
        with pytest.raises(SpecError, match="rejected"):
            LLMAuthor(bad.url).propose_spec("a library")
    finally:
        bad.close()


def test_an_unreachable_endpoint_is_named():
    with pytest.raises(LLMError, match=r"http://127\.0\.0\.1:9/v1/chat/completions unreachable"):
        LLMAuthor("http://127.0.0.1:9/v1", timeout=2).chat("s", "u")


@pytest.mark.browser
@pytest.mark.timeout(600)
def test_cli_synthesizes_an_llm_proposed_app_with_reworded_tasks(stub, tmp_path):
    out = tmp_path / "suite"
    result = CliRunner().invoke(
        app,
        [
            "synth",
            "--llm-url",
            stub.url,
            "--llm-idea",
            "a small library",
            "--reword",
            "--variants",
            "1",
            "--tasks",
            "2",
            "--out",
            str(out),
            "--json-progress",
        ],
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.output.strip().splitlines()[-1])
    assert report["event"] == "report" and report["validated"] == 2 and report["reworded"] >= 2
    assert (out / "apps" / "library.yaml").exists()
    task = json.loads(next((out / "tasks").glob("*.json")).read_text())
    assert task["instruction"].startswith("Please do this: Borrow")
    assert re.search(r"library\.yaml$", task["setup"]["app"])
    assert task["validation"]["validated"]
