from django.contrib.auth.forms import UserCreationForm
from django.contrib.auth.models import User


class SignUpForm(UserCreationForm):
    class Meta:
        model = User
        fields = ("username", "email")


def posted_answer(data) -> str:
    """The answer a part's form posted (``request.POST``), as the one text the engine
    reads: a text field posts one ``answer`` value, taken as it is; a form of checkboxes
    posts one per ticked box, joined with commas (``"a, c"``); none posts ``""``."""
    return ", ".join(data.getlist("answer"))


def posted_scratchpad(data) -> str:
    """The working a numeric part's form posted beside its answer (``""`` if none)."""
    return data.get("scratchpad", "") or ""
