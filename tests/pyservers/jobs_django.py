"""A job board on Django's ORM (SQLite) and graphene-django, with pydantic checking what applicants send.

    python jobs_django.py PORT DATABASE

Run by tests/interop/test_writes_thirdparty.py under its own interpreter (graphene pins a graphql-core
older than dagtools' own; tests/pyservers/graphene-requirements.txt lists what it needs). It serves
`/graphql` on 127.0.0.1:PORT with Django's threaded development server, on a new SQLite file at DATABASE.

Shapes, as graphene-django builds them:
- `JobNode` and `ApplicationNode` are Relay nodes (global ids, `Type:pk` in base64); `node(id:)` is the
  only way to read one again, and it returns the `Node` interface. `allJobs` is a Relay connection.
- `Company` and `Agency` are plain types with their primary key as `id`; the only lookup of either is
  `employer(id:): Employer`, a union. `pauseHiring` answers a payload holding the company it changed.
- `applyToJob` is a Relay mutation whose payload nests what it changed:
  `ApplyToJobPayload.application.job` (one opening fewer). `closeJobs` answers a list of the jobs it
  closed inside its payload.
- An application is checked by a pydantic model before anything is written; a refusal is a GraphQL
  error whose extensions carry pydantic's own errors, in pydantic's order: `type`, `loc`, `msg`, the
  `input` echoed back in full, `ctx`, `url`, for each field in the model's order (cover letter first).
"""

from __future__ import annotations

import json
import sys

import django
from django.conf import settings

PORT, DATABASE = int(sys.argv[1]), sys.argv[2]

settings.configure(
    DEBUG=False,
    ALLOWED_HOSTS=["127.0.0.1", "localhost"],
    ROOT_URLCONF=__name__,
    SECRET_KEY="a-test-server-on-loopback",
    INSTALLED_APPS=["django.contrib.contenttypes", "django.contrib.auth", "graphene_django"],
    DATABASES={"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": DATABASE}},
    MIDDLEWARE=[],
    USE_TZ=True,
    GRAPHENE={"SCHEMA": f"{__name__}.schema"},
    DEFAULT_AUTO_FIELD="django.db.models.AutoField",
)
django.setup()

import graphene  # noqa: E402
import pydantic  # noqa: E402
from django.db import connection, models, transaction  # noqa: E402
from django.db.models import F  # noqa: E402
from django.urls import path  # noqa: E402
from django.views.decorators.csrf import csrf_exempt  # noqa: E402
from graphene import relay  # noqa: E402
from graphene_django import DjangoObjectType  # noqa: E402
from graphene_django.fields import DjangoConnectionField  # noqa: E402
from graphene_django.views import GraphQLView  # noqa: E402
from graphql import GraphQLError  # noqa: E402
from graphql_relay import from_global_id  # noqa: E402


class Company(models.Model):
    name = models.CharField(max_length=120)
    hiring = models.BooleanField(default=True)

    class Meta:
        app_label = "jobs"


class Agency(models.Model):
    name = models.CharField(max_length=120)
    hiring = models.BooleanField(default=True)
    fee_percent = models.IntegerField()

    class Meta:
        app_label = "jobs"


class Job(models.Model):
    title = models.CharField(max_length=120)
    company = models.ForeignKey(Company, on_delete=models.CASCADE, related_name="jobs")
    openings = models.IntegerField(help_text="Positions still open.")
    open = models.BooleanField(default=True)

    class Meta:
        app_label = "jobs"


class Application(models.Model):
    job = models.ForeignKey(Job, on_delete=models.CASCADE, related_name="applications")
    name = models.CharField(max_length=80)
    email = models.CharField(max_length=200)
    cover_letter = models.TextField()

    class Meta:
        app_label = "jobs"


class ApplicationForm(pydantic.BaseModel):
    """What an application must be; fields in the order pydantic reports them."""

    cover_letter: str = pydantic.Field(max_length=2000)
    email: str = pydantic.Field(pattern=r"^[^@\s]+@[^@\s]+\.[a-z]{2,}$")
    name: str = pydantic.Field(min_length=1, max_length=80)


class CompanyType(DjangoObjectType):
    class Meta:
        model = Company
        name = "Company"
        fields = ("id", "name", "hiring", "jobs")


class AgencyType(DjangoObjectType):
    class Meta:
        model = Agency
        name = "Agency"
        fields = ("id", "name", "hiring", "fee_percent")


class Employer(graphene.Union):
    """Who hires: a company, or an agency hiring for others."""

    class Meta:
        types = (CompanyType, AgencyType)


class JobNode(DjangoObjectType):
    class Meta:
        model = Job
        interfaces = (relay.Node,)
        fields = ("title", "company", "openings", "open", "applications")


class ApplicationNode(DjangoObjectType):
    class Meta:
        model = Application
        interfaces = (relay.Node,)
        fields = ("name", "email", "cover_letter", "job")


class Query(graphene.ObjectType):
    node = relay.Node.Field()
    all_jobs = DjangoConnectionField(JobNode)
    companies = graphene.List(graphene.NonNull(CompanyType), required=True)
    employer = graphene.Field(Employer, id=graphene.ID(required=True), description="A company or an agency by id.")

    def resolve_companies(root, info):
        return Company.objects.order_by("pk")

    def resolve_employer(root, info, id):
        return Company.objects.filter(pk=id).first() or Agency.objects.filter(pk=id).first()


class ApplyToJob(relay.ClientIDMutation):
    class Input:
        job_id = graphene.ID(required=True)
        name = graphene.String(required=True)
        email = graphene.String(required=True)
        cover_letter = graphene.String(required=True)

    application = graphene.Field(ApplicationNode)

    @classmethod
    def mutate_and_get_payload(cls, root, info, job_id, name, email, cover_letter, **_):
        try:
            form = ApplicationForm(cover_letter=cover_letter, email=email, name=name)
        except pydantic.ValidationError as error:
            raise GraphQLError("Invalid application", extensions={"validation_errors": json.loads(error.json())}) from error
        pk = from_global_id(job_id).id
        with transaction.atomic():
            if Job.objects.filter(pk=pk, open=True, openings__gt=0).update(openings=F("openings") - 1) != 1:
                raise GraphQLError("That job is closed or has no openings left.", extensions={"code": "JOB_FULL"})
            application = Application.objects.create(job_id=pk, **form.model_dump())
        return ApplyToJob(application=application)


class CloseJobs(relay.ClientIDMutation):
    class Input:
        job_ids = graphene.List(graphene.NonNull(graphene.ID), required=True)

    jobs = graphene.List(graphene.NonNull(JobNode), required=True)

    @classmethod
    def mutate_and_get_payload(cls, root, info, job_ids, **_):
        pks = [from_global_id(i).id for i in job_ids]
        Job.objects.filter(pk__in=pks).update(open=False, openings=0)
        return CloseJobs(jobs=list(Job.objects.filter(pk__in=pks).order_by("pk")))


class PauseHiring(graphene.Mutation):
    """Stop hiring at a company: its jobs close."""

    class Arguments:
        company_id = graphene.ID(required=True)

    company = graphene.Field(CompanyType)
    closed = graphene.Int(required=True)

    @classmethod
    def mutate(cls, root, info, company_id):
        Company.objects.filter(pk=company_id).update(hiring=False)
        closed = Job.objects.filter(company_id=company_id, open=True).update(open=False, openings=0)
        return PauseHiring(company=Company.objects.filter(pk=company_id).first(), closed=closed)


class Mutation(graphene.ObjectType):
    apply_to_job = ApplyToJob.Field()
    close_jobs = CloseJobs.Field()
    pause_hiring = PauseHiring.Field()


schema = graphene.Schema(query=Query, mutation=Mutation)
urlpatterns = [path("graphql", csrf_exempt(GraphQLView.as_view(graphiql=False)))]


def main() -> None:
    from django.core.servers.basehttp import WSGIServer, get_internal_wsgi_application, run

    with connection.schema_editor() as editor:
        editor.create_model(Company)
        editor.create_model(Agency)
        editor.create_model(Job)
        editor.create_model(Application)
    acme, globex = Company.objects.create(name="Acme"), Company.objects.create(name="Globex")
    Agency.objects.create(pk=100, name="Hire Fast", fee_percent=15)
    Job.objects.create(title="Backend engineer", company=acme, openings=1)
    Job.objects.create(title="Data analyst", company=acme, openings=3)
    Job.objects.create(title="Designer", company=globex, openings=2)
    print(f"jobs (django {django.get_version()}, graphene-django) on http://127.0.0.1:{PORT}/graphql", flush=True)
    run("127.0.0.1", PORT, get_internal_wsgi_application(), threading=True, server_cls=WSGIServer)


if __name__ == "__main__":
    main()
