/*
 * hash.c - SHA-256 through libcrypto's EVP interface; used for the compile
 * cache key and, later, content addresses of variants.
 */
#include "kb.h"

#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct kb_hasher {
	EVP_MD_CTX *ctx;
};

kb_hasher *kb_hash_new(void)
{
	kb_hasher *h = kb_xmalloc(sizeof *h);
	h->ctx = EVP_MD_CTX_new();
	if (!h->ctx || EVP_DigestInit_ex(h->ctx, EVP_sha256(), NULL) != 1)
		KB_UNREACHABLE();
	return h;
}

void kb_hash_update(kb_hasher *h, const void *p, size_t n)
{
	EVP_DigestUpdate(h->ctx, p, n);
}

void kb_hash_str(kb_hasher *h, const char *s)
{
	uint64_t n = s ? strlen(s) : 0;
	kb_hash_update(h, &n, sizeof n);
	if (n)
		kb_hash_update(h, s, n);
}

void kb_hash_final(kb_hasher *h, char hex[KB_HASH_HEX])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int n = 0;
	EVP_DigestFinal_ex(h->ctx, md, &n);
	for (unsigned i = 0; i < n && i < 32; i++)
		snprintf(hex + 2 * i, 3, "%02x", md[i]);
	hex[64] = '\0';
	EVP_MD_CTX_free(h->ctx);
	free(h);
}

char *kb_base64_encode(const void *p, size_t n)
{
	char *out = kb_xmalloc(4 * ((n + 2) / 3) + 1);
	EVP_EncodeBlock((unsigned char *)out, p, (int)n);
	return out;
}

int kb_base64_decode(const char *s, void **out, size_t *n)
{
	size_t len = strlen(s);
	*out = NULL;
	*n = 0;
	if (len % 4)
		return KB_EINVAL;
	unsigned char *b = kb_xmalloc(len / 4 * 3 + 1);
	int got = EVP_DecodeBlock(b, (const unsigned char *)s, (int)len);
	if (got < 0) {
		free(b);
		return KB_EINVAL;
	}
	/* EVP_DecodeBlock counts the padding's zero bytes */
	for (size_t i = len; i > 0 && s[i - 1] == '='; i--)
		got--;
	*out = b;
	*n = (size_t)got;
	return KB_OK;
}
