"""Anonymous read throttle whose rate is read from settings on each request (API_ANON_RATE via
REST_FRAMEWORK['DEFAULT_THROTTLE_RATES']['anon']), so a changed setting applies at once."""

from rest_framework.settings import api_settings
from rest_framework.throttling import AnonRateThrottle


class AnonReadThrottle(AnonRateThrottle):
    def get_rate(self):
        return api_settings.DEFAULT_THROTTLE_RATES.get(self.scope)
