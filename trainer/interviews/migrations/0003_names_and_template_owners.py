"""Candidates' emails, when the interviewer asks for one."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("interviews", "0002_code_run_runs_the_examples"),
    ]

    operations = [
        migrations.AddField(
            model_name="interview",
            name="email_required",
            field=models.BooleanField(default=False, help_text="The candidate must give an email address to join."),
        ),
        migrations.AddField(
            model_name="interview",
            name="candidate_email",
            field=models.EmailField(blank=True, help_text="The address the candidate gave when joining.",
                                    max_length=254),
        ),
    ]
