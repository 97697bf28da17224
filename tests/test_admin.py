import pytest
from django.contrib import admin
from django.contrib.auth.models import User

pytestmark = pytest.mark.django_db


@pytest.fixture
def superuser_client(client):
    client.force_login(User.objects.create_superuser("root", "root@example.com", "x-Pass-123456"))
    return client


@pytest.mark.parametrize("model", [m for m in admin.site._registry if m._meta.app_label == "whitepaper"],
                         ids=lambda m: m.__name__)
def test_every_catalogue_model_has_a_working_admin_list(superuser_client, model):
    url = f"/admin/whitepaper/{model._meta.model_name}/"
    assert superuser_client.get(url).status_code == 200
    assert superuser_client.get(url, {"q": "c3"}).status_code == 200


def test_results_filter_by_vendor_engine_and_ratio_and_search_by_spec_code(superuser_client):
    from whitepaper.models import Engine

    mysql = Engine.objects.get(slug="mysql")
    url = "/admin/whitepaper/publishedresult/"
    response = superuser_client.get(url, {"flavor__memory_ratio": "1:8", "engine_version__engine__id__exact":
                                          mysql.pk, "q": "m3.large.8"})
    assert response.status_code == 200
    assert response.context["cl"].result_count == 2  # m3.large.8 under MySQL 5.6 and 5.7 in the 2018 document
    flavors = superuser_client.get("/admin/whitepaper/flavor/", {"q": "ppas.x8.4xlarge.2"})
    assert flavors.context["cl"].result_count == 1
