# tests/integration/tls_lib.sh — throw-away certificates for the TLS tests
# (t_search_tls, t_source_tls), made with openssl at test time. Sourced.
#
#   tls_ca DIR NAME            a self-signed CA: DIR/NAME.crt, DIR/NAME.key
#   tls_cert DIR NAME CA [DAYS_FROM DAYS_TO]
#                              a server/client certificate for 127.0.0.1 and
#                              localhost signed by CA: DIR/NAME.crt, DIR/NAME.key;
#                              with DAYS_FROM/DAYS_TO (e.g. -30 -1) its validity
#                              is that range of days around now (an expired one)
# shellcheck shell=bash

tls_ca() {
    local dir="$1" name="$2"
    openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=searchsync test $name" \
        -keyout "$dir/$name.key" -out "$dir/$name.crt" 2>/dev/null ||
        { echo "tls_ca: openssl failed" >&2; return 1; }
}

tls_cert() {
    local dir="$1" name="$2" ca="$3" from="${4:-}" to="${5:-}" period
    openssl req -newkey rsa:2048 -nodes -subj "/CN=localhost" \
        -keyout "$dir/$name.key" -out "$dir/$name.csr" 2>/dev/null || return 1
    printf 'subjectAltName = IP:127.0.0.1, DNS:localhost\nextendedKeyUsage = serverAuth, clientAuth\n' \
        >"$dir/$name.ext"
    if [ -n "$from" ]; then
        # openssl 3 `x509 -req` has no -not_before; `ca` takes explicit dates
        local d="$dir/$name.cadb"
        mkdir -p "$d" && : >"$d/index.txt" && echo 01 >"$d/serial"
        printf '[ca]\ndefault_ca = c\n[c]\ndatabase = %s/index.txt\nserial = %s/serial\nnew_certs_dir = %s\ndefault_md = sha256\npolicy = p\ncopy_extensions = copy\n[p]\ncommonName = supplied\n' \
            "$d" "$d" "$d" >"$d/ca.cnf"
        openssl ca -batch -config "$d/ca.cnf" -cert "$dir/$ca.crt" -keyfile "$dir/$ca.key" \
            -startdate "$(date -u -d "$from days" +%Y%m%d%H%M%SZ)" \
            -enddate "$(date -u -d "$to days" +%Y%m%d%H%M%SZ)" -extfile "$dir/$name.ext" \
            -in "$dir/$name.csr" -out "$dir/$name.crt" 2>/dev/null
    else
        openssl x509 -req -in "$dir/$name.csr" -CA "$dir/$ca.crt" -CAkey "$dir/$ca.key" \
            -CAcreateserial -days 2 -extfile "$dir/$name.ext" -out "$dir/$name.crt" 2>/dev/null
    fi || { echo "tls_cert: openssl failed for $name" >&2; return 1; }
    chmod 644 "$dir/$name.key"
}
