/*
 * Numbers, booleans and times checked as Go's encoder writes them.
 *
 * Part of the one translation unit ``_canonical.c`` includes, in order (each part reads only what the parts before
 * it define).
 */

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
