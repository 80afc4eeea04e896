# `make run` (embedded SQLite unless DATABASE_URL) and `make test` (PostgreSQL + Redis), see README.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
STAMP := $(VENV)/.installed
DEV_STAMP := $(VENV)/.installed-dev

TEST_DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/portal
TEST_REDIS_URL ?= redis://127.0.0.1:6379/0
BENCH_DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/portal_bench

.PHONY: run test lint format bench-golden bench-import bench-gauge bench-audit fit-audit-layer bench-api bench-pages bench-agreement bench-transitions bench-suggester bench-suggester-audit bench-held-out bench-load profile-pages bench-scale bench-scale-import bench-scale-night

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip

$(STAMP): requirements.txt | $(PY)
	$(PIP) install --quiet -r requirements.txt
	touch $@

$(DEV_STAMP): requirements.txt requirements-dev.txt | $(PY)
	$(PIP) install --quiet -r requirements.txt -r requirements-dev.txt
	touch $(STAMP) $@

run: $(STAMP)
	mkdir -p var
	DJANGO_DEBUG=$${DJANGO_DEBUG:-1} $(PY) manage.py migrate --noinput
	DJANGO_DEBUG=$${DJANGO_DEBUG:-1} $(PY) manage.py load_demo
	DJANGO_DEBUG=$${DJANGO_DEBUG:-1} $(PY) manage.py runserver 127.0.0.1:8000

# The suite runs on TEST_WORKERS processes (pytest-xdist). Tests go out in collection order, where
# pytest-django puts the transactional ones (which empty the database, seeded catalogue included) last, so each
# worker meets them after its other tests, as one process does (--dist loadfile did not: a file's
# transactional tests emptied a worker's database before other files' tests). pytest-django gives each its own
# test database (test_<name>_gw0, _gw1, …) and portal/pytest_worker_env.py its own Redis database (1, 2, … on
# REDIS_URL's server). TEST_WORKERS=0: one process, on REDIS_URL itself.
TEST_WORKERS ?= 2
test: $(DEV_STAMP)
	DATABASE_URL=$${DATABASE_URL:-$(TEST_DATABASE_URL)} REDIS_URL=$${REDIS_URL:-$(TEST_REDIS_URL)} \
		$(PY) -m pytest $(if $(filter-out 0,$(TEST_WORKERS)),-n $(TEST_WORKERS))

lint: $(DEV_STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

format: $(DEV_STAMP)
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

# Benchmarks: outside the test suite, in their own database (created on first use, never a test database),
# each printing its figures against a baseline measured in the same run.
bench-golden: $(DEV_STAMP)
	DATABASE_URL=$${DATABASE_URL:-$(BENCH_DATABASE_URL)} $(PY) benchmarks/bench_import_golden.py

# 100,000-turn csv and xlsx imports against a raw COPY of the same rows.
bench-import: $(STAMP)
	DATABASE_URL=$${DATABASE_URL:-$(BENCH_DATABASE_URL)} $(PY) benchmarks/bench_import.py $(BENCH_ARGS)

# import_transcripts (the command, end to end) on 100,000- and 500,000-row CSVs against both COPY floors, with
# peak RSS. Sizes: make bench-scale-import SIZES=100000 (default both). Follow-up jobs are queued to REDIS_URL.
bench-scale-import: $(STAMP)
	DATABASE_URL=$${DATABASE_URL:-$(BENCH_DATABASE_URL)} REDIS_URL=$${REDIS_URL:-$(TEST_REDIS_URL)} \
		$(PY) benchmarks/bench_scale_import.py --sizes $${SIZES:-100000,500000}

# Session detail of a 500-turn session through the API serialiser.
bench-api: $(DEV_STAMP)
	DATABASE_URL=$${DATABASE_URL:-$(BENCH_DATABASE_URL)} REDIS_URL=$${REDIS_URL:-$(TEST_REDIS_URL)} \
		$(PY) benchmarks/bench_api.py

# 500-turn trainee session page: constant queries and server time under 300 ms.
bench-pages: $(DEV_STAMP)
	DATABASE_URL=$${DATABASE_URL:-$(BENCH_DATABASE_URL)} $(PY) benchmarks/bench_pages.py

# gunicorn (2 workers, DJANGO_DEBUG=0) under 8 then 32 logged-in trainees for 60 s each, vs the log-in page.
bench-load: $(DEV_STAMP)
	DATABASE_URL=$${DATABASE_URL:-$(BENCH_DATABASE_URL)} $(PY) benchmarks/bench_load.py

# Where the trainee pages' time goes (in-process, cProfile): built from the database and kept in the cache.
profile-pages: $(DEV_STAMP)
	DATABASE_URL=$${DATABASE_URL:-$(BENCH_DATABASE_URL)} REDIS_URL=$${REDIS_URL:-$(TEST_REDIS_URL)} \
		$(PY) benchmarks/profile_trainee_pages.py

# Review gauge over 1,000,000 generated turns vs one hand-written GROUP BY (database: DATABASE_URL name + _bench).
bench-gauge: $(STAMP)
	DATABASE_URL=$${DATABASE_URL:-$(BENCH_DATABASE_URL)} $(PY) benchmarks/bench_gauge.py

# Trajectory audit: accuracy (benchmarks/trajectory/: development, blind and generated window files), ablations, throughput.
bench-audit: $(STAMP)
	$(PY) benchmarks/bench_audit.py

# The trajectory audit's verdict layer: leave-one-file-out figures, blind-3; FIT_ARGS=--write refits data/layer.json.
fit-audit-layer: $(STAMP)
	$(PY) benchmarks/fit_audit_layer.py $(FIT_ARGS)

# Agreement: scoring a 100,000-turn annotation run vs json.loads of the file + one SQL read of the golden labels.
bench-agreement: $(STAMP)
	DATABASE_URL=$${DATABASE_URL:-$(BENCH_DATABASE_URL)} $(PY) benchmarks/bench_agreement.py

# Transitions (CONTRACT §10): the table over 500,000 golden turns vs one hand-written GROUP BY of the same triples;
# scoring a 100,000-turn persona file (turns/s).
bench-transitions: $(STAMP)
	DATABASE_URL=$${DATABASE_URL:-$(BENCH_DATABASE_URL)} $(PY) benchmarks/bench_transitions.py

# Label suggester (CONTRACT §9): import slowdown with/without it, suggest_labels --input turns/s, the shipped model
# on the audit's blind windows, cross-validated figures over data/suggester/ (BENCH_ARGS="--folds 0": one session out).
bench-suggester: $(STAMP)
	DATABASE_URL=$${DATABASE_URL:-$(BENCH_DATABASE_URL)} $(PY) benchmarks/bench_suggester.py $(BENCH_ARGS)

# The audit of unlabelled windows on suggestions, each window file held out of the model that suggests it
bench-suggester-audit: $(STAMP)
	$(PY) benchmarks/suggester_audit.py $(BENCH_ARGS)

# The shipped suggester and audit_trajectories --input on benchmarks/held_out/ (window files nothing learnt from)
bench-held-out: $(STAMP)
	DATABASE_URL=$${DATABASE_URL:-$(BENCH_DATABASE_URL)} $(PY) benchmarks/held_out.py $(BENCH_ARGS)

# The whole nightly job over 500,000 realistic turns (1,000 sessions), step by step: first night, a quiet night, an
# ordinary night after 2 % of the sessions were re-imported, against one GROUP BY; then audit_trajectories --input
# on 6,000 ten-turn windows. Sizes: BENCH_ARGS="--sessions 200 --turns-per-session 500".
bench-scale-night: $(STAMP)
	DATABASE_URL=$${BENCH_DATABASE_URL:-$(BENCH_DATABASE_URL)} $(PY) benchmarks/bench_scale_night.py $(BENCH_ARGS)

# Issue 19's whole picture in one run: the imports against both COPY floors, then the nights and the audit command.
bench-scale: bench-scale-import bench-scale-night
