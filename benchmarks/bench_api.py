"""Session detail of a 500-turn session: API serialisation against a hand-built json.dumps, same run.

    DATABASE_URL=postgres://… .venv/bin/python benchmarks/bench_api.py [--turns 500] [--repeat 30]

Creates a throw-away test database (``test_<name>``), imports one synthetic session with labels and a
critique on every fourth turn, then times, as the median of ``--repeat`` runs:

- ``serialise``: ``SessionDetailSerializer(...).data`` + ``JSONRenderer`` on the prefetched session;
- ``baseline``:  the same JSON built by hand from the same prefetched objects, then ``json.dumps``;
- ``request``:   a whole ``GET /api/v1/sessions/{id}/`` through Django's test client (queries included).

Target: ``serialise`` under 100 ms for 500 turns.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "portal.settings")


def median_ms(fn, repeat: int) -> float:
    fn()  # warm-up
    timings = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        timings.append((time.perf_counter() - started) * 1000)
    return statistics.median(timings)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=500)
    parser.add_argument("--repeat", type=int, default=30)
    args = parser.parse_args()

    import django

    django.setup()
    from django.conf import settings
    from django.db import connection
    from django.test.utils import setup_test_environment

    setup_test_environment()
    settings.SECURE_SSL_REDIRECT = False
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    old_name = connection.settings_dict["NAME"]
    connection.creation.create_test_db(verbosity=0, autoclobber=True)
    try:
        run(args.turns, args.repeat)
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)


def run(turns: int, repeat: int) -> None:
    from django.test import Client
    from rest_framework.renderers import JSONRenderer

    from supervision import selectors
    from supervision.api.serializers import SessionDetailSerializer
    from supervision.importing.services import import_transcripts
    from supervision.people.services import portal_user_create_or_update
    from supervision.roles import Role
    from taxonomy.seeding import sync_catalogue

    sync_catalogue()
    supervisor = portal_user_create_or_update(username="bench_supervisor", role=Role.SUPERVISOR)
    portal_user_create_or_update(username="bench_trainee", role=Role.TRAINEE, supervisor_username="bench_supervisor")
    lines = []
    for seq in range(turns):
        counselor = seq % 2 == 0
        line = {
            "utterance_id": f"BENCH-{'C' if counselor else 'K'}-{seq // 2 + 1:03d}",
            "speaker": "counselor" if counselor else "client",
            "stage": "탐색",
            "seq": seq,
            "text": f"합성 발화 {seq} " + "그때 마음이 어떠셨는지 조금 더 이야기해 주시겠어요? " * 2,
            "techniques": ["reflection", "empathy"] if counselor else [],
            "client_states": [] if counselor else ["affect_contact"],
            "comments": (
                [{"kind": "critique", "text": "해석이 이릅니다.", "dimension": "시기", "severity": "minor"}]
                if seq % 4 == 0
                else []
            ),
            "nonverbal": ["(한숨)"] if seq % 3 == 0 else [],
            "source": "bench_synthetic",
            "dialog_act": "inform",
        }
        lines.append(line)
    report = import_transcripts(rows=enumerate(lines, start=1), trainee_username="bench_trainee")
    assert report.ok, report.errors[:3]

    session = selectors.session_detail(supervisor).get(code="BENCH")
    renderer = JSONRenderer()

    def serialise() -> bytes:
        return renderer.render(SessionDetailSerializer(session).data)

    def by_hand() -> str:
        data = {
            "id": session.id,
            "code": session.code,
            "title": session.title,
            "trainee": session.trainee_id,
            "trainee_username": session.trainee.username if session.trainee_id else None,
            "held_on": session.held_on.isoformat() if session.held_on else None,
            "source": session.source,
            "taxonomy_version": session.taxonomy_version,
            "turn_count": session.turn_count,
            "critique_count": session.critique_count,
            "turns": [
                {
                    "id": t.id,
                    "utterance_id": t.utterance_id,
                    "speaker": t.speaker,
                    "stage": t.stage_id,
                    "seq": t.seq,
                    "text": t.text,
                    "techniques": [link.label.code for link in t.technique_links.all()],
                    "client_states": [link.label.code for link in t.client_state_links.all()],
                    "nonverbal": t.nonverbal,
                    "dialog_act": t.dialog_act,
                    "source": session.source,
                    "session": session.code,
                    "comments": [
                        {
                            "id": c.id,
                            "kind": c.kind,
                            "text": c.text,
                            "author": c.author,
                            "intent_deviation": c.intent_deviation,
                            "written_by": c.written_by_id,
                            "is_suggestion": c.is_suggestion,
                        }
                        for c in t.comments.all()
                    ],
                }
                for t in session.turns.all()
            ],
        }
        return json.dumps(data, ensure_ascii=False)

    assert json.loads(serialise()) == json.loads(by_hand()), "the API and the baseline must produce the same JSON"

    client = Client()
    client.force_login(supervisor)
    url = f"/api/v1/sessions/{session.pk}/"

    def request() -> None:
        response = client.get(url)
        assert response.status_code == 200

    api_ms = median_ms(serialise, repeat)
    base_ms = median_ms(by_hand, repeat)
    request_ms = median_ms(request, max(5, repeat // 3))
    print(f"session detail, {turns} turns, {len(serialise()):,} bytes, median of {repeat}")
    print(f"  serialise (DRF serializer + JSONRenderer): {api_ms:8.2f} ms   target < 100 ms")
    print(f"  baseline  (hand-built dict + json.dumps):  {base_ms:8.2f} ms")
    print(f"  ratio serialise / baseline:                {api_ms / base_ms:8.2f}x")
    print(f"  whole GET request (5 queries + auth):      {request_ms:8.2f} ms")
    if os.environ.get("BENCH_QUERIES"):
        from django.db import connection
        from django.test.utils import CaptureQueriesContext

        with CaptureQueriesContext(connection) as captured:
            request()
        for query in captured.captured_queries:
            print(f"    {query['time']}s  {query['sql'][:150]}")


if __name__ == "__main__":
    main()
