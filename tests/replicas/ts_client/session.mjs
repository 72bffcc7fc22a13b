// One whole session of the official TypeScript SDK client (v2, @modelcontextprotocol/client) against an MCP
// endpoint, in one era: node session.mjs legacy|modern URL
//
// tools/list, several calls, a resource subscription (legacy: resources/subscribe, the SDK's GET stream and
// its notification handler; modern: client.listen) hearing changes the session triggers, an elicitation the
// SDK's elicitation/create handler answers (legacy: a server request; modern: input_required, auto-fulfilled
// by the SDK), and a task through the official tasks client, @modelcontextprotocol/ext-tasks (legacy: the
// 2025-11-25 tasks; modern: the tasks extension).. Prints one JSON line: what the SDK returned, for the Python test to assert.
// Every wait is bounded; the process exits 1 with the error on stderr when anything throws.
import { pathToFileURL } from 'node:url';

const sdk = await import(pathToFileURL(process.env.PLAINMCP_TS_SDK).href);
const { Client, StreamableHTTPClientTransport } = sdk;
const tasks = await import(pathToFileURL(process.env.PLAINMCP_TS_TASKS).href);

const [era, url] = process.argv.slice(2);
const modern = era === 'modern';
const WATCHED = 'test://watched-resource';
const TASKS = 'io.modelcontextprotocol/tasks';
const TRIGGERS = 3;

function within(ms, promise, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

const texts = (result) => result.content.map((block) => block.text);
const report = { era };
const elicited = [];
const updates = [];
const rawStatuses = [];
let rawIds = 0;
let heard = null;
const heardAll = new Promise((resolve) => { heard = resolve; });

const client = new Client(
  { name: 'ts-sdk-replicas', version: '0.0.0' },
  {
    capabilities: { elicitation: { form: {} }, ...(modern ? { extensions: { [TASKS]: {} } } : {}) },
    versionNegotiation: { mode: modern ? { pin: '2026-07-28' } : 'legacy' },
  },
);
client.setRequestHandler('elicitation/create', async (request) => {
  elicited.push({ message: request.params.message, schema: request.params.requestedSchema });
  return { action: 'accept', content: { username: 'ada', email: 'ada@example.com' } };
});
client.setNotificationHandler('notifications/resources/updated', (notification) => {
  updates.push(notification.params.uri);
  if (updates.length >= TRIGGERS) heard();
});

const transport = new StreamableHTTPClientTransport(new URL(url));
await within(15000, client.connect(transport), 'connect');
report.protocolVersion = client.getNegotiatedProtocolVersion();
report.era = client.getProtocolEra();
report.server = client.getServerVersion()?.name;
report.sessionId = transport.sessionId ?? null;

const tools = await within(10000, client.listTools(), 'tools/list');
report.tools = tools.tools.map((tool) => tool.name).sort();
const slowCompute = tools.tools.find((tool) => tool.name === 'slow_compute');

report.calls = [];
for (let n = 0; n < 5; n++) {
  report.calls.push(texts(await within(10000, client.callTool({ name: 'test_simple_text', arguments: {} }), 'call'))[0]);
}
report.greeting = texts(await within(10000, client.callTool({ name: 'greet', arguments: { name: 'TS' } }), 'greet'))[0];

// The subscription, then changes the session itself triggers: round-robin sends each trigger to another replica.
let subscription = null;
if (modern) {
  subscription = await within(10000, client.listen({ resourceSubscriptions: [WATCHED] }), 'listen');
  report.honored = subscription.honoredFilter;
} else {
  report.subscribed = await within(10000, client.subscribeResource({ uri: WATCHED }), 'subscribe');
  await new Promise((resolve) => setTimeout(resolve, 300)); // the SDK opens its GET stream after initialized
}
report.triggers = [];
for (let n = 0; n < TRIGGERS; n++) {
  const trigger = client.callTool({ name: 'test_trigger_resource_update', arguments: {} });
  report.triggers.push(texts(await within(10000, trigger, 'trigger'))[0]);
}
// Bounded; what was heard is asserted by the test, after the rest of the session.
await within(10000, heardAll, 'updates').catch(() => {});
await new Promise((resolve) => setTimeout(resolve, 300)); // and no duplicate after them
report.updates = [...updates];
if (subscription) await subscription.close();
else await within(10000, client.unsubscribeResource({ uri: WATCHED }), 'unsubscribe');

const elicitation = client.callTool({ name: 'test_elicitation', arguments: { message: 'Who are you?' } });
report.elicitation = texts(await within(15000, elicitation, 'elicitation'))[0];
report.elicited = elicited;

try {
  report.task = await task();
} catch (error) {
  // Reported as a value, so the test can say what failed after checking everything before it.
  let cause = error;
  while (cause?.cause) cause = cause.cause; // down to the schema's own complaint, when there is one
  const issues = (cause?.issues ?? []).flatMap((issue) => issue.errors?.flat() ?? [issue]);
  report.task = { error: `${error.name}: ${error.message}`, issues: issues.map((i) => `${(i.path ?? []).join('.')}: ${i.message}`) };
}
report.rawStatuses = rawStatuses;

if (!modern) await within(10000, transport.terminateSession(), 'DELETE');
await client.close();
console.log(JSON.stringify(report));
process.exit(0);

// The task goes through the official tasks client (@modelcontextprotocol/ext-tasks): it makes the call, sees
// the task, polls tasks/get and fetches the result itself. For 2026-07-28 the SDK's wire codec refuses
// `resultType: "task"`, so ext-tasks asks the host for a raw request path: one POST per request, with the
// headers 2026-07-28 mirrors from the body (Mcp-Name = the tool name, or the taskId for tasks/*).
async function task() {
  const options = { endpointId: 'replicas' };
  if (modern) {
    options.rawDispatch = rawPost;
    options.v2RequestFraming = {
      protocolVersion: '2026-07-28',
      clientInfo: { name: 'ts-sdk-replicas', version: '0.0.0' },
      clientCapabilities: { elicitation: { form: {} }, extensions: { [TASKS]: {} } },
    };
  }
  const session = tasks.createTaskSessionFromClient(client, options);
  try {
    const execution = await within(10000, session.callTool('slow_compute', { seconds: 0.3, label: 'ts' }, {
      declaration: tasks.toolDeclarationFromMcpTool(slowCompute), // its execution.taskSupport, from tools/list
      task: { preference: 'require' },
    }), 'task call');
    const settled = await within(20000, execution.settle(), 'task settle');
    const result = tasks.resultFromTaskOutcome(settled.outcome);
    return { kind: execution.kind, taskId: execution.handle?.taskId ?? null, outcome: settled.outcome.kind ?? settled.outcome.status ?? null, text: texts(result)[0] };
  } finally {
    await session.close();
  }
}

async function rawPost(payload, options) {
  // ext-tasks hands over method and params; the host frames the JSON-RPC request (jsonrpc, its own id).
  const request = { jsonrpc: '2.0', id: `tasks:${++rawIds}`, ...payload };
  const params = request.params ?? {};
  const headers = {
    Accept: 'application/json, text/event-stream',
    'Content-Type': 'application/json',
    'MCP-Protocol-Version': '2026-07-28',
    'Mcp-Method': request.method,
  };
  const name = request.method === 'tools/call' ? params.name : params.taskId;
  if (typeof name === 'string') headers['Mcp-Name'] = name;
  const response = await fetch(url, { method: 'POST', headers, body: JSON.stringify(request), signal: options?.signal });
  const body = await response.text();
  rawStatuses.push(response.status);
  if ((response.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    const events = body.split(/\r?\n\r?\n/).map((block) => block.split(/\r?\n/).filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trim()).join('\n'));
    const messages = events.filter(Boolean).map((data) => JSON.parse(data));
    return messages.find((m) => m.id === request.id);
  }
  return JSON.parse(body);
}
