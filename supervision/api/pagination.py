from rest_framework.pagination import PageNumberPagination


class PortalPagination(PageNumberPagination):
    """``?page=`` and ``?page_size=`` (capped, so no request can ask for every row at once)."""

    page_size_query_param = "page_size"
    max_page_size = 500
