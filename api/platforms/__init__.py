"""Platform webhooks: one module per platform, each verifying, parsing and dispatching.

Each module offers `build_router(settings) -> APIRouter`; a platform is served only when its
secret is configured.
"""
