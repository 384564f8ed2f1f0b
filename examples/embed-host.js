// The host page's own script: it uses streampace's public API only.
window.acmeHost = { loadedAt: Date.now() };

const statusEl = document.getElementById("embed-status");
const button = document.getElementById("ask-button");
const answer = document.getElementById("answer");

answer.addEventListener("streampace:ready", () => {
  statusEl.textContent = "Assistant ready.";
  button.disabled = false;
});
answer.addEventListener("streampace:run-end", (ev) => {
  statusEl.textContent = ev.detail.status === "finished" ? "Answered." : `Stopped: ${ev.detail.error}`;
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
