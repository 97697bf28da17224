# One image for web (gunicorn), benchmark worker (sysbench + pgbench) and beat (reconciler).
FROM python:3.12-slim-bookworm

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 DJANGO_PRODUCTION=1 STATIC_ROOT=/app/var/staticfiles
RUN apt-get update \
 && apt-get install -y --no-install-recommends sysbench postgresql-client npm curl \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY requirements.txt requirements-nodeps.txt ./
RUN pip install --no-cache-dir -r requirements.txt && pip install --no-cache-dir --no-deps -r requirements-nodeps.txt
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund --loglevel=error
COPY . .
# collectstatic needs a key only to import the settings; the real one comes from the environment.
RUN SECRET_KEY=build-only FIELD_ENCRYPTION_KEY=x ALLOWED_HOSTS=x python manage.py collectstatic --noinput -v0
# web, worker and reconciler all run as this unprivileged user (docker-compose.yml repeats it).
RUN useradd --create-home --uid 10001 app && mkdir -p /app/var && chown -R app /app/var
USER app
EXPOSE 8000
CMD ["gunicorn", "-c", "python:config.gunicorn_conf", "config.wsgi:application", "--bind", "0.0.0.0:8000", "--workers", "3", "--timeout", "60"]
