// A Preact app (htm's standalone build: Preact + hooks + htm in one ES module,
// installed from npm; no bundler, no import map) rendering streampace's
// headless store. The page owns every element; streampace paces the text.
import { html, render, useEffect, useState } from "../node_modules/htm/preact/standalone.module.js";
import { createStore } from "../js_shim/streampace.js";

// useSyncExternalStore, as Preact's core hooks spell it: re-render when the
// store's snapshot changes (at most once per animation frame).
function useStore(store) {
  const [snapshot, setSnapshot] = useState(store.getSnapshot());
  useEffect(() => {
    setSnapshot(store.getSnapshot());
    return store.subscribe(() => setSnapshot(store.getSnapshot()));
  }, [store]);
  return snapshot;
}

function Message({ message }) {
  return html`<div class="turn" data-role=${message.role} data-id=${message.id}
                   data-done=${message.done ? "true" : "false"}>
    ${message.reasoning ? html`<details><summary>Reasoning</summary>${message.reasoning}</details>` : null}
    <div class="text" dir="auto">${message.text}</div>
    ${(message.toolCalls || []).map((call) => html`<div class="tool" key=${call.id}>
      ${call.name}(${call.args})${call.result != null ? html` → ${String(call.result)}` : null}</div>`)}
  </div>`;
}

function App({ store }) {
  const snapshot = useStore(store);
  const [prompt, setPrompt] = useState("Why pace streamed text?");
  const ask = (event) => {
    event.preventDefault();
    store.send({ type: "run", prompt });
  };
  const { run, connection } = snapshot;
  return html`
    <form onSubmit=${ask}>
      <input aria-label="Your question" value=${prompt}
             onInput=${(e) => setPrompt(e.currentTarget.value)} />
      <button type="submit" disabled=${run.status === "running"}>Ask</button>
    </form>
    <p class="run" role="status" data-run=${run.status} data-connection=${connection.state}>
      ${run.status === "running" ? "Generating…" : run.status === "idle" ? "" : run.status}
      ${run.error ? `: ${run.error}` : ""}
      ${connection.problem ? ` (${connection.problem.message})` : ""}
    </p>
    ${snapshot.messages.map((m) => html`<${Message} key=${m.key} message=${m} />`)}`;
}

// ?stream= picks the session stream (default: a new session on this server).
const stream = new URLSearchParams(location.search).get("stream") || "/ws/sessions/new";
const store = await createStore({ stream });
window.exampleStore = store; // for the browser test
render(html`<${App} store=${store} />`, document.getElementById("app"));
