"""What every office app's template tests assert alike (a helper module, not a test module):
enough templates with unique names, and per template, each seed making the same case twice
with phrasings that format and never name the template."""

from __future__ import annotations

from typing import Any

from palaestra.envs.computer.office.template import ArtifactError, Case, Template


def assert_enough_templates(templates: list[Template], app: str, at_least: int = 15) -> None:
    names = [t.name for t in templates]
    assert len(names) == len(set(names)) >= at_least
    assert sum(len(t.seeds) for t in templates) >= 3 * at_least
    assert all(t.app == app and t.name.startswith(f"{app}-") for t in templates)


def assert_stable_cases(template: Template) -> list[Case]:
    """Each seed's case made twice is the same, every phrasing formats with its params, and
    each seed has a document of its own; returns the cases."""
    assert len(set(template.phrasings)) >= 3
    cases, documents = [], set()
    for seed in template.seeds:
        case, again = template.make(seed), template.make(seed)
        same: list[Any] = [case.files, case.verifier, case.gui, case.code, case.params]
        assert same == [again.files, again.verifier, again.gui, again.code, again.params]
        assert case.open in case.files and case.gui
        documents.add(case.files[case.open])
        for phrasing in template.phrasings:
            text = phrasing.format(**case.params)
            assert "{" not in text and template.name not in text
        cases.append(case)
    assert len(documents) == len(template.seeds)
    return cases


def assert_failure_is_named(
    monkeypatch: Any, module: Any, builder: str, templates: list[Template], name: str, seed: int
) -> None:
    """With ``module.builder`` (a document generator) broken, making ``name`` at ``seed``
    raises an ArtifactError that names both."""
    import pytest

    def broken(seed: int) -> None:
        raise KeyError("no company")

    monkeypatch.setattr(module, builder, broken)
    with pytest.raises(ArtifactError, match=rf"'{name}' failed for seed {seed}: KeyError"):
        next(t for t in templates if t.name == name).make(seed)
