// The run page, live: new answer text, log text and transcript entries pushed by the server (server-sent
// events), always added as text, never as HTML. At the end the server sends the run's final facts and
// they are shown in place: no reload, so the reader keeps their place and what they unfolded.
// The elements built here are the ones templates/run.html renders: the two must agree.
(function () {
  "use strict";
  var transcript = document.getElementById("transcript");
  var entries = document.getElementById("entries");
  var output = document.getElementById("output");
  var log = document.getElementById("log");
  if (!transcript || !transcript.dataset.events || !window.EventSource) { return; }

  function element(tag, className, text) {
    var made = document.createElement(tag);
    if (className) { made.className = className; }
    if (text !== undefined) { made.textContent = text; }
    return made;
  }

  function diff(text) {
    var pre = element("pre", "diff");
    text.split("\n").forEach(function (line) {
      var kind = line[0] === "+" ? "add" : line[0] === "-" ? "del" : line.slice(0, 2) === "@@" ? "hunk" : "same";
      pre.append(element("span", kind, line));
    });
    return pre;
  }

  function result(call, entry) {
    var text = entry.kind === "tool" ? entry.result : entry.text;
    var folded = element("details", "result");
    var lines = text.replace(/\n+$/, "").split("\n").length;
    var said = (entry.failed ? "Failed" : entry.held ? "Held for a person" : "Result") + " (" + lines + " line" + (lines === 1 ? "" : "s") + ")";
    folded.append(element("summary", "", said));
    folded.append(element("pre", "", text));
    call.append(folded);
    if (entry.failed) { call.classList.add("failed"); }
    if (entry.held) { call.classList.add("held"); }
  }

  function tool(entry) {
    var call = element("div", "entry tool" + (entry.failed ? " failed" : ""));
    call.dataset.toolId = entry.tool_id;
    var line = element("div", "call");
    line.append(element("span", "tool-name", entry.tool), " ", element("code", "", entry.summary));
    call.append(line);
    if (entry.given) { call.append(element("pre", "given", entry.given)); }
    if (entry.diff) { call.append(diff(entry.diff)); }
    if (entry.result !== null) { result(call, entry); }  // Codex says a command once it is done, with its output
    return call;
  }

  function add(entry) {
    if (entry.kind === "result") {
      var calls = entries.querySelectorAll(".tool");
      for (var index = calls.length - 1; index >= 0; index--) {
        if (calls[index].dataset.toolId === entry.tool_id) { result(calls[index], entry); return; }
      }
      return;
    }
    var last = entries.lastElementChild;
    if (entry.kind === "answer" && last && last.classList.contains("text") && (!entry.text || last.textContent === entry.text)) {
      last.className = "entry answer";  // the final answer repeats the agent's last words: said once
      return;
    }
    if (entry.kind === "answer" && !entry.text) { return; }
    var said = entry.kind === "tool" ? tool(entry)
      : element("div", "entry " + entry.kind + (entry.failed ? " failed" : ""), entry.text);
    entries.append(said);
  }

  function show(facts) {
    document.querySelectorAll("[data-fact]").forEach(function (fact) { fact.textContent = facts[fact.dataset.fact]; });
    document.getElementById("status").className = "status-" + facts.status;
  }

  function finish(facts) {
    show(facts);
    if (facts.pr) {
      var link = element("a", "", "#" + facts.pr.number + " " + facts.pr.title);
      link.href = facts.pr.url;
      link.rel = "noopener noreferrer";
      document.getElementById("pr").replaceChildren(link);
    }
    var changed = document.getElementById("changed");
    changed.replaceChildren.apply(changed, facts.changed.map(function (name) {
      var item = element("li");
      var code = element("code", "", name);
      if (Object.prototype.hasOwnProperty.call(facts.edits, name)) {
        var folded = element("details", "edit");
        var summary = element("summary");
        summary.append(code);
        folded.append(summary, diff(facts.edits[name]));
        item.append(folded);
      } else {
        item.append(code);
      }
      return item;
    }));
    document.getElementById("no-changes").hidden = facts.changed.length > 0;
    document.getElementById("commits").textContent = facts.commits;
    document.getElementById("changes").hidden = false;
    ["live", "actions"].forEach(function (id) { var gone = document.getElementById(id); if (gone) { gone.remove(); } });
  }

  var source = new EventSource(transcript.dataset.events);  // from the offsets the server rendered up to
  source.addEventListener("output", function (event) { output.append(JSON.parse(event.data)); });
  source.addEventListener("log", function (event) { log.append(JSON.parse(event.data)); });
  source.addEventListener("entries", function (event) {
    transcript.classList.add("events");
    JSON.parse(event.data).forEach(add);
  });
  source.addEventListener("status", function (event) { show(JSON.parse(event.data)); });
  source.addEventListener("final", function (event) { source.close(); finish(JSON.parse(event.data)); });
}());
