/* login_page: the login form and its script (see login_page.h). */
#include "login_page.h"

const char login_page_html[] =
    "<!DOCTYPE html>\n"
    "<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
    "<title>searchsync: log in</title>\n"
    "<script type=\"module\" src=\"/login.js\"></script></head>\n"
    "<body><main><h1>searchsync</h1>\n"
    "<form id=\"login\"><label for=\"token\">Admin token</label>\n"
    "<input id=\"token\" name=\"token\" type=\"password\" autocomplete=\"current-password\" "
    "required autofocus>\n"
    "<button type=\"submit\">Log in</button>\n"
    "<p id=\"error\" role=\"alert\"></p></form></main></body></html>\n";

const char login_page_js[] =
    "// POST the token as JSON; the session cookie is HttpOnly, the CSRF token\n"
    "// goes with every mutating call in X-CSRF-Token.\n"
    "const form = document.getElementById('login');\n"
    "form.addEventListener('submit', async (ev) => {\n"
    "  ev.preventDefault();\n"
    "  const err = document.getElementById('error');\n"
    "  err.textContent = '';\n"
    "  const res = await fetch('/api/v1/login', {\n"
    "    method: 'POST', credentials: 'same-origin',\n"
    "    headers: {'Content-Type': 'application/json'},\n"
    "    body: JSON.stringify({token: document.getElementById('token').value}),\n"
    "  });\n"
    "  const body = await res.json().catch(() => ({error: 'HTTP ' + res.status}));\n"
    "  if (!res.ok) { err.textContent = body.error + (body.hint ? ': ' + body.hint : ''); return; }\n"
    "  sessionStorage.setItem('csrf_token', body.csrf_token);\n"
    "  location.assign('/');\n"
    "});\n";
