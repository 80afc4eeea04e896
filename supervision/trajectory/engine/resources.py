"""Loads the data files once. All label codes, lexicon entries and numbers live in ../data."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from .lexicon import IntensifierRules, NegationRules, PhraseMatcher, fold_inflection

DATA_DIR = Path(__file__).resolve().parent.parent / "data"


@dataclass(frozen=True, slots=True)
class Effect:
    """One lexicon entry or client-state label's push on the clinical state."""

    valence: float
    arousal: float
    risk: float
    distortions: tuple[tuple[int, float], ...]  # (class index, weight)


@dataclass(frozen=True, slots=True)
class StanceCue:
    stance: str
    weight: float


@dataclass(frozen=True, slots=True)
class Resources:
    classes: tuple[str, ...]  # 10 distortions + none (last)
    severity: np.ndarray  # per class, none = 0
    severity_weights: tuple[float, ...]  # the same as plain floats (hot path)
    names_ko: Mapping[str, str]
    client_lexicon: PhraseMatcher[Effect]
    client_patterns: tuple[tuple[re.Pattern[str], Effect], ...]  # clause-level regex cues (endings, certainty)
    discourse_re: re.Pattern[str]  # sentence-initial fillers ("Okay.", "Yeah,") removed before scanning
    counselor_lexicon: PhraseMatcher[StanceCue]
    client_labels: Mapping[str, Effect]
    technique_stance: Mapping[str, str]
    stances: Mapping[str, Any]
    negated_valence_factor: float  # a negated negative cue ("not hopeless"): a small opposite push
    negated_positive_factor: float  # a negated positive cue ("not okay", "안 기대돼요"): close to its opposite
    model: Mapping[str, Any]
    texts: Mapping[str, Any]


def _read(name: str, data_dir: Path) -> dict[str, Any]:
    with open(data_dir / name, encoding="utf-8") as fh:
        return json.load(fh)


def _effect(spec: Mapping[str, Any], class_index: Mapping[str, int]) -> Effect:
    dist = tuple((class_index[k], float(w)) for k, w in spec.get("d", {}).items())
    return Effect(float(spec.get("v", 0.0)), float(spec.get("a", 0.0)), float(spec.get("r", 0.0)), dist)


def _phrases(spec: Mapping[str, Any]) -> list[str]:
    p = spec["p"]
    return [p] if isinstance(p, str) else list(p)


# Hangul syllables whose final consonant is ㄹ (할, 갈, 볼, 둘 ...): Korean volitional and future endings
# (-ㄹ게요, -ㄹ래요, -ㄹ 거예요) attach the ㄹ to the verb stem's last syllable, so a pattern can only see the
# ending through this class. Written in patterns as {RIEUL}.
_RIEUL = "[" + "".join(chr(0xAC00 + i) for i in range(8, 11172, 28)) + "]"


def _expand(pattern: str) -> str:
    return pattern.replace("{RIEUL}", _RIEUL)


def _english_stemmer(name: str | None) -> Callable[[str], str] | None:
    """The English token folding named by lexicon.json "en_stemmer" ("inflection": lexicon.fold_inflection),
    cached per token; None matches English entries on exact tokens. Bracketed non-verbal tokens "(sighs)" and
    apostrophe forms ("don't") are kept as written. (Porter2 from snowballstemmer was measured too: it folds
    derivations such as hopeful -> hope, thankful -> thank, and scored lower on the cross-validation.)"""
    if not name:
        return None
    if name != "inflection":
        raise ValueError(f"unknown en_stemmer {name!r}")
    cache: dict[str, str] = {}

    def stem(tok: str) -> str:
        out = cache.get(tok)
        if out is None:
            out = tok if (tok[0] == "(" or "'" in tok) else fold_inflection(tok)
            if len(cache) < 200_000:
                cache[tok] = out
        return out

    return stem


@lru_cache(maxsize=4)
def load_resources(data_dir: str | None = None) -> Resources:
    base = Path(data_dir) if data_dir else DATA_DIR
    lex, labels, model, texts = (
        _read(n, base) for n in ("lexicon.json", "labels.json", "model.json", "explanations.json")
    )
    classes = (*model["distortions"], model["none_class"])
    class_index = {c: i for i, c in enumerate(classes)}
    severity = np.array([float(model["severity"].get(c, 0.0)) for c in classes])

    neg = lex["negation"]
    negation = NegationRules(
        en_tokens=frozenset(neg["en_tokens"]),
        en_window=int(neg["en_window"]),
        ko_prefix=tuple(neg["ko_prefix"]),
        ko_suffix=re.compile(neg["ko_suffix_regex"]),
        ko_window=int(neg["ko_window"]),
        ko_absent=re.compile(neg["ko_absent_regex"]) if neg.get("ko_absent_regex") else None,
        en_transparent=frozenset(neg.get("en_transparent", ())),
    )
    ints = lex["intensifiers"]
    intens = IntensifierRules(ints["en"], ints["ko"], int(ints["en_window"]), int(ints["ko_window"]))

    stem = _english_stemmer(lex.get("en_stemmer"))
    client_entries = [(p, _effect(e, class_index)) for e in lex["client"] for p in _phrases(e)]
    counselor_entries = [
        (p, StanceCue(e["stance"], float(e.get("w", 1.0)))) for e in lex["counselor"] for p in _phrases(e)
    ]
    return Resources(
        classes=classes,
        severity=severity,
        severity_weights=tuple(float(x) for x in severity),
        names_ko=model["distortion_names_ko"],
        client_lexicon=PhraseMatcher(
            client_entries, negation, intens, absent_applies=lambda e: e.valence > 0.0, stem=stem
        ),
        client_patterns=tuple(
            (re.compile(_expand(e["re"])), _effect(e, class_index)) for e in lex.get("client_patterns", ())
        ),
        discourse_re=re.compile(lex.get("discourse_markers_regex", "(?!)")),
        counselor_lexicon=PhraseMatcher(counselor_entries, negation, intens, stem=stem),
        client_labels={k: _effect(v, class_index) for k, v in labels["client_states"].items()},
        technique_stance=dict(labels["techniques"]),
        stances=labels["stances"],
        negated_valence_factor=float(neg["negated_valence_factor"]),
        negated_positive_factor=float(neg.get("negated_positive_factor", neg["negated_valence_factor"])),
        model=model,
        texts=texts,
    )


ENGINE_RELEASE = "desg-1.2"  # 1.2: the verdict layer (layer.json) decides the label


@lru_cache(maxsize=4)
def engine_version(data_dir: str | None = None) -> str:
    """Release plus a digest of the rule files and the verdict layer, so stored audits show what produced them."""
    import hashlib

    base = Path(data_dir) if data_dir else DATA_DIR
    digest = hashlib.sha256()
    for name in ("lexicon.json", "labels.json", "model.json", "explanations.json", "layer.json"):
        if (base / name).exists():  # a folder without layer.json: the engine's thresholds decide
            digest.update((base / name).read_bytes())
    return f"{ENGINE_RELEASE}+{digest.hexdigest()[:10]}"
