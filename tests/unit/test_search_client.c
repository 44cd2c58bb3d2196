/* test_search_client: the libcurl client against a tiny HTTP server in a
 * thread (loopback, ephemeral port): failover from a dead address, basic
 * auth and API key headers, gzip request bodies, kept-alive connections,
 * timeouts, and engine detection through search_detect. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <zlib.h>

#include "log.h"
#include "search/search.h"

struct srv {
    int fd, port;
    pthread_t th;
    int mode;         /* 0 answer, 1 never answer (timeout) */
    char last_req[65536];
    size_t last_len;
    int accepts;      /* connections accepted */
    int requests;
    const char *reply_body;
};

static ssize_t read_request(int c, char *buf, size_t cap) {
    size_t len = 0;
    for (;;) {
        ssize_t n = read(c, buf + len, cap - len - 1);
        if (n <= 0) return n == 0 && len == 0 ? 0 : (ssize_t)len;
        len += (size_t)n;
        buf[len] = '\0';
        char *hend = strstr(buf, "\r\n\r\n");
        if (!hend) continue;
        size_t clen = 0;
        char *cl = strcasestr(buf, "Content-Length:");
        if (cl && cl < hend) clen = strtoul(cl + 15, NULL, 10);
        if (len >= (size_t)(hend + 4 - buf) + clen) return (ssize_t)len;
    }
}

static void *serve(void *arg) {
    struct srv *s = arg;
    for (;;) {
        int c = accept(s->fd, NULL, NULL);
        if (c < 0) return NULL;
        s->accepts++;
        for (;;) {
            ssize_t n = read_request(c, s->last_req, sizeof s->last_req);
            if (n <= 0) break;
            s->last_len = (size_t)n;
            s->requests++;
            if (s->mode == 1) {
                sleep(2);
                break;
            }
            const char *b = s->reply_body;
            char hdr[256];
            int hn = snprintf(hdr, sizeof hdr,
                              "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                              "Content-Length: %zu\r\n\r\n", strlen(b));
            if (write(c, hdr, (size_t)hn) < 0 || write(c, b, strlen(b)) < 0) break;
        }
        close(c);
    }
}

static void srv_start(struct srv *s, int mode) {
    memset(s, 0, sizeof *s);
    s->mode = mode;
    s->reply_body = "{\"version\":{\"distribution\":\"opensearch\",\"number\":\"2.19.1\"}}";
    s->fd = socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    setsockopt(s->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    assert_int_equal(bind(s->fd, (struct sockaddr *)&a, sizeof a), 0);
    socklen_t al = sizeof a;
    getsockname(s->fd, (struct sockaddr *)&a, &al);
    s->port = ntohs(a.sin_port);
    assert_int_equal(listen(s->fd, 8), 0);
    pthread_create(&s->th, NULL, serve, s);
}

static void srv_stop(struct srv *s) {
    shutdown(s->fd, SHUT_RDWR);
    close(s->fd);
    pthread_join(s->th, NULL);
}

static int dead_port(void) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    bind(fd, (struct sockaddr *)&a, sizeof a);
    socklen_t al = sizeof a;
    getsockname(fd, (struct sockaddr *)&a, &al);
    close(fd); /* bound once, now nobody listens there */
    return ntohs(a.sin_port);
}

/* An engine upgraded under the client: detection again gives the new
 * dialect, and a dialect read before stays readable (other threads may
 * still be building a body with it). */
static void t_redetect_upgrade(void **st) {
    (void)st;
    log_set_level(LOG_OFF);
    struct srv s;
    srv_start(&s, 0);
    s.reply_body = "{\"version\":{\"distribution\":\"opensearch\",\"number\":\"1.3.13\"}}";
    char urls[64], err[256];
    snprintf(urls, sizeof urls, "http://127.0.0.1:%d", s.port);
    struct search_opts o = {.urls = urls, .timeout_ms = 2000, .connect_timeout_ms = 500,
                            .tls_verify = true};
    struct search_client *c = search_client_new(&o, err, sizeof err);
    assert_non_null(c);
    assert_null(search_client_dialect(c));
    struct search_conn *k = search_conn_new(c);
    assert_int_equal(search_detect(c, k, err, sizeof err), 0);
    const struct search_dialect *before = search_client_dialect(c);
    assert_string_equal(before->name, "opensearch-1");
    assert_int_equal(search_detect(c, k, err, sizeof err), 0); /* the same: kept */
    assert_ptr_equal(before, search_client_dialect(c));
    s.reply_body = "{\"version\":{\"distribution\":\"opensearch\",\"number\":\"2.19.1\"}}";
    assert_int_equal(search_detect(c, k, err, sizeof err), 0);
    assert_string_equal(search_client_dialect(c)->name, "opensearch-2");
    assert_string_equal(search_client_dialect(c)->number, "2.19.1");
    assert_string_equal(before->number, "1.3.13");
    s.reply_body = "{\"version\":{\"number\":\"8.19.4\",\"build_flavor\":\"default\"},\"tagline\":\"You Know, for Search\"}";
    assert_int_equal(search_detect(c, k, err, sizeof err), 0);
    assert_string_equal(search_client_dialect(c)->name, "elasticsearch-8");
    search_conn_free(k);
    search_client_free(c);
    srv_stop(&s);
}

static void t_failover_auth_detect(void **st) {
    (void)st;
    log_set_level(LOG_OFF);
    struct srv s;
    srv_start(&s, 0);
    char urls[256], err[256];
    snprintf(urls, sizeof urls, "http://127.0.0.1:%d/, http://127.0.0.1:%d", dead_port(), s.port);
    struct search_opts o = {.urls = urls, .user = "elastic", .password = "s3cret",
                            .timeout_ms = 2000, .connect_timeout_ms = 500, .compress = true,
                            .tls_verify = true};
    struct search_client *c = search_client_new(&o, err, sizeof err);
    assert_non_null(c);
    assert_int_equal(search_client_nurls(c), 2);
    struct search_conn *k = search_conn_new(c);
    assert_int_equal(search_detect(c, k, err, sizeof err), 0);
    assert_string_equal(search_client_dialect(c)->name, "opensearch-2");
    /* basic auth: base64("elastic:s3cret") */
    assert_non_null(strstr(s.last_req, "Authorization: Basic ZWxhc3RpYzpzM2NyZXQ="));
    assert_non_null(strstr(s.last_req, "GET / HTTP/1.1"));
    /* a big body is gzipped; the connection is reused */
    sbuf body = SBUF_INIT;
    for (int i = 0; i < 200; i++) sbuf_printf(&body, "{\"index\":{\"_id\":\"%d\"}}\n{}\n", i);
    struct search_resp r;
    search_resp_init(&r);
    assert_int_equal(search_request(k, "POST", "/_bulk", "application/x-ndjson", body.data,
                                    body.len, &r), SEARCH_OK);
    assert_int_equal(r.status, 200);
    assert_non_null(strstr(s.last_req, "Content-Encoding: gzip"));
    assert_non_null(strstr(s.last_req, "Content-Type: application/x-ndjson"));
    char *payload = strstr(s.last_req, "\r\n\r\n") + 4;
    size_t plen = s.last_len - (size_t)(payload - s.last_req);
    char out[16384];
    z_stream z;
    memset(&z, 0, sizeof z);
    inflateInit2(&z, 15 + 16);
    z.next_in = (Bytef *)payload;
    z.avail_in = (uInt)plen;
    z.next_out = (Bytef *)out;
    z.avail_out = sizeof out;
    assert_int_equal(inflate(&z, Z_FINISH), Z_STREAM_END);
    assert_int_equal(z.total_out, body.len);
    assert_memory_equal(out, body.data, body.len);
    inflateEnd(&z);
    assert_int_equal(s.accepts, 1); /* kept alive */
    assert_int_equal(s.requests, 2);
    search_resp_free(&r);
    sbuf_free(&body);
    search_conn_free(k);
    search_client_free(c);
    srv_stop(&s);
}

static void t_api_key_and_timeout(void **st) {
    (void)st;
    log_set_level(LOG_OFF);
    struct srv s;
    srv_start(&s, 0);
    char urls[128], err[256];
    snprintf(urls, sizeof urls, "http://127.0.0.1:%d", s.port);
    struct search_opts o = {.urls = urls, .api_key = "a2V5OnNlY3JldA==", .timeout_ms = 1000,
                            .connect_timeout_ms = 500};
    struct search_client *c = search_client_new(&o, err, sizeof err);
    struct search_conn *k = search_conn_new(c);
    struct search_resp r;
    search_resp_init(&r);
    assert_int_equal(search_request(k, "GET", "/", NULL, NULL, 0, &r), SEARCH_OK);
    assert_non_null(strstr(s.last_req, "Authorization: ApiKey a2V5OnNlY3JldA=="));
    /* small bodies are not compressed */
    assert_int_equal(search_request(k, "PUT", "/i", NULL, "{}", 2, &r), SEARCH_OK);
    assert_null(strstr(s.last_req, "Content-Encoding"));
    s.mode = 1; /* stop answering: the request times out */
    assert_int_equal(search_request(k, "GET", "/", NULL, NULL, 0, &r), SEARCH_ETRANSPORT);
    assert_true(strlen(r.err) > 0);
    search_resp_free(&r);
    search_conn_free(k);
    search_client_free(c);
    srv_stop(&s);
}

static void t_bad_urls(void **st) {
    (void)st;
    char err[256];
    struct search_opts o = {.urls = " , "};
    assert_null(search_client_new(&o, err, sizeof err));
    assert_non_null(strstr(err, "empty"));
    o.urls = "localhost:9200";
    assert_null(search_client_new(&o, err, sizeof err));
    assert_non_null(strstr(err, "http://"));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(t_failover_auth_detect),
        cmocka_unit_test(t_redetect_upgrade),
        cmocka_unit_test(t_api_key_and_timeout),
        cmocka_unit_test(t_bad_urls),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
