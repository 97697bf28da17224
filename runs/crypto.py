"""Target passwords are encrypted at rest with Fernet (settings.FIELD_ENCRYPTION_KEY).

In development the key is derived from SECRET_KEY so a laptop needs no configuration; production
settings require FIELD_ENCRYPTION_KEY to be set.
"""

import base64
import hashlib
from functools import lru_cache

from cryptography.fernet import Fernet, InvalidToken
from django.conf import settings


@lru_cache(maxsize=4)
def _fernet(key: str, secret_key: str) -> Fernet:
    if not key:
        key = base64.urlsafe_b64encode(hashlib.sha256(("perfdash-target-passwords:" + secret_key).encode()).digest()).decode()
    return Fernet(key.encode() if isinstance(key, str) else key)


def fernet() -> Fernet:
    return _fernet(settings.FIELD_ENCRYPTION_KEY or "", settings.SECRET_KEY)


def encrypt(plaintext: str) -> str:
    return fernet().encrypt(plaintext.encode()).decode() if plaintext else ""


def decrypt(token: str) -> str:
    if not token:
        return ""
    try:
        return fernet().decrypt(token.encode()).decode()
    except InvalidToken as exc:  # the key changed: say so instead of failing obscurely
        raise ValueError("The target password cannot be decrypted with the current FIELD_ENCRYPTION_KEY.") from exc
