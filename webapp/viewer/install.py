"""Installing the viewer in a server: its call-log store, its page at `/viewer`, its sign-in route, and the browser
files at `/static` (the parser, the renderer's bundles) that draw its results."""

from __future__ import annotations

from fastapi import FastAPI, Request
from nicegui import ui
from starlette.routing import Mount
from starlette.staticfiles import StaticFiles

from webapp.auth import PERSON_SCOPE_KEY, SIGN_OUT_PATH, SIGNED_IN_SCOPE_KEY, Person
from webapp.calllog.shared import CallSharing
from webapp.calllog.store import CallLogStore
from webapp.core.static import STATIC_URL, VIEWER_BUNDLE, require_bundle, static_dir
from webapp.viewer.auth import COOKIE, Access, install_session_route, login_form
from webapp.viewer.filters import Filters, call_key
from webapp.viewer.page import ViewerPage
from webapp.viewer.service import VIEWER_PATH, ViewDirectory, Viewer, ViewerHost

__all__ = ["install_viewer"]


def _install_routes(viewer: Viewer, app: FastAPI) -> None:
    """Register the page and its session route in NiceGUI's `app`."""

    @ui.page(viewer.path, title="Call viewer")
    async def viewer_page(request: Request) -> None:  # pyright: ignore[reportUnusedFunction]
        params = dict(request.query_params)
        session = request.cookies.get(COOKIE)
        person = request.scope.get(PERSON_SCOPE_KEY)  # signed in at the issuer (--auth-issuer): their calls only
        signed_in = request.scope.get(SIGNED_IN_SCOPE_KEY)
        if isinstance(person, str):
            access = Access(person, person=signed_in if isinstance(signed_in, Person) else None)
        else:
            access = viewer.sessions.access(session)
        if viewer.css:
            ui.add_css(viewer.css)
        ui.dark_mode(None)  # the system's colour scheme
        filters = Filters.from_query(params)
        if access is None:
            login_form(viewer.path, viewer.sessions, back=filters.query(), failed=params.get("login") == "failed")
            return
        page = ViewerPage(viewer, access, filters, call_key(params.get("call", ""), viewer.host.calllog.worker))
        await viewer.catch_up()  # the other workers' calls made while nobody watched (before the page's snapshot)
        if isinstance(person, str):
            page.build(on_sign_out=lambda: ui.navigate.to(SIGN_OUT_PATH))
        else:
            page.build(on_sign_out=None if access.is_local else lambda: _sign_out(viewer, session))

    install_session_route(app, viewer.path, viewer.sessions)
    if not any(isinstance(route, Mount) and route.path == STATIC_URL for route in app.router.routes):
        app.mount(STATIC_URL, StaticFiles(directory=static_dir()), name="webapp-static")


def _sign_out(viewer: Viewer, session: str | None) -> None:
    viewer.sessions.end(session)
    ui.navigate.to(viewer.path)


def install_viewer(
    host: ViewerHost,
    app: FastAPI | None = None,
    *,
    views: ViewDirectory | None = None,
    store: CallLogStore | None = None,
    persist: bool = True,
    path: str = VIEWER_PATH,
) -> Viewer:
    """Add the viewer to a server: persist the call log in `--db` (unless `persist=False` or a `store` is given,
    which is then used), load its newest calls, and register `/viewer`. With several workers (`--redis-url`) the
    workers share their calls through app events, so each one's viewer lists every worker's. Call it before serving;
    calling it again for the same server returns the installed viewer. Without the built bundles (`make run` builds
    them) it raises a SettingsError that says so."""
    if app is None:
        from nicegui import app as nicegui_app

        app = nicegui_app
    installed = getattr(app.state, "webapp_viewer", None)
    if isinstance(installed, Viewer) and installed.host is host:
        if views is not None:
            installed.add_views(views)
        return installed
    require_bundle(VIEWER_BUNDLE)
    if store is None and persist:
        settings = host.settings
        store = CallLogStore(settings.db, keep=settings.call_log_keep, max_age=settings.call_log_max_age)
    if store is not None:
        calls = store

        async def load_calls() -> None:  # before the server takes calls: the log numbers its calls after the stored
            await calls.open()
            await calls.attach(host.calllog)

        host.on_startup(load_calls)
        host.on_shutdown(store.close)
    viewer = Viewer(host, views=views, path=path)
    if host.settings.redis_url:
        sharing = CallSharing(host.calllog, host.events, store)
        host.on_startup(sharing.start)
        host.on_shutdown(sharing.stop)
        viewer.catch_up = sharing.catch_up
    host.result_widget.viewer_path = path  # the result widget links Mermaid diagrams here
    _install_routes(viewer, app)
    app.state.webapp_viewer = viewer
    return viewer
