"""The figures are exactly those the portal computed with scikit-learn and the ``krippendorff`` package
(``oracle_scoring``, the old code kept verbatim for this test), float for float: on varied random fixtures,
rounded as the contract says and unrounded (every float before rounding, bit for bit)."""

from __future__ import annotations

import math
import random

import pytest

from supervision.agreement import scoring
from supervision.agreement.scoring import AXES, MULTI_LABEL_AXES, NO_ACT, Ratings
from taxonomy import catalogue

from . import oracle_scoring

TECHNIQUES = list(catalogue.TECHNIQUE_CODES)
STATES = list(catalogue.CLIENT_STATE_CODES)
SAFETY = sorted(catalogue.SAFETY_CRITICAL_STATES)
STAGES = list(catalogue.STAGE_CODES)
ACTS = [*catalogue.DIALOG_ACT_CODES, NO_ACT]


def _pool(rng: random.Random, codes: list[str], unknown: str) -> list[str]:
    """A label pool of one fixture: few or many labels, now and then a code outside the taxonomy (the
    figures put those last)."""
    shape = rng.choice(["one", "few", "many", "all"])
    size = {"one": 1, "few": rng.randint(2, 4), "many": rng.randint(5, 12), "all": len(codes)}[shape]
    pool = rng.sample(codes, min(size, len(codes)))
    if rng.random() < 0.15:
        pool.append(unknown)
    return pool


def _golden(rng: random.Random, turns: int) -> tuple[Ratings, dict, dict, dict]:
    techniques = _pool(rng, TECHNIQUES, "zz_unknown_technique")
    states = _pool(rng, STATES, "zz_unknown_state") + rng.sample(SAFETY, rng.randint(0, len(SAFETY)))
    stages = rng.sample(STAGES, rng.randint(1, len(STAGES)))
    acts = rng.sample(ACTS, rng.randint(1, len(ACTS)))
    heavy = rng.random() < 0.3  # many labels per turn
    reference = Ratings()
    names, order, pools = (
        {},
        {},
        {"techniques": techniques, "client_states": states, "stage": stages, "dialog_act": acts},
    )
    for turn in rng.sample(range(1, 10 * turns), turns):  # ids out of transcript order
        counselor = rng.random() < 0.5
        axis, pool = ("techniques", techniques) if counselor else ("client_states", states)
        reference.axis(axis)[turn] = frozenset(rng.sample(pool, rng.randint(0, min(len(pool), 4 if heavy else 2))))
        reference.stage[turn] = rng.choice(stages)
        reference.dialog_act[turn] = rng.choice(acts)
        session = rng.randint(1, 5)
        names[turn] = f"FX{session:03d}-{'C' if counselor else 'K'}-{turn:05d}"
        order[turn] = (f"FX{session:03d}", turn % 97)
    return reference, names, order, pools


def _rater(rng: random.Random, reference: Ratings, pools: dict, *, skips: bool = True) -> Ratings:
    """A rater that agrees with the reference at a rate of its own, skips some turns per axis (unless
    ``skips`` is false), and may use labels the reference never used."""
    agree, skip = rng.choice([0.0, 0.5, 0.8, 0.95, 1.0]), rng.choice([0.0, 0.0, 0.1, 0.5]) if skips else 0.0
    extra = {
        axis: pools[axis] + rng.sample(TECHNIQUES if axis == "techniques" else STATES, 2) for axis in MULTI_LABEL_AXES
    }
    rater = Ratings()
    for axis in AXES:
        for turn, value in reference.axis(axis).items():
            if rng.random() < skip:
                continue
            if rng.random() < agree:
                rater.axis(axis)[turn] = value
            elif axis in MULTI_LABEL_AXES:
                pool = extra[axis]
                rater.axis(axis)[turn] = frozenset(rng.sample(pool, rng.randint(0, min(len(pool), 3))))
            else:
                rater.axis(axis)[turn] = rng.choice(pools[axis] + [rng.choice(STAGES if axis == "stage" else ACTS)])
    return rater


def _unrounded(value):
    return None if value is None or (isinstance(value, float) and math.isnan(value)) else float(value)


@pytest.fixture(params=["rounded", "unrounded"])
def rounding(request, monkeypatch):
    if request.param == "unrounded":
        monkeypatch.setattr(scoring, "_round", _unrounded)
        monkeypatch.setattr(oracle_scoring, "_round", _unrounded)
    return request.param


def _same(new, old, where="") -> None:
    """Equal, and every float the same double (``==`` alone would let 0.0 pass for an int 0)."""
    assert type(new) is type(old), f"{where}: {type(new).__name__} {new!r} != {type(old).__name__} {old!r}"
    if isinstance(old, dict):
        assert list(new) == list(old), f"{where}: keys {list(new)} != {list(old)}"
        for key in old:
            _same(new[key], old[key], f"{where}.{key}")
    elif isinstance(old, list):
        assert len(new) == len(old), where
        for i, (a, b) in enumerate(zip(new, old, strict=True)):
            _same(a, b, f"{where}[{i}]")
    elif isinstance(old, float):
        assert new.hex() == old.hex(), f"{where}: {new!r} != {old!r}"
    else:
        assert new == old, f"{where}: {new!r} != {old!r}"


@pytest.mark.parametrize("seed", range(40))
def test_agreement_figures_equal_the_scikit_learn_ones(seed, rounding):
    rng = random.Random(seed)
    reference, names, order, pools = _golden(rng, rng.choice([3, 40, 300, 700]))
    rater = _rater(rng, reference, pools)
    expected = oracle_scoring.agreement(reference, rater, names=names, order=order)
    _same(scoring.agreement(reference, rater, names=names, order=order), expected, "figures")


@pytest.mark.parametrize("seed", range(30))
def test_alpha_equals_the_krippendorff_packages(seed, rounding):
    rng = random.Random(1000 + seed)
    reference, _names, _order, pools = _golden(rng, rng.choice([5, 60, 400, 900]))
    # 2–6 sources, each skipping turns of its own: units rated by 2 (left out), 3, 4, 5 sources, so the
    # coincidences are divided by 2, 3 and 4 (sums that round differently in another order).
    sources = [reference] + [_rater(rng, reference, pools) for _ in range(rng.randint(1, 5))]
    for axis in AXES:
        expected = oracle_scoring.krippendorff_alpha(sources, axis)
        _same(scoring.krippendorff_alpha(sources, axis), expected, f"alpha.{axis}")


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("raters", [2, 4])
def test_alpha_equals_the_packages_when_every_source_rates_every_turn(seed, raters, rounding):
    """Three (or five) sources on every turn divide every coincidence by a power of two (2, 4): the sums are
    exact and scoring counts them in integers; the package adds them one by one."""
    rng = random.Random(2000 + seed)
    reference, _names, _order, pools = _golden(rng, 900)
    sources = [reference] + [_rater(rng, reference, pools, skips=False) for _ in range(raters)]
    for axis in AXES:
        expected = oracle_scoring.krippendorff_alpha(sources, axis)
        _same(scoring.krippendorff_alpha(sources, axis), expected, f"alpha.{axis}")


def test_the_fixtures_reach_the_cases_that_matter():
    """The random fixtures do reach what the equality must hold for: undefined κ, an axis with no or one
    label, labels outside the taxonomy, missed safety states, and α both defined and undefined."""
    seen = set()
    for seed in range(40):
        rng = random.Random(seed)
        reference, names, order, pools = _golden(rng, rng.choice([3, 40, 300, 700]))
        figures = oracle_scoring.agreement(reference, _rater(rng, reference, pools), names=names, order=order)
        for axis in MULTI_LABEL_AXES:
            labels = figures["axes"][axis]["labels"]
            seen |= {"one label"} if len(labels) == 1 else set()
            seen |= {"unknown label"} if any(code.startswith("zz_") for code in labels) else set()
            seen |= {"undefined label kappa"} if any(f["kappa"] is None for f in labels.values()) else set()
        seen |= {"undefined kappa"} if figures["axes"]["stage"]["kappa"] is None else set()
        seen |= {"missed safety"} if figures["safety"]["missed"] else set()
    for seed in range(30):
        rng = random.Random(1000 + seed)
        reference, _names, _order, pools = _golden(rng, rng.choice([5, 60, 400, 900]))
        sources = [reference] + [_rater(rng, reference, pools) for _ in range(rng.randint(1, 5))]
        alphas = [oracle_scoring.krippendorff_alpha(sources, axis)["alpha"] for axis in AXES]
        seen |= {"alpha"} if any(a is not None for a in alphas) else set()
        seen |= {"no alpha"} if any(a is None for a in alphas) else set()
    assert seen == {
        "one label",
        "unknown label",
        "undefined label kappa",
        "undefined kappa",
        "missed safety",
        "alpha",
        "no alpha",
    }
