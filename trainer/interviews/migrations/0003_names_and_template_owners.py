"""Candidates' emails when asked for, and templates that are private unless shared.

Existing templates become shared: until now every interviewer saw every template, and
others may rely on them, so making them private would make them disappear. New
templates are private (the field's default); their owners share them when they want.
"""

from django.db import migrations, models


def share_existing_templates(apps, schema_editor):
    apps.get_model("interviews", "InterviewTemplate").objects.update(shared=True)


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
        migrations.AddField(
            model_name="interviewtemplate",
            name="shared",
            field=models.BooleanField(default=False,
                                      help_text="Other interviewers can see it and start interviews from it."),
        ),
        migrations.RunPython(share_existing_templates, migrations.RunPython.noop),
    ]
