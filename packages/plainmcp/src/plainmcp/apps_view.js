// plainmcp's view side of MCP Apps (io.modelcontextprotocol/ui, 2026-01-26): JSON-RPC 2.0 over postMessage
// with the host window. plainmcp.app_view_document inlines it at the top of a view's one script; it defines
// `host`: start(name, version, capabilities), on(method, listener), callTool(name, args), request, notify,
// context(). It answers the host's ping and ui/resource-teardown, applies the host's theme and style
// variables to the document root, and reports the document's size.
"use strict";
const host = (() => {
  const PROTOCOL = "2026-01-26";
  const pending = new Map();
  const listeners = new Map();
  let nextId = 1;
  let context = {};

  function post(message) {
    window.parent.postMessage({ jsonrpc: "2.0", ...message }, "*");
  }

  function request(method, params) {
    const id = nextId++;
    post({ id, method, params: params || {} });
    return new Promise((resolve, reject) => pending.set(id, { resolve, reject }));
  }

  function notify(method, params) {
    post({ method, params: params || {} });
  }

  function on(method, listener) {
    if (!listeners.has(method)) listeners.set(method, []);
    listeners.get(method).push(listener);
  }

  function emit(method, params) {
    for (const listener of listeners.get(method) || []) {
      try {
        listener(params || {});
      } catch (failure) {
        console.error(failure);
      }
    }
  }

  // The host's theme and style variables (only the spec's --* names), on the document root.
  function applyContext(changed) {
    context = { ...context, ...changed };
    const root = document.documentElement;
    if (context.theme === "dark" || context.theme === "light") root.dataset.theme = context.theme;
    const variables = (context.styles && context.styles.variables) || {};
    for (const [name, value] of Object.entries(variables)) {
      if (/^--[a-z0-9-]+$/.test(name) && typeof value === "string") root.style.setProperty(name, value);
    }
  }

  function answer(message) {
    // Requests from the host: ping, and teardown (nothing to save here). Others are not ours.
    if (message.method === "ping" || message.method === "ui/resource-teardown") {
      post({ id: message.id, result: {} });
    } else {
      post({ id: message.id, error: { code: -32601, message: "Method not found" } });
    }
  }

  window.addEventListener("message", (event) => {
    if (event.source !== window.parent) return;
    const message = event.data;
    if (!message || typeof message !== "object" || message.jsonrpc !== "2.0") return;
    if (typeof message.method === "string") {
      if (message.id !== undefined && message.id !== null) return answer(message);
      if (message.method === "ui/notifications/host-context-changed") applyContext(message.params || {});
      return emit(message.method, message.params);
    }
    const waiting = pending.get(message.id);
    if (!waiting) return;
    pending.delete(message.id);
    if (message.error) waiting.reject(new Error(String(message.error.message || "the host refused")));
    else waiting.resolve(message.result);
  });

  function reportSize() {
    const size = () =>
      notify("ui/notifications/size-changed", {
        width: Math.ceil(document.documentElement.scrollWidth),
        height: Math.ceil(document.documentElement.scrollHeight),
      });
    new ResizeObserver(size).observe(document.documentElement);
  }

  // The handshake: ui/initialize (the host's context comes back), then initialized; from then on the
  // document's size follows its content. Register on() listeners first: the tool's input and result
  // may follow at once.
  async function start(name, version, capabilities) {
    const result = await request("ui/initialize", {
      appInfo: { name, version },
      appCapabilities: capabilities || {},
      protocolVersion: PROTOCOL,
    });
    applyContext((result && result.hostContext) || {});
    notify("ui/notifications/initialized", {});
    reportSize();
    return result;
  }

  // A tool of the view's server, called through the host (which may ask the user first).
  function callTool(name, args) {
    return request("tools/call", { name, arguments: args });
  }

  return { start, on, request, notify, callTool, context: () => context };
})();
