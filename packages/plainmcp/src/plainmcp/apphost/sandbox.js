// The sandbox proxy (MCP Apps, web hosts): a page on its own origin that holds the view in an inner iframe
// and passes JSON-RPC messages between it and the host, except its own ui/notifications/sandbox-* ones.
// The view is a srcdoc document, so it inherits this page's Content-Security-Policy (built by the host
// process from the view's _meta.ui.csp).
"use strict";
(() => {
  const hostOrigin = document.documentElement.dataset.hostOrigin;
  const PREFIX = "ui/notifications/sandbox-";
  let inner = null;

  const ownMethod = (message) => typeof message?.method === "string" && message.method.startsWith(PREFIX);

  function load(params) {
    if (inner !== null || typeof params?.html !== "string") return; // one view per sandbox
    inner = document.createElement("iframe");
    inner.setAttribute("sandbox", typeof params.sandbox === "string" ? params.sandbox : "allow-scripts allow-same-origin allow-forms");
    const allow = [];
    const permissions = params.permissions || {};
    if (permissions.camera) allow.push("camera");
    if (permissions.microphone) allow.push("microphone");
    if (permissions.geolocation) allow.push("geolocation");
    if (permissions.clipboardWrite) allow.push("clipboard-write");
    if (allow.length) inner.setAttribute("allow", allow.join("; "));
    inner.title = "MCP App view";
    inner.srcdoc = params.html;
    document.body.append(inner);
  }

  window.addEventListener("message", (event) => {
    const message = event.data;
    if (event.source === window.parent && event.origin === hostOrigin) {
      if (message?.method === PREFIX + "resource-ready") load(message.params);
      else if (!ownMethod(message) && inner?.contentWindow) inner.contentWindow.postMessage(message, "*");
    } else if (inner !== null && event.source === inner.contentWindow && !ownMethod(message)) {
      window.parent.postMessage(message, hostOrigin);
    }
  });
  window.parent.postMessage({ jsonrpc: "2.0", method: PREFIX + "proxy-ready", params: {} }, hostOrigin);
})();
