import os
import secrets

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = "Create the 'admin' superuser on first run (password from ADMIN_PASSWORD, else generated into var/)."

    def handle(self, *args, **options):
        User = get_user_model()
        secret_file = settings.VAR_DIR / "admin-password"
        if User.objects.filter(username="admin").exists():
            where = f" (password in {secret_file})" if secret_file.exists() else ""
            self.stdout.write(f"Admin user: admin{where}")
            return
        password = os.environ.get("ADMIN_PASSWORD") or secrets.token_urlsafe(12)
        User.objects.create_superuser("admin", "admin@localhost", password)
        if "ADMIN_PASSWORD" not in os.environ:
            secret_file.parent.mkdir(parents=True, exist_ok=True)
            secret_file.touch(mode=0o600)
            secret_file.write_text(password + "\n")
            self.stdout.write(f"Created admin user 'admin'; password written to {secret_file} (mode 0600)")
        else:
            self.stdout.write("Created admin user 'admin' with ADMIN_PASSWORD")
