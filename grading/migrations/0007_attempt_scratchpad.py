from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('grading', '0006_attempt_after_solution'),
    ]

    operations = [
        migrations.AddField(
            model_name='attempt',
            name='scratchpad',
            field=models.TextField(blank=True, default=''),
        ),
    ]
