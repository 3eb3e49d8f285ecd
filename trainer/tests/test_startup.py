"""A web process freezes its startup heap (trainer/wsgi.py), so full collections skip it."""

import gc

from trainer.startup import freeze_startup_heap


def test_the_startup_heap_is_frozen_with_every_view_imported():
    try:
        frozen = freeze_startup_heap()
        # The count can only fall after the freeze (another thread of this test process,
        # a live server's or the sandbox pool's, may free an object that was frozen).
        assert frozen > 10_000 and 0 <= frozen - gc.get_freeze_count() < 1_000
        import sys

        assert "trainer.views.practice" in sys.modules and "trainer.interviews.views.room" in sys.modules
    finally:
        gc.unfreeze()
