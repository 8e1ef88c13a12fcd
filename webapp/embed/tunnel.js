// A tunnelled view page (apps.md §13): the host lets its frame reach no server, so NiceGUI's own socket runs on
// engine.io long-polling whose requests become app-only tool calls (`webapp_tunnel_http`), sent through the shell
// and the host's MCP connection. Only requests to the tunnel's virtual origin take that way; every other
// XMLHttpRequest stays the browser's own. engine.io keeps one GET and one POST in flight, which gives order and
// back-pressure; a GET the server holds past `wait_ms` is resumed (`poll`), never cancelled.
window.__webappTunnel = (boot, toShell) => {
  "use strict";
  const WAIT_MS = 20000; // a held GET answers within this (hosts end a call after 60 s)
  const PROBE_MS = 2000; // until a POST came back beside a held GET, a GET is held only this long
  const SERIAL_AFTER_MS = 2000; // a POST unanswered this long while a GET is held: the host runs calls one at a time
  const PACE_MS = 1000; // then: GETs answered at once (wait_ms 0), a poll at most a second after the call before
  // TUNNEL_UNAVAILABLE (the worker holding the tunnel cannot be reached now): the pauses before each retry, then the
  // tunnel counts as ended. A POST is not sent again (it may have run): engine.io's reconnect takes over, as over HTTP.
  const RETRY_MS = [250, 500, 1000, 2000, 4000];
  const NativeXHR = window.XMLHttpRequest;
  const waiting = new Map();
  let nextId = 1;
  let serial = false;
  let concurrent = false; // a POST was answered while a GET was held: the host runs calls side by side
  let lastCall = 0; // when the newest call was sent (performance.now())
  let gone = null; // why the tunnel is closed for good (no call is sent after that)
  let getting = 0;

  const call = async (args) => {
    const polling = args.method === "GET" || args.poll;
    const wait = serial && polling ? lastCall + PACE_MS - performance.now() : 0;
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait)); // a POST (a pong, a click) never waits
    lastCall = performance.now();
    return new Promise((resolve, reject) => {
      const id = `tunnel:${nextId++}`;
      waiting.set(id, { resolve, reject });
      toShell({ t: "req", id, method: "tools/call", params: { name: "webapp_tunnel_http", arguments: args } });
    });
  };
  const end = () => {
    if (gone) return;
    gone = "The live view's connection has ended.";
    toShell({ t: "tunnel-gone" });
  };
  const answered = async (args) => {
    for (let retry = 0; ; retry++) {
      const result = await call({ tunnel: boot.tunnel, ...args });
      const data = result && result.structuredContent;
      if (result && !result.isError && data) return data;
      const text = ((result && result.content) || []).map((block) => block.text || "").join(" ");
      const unavailable = text.includes("TUNNEL_UNAVAILABLE");
      if (unavailable && args.method !== "POST" && retry < RETRY_MS.length && !gone) {
        await new Promise((resolve) => setTimeout(resolve, RETRY_MS[retry]));
        continue;
      }
      if (text.includes("TUNNEL_UNKNOWN") || (unavailable && args.method !== "POST")) end();
      throw new Error(text || "the tunnel call failed");
    }
  };
  const whole = async (data) => {
    if (data.parts <= 1) return data.body;
    const rest = [];
    for (let part = 1; part < data.parts; part++) {
      rest.push(answered({ answer: data.answer, part }).then((answer) => answer.body));
    }
    return [data.body, ...(await Promise.all(rest))].join("");
  };
  const get = async (query) => {
    getting++;
    try {
      const hold = () => (serial ? 0 : concurrent ? WAIT_MS : PROBE_MS);
      let data = await answered({ method: "GET", query, wait_ms: hold() });
      while (data.pending) data = await answered({ poll: true, wait_ms: hold() });
      return { status: data.status, body: await whole(data) };
    } finally {
      getting--;
    }
  };
  const post = async (query, body) => {
    const slow = getting > 0 && !serial ? setTimeout(() => (serial = true), SERIAL_AFTER_MS) : null;
    try {
      const data = await answered({ method: "POST", query, body });
      if (getting > 0) concurrent = true;
      return { status: data.status, body: await whole(data) };
    } finally {
      clearTimeout(slow);
    }
  };

  // The surface engine.io's polling transport uses of an XMLHttpRequest (engine.io-client 6.6), and its events
  // (Quasar's loading bar listens to every request's `loadend`).
  class TunnelXHR extends EventTarget {
    constructor() {
      super();
      this.readyState = 0;
      this.status = 0;
      this.responseText = "";
      this.withCredentials = false;
      this.timeout = 0;
      this.onreadystatechange = null;
      this._native = null;
      this._aborted = false;
    }
    open(method, url, ...rest) {
      const target = new URL(url, location.href);
      if (target.origin !== boot.origin) {
        this._native = new NativeXHR();
        this._native.onreadystatechange = () => {
          for (const name of ["readyState", "status", "responseText"]) this[name] = this._native[name];
          if (this.onreadystatechange) this.onreadystatechange();
        };
        for (const name of ["load", "error", "abort", "loadend"]) {
          this._native.addEventListener(name, () => this.dispatchEvent(new Event(name)));
        }
        return this._native.open(method, url, ...rest);
      }
      this._method = method;
      this._query = target.search.slice(1);
      this.readyState = 1;
    }
    setRequestHeader(name, value) {
      if (this._native) this._native.setRequestHeader(name, value); // the tunnel's requests: the server sets them
    }
    getResponseHeader(name) {
      return this._native ? this._native.getResponseHeader(name) : null;
    }
    abort() {
      this._aborted = true;
      if (this._native) this._native.abort();
    }
    send(body) {
      if (this._native) {
        this._native.withCredentials = this.withCredentials;
        return this._native.send(body);
      }
      const finish = (status, text) => {
        if (this._aborted) return;
        this.readyState = 4;
        this.status = status;
        this.responseText = text;
        if (this.onreadystatechange) this.onreadystatechange();
        this.dispatchEvent(new Event("readystatechange"));
        this.dispatchEvent(new Event(status ? "load" : "error"));
        this.dispatchEvent(new Event("loadend"));
      };
      if (gone) return setTimeout(() => finish(0, ""), 0);
      const sent = this._method === "POST" ? post(this._query, String(body ?? "")) : get(this._query);
      sent.then(
        (answer) => finish(answer.status, answer.body),
        () => finish(0, ""),
      );
    }
  }
  window.XMLHttpRequest = TunnelXHR;

  return {
    // the socket's settings: long-polling only, never an upgrade to a WebSocket the host would refuse
    socketSettings: { transports: ["polling"], upgrade: false, tryAllTransports: false, rememberUpgrade: false },
    answers(message) {
      const entry = message.t === "res" && waiting.get(message.id);
      if (!entry) return false;
      waiting.delete(message.id);
      if (message.error) entry.reject(new Error(message.error.message || "the host refused the call"));
      else entry.resolve(message.result);
      return true;
    },
  };
};
