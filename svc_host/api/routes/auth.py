"""``/api/auth``: the dashboard's login form and logout. API clients send ``Authorization: Bearer`` instead."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response
from pydantic import BaseModel, Field

from svc_host.api.middleware import clear_token_cookie, set_token_cookie
from svc_host.api.security import ServerSecurity
from svc_host.errors import AuthenticationError

router = APIRouter(prefix="/api/auth", tags=["auth"])


class LoginBody(BaseModel):
    token: str = Field(min_length=1, max_length=512, description="The token `svc serve` printed, or SVC_API_TOKEN")


@router.post("/login", status_code=204, responses={401: {"description": "wrong token"}})
async def login(body: LoginBody, request: Request) -> Response:
    """Exchange the token for the dashboard's HttpOnly, SameSite=Strict cookie (the body is never echoed)."""
    security: ServerSecurity = request.app.state.security
    response = Response(status_code=204)
    if security.token is None:
        return response
    if not security.token_valid(body.token):
        raise AuthenticationError("wrong token: use the one `svc serve` printed (or SVC_API_TOKEN)")
    set_token_cookie(response, security.token, request.headers, secure=request.url.scheme == "https")
    return response


@router.post("/logout", status_code=204)
async def logout(request: Request) -> Response:
    """Forget the dashboard's cookie in this browser."""
    response = Response(status_code=204)
    clear_token_cookie(response, request.headers)
    return response
