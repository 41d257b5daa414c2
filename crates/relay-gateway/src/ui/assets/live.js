// The live trace of a running job: follows GET /api/jobs/{id}/events (the session cookie
// authenticates it) from the last event the server rendered. EventSource reconnects by itself
// and sends Last-Event-ID, so a dropped connection resumes without gaps or repeats.
// Every value is set with textContent: nothing from the stream is parsed as HTML.
"use strict";
(function () {
  var body = document.getElementById("timeline");
  if (!body || body.dataset.live !== "true") return;
  var status = document.getElementById("live-status");
  var url = "/api/jobs/" + encodeURIComponent(body.dataset.job) +
    "/events?after=" + encodeURIComponent(body.dataset.after || "0");
  var source = new EventSource(url);
  // The kinds the worker writes (the SSE event name is the kind).
  var kinds = ["llm_call", "tool_start", "tool_call", "progress", "stage", "decision", "action",
    "validation_failure", "error", "log", "message"];

  function str(v) { return typeof v === "string" ? v : ""; }
  // Mirrors `detail` in ui/job.rs.
  function detail(kind, p) {
    switch (kind) {
      case "llm_call": return str(p.role) + " " + str(p.model) + " " + str(p.outcome);
      case "tool_call":
        return str(p.tool) + " " + str(p.args) + " " + (p.ok ? "ok" : "error: " + str(p.error));
      case "stage": return str(p.stage) + " " + str(p.phase);
      case "decision": return str(p.decision);
      case "action": return str(p.action);
      case "log": return str(p.about) + ": " + str(p.note);
      default: return JSON.stringify(p);
    }
  }
  function clip(text, max) { return text.length > max ? text.slice(0, max) + "\u2026" : text; }
  function tokens(p) {
    if (typeof p.tokens_in === "number" && typeof p.tokens_out === "number") {
      return p.tokens_in + "/" + p.tokens_out;
    }
    return typeof p.result_tokens === "number" ? String(p.result_tokens) : "";
  }
  function duration(p) {
    if (typeof p.latency_ms === "number") return String(p.latency_ms);
    return typeof p.duration_ms === "number" ? String(p.duration_ms) : "";
  }
  function cell(row, text, className) {
    var td = document.createElement("td");
    td.textContent = text;
    if (className) td.className = className;
    row.appendChild(td);
  }
  function add(message) {
    var event;
    try { event = JSON.parse(message.data); } catch (e) { return; }
    if (body.querySelector('tr[data-cursor="' + Number(event.cursor) + '"]')) return;
    var p = event.payload || {};
    var row = document.createElement("tr");
    row.className = "event live-new";
    row.dataset.cursor = String(event.cursor);
    cell(row, str(event.at).slice(11, 23));
    cell(row, str(event.agent));
    cell(row, str(event.type));
    cell(row, clip(detail(str(event.type), p), 300), "detail");
    cell(row, tokens(p), "num");
    cell(row, duration(p), "num");
    body.appendChild(row);
  }
  kinds.forEach(function (kind) { source.addEventListener(kind, add); });
  source.addEventListener("end", function () {
    source.close();
    status.dataset.live = "false";
    status.textContent = "Finished. Reload for the final attempt outcomes.";
  });
  source.onerror = function () {
    if (source.readyState === EventSource.CLOSED) {
      status.textContent = "The live stream stopped (signed out?). Reload to try again.";
    } else {
      status.textContent = "Reconnecting\u2026";
    }
  };
  source.onopen = function () {
    status.textContent = "Running: new events appear here as they happen.";
  };
})();
