#include "common.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int cs_fail(cs_err *err, int code, const char *fmt, ...) {
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
        err->code = code;
    }
    return code;
}

void cs_err_prefix(cs_err *err, const char *fmt, ...) {
    if (!err) return;
    char head[CS_ERRMSG_LEN], old[CS_ERRMSG_LEN];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(head, sizeof head, fmt, ap);
    va_end(ap);
    memcpy(old, err->msg, sizeof old);
    snprintf(err->msg, sizeof err->msg, "%s%s", head, old);
}
