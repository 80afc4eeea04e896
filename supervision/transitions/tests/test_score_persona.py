"""score_persona (CONTRACT §10): the figures, the validation of persona files, and that persona lines never
become transcripts."""

from __future__ import annotations

import io
import json
import random
from collections import Counter

import pytest
from django.core.management import call_command
from scipy.spatial.distance import jensenshannon

from supervision.models import Session, SupervisorComment, Turn
from supervision.transitions import counting
from supervision.transitions.models import PersonaRun
from supervision.transitions.tests.conftest import persona_lines


def run_command(*args) -> tuple[int, list[str], str]:
    out, err = io.StringIO(), io.StringIO()
    try:
        call_command("score_persona", *args, stdout=out, stderr=err)
        code = 0
    except SystemExit as exc:
        code = exc.code
    return code, out.getvalue().strip().splitlines(), err.getvalue()


def test_it_agrees_with_scipy_on_the_jensen_shannon_divergence():
    rng = random.Random(7)
    for _ in range(200):
        keys = [f"s{i}" for i in range(rng.randint(1, 8))]
        p = {k: rng.random() for k in rng.sample(keys, rng.randint(1, len(keys)))}
        q = {k: rng.random() for k in rng.sample(keys, rng.randint(1, len(keys)))}
        p = {k: v / sum(p.values()) for k, v in p.items()}
        q = {k: v / sum(q.values()) for k, v in q.items()}
        expected = jensenshannon([p.get(k, 0) for k in keys], [q.get(k, 0) for k in keys], base=2) ** 2
        assert counting.jsd(p, q) == pytest.approx(expected, abs=1e-12)
    assert counting.jsd({"a": 1.0}, {"b": 1.0}) == pytest.approx(1.0)
    assert counting.jsd({"a": 0.5, "b": 0.5}, {"b": 0.5, "a": 0.5}) == 0.0


def test_it_compares_contexts_with_enough_support_on_both_sides():
    golden = Counter(
        {
            ("defensive", "RELATIONAL", "defense_loosening"): 6,
            ("defensive", "RELATIONAL", "defensive"): 4,
            ("involuntary", "EXPLORATORY", "defensive"): 8,  # not in the persona: only in coverage's denominator
            ("conflicted", "RELATIONAL", "defensive"): 3,  # below K: in neither
            ("affect_contact", "RELATIONAL", "affect_contact"): 10,  # the persona's support is below K
        }
    )
    persona = Counter(
        {
            ("defensive", "RELATIONAL", "defense_loosening"): 5,
            ("defensive", "RELATIONAL", "affect_contact"): 5,
            ("conflicted", "RELATIONAL", "affect_contact"): 9,
            ("affect_contact", "RELATIONAL", "defensive"): 4,
        }
    )
    figures = counting.compare(golden, persona, min_support=5)
    expected_jsd = jensenshannon([0.6, 0.4, 0.0], [0.5, 0.0, 0.5], base=2) ** 2
    assert figures["contexts"] == 1
    assert figures["jsd"] == round(expected_jsd, 4)
    assert figures["coverage"] == round(10 / 28, 4)
    assert figures["compared"] == [
        {
            "state": "defensive",
            "move": "RELATIONAL",
            "golden_support": 10,
            "persona_support": 10,
            "jsd": round(expected_jsd, 4),
        }
    ]
    assert figures["unrealistic"] == [
        {"state": "defensive", "move": "RELATIONAL", "next": "affect_contact", "persona_p": 0.5}
    ]
    assert figures["missing"] == [{"state": "defensive", "move": "RELATIONAL", "next": "defensive", "golden_p": 0.4}]
    assert counting.compare(golden, Counter(), min_support=5)["jsd"] is None


def test_it_weights_the_mean_by_golden_support_and_orders_compared_by_jsd():
    golden = Counter({("a", "X", "n"): 30, ("b", "X", "n"): 5, ("b", "X", "m"): 5})
    persona = Counter({("a", "X", "n"): 5, ("b", "X", "m"): 5})
    figures = counting.compare(golden, persona, min_support=5)
    b = jensenshannon([0.5, 0.5], [0.0, 1.0], base=2) ** 2
    assert [row["state"] for row in figures["compared"]] == ["b", "a"]
    assert figures["jsd"] == round((0 * 30 + b * 10) / 40, 4)
    assert figures["coverage"] == 1.0


def test_it_orders_and_caps_the_unrealistic_and_missing_lists():
    golden, persona = Counter(), Counter()
    # Three contexts; the persona puts its mass on next states the golden sessions never show, and back.
    for state, shares in (("c", (4, 3, 3)), ("a", (5, 3, 2)), ("b", (2, 2, 2, 2, 2))):
        golden[(state, "X", "only_golden")] = 10
        for i, n in enumerate(shares):
            persona[(state, "X", f"n{i}")] = n
            golden[(state, "Y", f"g{i}")] = n
        persona[(state, "Y", "only_persona")] = 10
    figures = counting.compare(golden, persona, min_support=5)
    unrealistic = figures["unrealistic"]
    # 16 qualify: the three Y contexts' only_persona (1.0), then 0.5, 0.4, three of 0.3 and six of 0.2.
    assert [(u["state"], u["move"], u["next"], u["persona_p"]) for u in unrealistic] == [
        ("a", "Y", "only_persona", 1.0),
        ("b", "Y", "only_persona", 1.0),
        ("c", "Y", "only_persona", 1.0),
        ("a", "X", "n0", 0.5),
        ("c", "X", "n0", 0.4),
        ("a", "X", "n1", 0.3),
        ("c", "X", "n1", 0.3),
        ("c", "X", "n2", 0.3),
        ("a", "X", "n2", 0.2),
        ("b", "X", "n0", 0.2),
    ]
    missing = figures["missing"]
    assert [(m["state"], m["move"], m["next"], m["golden_p"]) for m in missing] == [
        ("a", "X", "only_golden", 1.0),
        ("b", "X", "only_golden", 1.0),
        ("c", "X", "only_golden", 1.0),
        ("a", "Y", "g0", 0.5),
        ("c", "Y", "g0", 0.4),
        ("a", "Y", "g1", 0.3),
        ("c", "Y", "g1", 0.3),
        ("c", "Y", "g2", 0.3),
        ("a", "Y", "g2", 0.2),
        ("b", "Y", "g0", 0.2),
    ]


def test_the_command_scores_a_persona_file_against_the_golden_sessions(hand_made, persona_file):
    path = persona_file(persona_lines("P01", [("K", ["defensive"]), ("C", ["empathy"]), ("K", ["defense_loosening"])]))
    code, out, err = run_command(str(path), "--rater", "persona-7", "--min-support", "1")
    assert code == 0, err
    figures = json.loads(out[-1])
    # Golden (defensive, RELATIONAL): defense_loosening 1, affect_contact 1; the persona: defense_loosening 1.
    expected = jensenshannon([0.5, 0.5], [1.0, 0.0], base=2) ** 2
    assert figures == {
        "rater": "persona-7",
        "by": "category",
        "min_support": 1,
        "contexts": 1,
        "jsd": round(expected, 4),
        "coverage": round(2 / 6, 4),
        "compared": [
            {
                "state": "defensive",
                "move": "RELATIONAL",
                "golden_support": 2,
                "persona_support": 1,
                "jsd": round(expected, 4),
            }
        ],
        "unrealistic": [],
        "missing": [{"state": "defensive", "move": "RELATIONAL", "next": "affect_contact", "golden_p": 0.5}],
    }
    assert PersonaRun.objects.count() == 0  # no --save
    code, out, _ = run_command(str(path), "--rater", "persona-7", "--min-support", "1", "--by", "technique", "--save")
    assert code == 0
    run = PersonaRun.objects.get()
    assert out[-2] == f"saved persona run {run.pk} (3 turns)"
    assert run.figures == json.loads(out[-1]) and run.by == "technique" and run.uploaded_from.startswith("command line")
    assert run.figures["compared"][0]["move"] == "empathy"
    # At the default K = 5 nothing is compared.
    code, out, _ = run_command(str(path), "--rater", "persona-7")
    assert json.loads(out[-1])["jsd"] is None and json.loads(out[-1])["coverage"] is None


def test_a_file_with_defects_names_every_one_exits_1_and_saves_nothing(hand_made, persona_file):
    good = persona_lines("P02", [("K", ["defensive"]), ("C", ["empathy"]), ("K", ["defense_loosening"])])
    lines = [
        good[0],
        {**good[1], "techniques": ["empathy", "공감하기x"]},  # row 2: unknown label, with the closest named
        {**good[2], "speaker": "counselor"},  # row 3: the letter K does not match the speaker
        "{not json",  # row 4
        {
            "utterance_id": "P03-K-001",
            "seq": 1,
            "speaker": "client",
            "client_states": ["defensive"],
        },  # row 5: seq 0 missing
        {
            "utterance_id": "P04-C-001",
            "seq": 0,
            "speaker": "counselor",
            "client_states": ["defensive"],
        },  # row 6: attach
        {"utterance_id": "P04-K-001", "seq": 1, "speaker": "client", "text": "010-1234-5678로 연락"},  # row 7: privacy
        {"utterance_id": "P02-K-001", "seq": 3, "speaker": "client"},  # row 8: duplicate id
        {"seq": 2, "speaker": "visitor"},  # row 9: no utterance id, unknown speaker
    ]
    path = persona_file(lines)
    sessions, turns = Session.objects.count(), Turn.objects.count()
    code, out, err = run_command(str(path), "--rater", "persona-bad", "--save")
    assert code == 1
    errors = json.loads(out[-1])["errors"]
    where = [(e["row"], e["column"]) for e in errors]
    for expected in [
        (2, "techniques"),
        (3, "utterance_id"),
        (4, "utterance_id"),
        (5, "seq"),
        (6, "client_states"),
        (7, "text"),
        (8, "utterance_id"),
        (9, "utterance_id"),
        (9, "speaker"),
    ]:
        assert expected in where, (expected, errors)
    assert where == sorted(where)
    assert "가장 가까운 라벨" in next(e["message"] for e in errors if e["row"] == 2)
    assert err.splitlines()[0].startswith("row 2, column techniques: ")
    assert len(err.strip().splitlines()) == len(errors)
    assert PersonaRun.objects.count() == 0
    assert (Session.objects.count(), Turn.objects.count()) == (sessions, turns)


def test_it_refuses_a_missing_file_and_a_bad_min_support(db, persona_file, tmp_path):
    code, out, err = run_command(str(tmp_path / "nothing.jsonl"), "--rater", "p")
    assert code == 1 and json.loads(out[-1])["errors"][0]["column"] == "file"
    path = persona_file(persona_lines("P05", [("K", ["defensive"])]))
    code, out, _ = run_command(str(path), "--rater", "p", "--min-support", "0")
    assert code == 1 and json.loads(out[-1])["errors"][0]["column"] == "min_support"
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    code, out, err = run_command(str(empty), "--rater", "p")
    assert code == 1 and err.startswith("row 0, column file: ")


def test_persona_lines_never_become_transcripts(hand_made, persona_file, cast, client, tmp_path):
    """A saved persona run leaves the sessions list, the golden export, the gauge and the safety events as
    they were: even a simulated suicide disclosure."""
    spec = [("K", ["suicidal_ideation_admit"]), ("C", ["empathy"]), ("K", ["self_harm_disclosure"])]
    path = persona_file(persona_lines("PX01", spec))
    before = (Session.objects.count(), Turn.objects.count(), SupervisorComment.objects.count())
    assert run_command(str(path), "--rater", "persona-x", "--save", "--min-support", "1")[0] == 0
    assert (Session.objects.count(), Turn.objects.count(), SupervisorComment.objects.count()) == before
    call_command("export_golden", "--output", str(tmp_path / "golden.jsonl"))
    exported = (tmp_path / "golden.jsonl").read_text(encoding="utf-8")
    assert "PX01" not in exported and "TA01" in exported
    client.force_login(cast.staff)
    sessions = client.get("/api/v1/sessions/").json()
    assert "PX01" not in json.dumps(sessions) and sessions["count"] == 2
    events = client.get("/api/v1/safety-events/").json()
    assert events["count"] == 0
    gauge = io.StringIO()
    call_command("compute_gauges", stdout=gauge)
    assert json.loads(gauge.getvalue().strip().splitlines()[-1])["turns"] == Turn.objects.count()


def test_the_quick_path_reads_a_file_as_the_field_by_field_path_does(db, taxonomy_tables, monkeypatch):
    import random

    from supervision.transitions import reading
    from supervision.transitions.tests.test_counting_sql import random_spec

    rng = random.Random(5)
    lines = [line for i in range(20) for line in persona_lines(f"QP{i:02d}", random_spec(rng, 30))]
    lines[40] = {**lines[40], "session": "QP01 "}  # read as QP01 (the value is stripped)
    # The same id again with a newline ("$" matches before one): stripped, a duplicate of row 8.
    lines.append({**lines[7], "utterance_id": lines[7]["utterance_id"] + "\n"})
    quick = reading.read_persona_rows(enumerate(lines, start=1))
    monkeypatch.setattr(reading._LineReader, "quick", lambda self, raw: None)
    slow = reading.read_persona_rows(enumerate(lines, start=1))
    assert quick.errors == slow.errors and quick.sessions == slow.sessions
    assert [(e.row, e.column) for e in quick.errors] == [(601, "utterance_id")]
