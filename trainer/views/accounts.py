from django.contrib.auth import login
from django.shortcuts import redirect, render

from trainer.forms import SignUpForm
from trainer.services import user_create


def signup(request):
    """Anyone may sign up; a new account is a candidate."""
    if request.user.is_authenticated:
        return redirect("question-list")
    form = SignUpForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        user = user_create(
            username=form.cleaned_data["username"],
            email=form.cleaned_data.get("email", ""),
            password=form.cleaned_data["password1"],
        )
        login(request, user, backend="django.contrib.auth.backends.ModelBackend")
        return redirect("question-list")
    return render(request, "registration/signup.html", {"form": form})
