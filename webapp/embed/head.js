// Embedded mode: runs in the view page's head before NiceGUI's scripts. It gives an opaque-origin frame working
// storage, says hello to the shell, reports the content height and relays host messages to and from the server.
// A page booted directly (`window.__webappBoot`, in a srcdoc frame of the shell) also points NiceGUI's socket at the
// server and hands reloads to the shell, which boots the page again with the fresh ticket the server sent.
(() => {
  "use strict";
  const boot = window.__webappBoot || null;
  const reloading = () => window.parent.postMessage({ webappEmbed: 1, t: "reload" }, "*");
  if (boot) {
    const navigation = performance.getEntriesByType("navigation")[0];
    if (navigation && navigation.type === "reload") {
      reloading(); // this document's page is gone: stop here, the shell swaps in a freshly booted one
      window.stop();
      document.documentElement.textContent = "Reloading the live view…";
      return;
    }
    window.addEventListener("beforeunload", reloading);
    // NiceGUI checks whether its page still exists by fetching the page's own address before it reloads; a booted
    // page has none (about:srcdoc), so it goes straight on to the reload, which boots the page again.
    const fetchFirst = window.fetch;
    window.fetch = (input, init) =>
      input === location.href ? Promise.resolve(new Response("")) : fetchFirst(input, init);
  }
  const memoryStorage = () => {
    const data = new Map();
    const api = {
      getItem: (name) => (data.has(String(name)) ? data.get(String(name)) : null),
      setItem: (name, value) => void data.set(String(name), String(value)),
      removeItem: (name) => void data.delete(String(name)),
      clear: () => data.clear(),
      key: (index) => [...data.keys()][index] ?? null,
      get length() {
        return data.size;
      },
    };
    return new Proxy(api, {
      get: (target, name) => (name in target ? target[name] : data.get(String(name))),
      set: (target, name, value) => (data.set(String(name), String(value)), true),
      deleteProperty: (target, name) => (data.delete(String(name)), true),
    });
  };
  for (const name of ["sessionStorage", "localStorage"]) {
    try {
      void window[name].length; // throws a SecurityError in a sandbox without allow-same-origin
    } catch (error) {
      Object.defineProperty(window, name, { value: memoryStorage(), configurable: true });
    }
  }

  document.documentElement.classList.add("webapp-embedded"); // for views' own embedded styles (no 100vh there)
  const shell = window.parent;
  const queue = [];
  let live = false;
  let theme = null;
  const toShell = (message) => shell.postMessage({ webappEmbed: 1, ...message }, "*");
  const toServer = (message) => (live ? window.emitEvent("webapp-host", message) : queue.push(message));
  const applyTheme = () => {
    if (theme && window.Quasar) window.Quasar.Dark.set(theme === "dark");
  };
  const tunnel = boot && boot.tunnel ? window.__webappTunnel(boot, toShell) : null;
  window.addEventListener("message", (event) => {
    if (event.source !== shell || !event.data || event.data.webappShell !== 1) return;
    const { webappShell, ...message } = event.data;
    if (tunnel && tunnel.answers(message)) return;
    const context = message.t === "init" ? message.hostContext : message.t === "evt" ? message.params : null;
    if (context && (context.theme === "dark" || context.theme === "light")) {
      theme = context.theme;
      applyTheme();
    }
    toServer(message);
    if (message.t === "evt" && message.name === "teardown") toShell({ t: "teardown-ack" });
  });
  // NiceGUI imports components at run time from nicegui.js, a classic script that an opaque-origin document loads as
  // CORS-cross-origin: root-relative module URLs have no base there, so once the socket exists they get the origin.
  window.__webappBeforeApp = () => {
    const createApp = window.createApp;
    window.createApp = (elements, options) => {
      const io = window.io;
      window.io = (url, settings) => {
        window.io = io;
        const path = boot && new URL(settings.path).pathname;
        if (tunnel) return io(boot.origin, { ...settings, path, ...tunnel.socketSettings });
        if (boot) return io(boot.origin, { ...settings, path });
        const socket = io(url, settings);
        options.prefix = `${location.protocol}//${location.host}${options.prefix}`;
        return socket;
      };
      return createApp(elements, options);
    };
  };
  window.__webappHost = {
    ready() {
      live = true;
      applyTheme();
      for (const message of queue.splice(0)) window.emitEvent("webapp-host", message);
    },
    request(id, method, params) {
      toShell({ t: "req", id, method, params });
    },
    ticket(ticket) {
      toShell({ t: "ticket", ticket });
    },
  };

  // The content height (of #app once it exists, else of the body) as ResizeObserver reports it: Chromium measures it
  // in its own layout step, at most once a frame, where reading it from a timer would force a layout on every change.
  let sent = 0;
  let measured = null;
  const observer = new ResizeObserver((entries) => {
    for (const entry of entries) {
      const height = Math.ceil(entry.borderBoxSize[0].blockSize);
      if (entry.target === measured && height > 0 && height !== sent) {
        sent = height;
        toShell({ t: "size", height });
      }
    }
  });
  const measure = (element) => {
    if (element === measured) return;
    if (measured) observer.unobserve(measured);
    measured = element;
    observer.observe(element);
  };
  document.addEventListener("DOMContentLoaded", () => {
    measure(document.getElementById("app") || document.body);
    new MutationObserver(() => measure(document.getElementById("app") || document.body)).observe(document.body, {
      childList: true,
    });
  });
  toShell({ t: "hello" });
})();
