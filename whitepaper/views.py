from django.shortcuts import get_object_or_404, render

from .models import Document, EngineVersion


def home(request):
    return render(request, "whitepaper/home.html", {"documents": Document.objects.select_related("vendor")})


def document_detail(request, slug):
    document = get_object_or_404(Document.objects.select_related("vendor"), slug=slug)
    return render(request, "whitepaper/document.html", {"document": document})


def engine_version(request, engine, version):
    version_obj = get_object_or_404(EngineVersion.objects.select_related("engine"), engine__slug=engine,
                                    version="" if version == "-" else version)
    return render(request, "whitepaper/engine_version.html", {"engine_version": version_obj})
