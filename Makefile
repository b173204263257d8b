# Two commands do everything on a fresh Debian/Ubuntu machine: `make demo` and `make test`.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
EXTRAS := dev,bench,eval,data,web,synth,usersim,mobile,cad,computer,ray,docker

.PHONY: setup demo serve test revalidate lint bench clean

setup: $(STAMP)

$(STAMP): pyproject.toml setup.py scripts/setup-system.sh scripts/setup-appium.sh scripts/setup-openenv.sh \
		scripts/setup-worker-venv.sh scripts/setup-tau2.sh scripts/setup-osworld.sh scripts/pinned-venv.sh \
		bench/browsergym_baseline.py
	bash scripts/setup-system.sh
	bash scripts/setup-appium.sh
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e ".[$(EXTRAS)]"
	PYTHON=$(PYTHON) bash scripts/setup-openenv.sh  # .venv-openenv: OpenEnv's own clients, tests/openenv
	PYTHON=$(PYTHON) bash scripts/setup-tau2.sh  # .venv-tau2: tau2-bench's deps, its cross-check
	PYTHON=$(PYTHON) bash scripts/setup-osworld.sh  # .venv-osworld: OSWorld's office metrics
	bash scripts/setup-worker-venv.sh  # .venv-worker: Debian's Python for unprivileged workers
	# .venv-browsergym: BrowserGym's own observation utilities (tests/envs/web), bench web's baseline
	$(PY) -c "from palaestra.bench.browsergym_baseline import ensure_browsergym_venv as e; e()"
	touch $(STAMP)

demo: setup
	$(PY) -m palaestra.demo

serve: setup
	$(VENV)/bin/palaestra serve

test: setup
	$(PY) -m pytest -q

# every shipped suite's recorded validation re-run with today's code (CI's own step: about
# half an hour of CPU, so not part of `make test`): CAD beside the desktop and tau2 suites, one
# core each, then the phone (its browsers want both cores: a starved oracle is no verdict)
RECORDED := computer-basic osworld-os tau2-retail tau2-telecom usersim
# the office suites: a spread sample of each app's record (a full office run is about two hours
# of LibreOffice episodes: docs/office.md); the stale-record tests cover every task and the code
OFFICE := office-calc office-writer office-impress
revalidate: setup
	$(VENV)/bin/palaestra validate cad-parts --against-record & cad=$$!; \
	for s in $(RECORDED); do $(VENV)/bin/palaestra validate $$s --against-record || fail=1; done; \
	for s in $(OFFICE); do \
		$(VENV)/bin/palaestra validate $$s --against-record --sample 4 || fail=1; done; \
	wait $$cad || fail=1; \
	$(VENV)/bin/palaestra validate phone --against-record || fail=1; \
	$(PY) -m palaestra.synthesis.androidworld --check 6 || fail=1; \
	$(PY) -m palaestra.synthesis.androidworld --web --check 4 || fail=1; exit $${fail:-0}

lint: setup
	bash scripts/lint.sh

bench: setup
	$(VENV)/bin/palaestra bench all

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .ruff_cache
