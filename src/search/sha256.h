/* sha256: SHA-256 of a buffer as lowercase hex, for the payload hash AWS
 * SigV4 signing sends in x-amz-content-sha256 (src/search/client.c). libcurl
 * signs the request but exports no hash; a few lines here spare a libcrypto
 * dependency. */
#ifndef SS_SEARCH_SHA256_H
#define SS_SEARCH_SHA256_H
#include <stddef.h>

/* hex: 64 characters and a NUL */
void sha256_hex(const void *data, size_t len, char hex[65]);

#endif
