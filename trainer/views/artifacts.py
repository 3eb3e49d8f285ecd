"""A lab artifact as a file: what the download links of a lab question's data serve.

The views that decide who may download live beside the pages they belong to (practice's
in `practice.py`, the interview room's in `interviews/views/room.py`), each under its
page's rule; this is only the response they share.
"""

from django.http import HttpResponse
from django.utils.cache import patch_cache_control

from questions.labs import RenderedArtifact


def artifact_response(artifact: RenderedArtifact) -> HttpResponse:
    """The artifact's bytes, with its content type, as an attachment under its file name
    (a trace as `.json`, so it opens in Perfetto). Private: who may see it depends on
    the user."""
    response = HttpResponse(artifact.data, content_type=artifact.content_type)
    response["Content-Disposition"] = f'attachment; filename="{artifact.filename}"'
    patch_cache_control(response, private=True, max_age=0)
    return response
