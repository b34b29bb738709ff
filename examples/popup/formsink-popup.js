/*! formsink-popup.js: an email popup that posts to formsink. No dependencies.
 *
 * <script src="/formsink-popup.js" data-key="fs_pk_..." data-endpoint="https://forms.example.com" defer></script>
 *
 * data-key       a publishable key (required)
 * data-endpoint  where formsink serves /api/submission (default: where this script came from)
 * data-popup-id  the popupId of the submissions (default "popup")
 * data-title, data-text, data-button, data-success   the popup's words
 * data-delay     milliseconds before the popup shows (default 0)
 *
 * It also takes over any <form data-formsink> on the page (the form that works without
 * JavaScript, see the README): with JavaScript it posts with fetch and shows the answer inline.
 */
(() => {
  const script = document.currentScript;
  if (!script) return;
  const attr = (name, fallback) => script.getAttribute(`data-${name}`) || fallback;
  const key = attr("key");
  const endpoint = attr("endpoint", new URL(script.src, location.href).origin).replace(/\/+$/, "");
  const popupId = attr("popup-id", "popup");
  const seenKey = `formsink:${popupId}`;

  // Hex of 16 random bytes: the Idempotency-Key of one submission, kept across its retry.
  // (crypto.randomUUID exists only on https pages.)
  const newId = () => Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => (b + 256).toString(16).slice(1)).join("");

  const post = (apiKey, body, id) =>
    fetch(`${endpoint}/api/submission`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": apiKey, "idempotency-key": id },
      body,
    });

  /** Sends a form's fields as a submission; resolves to an error message, or "" on success. */
  async function submit(form) {
    const data = {};
    let gotcha = "";
    for (const [name, value] of new FormData(form)) {
      if (typeof value !== "string") continue;
      if (name === "_gotcha") gotcha = value;
      else if (name !== "popupId" && name[0] !== "_") data[name] = name in data ? [].concat(data[name], value) : value;
    }
    const body = JSON.stringify({ popupId: form.elements.popupId?.value || popupId, data, _gotcha: gotcha });
    const apiKey = form.elements._key?.value || key;
    const id = newId();
    let response;
    try {
      response = await post(apiKey, body, id);
    } catch {
      // One retry with the same Idempotency-Key: if the first request did arrive, formsink
      // answers with that submission instead of storing a second one.
      try {
        response = await post(apiKey, body, id);
      } catch {
        return "We could not reach the server. Please check your connection and try again.";
      }
    }
    if (response.ok) return "";
    const answer = await response.json().catch(() => ({}));
    return answer.message || `Something went wrong (${response.status}). Please try again.`;
  }

  /** Posts `form` with fetch when it is submitted, and writes the outcome into `status`. */
  function enhance(form, status, onSuccess) {
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const button = form.querySelector("[type=submit]");
      if (button) button.disabled = true;
      status.className = "msg";
      status.textContent = "Sending…";
      const error = await submit(form);
      if (button) button.disabled = false;
      status.className = error ? "msg error" : "msg ok";
      status.textContent = error || attr("success", "Thank you! You're on the list.");
      if (!error) onSuccess();
    });
  }

  const remember = () => {
    try {
      localStorage.setItem(seenKey, "1");
    } catch {}
  };
  const dismissed = () => {
    try {
      return localStorage.getItem(seenKey) === "1";
    } catch {
      return false;
    }
  };

  const escape = (text) => text.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);

  function showPopup() {
    const host = document.createElement("div");
    host.setAttribute("data-formsink-popup", popupId);
    const root = host.attachShadow({ mode: "open" });
    root.innerHTML = `<style>
.backdrop{position:fixed;inset:0;background:rgba(15,23,42,.45);display:flex;align-items:center;justify-content:center;z-index:2147483647;font:16px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif}
form{position:relative;background:#fff;color:#0f172a;width:min(24rem,calc(100vw - 2rem));padding:1.75rem;border-radius:14px;box-shadow:0 20px 50px rgba(0,0,0,.25);box-sizing:border-box}
h2{margin:0 0 .4rem;font-size:1.35rem}p{margin:0 0 1rem;color:#475569}
input{width:100%;box-sizing:border-box;padding:.7rem .8rem;border:1px solid #cbd5e1;border-radius:8px;font:inherit;margin-bottom:.8rem}
button{font:inherit;cursor:pointer}.send{width:100%;padding:.7rem;border:0;border-radius:8px;background:#4f46e5;color:#fff;font-weight:600}
.send:disabled{opacity:.6}.x{position:absolute;top:.5rem;right:.6rem;border:0;background:none;font-size:1.5rem;color:#64748b}
.hp{position:absolute;left:-9999px}.msg{margin:.8rem 0 0;min-height:1.2em}.ok{color:#15803d}.error{color:#b91c1c}
</style>
<div class="backdrop"><form role="dialog" aria-modal="true" aria-labelledby="title">
<button type="button" class="x" aria-label="Close">×</button>
<h2 id="title">${escape(attr("title", "Stay in the loop"))}</h2>
<p>${escape(attr("text", "Get our news in your inbox. No spam, unsubscribe any time."))}</p>
<input type="email" name="email" required autocomplete="email" placeholder="you@example.com" aria-label="Email">
<div class="hp" aria-hidden="true"><input name="_gotcha" tabindex="-1" autocomplete="off"></div>
<button type="submit" class="send">${escape(attr("button", "Subscribe"))}</button>
<p class="msg" role="status" aria-live="polite"></p>
</form></div>`;
    const form = root.querySelector("form");
    const close = () => {
      remember();
      host.remove();
    };
    root.querySelector(".x").addEventListener("click", close);
    root.addEventListener("keydown", (event) => event.key === "Escape" && close());
    enhance(form, root.querySelector(".msg"), () => {
      remember();
      form.querySelector("input[type=email]").disabled = true;
      form.querySelector(".send").hidden = true;
    });
    document.body.append(host);
    form.querySelector("input[type=email]").focus();
  }

  const start = () => {
    for (const form of document.querySelectorAll("form[data-formsink]")) {
      let status = form.querySelector("[data-formsink-status]");
      if (!status) {
        status = form.appendChild(document.createElement("p"));
        status.setAttribute("role", "status");
      }
      enhance(form, status, () => form.reset());
    }
    if (key && attr("popup", "on") !== "off" && !dismissed()) setTimeout(showPopup, Number(attr("delay", 0)));
  };
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
