// The widget's side of the MCP Apps host protocol (SEP-1865, 2026-01-26): JSON-RPC 2.0 over postMessage with the
// frame's parent only. Hand-written rather than the ext-apps SDK's App class, which bundles to about 600 KB (its
// MCP client and zod) and would not leave room for the charts within the widget's 1.2 MB.

export const PROTOCOL_VERSION = '2026-01-26';
const REQUEST_TIMEOUT_MS = 30_000; // a host may ask the person before it answers ui/message

export class HostChannel {
  /** `onNotification(method, params)` gets the host's notifications; the host's requests are answered here. */
  constructor(onNotification, onTeardown = () => {}) {
    this.host = window.parent;
    this.onNotification = onNotification;
    this.onTeardown = onTeardown;
    this.waiting = new Map();
    this.nextId = 1;
    this.capabilities = {};
    this.info = {};
    this.context = {};
    window.addEventListener('message', (event) => this.receive(event));
  }

  send(message) {
    this.host.postMessage({ jsonrpc: '2.0', ...message }, '*');
  }

  notify(method, params = {}) {
    this.send({ method, params });
  }

  /** A request to the host; rejects with the host's error, or after a timeout when it does not answer. */
  request(method, params = {}, timeoutMs = REQUEST_TIMEOUT_MS) {
    return new Promise((resolve, reject) => {
      const id = this.nextId++;
      const timer = setTimeout(() => {
        this.waiting.delete(id);
        reject(new Error(`${method}: the host did not answer within ${timeoutMs / 1000} s.`));
      }, timeoutMs);
      this.waiting.set(id, { resolve, reject, timer });
      this.send({ id, method, params });
    });
  }

  /** Introduce the widget; keeps what the host says of itself (info, capabilities, context). */
  async initialize(appInfo) {
    const result = await this.request('ui/initialize', {
      appInfo,
      appCapabilities: { availableDisplayModes: ['inline'] },
      protocolVersion: PROTOCOL_VERSION,
    });
    this.info = result.hostInfo || {};
    this.capabilities = result.hostCapabilities || {};
    this.context = result.hostContext || {};
    this.notify('ui/notifications/initialized');
    return this.context;
  }

  receive(event) {
    const message = event.data;
    if (event.source !== this.host || !message || message.jsonrpc !== '2.0') return;
    if (message.method === undefined) {
      const entry = this.waiting.get(message.id);
      if (!entry) return;
      this.waiting.delete(message.id);
      clearTimeout(entry.timer);
      if (message.error) entry.reject(Object.assign(new Error(message.error.message || 'host error'), message.error));
      else entry.resolve(message.result || {});
    } else if (message.id !== undefined) {
      this.answer(message);
    } else {
      if (message.method === 'ui/notifications/host-context-changed') {
        this.context = { ...this.context, ...(message.params || {}) };
      }
      this.onNotification(message.method, message.params || {});
    }
  }

  answer(message) {
    if (message.method === 'ui/resource-teardown') {
      this.onTeardown();
      this.send({ id: message.id, result: {} });
    } else if (message.method === 'ping') {
      this.send({ id: message.id, result: {} });
    } else {
      this.send({ id: message.id, error: { code: -32601, message: `Method not found: ${message.method}` } });
    }
  }
}
