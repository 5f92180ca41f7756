#ifndef CCURL_H
#define CCURL_H

// Type-checking macros would wrap the variadic calls below; the shims are the type check.
#define CURL_DISABLE_TYPECHECK 1
#include <curl/curl.h>
#include "CCurlAddressPolicy.h"

// libcurl's setopt/getinfo calls are C variadic functions, which Swift cannot call.
// Each shim below fixes one argument type so Swift sees an ordinary typed function.

/// curl_easy_setopt with a `long` argument (flags, counts, enums).
static inline CURLcode CCurl_easy_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}

/// curl_easy_setopt with a `curl_off_t` argument (the *_LARGE options).
static inline CURLcode CCurl_easy_setopt_off_t(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}

/// curl_easy_setopt with a C string argument (libcurl copies it).
static inline CURLcode CCurl_easy_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}

/// curl_easy_setopt with an opaque pointer argument (WRITEDATA, PRIVATE, HTTPHEADER lists).
static inline CURLcode CCurl_easy_setopt_pointer(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}

/// curl_easy_setopt(CURLOPT_WRITEFUNCTION): the callback has a fixed C signature.
static inline CURLcode CCurl_easy_setopt_write_function(CURL *handle, curl_write_callback callback) {
    return curl_easy_setopt(handle, CURLOPT_WRITEFUNCTION, callback);
}

/// curl_easy_setopt(CURLOPT_HEADERFUNCTION): same signature as the write callback.
static inline CURLcode CCurl_easy_setopt_header_function(CURL *handle, curl_write_callback callback) {
    return curl_easy_setopt(handle, CURLOPT_HEADERFUNCTION, callback);
}

/// curl_easy_setopt(CURLOPT_SOCKOPTFUNCTION): called with each socket libcurl opened.
static inline CURLcode CCurl_easy_setopt_sockopt_function(CURL *handle, curl_sockopt_callback callback) {
    return curl_easy_setopt(handle, CURLOPT_SOCKOPTFUNCTION, callback);
}

/// curl_easy_setopt(CURLOPT_CLOSESOCKETFUNCTION): closes the sockets libcurl is done with.
static inline CURLcode CCurl_easy_setopt_closesocket_function(CURL *handle, curl_closesocket_callback callback) {
    return curl_easy_setopt(handle, CURLOPT_CLOSESOCKETFUNCTION, callback);
}

/// curl_easy_getinfo for `long` results (response code, redirect count).
static inline CURLcode CCurl_easy_getinfo_long(CURL *handle, CURLINFO info, long *out) {
    return curl_easy_getinfo(handle, info, out);
}

/// curl_easy_getinfo for `curl_off_t` results (content length, sizes).
static inline CURLcode CCurl_easy_getinfo_off_t(CURL *handle, CURLINFO info, curl_off_t *out) {
    return curl_easy_getinfo(handle, info, out);
}

/// curl_easy_getinfo for C string results (effective URL, content type, CURLINFO_PRIVATE).
static inline CURLcode CCurl_easy_getinfo_string(CURL *handle, CURLINFO info, char **out) {
    return curl_easy_getinfo(handle, info, out);
}

/// curl_multi_setopt with a `long` argument.
static inline CURLMcode CCurl_multi_setopt_long(CURLM *handle, CURLMoption option, long value) {
    return curl_multi_setopt(handle, option, value);
}

/// CURLMsg.data is a union, which Swift imports awkwardly: read the transfer's result here.
static inline CURLcode CCurl_msg_result(const CURLMsg *message) {
    return message->data.result;
}

/// Whether a CURLMsg reports a finished transfer (the only kind libcurl defines today).
static inline int CCurl_msg_is_done(const CURLMsg *message) {
    return message->msg == CURLMSG_DONE;
}

/// 1 when libcurl's URL parser takes `proxy` the way CURLOPT_PROXY parses it (curl_url_set with
/// CURLU_NON_SUPPORT_SCHEME and CURLU_GUESS_SCHEME), 0 when it would refuse it: a proxy libcurl
/// refuses fails every transfer with an error message that repeats the proxy, password included.
static inline int CCurl_proxy_parses(const char *proxy) {
    CURLU *url = curl_url();
    if (url == NULL) return 0;
    CURLUcode result = curl_url_set(url, CURLUPART_URL, proxy, CURLU_NON_SUPPORT_SCHEME | CURLU_GUESS_SCHEME);
    curl_url_cleanup(url);
    return result == CURLUE_OK;
}

/// The flags for curl_global_init: the macro is an expression Swift does not import.
static inline long CCurl_global_all(void) { return CURL_GLOBAL_ALL; }

/// CURL_WRITEFUNC_PAUSE-free error value: returning anything but the byte count aborts a transfer.
static inline size_t CCurl_write_abort(void) { return 0; }

#endif
