// The host page's own script: it uses streampace's public API only. A module after
// the tag's, so window.streampace exists when it runs.
window.acmeHost = { loadedAt: Date.now() };

// One conversation per visitor: a random session id, kept while the tab lives (an
// app with accounts would mint one on its server instead). A fixed id would put
// every visitor into the same conversation.
const sessionId = sessionStorage.getItem("acme-session") || crypto.randomUUID();
sessionStorage.setItem("acme-session", sessionId);
window.streampace.connect(`/ws/sessions/${sessionId}`);

const statusEl = document.getElementById("embed-status");
const button = document.getElementById("ask-button");
const answer = document.getElementById("answer");

answer.addEventListener("streampace:ready", () => {
  statusEl.textContent = "Assistant ready.";
  button.disabled = false;
});
answer.addEventListener("streampace:run-end", (ev) => {
  const { status, error } = ev.detail; // "finished", "stopped" or "error"
  statusEl.textContent = status === "finished" ? "Answered."
    : status === "stopped" ? "Stopped." : `Problem: ${error}`;
  button.disabled = false;
});
answer.addEventListener("streampace:error", (ev) => {
  statusEl.textContent = `Problem: ${ev.detail.message}`;
});

document.getElementById("ask").addEventListener("submit", (ev) => {
  ev.preventDefault();
  const prompt = document.getElementById("question").value.trim();
  if (!prompt || !window.streampace) return;
  button.disabled = true;
  statusEl.textContent = "Answering…";
  window.streampace.send({ type: "run", prompt, scenario: "demo" });
});
