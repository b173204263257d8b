from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.evals.fake_openai import FakeOpenAI


@pytest.fixture(scope="session")
def fake_openai() -> Iterator[FakeOpenAI]:
    server = FakeOpenAI()
    yield server
    server.close()
