"""``train_suggester [--output PATH]`` (CONTRACT §9): trains the suggester on the labels curated in the
portal and the repository's training set, writes the model file as ``portal-suggester-<n+1>``, and prints as
its last stdout line the §7-shaped summary of a leave-one-session-out evaluation over the portal's golden
sessions: each session suggested by a model trained, thresholds included, without it.

More than ``--folds`` (default 12) golden sessions are left out in that many groups of whole sessions
instead of one by one (the summary says how many folds). With no curated session in the portal the
evaluation runs the same way over the repository's sessions and says so (``"evaluated_on"``).
"""

import contextlib
import json
from datetime import UTC, datetime
from pathlib import Path

from django.conf import settings as settings_module
from django.core.management.base import BaseCommand

from supervision.agreement.models import AnnotationRun, RaterKind
from supervision.suggesting.engine import corpus
from supervision.suggesting.engine.evaluation import false_alarms, figures, held_out_suggestions, session_folds
from supervision.suggesting.engine.model import ModelRefused, load_model, save_model, version_number
from supervision.suggesting.engine.training import Settings, arrays_of, axes_meta, fit, safety_meta
from supervision.suggesting.loading import DEFAULT_MODEL_PATH, forget_loaded_models, model_path
from supervision.suggesting.training_data import (
    REPOSITORY_TRAINING_SET,
    default_sources,
    portal_turns,
    repository_turns,
)
from taxonomy import catalogue


class Command(BaseCommand):
    help = "Train the label suggester (writes portal-suggester-<n+1>) and print its leave-one-session-out figures."

    def add_arguments(self, parser):
        parser.add_argument("--output", help="model file (JSON; the weights go beside it as .npz)")
        parser.add_argument(
            "--data",
            action="append",
            default=None,
            help=f"training-set folder or file, repeatable (default {REPOSITORY_TRAINING_SET} and the audit's windows)",
        )
        parser.add_argument("--folds", type=int, default=12, help="at most this many evaluation folds")
        parser.add_argument(
            "--jobs", type=int, default=1, help="evaluation folds fitted at once, in worker processes (default 1)"
        )

    def handle(self, *args, output=None, data=None, folds=12, jobs=1, **options):
        output = Path(output) if output else model_path()
        portal = portal_turns()
        folders = [Path(d) for d in data] if data else default_sources()
        repository = repository_turns(folders, except_sessions={t.session for t in portal})
        everything = portal + repository
        if not everything:
            self.stderr.write("row 0, column file: 학습할 라벨이 없습니다(포털의 골든 회기도, 학습 세트도 비어 있음).")
            raise SystemExit(1)
        codes = {"techniques": catalogue.TECHNIQUE_CODES, "client_states": catalogue.CLIENT_STATE_CODES}
        safety = catalogue.SAFETY_CRITICAL_STATES
        settings = Settings()
        version = f"portal-suggester-{self._next_number(output)}"

        evaluated, extra, where = (portal, repository, "portal") if portal else (repository, [], "repository")
        sessions = sorted({t.session for t in evaluated})
        groups = [{s} for s in sessions] if len(sessions) <= folds else session_folds(evaluated, max(folds, 2))
        predicted = held_out_suggestions(
            evaluated,
            extra,
            groups,
            label_codes=codes,
            safety=safety,
            settings=settings,
            progress=lambda n, total: self.stderr.write(f"fold {n}/{total}"),
            jobs=jobs,
        )
        summary = figures(evaluated, predicted, rater=version)
        summary.update(
            {
                "evaluation": "leave-one-session-out"
                if len(groups) == len(sessions)
                else f"{len(groups)} session folds",
                "evaluated_on": where,
                "sessions": len(sessions),
                "folds": len(groups),
                "safety_false_alarms": false_alarms(evaluated, predicted, safety),
            }
        )

        fitted = fit(everything, label_codes=codes, safety=safety, settings=settings)
        meta = {
            "model_version": version,
            "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "taxonomy_version": catalogue.TAXONOMY_VERSION,
            "training_data_sha256": corpus.digest(everything),
            "training": {
                "turns": len(everything),
                "sessions": len({t.session for t in everything}),
                "portal_sessions": len({t.session for t in portal}),
                "repository_sources": [
                    str(f.relative_to(settings_module.BASE_DIR))
                    if f.is_relative_to(settings_module.BASE_DIR)
                    else str(f)
                    for f in folders
                ],
            },
            "settings": {
                "max_features": settings.max_features,
                "c": settings.c,
                "inner_folds": settings.inner_folds,
                "safety_max_features": settings.safety_max_features,
                "safety_c_grid": list(settings.safety_c_grid),
                "safety_max_false_alarm_rate": settings.safety_max_false_alarm_rate,
            },
            "features": settings.spec.as_dict(),
            "axes": axes_meta(fitted),
            **safety_meta(fitted),
            "evaluation": summary,
        }
        # float16 weights: half the file (portal-suggester-2 was stored so too); inference reads them as float32
        save_model(output, meta=meta, arrays=arrays_of(fitted, half=True))
        forget_loaded_models()
        self.stderr.write(f"{version} → {output}")
        self.stdout.write(json.dumps(summary, ensure_ascii=False))

    @staticmethod
    def _next_number(output: Path) -> int:
        """One past the newest version anywhere: the file being replaced, the model in use, the one shipped in
        the repository and the runs the portal keeps."""
        numbers = [
            version_number(r) for r in AnnotationRun.objects.filter(kind=RaterKind.AI).values_list("rater", flat=True)
        ]
        for path in {output, model_path(), DEFAULT_MODEL_PATH}:
            with contextlib.suppress(ModelRefused):
                numbers.append(load_model(path).number)
        return max(numbers, default=0) + 1
