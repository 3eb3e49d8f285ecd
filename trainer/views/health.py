from django.http import JsonResponse
from django.views.decorators.cache import never_cache

from trainer.health import check_broker, check_database


@never_cache
def healthz(request):
    problems = {"database": check_database(), "broker": check_broker()}
    body = {name: ("ok" if error is None else error) for name, error in problems.items()}
    healthy = all(error is None for error in problems.values())
    body["status"] = "ok" if healthy else "unavailable"
    return JsonResponse(body, status=200 if healthy else 503)


def ping(request):
    """Liveness without dependencies: the process is up and routing requests."""
    return JsonResponse({"status": "ok"})
