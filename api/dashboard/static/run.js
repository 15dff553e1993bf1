// The run page, live: new answer and log text pushed by the server (server-sent events), appended as
// text (never as HTML); at the end the page reloads to show the final record.
(function () {
  "use strict";
  var output = document.getElementById("output");
  var log = document.getElementById("log");
  var status = document.getElementById("status");
  if (!output || !output.dataset.events || !window.EventSource) { return; }
  var source = new EventSource(output.dataset.events);  // from the offsets the server rendered up to
  source.addEventListener("output", function (event) { output.append(JSON.parse(event.data)); });
  source.addEventListener("log", function (event) { log.append(JSON.parse(event.data)); });
  source.addEventListener("status", function (event) { status.textContent = JSON.parse(event.data).status; });
  source.addEventListener("final", function () { source.close(); window.location.reload(); });
}());
