import gc
import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
application = get_wsgi_application()

# Move everything loaded at start-up out of the cyclic GC's reach: full collections otherwise scan it
# all and add 100+ ms to the slowest requests (benchmarks/api_scale.py).
gc.freeze()
