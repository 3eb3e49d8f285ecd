from django.urls import path

from questions import views

app_name = "questions"

urlpatterns = [
    path("import/", views.import_question, name="import"),
    path("<slug:slug>/preview/", views.preview, name="preview"),
    path("<slug:slug>/validate/", views.validate, name="validate"),
    path("<slug:slug>/export/", views.export, name="export"),
]
