// The development host page: loads one tool's view the way an MCP Apps host does, through the official
// host-side bridge (AppBridge of @modelcontextprotocol/ext-apps, bundled as window.McpAppBridge). The
// MCP server is reached through POST /mcp on this origin, which the plainmcp process forwards through
// its own MCP client. window.plainmcpHost is the handle the browser tests (tests/apps) drive.
"use strict";
(async () => {
  const { AppBridge, PostMessageTransport } = window.McpAppBridge;
  const root = document.documentElement;
  const status = document.getElementById("status");
  const log = document.getElementById("log");
  const record = { messages: [], modelContext: null, logs: [], calls: [], sizes: [] };

  function note(text) {
    const item = document.createElement("li");
    item.textContent = text; // never markup: everything here comes from the server or the view
    log.append(item);
  }
  function setState(state, text) {
    root.dataset.state = state;
    status.textContent = text || state;
    if (state === "error") status.dataset.error = "";
  }

  async function mcp(caller, method, params) {
    const response = await fetch("/mcp", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ caller, method, params }),
    });
    const answer = await response.json();
    note(`${caller} ${method} ${params?.name || params?.uri || ""} -> ${answer.error ? "error " + answer.error.code : "ok"}`);
    if (answer.error) throw new Error(`${answer.error.message} (${answer.error.code})`);
    return answer.result;
  }

  // The specification's standard variables, in light-dark() pairs so one set serves both themes.
  const variables = {
    "--color-background-primary": "light-dark(#ffffff, #171717)",
    "--color-background-secondary": "light-dark(#f5f5f4, #262626)",
    "--color-background-danger": "light-dark(#fde8e8, #4c1616)",
    "--color-background-warning": "light-dark(#fff4d6, #463510)",
    "--color-text-primary": "light-dark(#171717, #fafafa)",
    "--color-text-secondary": "light-dark(#57534e, #c4c4c4)",
    "--color-text-danger": "light-dark(#a61b1b, #ff8a8a)",
    "--color-text-warning": "light-dark(#7a5200, #ffd27a)",
    "--color-border-primary": "light-dark(#d6d3d1, #404040)",
    "--color-border-danger": "light-dark(#e05252, #ff6b6b)",
    "--color-ring-primary": "light-dark(#2563eb, #60a5fa)",
    "--font-sans": "system-ui, sans-serif",
    "--font-mono": "ui-monospace, monospace",
    "--border-radius-md": "8px",
  };

  let session;
  try {
    session = await (await fetch("/session")).json();
  } catch (error) {
    setState("error", `cannot load the session: ${error}`);
    return;
  }
  document.getElementById("tool").textContent = `${session.tool.name} ${JSON.stringify(session.arguments)}`;
  let theme = session.theme === "dark" ? "dark" : "light";
  root.dataset.theme = theme;
  const ui = session.view.ui || {};
  const context = () => ({
    theme,
    styles: { variables },
    displayMode: "inline",
    availableDisplayModes: ["inline"],
    platform: "web",
    locale: navigator.language,
    timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone,
    containerDimensions: { maxHeight: 1600 },
    toolInfo: { tool: session.tool },
  });

  const frame = document.createElement("iframe");
  frame.id = "sandbox";
  frame.title = `${session.tool.name} view`;
  frame.setAttribute("sandbox", "allow-scripts allow-same-origin allow-forms");
  const allow = window.McpAppBridge.buildAllowAttribute(ui.permissions);
  if (allow) frame.setAttribute("allow", allow);
  if (ui.prefersBorder === false) frame.classList.add("borderless");
  document.getElementById("frame").append(frame);

  const capabilities = { serverTools: {}, serverResources: {}, logging: {}, sandbox: { csp: ui.csp || {}, permissions: ui.permissions || {} } };
  const bridge = new AppBridge(null, { name: "plainmcp-app-host", version: "1" }, capabilities, { hostContext: context() });
  bridge.oncalltool = async (params) => {
    record.calls.push(params);
    return await mcp("app", "tools/call", params);
  };
  bridge.onreadresource = async (params) => await mcp("app", "resources/read", params);
  bridge.onloggingmessage = (params) => { record.logs.push(params); note(`view log ${params.level}: ${JSON.stringify(params.data)}`); };
  bridge.onmessage = async (params) => { record.messages.push(params); note("view message"); return {}; };
  bridge.onupdatemodelcontext = async (params) => { record.modelContext = params; note("view model context"); return {}; };
  bridge.onsizechange = ({ height }) => {
    record.sizes.push(height);
    if (typeof height === "number" && height > 0) frame.style.height = `${Math.min(Math.ceil(height), 1600)}px`;
  };
  bridge.onsandboxready = () => {
    bridge.sendSandboxResourceReady({ html: session.view.html, csp: ui.csp, permissions: ui.permissions });
  };

  async function callTool(args) {
    setState("calling");
    try {
      const result = await mcp("host", "tools/call", { name: session.tool.name, arguments: args });
      await bridge.sendToolResult(result);
      setState("result", result.isError ? "the tool reported an error" : "result sent");
      return result;
    } catch (error) {
      await bridge.sendToolCancelled({ reason: String(error.message || error) });
      setState("error", String(error.message || error));
      return null;
    }
  }

  let initialized;
  const ready = new Promise((resolve) => { initialized = resolve; });
  bridge.oninitialized = async () => {
    setState("initialized");
    await bridge.sendToolInput({ arguments: session.arguments });
    initialized();
    await callTool(session.arguments);
  };

  await bridge.connect(new PostMessageTransport(frame.contentWindow, frame.contentWindow));
  frame.src = `${session.sandbox}/sandbox?csp=${encodeURIComponent(JSON.stringify(ui.csp || null))}`;

  document.getElementById("theme").addEventListener("click", (event) => {
    theme = theme === "dark" ? "light" : "dark";
    root.dataset.theme = theme;
    event.currentTarget.setAttribute("aria-pressed", String(theme === "dark"));
    event.currentTarget.textContent = theme === "dark" ? "Light theme" : "Dark theme";
    bridge.setHostContext(context());
  });
  document.getElementById("again").addEventListener("click", () => callTool(session.arguments));

  window.plainmcpHost = {
    record,
    ready,
    session,
    // A new result for the view: the host calls the tool again (other arguments) and sends the result.
    async call(args) {
      await bridge.sendToolInput({ arguments: args });
      return await callTool(args);
    },
    setTheme(next) { theme = next; root.dataset.theme = next; bridge.setHostContext(context()); },
  };
})();
