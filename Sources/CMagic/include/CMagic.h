#ifndef CMAGIC_H
#define CMAGIC_H

#include <magic.h>

// libmagic's API is plain C and imports directly; these shims only give Swift the flag
// values, whose macros some builds define as expressions Swift does not import.

/// Report only the MIME type ("image/jpeg"), not the long description.
static inline int CMagic_flag_mime_type(void) { return MAGIC_MIME_TYPE; }

/// Skip checks that cannot matter for media and are slow: compressed files, tar, ELF, CDF, JSON, CSV.
static inline int CMagic_flags_skip_slow_checks(void) {
    return MAGIC_NO_CHECK_COMPRESS | MAGIC_NO_CHECK_TAR | MAGIC_NO_CHECK_ELF | MAGIC_NO_CHECK_CDF
#ifdef MAGIC_NO_CHECK_JSON
        | MAGIC_NO_CHECK_JSON
#endif
#ifdef MAGIC_NO_CHECK_CSV
        | MAGIC_NO_CHECK_CSV
#endif
        ;
}

#endif
