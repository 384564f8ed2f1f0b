// The host page's own script: it uses streampace's public API only. A module after
// the tag's, so window.streampace exists when it runs.
window.acmeHost = { loadedAt: Date.now() };

// One conversation per visitor: `new` asks the server for a session whose id it
// mints (a key nobody can guess; the tag follows it on every reconnect). A fixed
// id would put every visitor into the same conversation.
window.streampace.connect("/ws/sessions/new");

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
