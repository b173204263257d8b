from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# worker processes inherit the import path and the plugin list, so they see the test envs too
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
# the benchmark fixtures (palaestra-bench/Overhead-v0 and its counting suite) are named here too:
# the kernel does not load them (palaestra.bench.fixtures.use_fixtures)
os.environ["PALAESTRA_PLUGINS"] = (
    "tests.plugins:FAMILY,tests.plugins:register_web_test_suite,"
    "palaestra.bench.fixtures:register_fixtures"
)
os.environ.setdefault("PALAESTRA_HOME", str(ROOT / ".pytest_cache" / "palaestra-home"))


def _test_site() -> str:
    """A copy of the web test site plus ``slow.js``, a FIFO that no one writes: a resource
    that never finishes loading."""
    site = Path(tempfile.mkdtemp(prefix="palaestra-site-"))
    shutil.copytree(ROOT / "tests" / "envs" / "web" / "site", site, dirs_exist_ok=True)
    os.mkfifo(site / "slow.js")
    return str(site)


os.environ["PALAESTRA_TEST_SITE"] = _test_site()

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
    settings = Settings(workers=2, runs_dir=runs_dir, step_timeout_s=30.0, max_body_bytes=64_000)
    with gateway_thread(settings) as url:
        yield url
