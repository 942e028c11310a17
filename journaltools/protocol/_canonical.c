/*
 * journaltools.protocol._canonical: proves a whole file journal canonical in one pass over its bytes.
 *
 * A line is canonical when it is exactly what the Go encoder writes for the record it decodes to. The Python
 * fast path proves it by decoding and re-encoding; this module proves it by checking the bytes against the
 * record model itself: keys in the struct's field order, each field at most once, a field Go omits when zero
 * absent when zero, strings escaped exactly as Go escapes them, integers in their one spelling and range,
 * times in Go's RFC 3339 form, raw JSON compact.
 *
 * The model is not written here: ``configure`` receives it from Python, derived from the msgspec structs of
 * ``protocol.kinds`` (``protocol.native``), so the two can never disagree on a field. It is the newest line's
 * model, in which the fields that line added (a record's time, the agent, kinds, summaries) are flagged: a scan
 * proves a line against it and says whether any flagged field was present, so the caller can refuse the proof
 * for a journal of the August build, whose encoder never writes them.
 *
 * The check is conservative: it may send a canonical line to the Python path (a key with an escape, a
 * surrogate escape inside raw JSON, nesting deeper than it follows), never the reverse. ``scan_journal``
 * answers None for anything it does not prove, and the caller then takes the Python path for the journal.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

enum field_type {
    T_STR = 0,         /* a string Go always writes */
    T_STR_OMIT = 1,    /* a string Go omits when empty */
    T_INT64 = 2,       /* an int64 Go always writes */
    T_INT64_OMIT = 3,  /* an int64 Go omits when zero */
    T_UINT64 = 4,      /* a uint64 Go always writes */
    T_BOOL_OMIT = 5,   /* a bool Go omits when false */
    T_TIME = 6,        /* a time.Time: a string in Go's RFC 3339 form */
    T_BYTES_OMIT = 7,  /* a []byte Go omits when empty: padded standard base64 */
    T_RAW = 8,         /* json.RawMessage: compact JSON, kept verbatim */
    T_OBJECT = 9,      /* a nested struct Go always writes */
    T_OBJECT_OMIT = 10, /* a pointer to a struct, omitted when nil (never written as null) */
    T_LIST_OR_NULL = 11, /* a slice of structs: null (nil) or an array */
    T_UINT_MAP_OR_NULL = 12, /* a map[string]uint64: null (nil) or an object with sorted keys */
    T_TIME_OMIT = 13,  /* a time.Time Go omits when zero (omitzero): never the zero time */
    T_INT_MAP_OMIT = 14, /* a map of int keys to int64 values, omitted when empty: decimal keys sorted as text */
    T_TYPE_COUNT = 15
};

#define MAX_FIELDS 32
#define MAX_SCHEMAS 64
#define MAX_RAW_DEPTH 200
/* The protocol index of a record whose protocol id is none of the configured ones (the caller reads it). */
#define OTHER_PROTOCOL 255

typedef struct {
    char *name;
    Py_ssize_t name_length;
    int type;
    int schema; /* the nested struct's schema for T_OBJECT, T_OBJECT_OMIT and T_LIST_OR_NULL */
    int newest_only; /* a field only the newest line writes: a scan reports that it saw one */
} field;

typedef struct {
    int count;
    field fields[MAX_FIELDS];
} schema;

typedef struct {
    int configured;
    int schema_count;
    schema schemas[MAX_SCHEMAS];
    /* the record schema's fields that the scan reports */
    int seq_field;
    int protocol_field;
    int optional_field;
    /* the protocol ids the scan recognises; a record with any other id is left to the Python path */
    int protocol_count;
    char *protocols[MAX_FIELDS];
    Py_ssize_t protocol_lengths[MAX_FIELDS];
} model;

static model the_model;

typedef struct {
    const unsigned char *p;
    const unsigned char *end;
    int newest; /* set when a field flagged newest_only was present */
} cursor;

/* What one record line reports to the caller. */
typedef struct {
    uint64_t seq;
    int protocol;
    int optional;
} envelope;

static int check_object(cursor *c, int schema_index, envelope *out, int depth);

/* -- strings ------------------------------------------------------------------------------------------------ */

/* The length of a valid UTF-8 sequence starting at p (its lead byte >= 0x80), 0 for an invalid one. */
static int utf8_sequence(const unsigned char *p, const unsigned char *end) {
    unsigned char lead = p[0];
    if (lead >= 0xC2 && lead <= 0xDF) {
        return (end - p >= 2 && (p[1] & 0xC0) == 0x80) ? 2 : 0;
    }
    if (lead >= 0xE0 && lead <= 0xEF) {
        if (end - p < 3 || (p[1] & 0xC0) != 0x80 || (p[2] & 0xC0) != 0x80) return 0;
        if (lead == 0xE0 && p[1] < 0xA0) return 0; /* overlong */
        if (lead == 0xED && p[1] >= 0xA0) return 0; /* a surrogate */
        return 3;
    }
    if (lead >= 0xF0 && lead <= 0xF4) {
        if (end - p < 4 || (p[1] & 0xC0) != 0x80 || (p[2] & 0xC0) != 0x80 || (p[3] & 0xC0) != 0x80) return 0;
        if (lead == 0xF0 && p[1] < 0x90) return 0; /* overlong */
        if (lead == 0xF4 && p[1] >= 0x90) return 0; /* beyond U+10FFFF */
        return 4;
    }
    return 0;
}

/* U+2028 and U+2029, which Go always escapes. */
static int is_line_separator(const unsigned char *p, int length) {
    return length == 3 && p[0] == 0xE2 && p[1] == 0x80 && (p[2] == 0xA8 || p[2] == 0xA9);
}

static int hex_value(unsigned char h) {
    if (h >= '0' && h <= '9') return h - '0';
    if (h >= 'a' && h <= 'f') return h - 'a' + 10;
    if (h >= 'A' && h <= 'F') return h - 'A' + 10;
    return -1;
}

/* The first byte at or after p that is not plain string text (a quote, a backslash, <, >, &, a control byte or a
 * byte of a multi-byte character), or end: the one loop that sees most of a journal's bytes. */
static const unsigned char *skip_plain_text(const unsigned char *p, const unsigned char *end) {
#if defined(__SSE2__)
    const __m128i quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\'), less = _mm_set1_epi8('<');
    const __m128i greater = _mm_set1_epi8('>'), ampersand = _mm_set1_epi8('&'), space = _mm_set1_epi8(0x20);
    while (end - p >= 16) {
        __m128i chunk = _mm_loadu_si128((const __m128i *)p);
        /* signed: a byte of 0x80 or more is negative, so "below space" also finds multi-byte characters */
        __m128i special = _mm_or_si128(
            _mm_or_si128(_mm_cmpeq_epi8(chunk, quote), _mm_cmpeq_epi8(chunk, backslash)),
            _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(chunk, less), _mm_cmpeq_epi8(chunk, greater)),
                         _mm_or_si128(_mm_cmpeq_epi8(chunk, ampersand), _mm_cmplt_epi8(chunk, space))));
        int found = _mm_movemask_epi8(special);
        if (found) return p + __builtin_ctz((unsigned)found);
        p += 16;
    }
#endif
    while (p < end && *p >= 0x20 && *p < 0x80 && *p != '"' && *p != '\\' && *p != '<' && *p != '>' && *p != '&') p++;
    return p;
}

/* The code unit of the four hex digits at p in Go's spelling (lowercase), -1 for any other spelling. */
static int lowercase_hex4(const unsigned char *p) {
    int value = 0;
    for (int i = 0; i < 4; i++) {
        if (p[i] >= 'A' && p[i] <= 'F') return -1;
        int digit = hex_value(p[i]);
        if (digit < 0) return -1;
        value = value * 16 + digit;
    }
    return value;
}

/* Whether Go writes this code unit as a \u escape (every other character is written as itself or a short escape). */
static int go_writes_as_unicode_escape(int unit) {
    if (unit < 0x20) return unit != '\b' && unit != '\t' && unit != '\n' && unit != '\f' && unit != '\r';
    return unit == '<' || unit == '>' || unit == '&' || unit == 0x2028 || unit == 0x2029;
}

/* A string at c->p (its opening quote); the cursor moves past the closing quote. Outside raw JSON (``raw`` 0) it
 * must be exactly as Go writes it. Inside raw JSON any valid escape is kept verbatim, but the bytes Go's encoder
 * escapes there too (<, >, &, U+2028, U+2029) must already be escaped, and a surrogate escape is left to the
 * Python path. */
static int check_string(cursor *c, int raw) {
    const unsigned char *p = c->p, *end = c->end;
    if (p >= end || *p != '"') return 0;
    p++;
    for (;;) {
        p = skip_plain_text(p, end);
        if (p >= end) return 0;
        unsigned char b = *p;
        if (b == '"') {
            c->p = p + 1;
            return 1;
        }
        if (b < 0x20 || b == '<' || b == '>' || b == '&') return 0;
        if (b == '\\') {
            if (end - p < 2) return 0;
            unsigned char e = p[1];
            if (e == '"' || e == '\\' || e == 'b' || e == 'f' || e == 'n' || e == 'r' || e == 't' || (raw && e == '/')) {
                p += 2;
                continue;
            }
            if (e != 'u' || end - p < 6) return 0;
            if (raw) {
                int unit = 0;
                for (int i = 0; i < 4; i++) {
                    int digit = hex_value(p[2 + i]);
                    if (digit < 0) return 0;
                    unit = unit * 16 + digit;
                }
                if (unit >= 0xD800 && unit <= 0xDFFF) return 0;
            } else {
                int unit = lowercase_hex4(p + 2);
                if (unit < 0 || !go_writes_as_unicode_escape(unit)) return 0;
            }
            p += 6;
            continue;
        }
        int length = utf8_sequence(p, end); /* skip_plain_text stops at no other plain byte */
        if (length == 0 || is_line_separator(p, length)) return 0;
        p += length;
    }
}

static int check_go_string(cursor *c) { return check_string(c, 0); }

static int check_raw_string(cursor *c) { return check_string(c, 1); }

/* -- scalars ------------------------------------------------------------------------------------------------ */

/* An unsigned decimal in its one spelling (no sign, no leading zero) within uint64. */
static int check_uint64(cursor *c, uint64_t *value) {
    const unsigned char *p = c->p, *end = c->end;
    if (p >= end || *p < '0' || *p > '9') return 0;
    if (*p == '0') {
        if (p + 1 < end && p[1] >= '0' && p[1] <= '9') return 0;
        *value = 0;
        c->p = p + 1;
        return 1;
    }
    uint64_t v = 0;
    while (p < end && *p >= '0' && *p <= '9') {
        uint64_t digit = (uint64_t)(*p - '0');
        if (v > (UINT64_MAX - digit) / 10) return 0;
        v = v * 10 + digit;
        p++;
    }
    *value = v;
    c->p = p;
    return 1;
}

/* A signed decimal in its one spelling within int64; ``nonzero`` is set when it is not 0. */
static int check_int64(cursor *c, int *nonzero) {
    int negative = 0;
    if (c->p < c->end && *c->p == '-') {
        negative = 1;
        c->p++;
    }
    uint64_t magnitude;
    if (!check_uint64(c, &magnitude)) return 0;
    if (negative && magnitude == 0) return 0; /* -0 re-encodes as 0 */
    if (magnitude > (negative ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX)) return 0;
    *nonzero = magnitude != 0;
    return 1;
}

static int literal(cursor *c, const char *text, Py_ssize_t length) {
    if (c->end - c->p < length || memcmp(c->p, text, (size_t)length) != 0) return 0;
    c->p += length;
    return 1;
}

static int digits(const unsigned char *p, int count) {
    for (int i = 0; i < count; i++) {
        if (p[i] < '0' || p[i] > '9') return 0;
    }
    return 1;
}

static int two_digits(const unsigned char *p) { return (p[0] - '0') * 10 + (p[1] - '0'); }

/* A time exactly as Go's time.Time.MarshalJSON writes it: YYYY-MM-DDTHH:MM:SS, then up to nine fraction digits
 * without trailing zeros, then Z or a non-zero +HH:MM / -HH:MM offset; and a date that exists. */
static int check_go_time(cursor *c) {
    static const int days_in_month[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    const unsigned char *p = c->p, *end = c->end;
    if (end - p < 22 || *p != '"') return 0; /* "YYYY-MM-DDTHH:MM:SSZ" */
    p++;
    if (!digits(p, 4) || p[4] != '-' || !digits(p + 5, 2) || p[7] != '-' || !digits(p + 8, 2) || p[10] != 'T' ||
        !digits(p + 11, 2) || p[13] != ':' || !digits(p + 14, 2) || p[16] != ':' || !digits(p + 17, 2)) {
        return 0;
    }
    int year = (p[0] - '0') * 1000 + (p[1] - '0') * 100 + two_digits(p + 2);
    int month = two_digits(p + 5), day = two_digits(p + 8);
    if (month < 1 || month > 12 || day < 1) return 0;
    int leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    int last_day = days_in_month[month - 1] + (month == 2 && leap);
    if (day > last_day) return 0;
    if (two_digits(p + 11) > 23 || two_digits(p + 14) > 59 || two_digits(p + 17) > 59) return 0;
    p += 19;
    if (p < end && *p == '.') {
        const unsigned char *first = ++p;
        while (p < end && *p >= '0' && *p <= '9') p++;
        long count = p - first;
        if (count < 1 || count > 9 || p[-1] == '0') return 0;
    }
    if (p < end && *p == 'Z') {
        p++;
    } else {
        if (end - p < 6 || (*p != '+' && *p != '-') || !digits(p + 1, 2) || p[3] != ':' || !digits(p + 4, 2)) return 0;
        if (two_digits(p + 1) > 23 || two_digits(p + 4) > 59) return 0;
        /* Go's RFC 3339 layout writes a zero offset as Z, whatever the location: +00:00 and -00:00 are never its */
        if (two_digits(p + 1) == 0 && two_digits(p + 4) == 0) return 0;
        p += 6;
    }
    if (p >= end || *p != '"') return 0;
    c->p = p + 1;
    return 1;
}

/* A time Go omits when zero: written only when it is not Go's zero time (which marshals as exactly this). */
static int check_go_time_not_zero(cursor *c) {
    static const char zero[] = "\"0001-01-01T00:00:00Z\"";
    const Py_ssize_t zero_length = (Py_ssize_t)sizeof(zero) - 1;
    if (c->end - c->p >= zero_length && memcmp(c->p, zero, (size_t)zero_length) == 0) return 0;
    return check_go_time(c);
}

static int base64_value(unsigned char b) {
    if (b >= 'A' && b <= 'Z') return b - 'A';
    if (b >= 'a' && b <= 'z') return b - 'a' + 26;
    if (b >= '0' && b <= '9') return b - '0' + 52;
    if (b == '+') return 62;
    if (b == '/') return 63;
    return -1;
}

/* Non-empty padded standard base64 in its one spelling (the bits padding leaves over are zero). */
static int check_base64(cursor *c) {
    const unsigned char *p = c->p, *end = c->end;
    if (p >= end || *p != '"') return 0;
    const unsigned char *start = ++p;
    while (p < end && *p != '"') p++;
    if (p >= end) return 0;
    Py_ssize_t length = p - start;
    if (length == 0 || length % 4 != 0) return 0;
    int padding = start[length - 1] == '=' ? (start[length - 2] == '=' ? 2 : 1) : 0;
    for (Py_ssize_t i = 0; i < length - padding; i++) {
        if (base64_value(start[i]) < 0) return 0;
    }
    if (padding) {
        int last = base64_value(start[length - padding - 1]);
        if ((padding == 1 && (last & 0x03)) || (padding == 2 && (last & 0x0F))) return 0;
    }
    c->p = p + 1;
    return 1;
}

/* -- raw JSON ----------------------------------------------------------------------------------------------- */

static int check_raw_number(cursor *c) {
    const unsigned char *p = c->p, *end = c->end;
    if (p < end && *p == '-') p++;
    if (p >= end) return 0;
    if (*p == '0') {
        p++;
    } else if (*p >= '1' && *p <= '9') {
        while (p < end && *p >= '0' && *p <= '9') p++;
    } else {
        return 0;
    }
    if (p < end && *p == '.') {
        p++;
        if (p >= end || *p < '0' || *p > '9') return 0;
        while (p < end && *p >= '0' && *p <= '9') p++;
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
        p++;
        if (p < end && (*p == '+' || *p == '-')) p++;
        if (p >= end || *p < '0' || *p > '9') return 0;
        while (p < end && *p >= '0' && *p <= '9') p++;
    }
    c->p = p;
    return 1;
}

/* One compact JSON value (no insignificant whitespace anywhere). */
static int check_raw_value(cursor *c, int depth) {
    if (c->p >= c->end || depth > MAX_RAW_DEPTH) return 0;
    unsigned char b = *c->p;
    if (b == '"') return check_raw_string(c);
    if (b == '{') {
        c->p++;
        if (c->p < c->end && *c->p == '}') {
            c->p++;
            return 1;
        }
        for (;;) {
            if (!check_raw_string(c) || !literal(c, ":", 1) || !check_raw_value(c, depth + 1)) return 0;
            if (c->p >= c->end) return 0;
            if (*c->p == '}') {
                c->p++;
                return 1;
            }
            if (*c->p != ',') return 0;
            c->p++;
        }
    }
    if (b == '[') {
        c->p++;
        if (c->p < c->end && *c->p == ']') {
            c->p++;
            return 1;
        }
        for (;;) {
            if (!check_raw_value(c, depth + 1)) return 0;
            if (c->p >= c->end) return 0;
            if (*c->p == ']') {
                c->p++;
                return 1;
            }
            if (*c->p != ',') return 0;
            c->p++;
        }
    }
    if (b == 't') return literal(c, "true", 4);
    if (b == 'f') return literal(c, "false", 5);
    if (b == 'n') return literal(c, "null", 4);
    return check_raw_number(c);
}

/* -- maps and lists ----------------------------------------------------------------------------------------- */

/* Whether ``key`` sorts strictly after ``previous`` as bytes: Go writes a map's keys sorted by their text, and a
 * repeated key would re-encode once. */
static int strictly_after(const unsigned char *previous, Py_ssize_t previous_length, const unsigned char *key,
                          Py_ssize_t key_length) {
    Py_ssize_t shorter = key_length < previous_length ? key_length : previous_length;
    int order = memcmp(previous, key, (size_t)shorter);
    return order < 0 || (order == 0 && previous_length < key_length);
}

/* null, or an object of uint64 values whose keys (without escapes, which the Python path judges) are strictly
 * increasing byte strings: Go writes a map's keys sorted, and a repeated key would re-encode once. */
static int check_uint_map(cursor *c) {
    if (literal(c, "null", 4)) return 1;
    if (!literal(c, "{", 1)) return 0;
    if (literal(c, "}", 1)) return 1;
    const unsigned char *previous = NULL;
    Py_ssize_t previous_length = 0;
    for (;;) {
        const unsigned char *key = c->p + 1;
        if (!check_go_string(c)) return 0;
        Py_ssize_t key_length = c->p - 1 - key;
        if (memchr(key, '\\', (size_t)key_length) != NULL) return 0;
        if (previous != NULL && !strictly_after(previous, previous_length, key, key_length)) return 0;
        previous = key;
        previous_length = key_length;
        uint64_t ignored;
        if (!literal(c, ":", 1) || !check_uint64(c, &ignored)) return 0;
        if (literal(c, "}", 1)) return 1;
        if (!literal(c, ",", 1)) return 0;
    }
}

/* An int64 map key in the one spelling Go writes it: a quoted decimal, no sign but a minus, no leading zero. */
static int check_int_key(cursor *c) {
    if (!literal(c, "\"", 1)) return 0;
    int nonzero;
    if (!check_int64(c, &nonzero)) return 0;
    return literal(c, "\"", 1);
}

/* A non-empty object of int64 values keyed by int64 in decimal, the keys strictly increasing as byte strings
 * (Go sorts a map's keys by their text); an empty map is omitted, so never written. */
static int check_int_map(cursor *c) {
    if (!literal(c, "{", 1)) return 0;
    const unsigned char *previous = NULL;
    Py_ssize_t previous_length = 0;
    for (;;) {
        const unsigned char *key = c->p + 1;
        if (!check_int_key(c)) return 0;
        Py_ssize_t key_length = c->p - 1 - key;
        if (previous != NULL && !strictly_after(previous, previous_length, key, key_length)) return 0;
        previous = key;
        previous_length = key_length;
        int nonzero;
        if (!literal(c, ":", 1) || !check_int64(c, &nonzero)) return 0;
        if (literal(c, "}", 1)) return 1;
        if (!literal(c, ",", 1)) return 0;
    }
}

static int check_list(cursor *c, int schema_index, int depth) {
    if (literal(c, "null", 4)) return 1;
    if (!literal(c, "[", 1)) return 0;
    if (literal(c, "]", 1)) return 1;
    for (;;) {
        if (!check_object(c, schema_index, NULL, depth + 1)) return 0;
        if (literal(c, "]", 1)) return 1;
        if (!literal(c, ",", 1)) return 0;
    }
}

/* -- structs ------------------------------------------------------------------------------------------------ */

static int omitted_when_zero(int type) {
    return type == T_STR_OMIT || type == T_INT64_OMIT || type == T_BOOL_OMIT || type == T_BYTES_OMIT ||
           type == T_OBJECT_OMIT || type == T_TIME_OMIT || type == T_INT_MAP_OMIT;
}

static int check_value(cursor *c, const field *f, int index, envelope *out, int depth) {
    switch (f->type) {
    case T_STR:
    case T_STR_OMIT: {
        const unsigned char *start = c->p;
        if (!check_go_string(c)) return 0;
        if (f->type == T_STR_OMIT && c->p - start == 2) return 0; /* "" is omitted */
        if (out != NULL && index == the_model.protocol_field) {
            Py_ssize_t length = c->p - start - 2;
            out->protocol = OTHER_PROTOCOL;
            for (int i = 0; i < the_model.protocol_count; i++) {
                if (the_model.protocol_lengths[i] == length &&
                    memcmp(the_model.protocols[i], start + 1, (size_t)length) == 0) {
                    out->protocol = i;
                    break;
                }
            }
        }
        return 1;
    }
    case T_INT64:
    case T_INT64_OMIT: {
        int nonzero;
        if (!check_int64(c, &nonzero)) return 0;
        return f->type == T_INT64 || nonzero;
    }
    case T_UINT64: {
        uint64_t value;
        if (!check_uint64(c, &value)) return 0;
        if (out != NULL && index == the_model.seq_field) out->seq = value;
        return 1;
    }
    case T_BOOL_OMIT:
        if (!literal(c, "true", 4)) return 0; /* false is omitted */
        if (out != NULL && index == the_model.optional_field) out->optional = 1;
        return 1;
    case T_TIME:
        return check_go_time(c);
    case T_BYTES_OMIT:
        return check_base64(c);
    case T_RAW:
        return check_raw_value(c, 0);
    case T_OBJECT:
    case T_OBJECT_OMIT:
        return check_object(c, f->schema, NULL, depth + 1);
    case T_LIST_OR_NULL:
        return check_list(c, f->schema, depth);
    case T_UINT_MAP_OR_NULL:
        return check_uint_map(c);
    case T_TIME_OMIT:
        return check_go_time_not_zero(c);
    case T_INT_MAP_OMIT:
        return check_int_map(c);
    default:
        return 0;
    }
}

/* An object of the given schema: its keys exactly the field names in field order, each at most once, every
 * field Go always writes present. ``out``, for the record schema, receives the envelope. */
static int check_object(cursor *c, int schema_index, envelope *out, int depth) {
    if (depth > MAX_RAW_DEPTH) return 0;
    const schema *s = &the_model.schemas[schema_index];
    if (!literal(c, "{", 1)) return 0;
    int next = 0; /* the first field that may still come */
    if (!literal(c, "}", 1)) {
        for (;;) {
            if (c->p >= c->end || *c->p != '"') return 0;
            const unsigned char *name = c->p + 1;
            int found = -1;
            for (int i = next; i < s->count; i++) {
                const field *f = &s->fields[i];
                if (c->end - name > f->name_length && name[f->name_length] == '"' &&
                    memcmp(name, f->name, (size_t)f->name_length) == 0) {
                    found = i;
                    break;
                }
                if (!omitted_when_zero(f->type)) return 0; /* a field Go always writes is missing */
            }
            if (found < 0) return 0; /* an unknown, repeated or out-of-order key */
            c->p = name + s->fields[found].name_length + 1;
            if (s->fields[found].newest_only) c->newest = 1;
            if (!literal(c, ":", 1) || !check_value(c, &s->fields[found], found, out, depth)) return 0;
            next = found + 1;
            if (literal(c, "}", 1)) break;
            if (!literal(c, ",", 1)) return 0;
        }
    }
    for (int i = next; i < s->count; i++) {
        if (!omitted_when_zero(s->fields[i].type)) return 0;
    }
    return 1;
}

/* -- the module --------------------------------------------------------------------------------------------- */

static void forget_model(void) {
    for (int s = 0; s < the_model.schema_count; s++) {
        for (int i = 0; i < the_model.schemas[s].count; i++) PyMem_Free(the_model.schemas[s].fields[i].name);
    }
    for (int i = 0; i < the_model.protocol_count; i++) PyMem_Free(the_model.protocols[i]);
    memset(&the_model, 0, sizeof(the_model));
}

static char *copy_bytes(PyObject *value, Py_ssize_t *length) {
    char *text;
    if (PyBytes_AsStringAndSize(value, &text, length) < 0) return NULL;
    char *copy = PyMem_Malloc((size_t)*length + 1);
    if (copy == NULL) {
        PyErr_NoMemory();
        return NULL;
    }
    memcpy(copy, text, (size_t)*length);
    copy[*length] = 0;
    return copy;
}

PyDoc_STRVAR(configure_doc,
             "configure(schemas, record_fields, protocols)\n\n"
             "The record model: ``schemas`` a list of structs, each a list of (name: bytes, type: int, schema: int"
             "[, newest_only: int]); "
             "schema 0 is the record. ``record_fields`` the indexes of its seq, protocol and optional fields; "
             "``protocols`` the protocol ids (bytes) a scan reports by index.");

static PyObject *configure(PyObject *Py_UNUSED(module), PyObject *args) {
    PyObject *schemas, *protocols;
    int seq_field, protocol_field, optional_field;
    if (!PyArg_ParseTuple(args, "O!(iii)O!", &PyList_Type, &schemas, &seq_field, &protocol_field, &optional_field,
                          &PyList_Type, &protocols)) {
        return NULL;
    }
    forget_model();
    Py_ssize_t schema_count = PyList_GET_SIZE(schemas), protocol_count = PyList_GET_SIZE(protocols);
    if (schema_count < 1 || schema_count > MAX_SCHEMAS || protocol_count > MAX_FIELDS) {
        PyErr_SetString(PyExc_ValueError, "too many schemas or protocols for the native scanner");
        return NULL;
    }
    for (Py_ssize_t s = 0; s < schema_count; s++) {
        PyObject *fields = PyList_GET_ITEM(schemas, s);
        if (!PyList_Check(fields) || PyList_GET_SIZE(fields) > MAX_FIELDS) {
            PyErr_SetString(PyExc_ValueError, "a schema is a list of at most 32 fields");
            goto failed;
        }
        schema *target = &the_model.schemas[s];
        the_model.schema_count = (int)s + 1;
        for (Py_ssize_t i = 0; i < PyList_GET_SIZE(fields); i++) {
            PyObject *name;
            int type, nested, newest_only = 0;
            if (!PyArg_ParseTuple(PyList_GET_ITEM(fields, i), "O!ii|i", &PyBytes_Type, &name, &type, &nested,
                                  &newest_only)) {
                goto failed;
            }
            if (type < 0 || type >= T_TYPE_COUNT || nested < 0 || nested >= schema_count) {
                PyErr_SetString(PyExc_ValueError, "a field's type or nested schema is out of range");
                goto failed;
            }
            field *f = &target->fields[i];
            f->name = copy_bytes(name, &f->name_length);
            if (f->name == NULL) goto failed;
            f->type = type;
            f->schema = nested;
            f->newest_only = newest_only != 0;
            target->count = (int)i + 1;
        }
    }
    int record_count = the_model.schemas[0].count;
    if (seq_field < 0 || seq_field >= record_count || protocol_field < 0 || protocol_field >= record_count ||
        optional_field < 0 || optional_field >= record_count) {
        PyErr_SetString(PyExc_ValueError, "a record field index is out of range");
        goto failed;
    }
    the_model.seq_field = seq_field;
    the_model.protocol_field = protocol_field;
    the_model.optional_field = optional_field;
    for (Py_ssize_t i = 0; i < protocol_count; i++) {
        PyObject *protocol = PyList_GET_ITEM(protocols, i);
        if (!PyBytes_Check(protocol)) {
            PyErr_SetString(PyExc_TypeError, "protocol ids are bytes");
            goto failed;
        }
        the_model.protocols[i] = copy_bytes(protocol, &the_model.protocol_lengths[i]);
        if (the_model.protocols[i] == NULL) goto failed;
        the_model.protocol_count = (int)i + 1;
    }
    the_model.configured = 1;
    Py_RETURN_NONE;
failed:
    forget_model();
    return NULL;
}

/* The bytes to check (``flags``: PyBUF_SIMPLE to read them, PyBUF_WRITABLE to move them too), once the model
 * is there. */
static int open_input(PyObject *arg, Py_buffer *view, int flags) {
    if (!the_model.configured) {
        PyErr_SetString(PyExc_RuntimeError, "the native scanner has no model: call configure first");
        return -1;
    }
    return PyObject_GetBuffer(arg, view, flags);
}

/* Whether every line of data[0:length) is a proven record (no blank line; the final newline may be missing);
 * its lines are counted into *lines and their envelopes written from index ``first`` of the outputs, never at
 * or past index ``capacity``: the outputs were sized by a newline count taken before the scan, and a buffer
 * another thread writes into while the scan runs without the GIL can hold more lines by now (such a journal
 * is simply not proven). */
static int scan_lines(const unsigned char *data, Py_ssize_t length, Py_ssize_t *lines, Py_ssize_t first,
                      Py_ssize_t capacity, int64_t *starts, uint64_t *seqs, unsigned char *protocols,
                      unsigned char *optional, int *newest) {
    const unsigned char *p = data, *end = data + length;
    Py_ssize_t line = first;
    if (length == 0) return 0;
    *newest = 0;
    while (p < end) {
        const unsigned char *stop = memchr(p, '\n', (size_t)(end - p));
        cursor in_line = {p, stop != NULL ? stop : end, 0};
        envelope record = {0, OTHER_PROTOCOL, 0};
        if (!check_object(&in_line, 0, &record, 0) || in_line.p != in_line.end) return 0;
        if (line >= capacity) return 0;
        *newest |= in_line.newest;
        starts[line] = (int64_t)(p - data);
        seqs[line] = record.seq;
        protocols[line] = (unsigned char)record.protocol;
        optional[line] = (unsigned char)record.optional;
        line++;
        p = in_line.end + 1;
    }
    *lines = line - first;
    return 1;
}

PyDoc_STRVAR(scan_journal_doc,
             "scan_journal(data) -> (starts, seqs, protocols, optional, newest) | None\n\n"
             "For a journal whose every line is canonical (no blank line; the last newline may be missing): "
             "each line's start offset (int64), seq (uint64), protocol index (uint8; 255 for an id not configured) and "
             "optional flag (uint8), "
             "as bytes in native byte order, and whether any line holds a field only the newest line writes. None "
             "when any line is not proven canonical.");

static PyObject *scan_journal(PyObject *Py_UNUSED(module), PyObject *arg) {
    Py_buffer view;
    if (open_input(arg, &view, PyBUF_SIMPLE) < 0) return NULL;
    const unsigned char *data = view.buf, *end = data + view.len;
    PyObject *starts = NULL, *seqs = NULL, *protocols = NULL, *optional = NULL, *result = NULL;
    Py_ssize_t lines = 0;
    int proven = view.len > 0, newest = 0;
    if (proven) {
        for (const unsigned char *p = data; (p = memchr(p, '\n', (size_t)(end - p))) != NULL; p++) lines++;
        if (end[-1] != '\n') lines++;
    }
    if (proven) {
        starts = PyBytes_FromStringAndSize(NULL, lines * 8);
        seqs = PyBytes_FromStringAndSize(NULL, lines * 8);
        protocols = PyBytes_FromStringAndSize(NULL, lines);
        optional = PyBytes_FromStringAndSize(NULL, lines);
        if (starts == NULL || seqs == NULL || protocols == NULL || optional == NULL) goto done;
        int64_t *start_out = (int64_t *)PyBytes_AS_STRING(starts);
        uint64_t *seq_out = (uint64_t *)PyBytes_AS_STRING(seqs);
        unsigned char *protocol_out = (unsigned char *)PyBytes_AS_STRING(protocols);
        unsigned char *optional_out = (unsigned char *)PyBytes_AS_STRING(optional);
        Py_ssize_t scanned = 0;
        Py_BEGIN_ALLOW_THREADS;
        proven = scan_lines(data, view.len, &scanned, 0, lines, start_out, seq_out, protocol_out, optional_out,
                            &newest);
        Py_END_ALLOW_THREADS;
    }
    if (!proven) {
        result = Py_NewRef(Py_None);
    } else {
        result = Py_BuildValue("OOOON", starts, seqs, protocols, optional, PyBool_FromLong(newest));
    }
done:
    Py_XDECREF(starts);
    Py_XDECREF(seqs);
    Py_XDECREF(protocols);
    Py_XDECREF(optional);
    PyBuffer_Release(&view);
    return result;
}

PyDoc_STRVAR(scan_batch_doc,
             "scan_batch(buffer, lengths) -> (body_length, proven, offsets, seqs, protocols, optional, newest)\n\n"
             "``buffer`` (a writable buffer) holds journals one after another, ``lengths`` (int64, native order) "
             "their sizes. Each journal is scanned; the lines of every proven one are moved, without their "
             "newlines, to the front of the buffer, in order, so that buffer[0:body_length] is the records "
             "table's body. ``proven``: per journal, its line count, or -1 for a journal not proven (its bytes "
             "are dropped: the caller reads it the other way). ``offsets``: each moved line's start in the body, "
             "then body_length (int64); ``seqs``, ``protocols``, ``optional``: per moved line, as scan_journal; "
             "``newest``: per journal (uint8), whether a proven one holds a field only the newest line writes.");

static PyObject *scan_batch(PyObject *Py_UNUSED(module), PyObject *args) {
    PyObject *buffer_object;
    Py_buffer lengths_view;
    if (!PyArg_ParseTuple(args, "Oy*", &buffer_object, &lengths_view)) return NULL;
    Py_buffer view;
    if (open_input(buffer_object, &view, PyBUF_WRITABLE) < 0) {
        PyBuffer_Release(&lengths_view);
        return NULL;
    }
    PyObject *proven = NULL, *offsets = NULL, *seqs = NULL, *protocols = NULL, *optional = NULL, *result = NULL;
    PyObject *newest = NULL;
    Py_ssize_t journals = lengths_view.len / 8, total = 0, upper = 0;
    /* A copy, never the caller's buffer: it may start at any address (reading it as int64_t there is undefined
     * behaviour) and another thread may change it while the scan below runs without the GIL. */
    int64_t *lengths = NULL;
    unsigned char *data = view.buf;
    if (lengths_view.len % 8 != 0) {
        PyErr_SetString(PyExc_ValueError, "the journal lengths are int64 values: their size is a multiple of 8");
        goto done;
    }
    lengths = PyMem_Malloc(journals > 0 ? (size_t)journals * sizeof(int64_t) : 1);
    if (lengths == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    memcpy(lengths, lengths_view.buf, (size_t)lengths_view.len);
    for (Py_ssize_t j = 0; j < journals; j++) {
        if (lengths[j] < 0 || lengths[j] > view.len - total) {
            PyErr_SetString(PyExc_ValueError, "the journal lengths run past the buffer");
            goto done;
        }
        total += (Py_ssize_t)lengths[j];
    }
    /* at most one line per newline, plus each journal's last line without one */
    for (const unsigned char *p = data; (p = memchr(p, '\n', (size_t)(data + total - p))) != NULL; p++) upper++;
    upper += journals;
    proven = PyBytes_FromStringAndSize(NULL, journals * 8);
    offsets = PyBytes_FromStringAndSize(NULL, (upper + 1) * 8);
    seqs = PyBytes_FromStringAndSize(NULL, upper * 8);
    protocols = PyBytes_FromStringAndSize(NULL, upper);
    optional = PyBytes_FromStringAndSize(NULL, upper);
    newest = PyBytes_FromStringAndSize(NULL, journals);
    if (proven == NULL || offsets == NULL || seqs == NULL || protocols == NULL || optional == NULL || newest == NULL) {
        goto done;
    }
    unsigned char *newest_out = (unsigned char *)PyBytes_AS_STRING(newest);
    int64_t *proven_out = (int64_t *)PyBytes_AS_STRING(proven);
    int64_t *offset_out = (int64_t *)PyBytes_AS_STRING(offsets);
    uint64_t *seq_out = (uint64_t *)PyBytes_AS_STRING(seqs);
    unsigned char *protocol_out = (unsigned char *)PyBytes_AS_STRING(protocols);
    unsigned char *optional_out = (unsigned char *)PyBytes_AS_STRING(optional);
    Py_ssize_t lines = 0, written = 0, read = 0;
    Py_BEGIN_ALLOW_THREADS;
    for (Py_ssize_t j = 0; j < journals; j++) {
        Py_ssize_t length = (Py_ssize_t)lengths[j], count = 0;
        int holds_newest = 0;
        /* offset_out first holds each line's start in its journal; it becomes the start in the body below */
        int scanned = scan_lines(data + read, length, &count, lines, upper, offset_out, seq_out, protocol_out,
                                 optional_out, &holds_newest);
        newest_out[j] = (unsigned char)(scanned && holds_newest);
        if (!scanned) {
            proven_out[j] = -1;
            read += length;
            continue;
        }
        proven_out[j] = count;
        for (Py_ssize_t i = 0; i < count; i++) {
            Py_ssize_t start = (Py_ssize_t)offset_out[lines + i];
            Py_ssize_t stop = i + 1 < count ? (Py_ssize_t)offset_out[lines + i + 1] - 1 : length;
            if (i + 1 == count && length > 0 && data[read + length - 1] == '\n') stop = length - 1;
            /* the body only ever shrinks behind the read position, so the move never overwrites unread bytes */
            memmove(data + written, data + read + start, (size_t)(stop - start));
            offset_out[lines + i] = (int64_t)written;
            written += stop - start;
        }
        lines += count;
        read += length;
    }
    offset_out[lines] = (int64_t)written;
    Py_END_ALLOW_THREADS;
    if (_PyBytes_Resize(&offsets, (lines + 1) * 8) < 0 || _PyBytes_Resize(&seqs, lines * 8) < 0 ||
        _PyBytes_Resize(&protocols, lines) < 0 || _PyBytes_Resize(&optional, lines) < 0) {
        goto done;
    }
    result = Py_BuildValue("nOOOOOO", written, proven, offsets, seqs, protocols, optional, newest);
done:
    PyMem_Free(lengths);
    Py_XDECREF(proven);
    Py_XDECREF(offsets);
    Py_XDECREF(seqs);
    Py_XDECREF(protocols);
    Py_XDECREF(optional);
    Py_XDECREF(newest);
    PyBuffer_Release(&view);
    PyBuffer_Release(&lengths_view);
    return result;
}

PyDoc_STRVAR(proves_line_doc,
             "proves_line(line) -> int\n\n"
             "Whether one record's bytes (a line without its newline, or a JetStream body) are proven canonical: 0 "
             "when not, 1 when they are, 2 when they are and hold a field only the newest line writes.");

static PyObject *proves_line(PyObject *Py_UNUSED(module), PyObject *arg) {
    Py_buffer view;
    if (open_input(arg, &view, PyBUF_SIMPLE) < 0) return NULL;
    cursor c = {view.buf, (const unsigned char *)view.buf + view.len, 0};
    envelope ignored = {0, OTHER_PROTOCOL, 0};
    int proven = check_object(&c, 0, &ignored, 0) && c.p == c.end;
    PyBuffer_Release(&view);
    return PyLong_FromLong(proven ? 1 + c.newest : 0);
}

PyDoc_STRVAR(json_array_doc,
             "json_array(journal) -> bytes\n\n"
             "A journal's lines (no blank one) as one JSON array, ``[line,line,...]``, in one copy: what a list "
             "decoder reads all its records from.");

static PyObject *json_array(PyObject *Py_UNUSED(module), PyObject *arg) {
    if (!PyBytes_Check(arg)) {
        PyErr_SetString(PyExc_TypeError, "json_array takes bytes");
        return NULL;
    }
    Py_ssize_t length = PyBytes_GET_SIZE(arg);
    const char *data = PyBytes_AS_STRING(arg);
    if (length > 0 && data[length - 1] == '\n') length--; /* the final newline ends the last line */
    PyObject *array = PyBytes_FromStringAndSize(NULL, length + 2);
    if (array == NULL) return NULL;
    char *out = PyBytes_AS_STRING(array), *end = out + 1 + length;
    out[0] = '[';
    memcpy(out + 1, data, (size_t)length);
    for (char *p = out + 1; (p = memchr(p, '\n', (size_t)(end - p))) != NULL; p++) *p = ',';
    *end = ']';
    return array;
}

PyDoc_STRVAR(join_lines_doc,
             "join_lines(journals) -> bytes\n\n"
             "The bytes of every journal (a sequence of bytes) one after another, without their newlines: the "
             "records table's body column in one copy.");

static PyObject *join_lines(PyObject *Py_UNUSED(module), PyObject *arg) {
    PyObject *parts = PySequence_Tuple(arg); /* holds every part while the GIL is released */
    if (parts == NULL) return NULL;
    Py_ssize_t count = PyTuple_GET_SIZE(parts), total = 0;
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *part = PyTuple_GET_ITEM(parts, i);
        if (!PyBytes_Check(part)) {
            Py_DECREF(parts);
            PyErr_SetString(PyExc_TypeError, "join_lines takes a sequence of bytes");
            return NULL;
        }
        total += PyBytes_GET_SIZE(part);
    }
    PyObject *joined = PyBytes_FromStringAndSize(NULL, total);
    if (joined == NULL) {
        Py_DECREF(parts);
        return NULL;
    }
    char *out = PyBytes_AS_STRING(joined);
    Py_BEGIN_ALLOW_THREADS;
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *part = PyTuple_GET_ITEM(parts, i);
        const char *p = PyBytes_AS_STRING(part), *end = p + PyBytes_GET_SIZE(part);
        while (p < end) {
            const char *stop = memchr(p, '\n', (size_t)(end - p));
            const char *until = stop != NULL ? stop : end;
            memcpy(out, p, (size_t)(until - p));
            out += until - p;
            p = until + 1;
        }
    }
    Py_END_ALLOW_THREADS;
    Py_DECREF(parts);
    if (_PyBytes_Resize(&joined, out - PyBytes_AS_STRING(joined)) < 0) return NULL;
    return joined;
}


/* The directory of the paths last looked up, held open so each file is found there by its name alone: the journals
 * a reader or a listing meets one after another share a directory, and walking its whole path again cost a lookup
 * per component of every file. A path whose directory does not open is looked up whole, and meets the same error. */
typedef struct {
    int fd;
    size_t length; /* of the directory's path, its final slash included */
    char path[PATH_MAX];
} directory_cache;

#ifndef O_PATH
#define O_PATH O_RDONLY
#endif
#if defined(__linux__) && !defined(MADV_POPULATE_WRITE)
#define MADV_POPULATE_WRITE 23 /* Linux 5.14; an older kernel refuses it, and the reads fault the pages in */
#endif

/* Makes the whole pages of ``buffer`` present, writable, in one call where the kernel can: a fresh buffer's reads
 * otherwise fault it in a page at a time. Here, without the GIL, rather than by the caller: a batch read ahead on
 * a thread then makes its pages while the thread that holds the GIL folds. */
static void make_present(char *buffer, Py_ssize_t length) {
#ifdef MADV_POPULATE_WRITE
    long page = sysconf(_SC_PAGESIZE);
    if (page <= 0 || length <= 0) return;
    uintptr_t start = ((uintptr_t)buffer + (uintptr_t)page - 1) & ~((uintptr_t)page - 1);
    uintptr_t end = ((uintptr_t)buffer + (uintptr_t)length) & ~((uintptr_t)page - 1);
    if (end > start) (void)madvise((void *)start, end - start, MADV_POPULATE_WRITE);
#else
    (void)buffer;
    (void)length;
#endif
}

/* Where ``path`` is to be looked up: the descriptor to look it up from, and the name to look up there. */
static const char *name_in(directory_cache *cache, const char *path, int *at) {
    const char *slash = strrchr(path, '/');
    size_t length = slash == NULL ? 0 : (size_t)(slash - path) + 1;
    if (length == 0 || length >= sizeof cache->path) {
        *at = AT_FDCWD;
        return path;
    }
    if (cache->length != length || memcmp(cache->path, path, length) != 0) {
        if (cache->fd >= 0) close(cache->fd);
        memcpy(cache->path, path, length);
        cache->path[length] = '\0';
        cache->length = length;
        cache->fd = open(cache->path, O_PATH | O_DIRECTORY | O_CLOEXEC);
    }
    if (cache->fd < 0) {
        *at = AT_FDCWD;
        return path;
    }
    *at = cache->fd;
    return slash + 1;
}

static void directory_cache_close(directory_cache *cache) {
    if (cache->fd >= 0) close(cache->fd);
    cache->fd = -1;
    cache->length = 0;
}

/* Each item of ``paths`` (a tuple) is a bytes path without a NUL (a NUL would name another file in C); sets
 * TypeError and answers 0 otherwise. */
static int bytes_paths(PyObject *paths, const char *refusal) {
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(paths); i++) {
        PyObject *path = PyTuple_GET_ITEM(paths, i);
        if (!PyBytes_Check(path) || strlen(PyBytes_AS_STRING(path)) != (size_t)PyBytes_GET_SIZE(path)) {
            PyErr_SetString(PyExc_TypeError, refusal);
            return 0;
        }
    }
    return 1;
}

PyDoc_STRVAR(stat_files_doc,
             "stat_files(paths, readable) -> bytes\n\n"
             "Per path (a tuple of bytes paths) its size (int64, native order) when it is a regular file, looked "
             "at without following a link (and, when ``readable``, one this process may read by ``access``), "
             "else -1; with the GIL released.");

static PyObject *stat_files(PyObject *Py_UNUSED(module), PyObject *args) {
    PyObject *paths;
    int readable;
    if (!PyArg_ParseTuple(args, "O!p", &PyTuple_Type, &paths, &readable)) return NULL;
    if (!bytes_paths(paths, "stat_files takes a tuple of bytes paths without NUL")) return NULL;
    Py_ssize_t count = PyTuple_GET_SIZE(paths);
    PyObject *sizes = PyBytes_FromStringAndSize(NULL, count * (Py_ssize_t)sizeof(int64_t));
    if (sizes == NULL) return NULL;
    int64_t *out = (int64_t *)PyBytes_AS_STRING(sizes);
    directory_cache *cache = PyMem_RawMalloc(sizeof(directory_cache));
    if (cache == NULL) {
        Py_DECREF(sizes);
        return PyErr_NoMemory();
    }
    cache->fd = -1;
    cache->length = 0;
    /* The tuple holds every path (immutable bytes) while the GIL is released. */
    Py_BEGIN_ALLOW_THREADS;
    for (Py_ssize_t i = 0; i < count; i++) {
        int at;
        const char *name = name_in(cache, PyBytes_AS_STRING(PyTuple_GET_ITEM(paths, i)), &at);
        struct stat info;
        int plain = fstatat(at, name, &info, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(info.st_mode);
        out[i] = plain && (!readable || faccessat(at, name, R_OK, 0) == 0) ? (int64_t)info.st_size : -1;
    }
    directory_cache_close(cache);
    Py_END_ALLOW_THREADS;
    PyMem_RawFree(cache);
    return sizes;
}

PyDoc_STRVAR(read_files_into_doc,
             "read_files_into(paths, buffer, byte_limit, record_limit, times=None) -> bytes\n\n"
             "Plain journal files (a tuple of bytes paths) read one after another into ``buffer`` with the GIL "
             "released; per path its length (int64, native order), or -1 for one to read the usual way: not a "
             "regular file (looked at before opening, and never through a link), not openable or readable, past "
             "``byte_limit``, holding more lines than ``record_limit`` (counted by newlines: conservative), grown "
             "or shrunk while read, or not fitting in what is left of the buffer. ``times``, when given, is a "
             "writable buffer of an int64 per path that gets each file read's modification time (nanoseconds "
             "since 1970, from the descriptor it read). The buffer's pages are made present first, in one call "
             "where the kernel can.");

/* One journal, ``name`` in the directory ``at``, into ``into`` (at most ``room`` bytes): its length, or -1 (see
 * read_files_into). */
static Py_ssize_t read_one_file(int at, const char *name, char *into, Py_ssize_t room, Py_ssize_t byte_limit,
                                Py_ssize_t record_limit, int64_t *modified) {
    struct stat info;
    /* Looked at first: opening a device can act on it. */
    if (fstatat(at, name, &info, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(info.st_mode)) return -1;
    int fd = openat(at, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return -1;
    Py_ssize_t size = -1;
    if (fstat(fd, &info) == 0 && S_ISREG(info.st_mode) && info.st_size <= byte_limit && info.st_size <= room) {
        Py_ssize_t want = (Py_ssize_t)info.st_size, got = 0;
        /* A byte more than the size where the buffer has room: a regular file's short read is its end, so one
         * read says both that the file is whole and that it did not grow. */
        Py_ssize_t ask = want < room ? want + 1 : want;
        int ended = 0;
        while (got < ask) {
            ssize_t n = read(fd, into + got, (size_t)(ask - got));
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) {
                ended = n == 0;
                break;
            }
            got += n;
            if (n < ask - (got - n)) {
                ended = 1;
                break;
            }
        }
        if (got == want && !ended) {
            char extra;
            ssize_t more;
            do {
                more = read(fd, &extra, 1);
            } while (more < 0 && errno == EINTR);
            ended = more == 0;
        }
        if (got == want && ended) size = want;
        *modified = (int64_t)info.st_mtim.tv_sec * 1000000000 + (int64_t)info.st_mtim.tv_nsec;
    }
    close(fd);
    if (size > 0 && size / 2 + 1 > record_limit) {
        /* A non-blank line takes two bytes at least: only a journal this long can pass the bound. */
        Py_ssize_t newlines = 0;
        for (const char *p = into, *end = into + size; (p = memchr(p, '\n', (size_t)(end - p))) != NULL; p++)
            newlines++;
        if (newlines + 1 > record_limit) return -1;
    }
    return size;
}

static PyObject *read_files_into(PyObject *Py_UNUSED(module), PyObject *args) {
    PyObject *paths;
    Py_buffer buffer, times = {0};
    Py_ssize_t byte_limit, record_limit;
    if (!PyArg_ParseTuple(args, "O!w*nn|w*", &PyTuple_Type, &paths, &buffer, &byte_limit, &record_limit, &times))
        return NULL;
    Py_ssize_t count = PyTuple_GET_SIZE(paths);
    int paths_ok = bytes_paths(paths, "read_files_into takes a tuple of bytes paths without NUL");
    if (paths_ok && times.buf != NULL && times.len != count * (Py_ssize_t)sizeof(int64_t)) {
        PyErr_SetString(PyExc_TypeError, "read_files_into: times holds an int64 per path");
        paths_ok = 0;
    }
    PyObject *lengths = paths_ok ? PyBytes_FromStringAndSize(NULL, count * (Py_ssize_t)sizeof(int64_t)) : NULL;
    directory_cache *cache = lengths != NULL ? PyMem_RawMalloc(sizeof(directory_cache)) : NULL;
    if (cache == NULL) {
        if (lengths != NULL) {
            Py_DECREF(lengths);
            PyErr_NoMemory();
        }
        PyBuffer_Release(&buffer);
        if (times.buf != NULL) PyBuffer_Release(&times);
        return NULL;
    }
    cache->fd = -1;
    cache->length = 0;
    int64_t unused_time, *modified = times.buf;
    int64_t *out = (int64_t *)PyBytes_AS_STRING(lengths);
    char *into = buffer.buf;
    Py_ssize_t position = 0;
    /* The tuple holds every path (immutable bytes) while the GIL is released. */
    Py_BEGIN_ALLOW_THREADS;
    make_present(into, buffer.len);
    for (Py_ssize_t i = 0; i < count; i++) {
        int at;
        const char *name = name_in(cache, PyBytes_AS_STRING(PyTuple_GET_ITEM(paths, i)), &at);
        Py_ssize_t size = read_one_file(at, name, into + position, buffer.len - position, byte_limit, record_limit,
                                        modified != NULL ? modified + i : &unused_time);
        out[i] = size;
        if (size > 0) position += size;
    }
    directory_cache_close(cache);
    Py_END_ALLOW_THREADS;
    PyMem_RawFree(cache);
    PyBuffer_Release(&buffer);
    if (times.buf != NULL) PyBuffer_Release(&times);
    return lengths;
}

static PyMethodDef methods[] = {
    {"join_lines", join_lines, METH_O, join_lines_doc},
    {"read_files_into", read_files_into, METH_VARARGS, read_files_into_doc},
    {"stat_files", stat_files, METH_VARARGS, stat_files_doc},
    {"json_array", json_array, METH_O, json_array_doc},
    {"proves_line", proves_line, METH_O, proves_line_doc},
    {"scan_batch", scan_batch, METH_VARARGS, scan_batch_doc},
    {"configure", configure, METH_VARARGS, configure_doc},
    {"scan_journal", scan_journal, METH_O, scan_journal_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_definition = {
    PyModuleDef_HEAD_INIT, "_canonical", "Proves whole file journals canonical from their bytes.", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__canonical(void) { return PyModule_Create(&module_definition); }
