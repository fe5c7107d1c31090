/*
 * runx_sha256: SHA-256 of a short JavaScript string, as lowercase hex, in one call.
 *
 * node:crypto's one-shot hash goes through OpenSSL's EVP layer on every call (a digest
 * context and a provider context allocated, initialised and freed, plus Node's argument and
 * output-buffer handling). For the short strings the data store and the receipts hash (event
 * JSON, chain templates, records: tens to hundreds of bytes) that set-up costs more than the
 * hashing. This addon hashes with the SHA256_* functions of the OpenSSL that Node itself is
 * linked with (the same block code, SHA extensions included), on a stack context and a stack
 * copy of the string's UTF-8 bytes: no allocation.
 *
 * The caller (src/crypto/sha256.ts) passes only strings whose UTF-8 form fits MAX_INPUT bytes
 * (at most MAX_INPUT / 3 UTF-16 units) and hashes longer input with node:crypto. A string that
 * does not fit is refused with a RangeError rather than hashed in part.
 *
 * Strings are read as Node reads them for node:crypto (unpaired surrogates become U+FFFD), so
 * both give the same digest for every string; the runtime's tests check that.
 */
#define OPENSSL_SUPPRESS_DEPRECATED 1
#include <node_api.h>
#include <openssl/sha.h>
#include <string.h>

/* Bytes of UTF-8 hashed from the stack (the caller sends at most this many). */
#define MAX_INPUT 4095

static const char HEX[] = "0123456789abcdef";

static napi_value hash_string(napi_env env, napi_callback_info info, int prefixed) {
  size_t argc = 1;
  napi_value argv[1];
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok) return NULL;
  napi_valuetype type = napi_undefined;
  if (argc != 1 || napi_typeof(env, argv[0], &type) != napi_ok || type != napi_string) {
    napi_throw_type_error(env, NULL, "runx_sha256: expected one string");
    return NULL;
  }
  /*
   * Node writes whole characters only (at most 4 bytes each) and stops before one that does not
   * fit, so with room for MAX_INPUT + 4 bytes a longer string always fills more than MAX_INPUT:
   * it is refused below rather than hashed in part. (+1: Node keeps a byte for a terminator.)
   */
  char bytes[MAX_INPUT + 4 + 1];
  size_t length = 0;
  if (napi_get_value_string_utf8(env, argv[0], bytes, sizeof bytes, &length) != napi_ok) return NULL;
  if (length > MAX_INPUT) {
    napi_throw_range_error(env, NULL, "runx_sha256: string is longer than 4095 UTF-8 bytes");
    return NULL;
  }
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256_CTX context;
  if (SHA256_Init(&context) != 1 || SHA256_Update(&context, bytes, length) != 1 ||
      SHA256_Final(digest, &context) != 1) {
    napi_throw_error(env, NULL, "runx_sha256: SHA-256 failed");
    return NULL;
  }
  char out[7 + 2 * SHA256_DIGEST_LENGTH];
  size_t at = 0;
  if (prefixed) {
    memcpy(out, "sha256:", 7);
    at = 7;
  }
  for (size_t i = 0; i < SHA256_DIGEST_LENGTH; i++) {
    out[at++] = HEX[digest[i] >> 4];
    out[at++] = HEX[digest[i] & 15];
  }
  napi_value result;
  if (napi_create_string_latin1(env, out, at, &result) != napi_ok) return NULL;
  return result;
}

/* sha256Hex(text): 64 lowercase hex digits. */
static napi_value sha256_hex(napi_env env, napi_callback_info info) {
  return hash_string(env, info, 0);
}

/* sha256Prefixed(text): "sha256:" and 64 lowercase hex digits. */
static napi_value sha256_prefixed(napi_env env, napi_callback_info info) {
  return hash_string(env, info, 1);
}

NAPI_MODULE_INIT() {
  napi_property_descriptor methods[] = {
      {"sha256Hex", NULL, sha256_hex, NULL, NULL, NULL, napi_enumerable, NULL},
      {"sha256Prefixed", NULL, sha256_prefixed, NULL, NULL, NULL, napi_enumerable, NULL},
  };
  if (napi_define_properties(env, exports, 2, methods) != napi_ok) return NULL;
  return exports;
}
