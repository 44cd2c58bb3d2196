/* login_page: the admin UI's login form, GET /login (HTML) and
 * GET /login.js (its script; the Content-Security-Policy allows no inline
 * script). The form posts the token to POST /api/v1/login as JSON, keeps
 * the CSRF token it gets back in sessionStorage and goes to "/". Public:
 * the page holds no data. */
#ifndef SS_WEB_LOGIN_PAGE_H
#define SS_WEB_LOGIN_PAGE_H

extern const char login_page_html[];
extern const char login_page_js[];

#endif
