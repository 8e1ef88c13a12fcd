"""The inventory view's CSS (inline in a host: a fixed table height, the host's dark theme) and the small browser
script that marks the page while its connection is down."""

from __future__ import annotations

from nicegui import ui

__all__ = ["ROUTINE", "install_page_styles"]

ROUTINE = {"role": "status"}
"""The attributes of a notification that is routine news (`ui.notify(..., attrs=ROUTINE)`): said politely, where
Quasar's own `role=alert` interrupts whatever a screen reader is saying."""

_CSS = """
.inventory-status .when-offline { display: none; }
html.inventory-offline .inventory-status .when-online { display: none; }
html.inventory-offline .inventory-status .when-offline { display: inline-flex; }
.inventory-status .dot { width: .5rem; height: .5rem; border-radius: 9999px; display: inline-block; }
.inventory-status .dot.live { animation: inventory-pulse 1.6s ease-in-out 3; } /* then steady: a pulse that never
   ends has the browser compose a new frame of the page sixty times a second */
.inventory-status .when-offline .dot.live { animation-iteration-count: infinite; } /* until the connection is back */
@keyframes inventory-pulse { 50% { opacity: .35; } }
@media (prefers-reduced-motion: reduce) { .inventory-status .dot.live { animation: none; } }
.inventory-stock { max-height: max(30rem, calc(100vh - 17rem)); contain: content; } /* a row patch lays out here */
.inventory-feed { contain: content; }
.inventory-feed > div { will-change: transform; } /* an insert moves the rows below it instead of repainting them */
.inventory-stock thead tr th { position: sticky; top: 0; z-index: 1; background: #fff; }
.inventory-stock tbody tr { cursor: pointer; isolation: isolate; } /* a row repaints alone: its own paint layer */
/* Quasar positions every cell for its hover overlay; a hit test (each mouse move) then walks every cell's layer */
.inventory-stock tbody td { position: static; }
.inventory-stock tbody td::before, .inventory-stock tbody td::after { display: none; }
body.desktop .inventory-stock tbody tr:hover > td { background-image: linear-gradient(#00000008, #00000008); }
.inventory-stock tbody tr.row-low td { background: #fffbeb; }
.inventory-stock tbody tr.row-selected td { background: #eef2ff; }
.inventory-stock tbody tr.row-selected td:first-child { box-shadow: inset 3px 0 0 #4f46e5; }
.inventory-stock tbody tr:focus-visible { outline: 2px solid #4f46e5; outline-offset: -2px; } /* the keyboard's place */
html.webapp-embedded .inventory-stock { max-height: 30rem; }
body.body--dark { background: #0f172a !important; }
body.body--dark .text-gray-900, body.body--dark .text-gray-800, body.body--dark .text-gray-700 { color: #f1f5f9; }
body.body--dark .text-gray-500, body.body--dark .text-gray-400 { color: #94a3b8; }
@layer quasar_importants { body.body--dark .bg-white { background: #1d1d1d !important; } } /* beats Quasar's own */
body.body--dark .bg-gray-50 { background: #1e293b !important; }
body.body--dark .inventory-stock thead tr th { background: #1d1d1d; }
body.body--dark .inventory-stock tbody tr.row-low td { background: #422006; }
/* a low figure: amber, at AA contrast in both themes (Quasar's badge was 2.4:1, and a live region per low row) */
.low-badge { display: inline-block; padding: 0 .5rem; border-radius: .25rem; background: #fef3c7; color: #92400e; }
body.body--dark .low-badge { background: #78350f; color: #fde68a; }
body.body--dark .text-emerald-700 { color: #34d399; }
body.body--dark .text-rose-700 { color: #fb7185; }
body.body--dark .inventory-stock tbody tr.row-selected td { background: #1e1b4b; }
body.body--dark.desktop .inventory-stock tbody tr:hover > td {
  background-image: linear-gradient(#ffffff12, #ffffff12);
}
"""

# The socket is NiceGUI's socket.io connection; the class goes on <html>, which Vue never re-renders.
_WATCH_SOCKET = """
if (!window.__inventoryStatusWatch) {
  window.__inventoryStatusWatch = true;
  const watch = () => {
    if (!window.socket) return setTimeout(watch, 100);
    const offline = (down) => document.documentElement.classList.toggle('inventory-offline', down);
    window.socket.on('disconnect', () => offline(true));
    window.socket.on('connect', () => offline(false));
  };
  watch();
}
"""


def install_page_styles() -> None:
    """Add the CSS and start the socket watcher in the current tab (safe to repeat on a rebuild)."""
    ui.add_css(_CSS)
    ui.run_javascript(_WATCH_SOCKET)
