"""A web process freezes its startup heap (trainer/wsgi.py), so full collections skip it."""

import gc

from trainer.startup import freeze_startup_heap


def test_the_startup_heap_is_frozen_with_every_view_imported():
    try:
        frozen = freeze_startup_heap()
        assert frozen == gc.get_freeze_count() > 10_000
        import sys

        assert "trainer.views.practice" in sys.modules and "trainer.interviews.views.room" in sys.modules
    finally:
        gc.unfreeze()
