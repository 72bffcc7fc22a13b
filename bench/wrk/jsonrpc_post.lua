-- wrk script for http_bench.py: JSON-RPC tools/call POSTs, each with a new id, every response checked.
--
--   wrk -t T -c C -d D -s jsonrpc_post.lua URL -- CHECK HEAD TAIL N "Name: value"... [SESSION...]
--
-- Each request's body is HEAD .. id .. TAIL (the id counts up per thread, so no two calls in flight in
-- one session share an id). The N "Name: value" arguments are headers of every request; any further
-- arguments are legacy session ids, one per wrk thread (thread i sends Mcp-Session-Id: SESSION[i]),
-- so a thread's connections are one client's session. A response counts as bad unless its status is
-- 200 and its body holds CHECK (the echoed text; a JSON body or an SSE event, whichever the server
-- sends). done() prints one line, "WRK_RESULT " and JSON, that http_bench.py reads.

local threads = {}
local count = 0

function setup(thread)
  count = count + 1
  thread:set("thread_number", count)
  table.insert(threads, thread)
end

function init(args)
  check, head, tail = args[1], args[2], args[3]
  local n = tonumber(args[4])
  headers = {}
  for i = 5, 4 + n do
    local name, value = string.match(args[i], "^([^:]+):%s*(.*)$")
    headers[name] = value
  end
  local sessions = {}
  for i = 5 + n, #args do
    table.insert(sessions, args[i])
  end
  if #sessions > 0 then
    headers["Mcp-Session-Id"] = sessions[(thread_number - 1) % #sessions + 1]
  end
  next_id = 0
  bad = 0
  first_bad = ""
end

function request()
  next_id = next_id + 1
  return wrk.format("POST", nil, headers, head .. next_id .. tail)
end

function response(status, response_headers, body)
  if status ~= 200 or not string.find(body, check, 1, true) then
    bad = bad + 1
    if first_bad == "" then
      first_bad = status .. " " .. string.sub(body, 1, 200)
    end
  end
end

local function quote(text)
  return '"' .. string.gsub(text, '[%c"\\]', function(c) return string.format("\\u%04x", string.byte(c)) end) .. '"'
end

function done(summary, latency, requests)
  local bad_total, first = 0, ""
  for _, thread in ipairs(threads) do
    bad_total = bad_total + thread:get("bad")
    if first == "" then first = thread:get("first_bad") end
  end
  local errors = summary.errors
  io.write(string.format(
    'WRK_RESULT {"requests":%d,"duration_us":%d,"bad":%d,"first_bad":%s,' ..
    '"socket_errors":%d,"p50_us":%d,"p99_us":%d,"max_us":%d}\n',
    summary.requests, summary.duration, bad_total, quote(first),
    errors.connect + errors.read + errors.write + errors.timeout,
    latency:percentile(50), latency:percentile(99), latency.max))
end
