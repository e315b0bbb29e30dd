"""``/api/auth``: the dashboard's login form and logout. API clients send ``Authorization: Bearer`` instead."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response
from pydantic import BaseModel, Field

from svc_host.api.middleware import (
    authenticated,
    clear_session_cookie,
    session_cookie,
    session_id,
    set_session_cookie,
    too_many_failures,
)
from svc_host.api.params import error_responses
from svc_host.api.security import ServerSecurity
from svc_host.api.sessions import WebSessions
from svc_host.errors import AuthenticationError

router = APIRouter(prefix="/api/auth", tags=["auth"])


class LoginBody(BaseModel):
    token: str = Field(min_length=1, max_length=512, description="The token `svc serve` printed, or SVC_API_TOKEN")


@router.post(
    "/login",
    status_code=204,
    responses=error_responses(
        401, 429, e401="wrong token", e429="wrong token, after too many failed logins; see Retry-After"
    ),
)
async def login(body: LoginBody, request: Request) -> Response:
    """Exchange the token for a session: an HttpOnly, SameSite=Strict cookie holding a random session id (the
    token itself never goes to the browser, and the body is never echoed). The right token always logs in; a
    wrong one is 429 instead of 401 once the server saw too many failures (``FailureLimit``)."""
    security: ServerSecurity = request.app.state.security
    sessions: WebSessions | None = request.app.state.sessions
    response = Response(status_code=204)
    if sessions is None:
        return response
    if not security.token_valid(body.token):
        wait = sessions.limit.retry_after()
        sessions.limit.failed()
        if wait is not None:
            return too_many_failures(wait)
        raise AuthenticationError("wrong token: use the one `svc serve` printed (or SVC_API_TOKEN)")
    new_session = await sessions.open(session_cookie(request))
    set_session_cookie(response, new_session, request)
    return response


@router.get("/session", responses=error_responses(400, e400="the request's Host is not one this server answers to"))
async def session(request: Request) -> dict[str, bool]:
    """``{logged_in}``: whether this request carries a live session (or the token), always 200. The dashboard asks
    once on load, so a logged-out browser shows the login view without a 401 from every page's request."""
    sessions: WebSessions | None = request.app.state.sessions
    if sessions is None:
        return {"logged_in": True}  # a server without a token needs no login
    return {"logged_in": await authenticated(request.app.state.security, request, sessions)}


@router.post("/logout", status_code=204, responses=error_responses(403, e403="cross-site request refused"))
async def logout(request: Request) -> Response:
    """End this browser's session: its id stops working at once, and the cookie is cleared."""
    sessions: WebSessions | None = request.app.state.sessions
    if sessions is not None:
        await sessions.close(session_id(request), session_cookie(request))
    response = Response(status_code=204)
    clear_session_cookie(response, request)
    return response
