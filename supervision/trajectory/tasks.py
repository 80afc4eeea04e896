from celery import shared_task

from supervision.trajectory.services import trajectory_audit_sessions


@shared_task(name="supervision.audit_sessions", acks_late=True)
def audit_sessions(session_ids: list[int]) -> dict:
    """Audits the given sessions' trajectories (queued after an import commits)."""
    return trajectory_audit_sessions(session_ids=session_ids).as_dict()
