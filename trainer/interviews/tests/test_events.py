"""The interview record is append-only: no path updates or deletes an event."""

import pytest
from django.db import IntegrityError, transaction

from trainer.interviews import services
from trainer.interviews.models import AppendOnlyError, InterviewEvent


@pytest.fixture
def event(interview):
    return services.event_append(interview.id, InterviewEvent.Kind.NOTE, data={"text": "first"})


def test_appended_events_get_the_next_sequence(interview, event):
    second = services.event_append(interview.id, InterviewEvent.Kind.NOTE, data={"text": "second"})
    assert (event.sequence, second.sequence) == (2, 3)  # 1 is the creation


def test_saving_an_event_again_is_refused(event):
    event.data = {"text": "rewritten"}
    with pytest.raises(AppendOnlyError):
        event.save()
    assert InterviewEvent.objects.get(id=event.id).data == {"text": "first"}


def test_deleting_an_event_is_refused(event):
    with pytest.raises(AppendOnlyError):
        event.delete()
    assert InterviewEvent.objects.filter(id=event.id).exists()


@pytest.mark.parametrize("change", [
    lambda events: events.update(data={}),
    lambda events: events.delete(),
    lambda events: events.bulk_update(list(events), ["data"]),
    lambda events: events.update_or_create(id=1, defaults={"data": {}}),
])
def test_bulk_changes_are_refused(event, change):
    with pytest.raises(AppendOnlyError):
        change(InterviewEvent.objects.all())
    assert InterviewEvent.objects.get(id=event.id).data == {"text": "first"}


def test_a_sequence_number_cannot_be_taken_twice(interview, event):
    with pytest.raises(IntegrityError), transaction.atomic():
        InterviewEvent.objects.create(interview=interview, sequence=event.sequence, kind=InterviewEvent.Kind.NOTE)


def test_the_admin_offers_no_change_or_delete(rf, admin_user):
    from django.contrib.admin.sites import site

    model_admin = site._registry[InterviewEvent]
    request = rf.get("/")
    request.user = admin_user
    assert not model_admin.has_change_permission(request)
    assert not model_admin.has_delete_permission(request)
    assert not model_admin.has_add_permission(request)
