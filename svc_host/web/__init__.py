"""The dashboard's files (``static/``): plain ES modules and CSS served by ``svc_host.api.routes.web``."""
