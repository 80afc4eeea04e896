import os

from django.core.asgi import get_asgi_application

from portal.serving import refuse_the_development_key

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "portal.settings")
refuse_the_development_key()
application = get_asgi_application()
