from celery import shared_task

from supervision.trajectory.services import trajectory_audit_sessions


@shared_task(name="supervision.audit_sessions", acks_late=True)
def audit_sessions(session_ids: list[int]) -> dict:
    """Audits the given sessions' trajectories (queued after an import commits)."""
    # in this process: a worker's task starts no processes of its own (the workers are the processes)
    return trajectory_audit_sessions(session_ids=session_ids, processes=1).as_dict()


def queue_session_audits(session_ids: list[int]) -> None:
    """Queues the audit of sessions whose turns or labels just changed (an import, a label edit); call it from
    ``transaction.on_commit``. A few seconds of work at most: with Redis down it runs here rather than being
    lost (the nightly review would catch it up too)."""
    from portal.queue import enqueue

    if session_ids:
        enqueue(audit_sessions, session_ids, in_process_if_down=True)
