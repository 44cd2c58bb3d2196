/* search_auth: the [search] keys that secure the engine connection — API key,
 * bearer token, AWS SigV4 signing — into struct search_opts (the rest of it
 * is filled by deliver_search_opts, which calls this). Kept apart so that
 * src/search/ stays free of the configuration. */
#include "config.h"
#include "search/search.h"

void search_opts_secured(struct search_opts *so, const struct ss_config *c) {
    so->user = c->search.user;
    so->password = c->search.password; /* [search] password_file read by config_load */
    so->api_key = c->search.api_key;
    so->bearer_token = c->search.bearer_token;
    so->aws_sigv4 = c->search.aws_sigv4;
    so->aws_region = c->search.aws_region;
    so->aws_service = c->search.aws_service;
    so->aws_access_key_id = c->search.aws_access_key_id;
    so->aws_secret_access_key = c->search.aws_secret_access_key;
    so->aws_session_token = c->search.aws_session_token;
    so->ca_file = c->search.ca_file;
    so->client_cert = c->search.client_cert;
    so->client_key = c->search.client_key;
    so->tls_verify = c->search.tls_verify;
}
