from django.conf import settings
from django.http import JsonResponse
from django.views.decorators.cache import never_cache

from grading.health import check_queue_consumed
from trainer.health import check_broker, check_database


@never_cache
def healthz(request):
    """The database, the broker, and whether the grading queue's workers consume work
    (their heartbeats, `grading.health`): 503 when any of them is down or late."""
    problems = {"database": check_database(), "broker": check_broker()}
    if problems["database"] is None:
        problems["workers"] = check_queue_consumed(settings.GRADING_QUEUE)
    else:
        problems["workers"] = "unknown: the database is down"
    body = {name: ("ok" if error is None else error) for name, error in problems.items()}
    healthy = all(error is None for error in problems.values())
    body["status"] = "ok" if healthy else "unavailable"
    return JsonResponse(body, status=200 if healthy else 503)


def ping(request):
    """Liveness without dependencies: the process is up and routing requests."""
    return JsonResponse({"status": "ok"})
