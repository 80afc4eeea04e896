"""The suggester a process uses: loaded once, on first use, from ``SUGGESTER_MODEL_PATH`` (default the
model shipped in the repository, ``supervision/suggesting/model/suggester.json``).

A model file that fails its integrity checks is refused once per process with an error in the log; the
portal then works without suggestions (imports, pages, labels and audits are unaffected)."""

from __future__ import annotations

import logging
import threading
from pathlib import Path

from django.conf import settings

from .engine.features import session_inputs
from .engine.model import ModelRefused, SuggesterModel, load_model

DEFAULT_MODEL_PATH = Path(__file__).resolve().parent / "model" / "suggester.json"
logger = logging.getLogger(__name__)
_lock = threading.Lock()
_loaded: dict[Path, SuggesterModel | ModelRefused] = {}


def model_path() -> Path:
    return Path(getattr(settings, "SUGGESTER_MODEL_PATH", "") or DEFAULT_MODEL_PATH)


def current_model() -> SuggesterModel | None:
    """The loaded model, or ``None`` when its file was refused (the reason is logged once)."""
    path = model_path()
    found = _loaded.get(path)
    if found is None:
        with _lock:
            found = _loaded.get(path)
            if found is None:
                try:
                    found = load_model(path)
                except ModelRefused as refused:
                    logger.error("AI 라벨 제안을 끕니다: %s", refused)
                    found = refused
                _loaded[path] = found
    return found if isinstance(found, SuggesterModel) else None


def refusal() -> str | None:
    """Why the model was refused in this process, if it was."""
    current_model()
    found = _loaded.get(model_path())
    return str(found) if isinstance(found, ModelRefused) else None


def forget_loaded_models() -> None:
    """The next use loads the file again (after ``train_suggester`` wrote a new version, and in tests)."""
    with _lock:
        _loaded.clear()


def window_labeller(model: SuggesterModel | None = None):
    """For the trajectory audit of windows nobody labelled: §2 turn dicts → one list of suggested codes per
    turn, those the audit reads (``SuggesterModel.audit_label_sets``; ``None`` without a usable model: the
    audit then reads the text alone). A turn that comes back in several windows (windows cut with an overlap) is suggested
    once: the answer depends only on its speaker, stage, text, cues and the turns before it in its window.
    ``model``: another than the process's (the benchmarks' held-out models)."""
    model = model or current_model()
    if model is None:
        return None

    def labeller(windows: list[list[dict]]) -> list[list[list[str]]]:
        slot: dict[tuple, int] = {}
        where: list[list[int]] = []
        inputs, speakers = [], []
        for turns in windows:
            places = []
            # each turn with the turns before it in the window (the safety scorer reads the counselor's
            # question and the client's earlier words)
            read = session_inputs(
                ((t.get("text") or "", t.get("stage") or "", tuple(t.get("nonverbal") or ())) for t in turns),
                model.turns_before,
            )
            for t, turn in zip(turns, read, strict=True):
                speaker = t.get("speaker")
                key = (speaker, turn.stage, turn.text, turn.nonverbal, turn.previous, turn.context)
                at = slot.get(key)
                if at is None:
                    at = slot[key] = len(inputs)
                    inputs.append(turn)
                    speakers.append(speaker)
                places.append(at)
            where.append(places)
        found = model.audit_label_sets(inputs, speakers)
        return [[found[at] for at in places] for places in where]

    return labeller
