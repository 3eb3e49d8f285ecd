"""Login throttling: the two pieces of django-axes this project specialises.

The counting itself is axes' (settings: AXES_*). Failures are counted per username and,
separately, per client address; either count at the limit locks the login.
"""

from axes.handlers.database import AxesDatabaseHandler
from axes.helpers import get_client_username, get_cool_off
from axes.models import AccessAttempt
from django.shortcuts import render

LOCKOUT_STATUS = 429  # Too Many Requests: the client is told to slow down, not that it is forbidden


class AccountResetHandler(AxesDatabaseHandler):
    """axes' database handler, except that a successful login forgives only the failures
    recorded against the account that logged in.

    axes' own reset deletes every attempt that matches any lockout parameter, the
    address's included: an attacker who owns one account could then guess at other
    accounts from one address and log into their own between guesses to wipe the
    address's count. Only someone who knows an account's password can clear its count.
    """

    def reset_user_attempts(self, request, credentials=None) -> int:
        username = get_client_username(request, credentials)
        if not username:
            return 0
        count, _ = AccessAttempt.objects.filter(username=username).delete()
        return count


def lockout_response(request, original_response=None, credentials=None):
    """The page a locked-out login gets (AXES_LOCKOUT_CALLABLE): the site's layout, how
    long to wait, HTTP 429."""
    cool_off = get_cool_off(request)
    minutes = max(1, round(cool_off.total_seconds() / 60)) if cool_off else None
    return render(request, "registration/locked_out.html", {"cool_off_minutes": minutes}, status=LOCKOUT_STATUS)
