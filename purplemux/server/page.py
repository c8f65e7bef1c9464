"""GET /: the login link sets the cookie; the dashboard page itself."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from purplemux.server.auth import COOKIE, token_ok
from purplemux.server.runtime import is_authenticated, runtime

router = APIRouter()


@router.get("/", response_model=None)
async def index(request: Request, token: str | None = None) -> Response:
    rt = runtime(request)
    if token is not None:
        if not token_ok(rt.token, token):
            return HTMLResponse(
                _page(
                    "That login link is not valid any more. Run "
                    "<code>purplemux open</code> for a fresh one."
                ),
                401,
            )
        response = RedirectResponse("/", status_code=303)
        response.set_cookie(
            COOKIE, rt.token, httponly=True, samesite="strict", max_age=60 * 60 * 24 * 365
        )
        return response
    if not is_authenticated(request):
        return HTMLResponse(
            _page("Open the link from <code>purplemux open</code> to sign in."), 401
        )
    return HTMLResponse(_page("Signed in. The dashboard lists sessions at /api/sessions."))


def _page(body: str) -> str:
    return (
        "<!doctype html><meta charset=utf-8><title>purplemux</title>"
        f"<body><main><h1>purplemux</h1><p>{body}</p></main></body>"
    )
