from django.contrib.auth.models import User
from django.urls import reverse


def test_signup_creates_a_logged_in_candidate(client, db):
    response = client.post(
        reverse("signup"),
        {
            "username": "newbie",
            "email": "n@example.com",
            "password1": "kv-cache-is-2LHd",
            "password2": "kv-cache-is-2LHd",
        },
    )
    assert response.status_code == 302
    user = User.objects.get(username="newbie")
    assert list(user.groups.values_list("name", flat=True)) == ["candidate"]
    assert user.has_perm("grading.submit_attempt")
    assert not user.has_perm("grading.review_attempts")
    assert client.get(reverse("question-list")).status_code == 200


def test_signup_with_mismatched_passwords_shows_the_form_again(client, db):
    response = client.post(
        reverse("signup"),
        {"username": "newbie", "password1": "kv-cache-is-2LHd", "password2": "different-pass-1"},
    )
    assert response.status_code == 200
    assert not User.objects.filter(username="newbie").exists()
