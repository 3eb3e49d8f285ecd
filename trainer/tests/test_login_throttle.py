"""Login throttling (django-axes): failures are counted per account and per address,
either count at the limit locks, the lock lifts after the cool-off, and the locked page
says how long to wait."""

from datetime import timedelta

import pytest
from axes.models import AccessAttempt
from django.conf import settings

from conftest import PASSWORD

LOGIN_URL = "/accounts/login/"
LIMIT = settings.AXES_FAILURE_LIMIT
COOL_OFF_MINUTES = round(settings.AXES_COOLOFF_TIME.total_seconds() / 60)


@pytest.fixture(autouse=True)
def _fast_password_hashing(settings):
    """Each attempt checks a password: the default hasher's cost, dozens of times over,
    would only slow these tests down."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def attempt(client, username, password, address):
    return client.post(LOGIN_URL, {"username": username, "password": password}, REMOTE_ADDR=address)


def logged_in(client) -> bool:
    return "_auth_user_id" in client.session


def assert_locked(response):
    assert response.status_code == 429
    text = response.content.decode()
    assert 'id="login-locked"' in text
    assert f"Wait {COOL_OFF_MINUTES} minutes and try again" in text
    assert '<a class="brand"' in text  # the site's layout, not a bare message


def test_the_limit_is_a_small_number_and_the_lock_lifts_by_itself():
    assert 3 <= LIMIT <= 10
    assert timedelta(minutes=5) <= settings.AXES_COOLOFF_TIME <= timedelta(hours=1)


def test_forty_wrong_passwords_at_one_account_from_many_addresses_are_stopped(client, candidate, other_candidate):
    statuses = [attempt(client, candidate.username, f"wrong-{i}", f"10.0.{i}.1").status_code for i in range(40)]
    # The form answers each failure until the limit; from the attempt that reaches it on,
    # every one gets the lockout page, whatever the address.
    assert statuses == [200] * (LIMIT - 1) + [429] * (40 - LIMIT + 1)
    assert_locked(attempt(client, candidate.username, "wrong-again", "10.1.0.1"))

    # The right password is refused too while the account is locked.
    assert_locked(attempt(client, candidate.username, PASSWORD, "10.2.0.1"))
    assert not logged_in(client)

    # Another account from another address is not affected.
    response = attempt(client, other_candidate.username, PASSWORD, "192.0.2.7")
    assert response.status_code == 302 and logged_in(client)


def test_one_address_is_locked_across_usernames(client, candidate, other_candidate):
    address = "203.0.113.9"
    statuses = [attempt(client, f"guess{i}", "wrong", address).status_code for i in range(40)]
    assert statuses == [200] * (LIMIT - 1) + [429] * (40 - LIMIT + 1)

    # Even a real account with its right password is refused from that address...
    assert_locked(attempt(client, other_candidate.username, PASSWORD, address))
    assert not logged_in(client)
    # ...and is fine from anywhere else.
    assert attempt(client, candidate.username, PASSWORD, "198.51.100.3").status_code == 302
    assert logged_in(client)


def test_the_lock_lifts_after_the_cool_off(client, candidate):
    for i in range(LIMIT):
        attempt(client, candidate.username, "wrong", "10.3.0.1")
    assert_locked(attempt(client, candidate.username, PASSWORD, "10.3.0.1"))

    # Everything recorded is now older than the cool-off.
    AccessAttempt.objects.update(attempt_time=AccessAttempt.objects.first().attempt_time - settings.AXES_COOLOFF_TIME)
    assert attempt(client, candidate.username, PASSWORD, "10.3.0.1").status_code == 302
    assert logged_in(client)


def test_a_try_while_locked_restarts_the_wait(client, candidate):
    for _ in range(LIMIT):
        attempt(client, candidate.username, "wrong", "10.3.1.1")
    almost_over = AccessAttempt.objects.get().attempt_time - settings.AXES_COOLOFF_TIME + timedelta(minutes=1)
    AccessAttempt.objects.update(attempt_time=almost_over)
    assert_locked(attempt(client, candidate.username, PASSWORD, "10.3.1.1"))
    assert AccessAttempt.objects.get().attempt_time > almost_over + settings.AXES_COOLOFF_TIME - timedelta(minutes=2)


def test_a_success_forgives_the_accounts_failures(client, candidate):
    for _ in range(LIMIT - 1):
        attempt(client, candidate.username, "typo", "10.4.0.1")
    assert attempt(client, candidate.username, PASSWORD, "10.4.0.2").status_code == 302
    client.logout()
    # A fresh allowance: the earlier typos no longer count towards this account's limit.
    for _ in range(LIMIT - 1):
        assert attempt(client, candidate.username, "typo", "10.4.0.3").status_code == 200
    assert attempt(client, candidate.username, PASSWORD, "10.4.0.3").status_code == 302


def test_logging_into_ones_own_account_does_not_wipe_the_addresss_count(client, candidate):
    """axes' default reset on success would delete the address's failures too: an
    attacker could guess at other accounts and log into their own between guesses."""
    address = "203.0.113.50"
    for i in range(LIMIT - 1):
        assert attempt(client, f"victim{i}", "guess", address).status_code == 200
    assert attempt(client, candidate.username, PASSWORD, address).status_code == 302
    client.logout()
    assert_locked(attempt(client, "victim-next", "guess", address))


def test_the_admin_login_is_throttled_too(client, admin_user):
    for _ in range(LIMIT):
        response = client.post("/admin/login/", {"username": admin_user.username, "password": "wrong"},
                               REMOTE_ADDR="10.5.0.1")
    assert_locked(response)


def test_a_plain_visit_while_locked_still_shows_the_form(client, candidate):
    """Only an attempt is refused: the login page itself stays up."""
    for _ in range(LIMIT):
        attempt(client, candidate.username, "wrong", "10.6.0.1")
    response = client.get(LOGIN_URL, REMOTE_ADDR="10.6.0.1")
    assert response.status_code == 200 and 'name="password"' in response.content.decode()
