from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# worker processes inherit the import path and the plugin list, so they see the test envs too
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
os.environ["PALAESTRA_PLUGINS"] = "tests.plugins:register_test_envs"
os.environ.setdefault("PALAESTRA_HOME", str(ROOT / ".pytest_cache" / "palaestra-home"))

from palaestra.server.runner import gateway_thread  # noqa: E402
from palaestra.server.settings import Settings  # noqa: E402

BENCH_ENV = "palaestra-bench/Overhead-v0"
FAULTY_ENV = "palaestra-test/Faulty-v0"


@pytest.fixture(scope="session")
def runs_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("runs")


@pytest.fixture(scope="session")
def gateway(runs_dir: Path) -> Iterator[str]:
    """A real gateway (uvicorn on 127.0.0.1) with two real worker processes."""
    settings = Settings(workers=2, runs_dir=runs_dir, step_timeout_s=2.0, max_body_bytes=64_000)
    with gateway_thread(settings) as url:
        yield url
